"""Shared helpers of the candle_graph.torch tests (run by CTest: cg_python_capture_tests).

torch is imported at top level on purpose: a /usr/bin/python3 without python3-torch must make
the test run fail ("No module named 'torch'"), not skip.
"""

import collections
import json
import os
import subprocess

import pytest
import torch

import candle_graph.torch as cgt

CG_BINARY = os.environ.get("CG_BINARY", "")


def read_trace(path):
    """The trace's events (one JSON object per line), parsed independently of candle-graph."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def events(trace, kind):
    return [e for e in trace if e["kind"] == kind]


def validate(path):
    """`candle-graph validate --require-trusted PATH`: (exit code, stdout + stderr)."""
    assert CG_BINARY, "CG_BINARY (the candle-graph executable) is not set; run through CTest"
    r = subprocess.run([CG_BINARY, "validate", str(path), "--require-trusted"],
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def cli_json(*args):
    """The JSON document `candle-graph ARGS...` prints."""
    assert CG_BINARY, "CG_BINARY (the candle-graph executable) is not set; run through CTest"
    r = subprocess.run([CG_BINARY, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.act = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)  # has buffers (running_mean, ...)
        self.pool = torch.nn.MaxPool2d(2)
        self.head = torch.nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.head(h.flatten(1))


class GruAttention(torch.nn.Module):
    """A recurrent layer and self-attention over its outputs: the ops of sequence models (GRU
    cells, batched matmuls, softmax) that the MLP and the CNN do not run."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.gru = torch.nn.GRU(16, 16, batch_first=True)
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        h, _ = self.gru(torch.relu(self.embed(x)))
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.head(a.mean(dim=1))


MODELS = {"mlp": (MLP, (32,)), "cnn": (SmallCNN, (1, 8, 8)), "gru": (GruAttention, (6, 8))}


class Setup:
    """A model, its optimizer and one fixed batch: update() is one training update."""

    def __init__(self, kind, batch=8, optimizer="sgd"):
        torch.manual_seed(0)
        model, input_shape = MODELS[kind]
        self.model = model()
        self.x = torch.randn(batch, *input_shape)
        self.y = torch.randint(0, 10, (batch,))
        params = self.model.parameters()
        self.opt = (torch.optim.SGD(params, lr=0.01, momentum=0.9) if optimizer == "sgd"
                    else torch.optim.Adam(params, lr=1e-3))
        self.loss_fn = torch.nn.CrossEntropyLoss()

    def update(self, cap=None):
        self.opt.zero_grad()
        if cap is None:
            loss = self.loss_fn(self.model(self.x), self.y)
            loss.backward()
            self.opt.step()
            return loss
        cap.record_input("input", self.x)
        with cap.span("forward", step="forward"):
            loss = self.loss_fn(self.model(self.x), self.y)
        loss.backward()
        with cap.span("optimizer", step="optimizer"):
            self.opt.step()
        return loss


@pytest.fixture
def trace_path(tmp_path):
    return tmp_path / "trace.jsonl"


def capture_update(setup, path, step=3, entrypoint="test::update", engine="auto"):
    """Two plain updates, then the captured one (as in a training loop)."""
    for _ in range(step - 1):
        setup.update()
    with cgt.TorchCapture(path, setup.model, entrypoint=entrypoint, step=step, phase="train",
                          device="cpu", engine=engine) as cap:
        setup.update(cap)
    return cap


USER_SCOPE = 7  # at::RecordScope::USER_SCOPE in ATen/record_function.h (1.13)


def collected_events(prof):
    """torch's events before its merge step, with torch's own parser. ``function_events`` is
    post-processed by ``EventList._remove_dup_nodes``, which drops an event whose parent has the
    same name and no other child (test_profiler_agreement.py); and since torch nests events by
    their microsecond times, two calls of the same op one after the other can look nested when
    the first ends in the microsecond the second starts, and the second is dropped too (seen
    once in some 40 runs on a loaded machine: one ``aten::resolve_conj`` of two under ``aten::mm``)."""
    return torch.autograd.profiler_util.EventList(prof._parse_kineto_results(prof.kineto_results))


def profiled_names(events_, inside=None):
    """Op names of profiler events, without record_function ranges (scope USER_SCOPE, e.g.
    "Optimizer.step#SGD.step"): the capture observes FUNCTION and BACKWARD_FUNCTION only (its
    spans are the ranges). With `inside`, only events within that range's time."""
    names = collections.Counter()
    for e in events_:
        if e.scope == USER_SCOPE:
            continue
        if inside is not None and not (e.time_range.start >= inside.time_range.start
                                       and e.time_range.end <= inside.time_range.end):
            continue
        names[e.name] += 1
    return names
