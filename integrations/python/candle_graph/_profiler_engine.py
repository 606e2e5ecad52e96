"""The profiler engine of candle_graph.torch: torch's own profiler records the block, and the
PyTorch importer of the C++ library (candle_graph._analysis.convert, the `candle-graph convert`
code) turns its trace into trace/6 in this process. Works with any torch the profiler runs on,
CPU or CUDA; no compiled code built against torch.

On top of what the profiler records, the trace gets what candle-graph records and the profiler
does not:
  - the capture's spans: each ``cap.span`` is a ``record_function`` range, which the importer
    turns into a span (its last name token names the step: forward, backward, optimizer);
  - the phase, the step, the entry point and the device label: the meta event's fields;
  - ``record_input`` tensors: meta tags ``input.NAME`` = "dtype[shape]" (the profiler has no
    tensor ids, so ops cannot name their inputs as in the native engine);
  - gradient facts: one ``gradient`` event per ``model.named_parameters()`` entry, taken when the
    block ends (training only), as the native engine writes them.

It has the interface of the native module's Capture (begin_span, record_input, mark_exception,
finish, close), so TorchCapture drives both engines the same way.
"""

import json
import math
import os
import shutil
import tempfile
import threading
import time

import torch as _torch

from . import _analysis

_recording = threading.local()
_PARAMETER_ROOT = "model"  # as the native engine (CaptureOptions::parameter_root)
_SEPARATORS = "/|:#[]. "
_USER_SCOPE = 7  # at::RecordScope::USER_SCOPE: record_function ranges, not ops
_NARROW_FLOATS = (_torch.float32, _torch.float16, _torch.bfloat16)


def _create_sibling(path):
    """A new hidden file `.NAME.tmp-PID-N` beside ``path`` (the C++ writers' naming), created
    with the umask's permissions as ``path`` would be: (fd, its path)."""
    directory, name = os.path.split(os.path.abspath(path))
    for n in range(1000):
        staged = os.path.join(directory, f".{name}.tmp-{os.getpid()}-{n}")
        try:
            return os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), staged
        except FileExistsError:
            continue
    raise OSError(f"{path}: cannot create a temporary file beside it")


def recording_on_this_thread():
    return getattr(_recording, "active", False)


def _last_token(name):
    """The importer reads a range's step from its last name token (separators /|:#[]. )."""
    token = name.rstrip(_SEPARATORS)
    for i in range(len(token) - 1, -1, -1):
        if token[i] in _SEPARATORS:
            return token[i + 1:].lower()
    return token.lower()


def _range_name(name, step):
    if step and _last_token(name) != step:
        return f"{name}/{step}"
    return name


def _file_stem(entrypoint):
    stem = "".join(c if c.isalnum() or c in "-_:" else "_" for c in entrypoint)
    return stem or "capture"


def _write_legacy_trace(profile, path):
    """The legacy profiler's JSON array (the layout of its export_chrome_trace, with Kineto's
    `cat`), written from its collected events (``kineto_results``: before torch's display merge of same-name parent and
    child, which its export applies) with the input shapes and dtypes it recorded
    (record_shapes=True) as Kineto writes them, `args` "Input Dims" and "Input type"; its export
    leaves them out. Its "[memory]" records carry no address, so they cannot be paired into
    allocations and are left out, as its export does."""
    raw = getattr(profile, "kineto_results", None)
    if raw is None:  # a torch whose legacy profiler keeps only the merged list
        profile.export_chrome_trace(path)
        return
    collected = [e for e in raw.events() if e.name() != "[memory]"]
    base = min((e.start_us() for e in collected), default=0)
    events = []
    for e in collected:
        args = {}
        # Each accessor builds a new Python list per call (pybind11): called once, not copied.
        shapes = e.shapes()
        if shapes:
            args["Input Dims"] = shapes
        dtypes = e.dtypes()
        if dtypes:
            args["Input type"] = dtypes
        # The category Kineto gives: the importer then need not guess an op from its name
        # (legacy: a name with `::` or an autograd node), which misses ops such as `detach`.
        cat = "user_annotation" if e.scope() == _USER_SCOPE else "cpu_op"
        events.append({"name": e.name(), "cat": cat, "ph": "X", "ts": e.start_us() - base,
                       "dur": e.duration_us(), "tid": e.start_thread_id(),
                       "pid": "CPU functions", "args": args})
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(events, separators=(",", ":")))  # dumps: C encoder, dump is not


class _Span:
    __slots__ = ("name", "_range", "_open_spans")

    def __init__(self, name, open_spans):
        self.name = name
        self._range = _torch.autograd.profiler.record_function(name)
        self._range.__enter__()
        self._open_spans = open_spans
        open_spans.append(self)

    def end(self):
        if self not in self._open_spans:
            raise RuntimeError(f"span {self.name!r} has already ended")
        self._open_spans.remove(self)
        self._range.__exit__(None, None, None)


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


class ProfilerCapture:
    """One capture through torch's profiler, from construction (the `with` entry) to close()."""

    def __init__(self, path, entrypoint, step, phase, device, parameters, tags):
        if recording_on_this_thread():
            raise RuntimeError(
                "a candle_graph capture is already recording on this thread: captures cannot be "
                "nested; leave the outer `with TorchCapture(...)` block first")
        self._path = path
        self._entrypoint = entrypoint
        self._step = step
        self._phase = phase
        self._device = device
        self._parameters = parameters
        self._tags = dict(tags)
        self._inputs = {}
        self._open_spans = []
        self._thread = threading.get_ident()
        self._open = True
        self._started_ns = time.time_ns()
        self.kineto = bool(_torch.autograd.kineto_available())
        try:  # written now, as the native engine does: a path that cannot be written fails here
            self._write_placeholder()
        except OSError as e:
            raise OSError(e.errno, f"{path}: cannot create the trace file: {e.strerror}") from None
        self.profile = self._start_profiler()
        _recording.active = True

    def _start_profiler(self):
        cuda = _torch.cuda.is_available()
        if self.kineto:
            activities = [_torch.profiler.ProfilerActivity.CPU]
            if cuda:
                activities.append(_torch.profiler.ProfilerActivity.CUDA)
            prof = _torch.profiler.profile(activities=activities, record_shapes=True,
                                           profile_memory=True)
        else:
            prof = _torch.autograd.profiler.profile(record_shapes=True, profile_memory=True,
                                                    use_cuda=cuda)
        prof.__enter__()
        return prof

    # ---- the interface TorchCapture drives ---------------------------------------------------

    def begin_span(self, name, step):
        self._check()
        return _Span(_range_name(name, step), self._open_spans)

    def record_input(self, name, tensor):
        self._check()
        shape = ",".join(str(d) for d in tensor.shape)
        self._inputs[name] = f"{_dtype_name(tensor.dtype)}[{shape}]"

    def mark_exception(self, what):
        self._check()
        _Span(f"exception: {what}", self._open_spans).end()

    def finish(self):
        self._check()
        left_open = [span.name for span in self._open_spans]
        for span in reversed(list(self._open_spans)):  # the profiler needs its ranges closed
            span.end()
        self._stop_profiler()
        gradients = self._gradient_facts() if self._phase == "train" else []
        work = tempfile.mkdtemp(prefix="candle_graph_")
        try:
            # The file name names the root span (the importer's entry point when the trace has no
            # traceName); the meta gets the entry point itself below.
            exported = os.path.join(work, _file_stem(self._entrypoint) + ".json")
            if self.kineto:
                self.profile.export_chrome_trace(exported)
            else:
                _write_legacy_trace(self.profile, exported)
            converted = os.path.join(work, "converted.jsonl")
            result = _analysis.convert(exported, converted, None, False)
            self._replace_placeholder(converted, gradients)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if left_open:
            raise RuntimeError(
                f"span {left_open[0]!r} was still open when the capture ended (ended there; the "
                f"trace {self._path} is written)")
        return {
            "trace": self._path,
            "ops": result["ops"],
            "device_ops": result["device_ops"],
            "memory_events": result["memory_events"],
            "spans": result["spans"],
            "memory_captured": result["memory_events"] > 0,
            "memory_note": "" if self.kineto else (
                "the legacy autograd profiler records no allocation addresses: no memory "
                "events"),
            "gradients": len(gradients),
            "non_finite_gradients": sum(g["state"] == "non_finite" for g in gradients),
            "missing_gradients": sum(g["state"] == "missing" for g in gradients),
            "conversion_repairs": result["repairs"],
            "profiler": "kineto" if self.kineto else "legacy",
        }

    def close(self):
        if not self._open:
            return
        self._check()
        self._stop_profiler()
        self._open = False

    # ---- helpers ----------------------------------------------------------------------------

    def _check(self):
        if not self._open:
            raise RuntimeError("this capture has ended")
        if threading.get_ident() != self._thread:
            raise RuntimeError(
                "a TorchCapture records the thread that entered its `with` block; it cannot be "
                "used from another thread")

    def _stop_profiler(self):
        if recording_on_this_thread():
            _recording.active = False
            if self.kineto:
                self.profile.__exit__(None, None, None)
            else:
                self._stop_legacy_profiler()

    def _stop_legacy_profiler(self):
        """The legacy profiler's own exit, without the part only its tables use: it turns every
        collected event into a Python FunctionEvent and builds their tree (most of the cost of
        leaving its `with` block), while the trace is written from the collected events
        (``kineto_results``) alone. Torch's exit is used where these internals differ."""
        disable = getattr(_torch.autograd, "_disable_profiler", None)
        if disable is None or not hasattr(self.profile, "kineto_results"):
            self.profile.__exit__(None, None, None)
            return
        if getattr(self.profile, "use_cuda", False):
            _torch.cuda.synchronize()
        self.profile.kineto_results = disable()

    def _gradient_facts(self):
        """As the native engine: state present/zero/missing/non_finite, the L2 norm in double."""
        facts = []
        with _torch.no_grad():
            for name, p in self._parameters:
                g = p.grad if p is not None else None
                fact = {"kind": "gradient", "event_id": f"gradient-{len(facts) + 1}",
                        "root": _PARAMETER_ROOT, "key": name, "state": "missing"}
                if g is not None:
                    norm = float(g.double().norm())
                    # A float32/16 gradient's L2 norm in double is finite exactly when every
                    # element is (its squares cannot overflow a double sum): one reduction. A
                    # float64 one can overflow while finite, so it is checked element-wise.
                    finite = (math.isfinite(norm) if g.dtype in _NARROW_FLOATS
                              else bool(_torch.isfinite(g).all()))
                    if not finite:
                        fact["state"] = "non_finite"
                    else:
                        fact["state"] = "zero" if norm == 0.0 else "present"
                        fact["norm"] = norm if math.isfinite(norm) else None
                facts.append(fact)
        return facts

    def _identify(self, meta):
        """Puts the capture's identity into a meta event (the placeholder's or the importer's)."""
        kind = "update" if self._phase == "train" else "inference"
        # The importer's run id and timestamp come from the profiler's clock, which the legacy
        # profiler does not anchor to the wall clock: the capture's own, as the native engine.
        meta["run_id"] = f"run-{os.getpid()}-{self._started_ns}"
        seconds, ns = divmod(self._started_ns, 1_000_000_000)
        meta["timestamp"] = (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
                             + f".{ns // 1_000_000:03d}Z")
        meta["entrypoint"] = self._entrypoint
        meta["correlation_id"] = f"{self._entrypoint}/{kind}-{self._step}"
        meta["phase"] = "train" if self._phase == "train" else "infer"
        meta["capture_step"] = self._step
        meta["warmup_steps"] = self._step - 1
        if meta.get("device", "cpu") == "cpu":
            meta["device"] = self._device
        tags = meta.setdefault("tags", {})
        tags.update(self._tags)
        tags["capture.profiler"] = "kineto" if self.kineto else "legacy"
        for name, description in self._inputs.items():
            tags[f"input.{name}"] = description
        return json.dumps(meta, separators=(",", ":"), ensure_ascii=False)

    def _write_placeholder(self):
        """The trace a process killed inside the block leaves: the profiler's events exist only
        in memory until the block ends, so the file holds the capture's meta and its root and
        measured spans, both open. Health reads that as `capture_cut_short`. Written with one
        write() of less than 4 KiB, so a kill leaves all of it or an empty file."""
        self.kineto = bool(_torch.autograd.kineto_available())
        meta = {"kind": "meta", "schema": "candle-graph/trace/6",
                "measured_region_device_synchronized": False, "timing_mode": "host"}
        lines = [self._identify(meta)]
        lines.append(json.dumps({"kind": "span_start", "id": "s1", "name": self._entrypoint,
                                 "start_ns": 0, "span_kind": "function", "measured": False},
                                separators=(",", ":"), ensure_ascii=False))
        lines.append(json.dumps({"kind": "span_start", "id": "s2", "parent_id": "s1",
                                 "name": json.loads(lines[0])["correlation_id"],
                                 "start_ns": 0, "span_kind": "function", "measured": True},
                                separators=(",", ":"), ensure_ascii=False))
        with open(self._path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    def _replace_placeholder(self, converted, gradients):
        """The converted trace with the capture's identity in its meta, then the gradients,
        staged beside the trace and renamed over the placeholder: a kill at any moment leaves
        either the placeholder or the whole trace, never part of it."""
        with open(converted, encoding="utf-8") as f:
            lines = f.read().splitlines()
        first = next(i for i, line in enumerate(lines) if line.strip())
        lines[first] = self._identify(json.loads(lines[first]))
        fd, staged = _create_sibling(self._path)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                for line in lines:
                    f.write(line + "\n")
                for fact in gradients:
                    if fact.get("norm", 0) is None:
                        del fact["norm"]
                    f.write(json.dumps(fact, separators=(",", ":")) + "\n")
            os.replace(staged, self._path)
        except BaseException:
            try:
                os.unlink(staged)
            except OSError:
                pass
            raise
