"""A multi-agent encounter environment (PettingZoo ``ParallelEnv``) on one
:class:`usim_marine.Fleet` (``pip install usim-marine[marl]``).

:class:`EncounterEnv` runs many scenarios of the encounter set
(:mod:`usim_marine.scenarios`) side by side, every ship of every
scenario a vehicle of the same fleet; ship ``v`` of instance ``j`` is agent
``"e{j}_{v}"`` (``controlled="own"``: only the own ships are agents, the
targets hold course and speed, as in the Imazu problems).

Action (float32, [-1, 1]²): thrust = 50·(a0 + 1) percent, rudder =
100·a1 percent. One env step is ``frame_skip`` model steps of ``dt`` s
(default 4 × 0.5 s).

Observation (float32, 4 + 7k, clipped to [-10, 10]): speed / 5 m/s, sin
and cos of the bearing to the goal relative to the heading, the goal
distance / 3000 m; then for each of the ``k`` nearest other ships of the
same scenario (nearest first; zeros when there are fewer): its position in
the body frame (forward, starboard) / 1000 m, its velocity relative to
ours in the body frame / 5 m/s, the distance at the closest point of
approach (DCPA) / 1000 m, the time to it (TCPA, 0 when separating) / 600 s,
and 1 (a real ship).

Reward per step: progress to the goal / 100 m − Σ over the others of
max(0, 1 − range / 1000 m) (closer than the near-miss range), −20 on
a collision (range < 175 m, one hull length), +10 on arrival (within ``goal_radius``). An
agent terminates on arrival or collision (its ship then stops: thrust and
rudder 0) and is truncated after ``max_steps``.

CPA and ranges are computed as ``src/encounter.rs`` (the encounter
tracker) computes them: relative position ``r`` and velocity ``v`` over
ground, ``t* = max(0, −r·v / v·v)``, ``DCPA = |r + v·t*|``.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import scenarios as _sc
from ._usim import Fleet, _encounter_obs, _render_scene

try:  # PettingZoo and Gymnasium's spaces ([marl] extra)
    from gymnasium import spaces
    from pettingzoo import ParallelEnv
except ImportError:  # pragma: no cover - the core works without them
    spaces = None
    ParallelEnv = object

#: Observation scales: distance (m), speed (m/s), time (s).
_D, _V, _T, _G = 1000.0, _sc.SPEED, _sc.TCPA, 3000.0

#: Frame size of ``render()``, pixels.
RENDER_SIZE = (400, 400)


def cpa(rel_pos: np.ndarray, rel_vel: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """DCPA (m) and TCPA (s, ≥ 0) of relative positions and velocities
    (``(..., 2)`` arrays, other − own), as ``encounter::cpa``."""
    vv = np.einsum("...i,...i->...", rel_vel, rel_vel)
    rv = np.einsum("...i,...i->...", rel_pos, rel_vel)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(vv > 0.0, np.maximum(-rv / np.where(vv > 0, vv, 1.0), 0.0), 0.0)
    d = rel_pos + rel_vel * t[..., None]
    return np.hypot(d[..., 0], d[..., 1]), t


class EncounterCore:
    """The vectorised encounter task on arrays (what :class:`EncounterEnv`
    wraps in dicts): ``n`` ships in ``S`` scenario instances padded to
    ``M`` ships each. ``step(actions)`` takes an ``(n_agents, 2)`` array in
    the order of :attr:`agent_names` and returns ``(obs, reward,
    terminated, truncated)`` arrays."""

    def __init__(
        self,
        scenarios: Sequence[str] = ("crossing_starboard",),
        copies: int = 1,
        k: int = 3,
        dt: float = 0.5,
        frame_skip: int = 4,
        max_steps: int = 600,
        goal_radius: float = 100.0,
        controlled: str = "all",
        start_radius: float = 0.0,
        heading_spread: float = 0.0,
        record: bool = False,
    ) -> None:
        if controlled not in ("all", "own"):
            raise ValueError(f"controlled={controlled!r}: 'all' or 'own'")
        if int(copies) < 1 or int(k) < 1 or int(frame_skip) < 1 or int(max_steps) < 1:
            raise ValueError("copies, k, frame_skip and max_steps must be at least 1")
        self.instances: List[str] = [s for _ in range(int(copies)) for s in scenarios]
        ships = [_sc.vessels(s) for s in self.instances]
        self.S = len(ships)
        self.M = max(len(v) for v in ships)
        self.k = int(k)
        self.valid = np.zeros((self.S, self.M), dtype=bool)
        fidx = np.zeros((self.S, self.M), dtype=np.int64)
        configs, names, goal, speed, ctrl = [], [], [], [], []
        for j, vs in enumerate(ships):
            for m, v in enumerate(vs):
                self.valid[j, m] = True
                fidx[j, m] = len(configs)
                cfg = dict(_sc.SHIP)
                cfg["name"] = v.name
                cfg["start_pos"] = f"x={v.x!r}, y={v.y!r}, heading={v.heading!r}, speed={v.speed!r}"
                configs.append(cfg)
                names.append(f"e{j}_{v.name}")
                goal.append(v.goal)
                speed.append(v.speed)
                ctrl.append(controlled == "all" or m == 0)
        self.fidx = fidx
        self.n = len(configs)
        self.ship_names = names
        self.goal = np.asarray(goal, dtype=np.float64)
        self.nominal = np.asarray(speed, dtype=np.float64)
        self.controlled = np.asarray(ctrl, dtype=bool)
        self.agent_idx = np.flatnonzero(self.controlled)
        self.agent_names = [names[i] for i in self.agent_idx]
        # The scenario instance of each ship (for the pairwise arrays).
        self.inst = np.repeat(np.arange(self.S), self.valid.sum(axis=1))
        self.slot = np.concatenate([np.arange(c) for c in self.valid.sum(axis=1)])
        # First fleet row of each instance (its ships are contiguous rows), then n.
        self.starts = np.concatenate([[0], np.cumsum(self.valid.sum(axis=1))]).astype(np.int64)
        self.dt = float(dt)
        self.frame_skip = int(frame_skip)
        self.max_steps = int(max_steps)
        self.goal_radius = float(goal_radius)
        self.rand = (float(start_radius), float(heading_spread))
        self.fleet = Fleet(configs, dt=self.dt, state=["x", "y", "speed", "heading", "sog", "hog"])
        self.obs_dim = 4 + 7 * self.k
        self.sp = np.zeros((self.n, 2))
        self.hold = np.stack([_sc.thrust_for(1.0) * self.nominal, np.zeros(self.n)], axis=1)
        self.done = np.zeros(self.n, dtype=bool)
        self.arrived = np.zeros(self.n, dtype=bool)
        self.collided = np.zeros(self.n, dtype=bool)
        self.steps = 0
        self._evading = np.zeros(self.n, dtype=bool)
        self.dist = np.zeros(self.n)
        self.min_range = np.full(self.n, np.inf)
        self.t_min = np.zeros(self.n)
        self.record = bool(record)
        self.history: List[np.ndarray] = []

    # -- geometry --------------------------------------------------------
    def _pairs(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per ship, the others of its instance: relative positions and
        velocities (n, M, 2) and a mask (n, M) of real other ships."""
        s = self.fleet.state
        pos = np.zeros((self.S, self.M, 2))
        vel = np.zeros((self.S, self.M, 2))
        h = np.radians(s[:, 5])
        pos[self.inst, self.slot] = s[:, :2]
        vel[self.inst, self.slot, 0] = s[:, 4] * np.sin(h)
        vel[self.inst, self.slot, 1] = s[:, 4] * np.cos(h)
        rp = pos[self.inst] - s[:, None, :2]
        rv = vel[self.inst] - vel[self.inst, self.slot][:, None, :]
        mask = self.valid[self.inst].copy()
        mask[np.arange(self.n), self.slot] = False
        return rp, rv, mask

    def ranges(self) -> Tuple[np.ndarray, np.ndarray]:
        """Each ship's range to each other ship of its instance (n, M), m
        (inf for itself and padding), and the mask of real others."""
        rp, _, mask = self._pairs()
        r = np.where(mask, np.hypot(rp[..., 0], rp[..., 1]), np.inf)
        return r, mask

    def _native(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Observations (n, obs_dim) float32, goal distance, nearest-other
        range and near-miss penalty per ship, in one native pass over the
        fleet (``_encounter_obs``: no per-agent Python work)."""
        return _encounter_obs(self.fleet.state, self.goal, self.starts, self.k, _sc.NEAR_MISS, (_D, _V, _T, _G))

    def observe(self) -> np.ndarray:
        """Observations of every ship (n, obs_dim), float32."""
        return self._native()[0]

    def observe_numpy(self) -> np.ndarray:
        """:meth:`observe` in numpy (the reference the native pass is
        tested against), (n, obs_dim) float32."""
        s = self.fleet.state
        rp, rv, mask = self._pairs()
        rng = np.where(mask, np.hypot(rp[..., 0], rp[..., 1]), np.inf)
        order = np.argsort(rng, axis=1, kind="stable")[:, : self.k]
        rows = np.arange(self.n)[:, None]
        h = np.radians(s[:, 3])[:, None]
        sh, ch = np.sin(h), np.cos(h)
        p, v = rp[rows, order], rv[rows, order]
        real = mask[rows, order]
        dcpa, tcpa = cpa(p, v)
        fwd = p[..., 0] * sh + p[..., 1] * ch
        stb = p[..., 0] * ch - p[..., 1] * sh
        vf = v[..., 0] * sh + v[..., 1] * ch
        vs = v[..., 0] * ch - v[..., 1] * sh
        per = np.stack([fwd / _D, stb / _D, vf / _V, vs / _V, dcpa / _D, tcpa / _T, np.ones_like(fwd)], axis=2)
        per = np.where(real[..., None], per, 0.0)
        if per.shape[1] < self.k:
            per = np.concatenate([per, np.zeros((self.n, self.k - per.shape[1], 7))], axis=1)
        g = self.goal - s[:, :2]
        gd = np.hypot(g[:, 0], g[:, 1])
        gb = np.arctan2(g[:, 0], g[:, 1]) - np.radians(s[:, 3])
        own = np.stack([s[:, 2] / _V, np.sin(gb), np.cos(gb), gd / _G], axis=1)
        obs = np.concatenate([own, per.reshape(self.n, -1)], axis=1)
        return np.clip(np.nan_to_num(obs), -10.0, 10.0).astype(np.float32)

    # -- episode ---------------------------------------------------------
    def reset(self, seed: Optional[int] = None) -> np.ndarray:
        r, hs = self.rand
        if seed is None and (r > 0 or hs > 0):
            seed = int(np.random.default_rng().integers(0, 2**63 - 1))
        self.fleet.reset(seed, start_radius=r, heading_spread=hs)
        self.done[:] = False
        self.arrived[:] = False
        self.collided[:] = False
        self.steps = 0
        self._evading = np.zeros(self.n, dtype=bool)
        s = self.fleet.state
        self.dist = np.hypot(*(self.goal - s[:, :2]).T)
        self.min_range[:] = np.inf
        self.t_min[:] = 0.0
        self.history = [s.copy()] if self.record else []
        self._update_min()
        return self.observe()[self.agent_idx]

    def _update_min(self) -> np.ndarray:
        r, _ = self.ranges()
        least = r.min(axis=1)
        better = least < self.min_range
        self.min_range[better] = least[better]
        self.t_min[better] = self.steps * self.frame_skip * self.dt
        return r

    def step(self, actions: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        a = np.asarray(actions, dtype=np.float64).reshape(len(self.agent_idx), 2)
        a = np.clip(np.nan_to_num(a, nan=0.0), -1.0, 1.0)
        self.sp[:] = self.hold
        self.sp[self.agent_idx, 0] = 50.0 * (a[:, 0] + 1.0)
        self.sp[self.agent_idx, 1] = 100.0 * a[:, 1]
        self.sp[self.done] = 0.0
        for _ in range(self.frame_skip):
            self.fleet.step(self.sp)
        self.steps += 1
        s = self.fleet.state
        if self.record:
            self.history.append(s.copy())
        obs, dist, least, penalty = self._native()
        better = least < self.min_range
        self.min_range[better] = least[better]
        self.t_min[better] = self.steps * self.frame_skip * self.dt
        live = ~self.done
        reward = (self.dist - dist) / 100.0 - penalty
        hit = (least < _sc.COLLISION) & live
        arrive = (dist < self.goal_radius) & live & ~hit
        reward = reward - 20.0 * hit + 10.0 * arrive
        self.dist = dist
        self.collided |= hit
        self.arrived |= arrive
        term = hit | arrive
        trunc = (self.steps >= self.max_steps) & live & ~term
        reward = np.where(live, reward, 0.0)
        self.done |= term | trunc
        i = self.agent_idx
        return obs[i], reward[i], term[i], trunc[i]

    # -- the scripted give-way baseline ----------------------------------
    def give_way_actions(self, safe: float = 1000.0, horizon: float = 420.0, offset: float = 60.0) -> np.ndarray:
        """The scripted COLREG baseline for every agent, (n_agents, 2):
        steer for the goal at the scenario speed; while a ship it must give
        way to (it is on our starboard side within 112.5° of the bow, dead
        ahead on a reciprocal course, or we overtake it) would pass within
        ``safe`` m in the next ``horizon`` s were we on the goal course,
        steer ``offset`` degrees to starboard of it instead. A stand-on
        ship holds its course (Rule 17)."""
        s = self.fleet.state
        rp, rv, mask = self._pairs()
        g = self.goal - s[:, :2]
        goal_brg = np.degrees(np.arctan2(g[:, 0], g[:, 1]))
        gb = np.radians(goal_brg)
        # Our velocity were we on the goal course at the scenario speed.
        own_v = self.nominal[:, None] * np.stack([np.sin(gb), np.cos(gb)], axis=1)
        vel_other = rv + np.stack([s[:, 4] * np.sin(np.radians(s[:, 5])), s[:, 4] * np.cos(np.radians(s[:, 5]))], axis=1)[:, None, :]
        dcpa, tcpa = cpa(rp, vel_other - own_v[:, None, :])
        rel_brg = (np.degrees(np.arctan2(rp[..., 0], rp[..., 1])) - s[:, 3][:, None]) % 360.0
        other_h = np.degrees(np.arctan2(vel_other[..., 0], vel_other[..., 1]))
        # Our bearing seen from the other ship, relative to its course.
        back = (np.degrees(np.arctan2(-rp[..., 0], -rp[..., 1])) - other_h) % 360.0
        other_speed = np.hypot(vel_other[..., 0], vel_other[..., 1])
        starboard = (rel_brg > 0.0) & (rel_brg < 112.5)
        head_on = ((rel_brg < 10.0) | (rel_brg > 350.0)) & ((back < 10.0) | (back > 350.0))
        overtake = (back > 112.5) & (back < 247.5) & (s[:, 2][:, None] > other_speed)
        give_way = mask & (starboard | head_on | overtake)
        ahead = (tcpa > 0.0) & (tcpa < horizon)
        threat = give_way & (dcpa < safe) & ahead
        # Hysteresis: an evasion goes on until the goal course would pass
        # 1.5 · safe clear (or the CPA is behind), so it does not chatter.
        still = give_way & (dcpa < 1.5 * safe) & ahead
        self._evading = threat.any(axis=1) | (self._evading & still.any(axis=1))
        want = np.where(self._evading, goal_brg + offset, goal_brg)
        err = (want - s[:, 3] + 180.0) % 360.0 - 180.0
        out = np.zeros((self.n, 2))
        out[:, 0] = _sc.thrust_for(1.0) * self.nominal / 50.0 - 1.0
        # At most 20 % rudder: the turn costs speed (docs/model.md §7).
        out[:, 1] = np.clip(err / 100.0, -0.2, 0.2)
        return out[self.agent_idx]

    def hold_actions(self) -> np.ndarray:
        """Every agent holds its start course and speed (nobody gives way)."""
        out = np.zeros((len(self.agent_idx), 2))
        out[:, 0] = _sc.thrust_for(1.0) * self.nominal[self.agent_idx] / 50.0 - 1.0
        return out

    # -- results -----------------------------------------------------------
    def tracks(self, j: int) -> Dict[str, np.ndarray]:
        """Instance ``j``'s recorded run (``record=True``): ``t`` (T,) s and,
        per ship name, a (T, 4) array of x, y (m), heading over ground
        (degrees), speed over ground (m/s)."""
        if not self.history:
            raise ValueError("nothing recorded: make the env with record=True and step it")
        h = np.stack(self.history)  # (T, n, 6)
        out: Dict[str, np.ndarray] = {"t": np.arange(len(h)) * self.frame_skip * self.dt}
        for m in range(self.M):
            if self.valid[j, m]:
                i = self.fidx[j, m]
                name = self.ship_names[i].split("_", 1)[1]
                out[name] = h[:, i][:, [0, 1, 5, 4]]
        return out

    def frame(self, j: int, size: Tuple[int, int] = RENDER_SIZE) -> np.ndarray:
        """Instance ``j`` from above (usim's plotting code): hulls, tracks
        (when recorded), goals and a line to the CPA of each ship's nearest
        other; an ``(h, w, 3)`` uint8 array."""
        s = self.fleet.state
        ids = [int(self.fidx[j, m]) for m in range(self.M) if self.valid[j, m]]
        hist = np.stack(self.history)[:, ids, :2] if self.history else None
        pts = np.concatenate([s[ids, :2], self.goal[ids]])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        pad = 0.1 * float(max(hi[0] - lo[0], hi[1] - lo[1], 100.0))
        extent = (lo[0] - pad, lo[1] - pad, hi[0] + pad, hi[1] + pad)
        vessels = [
            (float(s[i, 0]), float(s[i, 1]), float(s[i, 3]), _sc.LENGTH, None if hist is None else hist[:, q])
            for q, i in enumerate(ids)
        ]
        goals = [(float(self.goal[i, 0]), float(self.goal[i, 1]), self.goal_radius, not self.done[i]) for i in ids]
        return _render_scene(int(size[0]), int(size[1]), extent, vessels, goals)


class EncounterEnv(ParallelEnv):
    """PettingZoo ``ParallelEnv`` of ship encounters (module docstring:
    spaces, reward, ends). Arguments as :class:`EncounterCore`;
    ``render_mode="rgb_array"`` renders scenario instance 0 (``frame(j)``
    any other). :attr:`core` is the array interface (``core.step(actions)``
    without dicts: the fast path for vectorised training)."""

    metadata = {"render_modes": ["rgb_array"], "name": "usim_encounters_v0", "is_parallelizable": True}

    def __init__(self, scenarios: Sequence[str] = ("crossing_starboard",), copies: int = 1, *, render_mode: Optional[str] = None, **kwargs: Any) -> None:
        if spaces is None:  # pragma: no cover
            raise ImportError("EncounterEnv needs pettingzoo and gymnasium: pip install usim-marine[marl]")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode {render_mode!r}: only 'rgb_array' is offered")
        self.render_mode = render_mode
        record = bool(kwargs.pop("record", False)) or render_mode is not None
        self.core = EncounterCore(scenarios, copies, record=record, **kwargs)
        self.possible_agents = list(self.core.agent_names)
        self.agents: List[str] = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._obs_space = spaces.Box(-10.0, 10.0, shape=(self.core.obs_dim,), dtype=np.float32)
        self._act_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self._live = np.zeros(len(self.possible_agents), dtype=bool)

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent: str):
        return self._obs_space

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent: str):
        return self._act_space

    def _infos(self) -> Dict[str, Dict[str, Any]]:
        c = self.core
        return {
            a: {"min_range": float(c.min_range[c.agent_idx[i]]), "t_min": float(c.t_min[c.agent_idx[i]])}
            for a, i in ((a, self._index[a]) for a in self.agents)
        }

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None):
        obs = self.core.reset(seed)
        self.agents = list(self.possible_agents)
        self._live[:] = True
        return {a: obs[i] for i, a in enumerate(self.possible_agents)}, self._infos()

    def step(self, actions: Dict[str, Any]):
        a = np.zeros((len(self.possible_agents), 2))
        for name, act in actions.items():
            i = self._index.get(name)
            if i is not None and self._live[i]:
                a[i] = np.asarray(act, dtype=np.float64).reshape(2)
        obs, r, term, trunc = self.core.step(a)
        live = [a_ for a_ in self.agents]
        out = (
            {n: obs[self._index[n]] for n in live},
            {n: float(r[self._index[n]]) for n in live},
            {n: bool(term[self._index[n]]) for n in live},
            {n: bool(trunc[self._index[n]]) for n in live},
        )
        infos = self._infos()
        ended = term | trunc
        self._live &= ~ended
        self.agents = [n for n in self.agents if self._live[self._index[n]]]
        return out + (infos,)

    def render(self):
        """With ``render_mode="rgb_array"``: scenario instance 0 from above."""
        if self.render_mode is None:
            return None
        return self.core.frame(0)

    def close(self) -> None:
        pass
