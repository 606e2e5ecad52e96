#!/usr/bin/python3
"""Overhead of candle_graph.torch: one process, an MNIST-sized MLP
(784-256-128-10, ReLU, cross-entropy, Adam), batch 8 and 64, interleaved update by update:

  none      the plain update (zero_grad, forward + loss, backward, optimizer step);
  native    the same update inside `with cgt.TorchCapture(..., engine="native")`, with
            record_input and the forward / optimizer spans of the README example;
  cg-prof   the same, engine="profiler": torch's profiler, then the conversion to trace/6 in
            the process (the `with` block's exit);
  profiler  the same update inside torch.autograd.profiler.profile(record_shapes=True,
            profile_memory=True) (the bare profiler: the target for cg-prof is 1.1x its total).

"step" is the update with the instrumentation active (the collection cost); "total" adds entering
and leaving the `with` block (capture: open the trace, checkpoint parameters, warm-up / gradient
facts, format and write every event, close the file; profiler: enable / disable and build its
event list). Medians over all updates, wall and CPU time of the thread; ratios divide by the
median of `none` in the same run.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_capture_bench.py [--rounds R]
       [--steps K] [--settle N]     (defaults 10 rounds x 20 updates per way and batch, settle 2)
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

import candle_graph.torch as cgt


class Bench:
    def __init__(self, batch):
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(
            torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128),
            torch.nn.ReLU(), torch.nn.Linear(128, 10))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.x = torch.randn(batch, 784)
        self.y = torch.randint(0, 10, (batch,))

    def update(self):
        self.opt.zero_grad()
        loss = self.loss_fn(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()

    def captured_update(self, cap):
        self.opt.zero_grad()
        cap.record_input("input", self.x)
        with cap.span("forward", step="forward"):
            loss = self.loss_fn(self.model(self.x), self.y)
        loss.backward()
        with cap.span("optimizer", step="optimizer"):
            self.opt.step()


def clocks():
    return time.perf_counter_ns(), time.thread_time_ns()


def run_one(bench, way, trace, step):
    """(setup, step, finish) as ((wall, cpu), ...) in ns."""
    a = clocks()
    if way == "none":
        b = clocks()
        bench.update()
        c = clocks()
        d = clocks()
    elif way in ("native", "cg-prof"):
        engine = "native" if way == "native" else "profiler"
        with cgt.TorchCapture(trace, bench.model, entrypoint="bench::mlp", step=step,
                              engine=engine) as cap:
            b = clocks()
            bench.captured_update(cap)
            c = clocks()
        d = clocks()
    else:
        with torch.autograd.profiler.profile(record_shapes=True, profile_memory=True):
            b = clocks()
            bench.update()
            c = clocks()
        d = clocks()
    return [(y[0] - x[0], y[1] - x[1]) for x, y in ((a, b), (b, c), (c, d))]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--settle", type=int, default=2,
                    help="plain, unmeasured updates before every measured one")
    ap.add_argument("--batches", default="8,64")
    args = ap.parse_args(argv[1:])
    ways = ["none", "native", "cg-prof", "profiler"]
    batches = [int(b) for b in args.batches.split(",")]
    samples = {(b, w): [] for b in batches for w in ways}
    benches = {b: Bench(b) for b in batches}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.jsonl")
        for b in batches:  # warm: optimizer state, allocator, the capture's buffers
            for w in ways:
                run_one(benches[b], w, trace, 1)
        step = 1
        for r in range(args.rounds):
            for _ in range(args.steps):
                for b in batches:
                    order = ways[r % len(ways):] + ways[:r % len(ways)]  # rotate who goes first
                    for w in order:
                        for _ in range(args.settle):
                            benches[b].update()
                        step += 1
                        samples[(b, w)].append(run_one(benches[b], w, trace, step))

    def med(b, w, part, clock):
        vals = [s[1][clock] if part == "step" else sum(p[clock] for p in s)
                for s in samples[(b, w)]]
        return statistics.median(vals) / 1e6

    print(f"{args.rounds} rounds x {args.steps} updates per way and batch, interleaved, "
          f"{args.settle} plain updates before each; torch {torch.__version__}, "
          f"{torch.get_num_threads()} intra-op thread(s). Medians in ms; ratio = / none.")
    print()
    print("| batch | way | step wall | step CPU | step ratio (CPU) | total wall | total CPU "
          "| total ratio (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for b in batches:
        base_step = med(b, "none", "step", 1)
        base_total = med(b, "none", "total", 1)
        for w in ways:
            sw, sc = med(b, w, "step", 0), med(b, w, "step", 1)
            tw, tc = med(b, w, "total", 0), med(b, w, "total", 1)
            print(f"| {b} | {w} | {sw:.3f} | {sc:.3f} | {sc / base_step:.2f} | {tw:.3f} | "
                  f"{tc:.3f} | {tc / base_total:.2f} |")
    print()
    for b in batches:
        print(f"batch {b}: cg-prof / profiler, whole `with` block: wall "
              f"{med(b, 'cg-prof', 'total', 0) / med(b, 'profiler', 'total', 0):.2f}x, CPU "
              f"{med(b, 'cg-prof', 'total', 1) / med(b, 'profiler', 'total', 1):.2f}x "
              f"(target 1.1x)")
    print(f"load average when done: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
