"""A process killed (SIGKILL) inside a `with TorchCapture(...)` block leaves a trace that parses
and says the capture was cut short, with either engine. The expected health is what trace6.md §6
defines for a measured region that never ended, read from `candle-graph validate`'s JSON."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from conftest import CG_BINARY

# The child: a capture whose block records some ops, says so on stdout, then waits to be killed.
_CHILD = textwrap.dedent("""
    import sys, time, torch
    import candle_graph.torch as cgt
    engine, path = sys.argv[1], sys.argv[2]
    model = torch.nn.Linear(16, 16)
    with cgt.TorchCapture(path, model, "killed::update", 4, engine=engine) as cap:
        with cap.span("forward", step="forward"):
            for _ in range(50):
                model(torch.randn(8, 16)).sum()
            print("recording", flush=True)
            time.sleep(120)
""")


def _capture_until_killed(engine, path):
    child = subprocess.Popen([sys.executable, "-c", _CHILD, engine, str(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line == "recording\n", child.stderr.read()
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL


@pytest.mark.parametrize("engine", ["native", "profiler"])
def test_killed_capture_leaves_a_trace_that_says_it_was_cut_short(engine, tmp_path):
    path = tmp_path / "killed.jsonl"
    _capture_until_killed(engine, path)

    # Whole lines only, each one JSON (read here without candle-graph).
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    meta = events[0]
    assert meta["kind"] == "meta" and meta["entrypoint"] == "killed::update"
    assert meta["capture_step"] == 4 and meta["tags"]["capture.engine"] == engine
    measured = [e for e in events if e["kind"] == "span_start" and e["measured"]]
    assert len(measured) == 1
    assert not [e for e in events if e["kind"] == "span_end" and e["id"] == measured[0]["id"]]

    # candle-graph parses it (exit 0) and says why it cannot be trusted.
    r = subprocess.run([CG_BINARY, "validate", str(path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    health = json.loads(r.stdout)["health"]
    assert not health["trusted"]
    cut_short = [i for i in health["issues"] if i["code"] == "capture_cut_short"]
    assert [i["severity"] for i in cut_short] == ["error"]
    assert f"`{measured[0]['id']}` never ended: the capture was cut short" in cut_short[0]["message"]
    r = subprocess.run([CG_BINARY, "validate", str(path), "--require-trusted"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr

    # Nothing else is left beside it (the profiler engine stages its result only at the end).
    assert sorted(os.listdir(tmp_path)) == ["killed.jsonl"]
