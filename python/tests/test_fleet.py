"""Fleet: equal to n single Vehicles, seeded resets, no NaN for any setpoints."""

import numpy as np
import pytest

import usim_marine as usim
from conftest import REPO

KAYAK = REPO / "configs" / "kayak.toml"
PID = REPO / "configs" / "v22_pid_boat.toml"


@pytest.mark.parametrize("config", [KAYAK, PID], ids=["classic", "v22"])
def test_fleet_equals_n_single_vehicles(config):
    n = 5
    state = list(usim.State.names)
    f = usim.Fleet(config, n, dt=0.1, state=state)
    vs = [usim.Vehicle(config, dt=0.1) for _ in range(n)]
    rng = np.random.default_rng(1)
    for k in range(300):
        a = np.column_stack([rng.uniform(-20, 100, n), rng.uniform(-120, 120, n)])
        out = f.step(a)
        for i, v in enumerate(vs):
            v.post("DESIRED_THRUST", float(a[i, 0]))
            v.post("DESIRED_RUDDER", float(a[i, 1]))
            v.step()
            want = v.values()
            got = out[i]
            same = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
            assert same.all(), (k, i, [state[j] for j in np.flatnonzero(~same)])
    assert out is f.state and out.shape == (n, len(state))


DIFF = REPO / "configs" / "catamaran_diff.toml"


def test_a_differential_fleet_takes_the_thrusters_by_default():
    # thrust_mode_diff vehicles ignore DESIRED_THRUST/RUDDER (uSimMarine):
    # the default columns must be the ones they read.
    f = usim.Fleet(DIFF, 2)
    assert f.action_names == ["DESIRED_THRUST_L", "DESIRED_THRUST_R"]
    v = usim.Vehicle(DIFF, dt=0.1)
    a = np.array([[60.0, 40.0], [60.0, 40.0]])
    for _ in range(50):
        out = f.step(a)
        v.post("DESIRED_THRUST_L", 60.0)
        v.post("DESIRED_THRUST_R", 40.0)
        v.step()
    want = v.values()
    names = list(usim.State.names)
    for j, col in enumerate(["x", "y", "speed", "heading"]):
        assert out[0, j] == want[names.index(col)], col
    assert out[0, 2] > 0.5  # it moves (thrust/rudder columns would leave it still)


def test_a_mixed_fleet_names_its_actions_and_unread_columns_warn():
    with pytest.raises(ValueError, match="differential thrust mode"):
        usim.Fleet([KAYAK, DIFF])
    with pytest.warns(usim.SetpointWarning, match="does not read DESIRED_THRUST"):
        usim.Fleet([KAYAK, DIFF], actions=["thrust", "rudder", "thrust_l", "thrust_r"])
    with pytest.warns(usim.SetpointWarning, match="vehicle 0 starts in normal thrust mode"):
        usim.Fleet(KAYAK, 1, actions=["thrust_l", "thrust_r"])


def test_list_of_configs_and_per_vehicle_drift():
    f = usim.Fleet([KAYAK, KAYAK, KAYAK], state=["x", "y", "drift_x", "drift_y"])
    f.set_drift(np.array([[0.0, 0.0], [0.5, 0.0], [0.0, -0.5]]))
    for _ in range(100):
        s = f.step(np.zeros((3, 2)))
    assert s[0, 0] == 0.0 and s[0, 1] == 0.0
    assert s[1, 0] == pytest.approx(5.0, abs=0.2) and s[2, 1] == pytest.approx(-5.0, abs=0.2)
    assert s[1, 2] == 0.5 and s[2, 3] == -0.5


def test_seeded_reset_is_deterministic_and_per_vehicle():
    f = usim.Fleet(KAYAK, 50, state=["x", "y", "heading", "drift_x", "drift_y"])
    a = f.reset(seed=3, start_radius=20.0, heading_spread=45.0, max_drift=0.3).copy()
    b = f.reset(seed=3, start_radius=20.0, heading_spread=45.0, max_drift=0.3).copy()
    c = f.reset(seed=4, start_radius=20.0, heading_spread=45.0, max_drift=0.3).copy()
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.all(np.hypot(a[:, 0], a[:, 1]) <= 20.0)
    assert np.all(np.hypot(a[:, 3], a[:, 4]) <= 0.3 + 1e-12)
    for _ in range(10):
        f.step(np.full((50, 2), 50.0))
    f.reset(indices=[0, 1], start=np.array([[1.0, 2.0, 90.0], [3.0, 4.0, 0.0]]))
    s = f.state
    assert s[0, :3].tolist() == [1.0, 2.0, 90.0] and s[1, :3].tolist() == [3.0, 4.0, 0.0]
    assert f.iterations.tolist()[:3] == [0, 0, 10]


def test_out_array_and_float32_actions():
    f = usim.Fleet(KAYAK, 3)
    out = np.empty((3, 4))
    r = f.step(np.full((3, 2), 50.0, dtype=np.float32), out=out)
    assert r is out
    g = usim.Fleet(KAYAK, 3)
    assert np.array_equal(g.step(np.full((3, 2), 50.0)), out)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, (4, 3), elements=st.floats(-1e4, 1e4, allow_nan=False)),
    st.integers(1, 40),
)
def test_no_setpoints_make_nan_in_the_state(a, steps):
    f = usim.Fleet(
        [KAYAK, PID, REPO / "configs" / "uuv.toml", REPO / "configs" / "catamaran_diff.toml"],
        actions=["thrust", "rudder", "elevator"],
        state=[n for n in usim.State.names if n not in ("altitude", "nav_speed", "nav_heading")],
    )
    for _ in range(steps):
        s = f.step(a)
        assert np.all(np.isfinite(s)), s


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, (2, 2), elements=st.floats(allow_nan=True, allow_infinity=True)))
def test_any_float_setpoint_is_stepped_or_refused(a):
    f = usim.Fleet(KAYAK, 2, state=["x", "y", "speed", "heading"])
    try:
        s = f.step(a)
    except usim.MessageError:
        assert not np.all(np.abs(a) <= 1e4)
        return
    assert np.all(np.isfinite(s))
