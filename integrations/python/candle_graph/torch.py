"""Capture one PyTorch training update or inference call as a candle-graph/trace/6 trace.

    import candle_graph.torch as cgt

    with cgt.TorchCapture("trace.jsonl", model, entrypoint="mlp::update", step=3,
                          phase="train", device="cpu") as cap:
        cap.record_input("input", x)
        with cap.span("forward", step="forward"):
            loss = loss_fn(model(x), y)
        loss.backward()                   # recorded in an automatic backward span
        with cap.span("optimizer", step="optimizer"):
            opt.step()
    print(cap.summary)                    # ops, memory_events, peak_bytes, gradients, ...

With ``engine="profiler"`` (or "auto" when the native extension was not built for the running
torch) torch's own profiler records instead; see ``TorchCapture``. With the native engine, the
capture is the LibTorch capture of candle-graph's C++ integration (RecordFunction observers
and the c10 CPU allocator's memory reporting, on the thread that enters the block): every ATen
op and autograd node, tensor ids and data edges, allocations and frees, and one gradient fact
per ``model.named_parameters()`` entry (training only), taken when the block ends.

Then: ``candle-graph validate --require-trusted trace.jsonl``, ``candle-graph report trace.jsonl --json e.json --markdown e.md``,
``candle-graph view trace.jsonl``.
"""

import numbers
import os
import warnings

import torch as _torch

from . import _profiler_engine

try:  # built only for the torch the package was installed against
    from . import _torch_capture as _native
except (ImportError, OSError) as _native_error:  # torch changed since, or no LibTorch build
    _native = None
    _NATIVE_IMPORT_ERROR = str(_native_error)
else:
    _NATIVE_IMPORT_ERROR = None

__all__ = ["TorchCapture", "CaptureSpan"]

_PHASES = ("train", "inference")
_ENGINES = ("auto", "native", "profiler")


def _release(version):
    """"1.13.0a0+git" -> (1, 13, 0): the part of a torch version that fixes its C++ ABI."""
    parts = []
    for piece in str(version).split("+")[0].split(".")[:3]:
        digits = ""
        for c in piece:
            if not c.isdigit():
                break
            digits += c
        parts.append(int(digits or 0))
    return tuple(parts)


def native_engine_status():
    """(usable, reason): whether the native extension was built for the running torch (same
    release and C++ ABI) and, if not, why."""
    if _native is None:
        return False, f"the native extension cannot be imported ({_NATIVE_IMPORT_ERROR})"
    built = getattr(_native, "torch_version", "")
    if _release(built) != _release(_torch.__version__):
        return False, (f"the native extension was built for torch {built}, "
                       f"this is torch {_torch.__version__}")
    built_abi = getattr(_native, "cxx11_abi", None)
    if built_abi is not None and bool(built_abi) != bool(_torch._C._GLIBCXX_USE_CXX11_ABI):
        return False, "the native extension was built for another C++ ABI than this torch"
    return True, f"the native extension was built for torch {built}"


def _choose_engine(engine):
    """The engine to use and why (the reason goes into the summary and the meta tags)."""
    if not isinstance(engine, str):
        raise TypeError(f"engine must be a str, not {type(engine).__name__}")
    if engine not in _ENGINES:
        raise ValueError(f"engine must be \"auto\", \"native\" or \"profiler\", not {engine!r}")
    if engine == "profiler":
        return "profiler", "asked for"
    usable, reason = native_engine_status()
    if engine == "native":
        if not usable:
            raise RuntimeError(f"engine=\"native\" is not available: {reason}; use "
                               f"engine=\"profiler\" or \"auto\"")
        return "native", "asked for"
    return ("native", reason) if usable else ("profiler", reason)


_SPAN_STEPS = ("forward", "backward", "optimizer")


def _check_name(what, value):
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    if "\0" in value:
        raise ValueError(f"{what} must not contain a NUL character")
    return value


class CaptureSpan:
    """A span inside the measured region; use it with ``with`` (see TorchCapture.span)."""

    __slots__ = ("_capture", "_name", "_step", "_native", "_state")

    def __init__(self, capture, name, step):
        self._capture = capture
        self._name = name
        self._step = step
        self._native = None
        self._state = "new"

    def __enter__(self):
        if self._state != "new":
            raise RuntimeError(
                f"span {self._name!r} was already entered; call cap.span(...) again for a new span")
        self._native = self._capture._active("span").begin_span(self._name, self._step or "")
        self._state = "open"
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._state != "open":
            return False
        self._state = "ended"
        native, self._native = self._native, None
        try:
            native.end()
        except RuntimeError:
            if exc_type is None:
                raise
        return False

    def __repr__(self):
        step = f", step={self._step!r}" if self._step else ""
        return f"<candle_graph.torch.CaptureSpan {self._name!r}{step} ({self._state})>"


class TorchCapture:
    """Records one training update or inference call of ``model`` into the trace file ``path``.

    Use it only as a context manager: recording starts when the ``with`` block is entered and
    stops when it is left, on the thread that entered it. ``entrypoint`` names the update (e.g.
    "mlp::update"), ``step`` is its 1-based index in the loop, ``phase`` is "train" or
    "inference" and ``device`` the device label of the run ("cpu").

    After the block, ``summary`` is a dict: trace, ops, memory_events, allocs, frees,
    live_at_end, live_bytes_at_end, peak_bytes, gradients, non_finite_gradients,
    missing_gradients, memory_captured, memory_note, measured_ns, overhead_per_op_ns,
    overhead_per_memory_event_ns, overhead_estimate_ns (the capture's own cost, measured as the
    block is entered, and its total over the recorded events; 0 when not measured), exception (None, or
    "Type: message" when the block was left by an exception; the trace then holds a span
    ".../exception: Type: message" at the end of the measured region).

    ``engine`` picks who records: "native" (the LibTorch capture above: RecordFunction
    observers, tensor ids and data edges, the allocator's memory events; needs the extension
    built for this torch), "profiler" (torch's own profiler with shapes and memory, Kineto when
    torch has it, else the legacy autograd profiler, with the CUDA kernels on a CUDA torch; the
    result converted in this process by candle-graph's PyTorch importer, plus the capture's spans,
    phase, step, record_input tensors and gradient facts), or "auto" (native when the extension
    was built for the running torch's version and C++ ABI, else profiler). The choice and its
    reason are in ``summary`` ("engine", "engine_reason") and in the trace's meta tags
    (capture.engine, capture.engine_reason).

    Errors: OSError when the trace cannot be written (naming the path), RuntimeError for a
    capture inside another capture on the same thread or a capture used outside its block,
    TypeError / ValueError for bad arguments (ValueError when step is not a positive integer).
    """

    def __init__(self, path, model, entrypoint, step, phase="train", device="cpu",
                 engine="auto"):
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        _check_name("path", path)
        if not isinstance(model, _torch.nn.Module):
            raise TypeError(
                f"model must be a torch.nn.Module (its named_parameters() give the gradient "
                f"facts), not {type(model).__name__}")
        _check_name("entrypoint", entrypoint)
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 1:
            raise ValueError(
                f"step must be a positive integer (the 1-based index of the captured update), "
                f"not {step!r}")
        if int(step) >= 2**63:
            raise ValueError(f"step {step} is too large (at most 2**63 - 1)")
        if not isinstance(phase, str):
            raise TypeError(f"phase must be a str, not {type(phase).__name__}")
        if phase not in _PHASES:
            raise ValueError(f"phase must be \"train\" or \"inference\", not {phase!r}")
        _check_name("device", device)
        self._engine, self._engine_reason = _choose_engine(engine)
        self._path = path
        self._model = model
        self._entrypoint = entrypoint
        self._step = int(step)
        self._phase = phase
        self._device = device
        self._native = None
        self._session = None  # the engine object, kept after the block (its profile)
        self._state = "new"
        self._summary = None

    # ---- the with protocol ------------------------------------------------------------------

    def __enter__(self):
        if self._state != "new":
            raise RuntimeError(
                "a TorchCapture records one block only; create a new TorchCapture for each "
                "captured update")
        if _profiler_engine.recording_on_this_thread() or (
                _native is not None and _native.recording_on_this_thread()):
            raise RuntimeError(
                "a candle_graph capture is already recording on this thread: captures cannot be "
                "nested; leave the outer `with TorchCapture(...)` block first")
        parameters = [(name, p) for name, p in self._model.named_parameters()]
        buffers = [(name, b) for name, b in self._model.named_buffers() if b is not None]
        tags = [("python.torch_version", _torch.__version__),
                ("python.grad_enabled", str(_torch.is_grad_enabled()).lower()),
                ("python.inference_mode", str(_torch.is_inference_mode_enabled()).lower()),
                ("capture.engine", self._engine),
                ("capture.engine_reason", self._engine_reason)]
        if self._engine == "native":
            self._native = _native.Capture(self._path, self._entrypoint, self._step, self._phase,
                                           self._device, parameters, buffers, tags)
        else:
            tags.append(("python.capture", "candle_graph.torch"))
            self._native = _profiler_engine.ProfilerCapture(
                self._path, self._entrypoint, self._step, self._phase, self._device, parameters,
                tags)
        self._session = self._native
        self._state = "active"
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._state != "active":
            return False
        native = self._native
        exception = None
        if exc_type is not None:
            exception = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__
            if len(exception) > 200:
                exception = exception[:197] + "..."
        error = None
        try:
            if exception is not None:
                native.mark_exception(exception)
            summary = native.finish()
        except RuntimeError as e:  # e.g. a span left open: the trace is complete but untrusted
            error = e
            summary = None
        finally:
            try:
                native.close()
            finally:
                self._native = None
                self._state = "ended"
        if summary is None:
            summary = {"trace": self._path}
        summary["exception"] = exception
        summary["phase"] = self._phase
        summary["step"] = self._step
        summary["engine"] = self._engine
        summary["engine_reason"] = self._engine_reason
        self._summary = summary
        if error is not None:
            if exc_type is None:
                raise error
            warnings.warn(f"candle_graph: {error}", RuntimeWarning, stacklevel=2)
        return False

    # ---- inside the block -------------------------------------------------------------------

    def _active(self, what):
        if self._state == "new":
            raise RuntimeError(
                f"{what}: the capture has not started; use it as "
                f"`with TorchCapture(...) as cap:`")
        if self._state == "ended":
            raise RuntimeError(f"{what}: the capture has ended (its with block was left)")
        return self._native

    def span(self, name, step=None):
        """A span named ``name`` inside the measured region, for use with ``with``.

        ``step`` ("forward", "backward" or "optimizer") marks the span as that part of the
        update; without it the span is plain.
        """
        _check_name("span name", name)
        if step is not None:
            if not isinstance(step, str):
                raise TypeError(f"span step must be a str or None, not {type(step).__name__}")
            if step not in _SPAN_STEPS:
                raise ValueError(
                    f"span step must be \"forward\", \"backward\" or \"optimizer\", not {step!r}")
        self._active("span")
        return CaptureSpan(self, name, step)

    def record_input(self, name, tensor):
        """Records ``tensor`` as the input ``name``: later ops show it under that name."""
        _check_name("input name", name)
        if not isinstance(tensor, _torch.Tensor):
            raise TypeError(f"record_input needs a torch.Tensor, not {type(tensor).__name__}")
        self._active("record_input").record_input(name, tensor)

    # ---- after the block --------------------------------------------------------------------

    @property
    def summary(self):
        """What the capture recorded (a dict), available once the with block has ended."""
        if self._summary is None:
            raise RuntimeError("summary is available after the with block has ended")
        return dict(self._summary)

    @property
    def path(self):
        return self._path

    @property
    def engine(self):
        """"native" or "profiler": the engine this capture uses (``engine="auto"`` resolved)."""
        return self._engine

    @property
    def profile(self):
        """The profiler engine's torch profiler object (None with the native engine)."""
        return getattr(self._session, "profile", None)

    def __repr__(self):
        return (f"<candle_graph.torch.TorchCapture {self._path!r} entrypoint={self._entrypoint!r} "
                f"step={self._step} phase={self._phase!r} ({self._state})>")
