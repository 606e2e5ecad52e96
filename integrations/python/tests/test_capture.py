"""candle_graph.torch: traces of Python training updates and inference calls (issue 15 item 4).

Expected values come from PyTorch itself in the same process (p.grad.norm(),
torch.autograd.profiler.profile()) or from the trace read back with json, never from the
capture's own summary alone.
"""

import collections
import math

import pytest
import torch

import candle_graph.torch as cgt
from conftest import Setup, capture_update, events, read_trace, validate


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


def profiler_op_names(setup):
    """Op names torch.autograd.profiler.profile() records for one update (identical to the
    captured one: same model, batch and optimizer state shape)."""
    with torch.autograd.profiler.profile() as prof:
        setup.update()
    names = collections.Counter()
    user_scopes = collections.Counter()
    for e in prof.function_events:
        # RecordScope.USER_SCOPE is 7 in 1.13 (record_function.h): torch.autograd.profiler
        # .record_function ranges such as "Optimizer.step#SGD.step" and
        # "Optimizer.zero_grad#SGD.zero_grad". The capture observes FUNCTION and
        # BACKWARD_FUNCTION only (its spans are the user's ranges), so they are set aside.
        if e.scope == 7:
            user_scopes[e.name] += 1
        else:
            names[e.name] += 1
    return names, user_scopes


@pytest.mark.parametrize("kind,optimizer", [("mlp", "sgd"), ("cnn", "adam")])
def test_captured_ops_equal_the_profilers(kind, optimizer, trace_path):
    setup = Setup(kind, optimizer=optimizer)
    # Update 3 is captured, update 4 is profiled: from update 2 on, every update runs the same
    # ops (the optimizer's state exists, zero_grad finds gradients). The capture's span calls
    # (record_input, cap.span) dispatch no ATen op.
    capture_update(setup, trace_path, step=3)
    captured = collections.Counter(o["op_name"] for o in events(read_trace(trace_path), "op"))
    profiled, user_scopes = profiler_op_names(setup)
    # Differences, all explained:
    # - user scopes (set aside above) are ranges, not ops;
    assert any(name.startswith("Optimizer.step#") for name in user_scopes), user_scopes
    # - nothing else: every ATen op and autograd node the profiler saw, the capture recorded,
    #   as many times (zero_grad included: it runs inside the with block).
    assert captured == profiled, (
        f"only captured: {dict(captured - profiled)}; only profiled: {dict(profiled - captured)}")


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
