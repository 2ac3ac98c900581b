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


def test_dask_sweep_merges_the_cli_shards(usim_cli, tmp_path):
    # On a real Dask LocalCluster (threads in this process, stopped at the
    # end): the summary is byte-identical to the plain sweep and to the CLI's
    # own `--shard I/N` parts joined by `usim sweep merge`.
    from conftest import require

    distributed = require("distributed", "USIM_REQUIRE_DASK")
    spec = REPO / "missions" / "sweeps" / "crossing.toml"
    plain = usim.sweep(spec).csv
    parts = []
    for i in range(3):
        p = tmp_path / f"part{i}.csv"
        subprocess.run([usim_cli, "sweep", str(spec), "--shard", f"{i}/3", "-o", str(p), "-q"], check=True)
        parts.append(str(p))
    merged = subprocess.run([usim_cli, "sweep", "merge", *parts], check=True, capture_output=True, text=True).stdout
    assert merged == plain
    from usim_marine import _usim

    # A task's part is exactly the CLI's part file.
    assert _usim._sweep_shard(str(spec), 1, 3) == (tmp_path / "part1.csv").read_text()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl:
        with distributed.Client(cl) as client:
            res = usim.sweep(spec, backend="dask", client=client, shards=7)
            assert res.csv == plain and len(res) == 100
            # A damaged part is refused by the merge, naming it.
            bad = _usim._sweep_shard(str(spec), 0, 2).replace(",", ";", 1)
            good = _usim._sweep_shard(str(spec), 1, 2)
            try:
                _usim._sweep_merge([("a", bad), ("b", good)])
            except ValueError as e:
                assert "a:" in str(e)
            else:
                raise AssertionError("a damaged part was merged")
    try:
        usim.sweep(spec, backend="ray")
    except ValueError as e:
        assert "backend" in str(e)
    else:
        raise AssertionError("unknown backend accepted")
