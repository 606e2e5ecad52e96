"""The examples of examples/python run and give trusted traces (in this process: starting a
new interpreter with torch costs seconds)."""

import os
import runpy
import sys

import pytest

from conftest import cli_json, events, read_trace, validate

EXAMPLES = os.environ.get("CG_PYTHON_EXAMPLES", "")


@pytest.mark.parametrize("script,phase", [("train_mlp.py", "train"), ("infer_mlp.py", "infer")])
def test_example_gives_a_trusted_trace(script, phase, tmp_path, monkeypatch, capsys):
    assert EXAMPLES, "CG_PYTHON_EXAMPLES is not set; run through CTest"
    trace = tmp_path / "example.jsonl"
    monkeypatch.setattr(sys, "argv", [script, str(trace)])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(os.path.join(EXAMPLES, script), run_name="__main__")
    assert done.value.code == 0
    assert "captured" in capsys.readouterr().out
    code, text = validate(trace)
    assert code == 0, text
    assert events(read_trace(trace), "meta")[0]["phase"] == phase


def test_train_example_with_the_profiler_engine(tmp_path, monkeypatch, capsys):
    trace = tmp_path / "example.jsonl"
    monkeypatch.setattr(sys, "argv", ["train_mlp.py", str(trace), "profiler"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(os.path.join(EXAMPLES, "train_mlp.py"), run_name="__main__")
    assert done.value.code == 0
    assert "(profiler engine)" in capsys.readouterr().out
    code, text = validate(trace)
    assert code == 0, text


def test_notebook_example_prints_the_op_and_gpu_tables(monkeypatch, capsys):
    """Expected rows: the first op and the device of `candle-graph query` on the same fixture."""
    fixture = os.path.join(os.environ.get("CG_SHARED_FIXTURE_DIR", ""), "pytorch-chrome-trace",
                           "hta-alexnet-a100-2streams.json.gz")
    monkeypatch.setattr(sys, "argv", ["notebook_kineto.py", fixture])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(os.path.join(EXAMPLES, "notebook_kineto.py"), run_name="__main__")
    assert done.value.code == 0
    out = capsys.readouterr().out
    ops = cli_json("query", fixture, "--kind", "ops", "--limit", 1)["result"]["items"]
    devices = cli_json("query", fixture, "--kind", "gpu")["result"]["devices"]
    assert "== ops" in out and "== GPU" in out
    assert ops[0]["name"] in out and str(ops[0]["host_self_ns"]) in out
    assert devices[0]["device"] in out and str(devices[0]["busy_ns"]) in out
