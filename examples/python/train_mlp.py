#!/usr/bin/python3
"""Capture one training update of a small MLP with candle_graph.torch.

    /usr/bin/python3 examples/python/train_mlp.py [TRACE [ENGINE]]   (default: mlp_train.jsonl auto)
    candle-graph validate --require-trusted mlp_train.jsonl
    candle-graph report mlp_train.jsonl --json evidence.json --markdown report.md
    candle-graph view mlp_train.jsonl -o mlp_train.html

ENGINE is auto, native or profiler (see candle_graph.torch.TorchCapture). Needs torch and the
candle_graph package (`pip install --no-build-isolation ./integrations/python`, build/python on
PYTHONPATH, or `cmake --install build`).
"""

import sys

import torch

import candle_graph.torch as cgt


def main(argv):
    trace = argv[1] if len(argv) > 1 else "mlp_train.jsonl"
    engine = argv[2] if len(argv) > 2 else "auto"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(64, 32)
    y = torch.randint(0, 10, (64,))

    for step in range(1, 6):
        opt.zero_grad()
        if step == 3:  # one representative update, after the optimizer state exists
            with cgt.TorchCapture(trace, model, entrypoint="mlp::update", step=step,
                                  phase="train", device="cpu", engine=engine) as cap:
                cap.record_input("input", x)
                with cap.span("forward", step="forward"):
                    loss = loss_fn(model(x), y)
                loss.backward()  # automatic backward span
                with cap.span("optimizer", step="optimizer"):
                    opt.step()
            s = cap.summary
            print(f"step {step}: loss {loss.item():.4f}; captured ({s['engine']} engine) "
                  f"{s['ops']} ops, {s['memory_events']} memory events, "
                  f"{s['gradients']} gradient facts -> {s['trace']}")
        else:
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            print(f"step {step}: loss {loss.item():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
