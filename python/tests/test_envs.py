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
