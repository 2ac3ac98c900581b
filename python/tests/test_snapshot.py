"""Vehicle and Fleet snapshots: `pickle` (the history replayed, in this
process or another) and `copy.deepcopy` (a clone) give objects that are
bit for bit the original: step, snapshot, step N more on both, compare the
whole model state (`_debug_state`: every field, exact floats) and the
published values."""

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest

import usim_marine as usim
from conftest import REPO

KAYAK = REPO / "configs" / "kayak.toml"
PID = REPO / "configs" / "v22_pid_boat.toml"


def drive_vehicle(v, rng, steps):
    """Random mail and steps, the kinds a script uses."""
    classic = not v.is_v22
    for k in range(steps):
        if classic:
            v.post("DESIRED_THRUST", float(rng.uniform(-20, 100)))
            v.post("DESIRED_RUDDER", str(round(float(rng.uniform(-100, 100)), 3)))
        else:
            v.post("DESIRED_SPEED", float(rng.uniform(0, 2)))
            v.post("DESIRED_HEADING", float(rng.uniform(0, 360)))
        if k % 37 == 5:
            v.post("DRIFT_X", float(rng.uniform(-0.5, 0.5)))
        if k % 53 == 7:
            v.post("USM_RESET", "x=3, y=-4, heading=45, speed=0.5")
        if k % 41 == 0:
            with pytest.raises(usim.MessageError):
                v.post("DESIRED_THRUST", float("nan"))
        if k % 29 == 3:
            v.step(0.05)            # a different dt: times accumulate
        else:
            v.step()


def same_vehicle(a, b):
    assert a._debug_state() == b._debug_state()
    assert a.values().tobytes() == b.values().tobytes()
    assert a.k == b.k and a.t == b.t and a.dropped == b.dropped


@pytest.mark.parametrize("config", [KAYAK, PID], ids=["classic", "v22"])
def test_vehicle_pickle_and_deepcopy_are_bit_identical(config):
    rng = np.random.default_rng(4)
    v = usim.Vehicle(config, dt=0.1, start_time=100.0)
    drive_vehicle(v, rng, 300)
    v.post("DESIRED_THRUST", 40.0)          # queued, not yet stepped
    p = pickle.loads(pickle.dumps(v))
    c = copy.deepcopy(v)
    same_vehicle(v, p)
    same_vehicle(v, c)
    for w in (v, p, c):
        drive_vehicle(w, np.random.default_rng(9), 200)
        w.step_to(w.t + 0.3)
    same_vehicle(v, p)
    same_vehicle(v, c)
    # A pickle of the restored one restores too (its history was rebuilt).
    same_vehicle(v, pickle.loads(pickle.dumps(p)))
    # The copies are independent.
    c.step()
    assert c.k == v.k + 1


def test_vehicle_from_a_dict_and_from_a_mission_pickle():
    d = usim.Vehicle({"turn_rate": 50, "thrust_map": "0:0, 100:2"}, dt=0.2)
    m = usim.Vehicle.from_mission(REPO / "missions" / "harbour_turns.toml")
    for v in (d, m):
        drive_vehicle(v, np.random.default_rng(1), 50)
        p = pickle.loads(pickle.dumps(v))
        for w in (v, p):
            drive_vehicle(w, np.random.default_rng(2), 50)
        same_vehicle(v, p)


def drive_fleet(f, rng, steps):
    n = f.n
    for k in range(steps):
        a = np.column_stack([rng.uniform(-20, 100, n), rng.uniform(-100, 100, n)])
        f.step(a)
        if k % 17 == 3:
            f.reset(seed=int(rng.integers(0, 1 << 62)), indices=[int(rng.integers(0, n))],
                    start_radius=20.0, heading_spread=90.0, max_drift=0.3)
        if k % 23 == 4:
            f.post(int(rng.integers(0, n)), "DRIFT_Y", float(rng.uniform(-0.3, 0.3)))
        if k % 31 == 6:
            f.set_drift(rng.uniform(-0.2, 0.2, (n, 2)))
        if k % 43 == 8:
            f.reset(indices=[0], start=np.array([[5.0, 6.0, 70.0]]),
                    drift=np.array([[0.1, 0.0]]))


def same_fleet(a, b):
    assert a._debug_state() == b._debug_state()
    assert a.state.tobytes() == b.state.tobytes()
    assert a.iterations.tolist() == b.iterations.tolist()


@pytest.mark.parametrize("config", [KAYAK, PID], ids=["classic", "v22"])
def test_fleet_pickle_and_deepcopy_are_bit_identical(config):
    f = usim.Fleet(config, 6, dt=0.1, state=list(usim.State.names))
    drive_fleet(f, np.random.default_rng(5), 250)
    p = pickle.loads(pickle.dumps(f))
    c = copy.deepcopy(f)
    same_fleet(f, p)
    same_fleet(f, c)
    assert p.state is not f.state and c.state is not f.state
    for g in (f, p, c):
        drive_fleet(g, np.random.default_rng(6), 150)
    same_fleet(f, p)
    same_fleet(f, c)


def test_a_list_fleet_pickles_in_another_process(tmp_path):
    f = usim.Fleet([KAYAK, PID, KAYAK], dt=0.1, actions=["thrust", "rudder"])
    drive_fleet(f, np.random.default_rng(7), 100)
    blob = tmp_path / "fleet.pickle"
    blob.write_bytes(pickle.dumps(f))
    child = (
        "import pickle, sys, numpy as np\n"
        "f = pickle.loads(open(sys.argv[1], 'rb').read())\n"
        "for k in range(50):\n"
        "    f.step(np.full((3, 2), 30.0 + k))\n"
        "sys.stdout.write(f._debug_state())\n"
    )
    out = subprocess.run([sys.executable, "-c", child, str(blob)], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    for k in range(50):
        f.step(np.full((3, 2), 30.0 + k))
    assert out == f._debug_state()


def test_a_partly_applied_refused_post_is_replayed_too():
    f = usim.Fleet(PID, 2)
    f.step(np.zeros((2, 2)))
    # Applied up to its bad element (as uSimMarineV22 does), then refused.
    with pytest.raises(usim.MessageError):
        f.post(0, "WIND_CONDITIONS", "dir=20, spd=2.5, gust=4", check=False)
    p = pickle.loads(pickle.dumps(f))
    for g in (f, p):
        for _ in range(20):
            g.step(np.full((2, 2), 50.0))
    same_fleet(f, p)


def test_history_budget_trimmed_by_resets_and_refusals():
    # Each step records 2 x 2 float64 + 16 bytes = 48 bytes.
    f = usim.Fleet(KAYAK, 2, history_bytes=48 * 100)
    for _ in range(99):
        f.step(np.full((2, 2), 50.0))
    pickle.dumps(f)
    for _ in range(10):
        f.step(np.full((2, 2), 50.0))
    with pytest.raises(TypeError, match="budget"):
        pickle.dumps(f)
    c = copy.deepcopy(f)                 # a clone needs no history
    same_fleet(f, c)
    f.reset(indices=[0])                 # not every vehicle: still refused
    with pytest.raises(TypeError, match="budget"):
        pickle.dumps(f)
    f.reset()                            # a new history starts
    for _ in range(30):
        f.step(np.full((2, 2), 60.0))
    assert 0 < f.history_bytes <= 48 * 100
    p = pickle.loads(pickle.dumps(f))
    same_fleet(f, p)
    # Resets drop what no vehicle depends on: an RL loop's history stays
    # bounded by its episodes, not its run.
    g = usim.Fleet(KAYAK, 2)
    for ep in range(20):
        g.reset(seed=ep)
        for _ in range(50):
            g.step(np.full((2, 2), 50.0))
    assert g.history_bytes < 60 * 48 + 200
    same_fleet(g, pickle.loads(pickle.dumps(g)))
    with pytest.raises(TypeError, match="history_bytes=0"):
        pickle.dumps(usim.Fleet(KAYAK, 2, history_bytes=0))
    v = usim.Vehicle(KAYAK, history_bytes=100)
    for _ in range(10):
        v.post("DESIRED_THRUST", 50.0)
        v.step()
    with pytest.raises(TypeError, match="budget"):
        pickle.dumps(v)
    same_vehicle(v, copy.deepcopy(v))


def test_a_bad_snapshot_is_refused_not_crashed():
    for bad in [None, (), (99,), "x", (1, [], [], 0, None, (0.1, 0.0), ([], []), 0, [])]:
        with pytest.raises((ValueError, TypeError)):
            usim.Fleet._restore(bad)
        with pytest.raises((ValueError, TypeError)):
            usim.Vehicle._restore(bad)


def test_copies_of_copies_share_the_history_and_still_pickle():
    """A search tree: copy, step, copy, step ... The copies share their
    common history (deepcopy does not grow with it), each still pickles
    to itself, and dropping a 20,000-deep chain is fine."""
    v = usim.Vehicle(KAYAK)
    line = [v]
    for k in range(20_000):
        w = copy.deepcopy(line[-1])
        w.post("DESIRED_THRUST", float(k % 90))
        w.step()
        line.append(w)
    last = line[-1]
    assert last.k == 20_000
    same_vehicle(last, pickle.loads(pickle.dumps(last)))
    mid = line[7_000]
    same_vehicle(mid, pickle.loads(pickle.dumps(mid)))
    assert v.k == 0
    del line, w, mid
    same_vehicle(last, pickle.loads(pickle.dumps(last)))
