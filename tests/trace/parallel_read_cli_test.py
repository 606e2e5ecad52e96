"""Reading with several threads changes nothing a command writes.

`validate`, `summary`, `import` (to a file and to stdout), `report` (and its evidence bundle) and
`export` (Chrome, gzip Chrome and SQLite) on every
trace fixture (tests/fixtures, ../shared/fixtures/pytorch-chrome-trace) and on a synth trace of
several read chunks give byte for byte the same stdout, stderr, exit code and output files with `-j 1`, `-j 2`,
CANDLE_GRAPH_THREADS=2, and `-j 3` with 61-byte chunks (CANDLE_GRAPH_TEST_CHUNK_BYTES, so chunk
boundaries fall inside lines everywhere) and the Chrome export's events and the evidence's graph
nodes, edges and memory timeline formatted in batches of 7 (CANDLE_GRAPH_TEST_EXPORT_BATCH,
CANDLE_GRAPH_TEST_JSON_BATCH, so that batches meet everywhere). The `-j 1` run is the reference: it is the
single-threaded reader the other suites check. SQLite databases are compared as `sqlite3 .dump`. With more than one thread `validate` and the
Chrome export also run two groups of health checks on threads of their own, so the same
comparison covers their issues' order and the verdict.
"""

import os
import shutil
import subprocess

import pytest

CG = os.path.abspath(os.environ.get("CG_BINARY", "build/candle-graph"))
# Absolute: each command runs in a directory of its own, where a relative path names nothing (and
# two runs that both fail to find the trace would agree).
FIXTURES = os.path.abspath(os.environ.get("CG_FIXTURE_DIR", "tests/fixtures"))
SHARED = os.path.abspath(os.environ.get("CG_SHARED_FIXTURE_DIR", "../shared/fixtures"))

# (name, argv after the input, output files the command writes in its directory)
COMMANDS = [
    ("validate", ["validate", "{trace}"], []),
    ("summary", ["summary", "{trace}"], []),
    ("import", ["import", "{trace}", "-o", "evidence.json"], ["evidence.json"]),
    ("import-stdout", ["import", "{trace}"], []),
    ("report", ["report", "{trace}", "--json", "e.json", "--markdown", "r.md", "--headline"],
     ["e.json", "r.md"]),
    ("report-bundle", ["report", "{trace}", "--bundle", "b"],
     ["b/bundle.json", "b/evidence.json", "b/report.md", "b/viewer.html", "b/trace.jsonl"]),
    ("chrome", ["export", "{trace}", "--format", "chrome", "-o", "t.json"], ["t.json"]),
    # The gzip file itself, not only its text: its compressor sees the pieces the threads cut.
    ("chrome-gz", ["export", "{trace}", "--format", "chrome", "-o", "t.json.gz"], ["t.json.gz"]),
    ("sqlite", ["export", "{trace}", "--format", "sqlite", "-o", "t.db"], ["t.db"]),
]

# (variant name, extra argv, extra environment)
VARIANTS = [
    ("j2", ["-j", "2"], {}),
    ("env2", [], {"CANDLE_GRAPH_THREADS": "2"}),
    ("j3-tiny-chunks", ["-j", "3"], {"CANDLE_GRAPH_TEST_CHUNK_BYTES": "61",
                                      "CANDLE_GRAPH_TEST_EXPORT_BATCH": "7",
                                      "CANDLE_GRAPH_TEST_JSON_BATCH": "7"}),
]


def trace6_fixtures():
    out = []
    for root, _, names in os.walk(FIXTURES):
        out += [os.path.join(root, n) for n in names if n.endswith(".jsonl")]
    return sorted(out)


def pytorch_fixtures():
    d = os.path.join(SHARED, "pytorch-chrome-trace")
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, n) for n in os.listdir(d)
                  if n.endswith(".json") or n.endswith(".json.gz"))


@pytest.fixture(scope="module")
def synth_trace(tmp_path_factory):
    """~5 MB: five of the reader's 1 MiB chunks."""
    path = tmp_path_factory.mktemp("synth") / "synth.jsonl"
    subprocess.run([CG, "synth", "--layers", "1000", "--ops-per-span", "4", "--seed", "3", "-o",
                    str(path)], check=True, capture_output=True)
    return str(path)


def run(directory, argv, env_extra):
    os.makedirs(directory, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CANDLE_GRAPH_THREADS", "CANDLE_GRAPH_TEST_CHUNK_BYTES")}
    env.update(env_extra)
    return subprocess.run([CG, *argv], cwd=directory, env=env, capture_output=True, check=False)


def outputs(directory, files):
    out = {}
    for name in files:
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            out[name] = None
        elif name.endswith(".db"):
            out[name] = subprocess.run(["sqlite3", path, ".dump"], capture_output=True,
                                       check=True).stdout
        else:
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


def check_same(tmp_path, trace, command, variants):
    name, argv, files = command
    if name == "sqlite" and shutil.which("sqlite3") is None:
        pytest.skip("no sqlite3 shell")
    argv = [a.format(trace=trace) for a in argv]
    ref_dir = str(tmp_path / f"{name}-j1")
    ref = run(ref_dir, argv + ["-j", "1"], {})
    ref_files = outputs(ref_dir, files)
    for variant, extra, env in variants:
        d = str(tmp_path / f"{name}-{variant}")
        r = run(d, argv + extra, env)
        what = f"{os.path.basename(trace)}: {name} {variant}"
        assert r.returncode == ref.returncode, what
        assert r.stdout == ref.stdout, what
        assert r.stderr == ref.stderr, what
        assert outputs(d, files) == ref_files, what


@pytest.mark.parametrize("trace", trace6_fixtures(), ids=os.path.basename)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_trace6_fixture(tmp_path, trace, command):
    check_same(tmp_path, trace, command, VARIANTS)


@pytest.mark.parametrize("trace", pytorch_fixtures(), ids=os.path.basename)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_pytorch_fixture(tmp_path, trace, command):
    check_same(tmp_path, trace, command, VARIANTS[:1])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_synth_trace(tmp_path, synth_trace, command):
    check_same(tmp_path, synth_trace, command, VARIANTS[:2])


def test_broken_trace_fails_alike(tmp_path, synth_trace):
    """The first error, and the line it names, whatever the threads and the chunks."""
    with open(synth_trace, "rb") as f:
        lines = f.read().split(b"\n")
    for at in (3, len(lines) // 2, len(lines) - 2):
        broken = tmp_path / f"broken-{at}.jsonl"
        broken.write_bytes(b"\n".join(lines[:at] + [b'{"kind":"span_end","id":'] + lines[at:]))
        check_same(tmp_path / str(at), str(broken), COMMANDS[0], VARIANTS)
        r = run(str(tmp_path), ["validate", str(broken), "-j", "2"], {})
        assert r.returncode == 1
        # The line is where the test put it (index + 1), counted here, not by the reader.
        assert f"{broken}:{at + 1}:".encode() in r.stderr, r.stderr


@pytest.mark.parametrize("bad", ["0", "-1", "two", "", "100000"])
def test_bad_thread_counts_are_usage_errors(tmp_path, bad):
    trace = trace6_fixtures()[0]
    r = run(str(tmp_path), ["validate", trace, "-j", bad], {})
    assert r.returncode == 2, r.stderr
    if bad:  # an empty variable means "not set"
        r = run(str(tmp_path), ["validate", trace], {"CANDLE_GRAPH_THREADS": bad})
        assert r.returncode == 2, r.stderr
        assert b"CANDLE_GRAPH_THREADS" in r.stderr


def test_broken_pytorch_trace_fails_alike(tmp_path):
    """A Kineto trace cut short or with a bad event: the same error with the scanner on its own
    thread as on the decoder's."""
    plain = [t for t in pytorch_fixtures() if t.endswith(".json")]
    if not plain:
        pytest.skip("no plain Kineto fixture")
    with open(plain[0], "rb") as f:
        data = f.read()
    for i, cut in enumerate((len(data) // 3, len(data) // 2, len(data) - 10)):
        broken = tmp_path / f"cut-{i}.json"
        broken.write_bytes(data[:cut])
        check_same(tmp_path / f"cut-{i}", str(broken), COMMANDS[0], VARIANTS[:1])
        bad = tmp_path / f"bad-{i}.json"
        at = data.index(b'"ts"', cut // 2)
        bad.write_bytes(data[:at] + b'"ts": [],' + data[at:])  # a value of the wrong type
        check_same(tmp_path / f"bad-{i}", str(bad), COMMANDS[0], VARIANTS[:1])
        invalid = tmp_path / f"invalid-{i}.json"
        invalid.write_bytes(data[:at] + b'"ts": nope,' + data[at:])  # JSON only simdjson rejects
        check_same(tmp_path / f"invalid-{i}", str(invalid), COMMANDS[0], VARIANTS[:1])
        r = run(str(tmp_path), ["validate", str(invalid), "-j", "2"], {})
        assert r.returncode == 1 and b"malformed JSON" in r.stderr, r.stderr
