"""Both engines of candle_graph.torch (native: the LibTorch capture; profiler: torch's profiler
converted by candle-graph's importer) on the MLP, the CNN and a GRU+attention update, and the
engine choice of engine="auto".

Expected values come from torch in the same process: op names from the profiler's own event
list (torch.autograd.profiler / torch.profiler: function_events), gradient norms from
p.grad.norm() after the update; trust from `candle-graph validate --require-trusted`.
"""

import collections
import math

import pytest
import torch

import candle_graph.torch as cgt
from conftest import (Setup, capture_update, collected_events, events, profiled_names, read_trace,
                      validate)

KINDS = ["mlp", "cnn", "gru"]


def trace_op_names(path):
    return collections.Counter(o["op_name"] for o in events(read_trace(path), "op"))


def assert_gradients_equal_torchs(path, model):
    facts = {g["key"]: g for g in events(read_trace(path), "gradient")}
    named = dict(model.named_parameters())
    assert sorted(facts) == sorted(named)
    for name, p in named.items():
        assert facts[name]["state"] == "present", name
        assert math.isclose(facts[name]["norm"], p.grad.norm().item(), rel_tol=1e-6), name


@pytest.mark.parametrize("kind", KINDS)
def test_profiler_engine(kind, trace_path):
    setup = Setup(kind)
    cap = capture_update(setup, trace_path, engine="profiler")
    assert cap.engine == cap.summary["engine"] == "profiler"
    code, out = validate(trace_path)
    assert code == 0, out
    trace = read_trace(trace_path)
    meta = events(trace, "meta")[0]
    assert (meta["phase"], meta["capture_step"], meta["entrypoint"]) == ("train", 3,
                                                                         "test::update")
    assert meta["tags"]["capture.engine"] == "profiler"
    assert meta["tags"]["input.input"] == f"float32[{','.join(map(str, setup.x.shape))}]"
    steps = {e.get("step") for e in events(trace, "span_start")}
    assert {"forward", "backward", "optimizer"} <= steps
    # The ops are the profiler's: every event it collected (before torch's display merge, see
    # test_profiler_agreement.py) but the record_function ranges and its memory records.
    captured = trace_op_names(trace_path)
    profiled = profiled_names(collected_events(cap.profile))
    del profiled["[memory]"]
    assert captured == profiled, (dict(captured - profiled), dict(profiled - captured))
    assert cap.summary["ops"] == sum(captured.values()) > 20
    assert cap.summary["memory_events"] == len(events(trace, "memory"))
    if cap.summary["profiler"] == "kineto":  # the legacy profiler's records have no address
        assert cap.summary["memory_events"] > 0
    assert_gradients_equal_torchs(trace_path, setup.model)


@pytest.mark.parametrize("kind", KINDS)
def test_native_engine(kind, trace_path):
    """The profiler watches the same update around the capture (as in test_capture.py); its
    events are cut to a record_function range made before the capture."""
    setup = Setup(kind)
    setup.update()
    setup.update()
    update_range = torch.autograd.profiler.record_function("cg_test_update")
    with torch.autograd.profiler.profile() as prof:
        with cgt.TorchCapture(trace_path, setup.model, entrypoint="test::update", step=3,
                              engine="native") as cap:
            with update_range:
                setup.update(cap)
    assert cap.summary["engine"] == "native"
    code, out = validate(trace_path)
    assert code == 0, out
    (window,) = [e for e in prof.function_events if e.name == "cg_test_update"]
    # Before torch's merge of same-name parent/child events, as test_profiler_agreement.py
    # explains: the capture sees both; compare with the events the profiler collected.
    parsed = collected_events(prof)
    (raw_window,) = [e for e in parsed if e.name == "cg_test_update"]
    collected = profiled_names(parsed, inside=raw_window)
    captured = trace_op_names(trace_path)
    assert captured == collected, (dict(captured - collected), dict(collected - captured))
    assert sum(captured.values()) >= sum(profiled_names(prof.function_events, window).values())
    assert_gradients_equal_torchs(trace_path, setup.model)


def test_auto_picks_native_when_the_extension_matches_this_torch(trace_path):
    usable, reason = cgt.native_engine_status()
    assert usable, reason
    cap = capture_update(Setup("mlp"), trace_path, engine="auto")
    assert cap.summary["engine"] == "native"
    tags = events(read_trace(trace_path), "meta")[0]["tags"]
    assert tags["capture.engine"] == "native"
    release = ".".join(map(str, cgt._release(torch.__version__)))  # "1.13.0a0" -> "1.13.0"
    assert f"built for torch {release}" in tags["capture.engine_reason"]


def test_auto_falls_back_to_the_profiler_on_a_version_mismatch(trace_path, monkeypatch):
    """An extension built for another torch (simulated: the version it says it was built for)."""
    monkeypatch.setattr(cgt._native, "torch_version", "2.4.1")
    usable, reason = cgt.native_engine_status()
    assert not usable and "2.4.1" in reason
    setup = Setup("mlp")
    cap = capture_update(setup, trace_path, engine="auto")
    assert cap.summary["engine"] == "profiler"
    assert "2.4.1" in cap.summary["engine_reason"]
    tags = events(read_trace(trace_path), "meta")[0]["tags"]
    assert tags["capture.engine"] == "profiler" and "2.4.1" in tags["capture.engine_reason"]
    code, out = validate(trace_path)
    assert code == 0, out
    with pytest.raises(RuntimeError, match="not available.*2.4.1"):
        cgt.TorchCapture(trace_path, setup.model, entrypoint="e", step=1, engine="native")


def test_auto_falls_back_when_the_extension_does_not_import(trace_path, monkeypatch):
    monkeypatch.setattr(cgt, "_native", None)
    monkeypatch.setattr(cgt, "_NATIVE_IMPORT_ERROR", "undefined symbol: _ZN3c10 (simulated)")
    cap = capture_update(Setup("mlp"), trace_path, engine="auto")
    assert cap.summary["engine"] == "profiler"
    assert "undefined symbol" in cap.summary["engine_reason"]


def test_bad_engine_names_the_choices(trace_path):
    with pytest.raises(ValueError, match="auto.*native.*profiler"):
        cgt.TorchCapture(trace_path, Setup("mlp").model, entrypoint="e", step=1, engine="fast")


def test_profiler_engine_errors_stay_as_they_are(tmp_path):
    setup = Setup("mlp")
    with pytest.raises(OSError, match="no-such-dir"):
        with cgt.TorchCapture(tmp_path / "no-such-dir" / "t.jsonl", setup.model,
                              entrypoint="e", step=1, engine="profiler"):
            pass
    with cgt.TorchCapture(tmp_path / "outer.jsonl", setup.model, entrypoint="e", step=1,
                          engine="profiler"):
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with cgt.TorchCapture(tmp_path / "inner.jsonl", setup.model, entrypoint="e", step=1,
                                  engine="native"):
                pass
        setup.update()


def test_profiler_engine_inference_call(trace_path):
    setup = Setup("cnn")
    with torch.no_grad():
        with cgt.TorchCapture(trace_path, setup.model, entrypoint="cnn::infer", step=1,
                              phase="inference", engine="profiler") as cap:
            setup.model(setup.x)
    code, out = validate(trace_path)
    assert code == 0, out
    assert events(read_trace(trace_path), "meta")[0]["phase"] == "infer"
    assert cap.summary["gradients"] == 0 and not events(read_trace(trace_path), "gradient")


def test_profiler_engine_span_left_open_and_use_outside_the_block(tmp_path):
    setup = Setup("mlp")
    cap = cgt.TorchCapture(tmp_path / "t.jsonl", setup.model, entrypoint="e", step=1,
                           engine="profiler")
    with pytest.raises(RuntimeError, match="with TorchCapture"):
        cap.span("s")
    with pytest.raises(RuntimeError, match="still open"):
        with cap:
            cap.span("dangling").__enter__()
            setup.update()
    with pytest.raises(RuntimeError, match="has ended"):
        cap.span("s")
    # the thread is free again, and the next capture is trusted
    cap = capture_update(setup, tmp_path / "next.jsonl", step=1, engine="profiler")
    code, out = validate(tmp_path / "next.jsonl")
    assert code == 0, out


def test_profiler_engine_first_update_ops_equal_the_profilers(trace_path):
    """The first update (no optimizer state yet: SGD's momentum buffers are made by clone and
    detach, ops whose names carry no `::`): every op the profiler collected is an op of the
    trace, not a span."""
    setup = Setup("mlp")
    cap = capture_update(setup, trace_path, step=1, engine="profiler")
    captured = trace_op_names(trace_path)
    profiled = profiled_names(collected_events(cap.profile))
    del profiled["[memory]"]
    assert captured == profiled, (dict(captured - profiled), dict(profiled - captured))
