"""usim_marine.replay against the `usim replay` CLI (byte-for-byte numbers)
and against the C++ uSimMarine reference runs (bit for bit with math=libm)."""

import subprocess

import numpy as np
import pytest

import usim_marine as usim
from conftest import REPO, read_csv, same_bits

GOLDEN = sorted((REPO / "tests" / "golden").glob("*.toml"))
GOLDEN_V22 = sorted((REPO / "tests" / "golden_v22").glob("*.v22.toml"))
SHIPPED = sorted(
    p for p in (REPO / "missions").glob("*.toml") if p.name != "long_survey.toml"
)
ALL = GOLDEN + GOLDEN_V22 + SHIPPED


def test_the_mission_lists_are_not_empty():
    assert len(GOLDEN) >= 12 and len(GOLDEN_V22) >= 4 and len(SHIPPED) >= 8


@pytest.mark.parametrize("mission", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_replay_equals_the_cli(mission, usim_cli, tmp_path):
    out, posts = tmp_path / "run.csv", tmp_path / "posts.csv"
    subprocess.run(
        [usim_cli, "replay", str(mission), "-o", str(out), "--posts", str(posts), "-q"],
        check=True,
    )
    run = usim.replay(mission, posts=True)
    header, rows = read_csv(out)
    assert run.columns == header
    assert len(run) == len(rows)
    for j, name in enumerate(header):
        col = [r[j] for r in rows]
        if name == "vehicle":
            assert [run.vehicles[i] for i in run["vehicle"]] == col
        elif name == "k":
            assert run["k"].tolist() == [int(v) for v in col]
        else:
            same_bits(run[name], col, name)
    assert run.posts_csv == posts.read_text()


def test_multi_vehicle_replay_and_encounters(usim_cli, tmp_path):
    mission = REPO / "missions" / "two_boats_crossing.toml"
    enc = tmp_path / "enc.csv"
    subprocess.run(
        [usim_cli, "replay", str(mission), "-o", str(tmp_path / "r.csv"),
         "--encounters", str(enc), "-q"],
        check=True,
    )
    run = usim.replay(mission, encounters=True)
    assert run.encounters_csv == enc.read_text()
    assert len(run.vehicles) == 2 and run.columns[0] == "vehicle"
    assert run.encounters is not None and "event" in run.encounters


GOLDEN_CMP = [
    "x", "y", "speed", "heading", "depth", "altitude", "pitch", "yaw", "sog", "hog",
    "nav_speed", "nav_heading", "lat", "lon", "drift_x", "drift_y", "rudder",
    "thrust", "elevator", "gt_x", "gt_y",
]


@pytest.mark.parametrize("mission", GOLDEN + GOLDEN_V22, ids=lambda p: p.name)
def test_bit_identical_to_the_cpp_reference_with_libm(mission):
    """The C++ uSimMarine's own output (tests/golden*/NAME.csv)."""
    ref = mission.with_suffix(".csv")
    header, rows = read_csv(ref)
    run = usim.replay(mission, math="libm")
    assert len(run) == len(rows)
    k = header.index("k")
    assert run["k"].tolist() == [int(r[k]) for r in rows]
    t = np.array([float(r[header.index("t")]) for r in rows])
    assert np.max(np.abs(run["t"] - t)) <= 1e-6
    for name in GOLDEN_CMP:
        j = header.index(name)
        # Equal as f64 (== : the reference prints -0 as 0 in places), as tests/golden.rs.
        same_bits(run[name], [r[j] for r in rows], f"{mission.name}:{name}", zero_sign=False)


@pytest.mark.parametrize("mission", GOLDEN_V22, ids=lambda p: p.name)
def test_v22_posts_equal_the_cpp_reference_with_libm(mission):
    ref = mission.parent / mission.name.replace(".toml", ".posts.csv")
    _, rows = read_csv(ref)
    run = usim.replay(mission, math="libm", posts=True)
    p = run.posts
    ours = list(zip(p["k"].astype(int).tolist(), p["var"], p["type"], p["value"]))
    assert [r[2] for r in rows] == [o[1] for o in ours]
    for (k, var, typ, val), r in zip(ours, rows):
        assert (k, typ) == (int(r[0]), r[3]), var
        if typ == "s":
            assert val == r[4], var
        else:
            assert float(val) == float(r[4]), (k, var, val, r[4])


def test_to_pandas_has_the_csv_columns():
    pd = pytest.importorskip("pandas")
    run = usim.replay(REPO / "missions" / "harbour_turns.toml")
    df = run.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == run.columns and len(df) == len(run)
    assert np.array_equal(df["x"].to_numpy(), run.x)


def test_replay_from_text_and_dict_equal_the_file():
    path = REPO / "missions" / "harbour_turns.toml"
    a = usim.replay(path)
    text = path.read_text().replace('"../configs/', f'"{REPO}/configs/')
    b = usim.replay(text)
    assert np.array_equal(a.as_array(), b.as_array(), equal_nan=True)
