"""candle_graph.load / candle_graph.sql: the notebook API gives the documents the command line
prints for the same files.

Expected values: the `candle-graph` executable's JSON on the same file (another program than
the binding, same library), and for the real Kineto fixture event counts read from the file
itself with gzip + json (the trace has no ProfilerStep, so the whole window is measured).
"""

import collections
import gzip
import json
import os
import subprocess
import sys

import pytest

import candle_graph as cg
from conftest import CG_BINARY, Setup, capture_update, cli_json

FIXTURES = os.environ.get("CG_SHARED_FIXTURE_DIR", "")
ALEXNET = os.path.join(FIXTURES, "pytorch-chrome-trace", "hta-alexnet-a100-2streams.json.gz")
SIMPLE_ADD = os.path.join(FIXTURES, "pytorch-chrome-trace", "hta-simple_add-a100.json")


def fixture_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


@pytest.fixture(scope="module")
def captured_trace(tmp_path_factory):
    """A trace/6 file from the native capture of one MLP update."""
    path = tmp_path_factory.mktemp("analysis") / "mlp.jsonl"
    capture_update(Setup("mlp"), path)
    return str(path)


def sources(captured):
    return [captured, ALEXNET, SIMPLE_ADD]


@pytest.fixture(scope="module")
def legacy_trace(tmp_path_factory):
    """What torch.autograd.profiler's own export writes (Debian's torch has no Kineto: the legacy
    JSON array)."""
    import torch  # noqa: PLC0415 (only this fixture needs it)
    path = tmp_path_factory.mktemp("legacy") / "legacy.json"
    model = torch.nn.Linear(4, 2)
    with torch.autograd.profiler.profile() as prof:
        model(torch.randn(3, 4)).sum().backward()
    prof.export_chrome_trace(str(path))
    return str(path)


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory, captured_trace):
    """An evidence bundle published by `candle-graph report --bundle`."""
    path = tmp_path_factory.mktemp("bundle") / "bundle"
    subprocess.run([CG_BINARY, "report", captured_trace, "--bundle", path], check=True,
                   capture_output=True, timeout=120)
    return str(path)


@pytest.mark.parametrize("kind", ["ops", "spans", "gradients"])
def test_legacy_and_bundle_inputs_equal_the_cli(kind, legacy_trace, bundle_dir):
    for path in (legacy_trace, bundle_dir):
        expected = cli_json("query", path, "--kind", kind)
        assert cg.load(path).query(kind) == expected, path
    assert cg.load(legacy_trace).format == "legacy-autograd-profiler"
    assert cg.load(bundle_dir).summary() == cli_json("summary", bundle_dir)


@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("kind", ["ops", "kernels", "steps", "gpu", "slowest", "memory"])
def test_query_equals_the_cli(which, kind, captured_trace):
    path = sources(captured_trace)[which]
    expected = cli_json("query", path, "--kind", kind, "--limit", 20)
    assert cg.load(path).query(kind, limit=20) == expected


@pytest.mark.parametrize("which", [0, 1])
def test_summary_evidence_and_report_equal_the_cli(which, captured_trace, tmp_path):
    path = sources(captured_trace)[which]
    trace = cg.load(path)
    assert trace.summary() == cli_json("summary", path)
    assert trace.evidence() == cli_json("import", path)
    subprocess.run([CG_BINARY, "report", path, "--json", tmp_path / "e.json", "--markdown",
                    tmp_path / "r.md"], check=True, capture_output=True, timeout=120)
    assert trace.report_markdown() == (tmp_path / "r.md").read_text(encoding="utf-8")


def test_tables_are_the_query_items_in_full(captured_trace):
    trace = cg.load(ALEXNET)
    items = cli_json("query", ALEXNET, "--kind", "ops", "--limit", 100000)["result"]["items"]
    assert trace.ops(as_frame=False) == items
    kernels = cli_json("query", ALEXNET, "--kind", "kernels", "--limit", 100000)["result"]["items"]
    assert trace.kernels(as_frame=False) == kernels
    devices = cli_json("query", ALEXNET, "--kind", "gpu")["result"]["devices"]
    assert trace.gpu(as_frame=False) == devices
    assert trace.format == "kineto"


def test_kineto_op_calls_and_device_time_match_the_file():
    """Counted from the fixture itself: calls per name of complete events (ph X) and the total
    duration of the device work, kernels, memcpys and memsets (µs in the file, ns in the table)."""
    events = fixture_events(ALEXNET)
    complete = collections.Counter(e["name"] for e in events if e.get("ph") == "X")
    device_cats = ("kernel", "gpu_memcpy", "gpu_memset")
    kernel_ns = 1000 * sum(e["dur"] for e in events
                           if e.get("ph") == "X" and e.get("cat") in device_cats)
    ops = {row["name"]: row for row in cg.load(ALEXNET).ops(as_frame=False)}
    for name in ("aten::conv2d", "aten::linear", "cudaLaunchKernel"):
        assert ops[name]["calls"] == complete[name], name
    kernels = cg.load(ALEXNET).kernels(as_frame=False)
    assert sum(k["total_ns"] for k in kernels) == kernel_ns


def test_dataframes_when_pandas_is_there():
    pandas = pytest.importorskip("pandas")
    trace = cg.load(ALEXNET)
    frame = trace.ops()
    assert isinstance(frame, pandas.DataFrame)
    rows = trace.ops(as_frame=False)
    assert len(frame) == len(rows)
    assert list(frame["name"]) == [r["name"] for r in rows]
    assert list(frame["device_total_ns"]) == [r["device_total_ns"] for r in rows]
    gpu = trace.gpu()
    assert len(gpu) == len(trace.gpu(as_frame=False)) and "busy_ns" in gpu.columns


@pytest.mark.parametrize("statement", [
    "SELECT name, calls, total_ns FROM op_stats ORDER BY total_ns DESC, name",
    "SELECT run_id, source FROM runs ORDER BY run_id",
])
def test_sql_equals_the_cli(statement, captured_trace):
    paths = [captured_trace, ALEXNET]
    expected = cli_json("sql", *paths, statement, "--limit", 0)
    rows = cg.sql(paths, statement, as_frame=False)
    assert [list(r.keys()) for r in rows[:1]] == [expected["columns"]][:len(rows[:1])]
    assert [list(r.values()) for r in rows] == expected["rows"]


def test_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [ {"ph": "X", ', encoding="utf-8")
    with pytest.raises(cg.TraceError, match="bad.json"):
        cg.load(bad)
    with pytest.raises(OSError, match="missing.json"):
        cg.load(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="unknown query kind"):
        cg.load(SIMPLE_ADD).query("everything")
    with pytest.raises(cg.TraceError):
        cg.sql([SIMPLE_ADD], "DELETE FROM runs")


def test_the_analysis_needs_no_torch(captured_trace):
    """A fresh interpreter where `import torch` fails still loads and queries traces."""
    code = ("import sys; sys.modules['torch'] = None\n"
            "import candle_graph as cg\n"
            f"print(len(cg.load({ALEXNET!r}).ops(as_frame=False)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == len(cg.load(ALEXNET).ops(as_frame=False)) > 0
