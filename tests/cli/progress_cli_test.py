"""Progress lines on a terminal: reading, converting a PyTorch trace, analysing, rendering, writing.

A person watching a long command sees one line per step, redrawn in place (carriage returns) and
ended with a newline at 100%: `reading T: P% (a of b MiB)`, `converting T: P%`, `analysing T ...`
ended as `analysing T: done` (a step with nothing to count), likewise `rendering the viewer V` and
`rendering the report R` for the pages `report` and `view` build, `writing OUT: P%` for the Chrome
export and the evidence of `import` and `report`, `writing DB (trace tables|analysis
tables|indices): P%` for SQLite, and the database `sql` builds over traces. An error that stops a
step starts a line of its own.
They appear only when stderr is a terminal (a pseudo-terminal here, from Python's `pty`) and the
input is large (64 MiB; CANDLE_GRAPH_TEST_PROGRESS_BYTES=1 lowers that so small inputs show them);
a pipe or a small input gets none. What a line says is read back from the terminal's bytes, not
from the code that draws it.
"""

import json
import os
import pty
import re
import select
import subprocess

import pytest

CG = os.path.abspath(os.environ.get("CG_BINARY", "build/candle-graph"))
SHARED = os.path.abspath(os.environ.get("CG_SHARED_FIXTURE_DIR", "../shared/fixtures"))
SIMPLE_ADD = os.path.join(SHARED, "pytorch-chrome-trace", "hta-simple_add-a100.json")
SHOW_SMALL = {"CANDLE_GRAPH_TEST_PROGRESS_BYTES": "1"}


def run_on_terminal(args, env_extra, cwd):
    """Runs candle-graph with stderr on a pseudo-terminal; returns (exit code, stderr bytes)."""
    main, sub = pty.openpty()
    env = dict(os.environ, **env_extra)
    proc = subprocess.Popen([CG] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=sub, env=env, cwd=cwd)
    os.close(sub)
    out = b""
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            proc.kill()
            pytest.fail("no output for 60 s")
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed with the process
            chunk = b""
        if not chunk:
            break
        out += chunk
    os.close(main)
    return proc.wait(), out.decode().replace("\r\n", "\n")  # the terminal's own newline


def drawn_lines(stderr):
    """Every state a line was drawn in, in order: the text between carriage returns and newlines."""
    return [part for part in re.split(r"[\r\n]", stderr) if part]


def percents(stderr, label):
    """The percentages drawn on the line `LABEL: P%`."""
    pattern = re.compile(re.escape(label) + r": +(\d+)%")
    return [int(m.group(1)) for m in map(pattern.match, drawn_lines(stderr)) if m]


def expect_step(stderr, label):
    seen = percents(stderr, label)
    assert seen, f"no `{label}` line in {stderr!r}"
    assert seen == sorted(seen), f"`{label}` went back: {seen}"
    assert seen[-1] == 100
    # Ended once, with a newline right after 100%.
    assert len(re.findall(re.escape(label) + r": +100%[^\n]*\n", stderr)) == 1, stderr


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    trace = d / "synth.jsonl"
    subprocess.run([CG, "synth", "--layers", "300", "--ops-per-span", "4", "-o", str(trace)],
                   check=True, capture_output=True)
    return trace


def wrote_line(trace):
    """What the SQLite export prints last: its op count read from the trace's lines here."""
    with open(trace) as f:
        ops = sum(1 for line in f if '"kind":"op"' in line)
    return f"wrote t.db: 1 run, {ops} ops\n"


def test_sqlite_export_draws_reading_and_each_write_step(synth, tmp_path):
    code, err = run_on_terminal(["export", str(synth), "--format", "sqlite", "-o", "t.db"],
                                SHOW_SMALL, tmp_path)
    assert code == 0, err
    expect_step(err, f"reading {synth}")
    for step in ("trace tables", "analysis tables", "indices"):
        expect_step(err, f"writing t.db ({step})")
    # The steps come in the order they run, each line ended before the next one starts.
    order = [line.split(" (")[1].split(")")[0] for line in drawn_lines(err)
             if line.startswith("writing t.db (")]
    assert [s for i, s in enumerate(order) if i == 0 or order[i - 1] != s] == [
        "trace tables", "analysis tables", "indices"]
    assert err.endswith(wrote_line(synth)), err


def test_sqlite_export_of_several_runs_names_each_run(synth, tmp_path):
    code, err = run_on_terminal(["export", str(synth), SIMPLE_ADD, "--format", "sqlite",
                                 "-o", "t.db"], SHOW_SMALL, tmp_path)
    assert code == 0, err
    expect_step(err, "writing t.db (run 1 of 2, trace tables)")
    expect_step(err, "writing t.db (run 2 of 2, analysis tables)")
    expect_step(err, "writing t.db (indices)")


def test_sql_over_a_trace_draws_its_database_load(synth, tmp_path):
    code, err = run_on_terminal(["sql", str(synth), "SELECT COUNT(*) FROM ops"], SHOW_SMALL,
                                tmp_path)
    assert code == 0, err
    for step in ("trace tables", "analysis tables"):
        expect_step(err, f"loading {synth} for the query ({step})")
    expect_step(err, "preparing the query's database (indices)")


def test_chrome_export_draws_its_write(synth, tmp_path):
    code, err = run_on_terminal(["export", str(synth), "--format", "chrome", "-o", "t.json"],
                                SHOW_SMALL, tmp_path)
    assert code == 0, err
    expect_step(err, f"reading {synth}")
    expect_step(err, "writing t.json")
    assert os.path.getsize(tmp_path / "t.json") > 0


def padded_events(mib):
    """Kineto cpu_op events of about 300 bytes each, joined by commas: `mib` MiB of them."""
    event = ('{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":%d,"dur":1,'
             '"args":{"pad":"%s"}}')
    events, size = [], 0
    while size < int(mib * 2**20):
        events.append(event % (len(events) * 2, "x" * 200))
        size += len(events[-1]) + 1
    return ",".join(events)


def expect_stage(stderr, what):
    """A step without a count: drawn as `WHAT ...`, then redrawn once as `WHAT: done` and ended."""
    lines = drawn_lines(stderr)
    assert f"{what} ..." in lines, f"no `{what} ...` line in {stderr!r}"
    assert lines.index(f"{what}: done") > lines.index(f"{what} ...")
    assert stderr.count(f"{what}: done\n") == 1, stderr


def evidence_elements(path):
    """The large arrays' elements of an evidence file: what its `writing` line counts."""
    with open(path) as f:
        graph = json.load(f)["graph"]
    return len(graph["spans"]) + len(graph["edges"]) + len(graph["memory"]["timeline"])


@pytest.mark.parametrize("threads", ["1", "2"])
def test_import_draws_its_analysis_and_its_write(synth, tmp_path, threads):
    # Batches of 7 elements: the two-thread writer appends many, each counted as it lands.
    env = dict(SHOW_SMALL, CANDLE_GRAPH_TEST_JSON_BATCH="7")
    code, err = run_on_terminal(["import", str(synth), "-o", "e.json", "-j", threads], env,
                                tmp_path)
    assert code == 0, err
    lines = drawn_lines(err)
    expect_step(err, f"reading {synth}")
    expect_stage(err, f"analysing {synth}")
    expect_step(err, "writing e.json")
    # In the order they run; the write is drawn as it goes: every 4096 elements on one thread,
    # every batch of 7 on two (the count's exactness: EvidenceElements.* in C++).
    last_read = max(i for i, line in enumerate(lines) if line.startswith("reading"))
    first_write = min(i for i, line in enumerate(lines) if line.startswith("writing"))
    assert last_read < lines.index(f"analysing {synth} ...") < first_write, lines
    seen = percents(err, "writing e.json")
    elements = evidence_elements(tmp_path / "e.json")
    assert len(seen) >= (min(100, elements // 7) if threads == "2" else elements // 4096), seen


def test_report_draws_its_analysis_the_evidence_write_and_its_renderings(synth, tmp_path):
    code, err = run_on_terminal(["report", str(synth), "--json", "e.json", "--markdown", "r.md",
                                 "--html", "v.html"], SHOW_SMALL, tmp_path)
    assert code == 0, err
    expect_stage(err, f"analysing {synth}")
    expect_step(err, "writing e.json")
    expect_stage(err, "rendering the viewer v.html")
    expect_stage(err, "rendering the report r.md")
    # In the order they run: the page before any file is written (it can fail), the Markdown
    # after the evidence (it reads the same packet).
    lines = drawn_lines(err)
    first_write = min(i for i, line in enumerate(lines) if line.startswith("writing e.json"))
    assert (lines.index(f"analysing {synth} ...") < lines.index("rendering the viewer v.html ...")
            < first_write < lines.index("rendering the report r.md ...")), lines


def test_view_draws_its_analysis_and_its_rendering(synth, tmp_path):
    code, err = run_on_terminal(["view", str(synth), "-o", "v.html"], SHOW_SMALL, tmp_path)
    assert code == 0, err
    expect_stage(err, f"analysing {synth}")
    expect_stage(err, "rendering the viewer v.html")
    lines = drawn_lines(err)
    assert lines.index(f"analysing {synth}: done") < lines.index("rendering the viewer v.html ...")


def test_evidence_written_to_a_terminal_draws_no_write_line(synth, tmp_path):
    # stdout on the same terminal: a line drawn into the JSON would garble it.
    main, sub = pty.openpty()
    proc = subprocess.Popen([CG, "import", str(synth)], stdout=sub, stderr=sub, cwd=tmp_path,
                            env=dict(os.environ, **SHOW_SMALL))
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 1 << 20)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert proc.wait() == 0
    assert b"writing" not in out and b"analysing" in out


def test_an_untrusted_trace_ends_the_analysis_line_before_its_error(synth, tmp_path):
    # The first span_end removed: the span stays open, and the analysis refuses the trace.
    lines = synth.read_text().splitlines(keepends=True)
    first_end = next(i for i, line in enumerate(lines) if '"kind":"span_end"' in line)
    broken = tmp_path / "open-span.jsonl"
    broken.write_text("".join(lines[:first_end] + lines[first_end + 1:]))
    code, err = run_on_terminal(["import", str(broken), "-o", "e.json"], SHOW_SMALL, tmp_path)
    assert code == 1, err
    assert f"analysing {broken} ...\nerror: {broken}: trace is structurally untrusted" in err, err
    assert not os.path.exists(tmp_path / "e.json")


def test_an_error_while_reading_starts_a_line_of_its_own(tmp_path):
    # A Kineto trace past the reader's first 4 MiB report, broken after it: the reading line is
    # drawn and left short of 100% when the error comes.
    trace = tmp_path / "broken.json"
    trace.write_text('{"traceEvents":[' + padded_events(4.6) + ",@]}")
    code, err = run_on_terminal(["validate", str(trace)], SHOW_SMALL, tmp_path)
    assert code == 1, err
    assert percents(err, f"reading {trace}")[-1] < 100, err
    assert re.search(r"MiB\)\nerror: " + re.escape(str(trace)), err), err


def test_pytorch_trace_draws_its_conversion(tmp_path):
    code, err = run_on_terminal(["validate", SIMPLE_ADD, "--step", "all"], SHOW_SMALL, tmp_path)
    assert code == 0, err
    expect_step(err, f"reading {SIMPLE_ADD}")
    expect_step(err, f"converting {SIMPLE_ADD}")


def test_quiet_convert_draws_nothing(tmp_path):
    code, err = run_on_terminal(["convert", SIMPLE_ADD, "-o", "t.jsonl", "--quiet"], SHOW_SMALL,
                                tmp_path)
    assert code == 0, err
    assert err == ""


def test_files_read_at_once_draw_no_lines(tmp_path):
    # compare -j 2 reads its cohort's files on threads of their own: their lines would interleave.
    runs = [SIMPLE_ADD, SIMPLE_ADD]
    code, err = run_on_terminal(["compare", "--baseline", *runs, "--candidate", *runs, "-j", "2",
                                 "-o", "c.json"], SHOW_SMALL, tmp_path)
    assert code == 0, err
    assert "\r" not in err and "reading" not in err and "converting" not in err, err


def test_reading_ends_in_the_last_mebibyte(tmp_path):
    # The PyTorch reader reports after every 4 MiB it scans and at the end: a file of 4.3 MiB
    # ends in the MiB it last drew, and the line must still be drawn at 100% and ended.
    trace = tmp_path / "padded.json"
    trace.write_text('{"traceEvents":[' + padded_events(4.3) + "]}")
    code, err = run_on_terminal(["validate", str(trace)], SHOW_SMALL, tmp_path)
    assert code == 0, err
    expect_step(err, f"reading {trace}")
    assert percents(err, f"reading {trace}")[0] < 100  # drawn before the end too


def test_small_inputs_draw_nothing(synth, tmp_path):
    code, err = run_on_terminal(["export", str(synth), "--format", "sqlite", "-o", "t.db"], {},
                                tmp_path)
    assert code == 0, err
    assert err == wrote_line(synth)


def test_a_pipe_gets_no_progress_lines(synth, tmp_path):
    env = dict(os.environ, **SHOW_SMALL)
    r = subprocess.run([CG, "export", str(synth), "--format", "sqlite", "-o", "t.db"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == wrote_line(synth)
