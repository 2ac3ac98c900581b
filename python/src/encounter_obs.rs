//! The encounter env's observations and per-step ranges over a whole fleet
//! in one native pass (`usim_marine.encounters`): plain Rust on slices, no
//! Python objects, so the env does no per-agent Python work.
//!
//! Ships of one scenario instance are contiguous rows of the fleet state;
//! `starts` holds each instance's first row (and the row count last).

use rayon::prelude::*;

/// Columns of the state rows the env asks its `Fleet` for.
pub const X: usize = 0;
/// North, m.
pub const Y: usize = 1;
/// Stored speed, m/s.
pub const SPEED: usize = 2;
/// Heading, degrees.
pub const HEADING: usize = 3;
/// Speed over ground, m/s.
pub const SOG: usize = 4;
/// Heading over ground, degrees.
pub const HOG: usize = 5;
/// State columns expected.
pub const WIDTH: usize = 6;

/// Observation scales: distance to others (m), speed (m/s), time (s),
/// goal distance (m).
#[derive(Debug, Clone, Copy)]
pub struct Scales {
    pub dist: f64,
    pub speed: f64,
    pub time: f64,
    pub goal: f64,
}

/// One ship's outputs besides its observation row.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ranges {
    /// Distance to its goal, m.
    pub goal_dist: f64,
    /// Range to its nearest other ship, m (inf when alone).
    pub nearest: f64,
    /// Σ over the others of max(0, 1 − range / near_miss).
    pub penalty: f64,
}

/// DCPA (m) and TCPA (s, ≥ 0) of a relative position and velocity (other −
/// own), as `usim::encounter::cpa`: `t* = max(0, −r·v / v·v)`.
fn cpa(p: [f64; 2], v: [f64; 2]) -> (f64, f64) {
    let vv = v[0] * v[0] + v[1] * v[1];
    let t = if vv > 0.0 {
        (-(p[0] * v[0] + p[1] * v[1]) / vv).max(0.0)
    } else {
        0.0
    };
    ((p[0] + v[0] * t).hypot(p[1] + v[1] * t), t)
}

/// NaN → 0, then clip to [−10, 10] (numpy's `clip(nan_to_num(x))`).
fn squash(x: f64) -> f32 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(-10.0, 10.0) as f32
    }
}

/// Fill `obs` (rows of `4 + 7k`) and `out` for every ship. `state` is
/// (n, [`WIDTH`]) row-major, `goal` (n, 2). Row layout as the env's
/// docstring: own speed, sin/cos of the goal bearing off the bow, goal
/// distance; then per nearest other (nearest first, ties in row order):
/// forward, starboard, relative velocity forward, starboard, DCPA, TCPA, 1.
#[allow(clippy::too_many_arguments)]
pub fn observe(
    state: &[f64],
    goal: &[f64],
    starts: &[usize],
    k: usize,
    near_miss: f64,
    sc: Scales,
    obs: &mut [f32],
    out: &mut [Ranges],
) {
    let n = out.len();
    let dim = 4 + 7 * k;
    let mut inst = vec![0usize; n];
    for (j, w) in starts.windows(2).enumerate() {
        for s in inst.iter_mut().take(w[1]).skip(w[0]) {
            *s = j;
        }
    }
    let row = |i: usize| &state[i * WIDTH..(i + 1) * WIDTH];
    let vel = |r: &[f64]| {
        let h = r[HOG].to_radians();
        [r[SOG] * h.sin(), r[SOG] * h.cos()]
    };
    obs.par_chunks_mut(dim)
        .zip(out.par_iter_mut())
        .enumerate()
        .with_min_len(128)
        .for_each(|(i, (o, res))| {
            let me = row(i);
            let (lo, hi) = (starts[inst[i]], starts[inst[i] + 1]);
            let mv = vel(me);
            let h = me[HEADING].to_radians();
            let (sh, ch) = (h.sin(), h.cos());
            // (range, row) of the others, nearest first (stable: row order).
            let mut near: Vec<(f64, usize)> = Vec::with_capacity(hi - lo);
            let mut penalty = 0.0;
            for j in (lo..hi).filter(|&j| j != i) {
                let r = row(j);
                let d = (r[X] - me[X]).hypot(r[Y] - me[Y]);
                if d.is_finite() {
                    penalty += (1.0 - d / near_miss).max(0.0);
                }
                near.push((d, j));
            }
            near.sort_by(|a, b| a.0.total_cmp(&b.0));
            let gx = goal[2 * i] - me[X];
            let gy = goal[2 * i + 1] - me[Y];
            let gd = gx.hypot(gy);
            let gb = gx.atan2(gy) - h;
            o[0] = squash(me[SPEED] / sc.speed);
            o[1] = squash(gb.sin());
            o[2] = squash(gb.cos());
            o[3] = squash(gd / sc.goal);
            for (q, slot) in o[4..].chunks_mut(7).enumerate() {
                let Some(&(_, j)) = near.get(q) else {
                    slot.fill(0.0);
                    continue;
                };
                let r = row(j);
                let p = [r[X] - me[X], r[Y] - me[Y]];
                let ov = vel(r);
                let v = [ov[0] - mv[0], ov[1] - mv[1]];
                let (dcpa, tcpa) = cpa(p, v);
                slot[0] = squash((p[0] * sh + p[1] * ch) / sc.dist);
                slot[1] = squash((p[0] * ch - p[1] * sh) / sc.dist);
                slot[2] = squash((v[0] * sh + v[1] * ch) / sc.speed);
                slot[3] = squash((v[0] * ch - v[1] * sh) / sc.speed);
                slot[4] = squash(dcpa / sc.dist);
                slot[5] = squash(tcpa / sc.time);
                slot[6] = 1.0;
            }
            *res = Ranges {
                goal_dist: gd,
                nearest: near.first().map_or(f64::INFINITY, |&(d, _)| d),
                penalty,
            };
        });
}
