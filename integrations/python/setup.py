"""pip install ./integrations/python: builds candle_graph with the repository's CMake for the
interpreter that runs pip, and installs it.

    python -m pip install --no-build-isolation ./integrations/python   # offline: no downloads

- The analysis part (candle_graph.load, candle_graph.sql; module candle_graph._analysis) is built
  always and needs no torch.
- The native capture engine (candle_graph._torch_capture) is compiled against the torch this
  interpreter imports: CMake looks for LibTorch in torch.utils.cmake_prefix_path first, and the
  module is built only when the LibTorch found there is that torch's release (else the profiler
  engine records; see candle_graph.torch). Without torch, only the analysis part is built.

Environment:
  CANDLE_GRAPH_CMAKE_BUILD_DIR  an already configured build tree of this repository to build the
                                modules in (incremental; refused when it was configured for
                                another interpreter); default: a fresh tree under build/ here
  CANDLE_GRAPH_BUILD_JOBS       parallel compile jobs (default: the CPU count)
"""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODULES = ("_analysis", "_torch_capture")


def torch_facts():
    """(cmake_prefix_path, version) of the torch this interpreter imports, or (None, None)."""
    try:
        import torch  # noqa: PLC0415 (optional)
        import torch.utils  # noqa: PLC0415
    except ImportError:
        return None, None
    return torch.utils.cmake_prefix_path, torch.__version__


def cache_value(build_dir, name):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                m = re.match(rf"{re.escape(name)}:[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    return m.group(1)
    except FileNotFoundError:
        return None
    return None


def same_interpreter(a, b):
    return bool(a and b) and os.path.realpath(a) == os.path.realpath(b)


def configure(build_dir):
    prefix, version = torch_facts()
    args = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DCG_BUILD_TESTS=OFF", f"-DCG_PYTHON_EXECUTABLE={sys.executable}"]
    if prefix:
        args += [f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCG_PYTHON_TORCH_VERSION={version}"]
    else:
        args += ["-DCG_WITH_TORCH=OFF"]
    subprocess.check_call(args)


class BuildWithCMake(build_py):
    """build_py, then the native modules built by CMake and copied next to the Python files."""

    def run(self):
        super().run()
        build_dir = os.environ.get("CANDLE_GRAPH_CMAKE_BUILD_DIR")
        if build_dir:
            built_for = cache_value(build_dir, "CG_PYTHON_EXECUTABLE")
            if not same_interpreter(built_for, sys.executable):
                raise SystemExit(
                    f"CANDLE_GRAPH_CMAKE_BUILD_DIR={build_dir} was configured for the interpreter "
                    f"{built_for!r}, not {sys.executable}; unset it to build afresh")
        else:
            build_dir = os.path.join(HERE, "build", "cmake")
            configure(build_dir)
        jobs = os.environ.get("CANDLE_GRAPH_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "cg_python_package",
                               "-j", jobs])
        built = os.path.join(build_dir, "python", "candle_graph")
        target = os.path.join(self.build_lib, "candle_graph")
        copied = []
        for name in sorted(os.listdir(built)):
            if name.split(".")[0] in MODULES and name.endswith(".so"):
                shutil.copy2(os.path.join(built, name), os.path.join(target, name))
                copied.append(name)
        if not any(n.startswith("_analysis.") for n in copied):
            raise SystemExit(f"CMake did not build candle_graph._analysis in {built}")


class BinaryDistribution(Distribution):
    """The wheel holds compiled modules: tag it for this interpreter and platform."""

    def has_ext_modules(self):
        return True


setup(
    packages=["candle_graph"],
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
)
