"""The environment layer in Python (issue 40 item 6, docs/python.md "The
environment"): sea, wind and sensors come from the TOML; the readout of
`Vehicle.environment()` / `Fleet.vehicle_environment(i)` and
`wave_elevation` are checked against the spec's formulas (heave RMS = Hs/4,
docs/model.md §24.1; sensed − true RMS = σ√2 for white GPS noise σ per axis,
docs/model.md "Sensors") and against the `usim` CLI (`usim replay` with the
mission's extra columns, `usim env`), bit for bit."""

import math
import subprocess

import numpy as np
import pytest

import usim_marine as usim

from conftest import REPO, read_csv

SEA = REPO / "configs" / "kayak_sea.toml"

# A white 2 m GPS (no bias: the error RMS is σ√2 over any record).
SENSORS = {
    "name": "kayak",
    "prefix": "NAV",
    "thrust_map": "-100:-1.2, -50:-0.6, 20:0.5, 50:1.2, 80:1.8, 100:2.0",
    "turn_rate": 60,
    "lat_origin": 42.358456,
    "lon_origin": -71.087589,
    "sensors": {"seed": 2, "gps_sigma": 2.0},
}


def _run(v, seconds, thrust=50.0):
    """Step `v` at 0.1 s for `seconds`, posting DESIRED_THRUST at 1.0 s as
    a mission's post (handled at iteration 10); yields each environment."""
    for k in range(1, int(round(seconds * 10)) + 1):
        if k == 10:
            v.post("DESIRED_THRUST", thrust)
        v.step()
        yield v.environment()


def test_calm_water_has_no_sea_no_wind_no_sensors():
    v = usim.Vehicle({"name": "calm"})
    v.step()
    e = v.environment()
    assert e["wave"] is None and e["wind"] is None and e["sensed"] is None
    assert e["gps_fix"] is True
    assert math.isnan(v.wave_elevation(0.0, 0.0, 1.0))
    assert e["true"]["x"] == v.state.x


def test_sensed_minus_true_rms_is_sigma_root_2():
    v = usim.Vehicle(SENSORS)
    err2, n = 0.0, 0
    for e in _run(v, 600.0):
        s, t = e["sensed"], e["true"]
        assert e["gps_fix"] is True and s["fix"] == 8
        err2 += (s["x"] - t["x"]) ** 2 + (s["y"] - t["y"]) ** 2
        n += 1
    rms = math.sqrt(err2 / n)
    want = 2.0 * math.sqrt(2.0)
    assert abs(rms / want - 1.0) < 0.08, (rms, want)


def test_a_gps_dropout_clears_the_fix_flag():
    cfg = dict(SENSORS, sensors={"seed": 2, "gps_sigma": 2.0, "faults": ["gps=off,at=5,for=5"]})
    v = usim.Vehicle(cfg)
    envs = list(_run(v, 15.0))
    flags = [e["gps_fix"] for e in envs]
    # posting k (mission time k/10 s) has no fix for 5 <= t < 10
    assert not any(flags[55:95]) and all(flags[:45]) and all(flags[105:])
    assert all(math.isnan(e["sensed"]["x"]) for e in envs[55:95])


def test_heave_rms_is_hs_over_4_and_the_wind_is_there():
    # two whole periods of the sea (260 components at Tp 5 s: 371.4 s each)
    v = usim.Vehicle(SEA)
    heave, speeds = [], []
    for e in _run(v, 742.9):
        heave.append(e["wave"]["heave"])
        speeds.append(e["wind"]["speed"])
        assert e["wind"]["direction"] == 60.0
        assert abs(e["wind"]["speed"] - (8.0 + e["wind"]["gust"])) < 1e-12
    rms = float(np.sqrt(np.mean(np.square(heave))))
    assert abs(rms / 0.25 - 1.0) < 0.15, rms  # Hs = 1 m
    assert min(speeds) < 8.0 < max(speeds)


def test_wave_elevation_equals_usim_env(usim_cli):
    out = subprocess.run(
        [usim_cli, "env", str(SEA), "--duration", "20", "--dt", "0.5", "--x", "12.5", "--y", "-3"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    header = out[0].split(",")
    ti, ei = header.index("t"), header.index("elevation")
    v = usim.Vehicle(SEA)
    rows = [line.split(",") for line in out[1:]]
    assert len(rows) >= 40
    for r in rows:
        got = v.wave_elevation(12.5, -3.0, float(r[ti]))
        assert got == float(r[ei]), (r, got)
    f = usim.Fleet(SEA, n=2)
    assert f.wave_elevation(1, 12.5, -3.0, float(rows[7][ti])) == float(rows[7][ei])


def test_the_same_seed_gives_the_numbers_of_usim_replay(usim_cli, tmp_path):
    cfg = (REPO / "configs" / "kayak_sea_sensors.toml").read_text()
    (tmp_path / "kayak.toml").write_text(cfg)
    mission = tmp_path / "m.toml"
    mission.write_text(
        '[mission]\nvehicle = "kayak.toml"\ndt = 0.1\nduration = 60.0\n'
        'columns = ["wave_elevation", "heave", "roll", "wave_pitch", "sensed_x", "sensed_y", '
        '"sensed_heading", "gps_fix"]\n'
        '[[post]]\nt = 1.0\nvar = "DESIRED_THRUST"\nvalue = 50.0\n'
    )
    out = tmp_path / "run.csv"
    subprocess.run([usim_cli, "replay", str(mission), "-o", str(out), "-q"], check=True)
    header, rows = read_csv(out)
    col = {h: i for i, h in enumerate(header)}
    v = usim.Vehicle(tmp_path / "kayak.toml")
    envs = list(_run(v, 60.0))
    assert len(envs) == len(rows) - 1
    for k, e in enumerate(envs, start=1):
        r = rows[k]
        pairs = [
            (e["wave"]["elevation"], "wave_elevation"),
            (e["wave"]["heave"], "heave"),
            (e["wave"]["roll"], "roll"),
            (e["wave"]["pitch"], "wave_pitch"),
            (e["sensed"]["x"], "sensed_x"),
            (e["sensed"]["y"], "sensed_y"),
            (e["sensed"]["heading"], "sensed_heading"),
            (float(e["sensed"]["fix"]), "gps_fix"),
            (e["true"]["x"], "x"),
            (e["true"]["y"], "y"),
        ]
        for got, name in pairs:
            assert got == float(r[col[name]]), (k, name, got, r[col[name]])


def test_fleet_vehicle_environment_matches_a_lone_vehicle():
    f = usim.Fleet(SEA, n=3)
    e = f.vehicle_environment(2)
    assert set(e) == {"t", "wave", "wind", "true", "sensed", "gps_fix"}
    assert e["wave"] is not None and e["wind"] is not None and e["sensed"] is None
    with pytest.raises(ValueError):
        f.vehicle_environment(3)
