"""`candle-graph query --kind ops|kernels` on real Kineto traces against a reference computation.

The expected tables are computed here, from the raw JSON, with the rules PyTorch's
`key_averages()` uses (docs/format/pytorch.md §G9; torch/autograd/profiler_util.py):

- host events are `cpu_op`, `cuda_runtime` and `cuda_driver` slices that start inside the
  measured region ([ProfilerStep#N.ts, ts + dur], or every event without a step);
- they nest per (pid, tid), sorted by (start, -end), popping the stack top while the event starts
  at or after its end or ends after it; self = total - the totals of the direct children;
- a parent whose only child has its own name absorbs it (`_remove_dup_nodes`): one call;
- device work (kernel, gpu_memcpy, gpu_memset; cuda_sync is a wait, not work) belongs to the
  innermost non-runtime host event enclosing the runtime call with its `correlation`; device
  total = own work + the children's totals.

Timestamps are read with Python's Decimal (exact fractional µs), not with the tool's parser, and
nothing here calls candle-graph's code except the CLI whose output is checked.
"""

import gzip
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

import pytest

CG = os.environ.get("CG_BINARY", "build/candle-graph")
FIXTURES = os.environ.get("CG_SHARED_FIXTURE_DIR", "../shared/fixtures")
KINETO = os.path.join(FIXTURES, "pytorch-chrome-trace")

HOST_CATS = {"cpu_op", "cuda_runtime", "cuda_driver"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver"}
WORK_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)["traceEvents"]


def ns(us):
    return int(Decimal(us) * 1000)


def region_of(events, step):
    if step is None:
        return None
    for e in events:
        if e.get("ph") == "X" and e.get("name") == f"ProfilerStep#{step}":
            return ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
    raise AssertionError(f"no ProfilerStep#{step}")


def inside(region, t):
    return region is None or region[0] <= t <= region[1]


def host_events(events, region):
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in HOST_CATS:
            continue
        start = ns(e["ts"])
        if inside(region, start):
            out.append({"name": e["name"], "cat": e["cat"], "start": start,
                        "end": start + ns(e["dur"]), "lane": (e.get("pid"), e.get("tid")),
                        "corr": (e.get("args") or {}).get("correlation"),
                        "children": [], "parent": None, "work": 0})
    return out


def nest(hosts):
    by_lane = defaultdict(list)
    for h in hosts:
        by_lane[h["lane"]].append(h)
    for lane in by_lane.values():
        lane.sort(key=lambda h: (h["start"], -h["end"]))
        stack = []
        for h in lane:
            while stack and (h["start"] >= stack[-1]["end"] or h["end"] > stack[-1]["end"]):
                stack.pop()
            if stack:
                h["parent"] = stack[-1]
                stack[-1]["children"].append(h)
            stack.append(h)


def attach_device_work(events, hosts, region):
    calls = {h["corr"]: h for h in hosts if h["cat"] in RUNTIME_CATS and h["corr"] is not None}
    launch_ts = {}
    for e in events:  # every launch call of the file, to tell which work belongs to the region
        if e.get("ph") == "X" and e.get("cat") in RUNTIME_CATS:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch_ts.setdefault(corr, ns(e["ts"]))
    total = unattributed = 0
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in WORK_CATS:
            continue
        corr = (e.get("args") or {}).get("correlation")
        if not inside(region, launch_ts.get(corr, ns(e["ts"]))):
            continue
        dur = ns(e["dur"])
        total += dur
        op = calls[corr]["parent"] if corr in calls else None
        while op is not None and op["cat"] in RUNTIME_CATS:
            op = op["parent"]
        if op is None:
            unattributed += dur
        else:
            op["work"] += dur
    return total, unattributed


def device_total(h):
    return h["work"] + sum(device_total(c) for c in h["children"])


def key_averages(hosts):
    rows = defaultdict(lambda: {"calls": 0, "host_self_ns": 0, "host_total_ns": 0,
                                "device_self_ns": 0, "device_total_ns": 0})
    for h in hosts:
        top = h
        while (top["parent"] is not None and len(top["parent"]["children"]) == 1
               and top["parent"]["name"] == top["name"]):
            top = top["parent"]  # _remove_dup_nodes: h's row is its same-named ancestor's
        row = rows[top["name"]]
        total = h["end"] - h["start"]
        row["host_self_ns"] += total - sum(c["end"] - c["start"] for c in h["children"])
        row["device_self_ns"] += h["work"]
        if top is h:
            row["calls"] += 1
            row["host_total_ns"] += total
            row["device_total_ns"] += device_total(h)
    return rows


def query(path, kind, step):
    args = [CG, "query", path, "--kind", kind, "--limit", "1000000"]
    if step is not None:
        args += ["--step", str(step)]
    r = subprocess.run(args, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["result"]


DLRM = "ranks-param-dlrm-8rank-v100"

# Every Kineto fixture, with the ProfilerStep measured (None: the whole window; these have no
# steps). The other reference tests of this folder run over the same list.
CASES = [
    ("hta-tracediff-control-a100-nccl-6steps.json.gz", 1012),  # gzip, NCCL on its own stream
    ("hta-tracediff-test-v100-nccl-6steps.json.gz", 1010),  # the same job on V100s
    ("hta-minitoy-train-mi250-rocm6.2.json", 1),  # ROCm: hip* launches, fractional µs
    ("hta-simple_add-a100.json", None),  # cuda_sync rows: waits, not busy time
    ("hta-alexnet-a100-2streams.json.gz", None),  # two streams
    ("hta-event-sync-multistream-a100.json.gz", None),  # three streams, event syncs
    ("hta-cuda-event-sync-a100.json", None),
    ("hta-triton-culaunchkernel-a100.json.gz", None),  # cuLaunchKernel: cuda_driver rows
    ("hta-sampled-rank0-of128-nccl.json.gz", 552),  # two sampled ranks of 128
    ("hta-sampled-rank1-of128-nccl.json.gz", 552),
] + [(f"{DLRM}/{name}", 10) for name in sorted(os.listdir(os.path.join(KINETO, DLRM)))]


@pytest.mark.parametrize("name,step", CASES)
def test_op_table_matches_key_averages(name, step):
    path = os.path.join(KINETO, name)
    events = load_events(path)
    region = region_of(events, step)
    hosts = host_events(events, region)
    nest(hosts)
    device_ns, unattributed = attach_device_work(events, hosts, region)
    expected = key_averages(hosts)

    result = query(path, "ops", step)
    got = {item["name"]: {k: v for k, v in item.items() if k != "name"} for item in result["items"]}
    assert result["total_items"] == len(expected)
    for op_name, row in expected.items():
        assert got.get(op_name) == row, op_name
    assert result["device_ns"] == device_ns
    assert result["unattributed_device_ns"] == unattributed
    # The sums add up: every device ns is some op's own or unattributed.
    assert sum(r["device_self_ns"] for r in got.values()) + unattributed == device_ns
    # Ordered by host self time, descending.
    selfs = [item["host_self_ns"] for item in result["items"]]
    assert selfs == sorted(selfs, reverse=True)


@pytest.mark.parametrize("name,step", CASES)
def test_kernel_table_is_the_device_work_of_the_region(name, step):
    path = os.path.join(KINETO, name)
    events = load_events(path)
    region = region_of(events, step)
    launch_ts = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in RUNTIME_CATS:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch_ts.setdefault(corr, ns(e["ts"]))
    per_name = defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in WORK_CATS:
            continue
        corr = (e.get("args") or {}).get("correlation")
        if inside(region, launch_ts.get(corr, ns(e["ts"]))):
            per_name[e["name"]].append(ns(e["dur"]))
    result = query(path, "kernels", step)
    got = {item["raw_name"]: item for item in result["items"]}
    assert set(got) == set(per_name)
    for raw, durs in per_name.items():
        item = got[raw]
        assert (item["calls"], item["total_ns"], item["min_ns"], item["max_ns"]) == (
            len(durs), sum(durs), min(durs), max(durs)), raw
    totals = [item["total_ns"] for item in result["items"]]
    assert totals == sorted(totals, reverse=True)


def test_mangled_kernel_names_are_demangled_for_display(tmp_path):
    # The fixtures' kernels are named already; cuDNN's often are not. c++filt is the reference
    # demangler; the raw name stays in raw_name, and a name that is not mangled stays as it is.
    mangled = "_ZN5cudnn6detail10bn_fw_tr_1EiPKfPf"
    plain = "void at::native::vectorized_elementwise_kernel<4>(int)"
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::batch_norm", "pid": 1, "tid": 1, "ts": 10,
         "dur": 50},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 20, "dur": 5, "args": {"correlation": 7}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 30, "dur": 5, "args": {"correlation": 8}},
        {"ph": "X", "cat": "kernel", "name": mangled, "pid": 0, "tid": 7, "ts": 40, "dur": 12,
         "args": {"correlation": 7, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": plain, "pid": 0, "tid": 7, "ts": 60, "dur": 3,
         "args": {"correlation": 8, "device": 0, "stream": 7}},
    ]
    path = tmp_path / "mangled.json"
    path.write_text(json.dumps({"traceEvents": events}))
    items = {i["raw_name"]: i for i in query(str(path), "kernels", None)["items"]}
    want = subprocess.run(["c++filt", mangled], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert want != mangled
    assert items[mangled]["name"] == want
    assert items[plain]["name"] == plain
    # Host and device apart: the op owns both kernels' 15 µs of device time.
    ops = {i["name"]: i for i in query(str(path), "ops", None)["items"]}
    assert ops["aten::batch_norm"]["device_self_ns"] == 15000
    assert ops["cudaLaunchKernel"]["device_self_ns"] == 0
    assert mangled not in ops


def test_report_states_device_time_and_steps_as_the_queries_do(tmp_path):
    # The report's GPU from the trace and Profiler steps sections, parsed back, against query's JSON.
    path = os.path.join(KINETO, "hta-tracediff-control-a100-nccl-6steps.json.gz")
    md = tmp_path / "report.md"
    r = subprocess.run([CG, "report", path, "--json", str(tmp_path / "e.json"), "--markdown",
                        str(md)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    text = md.read_text()
    device = text.split("\n## GPU from the trace\n", 1)[1].split("\n## ", 1)[0]
    kernel_table = device.split("| Kernel |", 1)[1]
    rows = [line for line in kernel_table.splitlines() if line.startswith("| `")]
    top = query(path, "kernels", None)["items"][0]
    assert rows[0].split(" | ")[0] == "| `" + top["name"] + "`"
    assert rows[0].split(" | ")[3] == str(top["calls"])
    steps = text.split("\n## Profiler steps\n", 1)[1].split("\n## ", 1)[0]
    listed = [line.split(" | ")[0].strip("| ").split(" ")[0] for line in steps.splitlines()
              if line[:3] == "| 1"]
    want = query(path, "steps", None)
    assert listed == [str(s["step"]) for s in want["steps"]]
    assert f"`ProfilerStep#{want['chosen']}`" in steps
    # Kineto's own step events, read here: six ProfilerStep#N, the last one measured by default.
    events = load_events(path)
    numbers = sorted(int(e["name"].split("#")[1]) for e in events
                     if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    assert [s["step"] for s in want["steps"]] == numbers and want["chosen"] == numbers[-1]
    for s in want["steps"]:
        begin, end = region_of(events, s["step"])
        assert s["wall_ns"] == end - begin


def test_lossy_sources_get_typed_health_codes_with_counts(tmp_path):
    # Built here so each defect is known: on thread 1 aten::b starts inside aten::a and ends
    # after it (one partial overlap); one kernel's correlation (99) has no runtime call; one
    # kernel, launched in the step [0, 100] µs, runs until 130 µs (aten::b ends at 80: inside).
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
         "ts": 0, "dur": 100},
        {"ph": "X", "cat": "cpu_op", "name": "aten::a", "pid": 1, "tid": 1, "ts": 10, "dur": 40},
        {"ph": "X", "cat": "cpu_op", "name": "aten::b", "pid": 1, "tid": 1, "ts": 30, "dur": 50},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 12, "dur": 4, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "k_late", "pid": 0, "tid": 7, "ts": 90, "dur": 40,
         "args": {"correlation": 1, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "kernel", "name": "k_orphan", "pid": 0, "tid": 7, "ts": 20, "dur": 5,
         "args": {"correlation": 99, "device": 0, "stream": 7}},
    ]
    path = tmp_path / "lossy.json"
    path.write_text(json.dumps({"traceEvents": events}))
    r = subprocess.run([CG, "validate", str(path)], capture_output=True, text=True, check=False)
    issues = {i["code"]: i["message"] for i in json.loads(r.stdout)["health"]["issues"]}
    assert issues["host_nesting_broken"].startswith("1 host op starts")
    assert issues["device_ops_without_launch"].startswith("1 device operation has")
    assert issues["events_outside_window"].startswith("1 op or device operation")
    # The orphan's 5 µs are unattributed, never lost; the late kernel is aten::a's.
    ops = query(str(path), "ops", None)
    assert ops["unattributed_device_ns"] == 5000
    assert {i["name"]: i["device_self_ns"] for i in ops["items"]}["aten::a"] == 40000


def host_pids(events):
    """The pids of the host ops (Kineto's cpu_op rows), each once, in the file's order: read here
    from the JSON, the way anyone opening the file in Perfetto sees its processes."""
    seen = []
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and "pid" in e and e["pid"] not in seen:
            seen.append(e["pid"])
    return seen


def validate(path):
    r = subprocess.run([CG, "validate", str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return {i["code"]: i["message"] for i in json.loads(r.stdout)["health"]["issues"]}


def concatenate_traces(paths, out):
    """The Kineto traces at `paths` (plain JSON) as one file `out`: the first trace with every
    other trace's events appended, what a user does to see several ranks side by side in
    Perfetto. Returns the written document."""
    docs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            docs.append(json.load(f))
    for doc in docs[1:]:
        docs[0]["traceEvents"] += doc["traceEvents"]
    out.write_text(json.dumps(docs[0]))
    return docs[0]


@pytest.mark.parametrize("name", [name for name, _ in CASES])
def test_only_a_file_of_several_processes_is_called_merged(name):
    # Every fixture is one process's trace (the triton one has its ProfilerStep, a user
    # annotation, under another pid: no host op there); none may be called merged.
    path = os.path.join(KINETO, name)
    assert len(host_pids(load_events(path))) == 1
    assert "processes_merged" not in validate(path)


def test_two_ranks_merged_into_one_file_are_untrusted_and_named(tmp_path):
    # What a user does to see two ranks side by side in Perfetto: concatenate their events. Each
    # rank numbers its own ProfilerStep#10 and correlation ids, so one measurement of the file
    # would mix them.
    ranks = sorted(os.listdir(os.path.join(KINETO, DLRM)))[:2]
    path = tmp_path / "merged.json"
    merged = concatenate_traces([os.path.join(KINETO, DLRM, r) for r in ranks], path)
    pids = host_pids(merged["traceEvents"])
    assert len(pids) == 2
    expected = "pids " + ", ".join(str(p) for p in pids) + ")"
    assert expected in validate(path)["processes_merged"]
    r = subprocess.run([CG, "summary", str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 1 and r.stdout == "" and expected in r.stderr
    assert r.stderr.startswith(f"error: {path}: trace is structurally untrusted: ")
    # The verdict travels with the trace: the conversion keeps the list, and its reader says so.
    converted = tmp_path / "merged.jsonl"
    subprocess.run([CG, "convert", str(path), "-o", str(converted)], check=True,
                   capture_output=True)
    assert expected in validate(converted)["processes_merged"]


def test_the_processes_named_are_bounded(tmp_path):
    # 70 integer pids, then two string ones: the message shows the first eight in the file's
    # order; 64 distinct pids are tracked, so the rest are "more than" 64 - 8.
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": pid, "tid": 1,
               "ts": pid * 10, "dur": 5} for pid in range(100, 170)]
    events += [{"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": "x" * 65, "tid": 2,
                "ts": 5, "dur": 1}]
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"traceEvents": events}))
    message = validate(path)["processes_merged"]
    assert "(pids " + ", ".join(str(p) for p in range(100, 108)) + " and more than 56 more)" \
        in message
    # Two processes, one named by a long string: its length stands for it.
    path.write_text(json.dumps({"traceEvents": events[:1] + events[-1:]}))
    assert "(pids 100, a string of 65 bytes)" in validate(path)["processes_merged"]


def test_legacy_profiler_pids_are_labels_not_processes(tmp_path):
    # The legacy profiler labels its rows "CPU functions", and PyTorch up to 1.7 wrote the kernels
    # it saw as rows labelled "CUDA functions" (names with "::", read as ops): one process.
    events = [
        {"name": "aten::mm", "ph": "X", "ts": 10, "dur": 50, "tid": 1, "pid": "CPU functions",
         "args": {}},
        {"name": "void at::native::gemm_kernel<float>", "ph": "X", "ts": 20, "dur": 30, "tid": 0,
         "pid": "CUDA functions", "args": {}},
    ]
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps(events))
    assert "processes_merged" not in validate(path)


def step_walls(events):
    return [ns(e["dur"]) for e in events
            if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")]


def lower_median(values):
    return sorted(values)[(len(values) - 1) // 2]


TRACEDIFF_A100 = os.path.join(KINETO, "hta-tracediff-control-a100-nccl-6steps.json.gz")
TRACEDIFF_V100 = os.path.join(KINETO, "hta-tracediff-test-v100-nccl-6steps.json.gz")


def run_compare(tmp_path, *args):
    """`compare ARGS -o FILE`, which must succeed; its JSON."""
    out = tmp_path / "c.json"
    r = subprocess.run([CG, "compare", *args, "-o", str(out)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def steps_and_their_ops(events):
    """The host ProfilerStep#N slices as (N, begin, end) in ns, by N, and how many cpu_op slices
    start inside each."""
    steps = sorted((int(e["name"].split("#")[1]), ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
                   for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                   and e.get("name", "").startswith("ProfilerStep#"))
    starts = [ns(e["ts"]) for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    return steps, [sum(1 for t in starts if b <= t <= end) for _, b, end in steps]


@pytest.mark.parametrize("name", [name for name, step in CASES if step is not None])
@pytest.mark.parametrize("requested", [False, True])
def test_step_statistics_leave_out_a_last_step_cut_short(name, requested, tmp_path):
    # The steps' figures, worked out here from the file's host ProfilerStep#N slices: the last
    # step counts as cut short by the profiler's stop when fewer than half as many cpu_op slices
    # start inside it as in the step before it (docs/compatibility.md, ProfilerStep#N), and is
    # then left out of the median the measured step is judged against. The MI250 trace's second
    # step is 49 µs long after a 9.3 ms first: judged against both, the measured step read
    # "+18827.5%, not typical". The same with the first step measured on request (`--step`).
    path = os.path.join(KINETO, name)
    events = load_events(path)
    steps, ops = steps_and_their_ops(events)
    cut = len(steps) >= 2 and ops[-1] * 2 < ops[-2]
    kept = steps[:-1] if cut else steps
    measured = steps[0][0] if requested else kept[-1][0]
    walls = [end - b for _, b, end in kept]
    median = lower_median(walls)
    chosen = next(end - b for n, b, end in steps if n == measured)
    result = query(path, "steps", measured if requested else None)
    assert result["chosen"] == measured
    got = result["statistics"]
    assert got["left_out_step"] == (steps[-1][0] if cut else None)
    assert got["count"] == len(kept)
    assert (got["median_wall_ns"], got["min_wall_ns"], got["max_wall_ns"]) == (
        median, min(walls), max(walls))
    percent = (chosen - median) * 100 / median
    assert got["chosen_vs_median_percent"] == pytest.approx(percent, rel=1e-9, abs=1e-9)
    assert got["chosen_typical"] == (abs(percent) <= got["typical_within_percent"])
    md = tmp_path / "report.md"
    r = subprocess.run([CG, "report", path, "--json", str(tmp_path / "e.json"), "--markdown",
                        str(md)] + (["--step", str(measured)] if requested else []),
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    section = md.read_text().split("\n## Profiler steps\n", 1)[1].split("\n## ", 1)[0]
    assert ("cut short" in section) == cut
    if name.startswith("hta-minitoy"):
        assert cut and got["left_out_step"] == 2, "the fixture this test was written for"


def test_steps_as_runs_leave_out_a_last_step_cut_short(tmp_path):
    # The MI250 trace's two steps, read here: the second has fewer than half the first's cpu_op
    # slices (the profiler's stop cut it short), so only the first is a run of each side.
    path = os.path.join(KINETO, "hta-minitoy-train-mi250-rocm6.2.json")
    events = load_events(path)
    steps, ops = steps_and_their_ops(events)
    assert len(steps) == 2 and ops[1] * 2 < ops[0]
    c = run_compare(tmp_path, path, path, "--steps-as-runs")
    for side in ("baseline_runs", "candidate_runs"):
        assert [x["measured_total_ns"] for x in c[side]] == [steps[0][2] - steps[0][1]]
        assert c[side][0]["source"].endswith(f"ProfilerStep#{steps[0][0]}")


def gpu_of(path):
    """(`cuda:N`, model) of a Kineto trace: the lowest GPU index its kernels ran on, and the
    name its top-level deviceProperties give that index."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        trace = json.load(f)
    index = min(e["args"]["device"] for e in trace["traceEvents"] if e.get("cat") == "kernel")
    names = [d["name"] for d in trace["deviceProperties"] if d["id"] == index]
    assert len(names) == 1
    return f"cuda:{index}", names[0]


def test_compare_uses_each_traces_steps_as_its_runs(tmp_path):
    # Two 6-step traces of one job (A100 control, V100 test): every step is a run of its side, so
    # one trace per side gives an answer with an interval. The means are the steps' own
    # durations, read from the files here.
    a, b = TRACEDIFF_A100, TRACEDIFF_V100
    c = run_compare(tmp_path, a, b, "--steps-as-runs")
    assert c["schema"] == "candle-graph/comparison/2"
    wa, wb = step_walls(load_events(a)), step_walls(load_events(b))
    assert len(c["baseline_runs"]) == len(wa) == 6 and len(c["candidate_runs"]) == len(wb) == 6
    mt = c["measured_total"]
    assert mt["baseline_mean_ns"] == pytest.approx(sum(wa) / len(wa), rel=1e-12)
    assert mt["candidate_mean_ns"] == pytest.approx(sum(wb) / len(wb), rel=1e-12)
    low, high = mt["interval_ns"]["low"], mt["interval_ns"]["high"]
    assert low <= mt["delta_ns"] <= high
    # Every V100 step is slower than every A100 step: the interval lies above zero.
    assert min(wb) > max(wa) and low > 0
    # But the GPUs differ (their models read from deviceProperties): not a like-for-like
    # comparison, so not eligible, and no verdict.
    (_, model_a), (_, model_b) = gpu_of(a), gpu_of(b)
    assert model_a != model_b
    reasons = c["eligibility"]["reasons"]
    assert not c["eligibility"]["eligible"] and len(reasons) == 1, reasons
    assert reasons[0]["code"] == "identity_conditions_differ"
    assert reasons[0]["message"].startswith(
        f"device model differs: `{model_a}` in "), reasons[0]["message"]
    assert f"vs `{model_b}` in " in reasons[0]["message"]
    assert c["verdict"] == "inconclusive"


def test_ranks_of_one_job_on_alike_gpus_are_comparable(tmp_path):
    # The DLRM job's ranks ran on different GPU indices of alike machines (deviceProperties, read
    # here): two ranks compare, the indices only warn; as cohorts, the ranks agree on the device.
    ranks = sorted(os.path.join(KINETO, DLRM, f) for f in os.listdir(os.path.join(KINETO, DLRM)))
    gpus = [gpu_of(r) for r in ranks]
    assert len({g[0] for g in gpus}) == len(ranks) == 8, "the fixture this test was written for"
    assert len({g[1] for g in gpus}) == 1
    c = run_compare(tmp_path, ranks[0], ranks[1])
    assert c["comparable"], c["warnings"]
    assert (f"device index not compared: `{gpus[0][0]}` vs `{gpus[1][0]}` are both "
            f"`{gpus[0][1]}`") in c["warnings"], c["warnings"]
    c = run_compare(tmp_path, "--baseline", *ranks[:4], "--candidate", *ranks[4:])
    codes = {r["code"] for r in c["eligibility"]["reasons"]}
    assert codes == {"insufficient_runs"}, c["eligibility"]  # four runs a side, nothing else
    # GPUs of different models are not comparable; the message names both.
    a, b = TRACEDIFF_A100, TRACEDIFF_V100
    c = run_compare(tmp_path, a, b)
    (index_a, model_a), (index_b, model_b) = gpu_of(a), gpu_of(b)
    assert not c["comparable"]
    assert (f"device differs: `{index_a} ({model_a})` vs `{index_b} ({model_b})`"
            in c["warnings"]), c["warnings"]


def test_the_report_names_the_gpu_model(tmp_path):
    # The model read from deviceProperties here, beside the device it belongs to; a trace
    # without deviceProperties (the sampled NCCL rank) has no such line.
    for name, named in ((TRACEDIFF_V100, True),
                        (os.path.join(KINETO, "hta-sampled-rank0-of128-nccl.json.gz"), False)):
        md = tmp_path / "report.md"
        r = subprocess.run([CG, "report", name, "--markdown", str(md), "--headline"],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
        lines = md.read_text().splitlines()
        device = [i for i, line in enumerate(lines) if line.startswith("- Device: ")]
        assert len(device) == 1
        if named:
            index, model = gpu_of(name)
            assert lines[device[0]] == f"- Device: `{index}`"
            assert lines[device[0] + 1] == f"- GPU model: `{model}`"
            assert f" on {index} ({model})" in r.stdout.splitlines()[0], r.stdout
        else:
            assert not any(line.startswith("- GPU model:") for line in lines)
            device_text = lines[device[0]][len("- Device: `"):-1]
            assert re.search(rf" on {re.escape(device_text)}( \(\d+ health warnings?,|$)",
                             r.stdout.splitlines()[0]), r.stdout


def top_annotations_per_step(events):
    """Per ProfilerStep#N slice in time order, {name: [durations in ns]} of the user annotations
    directly inside it (inside the step and in no other annotation of the step)."""
    ann = [e for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    steps = sorted((e for e in ann if e["name"].startswith("ProfilerStep#")),
                   key=lambda e: ns(e["ts"]))
    out = []
    for step in steps:
        b, end = ns(step["ts"]), ns(step["ts"]) + ns(step["dur"])
        inner = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in ann
                 if not e["name"].startswith("ProfilerStep#")
                 and b <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= end]
        top = defaultdict(list)
        for i, (s0, s1, name) in enumerate(inner):
            if not any(j != i and o0 <= s0 and s1 <= o1 and o1 - o0 > s1 - s0
                       for j, (o0, o1, _) in enumerate(inner)):
                top[name].append(s1 - s0)
        out.append(top)
    return out


def span_path(key):
    """The path of a comparison key `PATH [kind]` or `PATH [kind]/Step`."""
    return key.rsplit(" [", 1)[0]


def test_a_trace_compared_with_itself_under_another_name_matches_every_span(tmp_path):
    # Kineto names its files after a host, a pid and a time, and the converter names the root
    # after the file: the same trace under two names must still meet itself span for span.
    src = TRACEDIFF_A100
    before, after = tmp_path / "before.json.gz", tmp_path / "after.json.gz"
    for copy in (before, after):
        copy.write_bytes(open(src, "rb").read())
    c = run_compare(tmp_path, str(before), str(after))
    assert c["comparable"], c["warnings"]
    assert c["total_delta_ns"] == 0
    assert any("`before`" in w and "`after`" in w for w in c["warnings"]), c["warnings"]
    assert not any(w.startswith("entrypoint differs") for w in c["warnings"])
    assert c["spans"]
    for s in c["spans"]:
        assert s["baseline_count"] == s["candidate_count"] > 0, s
        assert s["delta_ns"] == 0, s
        assert not s["name"].startswith(("before", "after")) and "ProfilerStep#" not in s["name"]
    # The measured step is one of the file's steps, its wall read from the JSON.
    step = [s for s in c["spans"] if s["name"] == "ProfilerStep [function]"]
    assert len(step) == 1 and step[0]["baseline_total_ns"] in step_walls(load_events(src))


def test_steps_as_runs_meet_each_span_in_every_step_of_both_traces(tmp_path):
    # A100 control against V100 test, six steps each: every annotation directly inside every
    # step is one key with six runs a side, its means the annotation's durations read from the
    # JSON (here: no annotation is repeated inside a step).
    a, b = TRACEDIFF_A100, TRACEDIFF_V100
    c = run_compare(tmp_path, a, b, "--steps-as-runs")
    by_path = {span_path(s["name"]): s for s in c["spans"]}
    ta, tb = top_annotations_per_step(load_events(a)), top_annotations_per_step(load_events(b))
    assert len(ta) == len(tb) == 6
    names = set.intersection(*(set(t) for t in ta + tb))
    assert len(names) >= 5, "the fixtures this test was written for"
    for name in names:
        got = by_path[f"ProfilerStep/{name}"]
        assert got["baseline_runs_with"] == got["candidate_runs_with"] == 6, got
        for side, steps in (("baseline", ta), ("candidate", tb)):
            durations = [d for t in steps for d in t[name]]
            assert len(durations) == 6
            assert got[f"{side}_mean_ns"] == pytest.approx(sum(durations) / 6, rel=1e-12)
    walls = {"baseline": step_walls(load_events(a)), "candidate": step_walls(load_events(b))}
    step = by_path["ProfilerStep"]
    for side, w in walls.items():
        assert step[f"{side}_runs_with"] == 6
        assert step[f"{side}_mean_ns"] == pytest.approx(sum(w) / len(w), rel=1e-12)


def test_cohorts_of_profiler_traces_named_after_their_files_are_eligible(tmp_path):
    # Five copies a side of one trace, each under its own name, recorded in its `traceName` as
    # Kineto does: the names differ, the workload does not. Every run measures the same step,
    # whose wall is read from the JSON.
    src = os.path.join(KINETO, "hta-minitoy-train-mi250-rocm6.2.json")
    text = open(src, encoding="utf-8").read()
    old_name = '"traceName": "./logs/mi250_minitoy_train_ROCm6_2_kineto.json"'
    assert text.count(old_name) == 1, "the fixture this test was written for"
    runs = {"baseline": [], "candidate": []}
    for side, paths in runs.items():
        for i in range(5):
            p = tmp_path / f"{side}_host_{4000 + i}.{1700000000000 + i}.pt.trace.json"
            p.write_text(text.replace(old_name, json.dumps("traceName") + ": " +
                                      json.dumps(str(p))), encoding="utf-8")
            paths.append(str(p))
    c = run_compare(tmp_path, "--baseline", *runs["baseline"], "--candidate", *runs["candidate"])
    assert c["eligibility"] == {"eligible": True, "reasons": []}, c["eligibility"]
    steps, _ = steps_and_their_ops(load_events(src))
    walls = [end - b for _, b, end in steps]
    step = [s for s in c["spans"] if s["name"] == "ProfilerStep [function]"]
    assert len(step) == 1
    assert step[0]["baseline_runs_with"] == step[0]["candidate_runs_with"] == 5
    assert step[0]["baseline_mean_ns"] in walls and step[0]["delta_ns"] == 0
    # The candidates converted with every step as their region measured something else.
    for p in runs["candidate"]:
        r = subprocess.run([CG, "convert", p, "--step", "all", "-q", "-o", p + ".jsonl"],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
    c = run_compare(tmp_path, "--baseline", *runs["baseline"],
                    "--candidate", *[p + ".jsonl" for p in runs["candidate"]])
    reasons = c["eligibility"]["reasons"]
    assert not c["eligibility"]["eligible"] and len(reasons) == 1, reasons
    assert reasons[0]["code"] == "identity_conditions_differ"
    assert reasons[0]["message"].startswith(
        "measured region differs: `ProfilerStep` in "), reasons[0]["message"]


def test_step_all_measures_every_event(tmp_path):
    # --step all: every host event of the file, in one region (the reference of the tables above
    # with no region).
    path = os.path.join(KINETO, "hta-minitoy-train-mi250-rocm6.2.json")
    events = load_events(path)
    hosts = host_events(events, None)
    nest(hosts)
    device_ns, unattributed = attach_device_work(events, hosts, None)
    expected = key_averages(hosts)
    result = query(path, "ops", "all")
    got = {i["name"]: {k: v for k, v in i.items() if k != "name"} for i in result["items"]}
    assert got == dict(expected)
    assert result["device_ns"] == device_ns and result["unattributed_device_ns"] == unattributed


def test_sql_op_stats_are_inclusive_and_exclusive_per_event(tmp_path):
    # op_stats groups every host event by name (no key_averages merge): total = Σ inclusive,
    # self = Σ exclusive, from the reference nesting above; read through the sqlite3 shell.
    path = os.path.join(KINETO, "hta-minitoy-train-mi250-rocm6.2.json")
    events = load_events(path)
    hosts = host_events(events, region_of(events, 1))
    nest(hosts)
    want = defaultdict(lambda: [0, 0, 0])
    for h in hosts:
        total = h["end"] - h["start"]
        w = want[h["name"]]
        w[0] += 1
        w[1] += total
        w[2] += total - sum(c["end"] - c["start"] for c in h["children"])
    db = tmp_path / "o.db"
    subprocess.run([CG, "export", path, "--format", "sqlite", "-o", str(db)], check=True,
                   capture_output=True)
    out = subprocess.run(["sqlite3", "-separator", "|", str(db),
                          "SELECT name, calls, total_ns, self_ns FROM op_stats"],
                         capture_output=True, text=True, check=True).stdout
    got = {line.split("|")[0]: [int(v) for v in line.split("|")[1:]] for line in out.splitlines()}
    assert got == dict(want)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
