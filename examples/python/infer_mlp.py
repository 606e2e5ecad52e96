#!/usr/bin/python3
"""Capture one inference call of a small MLP with candle_graph.torch.

    /usr/bin/python3 examples/python/infer_mlp.py [TRACE]      (default: mlp_infer.jsonl)
    candle-graph report mlp_infer.jsonl --json evidence.json --markdown report.md

An inference capture has no gradient facts; it works under torch.no_grad() and
torch.inference_mode().
"""

import sys

import torch

import candle_graph.torch as cgt


def main(argv):
    trace = argv[1] if len(argv) > 1 else "mlp_infer.jsonl"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    model.eval()
    requests = [torch.randn(16, 32) for _ in range(4)]

    with torch.inference_mode():
        for call, x in enumerate(requests, start=1):
            if call == 2:  # the first call pays for one-time set-up: capture the second
                with cgt.TorchCapture(trace, model, entrypoint="mlp::predict", step=call,
                                      phase="inference", device="cpu") as cap:
                    cap.record_input("request", x)
                    with cap.span("forward", step="forward"):
                        scores = model(x)
                s = cap.summary
                print(f"call {call}: captured {s['ops']} ops, {s['memory_events']} memory "
                      f"events, peak {s['peak_bytes']} bytes -> {s['trace']}")
            else:
                scores = model(x)
            print(f"call {call}: predicted classes {scores.argmax(1)[:4].tolist()} ...")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
