"""usim_marine.sweep returns exactly the summary of `usim sweep`."""

import subprocess

import numpy as np

import usim_marine as usim
from conftest import REPO


def test_sweep_equals_the_cli(usim_cli, tmp_path):
    spec = REPO / "missions" / "sweeps" / "crossing.toml"
    out = tmp_path / "summary.csv"
    subprocess.run([usim_cli, "sweep", str(spec), "-o", str(out), "-q"], check=True)
    res = usim.sweep(spec)
    assert res.csv == out.read_text()
    assert len(res) == 100
    col = res.columns[next(iter(res.columns))]
    assert isinstance(col, np.ndarray) and len(col) == 100


def test_sweep_errors_name_the_file(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text('[sweep]\nmission = "nope.toml"\n')
    try:
        usim.sweep(bad)
    except usim.ConfigError as e:
        assert "s.toml" in str(e) or "nope.toml" in str(e)
    else:
        raise AssertionError("no error")
