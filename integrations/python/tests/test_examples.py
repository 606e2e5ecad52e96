"""The examples of examples/python run and give trusted traces (in this process: starting a
new interpreter with torch costs seconds)."""

import os
import runpy
import sys

import pytest

from conftest import events, read_trace, validate

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
