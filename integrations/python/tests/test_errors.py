"""candle_graph.torch errors: each raised as the documented Python exception
with a message a user can act on; nothing crashes the interpreter."""

import os
import threading

import pytest
import torch

import candle_graph.torch as cgt
from conftest import Setup, read_trace, validate


@pytest.fixture
def model():
    return torch.nn.Linear(4, 2)


def test_unwritable_path_raises_oserror_naming_it(tmp_path, model):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    path = blocker / "trace.jsonl"  # its parent is a file
    with pytest.raises(OSError, match="a_file"):
        with cgt.TorchCapture(path, model, entrypoint="e::x", step=1):
            pass
    assert not path.exists()


def test_nested_capture_raises_runtimeerror(tmp_path, model):
    inner = tmp_path / "inner.jsonl"
    with cgt.TorchCapture(tmp_path / "outer.jsonl", model, entrypoint="e::x", step=1) as outer:
        with pytest.raises(RuntimeError, match="nested"):
            with cgt.TorchCapture(inner, model, entrypoint="e::y", step=1):
                pass
        model(torch.ones(3, 4)).sum().backward()
    assert not inner.exists()  # refused before the file was created
    assert outer.summary["ops"] > 0
    assert validate(tmp_path / "outer.jsonl")[0] == 0


@pytest.mark.parametrize("step", [0, -1, 1.5, "3", True, None])
def test_step_that_is_not_a_positive_integer_raises_valueerror(tmp_path, model, step):
    with pytest.raises(ValueError, match="step must be a positive integer"):
        cgt.TorchCapture(tmp_path / "t.jsonl", model, entrypoint="e::x", step=step)


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(model="not a model"), TypeError, "model must be a torch.nn.Module"),
    (dict(path=42), TypeError, "path must be a str or os.PathLike"),
    (dict(path=""), ValueError, "path must not be empty"),
    (dict(entrypoint=""), ValueError, "entrypoint must not be empty"),
    (dict(entrypoint=7), TypeError, "entrypoint must be a str"),
    (dict(phase="training"), ValueError, "phase must be \"train\" or \"inference\""),
    (dict(phase=1), TypeError, "phase must be a str"),
    (dict(device=""), ValueError, "device must not be empty"),
])
def test_bad_arguments_raise(tmp_path, model, kwargs, error, message):
    args = dict(path=tmp_path / "t.jsonl", model=model, entrypoint="e::x", step=1)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        cgt.TorchCapture(args.pop("path"), args.pop("model"), **args)


def test_bad_arguments_inside_the_block(tmp_path, model):
    with cgt.TorchCapture(tmp_path / "t.jsonl", model, entrypoint="e::x", step=1) as cap:
        with pytest.raises(TypeError, match="needs a torch.Tensor"):
            cap.record_input("x", [1, 2])
        with pytest.raises(TypeError, match="input name must be a str"):
            cap.record_input(None, torch.ones(2))
        with pytest.raises(ValueError, match="span step must be"):
            cap.span("s", step="backwards")
        with pytest.raises(ValueError, match="span name must not be empty"):
            cap.span("")
        with pytest.raises(RuntimeError, match="summary is available after"):
            cap.summary
        with cap.span("plain"):  # without step=: a plain span
            torch.ones(2).sum()
    assert validate(tmp_path / "t.jsonl")[0] == 0
    plain = [s for s in read_trace(tmp_path / "t.jsonl")
             if s["kind"] == "span_start" and s["name"].endswith("/plain")]
    assert len(plain) == 1 and "step" not in plain[0]


def test_use_outside_the_block_raises_runtimeerror(tmp_path, model):
    cap = cgt.TorchCapture(tmp_path / "t.jsonl", model, entrypoint="e::x", step=1)
    with pytest.raises(RuntimeError, match="with TorchCapture"):
        cap.span("s")
    with pytest.raises(RuntimeError, match="with TorchCapture"):
        cap.record_input("x", torch.ones(2))
    with cap:
        late = cap.span("late")  # created inside, entered after the block
        used = cap.span("used")
        with used:
            torch.ones(2).sum()
        with pytest.raises(RuntimeError, match="already entered"):
            with used:  # a span object is entered once
                pass
        with pytest.raises(RuntimeError, match="records one block only"):
            with cap:  # re-entering the capture inside its own block
                pass
    with pytest.raises(RuntimeError, match="has ended"):
        cap.span("s")
    with pytest.raises(RuntimeError, match="has ended"):
        cap.record_input("x", torch.ones(2))
    with pytest.raises(RuntimeError, match="has ended"):
        with late:
            pass
    with pytest.raises(RuntimeError, match="records one block only"):
        with cap:
            pass
    assert cap.summary["trace"]


def test_span_left_open_makes_the_block_raise(tmp_path, model):
    cap = cgt.TorchCapture(tmp_path / "t.jsonl", model, entrypoint="e::x", step=1)
    with pytest.raises(RuntimeError, match="not closed|still open|open"):
        with cap:
            dangling = cap.span("dangling")  # (a span object that dies ends its span)
            dangling.__enter__()
    # the file is complete (parsable) and untrusted: the span stayed open
    code, text = validate(tmp_path / "t.jsonl")
    assert code == 3, text
    assert "was not closed" in text
    # the thread is free again for the next capture
    with cgt.TorchCapture(tmp_path / "next.jsonl", model, entrypoint="e::x", step=2):
        model(torch.ones(3, 4))
    assert validate(tmp_path / "next.jsonl")[0] == 0


def test_use_from_another_thread_raises(tmp_path, model):
    errors = []
    with cgt.TorchCapture(tmp_path / "t.jsonl", model, entrypoint="e::x", step=1) as cap:
        def other():
            try:
                cap.record_input("x", torch.ones(2))
            except RuntimeError as e:
                errors.append(str(e))
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(errors) == 1 and "another thread" in errors[0]


def test_captures_on_two_threads_at_once(tmp_path):
    """Thread-local recording: each thread's capture sees its own ops only."""
    results = {}
    barrier = threading.Barrier(2)

    def run(name):
        setup = Setup("mlp")
        path = tmp_path / f"{name}.jsonl"
        with cgt.TorchCapture(path, setup.model, entrypoint=f"e::{name}", step=1) as cap:
            barrier.wait()
            setup.update(cap)
        results[name] = (cap.summary["ops"], validate(path)[0])

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["a"][1] == 0 and results["b"][1] == 0
    assert results["a"][0] == results["b"][0] > 0


def test_capture_with_torch_profiler_active_skips_memory(tmp_path, model):
    with torch.autograd.profiler.profile():
        with cgt.TorchCapture(tmp_path / "t.jsonl", model, entrypoint="e::x", step=1) as cap:
            model(torch.ones(3, 4)).sum().backward()
    assert cap.summary["memory_captured"] is False
    assert "profiler" in cap.summary["memory_note"]
    assert validate(tmp_path / "t.jsonl")[0] == 0


def test_path_like_and_str_paths(tmp_path, model):
    with cgt.TorchCapture(str(tmp_path / "s.jsonl"), model, entrypoint="e::x", step=1) as cap:
        pass
    assert os.path.exists(cap.summary["trace"])
