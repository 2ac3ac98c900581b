"""Vehicle stepped by hand with a mission's mail equals the replay."""

import math

import numpy as np
import pytest

import usim_marine as usim
from conftest import REPO

MISSIONS = sorted((REPO / "tests" / "golden").glob("*.toml")) + sorted(
    (REPO / "tests" / "golden_v22").glob("*.v22.toml")
) + [
    REPO / "missions" / n
    for n in ("harbour_turns.toml", "lawnmower_pid.toml", "dive.toml", "zigzag_timed.toml",
              "gusts.toml", "reset_tour.toml", "differential.toml")
]


def by_hand(mission):
    """Replay `mission` by hand: every due post (file order) through
    Vehicle.post, then Vehicle.step, row by row as the replay writes them.
    A mission's mail is not checked as `usim post` checks (a partly bad
    WIND_CONDITIONS is applied up to its bad element): check=False."""
    info = usim.mission_info(mission)
    v = usim.Vehicle.from_mission(mission)
    posts = sorted(enumerate(info["posts"]), key=lambda ip: (ip[1][0], ip[0]))
    nxt, rows, dropped = 0, [v.values()], 0
    dt, pat = info["dt"], info["dt_pattern"]
    rel = 0.0
    for k in range(1, info["steps"] + 1):
        rel = rel + pat[(k - 1) % len(pat)] if pat else k * dt
        batch = []
        while nxt < len(posts) and posts[nxt][1][0] <= rel + 1e-9:
            batch.append(posts[nxt])
            nxt += 1
        for _, (t, var, value, veh, line) in sorted(batch):
            try:
                v.post(var, value, check=False)
            except ValueError:
                dropped += 1
        if pat:
            v.step_to(rel)
        else:
            v.step(dt)
        if k % info["output_every"] == 0 or k == info["steps"]:
            rows.append(v.values())
    return np.array(rows), v


@pytest.mark.parametrize("mission", MISSIONS, ids=lambda p: p.name)
def test_vehicle_by_hand_equals_replay(mission):
    run = usim.replay(mission)
    ours, _ = by_hand(mission)
    theirs = run.as_array()
    assert ours.shape == theirs.shape
    # t: the replay column is rounded to the microsecond as the CSV prints it.
    ours[:, 0] = np.round(ours[:, 0] * 1e6) / 1e6
    same = (ours.view(np.uint64) == theirs.view(np.uint64)) | (np.isnan(ours) & np.isnan(theirs))
    bad = np.argwhere(~same)
    assert len(bad) == 0, f"row {bad[0][0]} column {usim.State.names[bad[0][1]]}"


def test_state_fields_and_publications_classic():
    v = usim.Vehicle(REPO / "configs" / "kayak.toml")
    assert v.state.k == 0 and v.state.x == 0.0
    v.post("DESIRED_THRUST", "80")  # as an MQTT payload
    v.post("DESIRED_RUDDER", 20.0)
    v.run_until(10.0)
    s = v.state
    assert v.k == 100 and abs(v.t - 10.0) < 1e-9 and s.k == 100
    assert s.thrust == 80.0 and s.rudder != 0.0
    assert math.hypot(s.x, s.y) > 3.0 and 0.0 <= s.heading < 360.0
    pubs = dict(v.publications())
    assert pubs["NAV_X"] == s.x and pubs["NAV_Y"] == s.y
    assert "NAV_LAT" in pubs and pubs["SIMULATION_MODE"] == "TRUE"
    assert "m/s" in usim.State.speed.__doc__ and "degrees" in usim.State.heading.__doc__


def test_v22_pid_vehicle_holds_a_heading():
    v = usim.Vehicle(REPO / "configs" / "v22_pid_boat.toml", dt=0.1)
    assert v.is_v22
    v.step()  # V22 drops mail handled at its first iteration (as the C++ app)
    v.post("DESIRED_SPEED", 2.0)
    v.post("DESIRED_HEADING", 90.0)
    v.run_until(120.0)
    s = v.state
    d = (s.heading - 90.0 + 180.0) % 360.0 - 180.0
    assert abs(d) < 5.0, s
    assert s.x > 50.0


def test_vehicle_from_dict_equals_from_file():
    text = (REPO / "configs" / "kayak.toml").read_text()
    d = {
        "name": "kayak", "prefix": "NAV", "start_pos": "x=0, y=0, heading=0, speed=0",
        "thrust_map": "-100:-1.2, -50:-0.6, 20:0.5, 50:1.2, 80:1.8, 100:2.0",
        "turn_rate": 60, "max_acceleration": 0.4, "max_deceleration": 0.5,
        "max_rudder_degs_per_sec": 40, "lat_origin": 42.358456,
        "lon_origin": -71.087589, "geodesy": "utm", "app_tick": 10,
    }
    assert "max_rudder_degs_per_sec = 40" in text
    a, b = usim.Vehicle(text), usim.Vehicle(d)
    for v in (a, b):
        v.post("DESIRED_THRUST", 60)
        v.post("DESIRED_RUDDER", -30)
        v.run_until(30.0)
    assert np.array_equal(a.values(), b.values(), equal_nan=True)
