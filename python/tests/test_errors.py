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


def test_a_setpoint_the_model_does_not_read_raises_as_usim_post_refuses():
    """`usim post` checks a message as the vehicle will before sending it
    and refuses what the vehicle would drop (--no-check sends it anyway):
    Vehicle.post and Fleet.post do the same (check=False), never only
    filling `dropped`."""
    v = usim.Vehicle(KAYAK)
    with pytest.raises(usim.MessageError) as e:
        v.post("DESIRED_HEADING", 90.0)
    msg = str(e.value)
    assert e.value.var == "DESIRED_HEADING"
    assert "classic" in msg and "v22" in msg and "check=False" in msg
    v.step()
    assert v.dropped == []                      # refused, not queued
    v.post("DESIRED_HEADING", 90.0, check=False)
    v.step()
    assert len(v.dropped) == 1 and "DESIRED_HEADING" in v.dropped[0]
    # The V22 model reads it.
    usim.Vehicle(REPO / "configs" / "v22_pid_boat.toml").post("DESIRED_HEADING", 90.0)
    f = usim.Fleet(KAYAK, 3)
    with pytest.raises(usim.MessageError, match="vehicle 1.*classic"):
        f.post(1, "DESIRED_HEADING", "90")
    with pytest.raises(ValueError, match="no vehicle 3"):
        f.post(3, "DESIRED_THRUST", 10.0)


def test_a_thrust_past_100_percent_warns_and_is_used():
    v = usim.Vehicle(KAYAK)
    with pytest.warns(usim.SetpointWarning, match=r"DESIRED_THRUST = 500 .*-100\.\.100"):
        v.post("DESIRED_THRUST", 500)
    for _ in range(50):
        v.step()
    assert v.dropped == [] and v.state.speed > 0.0
    with pytest.warns(usim.SetpointWarning):
        v.post("DESIRED_THRUST", "-150")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v.post("DESIRED_THRUST", 100.0)        # nominal: no warning
        with pytest.raises(usim.SetpointWarning):
            v.post("DESIRED_THRUST", 101.0)     # an error filter: not queued
    f = usim.Fleet(KAYAK, 2)
    a = np.array([[50.0, 0.0], [500.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(usim.SetpointWarning, match="vehicle 1"):
            f.step(a)
    assert f.iterations.tolist() == [0, 0], "a step refused by the filter changes nothing"
    with pytest.warns(usim.SetpointWarning, match="warned once per fleet"):
        f.step(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.step(a)                               # once per fleet
    assert f.iterations.tolist() == [2, 2]


def test_the_namespace_and_the_error_names():
    public = {n for n in dir(usim) if not n.startswith("_")}
    # `envs` and `tasks` are the submodules, there when gymnasium is installed; the
    # encounter submodules appear once imported (by other tests).
    subs = {"envs", "tasks", "scenarios", "encounters", "colreg"}
    assert public - subs == set(usim.__all__), public ^ set(usim.__all__)
    for name in ("Any", "Dict", "List", "Optional", "annotations"):
        assert not hasattr(usim, name)
    for cls in (usim.ConfigError, usim.MessageError, usim.SetpointWarning,
                usim.Vehicle, usim.Fleet, usim.State):
        assert cls.__module__ == "usim_marine", cls
    assert repr(usim.ConfigError) == "<class 'usim_marine.ConfigError'>"
    import traceback

    try:
        usim.Vehicle('name = "k"\nturn_rat = 60\n')
    except usim.ConfigError as e:
        last = traceback.format_exception_only(type(e), e)[-1]
    assert last.startswith("usim_marine.ConfigError: "), last
