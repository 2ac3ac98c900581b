"""Gymnasium environments on usim (``pip install usim-marine[gym]``).

``usim/WaypointFollow-v0``: steer one vehicle through a sequence of
waypoints with thrust and rudder. Registered when :mod:`usim_marine` is
imported; ``gymnasium.make_vec("usim/WaypointFollow-v0", num_envs=N,
vectorization_mode="vector_entry_point")`` gives :class:`WaypointFollowVectorEnv`,
which steps all N vehicles in one :class:`usim_marine.Fleet` call (no
Python loop over environments).

Action (float32, in [-1, 1]^2): thrust = 50·(a0 + 1) percent (0..100),
rudder = 100·a1 percent. One env step is ``frame_skip`` model steps of
``dt`` s (default 2 × 0.1 s).

Observation (float32, 8): the next waypoint in the body frame (forward,
starboard) / 100 m, sin and cos of the heading error to it, speed / 2 m/s,
the heading error rate proxy sin(error)·speed/2, the distance / 100 m and
the fraction of waypoints reached (each clipped to [-10, 10]).

Reward: progress towards the waypoint (m) − 0.01·|heading error|/180° per
step, +10 per waypoint reached (within ``radius`` m). The episode ends
(terminated) after the last waypoint, and is truncated after
``max_steps``. Domain randomisation (seeded): start within
``start_radius`` m and ±``heading_spread``°, and a drift (current) of up to
``max_drift`` m/s in a uniform direction.

Rendering: ``render_mode="rgb_array"`` gives ``render()`` frames from
above (north up) drawn by usim's plotting code: waypoints, the track, the
hull (the vector env: one frame per sub-environment).

Info (vector env): ``waypoint`` and, on steps where episodes end,
``episode`` = {``r``, ``l``, ``t``} with the mask ``_episode``, as
Gymnasium's ``RecordEpisodeStatistics`` gives them.
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import gymnasium as gym
from gymnasium import spaces

from ._usim import Fleet, _render_scene

ENV_ID = "usim/WaypointFollow-v0"

#: The vehicle of the environments: a kayak-sized surface vessel
#: (as configs/kayak.toml in the repository, without geodesy).
KAYAK: Dict[str, Any] = {
    "name": "kayak",
    "prefix": "NAV",
    "start_pos": "x=0, y=0, heading=0, speed=0",
    "thrust_map": "-100:-1.2, -50:-0.6, 20:0.5, 50:1.2, 80:1.8, 100:2.0",
    "turn_rate": 60,
    "max_acceleration": 0.4,
    "max_deceleration": 0.5,
    "max_rudder_degs_per_sec": 40,
}

DEFAULT_WAYPOINTS = ((0.0, 60.0), (60.0, 60.0), (60.0, 0.0), (0.0, 0.0))

_STATE = ("x", "y", "speed", "heading")

#: Hull length drawn by ``render()``, m (a kayak's).
_HULL_M = 4.0

#: Frame size of ``render()``, pixels (width, height).
RENDER_SIZE = (400, 400)


def _check_render_mode(mode: Optional[str]) -> Optional[str]:
    if mode not in (None, "rgb_array"):
        raise ValueError(
            f"render_mode {mode!r}: only 'rgb_array' (frames as (h, w, 3) uint8 arrays) "
            "is offered; a window ('human') is not"
        )
    return mode


class _Core:
    """The vectorised task on a Fleet of n vehicles (shared by both envs)."""

    def __init__(
        self,
        n: int,
        config: Any,
        waypoints: Sequence[Tuple[float, float]],
        radius: float,
        dt: float,
        frame_skip: int,
        max_steps: int,
        start_radius: float,
        heading_spread: float,
        max_drift: float,
    ) -> None:
        self.fleet = Fleet(config, n, dt=dt, state=list(_STATE))
        self.n = n
        self.wp = np.asarray(waypoints, dtype=np.float64).reshape(-1, 2)
        if len(self.wp) == 0 or not np.all(np.isfinite(self.wp)):
            raise ValueError("waypoints must be a non-empty list of finite (x, y), m")
        self.radius = float(radius)
        self.frame_skip = int(frame_skip)
        self.max_steps = int(max_steps)
        self.rand = (float(start_radius), float(heading_spread), float(max_drift))
        self.idx = np.zeros(n, dtype=np.int64)
        self.steps = np.zeros(n, dtype=np.int64)
        self.dist = np.zeros(n)
        self.sp = np.zeros((n, 2))
        self.track: Optional[np.ndarray] = None  # (n, max_steps + 1, 2) when rendering
        self.track_len = np.zeros(n, dtype=np.int64)

    def keep_tracks(self) -> None:
        """Record each env's positions for :meth:`frame` (render_mode set)."""
        self.track = np.zeros((self.n, self.max_steps + 1, 2))

    def _record(self, ids: np.ndarray) -> None:
        if self.track is None:
            return
        at = np.minimum(self.track_len[ids], self.track.shape[1] - 1)
        self.track[ids, at] = self.fleet.state[ids, :2]
        self.track_len[ids] = at + 1

    def frame(self, i: int, size: Tuple[int, int]) -> np.ndarray:
        """Env ``i`` seen from above (usim's plotting code): its track, hull,
        the waypoints (the next one filled), an ``(h, w, 3)`` uint8 array."""
        s = self.fleet.state[i]
        track = None if self.track is None else self.track[i, : self.track_len[i]]
        pts = [self.wp, s[None, :2]] + ([track] if track is not None and len(track) else [])
        allp = np.concatenate(pts)
        allp = allp[np.all(np.isfinite(allp), axis=1)]
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        pad = 0.1 * float(max(hi[0] - lo[0], hi[1] - lo[1], 10.0)) + self.radius
        extent = (lo[0] - pad, lo[1] - pad, hi[0] + pad, hi[1] + pad)
        nxt = int(min(self.idx[i], len(self.wp) - 1))
        goals = [
            (float(x), float(y), self.radius, j == nxt and self.idx[i] < len(self.wp))
            for j, (x, y) in enumerate(self.wp)
        ]
        vessel = (float(s[0]), float(s[1]), float(s[3]), _HULL_M, track)
        return _render_scene(int(size[0]), int(size[1]), extent, [vessel], goals)

    def reset(self, rng: np.random.Generator, which: Optional[np.ndarray] = None) -> None:
        ids = np.arange(self.n) if which is None else np.flatnonzero(which)
        if len(ids) == 0:
            return
        seed = int(rng.integers(0, 2**63 - 1))
        r, h, d = self.rand
        self.fleet.reset(seed, ids.tolist(), start_radius=r, heading_spread=h, max_drift=d)
        self.idx[ids] = 0
        self.steps[ids] = 0
        s = self.fleet.state
        self.dist[ids] = np.hypot(*(self.wp[0] - s[ids, :2]).T)
        self.track_len[ids] = 0
        self._record(ids)

    def observe(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.fleet.state
        wp = self.wp[np.minimum(self.idx, len(self.wp) - 1)]
        dx, dy = wp[:, 0] - s[:, 0], wp[:, 1] - s[:, 1]
        dist = np.hypot(dx, dy)
        h = np.radians(s[:, 3])
        # Body frame: forward along the heading, starboard to its right.
        fwd = dx * np.sin(h) + dy * np.cos(h)
        stb = dx * np.cos(h) - dy * np.sin(h)
        err = np.arctan2(stb, fwd)
        obs = np.stack(
            [
                fwd / 100.0,
                stb / 100.0,
                np.sin(err),
                np.cos(err),
                s[:, 2] / 2.0,
                np.sin(err) * s[:, 2] / 2.0,
                dist / 100.0,
                self.idx / len(self.wp),
            ],
            axis=1,
        )
        return np.clip(obs, -10.0, 10.0).astype(np.float32), dist, err

    def step(self, actions: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        a = np.clip(np.asarray(actions, dtype=np.float64).reshape(self.n, 2), -1.0, 1.0)
        a = np.nan_to_num(a, nan=0.0)
        self.sp[:, 0] = 50.0 * (a[:, 0] + 1.0)
        self.sp[:, 1] = 100.0 * a[:, 1]
        for _ in range(self.frame_skip):
            self.fleet.step(self.sp)
        self.steps += 1
        if self.track is not None:
            self._record(np.arange(self.n))
        obs, dist, err = self.observe()
        reward = (self.dist - dist) - 0.01 * np.abs(np.degrees(err)) / 180.0
        reached = dist < self.radius
        reward = reward + 10.0 * reached
        self.idx = self.idx + reached
        done = self.idx >= len(self.wp)
        if np.any(reached):
            obs, dist, _ = self.observe()
        self.dist = dist
        trunc = (self.steps >= self.max_steps) & ~done
        return obs, reward.astype(np.float64), done, trunc


_OBS_SPACE = spaces.Box(-10.0, 10.0, shape=(8,), dtype=np.float32)
_ACT_SPACE = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)


class WaypointFollowEnv(gym.Env):
    """``usim/WaypointFollow-v0``: one vehicle, waypoints, thrust and rudder
    (see the module docstring for spaces and reward)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 5}

    def __init__(
        self,
        config: Any = None,
        waypoints: Sequence[Tuple[float, float]] = DEFAULT_WAYPOINTS,
        radius: float = 5.0,
        dt: float = 0.1,
        frame_skip: int = 2,
        max_steps: int = 1500,
        start_radius: float = 5.0,
        heading_spread: float = 30.0,
        max_drift: float = 0.2,
        render_mode: Optional[str] = None,
        render_size: Tuple[int, int] = RENDER_SIZE,
    ) -> None:
        self.render_mode = _check_render_mode(render_mode)
        self._render_size = (int(render_size[0]), int(render_size[1]))
        self._core = _Core(
            1,
            KAYAK if config is None else config,
            waypoints,
            radius,
            dt,
            frame_skip,
            max_steps,
            start_radius,
            heading_spread,
            max_drift,
        )
        self.observation_space = _OBS_SPACE
        self.action_space = _ACT_SPACE
        self.metadata = {**type(self).metadata, "render_fps": 1.0 / (dt * frame_skip)}
        if self.render_mode is not None:
            self._core.keep_tracks()

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self._core.reset(self.np_random)
        obs, _, _ = self._core.observe()
        return obs[0], {}

    def step(self, action):
        obs, r, done, trunc = self._core.step(np.asarray(action).reshape(1, 2))
        info = {"waypoint": int(self._core.idx[0])}
        return obs[0], float(r[0]), bool(done[0]), bool(trunc[0]), info

    def render(self):
        """With ``render_mode="rgb_array"``: the scene from above as an
        ``(h, w, 3)`` uint8 array (track, hull, waypoints; north up)."""
        if self.render_mode is None:
            return None
        return self._core.frame(0, self._render_size)


class WaypointFollowVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` WaypointFollow environments stepped together on one
    :class:`usim_marine.Fleet` (autoreset: next step, as Gymnasium's
    default: after an episode ends, the next ``step`` resets that
    sub-environment and returns its first observation with reward 0).
    ``info`` carries per-env ``waypoint`` and the episode statistics
    ``episode`` / ``_episode`` (see :meth:`_info`); ``episode_stats=False``
    leaves the latter out (to wrap it in Gymnasium's own
    ``RecordEpisodeStatistics``, which refuses an ``info`` that has them)."""

    metadata = {
        "render_modes": ["rgb_array"],
        "render_fps": 5,
        "autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        episode_stats: bool = True,
        render_mode: Optional[str] = None,
        render_size: Tuple[int, int] = RENDER_SIZE,
        **kwargs: Any,
    ) -> None:
        self.render_mode = _check_render_mode(render_mode)
        self._render_size = (int(render_size[0]), int(render_size[1]))
        self._stats = bool(episode_stats)
        config = kwargs.pop("config", None)
        args = dict(
            waypoints=DEFAULT_WAYPOINTS,
            radius=5.0,
            dt=0.1,
            frame_skip=2,
            max_steps=1500,
            start_radius=5.0,
            heading_spread=30.0,
            max_drift=0.2,
        )
        args.update(kwargs)
        self.num_envs = int(num_envs)
        self._core = _Core(self.num_envs, KAYAK if config is None else config, **args)
        self.metadata = {
            **type(self).metadata,
            "render_fps": 1.0 / (float(args["dt"]) * int(args["frame_skip"])),
        }
        if self.render_mode is not None:
            self._core.keep_tracks()
        self.single_observation_space = _OBS_SPACE
        self.single_action_space = _ACT_SPACE
        self.observation_space = gym.vector.utils.batch_space(_OBS_SPACE, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(_ACT_SPACE, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._np_random = None
        self._episodes = _EpisodeStats(self.num_envs)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
        elif self._np_random is None:
            self._np_random = np.random.default_rng()
        self._core.reset(self._np_random)
        self._autoreset[:] = False
        self._episodes.reset()
        obs, _, _ = self._core.observe()
        return obs, {}

    def step(self, actions):
        if self._np_random is None:
            raise RuntimeError("call reset() before step()")
        obs, r, done, trunc = self._core.step(actions)
        if np.any(self._autoreset):
            ar = self._autoreset
            self._core.reset(self._np_random, ar)
            obs, _, _ = self._core.observe()
            r[ar] = 0.0
            done[ar] = False
            trunc[ar] = False
        info = self._info(r, done | trunc)
        self._autoreset = done | trunc
        return obs, r, done, trunc, info

    def render(self):
        """With ``render_mode="rgb_array"``: a tuple of one frame per
        sub-environment (as ``SyncVectorEnv`` renders), each an ``(h, w, 3)``
        uint8 array."""
        if self.render_mode is None:
            return None
        return tuple(self._core.frame(i, self._render_size) for i in range(self.num_envs))

    def _info(self, reward: np.ndarray, ended: np.ndarray) -> Dict[str, Any]:
        """Per-env info by Gymnasium's vector conventions: ``waypoint`` (the
        index of the next waypoint, int64) with its mask ``_waypoint``;
        on a step where some episodes end, ``episode`` = {``r``: return,
        ``l``: length in env steps, ``t``: wall time in s} for those envs
        (0 elsewhere) and ``_episode``, the mask of the envs that ended,
        as ``gymnasium.wrappers.vector.RecordEpisodeStatistics`` gives
        them (the autoreset step starts a new episode and is not counted)."""
        info: Dict[str, Any] = {
            "waypoint": self._core.idx.copy(),
            "_waypoint": np.ones(self.num_envs, dtype=bool),
        }
        if not self._stats:
            return info
        self._episodes.record(info, reward, ended, self._autoreset)
        return info


class _EpisodeStats:
    """Per-env episode return, length and start time of a vector env, as
    ``gymnasium.wrappers.vector.RecordEpisodeStatistics`` keeps them (the
    autoreset step starts a new episode and is not counted)."""

    def __init__(self, num_envs: int) -> None:
        self.ret = np.zeros(num_envs)
        self.length = np.zeros(num_envs, dtype=np.int64)
        self.start = np.zeros(num_envs)

    def reset(self) -> None:
        self.ret[:] = 0.0
        self.length[:] = 0
        self.start[:] = time.perf_counter()

    def record(self, info: Dict[str, Any], reward: np.ndarray, ended: np.ndarray,
               autoreset: np.ndarray) -> None:
        """Count one step; where episodes end, add ``episode`` = {``r``,
        ``l``, ``t`` (wall s)} (0 elsewhere) and its mask ``_episode``."""
        now = time.perf_counter()
        self.ret[autoreset] = 0.0
        self.length[autoreset] = 0
        self.start[autoreset] = now
        live = ~autoreset
        self.ret[live] += reward[live]
        self.length[live] += 1
        if np.any(ended):
            info["episode"] = {
                "r": np.where(ended, self.ret, 0.0),
                "l": np.where(ended, self.length, 0),
                "t": np.where(ended, np.round(now - self.start, 6), 0.0),
            }
            info["_episode"] = ended.copy()


def register() -> None:
    """Register ``usim/WaypointFollow-v0`` (idempotent)."""
    if ENV_ID in gym.registry:
        return
    gym.register(
        id=ENV_ID,
        entry_point="usim_marine.envs:WaypointFollowEnv",
        vector_entry_point="usim_marine.envs:WaypointFollowVectorEnv",
    )
