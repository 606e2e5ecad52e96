"""`candle-graph ranks` on real and generated rank sets against a reference computation.

The expected numbers are computed here from the raw Kineto JSON (timestamps read with Decimal,
so exact to the ns) with the rules docs/ranks.md states, written out again independently of the
C++ code:

- a rank's collectives are its communication kernels (the names gpu_analysis_reference_test.py
  classifies as COMMUNICATION) whose launch lies in the measured step, grouped by the kernel name
  up to its parameter list and ordered by start; the k-th call of a name on each rank is one
  collective (names on every rank, up to the smallest count); where record_param_comms names the
  collective, its process group and sequence number (newer PyTorch), one (group, name, seq) is
  one collective on the ranks that have it;
- clock offset of a rank = the lower median over the matched collectives of (its end − rank 0's
  end); residual = the largest |end − offset − rank 0's end|;
- per collective, on the aligned clock: skew = latest − earliest start; the rank with the latest
  start (the lowest rank on a tie) arrived last and imposed Σ (its start − each other's start);
- stragglers: ranks that were last at least once, by times last then imposed wait, descending;
- per step: slowest rank by wall time, spread = max − lower median;
- estimate: the measured step of the slowest rank minus, for every collective the top straggler
  was last at, (its start − the next-latest start).

The per-rank GPU numbers are compared with `candle-graph query FILE --kind gpu`, an independent
path through the CLI, and the exposed communication with its own interval computation here.
"""

import copy
import gzip
import json
import os
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "device"))
from gpu_analysis_reference_test import length, merged, overlap, work_class  # noqa: E402
from key_averages_reference_test import (  # noqa: E402
    CG, KINETO, RUNTIME_CATS, WORK_CATS, concatenate_traces, host_pids, inside, ns, query,
    region_of)

DLRM = os.path.join(KINETO, "ranks-param-dlrm-8rank-v100")
STEP = 10


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def run_ranks(*args):
    r = subprocess.run([CG, "ranks", *args], capture_output=True, text=True, check=False)
    return r


def ranks_json(*args):
    r = run_ranks(*args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def lower_median(values):
    values = sorted(values)
    return values[(len(values) - 1) // 2]


# ---- the reference ------------------------------------------------------------------------------

def device_work_in_region(events, region):
    launch = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in RUNTIME_CATS:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch.setdefault(corr, ns(e["ts"]))
    out = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in WORK_CATS:
            continue
        corr = (e.get("args") or {}).get("correlation")
        if inside(region, launch.get(corr, ns(e["ts"]))):
            out.append(e)
    return out


def rank_reference(doc):
    events = doc["traceEvents"]
    region = region_of(events, STEP)
    work = device_work_in_region(events, region)
    calls = defaultdict(list)
    for e in work:
        if e["cat"] == "kernel" and work_class(e) == "COMMUNICATION":
            start = ns(e["ts"])
            calls[e["name"].split("(")[0]].append((start, start + ns(e["dur"])))
    for c in calls.values():
        c.sort(key=lambda se: se[0])
    iv = lambda es: merged([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in es])  # noqa: E731
    comm = iv([e for e in work if work_class(e) == "COMMUNICATION"])
    compute = iv([e for e in work if work_class(e) == "COMPUTATION"])
    return {
        "rank": doc["distributedInfo"]["rank"],
        "wall": region[1] - region[0],
        "calls": calls,
        "exposed": length(comm) - overlap(comm, compute),
    }


def cross_rank_reference(per_rank):
    per_rank = sorted(per_rank, key=lambda r: r["rank"])
    names = sorted(set.intersection(*(set(r["calls"]) for r in per_rank)))
    matched = []  # (name, [(start, end) per rank])
    for name in names:
        n = min(len(r["calls"][name]) for r in per_rank)
        matched += [(name, [r["calls"][name][k] for r in per_rank]) for k in range(n)]
    offsets, residuals = [], []
    for i in range(len(per_rank)):
        diffs = [calls[i][1] - calls[0][1] for _, calls in matched]
        off = lower_median(diffs)
        offsets.append(off)
        residuals.append(max(abs(d - off) for d in diffs))
    skews = defaultdict(list)
    last_count = defaultdict(int)
    imposed = defaultdict(int)
    behind_next = defaultdict(int)
    for name, calls in matched:
        starts = [calls[i][0] - offsets[i] for i in range(len(calls))]
        latest = max(starts)
        last = starts.index(latest)  # the first maximum: the lowest rank on a tie
        skews[name].append(latest - min(starts))
        last_count[last] += 1
        imposed[last] += sum(latest - s for i, s in enumerate(starts) if i != last)
        behind_next[last] += latest - max(s for i, s in enumerate(starts) if i != last)
    stragglers = sorted(
        ({"rank": per_rank[i]["rank"], "times_last": last_count[i],
          "imposed_wait_ns": imposed[i]} for i in last_count),
        key=lambda s: (-s["times_last"], -s["imposed_wait_ns"], s["rank"]))
    walls = [r["wall"] for r in per_rank]
    top = stragglers[0]["rank"]
    measured = max(walls)
    saved = behind_next[[r["rank"] for r in per_rank].index(top)]
    return {
        "clock": [{"rank": r["rank"], "offset_ns": offsets[i], "residual_ns": residuals[i]}
                  for i, r in enumerate(per_rank)],
        "collectives": [{"name": n, "process_group": "", "count": len(skews[n]),
                         "mean_skew_ns": sum(skews[n]) // len(skews[n]),
                         "max_skew_ns": max(skews[n])} for n in names],
        "stragglers": stragglers,
        "step": {"step": STEP, "ranks": len(walls), "max_wall_ns": max(walls),
                 "slowest_rank": per_rank[walls.index(max(walls))]["rank"],
                 "median_wall_ns": lower_median(walls),
                 "spread_ns": max(walls) - lower_median(walls)},
        "estimate": {"straggler": top, "measured_ns": measured, "saved_ns": saved,
                     "estimated_ns": measured - min(saved, measured)},
    }


def dlrm_files():
    return sorted(os.path.join(DLRM, f) for f in os.listdir(DLRM) if f.endswith(".json"))


@pytest.fixture(scope="module")
def dlrm():
    return ranks_json(DLRM, "-j", "2")


# ---- the real 8-rank run ------------------------------------------------------------------------

def test_per_rank_gpu_time_equals_query_gpu(dlrm):
    assert [r["rank"] for r in dlrm["ranks"]] == list(range(8))
    for r in dlrm["ranks"]:
        devices = query(r["file"], "gpu", None)["devices"]
        assert len(devices) == 1, r["file"]
        d = devices[0]
        for key in ("busy_ns", "compute_ns", "communication_ns", "idle_ns"):
            assert r[key] == d[key], (r["rank"], key)
        assert r["comm_compute_overlap"] == d["comm_compute_overlap"]
        assert r["world_size"] == 8 and r["backend"] == "nccl"
        assert r["rank_from"] == "distributedInfo"


def test_exposed_communication_and_collective_times_equal_the_reference(dlrm):
    for r in dlrm["ranks"]:
        ref = rank_reference(load(r["file"]))
        assert r["exposed_communication_ns"] == ref["exposed"], r["rank"]
        got = {c["name"]: (c["count"], c["total_ns"]) for c in r["collectives"]}
        want = {n: (len(c), sum(e - s for s, e in c)) for n, c in ref["calls"].items()}
        assert got == want, r["rank"]
        assert r["steps"] == [{"cut_short": False, "step": STEP, "wall_ns": ref["wall"]}]


def test_stragglers_skews_and_clocks_equal_the_reference(dlrm):
    ref = cross_rank_reference([rank_reference(load(f)) for f in dlrm_files()])
    assert dlrm["health"] == []
    assert dlrm["stragglers"] == ref["stragglers"]
    assert dlrm["collectives"] == ref["collectives"]
    assert dlrm["clock"] == ref["clock"]
    assert dlrm["steps"] == [ref["step"]]
    assert dlrm["estimate"] == ref["estimate"]
    top = ref["stragglers"][0]
    assert any(f.startswith(f"rank {top['rank']} arrived last at {top['times_last']} of 8 ")
               for f in dlrm["findings"])


def test_one_thread_and_two_threads_write_the_same_bytes(tmp_path):
    one = run_ranks(DLRM, "-j", "1", "--markdown", str(tmp_path / "one.md"))
    two = run_ranks(*dlrm_files()[::-1], "-j", "2", "--markdown", str(tmp_path / "two.md"))
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    assert one.stdout.replace(DLRM + "/", "") == two.stdout.replace(DLRM + "/", "")
    assert (tmp_path / "one.md").read_text() == (tmp_path / "two.md").read_text()


# ---- a generated run: one rank late by a known amount, on a clock offset by a known constant -----

LATE_US = 100        # the straggler's NCCL kernels start this much later (and end as before)
CLOCK_US = 2_500_000  # and its whole trace is on a clock this far ahead
WORLD = 4
STRAGGLER = 3


def write_rank(doc, path, rank, world=WORLD):
    d = copy.deepcopy(doc)
    d.setdefault("distributedInfo", {}).update(
        {"backend": "nccl", "rank": rank, "world_size": world})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(d, f)
    return path


def straggler_doc(doc):
    d = copy.deepcopy(doc)
    for e in d["traceEvents"]:
        if e.get("cat") == "kernel" and work_class(e) == "COMMUNICATION":
            # Arrives late, but the collective still ends when everyone's ends (it waited less).
            assert e["dur"] > LATE_US
            e["ts"] += LATE_US
            e["dur"] -= LATE_US
        if "ts" in e:
            e["ts"] += CLOCK_US
    return d


@pytest.fixture(scope="module")
def rank0_doc():
    # Plain floats are exact here: every ts and dur of these files is an integer of µs.
    with open(dlrm_files()[0], encoding="utf-8") as f:
        return json.load(f)


def test_an_injected_straggler_and_clock_offset_are_recovered(tmp_path, rank0_doc):
    # File names without any rank: the rank must come from distributedInfo.
    for r, name in enumerate("abcd"):
        doc = straggler_doc(rank0_doc) if r == STRAGGLER else rank0_doc
        write_rank(doc, tmp_path / f"copy-{name}.json", r)
    out = ranks_json(str(tmp_path), "-j", "2")
    calls = sum(len(c) for c in rank_reference(rank0_doc)["calls"].values())
    assert calls == 8
    assert out["health"] == []
    assert out["stragglers"] == [{"rank": STRAGGLER, "times_last": calls,
                                  "imposed_wait_ns": calls * (WORLD - 1) * LATE_US * 1000}]
    for c in out["collectives"]:
        assert c["max_skew_ns"] == c["mean_skew_ns"] == LATE_US * 1000, c
    assert out["clock"] == [{"rank": r, "offset_ns": CLOCK_US * 1000 if r == STRAGGLER else 0,
                             "residual_ns": 0} for r in range(WORLD)]
    assert out["estimate"]["saved_ns"] == calls * LATE_US * 1000


# ---- a run whose record_param_comms name the collective, its process group and sequence number ----

def with_collective_args(doc, drop_first=False):
    """Newer PyTorch's arguments on the record_param_comms around each NCCL launch (the 2023
    fixture predates them): `Collective name`, `Process Group Name` "0" and `Seq`, numbered in
    launch order, and the kernels renamed as NCCL ≥ 2.19 names them (`ncclDevKernel_*`). With
    drop_first, the first NCCL kernel is gone, as if the window missed it."""
    d = copy.deepcopy(doc)
    events = d["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel"
                      and work_class(e) == "COMMUNICATION"), key=lambda e: e["ts"])
    launch = {e["args"]["correlation"]: e for e in events
              if e.get("cat") in RUNTIME_CATS and "correlation" in (e.get("args") or {})}
    comms = [e for e in events if e.get("name") == "record_param_comms"]
    for seq, k in enumerate(kernels):
        call = launch[k["args"]["correlation"]]
        around = [c for c in comms if c["tid"] == call["tid"]
                  and c["ts"] <= call["ts"] and call["ts"] + call["dur"] <= c["ts"] + c["dur"]]
        assert len(around) == 1, k["name"]
        around[0]["args"].update({
            "Collective name": "allreduce" if "AllReduce" in k["name"] else "all_to_all",
            "Process Group Name": "0", "Seq": seq})
    for k in kernels:
        k["name"] = k["name"].replace("ncclKernel_", "ncclDevKernel_")
    if drop_first:
        events.remove(kernels[0])
    return d, ["allreduce" if "AllReduce" in k["name"] else "all_to_all" for k in kernels]


def test_collectives_match_by_sequence_number_not_by_order(tmp_path, rank0_doc):
    # The straggler's window missed its first NCCL kernel (an all_to_all). By order, its k-th
    # all_to_all would be paired with everyone's k-th, one call off; by Seq, every remaining call
    # pairs with its own, so each is exactly LATE_US late and the clocks come out exact.
    plain, names = with_collective_args(rank0_doc)
    late, _ = with_collective_args(straggler_doc(rank0_doc), drop_first=True)
    for r in range(WORLD):
        write_rank(late if r == STRAGGLER else plain, tmp_path / f"rank{r}.json", r)
    out = ranks_json(str(tmp_path))
    matched = len(names) - 1
    assert health_codes(out) == ["collective_seq_unmatched"]
    assert out["health"][0]["message"].startswith(
        f"{names[0]} (process group 0): 1 of {names.count(names[0])} sequence numbers")
    assert out["stragglers"] == [{"rank": STRAGGLER, "times_last": matched,
                                  "imposed_wait_ns": matched * (WORLD - 1) * LATE_US * 1000}]
    assert [(c["name"], c["process_group"], c["count"]) for c in out["collectives"]] == sorted(
        (n, "0", names.count(n) - (n == names[0])) for n in set(names))
    for c in out["collectives"]:
        assert c["max_skew_ns"] == c["mean_skew_ns"] == LATE_US * 1000, c
    assert out["clock"] == [{"rank": r, "offset_ns": CLOCK_US * 1000 if r == STRAGGLER else 0,
                             "residual_ns": 0} for r in range(WORLD)]
    # The identity survives `convert`: the straggler as trace/6 gives the same document.
    src = tmp_path / f"rank{STRAGGLER}.json"
    r = subprocess.run([CG, "convert", str(src), "-o", str(tmp_path / "late.jsonl")],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    os.remove(src)
    again = ranks_json(str(tmp_path))
    for key in ("health", "stragglers", "collectives", "clock"):
        assert again[key] == out[key], key
    # Without the sequence numbers the same set falls back to order, and says the counts differ.
    os.remove(tmp_path / "late.jsonl")
    for doc in (late, plain):
        for e in doc["traceEvents"]:
            (e.get("args") or {}).pop("Seq", None)
    write_rank(late, src, STRAGGLER)
    for r in range(STRAGGLER):
        write_rank(plain, tmp_path / f"rank{r}.json", r)
    assert "collective_count_mismatch" in health_codes(ranks_json(str(tmp_path)))


def collective_ops(path):
    """(op name, collective, process group, seq) of every trace/6 op with a collective, read
    with json."""
    with open(path, encoding="utf-8") as f:
        ops = [json.loads(line) for line in f if line.strip()]
    return sorted((o["op_name"], o["collective"], o.get("process_group"), o.get("collective_seq"))
                  for o in ops if o.get("kind") == "op" and "collective" in o)


def test_collective_identity_survives_a_chrome_round_trip(tmp_path, rank0_doc):
    # convert → export --format chrome → convert: the ops keep their collective, group and Seq,
    # which are the ones with_collective_args put on record_param_comms (one per NCCL kernel).
    doc, names = with_collective_args(rank0_doc)
    src = write_rank(doc, tmp_path / "rank0.json", 0)
    first, chrome, second = (tmp_path / n for n in ("a.jsonl", "a.chrome.json", "b.jsonl"))
    for args in (["convert", src, "-o", first], ["export", first, "--format", "chrome", "-o",
                                                  chrome], ["convert", chrome, "-o", second]):
        r = subprocess.run([CG, *map(str, args)], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
    expected = sorted(("record_param_comms", n, "0", seq) for seq, n in enumerate(names))
    assert collective_ops(first) == expected
    assert collective_ops(second) == expected


# ---- untrusted ranks ----------------------------------------------------------------------------

def test_every_real_rank_is_one_process_and_trusted(dlrm):
    # Each file's cpu_op rows carry one pid (read from the JSON here): none is untrusted.
    assert all(len(host_pids(load(f)["traceEvents"])) == 1 for f in dlrm_files())
    assert [r["untrusted"] for r in dlrm["ranks"]] == [None] * 8
    assert "rank_untrusted" not in health_codes(dlrm)


def merge_first_two_ranks(directory):
    """Ranks 0 and 1 of the real run concatenated into one file (what users do to see two ranks
    side by side in Perfetto), beside ranks 2..7 linked as they are. Returns the merged file."""
    files = dlrm_files()
    merged = directory / "worker0_and_1.json"
    concatenate_traces(files[:2], merged)
    for f in files[2:]:
        os.symlink(f, directory / os.path.basename(f))
    return merged


def test_a_rank_whose_trace_is_untrusted_is_named_and_the_run_goes_on(tmp_path):
    merged = merge_first_two_ranks(tmp_path)
    out = ranks_json(str(tmp_path))
    found = [h["message"] for h in out["health"] if h["code"] == "rank_untrusted"]
    assert len(found) == 1
    assert found[0].startswith(f"rank 0 ({merged}): its trace is untrusted")
    by_rank = {r["rank"]: r for r in out["ranks"]}
    assert sorted(by_rank) == [0] + list(range(2, 8))
    # Why: the merged file's cpu_op rows name both ranks' processes, counted here.
    pids = sorted(host_pids(json.loads(merged.read_text())["traceEvents"]))
    assert len(pids) == 2
    assert by_rank[0]["untrusted"].startswith("processes_merged: ")
    assert all(str(p) in by_rank[0]["untrusted"] for p in pids)
    assert all(by_rank[r]["untrusted"] is None for r in range(2, 8))
    # What it would have hidden: both ranks' ProfilerStep#10 counted as this rank's steps.
    assert [s["step"] for s in by_rank[0]["steps"]] == [STEP, STEP]
    md = tmp_path / "out" / "ranks.md"
    assert run_ranks(str(tmp_path), "-o", os.devnull, "--markdown", str(md)).returncode == 0
    text = md.read_text()
    assert "`rank_untrusted`: rank 0" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    marked = [line.split(" | ")[0][2:] for line in rows if "(untrusted)" in line.split(" | ")[0]]
    assert marked == ["0 (untrusted)"], rows


def test_a_last_step_cut_short_is_listed_but_not_spread(tmp_path):
    # Two copies of the MI250 trace make a run of two ranks (the rank from the file name). Its
    # last step is cut short when it holds fewer than half the cpu_op rows of the step before
    # (the importer's rule, docs/format/trace6.md §4.2.1), applied here to the raw JSON.
    src = os.path.join(KINETO, "hta-minitoy-train-mi250-rocm6.2.json")
    for r in (0, 1):
        os.symlink(src, tmp_path / f"rank-{r}.json")
    events = load(src)["traceEvents"]
    steps = sorted((int(e["name"].split("#")[1]), ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
                   for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                   and e.get("name", "").startswith("ProfilerStep#"))
    starts = [ns(e["ts"]) for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    ops = [sum(1 for t in starts if b <= t <= end) for _, b, end in steps]
    cut = len(steps) > 1 and 2 * ops[-1] < ops[-2]
    assert cut, "the fixture's last step is cut short"
    want = [{"cut_short": i == len(steps) - 1, "step": n, "wall_ns": end - b}
            for i, (n, b, end) in enumerate(steps)]
    out = ranks_json(str(tmp_path))
    assert [r["steps"] for r in out["ranks"]] == [want, want]
    # The spreads and their findings leave the cut step out; the other steps are there.
    assert [s["step"] for s in out["steps"]] == [n for n, _, _ in steps[:-1]]
    assert not any(f.startswith(f"step {steps[-1][0]}:") for f in out["findings"])


def gpu_of(doc):
    """(`cuda:N`, model) of a rank: its kernels' lowest device index and that GPU's name in
    deviceProperties."""
    index = min(e["args"]["device"] for e in doc["traceEvents"] if e.get("cat") == "kernel")
    names = [d["name"] for d in doc["deviceProperties"] if d["id"] == index]
    assert len(names) == 1
    return f"cuda:{index}", names[0]


def test_each_rank_names_its_device_and_gpu_model(dlrm):
    # Read from each rank's own JSON; one model for all, so no finding about models.
    for r, path in zip(dlrm["ranks"], dlrm_files()):
        with open(path, encoding="utf-8") as f:
            assert (r["device"], r["gpu_model"]) == gpu_of(json.load(f))
    assert not any("GPU models" in f for f in dlrm["findings"])


def test_ranks_on_different_gpu_models_are_a_finding(tmp_path, rank0_doc):
    # Four copies of rank 0, two of them given another model in deviceProperties (every entry
    # renamed, so whichever GPU the trace ran on).
    _, model = gpu_of(rank0_doc)
    other = copy.deepcopy(rank0_doc)
    for d in other["deviceProperties"]:
        d["name"] = "NVIDIA A100-SXM4-40GB"
    for r in range(WORLD):
        write_rank(other if r in (1, 3) else rank0_doc, tmp_path / f"t{r}.json", r)
    out = ranks_json(str(tmp_path))
    assert [r["gpu_model"] for r in out["ranks"]] == [model, "NVIDIA A100-SXM4-40GB"] * 2
    models = [f for f in out["findings"] if "GPU models" in f]
    assert models == [
        f"the ranks ran on 2 GPU models: `NVIDIA A100-SXM4-40GB` (ranks 1, 3), `{model}` "
        "(ranks 0, 2); their times differ by the hardware as well as by the work (rule: the "
        "model each trace names, Kineto's deviceProperties)"], out["findings"]
    # A rank summary carries both fields, and the run read from the summaries says the same.
    summaries = []
    for r in range(WORLD):
        summary = tmp_path / f"s{r}.json"
        got = run_ranks("--map", str(tmp_path / f"t{r}.json"), "-o", str(summary))
        assert got.returncode == 0, got.stderr
        summaries.append(str(summary))
    assert ranks_json("--reduce", *summaries)["findings"] == out["findings"]


# ---- bad sets -----------------------------------------------------------------------------------

def health_codes(out):
    return [h["code"] for h in out["health"]]


def test_a_duplicate_rank_is_reported_and_the_first_file_kept(tmp_path, rank0_doc):
    for r, name in ((0, "a"), (1, "b"), (1, "c")):
        write_rank(rank0_doc, tmp_path / f"{name}.json", r, world=2)
    out = ranks_json(str(tmp_path))
    assert health_codes(out) == ["duplicate_rank"]
    assert str(tmp_path / "c.json") in out["health"][0]["message"]
    assert [r["file"] for r in out["ranks"]] == [str(tmp_path / "a.json"), str(tmp_path / "b.json")]


def test_a_missing_rank_of_the_world_is_reported(tmp_path, rank0_doc):
    for r in (0, 1, 3):
        write_rank(rank0_doc, tmp_path / f"t{r}.json", r)
    out = ranks_json(str(tmp_path))
    assert health_codes(out) == ["missing_ranks"]
    assert out["health"][0]["message"].endswith("1 of 4 ranks have no trace: 2")
    assert len(out["ranks"]) == 3 and out["clock"]  # the run goes on with what is there


def test_mixed_world_sizes_and_steps_are_different_runs(tmp_path, rank0_doc):
    write_rank(rank0_doc, tmp_path / "a.json", 0, world=2)
    write_rank(rank0_doc, tmp_path / "b.json", 1, world=4)
    other_step = copy.deepcopy(rank0_doc)
    for e in other_step["traceEvents"]:
        if e.get("name") == f"ProfilerStep#{STEP}":
            e["name"] = f"ProfilerStep#{STEP + 1}"
    write_rank(other_step, tmp_path / "c.json", 2, world=2)
    out = ranks_json(str(tmp_path))
    assert health_codes(out) == ["world_size_mismatch", "step_mismatch"]


def with_pg_config(doc, groups):
    d = copy.deepcopy(doc)
    d["distributedInfo"]["pg_config"] = [
        {"pg_name": name, "pg_desc": desc, "backend_config": "cuda:nccl", "pg_size": len(ranks),
         "ranks": ranks} for name, desc, ranks in groups]
    return d


def test_process_groups_configured_differently_are_different_runs(tmp_path, rank0_doc):
    # Newer PyTorch lists the process groups in distributedInfo.pg_config. Ranks 0 and 1 share a
    # subgroup "1" that rank 2 does not list (normal); rank 3 lists the default group "0" with
    # other members: a different run, named as such. Without rank 3 nothing is reported.
    world = ("0", "default_pg", list(range(WORLD)))
    sub = ("1", "undefined", [0, 1])
    for r in range(WORLD):
        groups = [world, sub] if r < 2 else [world]
        if r == 3:
            groups = [("0", "default_pg", [0, 1, 2, 4])]
        d = with_pg_config(rank0_doc, groups)
        write_rank(d, tmp_path / f"r{r}.json", r)
    out = ranks_json(str(tmp_path))
    assert health_codes(out) == ["process_group_mismatch"]
    msg = out["health"][0]["message"]
    assert "process group 0 is configured 2 ways" in msg and "ranks 3" in msg, msg
    assert json.loads(out["ranks"][0]["process_groups"]["1"])["ranks"] == [0, 1]
    os.remove(tmp_path / "r3.json")
    out = ranks_json(str(tmp_path))
    assert health_codes(out) == ["missing_ranks"], out["health"]
    # The summaries carry the groups: map then reduce finds the same mismatch.
    write_rank(with_pg_config(rank0_doc, [("0", "default_pg", [0, 1, 2, 4])]),
               tmp_path / "r3.json", 3)
    summaries = []
    for r in range(WORLD):
        s = tmp_path / f"r{r}.summary.json"
        assert run_ranks("--map", str(tmp_path / f"r{r}.json"), "-o", str(s)).returncode == 0
        summaries.append(str(s))
    assert health_codes(ranks_json("--reduce", *summaries)) == ["process_group_mismatch"]


def test_a_rank_from_the_file_name_and_a_trace6_rank(tmp_path, rank0_doc):
    no_info = copy.deepcopy(rank0_doc)
    del no_info["distributedInfo"]
    with open(tmp_path / "job_rank-1.json", "w", encoding="utf-8") as f:
        json.dump(no_info, f)
    write_rank(rank0_doc, tmp_path / "kineto.json", 0, world=3)
    # Rank 2 as trace/6: `convert` keeps the source.* tags, so it is still rank 2 on its clock.
    src = write_rank(rank0_doc, tmp_path / "rank2-kineto.json.tmp", 2, world=3)
    r = subprocess.run([CG, "convert", str(src), "-o", str(tmp_path / "r2.jsonl")],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    os.remove(src)
    out = ranks_json(str(tmp_path))
    assert [(r["rank"], r["rank_from"]) for r in out["ranks"]] == [
        (0, "distributedInfo"), (1, "file name"), (2, "distributedInfo")]
    # Rank 1 states no world size; the others' 3 holds, and ranks 0, 1 and 2 are all here.
    assert health_codes(out) == []
    assert [c["rank"] for c in out["clock"]] == [0, 1, 2]
    assert all(c["offset_ns"] == 0 and c["residual_ns"] == 0 for c in out["clock"])


def test_a_file_with_no_rank_anywhere_is_an_error_naming_it(tmp_path, rank0_doc):
    no_info = copy.deepcopy(rank0_doc)
    del no_info["distributedInfo"]
    with open(tmp_path / "trace.json", "w", encoding="utf-8") as f:
        json.dump(no_info, f)
    write_rank(rank0_doc, tmp_path / "other.json", 0)
    r = run_ranks(str(tmp_path))
    assert r.returncode == 1
    assert str(tmp_path / "trace.json") in r.stderr and "no rank" in r.stderr
    assert r.stdout == ""


def test_a_malformed_rank_file_is_an_error_naming_it(tmp_path, rank0_doc):
    write_rank(rank0_doc, tmp_path / "a.json", 0)
    text = (tmp_path / "a.json").read_text()
    (tmp_path / "rank_1.json").write_text(text[: len(text) // 2])
    r = run_ranks(str(tmp_path), "-j", "2")
    assert r.returncode == 1
    assert str(tmp_path / "rank_1.json") in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_usage_errors_exit_2(tmp_path):
    assert run_ranks(DLRM, "-j", "0").returncode == 2
    assert run_ranks(DLRM, "--step", "ten").returncode == 2
    r = run_ranks(dlrm_files()[0], "-o", dlrm_files()[0])
    assert r.returncode == 2 and "refusing" in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_ranks(str(empty))
    assert r.returncode == 1 and str(empty) in r.stderr


def test_html_is_refused_over_an_input_or_another_output(tmp_path):
    r = run_ranks(DLRM, "--html", dlrm_files()[0])
    assert r.returncode == 2 and "refusing" in r.stderr
    same = tmp_path / "ranks.out"
    r = run_ranks(DLRM, "-o", str(same), "--html", str(same))
    assert r.returncode == 2 and "different files" in r.stderr
    assert not same.exists()
    r = run_ranks(DLRM, "--html", "-")  # the JSON goes to stdout already
    assert r.returncode == 2 and "different files" in r.stderr and r.stdout == ""


def test_html_embeds_the_json_document_and_leaves_no_temporary_file(tmp_path):
    # The page's numbers are checked in chromium (viewer/tests/browser_ranks_test.mjs); here: the
    # payload is the -o document itself, and the write leaves only the two outputs behind.
    out, page = tmp_path / "ranks.json", tmp_path / "ranks.html"
    r = run_ranks(DLRM, "-j", "2", "-o", str(out), "--html", str(page))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranks.html", "ranks.json"]
    html = page.read_text(encoding="utf-8")
    start = html.index('<script id="cg-payload" type="application/json">') + len(
        '<script id="cg-payload" type="application/json">'
    )
    embedded = json.loads(html[start : html.index("</script>", start)])
    assert embedded == json.loads(out.read_text(encoding="utf-8"))


def test_two_gzip_ranks_of_a_128_rank_job(tmp_path):
    # HTA's sampled pair (SOURCES.md: ranks 0 and 1 of world_size 128, ProfilerStep#551 and
    # #552, 10 ncclKernel_SendRecv per rank). Their SendRecv calls are point to point between
    # other pairs too, so the matched ends disagree: the residual must say so, not hide it.
    pair = [os.path.join(KINETO, f"hta-sampled-rank{r}-of128-nccl.json.gz") for r in (0, 1)]
    out = ranks_json(*pair, "--step", "all", "--markdown", str(tmp_path / "r.md"))
    assert health_codes(out) == ["missing_ranks", "clock_residual_high"]
    assert out["health"][0]["message"].startswith("126 of 128 ranks have no trace: 2, 3, ")
    assert [s["step"] for s in out["steps"]] == [551, 552]
    # Neither step is cut short (the step statistics test of key_averages_reference_test.py
    # applies the rule to this fixture), so both are in the spreads.
    assert [r["steps"] for r in out["ranks"]][0] == [
        {"cut_short": False, "step": s["step"], "wall_ns": w} for s, w in
        zip(out["steps"], [ns(e["dur"]) for e in load(pair[0])["traceEvents"]
                           if e.get("name", "").startswith("ProfilerStep#")])]
    assert [c["count"] for r in out["ranks"] for c in r["collectives"]] == [10, 10]
    assert (tmp_path / "r.md").read_text().startswith("# Ranks\n")


# ---- one rank's own page, on demand ---------------------------------------------------------------

def test_a_rank_page_is_the_page_report_writes_for_that_rank(tmp_path):
    # The page of rank 2 must be the very viewer `report --html` writes for rank 2's file (same
    # step), and only the ranks asked for get one.
    pages = tmp_path / "pages"
    out = ranks_json(DLRM, "--rank-pages", str(pages), "--rank-pages-for", "2")
    assert [(p["rank"], p["file"], p["href"]) for p in out["rank_pages"]] == [
        (2, str(pages / "rank-2.html"), None)]  # no --html page to link from
    assert sorted(os.listdir(pages)) == ["rank-2.html"]
    rank2 = next(r["file"] for r in out["ranks"] if r["rank"] == 2)
    r = subprocess.run([CG, "report", rank2, "--json", str(tmp_path / "e.json"), "--markdown",
                        str(tmp_path / "e.md"), "--html", str(tmp_path / "e.html")],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert (pages / "rank-2.html").read_bytes() == (tmp_path / "e.html").read_bytes()


def test_rank_page_usage_errors_write_nothing(tmp_path):
    pages = tmp_path / "pages"
    r = run_ranks(DLRM, "--rank-pages", str(pages), "--rank-pages-for", "9")
    assert r.returncode == 2 and "rank 9" in r.stderr and not pages.exists()
    r = run_ranks(DLRM, "--rank-pages-for", "1")  # without --rank-pages
    assert r.returncode == 2
    r = run_ranks(DLRM, "--rank-pages", str(pages), "--html", str(pages / "rank-0.html"))
    assert r.returncode == 2 and "rank page" in r.stderr
    assert not (pages / "rank-0.html").exists()


# ---- many ranks in one SQLite database ------------------------------------------------------------

def sqlite3_shell(db, sql):
    r = subprocess.run(["sqlite3", "-batch", "-noheader", str(db), sql], capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_many_ranks_in_one_database_carry_their_rank_in_every_table(tmp_path):
    # All 8 DLRM ranks exported into one database, read back with the sqlite3 shell: every row of
    # every table that has rows states its run's rank, the ranks are distributedInfo's (read here
    # from the JSON), and each rank's rows are exactly those of that rank's file exported alone.
    db = tmp_path / "ranks.db"
    files = dlrm_files()
    r = subprocess.run([CG, "export", *files, "--format", "sqlite", "-o", str(db)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    want = {load(f)["distributedInfo"]["rank"]: f for f in files}
    assert sorted(map(int, sqlite3_shell(db, "SELECT rank FROM runs"))) == sorted(want)
    tables = sqlite3_shell(db, "SELECT name FROM sqlite_master WHERE type = 'table' "
                               "AND name NOT IN ('schema', 'peak_allocations')")
    assert len(tables) > 15
    for t in tables:
        assert sqlite3_shell(db, f"SELECT COUNT(*) FROM {t} WHERE rank IS NULL") == ["0"], t
    # peak_allocations has its own `rank` (the allocation's place by size): the run's is there
    # `process_rank`.
    assert sqlite3_shell(db, "SELECT COUNT(*) FROM peak_allocations WHERE process_rank IS NULL"
                         ) == ["0"]
    alone = tmp_path / "rank5.db"
    r = subprocess.run([CG, "export", want[5], "--format", "sqlite", "-o", str(alone)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    for t in ("ops", "kernels", "spans", "gpu_streams"):
        n = sqlite3_shell(alone, f"SELECT COUNT(*) FROM {t}")
        assert sqlite3_shell(db, f"SELECT COUNT(*) FROM {t} WHERE rank = 5") == n, t
        assert int(n[0]) > 0, t
