"""Bad input raises Python exceptions naming the file, line and key or the
variable; nothing crashes the interpreter."""

import math

import numpy as np
import pytest

import usim_marine as usim
from conftest import REPO

KAYAK = REPO / "configs" / "kayak.toml"


def test_config_error_names_file_line_and_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "k"\nturn_rate = 60\nmax_acceleration = "fast"\n')
    with pytest.raises(usim.ConfigError) as e:
        usim.Vehicle(bad)
    assert isinstance(e.value, ValueError)
    assert str(bad) in str(e.value) and e.value.line == 3
    assert e.value.key == "max_acceleration"
    with pytest.raises(usim.ConfigError) as e:
        usim.Vehicle('name = "k"\nturn_rat = 60\n')
    assert e.value.line == 2 and "turn_rat" in str(e.value)
    with pytest.raises(usim.ConfigError):
        usim.Vehicle(tmp_path / "missing.toml")
    with pytest.raises(usim.ConfigError):
        usim.replay("[mission]\ndt = 0.1\nsteps = 10\n")
    with pytest.raises(ValueError):
        usim.Vehicle({"turn_rate": float("nan")})
    with pytest.raises(TypeError):
        usim.Vehicle(42)


def test_bad_messages_name_the_variable():
    v = usim.Vehicle(KAYAK)
    for var, value in [
        ("DESIRED_THRUST", float("nan")),
        ("DESIRED_THRUST", float("inf")),
        ("DESIRED_RUDDER", "abc"),
        ("DESIRED_RUDDER", "nan"),
        ("DESIRED_THRUST", 1e300),
        ("DESIRED_THRUSTT", 1.0),
    ]:
        with pytest.raises(usim.MessageError) as e:
            v.post(var, value)
        assert isinstance(e.value, ValueError)
        assert var in str(e.value) and e.value.var == var
    with pytest.raises(TypeError):
        v.post("DESIRED_THRUST", [1.0])
    v.step()
    assert all(math.isfinite(x) for x in (v.state.x, v.state.y))


def test_bad_steps_and_times():
    v = usim.Vehicle(KAYAK)
    for dt in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            v.step(dt)
    with pytest.raises(ValueError):
        v.run_until(1e15)
    with pytest.raises(ValueError):
        v.step_to(0.0)
    with pytest.raises(ValueError):
        usim.Vehicle(KAYAK, start_time=float("nan"))


def test_huge_replay_is_refused_before_allocating():
    text = f'[mission]\nvehicle = "{KAYAK}"\ndt = 0.1\nsteps = 100000000000\n'
    with pytest.raises(ValueError, match="max_bytes"):
        usim.replay(text)


def test_fleet_refuses_bad_setpoints_and_shapes():
    f = usim.Fleet(KAYAK, 4)
    before = f.state.copy()
    a = np.full((4, 2), 50.0)
    a[2, 1] = np.nan
    with pytest.raises(usim.MessageError, match="vehicle 2: DESIRED_RUDDER"):
        f.step(a)
    a[2, 1] = np.inf
    with pytest.raises(ValueError):
        f.step(a)
    a[2, 1] = 1e9
    with pytest.raises(ValueError, match="vehicle 2"):
        f.step(a)
    assert np.array_equal(f.state, before) and f.iterations.tolist() == [0] * 4
    for bad in (np.zeros((3, 2)), np.zeros((4, 3)), np.zeros(8), "x"):
        with pytest.raises((ValueError, TypeError)):
            f.step(bad)
    with pytest.raises(ValueError):
        usim.Fleet(KAYAK, 0)
    with pytest.raises(ValueError):
        usim.Fleet(KAYAK, 10**12)
    with pytest.raises(ValueError):
        usim.Fleet(KAYAK)
    with pytest.raises(ValueError):
        usim.Fleet(KAYAK, 2, state=["nope"])
    with pytest.raises(ValueError):
        usim.Fleet(KAYAK, 2, actions=["warp"])
    with pytest.raises(ValueError):
        f.reset(indices=[7])
    with pytest.raises(ValueError):
        f.set_drift(np.full((4, 2), np.nan))
    with pytest.raises(usim.MessageError):
        f.post(0, "DRIFT_X", "inf")
