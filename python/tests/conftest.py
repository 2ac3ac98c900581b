"""Shared helpers: the repository, the `usim` CLI (the reference the package
must equal), and CSV reading that keeps every float exact."""

import csv
import os
import pathlib
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _cli() -> str:
    env = os.environ.get("USIM_BIN")
    if env:
        return env
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "usim"
        if p.exists():
            return str(p)
    subprocess.run(
        ["cargo", "build", "--quiet", "--bin", "usim"], cwd=REPO, check=True
    )
    return str(REPO / "target" / "debug" / "usim")


@pytest.fixture(scope="session")
def usim_cli() -> str:
    """Path of the `usim` binary (USIM_BIN, target/release, target/debug, or built)."""
    return _cli()


def read_csv(path):
    """A CSV as (header, rows of str)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same_bits(got: np.ndarray, text_col, name: str, zero_sign: bool = True) -> None:
    """`got` equals the CSV column read back with float(): the same f64 bit
    for bit (NaN where the CSV says nan); with zero_sign=False, -0 == 0
    (the C++ reference prints some -0 as 0)."""
    want = np.array([float(v) for v in text_col], dtype=np.float64)
    assert got.shape == want.shape, name
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    assert np.array_equal(nan_g, nan_w), f"{name}: NaN positions differ"
    g = got[~nan_g].view(np.uint64) if zero_sign else got[~nan_g]
    w = want[~nan_w].view(np.uint64) if zero_sign else want[~nan_w]
    bad = np.flatnonzero(g != w)
    assert len(bad) == 0, f"{name}: row {bad[0]}: {got[~nan_g][bad[0]]!r} vs {want[~nan_w][bad[0]]!r}"


def require(module: str, var: str):
    """Import ``module`` (a real peer), or skip saying SKIPPED; with the
    environment variable ``var`` set to 1 (as CI sets it) a missing peer
    fails instead."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        if os.environ.get(var) == "1":
            raise AssertionError(f"{var}=1 but {module} cannot be imported: {e}") from e
        pytest.skip(f"SKIPPED: {module} missing (scripts/py_env.sh installs it; {var}=1 requires it)")
