"""Host time counted once, on every real Kineto fixture: per thread, the ops' own times tile it.

Where a thread's host ops never cross (none starts inside another and ends after it), they nest
into a forest, and their self times (total minus the direct children's totals) add up to the time
the thread's ops cover, each instant once: Σ self = the length of the union of their intervals.
A nested op counted twice, the "two and three times" an A100 trace once showed under a TRUSTED
verdict, makes the sum exceed the union; an op lost makes it fall short.

The expected figures are worked out here from the raw JSON: the host rows (`cpu_op`,
`cuda_runtime`, `cuda_driver`) starting inside the measured step, grouped by `tid`, their union
from Decimal timestamps. The figures checked are the per-thread sums of the `ops` table that
`candle-graph export --format sqlite` writes, read back with Python's sqlite3 module; nothing here
calls candle-graph's code but its CLI.
"""

import os
import sqlite3
import subprocess
import sys
from collections import defaultdict

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from key_averages_reference_test import (  # noqa: E402  (the shared reading of the fixtures)
    CASES, CG, HOST_CATS, KINETO, inside, load_events, ns, region_of)


def union_length(intervals):
    covered, reached = 0, None
    for start, end in sorted(intervals):
        if reached is None or start >= reached:
            covered += max(0, end - start)
            reached = end if reached is None else max(reached, end)
        elif end > reached:
            covered += end - reached
            reached = end
    return covered


def crosses(intervals):
    # Sorted by (start, -end), every interval either nests in the open ones or starts after them;
    # one that starts inside an open interval and ends after it crosses it.
    open_ends = []
    for start, end in sorted(intervals, key=lambda iv: (iv[0], -iv[1])):
        while open_ends and start >= open_ends[-1]:
            open_ends.pop()
        if open_ends and end > open_ends[-1]:
            return True
        open_ends.append(end)
    return False


def host_lanes(events, region):
    lanes = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in HOST_CATS:
            start = ns(e["ts"])
            if inside(region, start):
                lanes[e.get("tid")].append((start, start + ns(e["dur"])))
    return lanes


def self_time_by_thread(path, step, tmp_path):
    db = tmp_path / "ops.db"
    args = [CG, "export", path, "--format", "sqlite", "-o", str(db)]
    if step is not None:
        args += ["--step", str(step)]
    r = subprocess.run(args, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT thread, COUNT(*), SUM(self_time_ns) FROM ops "
                           "WHERE device = 'cpu' GROUP BY thread").fetchall()
    return {thread: (count, total) for thread, count, total in rows}


def threads_of(lanes, got):
    # An integer tid is the op's thread. Any other (a string, or the negative number the profiler
    # writes for a thread it could not number) is interned by the importer; with one such tid in
    # the step, it is the one thread of the export that is no tid of the file.
    named = {tid: tid for tid in lanes if isinstance(tid, int) and tid >= 0}
    unnamed = [tid for tid in lanes if tid not in named]
    rest = [thread for thread in got if thread not in named.values()]
    assert len(unnamed) == len(rest) <= 1, (unnamed, rest)
    return {**named, **dict(zip(unnamed, rest))}


@pytest.mark.parametrize("name,step", CASES)
def test_host_self_times_tile_each_threads_time(name, step, tmp_path):
    path = os.path.join(KINETO, name)
    events = load_events(path)
    lanes = host_lanes(events, region_of(events, step))
    got = self_time_by_thread(path, step, tmp_path)
    threads = threads_of(lanes, got)
    assert sorted(got) == sorted(threads.values())
    for tid, intervals in lanes.items():
        count, self_sum = got[threads[tid]]
        assert count == len(intervals), (tid, count, len(intervals))
        # The law needs a forest. No op of these fixtures crosses another (checked here, so
        # that a fixture where one did would be noticed, not skipped).
        assert not crosses(intervals), tid
        assert self_sum == union_length(intervals), (tid, self_sum, union_length(intervals))


def test_the_reference_sees_nested_time_counted_twice():
    # The reference itself, on a hand-made thread (µs → ns): op a 0..100 holding b 10..40, which
    # holds c 20..30, and d 50..60; then e 200..250. Covered: 100 + 50 = 150 µs. A self-time
    # table that forgot c inside b (b's self 30 instead of 20) would sum to 160.
    iv = [(0, 100), (10, 40), (20, 30), (50, 60), (200, 250)]
    assert union_length(iv) == 150
    assert not crosses(iv)
    assert crosses([(0, 100), (50, 150)])
    assert not crosses([(0, 100), (100, 150)])  # touching is not crossing
