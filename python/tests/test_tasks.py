"""The single-agent tasks StationKeeping-v0, PathFollowing-v0, Docking-v0:
registration, check_env (with rendering), seeding, the vector envs, and
per task a behaviour checked against a hand calculation or a scripted
controller."""

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
import usim_marine  # noqa: E402,F401  (registers the environments)
from usim_marine.tasks import (  # noqa: E402
    DockingVectorEnv,
    PathFollowingVectorEnv,
    StationKeepingVectorEnv,
)

IDS = ["usim/StationKeeping-v0", "usim/PathFollowing-v0", "usim/Docking-v0"]
HULL = (31, 119, 180)  # the first vessel's colour (usim plot's palette)


@pytest.mark.parametrize("env_id", IDS)
def test_registered_checked_and_seeded(env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make(env_id).unwrapped)
    check_env(gym.make(env_id, render_mode="rgb_array").unwrapped)
    env = gym.make(env_id)

    def rollout(seed):
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [obs]
        for _ in range(200):
            obs, r, term, trunc, _ = env.step(env.action_space.sample())
            out.append(np.append(obs, r))
            if term or trunc:
                break
        return out

    a, b, c = rollout(3), rollout(3), rollout(4)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("env_id", IDS)
def test_rgb_array_draws_the_hull(env_id):
    env = gym.make(env_id, render_mode="rgb_array", render_size=(200, 160))
    env.reset(seed=0)
    f = env.render()
    assert f.shape == (160, 200, 3) and f.dtype == np.uint8
    assert np.count_nonzero(np.all(f == HULL, axis=2)) > 5
    assert gym.make(env_id).unwrapped.render() is None


def test_station_zero_thrust_drifts_with_the_current_and_reward_falls():
    """At rest with zero thrust the kayak moves with the drift: after k env
    steps of 0.2 s it is at start + current·0.2·k (docs/model.md §13: the drift
    adds to the velocity over ground), so the reward −d/10 falls."""
    env = gym.make("usim/StationKeeping-v0")
    obs, info = env.reset(seed=1, options={"start": (2.0, 1.0, 0.0), "current": (0.3, -0.1)})
    assert info["distance"] == pytest.approx(np.hypot(2.0, 1.0))
    rewards = []
    for _ in range(100):
        obs, r, term, trunc, info = env.step(np.array([-1.0, 0.0], dtype=np.float32))
        assert not term
        rewards.append(r)
    x, y = 2.0 + 0.3 * 20.0, 1.0 - 0.1 * 20.0
    assert info["distance"] == pytest.approx(np.hypot(x, y), abs=1e-9)
    assert rewards[-1] == pytest.approx(-np.hypot(x, y) / 10.0, abs=1e-9)
    assert rewards[-1] < rewards[0] and np.all(np.diff(rewards[5:]) < 0)
    # velocity over ground in the body frame (heading north): forward = north
    assert obs[5] == pytest.approx(-0.1 / 2.0, abs=1e-6) and obs[6] == pytest.approx(0.3 / 2.0, abs=1e-6)


def station_ctl(o):
    err = np.arctan2(o[2], o[3])
    return np.array([2 * np.clip(o[7] * 50 / 10, 0.1, 1) - 1, np.clip(2 * err, -1, 1)], np.float32)


def test_station_a_simple_controller_holds_the_point_and_truncates():
    env = gym.make("usim/StationKeeping-v0", max_steps=600)
    for seed in (0, 2):
        obs, _ = env.reset(seed=seed)
        dist, ret, steps = [], 0.0, 0
        while True:
            obs, r, term, trunc, info = env.step(station_ctl(obs))
            ret, steps = ret + r, steps + 1
            dist.append(info["distance"])
            assert not term
            if trunc:
                break
        assert steps == 600
        assert np.mean(dist[200:]) < 2.0 and max(dist[200:]) < 5.0
        obs, _ = env.reset(seed=seed)
        idle = sum(env.step(np.array([-1.0, 0.0], np.float32))[1] for _ in range(600))
        assert ret > 3 * idle


def test_path_cross_track_and_progress_by_hand():
    """Path (0,0)→(0,100)→(100,100): a point (3, 40) is 3 m to starboard of
    the northbound leg, 40 m along, 60 m left, a 90° turn ahead; (50, 104)
    is 4 m to port of the eastbound leg, 150 m along the 200 m path."""
    env = gym.make("usim/PathFollowing-v0", path=[(0, 0), (0, 100), (100, 100)])
    obs, info = env.reset(seed=0, options={"start": (3.0, 40.0, 10.0), "current": (0.0, 0.0)})
    assert info["cross_track"] == pytest.approx(3.0) and info["progress"] == pytest.approx(40.0)
    assert obs[0] == pytest.approx(3.0 / 20) and obs[4] == pytest.approx(40.0 / 200)
    assert obs[5] == pytest.approx(0.6) and obs[6] == pytest.approx(1.0) and abs(obs[7]) < 1e-6
    # heading 10°, path 0°: the path lies 10° to port
    assert obs[1] == pytest.approx(np.sin(np.radians(-10.0)), abs=1e-6)
    obs, info = env.reset(seed=0, options={"start": (50.0, 104.0, 90.0), "current": (0.0, 0.0)})
    assert info["segment"] == 1
    assert info["cross_track"] == pytest.approx(-4.0) and info["progress"] == pytest.approx(150.0)
    assert obs[5] == pytest.approx(0.5) and obs[7] == pytest.approx(1.0)


def path_ctl(o, look=8.0):
    rel = np.arctan2(o[1], o[2]) - np.arctan(o[0] * 20 / look)
    return np.array([0.2, np.clip(2 * rel, -1, 1)], np.float32)


def test_path_line_of_sight_follows_and_straight_ahead_gets_lost():
    env = gym.make("usim/PathFollowing-v0")
    obs, _ = env.reset(seed=0)
    ctes, ret = [], 0.0
    while True:
        obs, r, term, trunc, info = env.step(path_ctl(obs))
        ret += r
        ctes.append(abs(info["cross_track"]))
        if term or trunc:
            break
    assert term and info["progress"] == pytest.approx(320.0)   # 100 + 100 + 120 m
    assert max(ctes[50:]) < 3.0 and ret > 300.0
    # Straight north from (0, 0): the path turns to starboard (north-east)
    # at (0, 100), so the vehicle ends up to port of the second leg
    # (negative error) and is lost past 30 m, with the −10 penalty.
    obs, _ = env.reset(seed=0, options={"start": (0.0, 0.0, 0.0), "current": (0.0, 0.0)})
    while True:
        obs, r, term, trunc, info = env.step(np.array([1.0, 0.0], np.float32))
        if term or trunc:
            break
    assert term and info["cross_track"] < -30.0 and r < -9.0


def dock_ctl(o):
    u, v, hrel, spd = o[0] * 50, o[1] * 10, np.arctan2(o[2], o[3]), o[4] * 2
    des = -np.arctan(v / max(6.0, -u * 0.5))
    vdes = np.clip(0.05 * (-u) + 0.2, 0.2, 1.2) if u < 0 else 0.1
    thrust = np.clip(vdes / 2.0 + 0.5 * (vdes - spd), 0, 1)
    return np.array([2 * thrust - 1, np.clip(2 * (des - hrel), -1, 1)], np.float32)


def test_docking_a_scripted_approach_succeeds_and_full_speed_hits_the_wall():
    env = gym.make("usim/Docking-v0")
    for seed in range(4):
        obs, _ = env.reset(seed=seed)
        while True:
            obs, r, term, trunc, info = env.step(dock_ctl(obs))
            if term or trunc:
                break
        assert term and info["docked"] and not info["collision"], seed
        assert r > 40.0 and obs[9] == 1.0
        s = env.unwrapped._core.fleet.state[0]
        assert abs(s[0]) < 3.0 - 2.0 * np.sin(np.radians(15)) and 2.0 <= s[1] <= 8.0 and s[2] <= 0.3
    # Full thrust along the axis from 20 m out: in through the mouth, on
    # into the far wall at y = 10 m; the bow (2 m ahead) touches it.
    obs, _ = env.reset(seed=0, options={"start": (0.0, -20.0, 0.0), "current": (0.0, 0.0)})
    ys = []
    while True:
        obs, r, term, trunc, info = env.step(np.array([1.0, 0.0], np.float32))
        ys.append(env.unwrapped._core.fleet.state[0, 1])
        if term or trunc:
            break
    assert term and info["collision"] and not info["docked"] and r < -40.0
    assert 8.0 <= ys[-1] < 8.5 and ys[-2] < 8.0


def test_docking_side_wall_from_an_angle():
    env = gym.make("usim/Docking-v0")
    env.reset(seed=0, options={"start": (-8.0, 2.0, 60.0), "current": (0.0, 0.0)})
    while True:
        _, r, term, trunc, info = env.step(np.array([0.0, 0.0], np.float32))
        if term or trunc:
            break
    assert term and info["collision"]


@pytest.mark.parametrize("cls", [StationKeepingVectorEnv, PathFollowingVectorEnv, DockingVectorEnv])
def test_vector_envs_autoreset_and_episode_statistics(cls):
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    n = 3
    ours = cls(num_envs=n, max_steps=6)
    theirs = RecordEpisodeStatistics(cls(num_envs=n, max_steps=6, episode_stats=False))
    o1, i1 = ours.reset(seed=2)
    o2, _ = theirs.reset(seed=2)
    assert o1.shape == (n, ours.single_observation_space.shape[0]) and np.array_equal(o1, o2)
    assert ours.observation_space.contains(o1)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(20):
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        _, r1, t1, u1, i1 = ours.step(a)
        _, r2, t2, u2, i2 = theirs.step(a)
        assert np.array_equal(r1, r2) and np.array_equal(t1 | u1, t2 | u2)
        if "_episode" in i2:
            ends += 1
            assert np.array_equal(i1["_episode"], i2["_episode"])
            assert np.array_equal(i1["episode"]["r"], i2["episode"]["r"])
            assert np.array_equal(i1["episode"]["l"], i2["episode"]["l"])
    assert ends >= 2
    v = cls(num_envs=2, render_mode="rgb_array", render_size=(80, 60))
    v.reset(seed=1)
    frames = v.render()
    assert len(frames) == 2 and frames[0].shape == (60, 80, 3)
    venv = gym.make_vec(IDS[[StationKeepingVectorEnv, PathFollowingVectorEnv, DockingVectorEnv].index(cls)],
                        num_envs=2, vectorization_mode="vector_entry_point")
    assert venv.reset(seed=0)[0].shape[0] == 2


def test_bad_arguments_are_refused_with_their_names():
    with pytest.raises(ValueError, match="path"):
        gym.make("usim/PathFollowing-v0", path=[(0, 0)])
    with pytest.raises(ValueError, match="current"):
        gym.make("usim/StationKeeping-v0", min_current=0.5, max_current=0.1)
    env = gym.make("usim/Docking-v0")
    with pytest.raises(ValueError, match="unknown"):
        env.reset(seed=0, options={"speed": 1.0})
