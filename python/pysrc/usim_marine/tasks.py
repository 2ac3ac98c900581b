"""More single-agent Gymnasium tasks on usim's :class:`usim_marine.Fleet`.

Registered on import of :mod:`usim_marine` (with the ``[gym]`` extra), each
with a vector version (``gymnasium.make_vec(id, num_envs=N,
vectorization_mode="vector_entry_point")``) that steps all N vehicles in
one ``Fleet`` call:

* ``usim/StationKeeping-v0``: hold a point in a current.
* ``usim/PathFollowing-v0``: follow a polyline (cross-track error and
  along-track progress).
* ``usim/Docking-v0``: enter a berth (a box open at one end) slowly and
  aligned, without touching its walls.

All three use the kayak of :data:`usim_marine.envs.KAYAK` (or ``config=``)
and the action of ``WaypointFollow-v0``: float32 in [-1, 1]^2, thrust =
50·(a0 + 1) percent (0..100), rudder = 100·a1 percent (positive turns to
starboard). One env step is ``frame_skip`` model steps of ``dt`` s
(default 2 × 0.1 s). Positions are x east, y north in m, headings marine
degrees. The current is the fleet's drift (east, north m/s), drawn per
episode from the env's seeded generator; a config with a current field or
a wind (the environment layer, docs/config.md) adds its own on top. Spaces,
rewards and episode ends: docs/python.md and each class's docstring.

Seeding: ``reset(seed=s)`` gives the same episode for the same actions.
``reset(options={"start": (x, y, heading), "current": (east, north)})``
fixes the start (m, degrees; speed 0) and the current (m/s) of the
single env's episode instead of drawing them.

Rendering (``render_mode="rgb_array"``): usim's own plotting code
(``_render_scene``, as ``WaypointFollow-v0`` and the encounter env):
the track and hull, goals as circles, and the path or the berth's walls
as line segments.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np
import gymnasium as gym
from gymnasium import spaces

from ._usim import Fleet, _render_scene
from .envs import KAYAK, RENDER_SIZE, _HULL_M, _STATE, _EpisodeStats, _check_render_mode

STATION_ID = "usim/StationKeeping-v0"
PATH_ID = "usim/PathFollowing-v0"
DOCK_ID = "usim/Docking-v0"

#: The default path of ``PathFollowing-v0``: north 100 m, north-east, east (m).
DEFAULT_PATH = ((0.0, 0.0), (0.0, 100.0), (80.0, 160.0), (200.0, 160.0))

_ACT_SPACE = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)


def _body(dx: np.ndarray, dy: np.ndarray, heading_deg: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """A world vector (east, north) in the body frame: (forward, starboard)."""
    h = np.radians(heading_deg)
    return dx * np.sin(h) + dy * np.cos(h), dx * np.cos(h) - dy * np.sin(h)


def _wrap180(deg: np.ndarray) -> np.ndarray:
    """An angle in degrees wrapped to [-180, 180)."""
    return (np.asarray(deg) + 180.0) % 360.0 - 180.0


def _cross2(ax, ay, bx, by):
    return ax * by - ay * bx


def segments_cross(p1: np.ndarray, p2: np.ndarray, q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Whether segments p1–p2 (arrays (n, 2)) touch or cross segment q1–q2
    (two points, m): the orientation test (collinear disjoint segments do
    not count)."""
    rx, ry = q2[0] - q1[0], q2[1] - q1[1]
    d1 = _cross2(rx, ry, p1[:, 0] - q1[0], p1[:, 1] - q1[1])
    d2 = _cross2(rx, ry, p2[:, 0] - q1[0], p2[:, 1] - q1[1])
    sx, sy = p2[:, 0] - p1[:, 0], p2[:, 1] - p1[:, 1]
    d3 = _cross2(sx, sy, q1[0] - p1[:, 0], q1[1] - p1[:, 1])
    d4 = _cross2(sx, sy, q2[0] - p1[:, 0], q2[1] - p1[:, 1])
    collinear = (d1 == 0) & (d2 == 0)
    return (d1 * d2 <= 0) & (d3 * d4 <= 0) & ~collinear


class _Task:
    """What the three tasks share: a Fleet of n vehicles driven by thrust
    and rudder, step counts, the velocity over ground, tracks and frames."""

    obs_dim = 0

    def __init__(self, n: int, config: Any, dt: float, frame_skip: int, max_steps: int) -> None:
        if not (frame_skip >= 1 and max_steps >= 1 and dt > 0):
            raise ValueError(
                f"frame_skip ({frame_skip}) and max_steps ({max_steps}) must be >= 1, dt ({dt} s) > 0"
            )
        self.fleet = Fleet(KAYAK if config is None else config, n, dt=dt, state=list(_STATE))
        self.n = n
        self.dt_env = float(dt) * int(frame_skip)
        self.frame_skip = int(frame_skip)
        self.max_steps = int(max_steps)
        self.steps = np.zeros(n, dtype=np.int64)
        self.sp = np.zeros((n, 2))
        self.a = np.zeros((n, 2))
        self.current = np.zeros((n, 2))
        self.vog = np.zeros((n, 2))
        self.track: Optional[np.ndarray] = None
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

    def _currents(self, rng: np.random.Generator, m: int, lo: float, hi: float) -> np.ndarray:
        """m currents (east, north, m/s): magnitude uniform in [lo, hi],
        direction (where the water flows to) uniform."""
        mag = rng.uniform(lo, hi, m)
        ang = rng.uniform(0.0, 2.0 * np.pi, m)
        return np.column_stack([mag * np.sin(ang), mag * np.cos(ang)])

    def _restart(self, ids: np.ndarray, start: np.ndarray, current: np.ndarray) -> None:
        """Restart vehicles ``ids`` at rest at ``start`` (x, y, heading) in
        the drift ``current``: at rest they move with the water, so that
        is their first velocity over ground."""
        self.fleet.reset(None, ids.tolist(), start=np.ascontiguousarray(start, dtype=np.float64),
                         drift=np.ascontiguousarray(current, dtype=np.float64))
        self.current[ids] = current
        self.vog[ids] = current
        self.steps[ids] = 0
        self.track_len[ids] = 0
        self._record(ids)

    def _drive(self, actions: Any) -> None:
        """Map the actions to thrust and rudder and step the fleet
        ``frame_skip`` times; updates the velocity over ground."""
        a = np.asarray(actions, dtype=np.float64).reshape(self.n, 2)
        self.a = np.clip(np.nan_to_num(a, nan=0.0), -1.0, 1.0)
        self.sp[:, 0] = 50.0 * (self.a[:, 0] + 1.0)
        self.sp[:, 1] = 100.0 * self.a[:, 1]
        before = self.fleet.state[:, :2].copy()
        for _ in range(self.frame_skip):
            self.fleet.step(self.sp)
        self.vog = (self.fleet.state[:, :2] - before) / self.dt_env
        self.steps += 1
        if self.track is not None:
            self._record(np.arange(self.n))

    def _scene(self, i: int, size: Tuple[int, int], pts: np.ndarray, goals: list, lines: list,
               pad_m: float = 5.0) -> np.ndarray:
        s = self.fleet.state[i]
        track = None if self.track is None else self.track[i, : self.track_len[i]]
        allp = np.concatenate([pts, s[None, :2]] + ([track] if track is not None and len(track) else []))
        allp = allp[np.all(np.isfinite(allp), axis=1)]
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        pad = 0.1 * float(max(hi[0] - lo[0], hi[1] - lo[1], 10.0)) + pad_m
        extent = (lo[0] - pad, lo[1] - pad, hi[0] + pad, hi[1] + pad)
        vessel = (float(s[0]), float(s[1]), float(s[3]), _HULL_M, track)
        return _render_scene(int(size[0]), int(size[1]), extent, [vessel], goals, lines)


class StationCore(_Task):
    """``StationKeeping-v0`` on n vehicles: hold ``station`` in a current.

    Observation (float32, 8, each clipped to [-10, 10]): the station in the
    body frame (forward, starboard) / 50 m; sin and cos of its bearing off
    the bow; speed through the water / 2 m/s; the velocity over ground in
    the body frame (forward, starboard) / 2 m/s (from the last step's
    displacement; at rest, the current); the distance / 50 m.

    Reward per step: −distance / 10 m − ``effort``·((thrust/100)² +
    (rudder/100)²). Never terminated; truncated after ``max_steps``.
    Starts at rest within ``start_radius`` m of the station, any heading,
    in a current of ``min_current``..``max_current`` m/s, any direction.
    """

    obs_dim = 8

    def __init__(self, n: int = 1, config: Any = None, station: Tuple[float, float] = (0.0, 0.0),
                 radius: float = 5.0, start_radius: float = 10.0, min_current: float = 0.1,
                 max_current: float = 0.4, effort: float = 0.05, dt: float = 0.1,
                 frame_skip: int = 2, max_steps: int = 1000) -> None:
        super().__init__(n, config, dt, frame_skip, max_steps)
        self.station = np.asarray(station, dtype=np.float64).reshape(2)
        if not (np.all(np.isfinite(self.station)) and 0 <= min_current <= max_current <= 100):
            raise ValueError("station must be finite (m); 0 <= min_current <= max_current <= 100 m/s")
        self.radius, self.start_radius = float(radius), float(start_radius)
        self.cur_range = (float(min_current), float(max_current))
        self.effort = float(effort)

    def reset(self, rng: np.random.Generator, which: Optional[np.ndarray] = None,
              start: Optional[Sequence[float]] = None, current: Optional[Sequence[float]] = None) -> None:
        ids = np.arange(self.n) if which is None else np.flatnonzero(which)
        m = len(ids)
        if m == 0:
            return
        r = self.start_radius * np.sqrt(rng.uniform(0.0, 1.0, m))
        a = rng.uniform(0.0, 2.0 * np.pi, m)
        st = np.column_stack([self.station[0] + r * np.cos(a), self.station[1] + r * np.sin(a),
                              rng.uniform(0.0, 360.0, m)])
        cur = self._currents(rng, m, *self.cur_range)
        if start is not None:
            st[:] = np.asarray(start, dtype=np.float64).reshape(3)
        if current is not None:
            cur[:] = np.asarray(current, dtype=np.float64).reshape(2)
        self._restart(ids, st, cur)

    def distance(self) -> np.ndarray:
        s = self.fleet.state
        return np.hypot(self.station[0] - s[:, 0], self.station[1] - s[:, 1])

    def observe(self) -> np.ndarray:
        s = self.fleet.state
        fwd, stb = _body(self.station[0] - s[:, 0], self.station[1] - s[:, 1], s[:, 3])
        vf, vs = _body(self.vog[:, 0], self.vog[:, 1], s[:, 3])
        err = np.arctan2(stb, fwd)
        obs = np.stack([fwd / 50.0, stb / 50.0, np.sin(err), np.cos(err), s[:, 2] / 2.0,
                        vf / 2.0, vs / 2.0, self.distance() / 50.0], axis=1)
        return np.clip(obs, -10.0, 10.0).astype(np.float32)

    def step(self, actions: Any):
        self._drive(actions)
        d = self.distance()
        thrust = 0.5 * (self.a[:, 0] + 1.0)
        reward = -d / 10.0 - self.effort * (thrust**2 + self.a[:, 1] ** 2)
        term = np.zeros(self.n, dtype=bool)
        trunc = self.steps >= self.max_steps
        return self.observe(), reward, term, trunc

    def info(self) -> Dict[str, np.ndarray]:
        d = self.distance()
        return {"distance": d, "on_station": d <= self.radius}

    def frame(self, i: int, size: Tuple[int, int]) -> np.ndarray:
        sx, sy = float(self.station[0]), float(self.station[1])
        goals = [(sx, sy, self.radius, bool(self.distance()[i] > self.radius))]
        pts = np.array([[sx - self.radius, sy - self.radius], [sx + self.radius, sy + self.radius]])
        return self._scene(i, size, pts, goals, [])


class PathCore(_Task):
    """``PathFollowing-v0`` on n vehicles: follow the polyline ``path``.

    The active segment is the one nearest the start, then the next one once
    the vehicle's projection passes a segment's end. Cross-track error
    (m): the signed distance from the active segment's line, positive to
    starboard of the path's direction. Along-track progress s (m): the
    path length before the active segment plus the projection on it,
    clamped to the segment.

    Observation (float32, 8, clipped to [-10, 10]): cross-track error /
    20 m; sin and cos of the path's heading minus the vehicle's (positive:
    the path lies to starboard); speed / 2 m/s; s / path length; what is
    left of the active segment / 100 m; sin and cos of the turn at its end
    (0 on the last segment).

    Reward per step: Δs (m) − ``cte_weight``·|cross-track error| (m);
    +``end_bonus`` when the last segment's end is passed (terminated),
    −``lost_penalty`` when |cross-track error| > ``max_cross_track`` m
    (terminated); truncated after ``max_steps``. Starts at rest at the
    path's first point moved ±``start_offset`` m across the first segment,
    heading along it ±``heading_spread`` degrees, in a current of up to
    ``max_current`` m/s.
    """

    obs_dim = 8

    def __init__(self, n: int = 1, config: Any = None, path: Sequence[Tuple[float, float]] = DEFAULT_PATH,
                 start_offset: float = 10.0, heading_spread: float = 30.0, max_current: float = 0.0,
                 max_cross_track: float = 30.0, cte_weight: float = 0.05, end_bonus: float = 10.0,
                 lost_penalty: float = 10.0, dt: float = 0.1, frame_skip: int = 2,
                 max_steps: int = 2000) -> None:
        super().__init__(n, config, dt, frame_skip, max_steps)
        p = np.asarray(path, dtype=np.float64).reshape(-1, 2)
        d = np.diff(p, axis=0)
        seg = np.hypot(d[:, 0], d[:, 1])
        if len(p) < 2 or not np.all(np.isfinite(p)) or not np.all(seg > 0):
            raise ValueError("path must be at least two finite (x, y) points, m, with no repeated point")
        self.path, self.d, self.seg = p, d, seg
        self.cum = np.concatenate([[0.0], np.cumsum(seg)])
        self.total = float(self.cum[-1])
        self.seg_heading = np.degrees(np.arctan2(d[:, 0], d[:, 1]))
        turn = np.zeros(len(seg))
        turn[:-1] = _wrap180(self.seg_heading[1:] - self.seg_heading[:-1])
        self.turn = np.radians(turn)
        self.start_offset, self.heading_spread = float(start_offset), float(heading_spread)
        self.max_current, self.max_cte = float(max_current), float(max_cross_track)
        self.w, self.bonus, self.penalty = float(cte_weight), float(end_bonus), float(lost_penalty)
        self.k = np.zeros(n, dtype=np.int64)
        self.s = np.zeros(n)
        self.cte = np.zeros(n)
        self.t = np.zeros(n)

    def project(self, xy: np.ndarray, k: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(cross-track error m, projection t as a fraction of the segment)
        of points ``xy`` (n, 2) on segments ``k``."""
        a, d, L = self.path[k], self.d[k], self.seg[k]
        vx, vy = xy[:, 0] - a[:, 0], xy[:, 1] - a[:, 1]
        t = (vx * d[:, 0] + vy * d[:, 1]) / (L * L)
        cte = (d[:, 1] * vx - d[:, 0] * vy) / L
        return cte, t

    def _nearest(self, xy: np.ndarray) -> np.ndarray:
        """The segment nearest each point (distance to the clamped projection)."""
        best = np.full(len(xy), np.inf)
        k = np.zeros(len(xy), dtype=np.int64)
        for j in range(len(self.seg)):
            kk = np.full(len(xy), j)
            cte, t = self.project(xy, kk)
            along = (np.clip(t, 0.0, 1.0) - t) * self.seg[j]
            dist = np.hypot(cte, along)
            k = np.where(dist < best, j, k)
            best = np.minimum(best, dist)
        return k

    def _update(self, ids: np.ndarray) -> None:
        xy = self.fleet.state[ids, :2]
        k = self.k[ids]
        cte, t = self.project(xy, k)
        last = len(self.seg) - 1
        for _ in range(len(self.seg)):
            adv = (t >= 1.0) & (k < last)
            if not np.any(adv):
                break
            k = k + adv
            cte, t = self.project(xy, k)
        self.k[ids], self.cte[ids], self.t[ids] = k, cte, t
        self.s[ids] = self.cum[k] + np.clip(t, 0.0, 1.0) * self.seg[k]

    def reset(self, rng: np.random.Generator, which: Optional[np.ndarray] = None,
              start: Optional[Sequence[float]] = None, current: Optional[Sequence[float]] = None) -> None:
        ids = np.arange(self.n) if which is None else np.flatnonzero(which)
        m = len(ids)
        if m == 0:
            return
        off = rng.uniform(-self.start_offset, self.start_offset, m)
        h0 = self.seg_heading[0]
        hd = h0 + rng.uniform(-self.heading_spread, self.heading_spread, m)
        r = np.radians(h0)
        st = np.column_stack([self.path[0, 0] + off * np.cos(r), self.path[0, 1] - off * np.sin(r), hd])
        cur = self._currents(rng, m, 0.0, self.max_current)
        if start is not None:
            st[:] = np.asarray(start, dtype=np.float64).reshape(3)
        if current is not None:
            cur[:] = np.asarray(current, dtype=np.float64).reshape(2)
        self._restart(ids, st, cur)
        self.k[ids] = self._nearest(self.fleet.state[ids, :2])
        self._update(ids)

    def observe(self) -> np.ndarray:
        s = self.fleet.state
        he = np.radians(_wrap180(self.seg_heading[self.k] - s[:, 3]))
        left = (1.0 - np.clip(self.t, 0.0, 1.0)) * self.seg[self.k]
        turn = self.turn[self.k]
        obs = np.stack([self.cte / 20.0, np.sin(he), np.cos(he), s[:, 2] / 2.0, self.s / self.total,
                        left / 100.0, np.sin(turn), np.cos(turn)], axis=1)
        return np.clip(obs, -10.0, 10.0).astype(np.float32)

    def step(self, actions: Any):
        self._drive(actions)
        s0 = self.s.copy()
        self._update(np.arange(self.n))
        done = (self.k == len(self.seg) - 1) & (self.t >= 1.0)
        lost = np.abs(self.cte) > self.max_cte
        reward = (self.s - s0) - self.w * np.abs(self.cte) + self.bonus * done - self.penalty * (lost & ~done)
        term = done | lost
        trunc = (self.steps >= self.max_steps) & ~term
        return self.observe(), reward, term, trunc

    def info(self) -> Dict[str, np.ndarray]:
        return {"cross_track": self.cte.copy(), "progress": self.s.copy(), "segment": self.k.copy()}

    def frame(self, i: int, size: Tuple[int, int]) -> np.ndarray:
        lines = [((float(a[0]), float(a[1])), (float(b[0]), float(b[1])))
                 for a, b in zip(self.path[:-1], self.path[1:])]
        end = self.path[-1]
        goals = [(float(end[0]), float(end[1]), 3.0, True)]
        return self._scene(i, size, self.path, goals, lines)


class DockCore(_Task):
    """``Docking-v0`` on n vehicles: enter a berth and stop in it.

    The berth is a ``width`` × ``length`` m box whose open end (the mouth)
    is centred on ``mouth`` (x, y m); its axis points into it along
    ``axis_heading`` degrees. Dock frame: u along the axis from the mouth
    (m, negative outside), v to starboard of the axis (m). Its walls are
    the two sides and the far end. The hull is a segment of ``hull`` m
    (4, the rendered kayak) centred on the vehicle's position.

    Observation (float32, 10, clipped to [-10, 10]): u / 50 m, v / 10 m;
    sin and cos of the heading minus the axis; speed / 2 m/s; the berth's
    centre in the body frame (forward, starboard) / 50 m; the velocity
    over ground in the dock frame (u, v) / 2 m/s; 1 when the whole hull is
    inside the box, else 0.

    Reward per step: the decrease of the distance to the berth's centre
    (m) − 0.01. Success (terminated, +``success_bonus``): the whole hull
    inside, |heading − axis| ≤ ``heading_tol`` degrees and speed ≤
    ``speed_limit`` m/s. A hull touching a wall: terminated,
    −``collision_penalty``. Truncated after ``max_steps``. Starts at rest
    30–60 m before the mouth, ±``start_offset`` m across the axis, heading
    along it ±``heading_spread`` degrees, in a current of up to
    ``max_current`` m/s.
    """

    obs_dim = 10

    def __init__(self, n: int = 1, config: Any = None, mouth: Tuple[float, float] = (0.0, 0.0),
                 axis_heading: float = 0.0, width: float = 6.0, length: float = 10.0, hull: float = _HULL_M,
                 heading_tol: float = 15.0, speed_limit: float = 0.3, start_offset: float = 15.0,
                 heading_spread: float = 30.0, max_current: float = 0.0, success_bonus: float = 50.0,
                 collision_penalty: float = 50.0, dt: float = 0.1, frame_skip: int = 2,
                 max_steps: int = 1500) -> None:
        super().__init__(n, config, dt, frame_skip, max_steps)
        if not (width > hull * 0.0 and width > 0 and length > hull and hull > 0):
            raise ValueError(f"the berth ({width} × {length} m) must be longer than the hull ({hull} m)")
        self.mouth = np.asarray(mouth, dtype=np.float64).reshape(2)
        self.psi = float(axis_heading)
        r = np.radians(self.psi)
        self.eu = np.array([np.sin(r), np.cos(r)])
        self.ev = np.array([np.cos(r), -np.sin(r)])
        self.width, self.length, self.hull = float(width), float(length), float(hull)
        self.tol, self.vmax = float(heading_tol), float(speed_limit)
        self.start_offset, self.heading_spread = float(start_offset), float(heading_spread)
        self.max_current = float(max_current)
        self.bonus, self.penalty = float(success_bonus), float(collision_penalty)
        w2 = 0.5 * self.width
        c = [self.world(0.0, -w2), self.world(self.length, -w2), self.world(self.length, w2), self.world(0.0, w2)]
        self.corners = np.array(c)
        self.walls = [(c[0], c[1]), (c[1], c[2]), (c[2], c[3])]
        self.centre = self.world(0.5 * self.length, 0.0)
        self.dist = np.zeros(n)
        self.inside = np.zeros(n, dtype=bool)

    def world(self, u: float, v: float) -> np.ndarray:
        """The point at (u, v) of the dock frame in x, y (m)."""
        return self.mouth + u * self.eu + v * self.ev

    def dock_frame(self, xy: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(u, v) m of points ``xy`` (n, 2)."""
        rel = xy - self.mouth
        return rel @ self.eu, rel @ self.ev

    def hull_ends(self) -> Tuple[np.ndarray, np.ndarray]:
        s = self.fleet.state
        h = np.radians(s[:, 3])
        half = 0.5 * self.hull * np.column_stack([np.sin(h), np.cos(h)])
        return s[:, :2] - half, s[:, :2] + half

    def _in_box(self, xy: np.ndarray) -> np.ndarray:
        u, v = self.dock_frame(xy)
        return (u > 0.0) & (u < self.length) & (np.abs(v) < 0.5 * self.width)

    def reset(self, rng: np.random.Generator, which: Optional[np.ndarray] = None,
              start: Optional[Sequence[float]] = None, current: Optional[Sequence[float]] = None) -> None:
        ids = np.arange(self.n) if which is None else np.flatnonzero(which)
        m = len(ids)
        if m == 0:
            return
        u = rng.uniform(-60.0, -30.0, m)
        v = rng.uniform(-self.start_offset, self.start_offset, m)
        xy = self.mouth + u[:, None] * self.eu + v[:, None] * self.ev
        hd = self.psi + rng.uniform(-self.heading_spread, self.heading_spread, m)
        st = np.column_stack([xy, hd])
        cur = self._currents(rng, m, 0.0, self.max_current)
        if start is not None:
            st[:] = np.asarray(start, dtype=np.float64).reshape(3)
        if current is not None:
            cur[:] = np.asarray(current, dtype=np.float64).reshape(2)
        self._restart(ids, st, cur)
        s = self.fleet.state[ids]
        self.dist[ids] = np.hypot(*(self.centre - s[:, :2]).T)
        stern, bow = self.hull_ends()
        self.inside[ids] = (self._in_box(stern) & self._in_box(bow))[ids]

    def observe(self) -> np.ndarray:
        s = self.fleet.state
        u, v = self.dock_frame(s[:, :2])
        hrel = np.radians(_wrap180(s[:, 3] - self.psi))
        fwd, stb = _body(self.centre[0] - s[:, 0], self.centre[1] - s[:, 1], s[:, 3])
        obs = np.stack([u / 50.0, v / 10.0, np.sin(hrel), np.cos(hrel), s[:, 2] / 2.0, fwd / 50.0,
                        stb / 50.0, (self.vog @ self.eu) / 2.0, (self.vog @ self.ev) / 2.0,
                        self.inside.astype(np.float64)], axis=1)
        return np.clip(obs, -10.0, 10.0).astype(np.float32)

    def step(self, actions: Any):
        self._drive(actions)
        s = self.fleet.state
        stern, bow = self.hull_ends()
        hit = np.zeros(self.n, dtype=bool)
        for q1, q2 in self.walls:
            hit |= segments_cross(stern, bow, q1, q2)
        self.inside = self._in_box(stern) & self._in_box(bow)
        aligned = np.abs(_wrap180(s[:, 3] - self.psi)) <= self.tol
        docked = self.inside & aligned & (s[:, 2] <= self.vmax) & ~hit
        d = np.hypot(self.centre[0] - s[:, 0], self.centre[1] - s[:, 1])
        reward = (self.dist - d) - 0.01 + self.bonus * docked - self.penalty * hit
        self.dist = d
        term = docked | hit
        trunc = (self.steps >= self.max_steps) & ~term
        self.last = (docked, hit)
        return self.observe(), reward, term, trunc

    def info(self) -> Dict[str, np.ndarray]:
        docked, hit = getattr(self, "last", (np.zeros(self.n, bool), np.zeros(self.n, bool)))
        return {"docked": docked.copy(), "collision": hit.copy(), "inside": self.inside.copy()}

    def frame(self, i: int, size: Tuple[int, int]) -> np.ndarray:
        lines = [((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))) for a, b in self.walls]
        c = self.centre
        goals = [(float(c[0]), float(c[1]), 0.25 * self.width, not bool(self.inside[i]))]
        return self._scene(i, size, self.corners, goals, lines, pad_m=3.0)


class _TaskEnv(gym.Env):
    """One task of this module as a Gymnasium env (a Fleet of one)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 5}
    _core_cls: Any = None

    def __init__(self, render_mode: Optional[str] = None, render_size: Tuple[int, int] = RENDER_SIZE,
                 **kwargs: Any) -> None:
        self.render_mode = _check_render_mode(render_mode)
        self._render_size = (int(render_size[0]), int(render_size[1]))
        self._core = self._core_cls(1, **kwargs)
        dim = self._core_cls.obs_dim
        self.observation_space = spaces.Box(-10.0, 10.0, shape=(dim,), dtype=np.float32)
        self.action_space = _ACT_SPACE
        self.metadata = {**type(self).metadata, "render_fps": 1.0 / self._core.dt_env}
        if self.render_mode is not None:
            self._core.keep_tracks()

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        opts = dict(options or {})
        unknown = set(opts) - {"start", "current"}
        if unknown:
            raise ValueError(f"reset options: unknown {sorted(unknown)}; known: 'start', 'current'")
        self._core.reset(self.np_random, None, opts.get("start"), opts.get("current"))
        return self._core.observe()[0], self._info()

    def _info(self) -> Dict[str, Any]:
        return {k: v[0].item() for k, v in self._core.info().items()}

    def step(self, action):
        obs, r, term, trunc = self._core.step(np.asarray(action).reshape(1, 2))
        return obs[0], float(r[0]), bool(term[0]), bool(trunc[0]), self._info()

    def render(self):
        """With ``render_mode="rgb_array"``: the scene from above, north up,
        as an ``(h, w, 3)`` uint8 array."""
        if self.render_mode is None:
            return None
        return self._core.frame(0, self._render_size)


class _TaskVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` copies of a task stepped together on one Fleet, with
    Gymnasium's next-step autoreset and vector ``info`` (each of the
    core's info arrays with its ``_`` mask; ``episode`` / ``_episode`` as
    ``RecordEpisodeStatistics`` gives them unless ``episode_stats=False``)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 5,
                "autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}
    _core_cls: Any = None

    def __init__(self, num_envs: int = 1, episode_stats: bool = True, render_mode: Optional[str] = None,
                 render_size: Tuple[int, int] = RENDER_SIZE, **kwargs: Any) -> None:
        self.render_mode = _check_render_mode(render_mode)
        self._render_size = (int(render_size[0]), int(render_size[1]))
        self._stats = bool(episode_stats)
        self.num_envs = int(num_envs)
        self._core = self._core_cls(self.num_envs, **kwargs)
        self.metadata = {**type(self).metadata, "render_fps": 1.0 / self._core.dt_env}
        if self.render_mode is not None:
            self._core.keep_tracks()
        single = spaces.Box(-10.0, 10.0, shape=(self._core_cls.obs_dim,), dtype=np.float32)
        self.single_observation_space = single
        self.single_action_space = _ACT_SPACE
        self.observation_space = gym.vector.utils.batch_space(single, self.num_envs)
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
        return self._core.observe(), self._masked()

    def _masked(self) -> Dict[str, Any]:
        info: Dict[str, Any] = {}
        for k, v in self._core.info().items():
            info[k] = v.copy()
            info["_" + k] = np.ones(self.num_envs, dtype=bool)
        return info

    def step(self, actions):
        if self._np_random is None:
            raise RuntimeError("call reset() before step()")
        obs, r, term, trunc = self._core.step(actions)
        ar = self._autoreset
        if np.any(ar):
            self._core.reset(self._np_random, ar)
            obs = self._core.observe()
            r[ar] = 0.0
            term[ar] = False
            trunc[ar] = False
        info = self._masked()
        ended = term | trunc
        if self._stats:
            self._episodes.record(info, r, ended, self._autoreset)
        self._autoreset = ended
        return obs, r, term, trunc, info

    def render(self):
        """With ``render_mode="rgb_array"``: one frame per sub-environment."""
        if self.render_mode is None:
            return None
        return tuple(self._core.frame(i, self._render_size) for i in range(self.num_envs))


class StationKeepingEnv(_TaskEnv):
    """``usim/StationKeeping-v0`` (see :class:`StationCore`)."""

    _core_cls = StationCore


class StationKeepingVectorEnv(_TaskVectorEnv):
    """The vector ``usim/StationKeeping-v0``."""

    _core_cls = StationCore


class PathFollowingEnv(_TaskEnv):
    """``usim/PathFollowing-v0`` (see :class:`PathCore`)."""

    _core_cls = PathCore


class PathFollowingVectorEnv(_TaskVectorEnv):
    """The vector ``usim/PathFollowing-v0``."""

    _core_cls = PathCore


class DockingEnv(_TaskEnv):
    """``usim/Docking-v0`` (see :class:`DockCore`)."""

    _core_cls = DockCore


class DockingVectorEnv(_TaskVectorEnv):
    """The vector ``usim/Docking-v0``."""

    _core_cls = DockCore


def register() -> None:
    """Register the three ids (idempotent)."""
    for env_id, name in ((STATION_ID, "StationKeeping"), (PATH_ID, "PathFollowing"), (DOCK_ID, "Docking")):
        if env_id in gym.registry:
            continue
        gym.register(id=env_id, entry_point=f"usim_marine.tasks:{name}Env",
                     vector_entry_point=f"usim_marine.tasks:{name}VectorEnv")
