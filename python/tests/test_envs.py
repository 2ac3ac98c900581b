"""Gymnasium: registration, env checker, seeded determinism, vector env."""

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
import usim_marine  # noqa: E402,F401  (registers the environments)
from usim_marine.envs import WaypointFollowVectorEnv  # noqa: E402


def test_registered_and_passes_the_env_checker():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("usim/WaypointFollow-v0")
    check_env(env.unwrapped)


def rollout(env, seed, n=300):
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [obs]
    rewards = []
    for _ in range(n):
        obs, r, term, trunc, _ = env.step(env.action_space.sample())
        out.append(obs)
        rewards.append(r)
        if term or trunc:
            break
    return np.array(out), np.array(rewards)


def test_same_seed_same_episode():
    env = gym.make("usim/WaypointFollow-v0")
    a = rollout(env, 7)
    b = rollout(env, 7)
    c = rollout(env, 8)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_a_simple_controller_reaches_waypoints():
    env = gym.make("usim/WaypointFollow-v0", max_drift=0.0)
    obs, _ = env.reset(seed=0)
    total, reached = 0.0, 0
    for _ in range(1500):
        # steer towards the waypoint: rudder ~ heading error, full-ish thrust
        rudder = float(np.clip(np.arctan2(obs[2], obs[3]) * 2.0, -1, 1))
        obs, r, term, trunc, info = env.step(np.array([0.6, rudder], dtype=np.float32))
        total += r
        reached = info["waypoint"]
        if term or trunc:
            break
    assert reached >= 2 and total > 50.0


def test_vector_env_matches_single_envs_and_autoresets():
    n = 8
    venv = gym.make_vec("usim/WaypointFollow-v0", num_envs=n, vectorization_mode="vector_entry_point")
    assert isinstance(venv.unwrapped, WaypointFollowVectorEnv) or isinstance(venv, WaypointFollowVectorEnv)
    obs, _ = venv.reset(seed=5)
    assert obs.shape == (n, 8) and obs.dtype == np.float32
    assert venv.observation_space.contains(obs)
    acts = np.tile(np.array([[0.5, 0.2]], dtype=np.float32), (n, 1))
    for _ in range(50):
        obs, r, term, trunc, _ = venv.step(acts)
        assert obs.shape == (n, 8) and r.shape == (n,) and np.all(np.isfinite(r))
    v2 = WaypointFollowVectorEnv(num_envs=n)
    o2, _ = v2.reset(seed=5)
    v3 = WaypointFollowVectorEnv(num_envs=n)
    o3, _ = v3.reset(seed=5)
    assert np.array_equal(o2, o3)
    # truncation then autoreset on the next step
    short = WaypointFollowVectorEnv(num_envs=3, max_steps=5)
    short.reset(seed=1)
    for _ in range(5):
        _, _, term, trunc, _ = short.step(np.zeros((3, 2), dtype=np.float32))
    assert trunc.all()
    obs, r, term, trunc, _ = short.step(np.zeros((3, 2), dtype=np.float32))
    assert not trunc.any() and np.all(r == 0.0)
    assert short._core.steps.tolist() == [0, 0, 0]


def test_vector_info_has_gymnasiums_episode_statistics():
    """The vector env's own `episode` / `_episode` equal what Gymnasium's
    RecordEpisodeStatistics computes around the same env (the outside
    oracle), episode after episode, with next-step autoresets in between."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    n = 4
    ours = WaypointFollowVectorEnv(num_envs=n, max_steps=7)
    theirs = RecordEpisodeStatistics(
        WaypointFollowVectorEnv(num_envs=n, max_steps=7, episode_stats=False)
    )
    o1, _ = ours.reset(seed=3)
    o2, _ = theirs.reset(seed=3)
    assert np.array_equal(o1, o2)
    rng = np.random.default_rng(0)
    ended_steps = 0
    for k in range(40):
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        _, r1, t1, u1, i1 = ours.step(a)
        _, r2, t2, u2, i2 = theirs.step(a)
        assert np.array_equal(r1, r2) and np.array_equal(t1 | u1, t2 | u2)
        assert i1["waypoint"].shape == (n,) and i1["_waypoint"].all()
        if "_episode" in i2:
            ended_steps += 1
            assert np.array_equal(i1["_episode"], i2["_episode"])
            assert np.array_equal(i1["episode"]["l"], i2["episode"]["l"])
            assert np.array_equal(i1["episode"]["r"], i2["episode"]["r"])
            ended = i1["_episode"]
            assert np.all(i1["episode"]["l"][ended] == 7)
            assert np.all(i1["episode"]["t"][ended] >= 0.0)
            assert np.all(i1["episode"]["t"][~ended] == 0.0)
        else:
            assert "episode" not in i1 and "_episode" not in i1
    # 40 steps of 7-step episodes with a reset step after each: 5 ends.
    assert ended_steps == 5


def test_vector_info_through_make_vec():
    venv = gym.make_vec("usim/WaypointFollow-v0", num_envs=2,
                        vectorization_mode="vector_entry_point", max_steps=3)
    venv.reset(seed=0)
    infos = [venv.step(np.zeros((2, 2), dtype=np.float32))[4] for _ in range(3)]
    assert "episode" not in infos[0] and infos[2]["_episode"].all()
    assert infos[2]["episode"]["l"].tolist() == [3, 3]


HULL = (31, 119, 180)  # the first vessel's colour (usim plot's palette)


def hull_centre(frame):
    rows, cols = np.nonzero(np.all(frame == HULL, axis=2))
    assert len(rows) > 10, "the hull is drawn"
    return rows.mean(), cols.mean()


def test_rgb_array_frames_show_the_vessel_where_it_is():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("usim/WaypointFollow-v0", render_mode="rgb_array")
    check_env(env.unwrapped)           # renders too (render_mode is set)
    env = gym.make("usim/WaypointFollow-v0", render_mode="rgb_array",
                   start_radius=0.0, heading_spread=0.0, max_drift=0.0)
    env.reset(seed=0)
    f0 = env.render()
    assert f0.shape == (400, 400, 3) and f0.dtype == np.uint8
    r0, c0 = hull_centre(f0)
    # Full thrust, rudder centred: the kayak starts at (0, 0) heading north
    # (the config) and runs north towards the first waypoint (0, 60).
    for _ in range(40):
        env.step(np.array([1.0, 0.0], dtype=np.float32))
    f1 = env.render()
    r1, c1 = hull_centre(f1)
    assert r1 < r0 - 20, "north is up"
    assert abs(c1 - c0) < 3
    # The hull is longer north-south than east-west (it points north).
    rows, cols = np.nonzero(np.all(f1 == HULL, axis=2))
    assert np.ptp(rows) > np.ptp(cols)
    # The track behind it: pixels of neither the sea nor the hull below it.
    col = int(round(c1))
    below = f1[int(r1) + 8 : int(r0), col]
    assert np.any(np.abs(below.astype(int) - f0[5, 5].astype(int)).sum(axis=1) > 60)
    assert env.metadata["render_fps"] == pytest.approx(5.0)


def test_vector_env_renders_one_frame_per_env_and_refuses_human():
    venv = WaypointFollowVectorEnv(num_envs=3, render_mode="rgb_array", render_size=(160, 120))
    venv.reset(seed=2)
    for _ in range(10):
        venv.step(np.full((3, 2), 0.5, dtype=np.float32))
    frames = venv.render()
    assert len(frames) == 3 and all(f.shape == (120, 160, 3) for f in frames)
    assert not np.array_equal(frames[0], frames[1])    # seeded starts differ
    assert WaypointFollowVectorEnv(num_envs=2).render() is None
    from usim_marine.envs import WaypointFollowEnv

    with pytest.raises(ValueError, match="rgb_array"):
        WaypointFollowEnv(render_mode="human")
    with pytest.raises(ValueError, match="rgb_array"):
        WaypointFollowVectorEnv(num_envs=2, render_mode="ansi")
    # gym.make gives "human" through Gymnasium's own window wrapper over
    # the rgb_array frames (it needs pygame and a display to show them).
    env = gym.make("usim/WaypointFollow-v0", render_mode="human")
    chain, e = [], env
    while hasattr(e, "env"):
        chain.append(type(e).__name__)
        e = e.env
    assert "HumanRendering" in chain and e.render_mode == "rgb_array"


def test_render_scene_draws_hulls_goals_and_cpa_lines():
    from usim_marine import _usim

    f = _usim._render_scene(
        200, 100, (-50.0, -50.0, 50.0, 50.0),
        [(0.0, 0.0, 90.0, 20.0, None), (30.0, -20.0, 0.0, 10.0, np.array([[30.0, -40.0], [30.0, -20.0]]))],
        goals=[(-30.0, 30.0, 5.0, True)],
        cpa_lines=[((0.0, 0.0), (30.0, -20.0))],
    )
    assert f.shape == (100, 200, 3) and f.dtype == np.uint8
    # 1 px per m, centred: (0, 0) at column 100, row 50; the first hull
    # points east.
    assert tuple(f[50, 107]) == HULL and tuple(f[42, 100]) != HULL
    assert tuple(f[20, 70]) != tuple(f[5, 5]), "the goal at (-30, 30)"
    with pytest.raises(ValueError):
        _usim._render_scene(0, 10, (0.0, 0.0, 1.0, 1.0), [])
    with pytest.raises(ValueError):
        _usim._render_scene(10, 10, (0.0, 0.0, float("nan"), 1.0), [])
