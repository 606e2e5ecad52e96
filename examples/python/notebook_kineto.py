#!/usr/bin/python3
"""Notebook-style analysis of a PyTorch profiler trace with candle_graph (no torch needed).

    python3 examples/python/notebook_kineto.py TRACE.pt.trace.json[.gz]

In a notebook, the same lines cell by cell:

    import candle_graph as cg
    trace = cg.load("trace.pt.trace.json.gz")
    trace.ops()      # key_averages() with the GPU time beside it (a DataFrame with pandas)
    trace.gpu()      # per device: busy, idle by cause, compute/communication/memory, overlap

The tables are pandas DataFrames when pandas is installed (Debian: python3-pandas), else lists of
dicts; this script prints either.
"""

import sys

import candle_graph as cg

OP_COLUMNS = ["name", "calls", "host_self_ns", "host_total_ns", "device_self_ns",
              "device_total_ns"]
GPU_COLUMNS = ["device", "window_ns", "busy_ns", "idle_ns", "compute_ns", "communication_ns",
               "memory_ns"]


def show(title, table, columns, rows=15):
    print(f"\n== {title}")
    if hasattr(table, "to_string"):  # a pandas DataFrame
        print(table[columns].head(rows).to_string(index=False))
        return
    print("  ".join(columns))
    for row in table[:rows]:
        print("  ".join(str(row[c]) for c in columns))


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    trace = cg.load(argv[1])
    print(f"{trace.path}: {trace.format}, measured {trace.measured or 'the whole trace'}")
    show("ops (host and device time per op, heaviest first)", trace.ops(), OP_COLUMNS)
    show("GPU (per device)", trace.gpu(), GPU_COLUMNS)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
