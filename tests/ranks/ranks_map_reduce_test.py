"""`candle-graph ranks --map` / `--reduce`, the cluster fan-out of a local `ranks` run.

The contract (docs/ranks.md): mapping every rank's trace to a candle-graph/rank-summary/1 and
reducing the summaries, in any order, writes byte for byte the candle-graph/ranks/1 (and the
Markdown) the local run over the same files writes. A summary is untrusted input: anything
wrong in it is exit 1 with the file named, never a crash.
"""

import json
import os
import random
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "device"))
from key_averages_reference_test import concatenate_traces  # noqa: E402

CG = os.environ.get("CG_BINARY", "build/candle-graph")
FIXTURES = os.environ.get("CG_SHARED_FIXTURE_DIR", "../shared/fixtures")
DLRM = os.path.join(FIXTURES, "pytorch-chrome-trace", "ranks-param-dlrm-8rank-v100")


def cg(*args):
    return subprocess.run([CG, "ranks", *args], capture_output=True, text=True, check=False)


def ok(*args):
    r = cg(*args)
    assert r.returncode == 0, r.stderr
    return r


def traces():
    return sorted(os.path.join(DLRM, n) for n in os.listdir(DLRM) if n.endswith(".json"))


def read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    """The local run's JSON and Markdown, and one summary per rank."""
    if not os.path.isdir(DLRM):
        pytest.skip(f"fixture {DLRM} not present")
    out = tmp_path_factory.mktemp("ranks")
    ok(DLRM, "-o", str(out / "local.json"), "--markdown", str(out / "local.md"))
    summaries = []
    for i, trace in enumerate(traces()):
        s = out / f"rank{i}.summary.json"
        ok("--map", trace, "-o", str(s))
        summaries.append(str(s))
    return out, summaries


def test_the_fixture_is_eight_ranks(mapped):
    _, summaries = mapped
    assert len(summaries) == 8
    assert len(json.loads(read(str(mapped[0] / "local.json")))["ranks"]) == 8


@pytest.mark.parametrize("order", ["sorted", "shuffled", "reversed"])
def test_reduce_is_byte_identical_to_the_local_run(mapped, order):
    out, summaries = mapped
    files = list(summaries)
    if order == "shuffled":
        random.Random(7).shuffle(files)
        assert files != summaries
    elif order == "reversed":
        files.reverse()
    j, md = out / f"reduced-{order}.json", out / f"reduced-{order}.md"
    ok("--reduce", *files, "-o", str(j), "--markdown", str(md))
    assert read(str(j)) == read(str(out / "local.json"))
    assert read(str(md)) == read(str(out / "local.md"))


def test_reduce_reads_the_summary_not_the_trace(mapped, tmp_path):
    # Guards the identity test against a reduce that re-reads the traces the summaries name.
    _, summaries = mapped
    doc = json.loads(read(summaries[3]))
    doc["busy_ns"] += 1
    edited = tmp_path / "rank3.summary.json"
    edited.write_text(json.dumps(doc))
    r = ok("--reduce", *summaries[:3], str(edited), *summaries[4:])
    rank3 = json.loads(r.stdout)["ranks"][3]
    assert rank3["busy_ns"] == doc["busy_ns"]


def test_summary_schema_sorted_keys_and_no_derived_numbers(mapped):
    _, summaries = mapped
    text = read(summaries[0]).decode()

    def sorted_keys(pairs):
        keys = [k for k, _ in pairs]
        assert keys == sorted(keys), keys
        return dict(pairs)

    doc = json.loads(text, object_pairs_hook=sorted_keys)
    assert doc["schema"] == "candle-graph/rank-summary/1"
    assert doc["rank"] == 0 and doc["world_size"] == 8
    assert doc["collectives"], "the DLRM run has collectives"
    for c in doc["collectives"]:
        # The 2023 DLRM traces record no process group or sequence number: pairs, empty group.
        assert set(c) == {"calls", "name", "process_group"} and c["process_group"] == ""
        assert all(len(call) == 2 and call[0] <= call[1] for call in c["calls"])
    assert "comm_compute_overlap" not in doc  # derived at reduce time


def test_map_takes_one_trace_file(tmp_path):
    assert cg("--map", DLRM).returncode == 2
    assert cg("--map", *traces()[:2]).returncode == 2


@pytest.mark.parametrize("flags", [["--step", "10"], ["-j", "2"], ["--map"]])
def test_reduce_usage_errors(mapped, flags):
    assert cg("--reduce", *flags, mapped[1][0]).returncode == 2


def test_output_over_a_summary_is_refused(mapped):
    _, summaries = mapped
    before = read(summaries[0])
    assert cg("--reduce", *summaries, "-o", summaries[0]).returncode == 2
    assert read(summaries[0]) == before


# ---- hostile summaries ------------------------------------------------------------------------

def edit(doc, path, value):
    """`doc` with the value at `path` (keys and indices) replaced, or removed for DELETE."""
    doc = json.loads(json.dumps(doc))
    target = doc
    for k in path[:-1]:
        target = target[k]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(doc)


DELETE = object()
HOSTILE = {
    "wrong_schema": (["schema"], "candle-graph/ranks/1", "schema"),
    "future_schema": (["schema"], "candle-graph/rank-summary/2", "schema"),
    "missing_field": (["busy_ns"], DELETE, "missing field busy_ns"),
    "missing_nested": (["collectives", 0, "name"], DELETE, "collectives[0].name"),
    "unknown_field": (["total_ns"], 5, "total_ns"),
    "string_for_number": (["rank"], "3", "rank"),
    "negative": (["idle_ns"], -1, "idle_ns"),
    "fraction": (["compute_ns"], 1.5, "compute_ns"),
    "beyond_u64": (["busy_ns"], 2 ** 64, "busy_ns"),
    "beyond_2_62": (["measured_ns"], 2 ** 62 + 1, "measured_ns"),
    "call_beyond_i64": (["collectives", 0, "calls", 0, 0], -(2 ** 63) - 1, "calls[0][0]"),
    "call_not_pair": (["collectives", 0, "calls", 0], [1, 2, 3, 4], "calls[0]"),
    "seq_not_integer": (["collectives", 0, "calls", 0], [1, 2, "3"], "calls[0][2]"),
    "group_not_text": (["collectives", 0, "process_group"], 7, "process_group"),
    "call_backwards": (["collectives", 0, "calls", 0], [10, 5], "ends before it starts"),
    "exposed_over_comm": (["exposed_communication_ns"], 2 ** 61, "exposed_communication_ns"),
    "bad_rank_from": (["rank_from"], "guess", "rank_from"),
    "untrusted_not_text": (["untrusted"], 1, "untrusted is not a string"),
    "cut_short_not_bool": (["steps", 0, "cut_short"], 1, "cut_short is not true or false"),
    "untrusted_empty": (["untrusted"], "", "untrusted is empty"),
    "device_not_text": (["device"], 3, "device is not a string"),
    "device_empty": (["device"], "", "device is empty"),
    "gpu_model_not_text": (["gpu_model"], 5, "gpu_model is not a string"),
    "gpu_model_empty": (["gpu_model"], "", "gpu_model is empty"),
    "gpu_model_too_long": (["gpu_model"], "x" * 257, "longer than 256 bytes"),
    "gpu_model_control": (["gpu_model"], "A100\nB", "holds a control character"),
    "not_an_object": ([], None, "not an object"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_summary_is_an_error_naming_the_file(mapped, tmp_path, case):
    _, summaries = mapped
    path, value, needle = HOSTILE[case]
    doc = json.loads(read(summaries[0]))
    bad = tmp_path / f"{case}.summary.json"
    bad.write_text("[1, 2]" if not path else edit(doc, path, value))
    r = cg("--reduce", summaries[1], str(bad))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert str(bad) in r.stderr and needle in r.stderr, r.stderr


@pytest.mark.parametrize("text", ["", "{", "1e400", "\x00\xff"])
def test_truncated_or_garbage_summary(mapped, tmp_path, text):
    _, summaries = mapped
    whole = read(summaries[0])
    bad = tmp_path / "bad.summary.json"
    bad.write_bytes(whole[: len(whole) // 2] if text == "" else text.encode("latin-1"))
    r = cg("--reduce", str(bad), summaries[1])
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert str(bad) in r.stderr and "unreadable JSON" in r.stderr, r.stderr


def test_missing_summary_file(tmp_path):
    r = cg("--reduce", str(tmp_path / "absent.summary.json"))
    assert r.returncode == 1 and "absent.summary.json" in r.stderr, r.stderr


def test_an_untrusted_rank_is_reduced_as_the_local_run_reads_it(mapped, tmp_path):
    # Ranks 0 and 1 concatenated into one file: its trace is untrusted (two processes). The
    # summary carries why, and the reduce says it as the local run does, byte for byte.
    _, summaries = mapped
    merged = tmp_path / "worker0.json"
    concatenate_traces(traces()[:2], merged)
    summary = tmp_path / "rank0.summary.json"
    ok("--map", str(merged), "-o", str(summary))
    assert json.loads(read(str(summary)))["untrusted"].startswith("processes_merged: ")
    local = ok(str(merged), *traces()[2:]).stdout
    assert ok("--reduce", str(summary), *summaries[2:]).stdout == local
    assert "rank_untrusted" in [h["code"] for h in json.loads(local)["health"]]


def test_a_summary_without_untrusted_is_read_as_trusted(mapped, tmp_path):
    # Summaries written before the field existed lack it: their traces were taken as trusted.
    out, summaries = mapped
    doc = json.loads(read(summaries[0]))
    assert doc["untrusted"] is None
    old = tmp_path / "old.summary.json"
    old.write_text(edit(doc, ["untrusted"], DELETE))
    reduced = ok("--reduce", str(old), *summaries[1:]).stdout
    assert reduced.encode() == read(str(out / "local.json"))


def test_a_summary_without_device_fields_is_read_as_not_naming_them(mapped, tmp_path):
    # Summaries written before the fields existed lack them: the run is reduced as before, the
    # rank's device and model unknown (null), every other field as the local run has it.
    out, summaries = mapped
    doc = json.loads(read(summaries[0]))
    assert doc["device"] == "cuda:0" and doc["gpu_model"], doc
    old = tmp_path / "old.summary.json"
    old.write_text(edit(json.loads(edit(doc, ["device"], DELETE)), ["gpu_model"], DELETE))
    reduced = json.loads(ok("--reduce", str(old), *summaries[1:]).stdout)
    local = json.loads(read(str(out / "local.json")))
    assert (reduced["ranks"][0]["device"], reduced["ranks"][0]["gpu_model"]) == (None, None)
    for r in (reduced, local):
        r["ranks"][0].pop("device")
        r["ranks"][0].pop("gpu_model")
    assert reduced == local


def trace6_rank(directory, rank, model):
    """tests/fixtures/device_work.jsonl (one GPU, cuda:0) as rank `rank` of two whose meta tag
    source.device_name holds `model`, written by hand as any trace/6 producer may write it."""
    fixture = os.path.join(os.path.dirname(__file__), "..", "fixtures", "device_work.jsonl")
    with open(fixture, encoding="utf-8") as f:
        lines = f.read().splitlines()
    meta = json.loads(lines[0])
    meta["tags"] = {"source.rank": str(rank), "source.world_size": "2",
                    "source.device_name": model}
    path = directory / f"rank-{rank}.jsonl"
    path.write_text("\n".join([json.dumps(meta)] + lines[1:]) + "\n")
    return str(path)


@pytest.mark.parametrize("models,named", [
    (["Tesla V100-SXM2-16GB", "Tesla V100-SXM2-16GB"], True),
    (["x" * 257, "A100\x1b[31m"], False),
    (["", "\x7f"], False),
])
def test_a_trace6_model_tag_is_named_as_a_trace_names_it(tmp_path, models, named):
    # A model tag no importer would write (over 256 bytes, control characters, empty) names no
    # model, in the local run and in its summaries alike: the reduce reads what the map wrote and
    # gives the local run's JSON byte for byte. A real model name is named by both.
    ranks = [trace6_rank(tmp_path, r, m) for r, m in enumerate(models)]
    local = ok(*ranks).stdout
    assert [r["gpu_model"] for r in json.loads(local)["ranks"]] == (models if named else
                                                                    [None, None])
    summaries = []
    for r, trace in enumerate(ranks):
        summaries.append(str(tmp_path / f"rank-{r}.summary.json"))
        ok("--map", trace, "-o", summaries[-1])
    assert ok("--reduce", *summaries).stdout == local


def test_a_step_cut_short_survives_map_and_reduce(tmp_path):
    # The MI250 trace's last step is cut short: two copies as ranks 0 and 1. The summaries keep
    # the mark, the reduce leaves the step out of the spreads as the local run does, and only the
    # last step may carry it.
    src = os.path.join(FIXTURES, "pytorch-chrome-trace", "hta-minitoy-train-mi250-rocm6.2.json")
    summaries = []
    for r in (0, 1):
        os.symlink(src, tmp_path / f"rank-{r}.json")
        s = tmp_path / f"rank-{r}.summary.json"
        ok("--map", str(tmp_path / f"rank-{r}.json"), "-o", str(s))
        summaries.append(str(s))
    doc = json.loads(read(summaries[0]))
    assert [s["cut_short"] for s in doc["steps"]] == [False, True]
    local = ok(str(tmp_path / "rank-0.json"), str(tmp_path / "rank-1.json")).stdout
    assert ok("--reduce", *summaries).stdout == local
    doc["steps"][0]["cut_short"], doc["steps"][1]["cut_short"] = True, False
    bad = tmp_path / "first-cut.summary.json"
    bad.write_text(json.dumps(doc))
    r = cg("--reduce", str(bad), summaries[1])
    assert r.returncode == 1 and str(bad) in r.stderr
    assert "only the last step can be cut short" in r.stderr, r.stderr


def test_a_rank_given_twice_keeps_the_first_as_a_local_run_does(mapped):
    _, summaries = mapped
    r = ok("--reduce", summaries[2], *summaries)
    doc = json.loads(r.stdout)
    assert [h["code"] for h in doc["health"]] == ["duplicate_rank"]
    assert len(doc["ranks"]) == 8


def test_a_huge_world_size_is_a_health_entry_not_a_hang(mapped, tmp_path):
    _, summaries = mapped
    huge = []
    for i, s in enumerate(summaries):
        doc = json.loads(read(s))
        doc["world_size"] = 2 ** 60
        huge.append(tmp_path / f"{i}.summary.json")
        huge[-1].write_text(json.dumps(doc))
    r = subprocess.run([CG, "ranks", "--reduce", *map(str, huge)], capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    missing = [h for h in json.loads(r.stdout)["health"] if h["code"] == "missing_ranks"]
    assert missing and missing[0]["message"].startswith(f"{2 ** 60 - 8} of {2 ** 60} ranks")


def test_null_world_size_and_clock_are_read_as_absent(mapped, tmp_path):
    # What --map writes for a trace/6 capture without distributedInfo or a region start.
    _, summaries = mapped
    doc = json.loads(read(summaries[5]))
    doc["world_size"] = doc["region_start_ns"] = None
    edited = tmp_path / "rank5.summary.json"
    edited.write_text(json.dumps(doc))
    r = ok("--reduce", *summaries[:5], str(edited), *summaries[6:])
    out = json.loads(r.stdout)
    assert "clock_unknown" in [h["code"] for h in out["health"]]
    assert out["ranks"][5]["world_size"] is None and out["ranks"][5]["region_start_ns"] is None
    assert 5 not in [c["rank"] for c in out["clock"]]
