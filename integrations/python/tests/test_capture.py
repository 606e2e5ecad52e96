"""candle_graph.torch: traces of Python training updates and inference calls.

Expected values come from PyTorch itself in the same process (p.grad.norm(),
torch.autograd.profiler.profile()) or from the trace read back with json, never from the
capture's own summary alone.
"""

import collections
import math

import pytest
import torch

import candle_graph.torch as cgt
from conftest import (Setup, capture_update, collected_events, events, profiled_names, read_trace,
                      validate)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_update_gives_a_trusted_trace(kind, trace_path):
    setup = Setup(kind)
    cap = capture_update(setup, trace_path)
    code, out = validate(trace_path)
    assert code == 0, out
    trace = read_trace(trace_path)
    meta = events(trace, "meta")[0]
    assert meta["phase"] == "train"
    assert meta["capture_step"] == 3
    spans = {e["name"].rsplit("/", 1)[-1]: e for e in events(trace, "span_start")}
    # the user's spans, the automatic backward span, all inside the measured region
    for name, step in (("forward", "forward"), ("backward", "backward"),
                       ("optimizer", "optimizer")):
        assert spans[name].get("step") == step, spans.keys()
    ops = events(trace, "op")
    mem = events(trace, "memory")
    assert len(ops) == cap.summary["ops"] > 0
    assert len(mem) == cap.summary["memory_events"] > 0
    backward_span = spans["backward"]["id"]
    assert any(o["span_id"] == backward_span and o["op_name"].endswith("Backward0") for o in ops)
    # the recorded input is named in the ops that read it
    assert any("input" in o.get("inputs", []) for o in ops)
    assert cap.summary["exception"] is None


def captured_names(path):
    return collections.Counter(o["op_name"] for o in events(read_trace(path), "op"))


def differences(captured, profiled):
    return (f"only captured: {dict(captured - profiled)}; "
            f"only profiled: {dict(profiled - captured)}")


@pytest.mark.parametrize("kind,optimizer", [("mlp", "sgd"), ("cnn", "adam")])
def test_captured_ops_equal_the_profilers_for_the_same_update(kind, optimizer, trace_path):
    """Both observers watch one update at once: torch.autograd.profiler.profile() around the
    capture. The profiler's events are cut to a record_function range around the update, so
    that the capture's own work at the block's edges (its warm-up is skipped while the profiler
    runs; the gradient facts at exit) is left out. The range object is made before the capture:
    its constructor runs torch.zeros(1) (aten::zeros > aten::empty, aten::zero_), an op of the
    profiler's machinery, not of the update. No other difference exists; memory capture is off
    in this configuration (the profiler holds the PROFILER_STATE slot). The profiler's events
    are those it collected, before torch merges some of them (conftest.collected_events)."""
    setup = Setup(kind, optimizer=optimizer)
    setup.update()
    setup.update()
    update_range = torch.autograd.profiler.record_function("cg_test_update")
    with torch.autograd.profiler.profile() as prof:
        with cgt.TorchCapture(trace_path, setup.model, entrypoint="test::both", step=3) as cap:
            with update_range:
                setup.update(cap)
    assert cap.summary["memory_captured"] is False
    evs = collected_events(prof)
    ranges = [e for e in evs if e.name == "cg_test_update"]
    assert len(ranges) == 1
    profiled = profiled_names(evs, inside=ranges[0])
    assert any(n.startswith("Optimizer.step#") for n in (e.name for e in evs)), "no user scope"
    captured = captured_names(trace_path)
    assert sum(captured.values()) > 50
    assert captured == profiled, differences(captured, profiled)


def test_captured_ops_equal_the_profilers_for_the_next_identical_update(trace_path):
    """Memory capture on, then the profiler on the next update (update 3 captured, update 4
    profiled: from update 2 on, every update of this MLP runs the same ops; the optimizer state
    exists and zero_grad finds gradients). The capture's span calls dispatch no ATen op.
    Only the MLP: with the CNN's BatchNorm2d, consecutive updates are not always identical:
    now and then one runs one more aten::empty under aten::native_batch_norm than the next
    (measured with the profiler alone on two consecutive updates: 5 of 150 pairs differed by
    exactly that op; the simultaneous test above never differs)."""
    setup = Setup("mlp", optimizer="sgd")
    capture_update(setup, trace_path, step=3)
    with torch.autograd.profiler.profile() as prof:
        setup.update()
    profiled = profiled_names(collected_events(prof))
    captured = captured_names(trace_path)
    assert captured == profiled, differences(captured, profiled)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_one_gradient_fact_per_parameter_with_its_norm(kind, trace_path):
    setup = Setup(kind)
    capture_update(setup, trace_path)
    facts = {g["key"]: g for g in events(read_trace(trace_path), "gradient")}
    named = dict(setup.model.named_parameters())
    assert sorted(facts) == sorted(named)
    for name, p in named.items():
        expected = p.grad.norm().item()  # the optimizer step reads .grad, it does not change it
        assert facts[name]["state"] == "present"
        assert math.isclose(facts[name]["norm"], expected, rel_tol=1e-6), name


def test_injected_nan_gives_a_non_finite_gradient(trace_path):
    setup = Setup("mlp")
    setup.update()
    with cgt.TorchCapture(trace_path, setup.model, entrypoint="test::nan", step=2) as cap:
        setup.opt.zero_grad()
        loss = setup.loss_fn(setup.model(setup.x), setup.y)
        loss.backward()
        with torch.no_grad():
            setup.model.fc2.bias.grad[3] = float("nan")
    facts = {g["key"]: g for g in events(read_trace(trace_path), "gradient")}
    assert facts["fc2.bias"]["state"] == "non_finite"
    assert "norm" not in facts["fc2.bias"]  # JSON has no NaN
    assert all(f["state"] == "present" for k, f in facts.items() if k != "fc2.bias")
    assert cap.summary["non_finite_gradients"] == 1


def test_parameter_without_gradient_is_missing(trace_path):
    setup = Setup("mlp")
    setup.model.unused = torch.nn.Linear(3, 3)  # never in forward: its grad stays None
    with cgt.TorchCapture(trace_path, setup.model, entrypoint="test::missing", step=1) as cap:
        setup.update(cap)
    facts = {g["key"]: g["state"] for g in events(read_trace(trace_path), "gradient")}
    assert facts["unused.weight"] == "missing" and facts["unused.bias"] == "missing"
    assert cap.summary["missing_gradients"] == 2


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_inference_call_gives_a_trusted_inference_trace(mode, trace_path):
    setup = Setup("cnn")
    guard = torch.no_grad() if mode == "no_grad" else torch.inference_mode()
    with guard:
        setup.model.eval()
        setup.model(setup.x)  # a first call, as in a serving loop
        with cgt.TorchCapture(trace_path, setup.model, entrypoint="test::infer", step=2,
                              phase="inference") as cap:
            cap.record_input("input", setup.x)
            with cap.span("forward", step="forward"):
                out = setup.model(setup.x)
    assert out.shape == (8, 10)
    code, text = validate(trace_path)
    assert code == 0, text
    trace = read_trace(trace_path)
    meta = events(trace, "meta")[0]
    assert meta["phase"] == "infer"
    assert meta["tags"]["python.inference_mode"] == str(mode == "inference_mode").lower()
    assert events(trace, "gradient") == []
    assert cap.summary["gradients"] == 0
    ops = [o["op_name"] for o in events(trace, "op")]
    assert "aten::conv2d" in ops and not any(n.endswith("Backward0") for n in ops)


def test_exception_inside_the_block_leaves_a_parsable_trace(trace_path):
    setup = Setup("mlp")
    with pytest.raises(ZeroDivisionError):
        with cgt.TorchCapture(trace_path, setup.model, entrypoint="test::boom", step=1) as cap:
            with cap.span("forward", step="forward"):
                setup.model(setup.x)
                1 / 0
    assert cap.summary["exception"] == "ZeroDivisionError: division by zero"
    code, text = validate(trace_path)  # complete: every span closed, end of envelope written
    assert code == 0, text
    trace = read_trace(trace_path)
    names = [s["name"] for s in events(trace, "span_start")]
    assert any(n.endswith("/exception: ZeroDivisionError: division by zero") for n in names)
    assert len(events(trace, "span_end")) == len(names)
    assert cap.summary["ops"] == len(events(trace, "op")) > 0


def test_a_capture_after_a_failed_one_works(trace_path, tmp_path):
    setup = Setup("mlp")
    with pytest.raises(KeyError):
        with cgt.TorchCapture(trace_path, setup.model, entrypoint="test::a", step=1):
            raise KeyError("x")
    second = tmp_path / "second.jsonl"
    with cgt.TorchCapture(second, setup.model, entrypoint="test::b", step=2) as cap:
        setup.update(cap)
    assert cap.summary["exception"] is None
    assert validate(second)[0] == 0
