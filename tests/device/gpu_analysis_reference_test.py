"""`candle-graph query --kind gpu` on real Kineto traces against a reference computation.

The expected numbers are computed here from the raw JSON with the definitions of Meta's Holistic
Trace Analysis as docs/format/pytorch.md states them (§G2 temporal breakdown, §G3 kernel types,
§G4 idle time, §G5 comm/compute overlap, §G6 launch statistics) and this project's corrections
(exact fractional µs, syncs are not busy time, every runtime call with a correlation is a launch,
idle gaps from the latest end so far, NCCL/RCCL/HCCL by every name). Timestamps are read with
Python's Decimal; nothing here calls candle-graph's code except the CLI whose output is checked.
"""

import math
import os
import subprocess
import sys
from collections import defaultdict

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from key_averages_reference_test import (  # noqa: E402  (the shared reading of the fixtures)
    CASES, CG, KINETO, RUNTIME_CATS, WORK_CATS, inside, load_events, ns, query, region_of)

KERNEL_WAIT_NS = 30_000
RUNTIME_CUTOFF_NS = 50_000
DELAY_CUTOFF_NS = 100_000


def merged(intervals):
    out = []
    for b, e in sorted(intervals):
        if e <= b:
            continue
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def length(disjoint):
    return sum(e - b for b, e in disjoint)


def overlap(a, b):
    # By brute force over the points: the time both unions cover.
    total = 0
    for ab, ae in a:
        for bb, be in b:
            total += max(0, min(ae, be) - max(ab, bb))
    return total


def work_class(e):
    if e["cat"] in ("gpu_memcpy", "gpu_memset"):
        return "MEMORY"
    name = e["name"]
    if name.startswith(("nccl", "rccl", "hccl")) or "ncclKernel" in name or "ncclDevKernel" in name:
        return "COMMUNICATION"
    return "COMPUTATION"


def stream_of(e):
    s = (e.get("args") or {}).get("stream")
    return s if isinstance(s, int) and not isinstance(s, bool) and s >= 0 else e.get("tid")


def device_of(e):
    d = (e.get("args") or {}).get("device")
    return f"cuda:{d if isinstance(d, int) else e.get('pid')}"


def is_sync_call(name):
    if "Synchronize" in name:
        return True
    return name.startswith(("cudaMemcpy", "hipMemcpy", "cuMemcpy")) and "Async" not in name


def kernel_types(by_class):
    # Label every elementary segment between boundaries by the classes active in it.
    names = ["COMPUTATION", "COMMUNICATION", "MEMORY"]
    points = sorted({t for c in names for iv in by_class[c] for t in iv})
    out = defaultdict(int)
    for b, e in zip(points, points[1:]):
        mid2 = b + e  # 2 × the segment's midpoint: inside [b, e) without fractions
        active = [c for c in names if any(2 * x < mid2 < 2 * y for x, y in by_class[c])]
        if active:
            out[" overlapping ".join(active)] += e - b
    return dict(out)


def nearest_rank(sorted_values, p):
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def expected_devices(events, region):
    calls = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in RUNTIME_CATS:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None and corr not in calls:
                calls[corr] = (ns(e["ts"]), ns(e["dur"]), e["name"])
    per_device = defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in WORK_CATS:
            continue
        corr = (e.get("args") or {}).get("correlation")
        if inside(region, calls[corr][0] if corr in calls else ns(e["ts"])):
            per_device[device_of(e)].append(e)
    in_region_calls = {c: v for c, v in calls.items() if inside(region, v[0])}
    out = {}
    for device, work in per_device.items():
        iv = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in work]
        busy = merged(iv)
        by_class = {c: merged([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in work
                               if work_class(e) == c])
                    for c in ("COMPUTATION", "COMMUNICATION", "MEMORY")}
        d = {
            "window_ns": busy[-1][1] - busy[0][0],
            "busy_ns": length(busy),
            "compute_ns": length(by_class["COMPUTATION"]),
            "communication_ns": length(by_class["COMMUNICATION"]),
            "memory_ns": length(by_class["MEMORY"]),
            "kernel_types": kernel_types(by_class),
        }
        d["idle_ns"] = d["window_ns"] - d["busy_ns"]
        d["overlap_ns"] = overlap(by_class["COMMUNICATION"], by_class["COMPUTATION"])
        streams = {}
        by_stream = defaultdict(list)
        for e in work:
            by_stream[stream_of(e)].append(e)
        for stream, items in by_stream.items():
            items.sort(key=lambda e: ns(e["ts"]))
            s = {"busy_ns": length(merged([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
                                           for e in items])),
                 "host_wait_ns": 0, "kernel_wait_ns": 0, "other_wait_ns": 0}
            reach = None
            for e in items:
                start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
                if end <= start:  # no busy time: it ends no gap (as merged() drops it)
                    continue
                if reach is not None and start > reach:
                    gap = start - reach
                    call = in_region_calls.get((e.get("args") or {}).get("correlation"))
                    if call and call[0] > reach:
                        s["host_wait_ns"] += gap
                    elif gap < KERNEL_WAIT_NS:
                        s["kernel_wait_ns"] += gap
                    else:
                        s["other_wait_ns"] += gap
                reach = end if reach is None else max(reach, end)
            streams[stream] = s
        d["streams"] = streams
        # The device's own gaps (all streams together), each by the cause of the work ending it.
        causes = {"host_wait_ns": 0, "kernel_wait_ns": 0, "other_wait_ns": 0}
        reach = None
        for e in sorted(work, key=lambda e: ns(e["ts"])):
            start, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            if end <= start:
                continue
            if reach is not None and start > reach:
                call = in_region_calls.get((e.get("args") or {}).get("correlation"))
                key = ("host_wait_ns" if call and call[0] > reach else
                       "kernel_wait_ns" if start - reach < KERNEL_WAIT_NS else "other_wait_ns")
                causes[key] += start - reach
            reach = end if reach is None else max(reach, end)
        d["idle_causes"] = causes
        delays, short, outliers, late = [], 0, 0, 0
        for e in work:
            call = in_region_calls.get((e.get("args") or {}).get("correlation"))
            if not call:
                continue
            cpu = call[1]
            delay = max(0, ns(e["ts"]) - (call[0] + cpu))
            delays.append(delay)
            short += cpu <= RUNTIME_CUTOFF_NS and ns(e["dur"]) < cpu
            outliers += cpu > RUNTIME_CUTOFF_NS
            late += delay > DELAY_CUTOFF_NS
        delays.sort()
        d["launches"] = {"count": len(delays), "short_kernels": short,
                         "runtime_outliers": outliers, "delay_outliers": late}
        if delays:
            d["launches"].update({
                "max_delay_ns": delays[-1], "mean_delay_ns": sum(delays) // len(delays),
                "p50_delay_ns": nearest_rank(delays, 50), "p95_delay_ns": nearest_rank(delays, 95)})
        out[device] = d
    return out


def expected_host_sync(events, region):
    per_call = defaultdict(lambda: [0, 0])
    for e in events:
        if (e.get("ph") == "X" and e.get("cat") in RUNTIME_CATS and is_sync_call(e["name"])
                and inside(region, ns(e["ts"]))):
            per_call[e["name"]][0] += ns(e["dur"])
            per_call[e["name"]][1] += 1
    return dict(per_call)


@pytest.mark.parametrize("name,step", CASES)
def test_gpu_analysis_matches_the_reference(name, step):
    path = os.path.join(KINETO, name)
    events = load_events(path)
    region = region_of(events, step)
    expected = expected_devices(events, region)
    got = {d["device"]: d for d in query(path, "gpu", step)["devices"]}
    assert set(got) == set(expected)
    for device, want in expected.items():
        d = got[device]
        for key in ("window_ns", "busy_ns", "idle_ns", "compute_ns", "communication_ns",
                    "memory_ns"):
            assert d[key] == want[key], (device, key)
        assert {t["type"]: t["ns"] for t in d["kernel_types"]} == want["kernel_types"]
        c = want["idle_causes"]
        assert (d["idle_host_wait_ns"], d["idle_kernel_wait_ns"], d["idle_other_ns"]) == (
            c["host_wait_ns"], c["kernel_wait_ns"], c["other_wait_ns"]), device
        assert d["idle_host_wait_ns"] + d["idle_kernel_wait_ns"] + d["idle_other_ns"] == d["idle_ns"]
        assert {s["stream"]: {k: v for k, v in s.items() if k != "stream"}
                for s in d["streams"]} == want["streams"]
        for key, value in want["launches"].items():
            assert d["launches"][key] == value, (device, key)
        if want["communication_ns"]:
            assert d["comm_compute_overlap"] == pytest.approx(
                want["overlap_ns"] / want["communication_ns"], rel=1e-12)
        else:
            assert d["comm_compute_overlap"] is None
        # The kernel-type segments partition the busy time.
        assert sum(t["ns"] for t in d["kernel_types"]) == d["busy_ns"]
    host_sync = expected_host_sync(events, region)
    stalls = {s["call"]: [s["ns"], s["count"]] for d in got.values() for s in d["sync_stalls"]}
    assert stalls == host_sync


def test_work_of_no_duration_is_no_busy_time_and_ends_no_gap(tmp_path):
    # Kernels of 0 µs (a duration the profiler rounded away, or one the importer zeroed) before,
    # between and after the real work: they make no busy time, so they must neither stretch the
    # window nor end an idle gap, or the gaps' causes add up to more than the idle time (a fuzzed
    # trace had host waits equal to the whole idle time and "other" gaps on top of it).
    def kernel(name, ts, dur, corr):
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                "args": {"correlation": corr, "device": 0, "stream": 7}}
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::step", "pid": 1, "tid": 1, "ts": 0,
           "dur": 300}]
    for corr, ts in enumerate([1, 2, 3, 4, 5], start=1):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": ts, "dur": 0.5, "args": {"correlation": corr}})
    ev += [kernel("empty_first", 10, 0, 1), kernel("A", 50, 10, 2), kernel("empty_mid", 100, 0, 3),
           kernel("B", 150, 20, 4), kernel("empty_last", 250, 0, 5)]
    path = tmp_path / "zero.json"
    import json
    path.write_text(json.dumps({"traceEvents": ev}))
    d = query(str(path), "gpu", None)["devices"][0]
    # Busy: A 50..60 and B 150..170 µs; the window runs from A's start to B's end.
    assert (d["busy_ns"], d["window_ns"], d["idle_ns"]) == (30_000, 120_000, 90_000)
    # The one gap, 60..150 µs, ends at B, whose launch (at 4 µs) came before it: "other".
    assert (d["idle_host_wait_ns"], d["idle_kernel_wait_ns"], d["idle_other_ns"]) == (0, 0, 90_000)
    [stream] = d["streams"]
    assert stream["host_wait_ns"] + stream["kernel_wait_ns"] + stream["other_wait_ns"] == 90_000
    # And the reference computation agrees on everything it states.
    events = load_events(str(path))
    want = expected_devices(events, region_of(events, None))["cuda:0"]
    c = want["idle_causes"]
    assert (c["host_wait_ns"], c["kernel_wait_ns"], c["other_wait_ns"]) == (0, 0, 90_000)
    assert {s["stream"]: {k: v for k, v in s.items() if k != "stream"}
            for s in d["streams"]} == want["streams"]


def test_thresholds_are_options_in_microseconds():
    # With a 1 s kernel-wait threshold no gap is "other"; with 0 none is a kernel wait.
    path = os.path.join(KINETO, "hta-alexnet-a100-2streams.json.gz")

    def streams(*extra):
        r = subprocess.run([CG, "query", path, "--kind", "gpu", *extra], capture_output=True,
                           text=True, check=True)
        import json
        return [s for d in json.loads(r.stdout)["result"]["devices"] for s in d["streams"]]
    wide, none = streams("--kernel-wait-us", "1000000"), streams("--kernel-wait-us", "0")
    assert all(s["other_wait_ns"] == 0 for s in wide)
    assert all(s["kernel_wait_ns"] == 0 for s in none)
    for a, b in zip(wide, none):  # the same gaps, sorted into other causes
        assert (a["kernel_wait_ns"] + a["other_wait_ns"] == b["kernel_wait_ns"] + b["other_wait_ns"])


def test_report_and_findings_state_the_devices_numbers(tmp_path):
    # The report's per-device line and the summary's findings, against the reference numbers.
    path = os.path.join(KINETO, "hta-tracediff-control-a100-nccl-6steps.json.gz")
    events = load_events(path)
    want = expected_devices(events, region_of(events, 1014))["cuda:3"]
    md = tmp_path / "r.md"
    r = subprocess.run([CG, "report", path, "--json", str(tmp_path / "e.json"), "--markdown",
                        str(md), "--headline"], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    text = md.read_text()
    ms = lambda v: f"{v / 1e6:.2f} ms"  # noqa: E731 (the report's format above 1 ms)
    assert (f"GPU cuda:3:     busy {100 * want['busy_ns'] / want['window_ns']:.1f}% of its "
            f"{ms(want['window_ns'])} window (compute {ms(want['compute_ns'])}, communication "
            f"{ms(want['communication_ns'])}, memory {ms(want['memory_ns'])})") in r.stdout
    idle = 100 * want["idle_ns"] / want["window_ns"]
    assert (f"- `cuda:3`: window {ms(want['window_ns'])}, busy {ms(want['busy_ns'])} "
            f"({100 * want['busy_ns'] / want['window_ns']:.1f}%), idle {ms(want['idle_ns'])} "
            f"({idle:.1f}%)") in text
    import json
    findings = json.loads(subprocess.run([CG, "summary", path], capture_output=True, text=True,
                                         check=True).stdout)["findings"]
    assert any(f.startswith(f"GPU cuda:3 idle {idle:.1f}% of its {ms(want['window_ns'])} window")
               for f in findings), findings
    comm = 100 * want["communication_ns"] / want["busy_ns"]
    hidden = 100 * want["overlap_ns"] / want["communication_ns"]
    assert any(f.startswith(f"GPU cuda:3: communication {comm:.1f}% of busy time") and
               f"{hidden:.1f}% of it hidden under compute" in f for f in findings), findings


def test_where_we_differ_from_hta_on_a_constructed_trace(tmp_path):
    # One small ROCm-style trace; every expected number is worked out by hand in the comments.
    # Each line shows a correction of HTA (docs/format/pytorch.md, "Where candle-graph differs"):
    # fractional µs kept to the ns (HTA would round kernel A, 20.0002-20.9003 µs, to 21-20 = -1 µs);
    # the Stream Sync row is a wait, not busy time (HTA's temporal breakdown counts its 50 µs);
    # hipLaunchKernel calls are launches (HTA counts only cudaLaunchKernel*: no launches at all);
    # ncclDevKernel_Generic is communication; idle gaps run from the latest end so far.
    ev = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::step", "pid": 1, "tid": 1, "ts": 5, "dur": 20},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1,
         "ts": 10.0004, "dur": 0.5, "args": {"correlation": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1,
         "ts": 12, "dur": 1, "args": {"correlation": 2}},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1,
         "ts": 13, "dur": 1, "args": {"correlation": 3}},
        {"ph": "X", "cat": "kernel", "name": "A", "pid": 0, "tid": 3, "ts": 20.0002, "dur": 0.9001,
         "args": {"correlation": 1, "device": 0, "stream": 3}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic", "pid": 0, "tid": 4,
         "ts": 20.5, "dur": 20, "args": {"correlation": 2, "device": 0, "stream": 4}},
        {"ph": "X", "cat": "kernel", "name": "B", "pid": 0, "tid": 3, "ts": 21, "dur": 1,
         "args": {"correlation": 3, "device": 0, "stream": 3}},
        {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 3, "ts": 41,
         "dur": 50, "args": {"device": 0, "stream": 3}},
    ]
    path = tmp_path / "rocm.json"
    import json
    path.write_text(json.dumps({"traceEvents": ev}))
    d = query(str(path), "gpu", None)["devices"][0]
    assert d["device"] == "cuda:0"
    # In ns (each timestamp to the nearest ns): A 20000..20900, nccl 20500..40500, B 21000..22000;
    # their union is 20000..40500.
    assert d["busy_ns"] == 40500 - 20000
    assert d["window_ns"] == 40500 - 20000 and d["idle_ns"] == 0
    assert d["sync_ns"] == 50000  # the wait, apart from busy time
    assert d["communication_ns"] == 20000 and d["compute_ns"] == 900 + 1000
    # Overlap: compute under communication = A's 20500..20900 (400) + B's 1000.
    assert d["comm_compute_overlap"] == pytest.approx(1400 / 20000)
    # Three launches; delays from each call's end: 20000 - 10500, 20500 - 13000, 21000 - 14000.
    assert d["launches"]["count"] == 3
    assert d["launches"]["max_delay_ns"] == 9500 and d["launches"]["p50_delay_ns"] == 7500
    stream3 = next(s for s in d["streams"] if s["stream"] == 3)
    # B starts at 21000 after A ended at 20900: a 100 ns gap; its launch (13000) came long before.
    assert stream3["kernel_wait_ns"] == 100 and stream3["host_wait_ns"] == 0


def test_sql_tables_hold_the_gpu_numbers(tmp_path):
    # gpu_devices and gpu_streams, read back through Debian's sqlite3 shell, against the
    # reference numbers computed above from the raw trace.
    path = os.path.join(KINETO, "hta-alexnet-a100-2streams.json.gz")
    events = load_events(path)
    want = expected_devices(events, None)
    db = tmp_path / "g.db"
    subprocess.run([CG, "export", path, "--format", "sqlite", "-o", str(db)], check=True,
                   capture_output=True)

    def rows(sql):
        out = subprocess.run(["sqlite3", "-separator", "|", str(db), sql], capture_output=True,
                             text=True, check=True).stdout
        return [line.split("|") for line in out.splitlines()]
    devices = rows("SELECT device, window_ns, busy_ns, idle_ns, compute_ns, memory_ns, "
                   "launches FROM gpu_devices")
    assert sorted(r[0] for r in devices) == sorted(want)
    for r in devices:
        w = want[r[0]]
        assert [int(v) for v in r[1:]] == [w["window_ns"], w["busy_ns"], w["idle_ns"],
                                           w["compute_ns"], w["memory_ns"],
                                           w["launches"]["count"]]
    # Device time per span: the root's total and the spans' own times both hold all the work of
    # this whole-window trace (counted here from the raw file).
    total = sum(ns(e["dur"]) for e in events
                if e.get("ph") == "X" and e.get("cat") in WORK_CATS)
    assert [int(r[0]) for r in rows("SELECT device_total_ns FROM spans "
                                    "WHERE parent_index IS NULL")] == [total]
    assert int(rows("SELECT SUM(device_self_ns) FROM spans")[0][0]) == total
    streams = rows("SELECT device, stream, busy_ns, host_wait_ns, kernel_wait_ns, other_wait_ns "
                   "FROM gpu_streams")
    got = {(r[0], int(r[1])): [int(v) for v in r[2:]] for r in streams}
    expected = {(d, s): [v["busy_ns"], v["host_wait_ns"], v["kernel_wait_ns"], v["other_wait_ns"]]
                for d, w in want.items() for s, v in w["streams"].items()}
    assert got == expected


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
