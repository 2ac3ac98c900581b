//! The time-optimal seven-phase profile in normalised units.
//!
//! Units are chosen so that the positive acceleration and jerk limits are 1:
//! time unit `a_max / j_max`, acceleration unit `a_max`, so every tolerance
//! below is relative to the limits, whatever the user's scale.
//!
//! A motion is planned in the "UDDU" frame: jerk `+ju, 0, -jd, 0, -jd, 0, +ju`
//! over phases 1–7, phase 2 an acceleration plateau at `a_max`, phase 4 a
//! cruise at `v_max` (acceleration 0), phase 6 a plateau at `a_min`. The
//! mirrored frame (all signs flipped, minimum and maximum limits swapped)
//! gives the "DUUD" profiles. The time-optimal profile of a triple integrator
//! under these box limits is bang-bang in jerk with at most these switches,
//! so the optimum is the shortest valid profile among:
//!
//! * `VEL`: cruise at `v_max`; both halves are time-optimal velocity changes,
//!   closed form.
//! * `NONE`, `ACC0`, `ACC1`, `ACC0_ACC1`: no cruise (phases 3 and 5 merge
//!   into one jerk pulse), with or without either plateau; each reduces to a
//!   polynomial of degree ≤ 4 in one unknown (coefficients derived by hand
//!   and checked against direct integration in the tests).
//!
//! A start that breaks a limit (or cannot avoid breaking one) is first
//! brought back with a brake of at most two phases.

use super::roots::{poly_roots, quadratic_in, FastMinMax};

/// Limits in one frame: `vmax > 0 > vmin`, `amax > 0 > amin`; `ju` is the
/// rising jerk, `jd` the magnitude of the falling jerk (both > 0). The
/// reciprocals are computed once (multiplications instead of divisions).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lim {
    pub vmax: f64,
    pub vmin: f64,
    pub amax: f64,
    pub amin: f64,
    pub ju: f64,
    pub jd: f64,
    /// `1/ju`, `1/jd`.
    pub iju: f64,
    pub ijd: f64,
    /// `1/c = 2·ju·jd/(ju + jd)`: a fall and a rise between 0 and `a`
    /// change the velocity by `c·a²`.
    pub ic: f64,
    /// `1/amax`, `1/amin`, `1/vmax`, `1/vmin`.
    pub iamax: f64,
    pub iamin: f64,
    pub ivmax: f64,
    pub ivmin: f64,
}

impl Lim {
    /// Limits and their reciprocals.
    #[inline(always)]
    pub fn new(vmax: f64, vmin: f64, amax: f64, amin: f64, ju: f64, jd: f64) -> Lim {
        Lim {
            vmax,
            vmin,
            amax,
            amin,
            ju,
            jd,
            iju: 1.0 / ju,
            ijd: 1.0 / jd,
            ic: 2.0 * ju * jd / (ju + jd),
            iamax: 1.0 / amax,
            iamin: 1.0 / amin,
            ivmax: 1.0 / vmax,
            ivmin: 1.0 / vmin,
        }
    }

    /// [`Lim::new`]`(vmax, −vmax, 1, −1, 1, 1)`, bit for bit (`1/(−x)` is
    /// exactly `−(1/x)`), with one division instead of six.
    #[inline(always)]
    pub fn symmetric(vmax: f64) -> Lim {
        Lim::symmetric_with(vmax, 1.0 / vmax)
    }

    /// The symmetric limits of [`Lim::symmetric`] with `1/vmax` given
    /// (`ivmax`): accelerations ±1, jerks and their reciprocals 1.
    #[inline(always)]
    fn symmetric_with(vmax: f64, ivmax: f64) -> Lim {
        Lim {
            vmax,
            vmin: -vmax,
            amax: 1.0,
            amin: -1.0,
            ju: 1.0,
            jd: 1.0,
            iju: 1.0,
            ijd: 1.0,
            ic: 1.0,
            iamax: 1.0,
            iamin: -1.0,
            ivmax,
            ivmin: -ivmax,
        }
    }

    /// Whether these are the normalised symmetric limits of
    /// [`Lim::symmetric`] (`vmin = -vmax`, accelerations ±1, jerks 1).
    #[cfg(test)]
    pub fn is_symmetric(&self) -> bool {
        (self.vmin == -self.vmax)
            & (self.amax == 1.0)
            & (self.amin == -1.0)
            & (self.ju == 1.0)
            & (self.jd == 1.0)
    }

    /// With `SYM` (only for limits that are [`Lim::is_symmetric`]): the
    /// same limits with the acceleration and jerk fields as constants and
    /// `vmin`, `1/vmin` as `-vmax`, `-1/vmax` (exactly their values), so
    /// that the compiler folds them (`x·1`, `x·0.5·1`, `max(vmax, -vmin)`
    /// ... are exact: the results are bit for bit those of the general
    /// code). Without `SYM` a copy. Each search function starts with it,
    /// generic over `SYM`.
    #[inline(always)]
    pub fn spec<const SYM: bool>(&self) -> Lim {
        if SYM {
            Lim::symmetric_with(self.vmax, self.ivmax)
        } else {
            *self
        }
    }

    /// The limits seen with every sign flipped.
    pub fn mirror(&self) -> Lim {
        Lim {
            vmax: -self.vmin,
            vmin: -self.vmax,
            amax: -self.amin,
            amin: -self.amax,
            ju: self.jd,
            jd: self.ju,
            iju: self.ijd,
            ijd: self.iju,
            ic: self.ic,
            iamax: -self.iamin,
            iamin: -self.iamax,
            ivmax: -self.ivmin,
            ivmin: -self.ivmax,
        }
    }
}

/// A motion problem in one frame: start `(v0, a0)` at position 0, target
/// `(pd, vf, af)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prob {
    pub v0: f64,
    pub a0: f64,
    pub pd: f64,
    pub vf: f64,
    pub af: f64,
}

impl Prob {
    fn mirror(&self) -> Prob {
        Prob {
            v0: -self.v0,
            a0: -self.a0,
            pd: -self.pd,
            vf: -self.vf,
            af: -self.af,
        }
    }
}

/// The seven phase durations of a profile and its sign (+1: UDDU, -1: DUUD).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seven {
    pub t: [f64; 7],
    pub total: f64,
    pub sign: f64,
    pub ju: f64,
    pub jd: f64,
}

impl Seven {
    /// Jerk of phase `i` in the original frame.
    pub fn jerk(&self, i: usize) -> f64 {
        self.sign
            * match i {
                0 | 6 => self.ju,
                2 | 4 => -self.jd,
                _ => 0.0,
            }
    }
}

/// End state `(p, v, a)` after the phases `(duration, jerk)` from
/// `(0, v0, a0)`, only those of the UDDU pattern with a length (straight
/// line: a negative duration extrapolates).
#[inline(always)]
fn run<const N: usize>(v0: f64, a0: f64, ph: [(f64, f64); N]) -> (f64, f64, f64) {
    let (mut p, mut v, mut a) = (0.0, v0, a0);
    for (ti, ji) in ph {
        p += ti * (v + ti * (0.5 * a + ti * ji * (1.0 / 6.0)));
        v += ti * (a + 0.5 * ti * ji);
        a += ti * ji;
    }
    (p, v, a)
}

/// Relative tolerances (normalised units).
const EPS_T: f64 = 1e-10;
const EPS_LIM: f64 = 1e-10;
const EPS_END: f64 = 1e-9;

/// Best candidate so far; `cap`: candidates whose duration is at least
/// this are not wanted either (∞ but in the search after a gap).
pub(crate) struct Best {
    pub seven: Option<Seven>,
    cap: f64,
}

impl Best {
    pub fn new() -> Best {
        Best {
            seven: None,
            cap: f64::INFINITY,
        }
    }
}

/// Velocity and acceleration bounds (tolerances included) for [`check`].
/// `vhi`/`vlo` bound the phase ends (relaxed to the start velocity after a
/// brake), `vmax`/`vmin` the velocity extrema: after a start beyond a
/// velocity limit the motion returns monotonically, so no maximum may lie
/// above `vmax` (no minimum below `vmin`) — once inside, it stays inside.
struct PhaseLim {
    vhi: f64,
    vlo: f64,
    vmax: f64,
    vmin: f64,
    ahi: f64,
    alo: f64,
}

impl PhaseLim {
    /// A phase of jerk `ji` (> 0 when `UP`, else < 0) for `ti` from
    /// `st = (p, v, a)`: advances `st`, returns whether the velocity
    /// extremum inside (a minimum when `UP`, a maximum otherwise) and the
    /// end stay within the bounds (a zero-length phase is skipped).
    #[inline(always)]
    fn jerk<const UP: bool>(
        &self,
        ti: f64,
        ji: f64,
        inv_ji: f64,
        st: &mut (f64, f64, f64),
    ) -> bool {
        if ti == 0.0 {
            return true;
        }
        let (p, v, a) = *st;
        // Velocity extremum inside the phase (acceleration crosses zero),
        // its bound tested first: that holds almost always (a branch
        // predicted right), where whether the extremum lies inside is a
        // coin toss.
        let tz = -a * inv_ji;
        let vz = v - 0.5 * a * a * inv_ji;
        if ((UP && vz < self.vmin) || (!UP && vz > self.vmax)) && tz > 0.0 && tz < ti {
            return false;
        }
        let p = p + ti * (v + ti * (0.5 * a + ti * ji * (1.0 / 6.0)));
        let v = v + ti * (a + 0.5 * ti * ji);
        let a = a + ti * ji;
        *st = (p, v, a);
        // The acceleration moves one way, so only one of its bounds can be
        // crossed: a rising phase cannot end below `alo`, a falling one not
        // above `ahi`, as each starts inside them (the start after the
        // brake, a tested phase end, or a plateau's limit).
        v <= self.vhi && v >= self.vlo && if UP { a <= self.ahi } else { a >= self.alo }
    }

    /// A constant-acceleration phase (a plateau or the cruise) of `ti > 0`.
    #[inline(always)]
    fn hold(&self, ti: f64, st: &mut (f64, f64, f64)) -> bool {
        let (p, v, a) = *st;
        let p = p + ti * (v + ti * 0.5 * a);
        let v = v + ti * a;
        *st = (p, v, a);
        v <= self.vhi && v >= self.vlo
    }
}

/// Validate the durations `t` in frame `l` (clamping round-off negatives),
/// and keep them if shorter than the best so far. Returns whether valid.
#[inline(always)]
fn check<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    t: &mut [f64; 7],
    sign: f64,
    best: &mut Best,
) -> bool {
    let l = &l.spec::<SYM>();
    let mut total = 0.0;
    let mut min = 0.0f64;
    for &ti in t.iter() {
        total += ti.abs();
        min = min.fmin(ti);
    }
    // (A NaN or infinite duration makes the sum NaN or infinite.)
    if !total.is_finite() {
        return false;
    }
    if min < 0.0 {
        if min < -EPS_T * (1.0 + total) {
            return false;
        }
        for ti in t.iter_mut() {
            *ti = ti.fmax(0.0);
        }
        total = t.iter().sum();
    }
    if let Some(b) = &best.seven {
        if total >= b.total {
            return false;
        }
    }
    check_limits::<SYM>(pr, l, t, total, sign, best)
}

/// The rest of [`check`]: limits at every phase end and velocity
/// extremum, end state. (Inlined: 22 instructions a plan fewer than out of
/// line, and about 1 % faster in wall time.)
#[inline(always)]
fn check_limits<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    t: &[f64; 7],
    total: f64,
    sign: f64,
    best: &mut Best,
) -> bool {
    let l = &l.spec::<SYM>();
    let vs = l.vmax.fmax(-l.vmin);
    let tol_v = EPS_LIM * vs.fmax(pr.v0.abs());
    let tol_a = EPS_LIM * l.amax.fmax(-l.amin).fmax(pr.a0.abs());
    // After a brake the start may still be beyond a velocity limit while
    // returning towards it (going further would break the other limit):
    // the motion may not go further out than the start, and returns
    // monotonically (the extrema hold the limits themselves).
    let lim = PhaseLim {
        vhi: l.vmax.fmax(pr.v0) + tol_v,
        vlo: l.vmin.fmin(pr.v0) - tol_v,
        vmax: l.vmax + tol_v,
        vmin: l.vmin - tol_v,
        ahi: l.amax + tol_a,
        alo: l.amin - tol_a,
    };
    let mut st = (0.0, pr.v0, pr.a0);
    let (iju, ijd) = (l.iju, -l.ijd);
    // Plateaus and the cruise hold their limit exactly.
    let ok = lim.jerk::<true>(t[0], l.ju, iju, &mut st)
        && (t[1] == 0.0 || {
            let ok = (st.2 - l.amax).abs() <= tol_a;
            st.2 = l.amax;
            ok && lim.hold(t[1], &mut st)
        })
        && lim.jerk::<false>(t[2], -l.jd, ijd, &mut st)
        && (t[3] == 0.0 || {
            let ok = st.2.abs() <= tol_a && (st.1 - l.vmax).abs() <= tol_v;
            st.2 = 0.0;
            st.1 = l.vmax;
            ok && lim.hold(t[3], &mut st)
        })
        && lim.jerk::<false>(t[4], -l.jd, ijd, &mut st)
        && (t[5] == 0.0 || {
            let ok = (st.2 - l.amin).abs() <= tol_a;
            st.2 = l.amin;
            ok && lim.hold(t[5], &mut st)
        })
        && lim.jerk::<true>(t[6], l.ju, iju, &mut st);
    if !ok {
        return false;
    }
    let (p, v, a) = st;
    let vscale = vs.fmax(pr.v0.abs()).fmax(pr.vf.abs());
    let tol_p = EPS_END * (pr.pd.abs() + vscale * total) + 1e-300;
    if (p - pr.pd).abs() > tol_p
        || (v - pr.vf).abs() > EPS_END * vscale
        || (a - pr.af).abs() > EPS_END * l.amax.fmax(-l.amin)
    {
        return false;
    }
    keep(best, l, t, total, sign)
}

/// Record a validated candidate as the best so far; returns true.
#[inline(always)]
fn keep(best: &mut Best, l: &Lim, t: &[f64; 7], total: f64, sign: f64) -> bool {
    best.seven = Some(Seven {
        t: *t,
        total,
        sign,
        ju: l.ju,
        jd: l.jd,
    });
    true
}

/// [`check`] for the cruise candidate. Its construction holds every limit
/// but the velocity dips where the acceleration crosses zero in phase 1
/// (`a0 < 0`) or phase 7 (`af > 0`), and reaches the end state exactly
/// (the cruise absorbs the position): with no negative duration only the
/// dips are tested instead of the limit walk (the full [`check`] otherwise).
#[inline(always)]
fn check_vel<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    t: &mut [f64; 7],
    sign: f64,
    best: &mut Best,
) -> bool {
    let l = &l.spec::<SYM>();
    let mut total = 0.0;
    let mut min = 0.0f64;
    for &ti in t.iter() {
        total += ti;
        min = min.fmin(ti);
    }
    let inside = pr.v0 <= l.vmax && pr.v0 >= l.vmin && pr.a0 <= l.amax && pr.a0 >= l.amin;
    if !(min >= 0.0 && total.is_finite() && inside && best.seven.is_none()) {
        return check::<SYM>(pr, l, t, sign, best);
    }
    let tol_v = EPS_LIM * l.vmax.fmax(-l.vmin);
    let vlo = l.vmin - tol_v;
    let dip0 = pr.v0 - 0.5 * pr.a0 * pr.a0 * l.iju;
    let dipf = pr.vf - 0.5 * pr.af * pr.af * l.iju;
    let ok = !((pr.a0 < 0.0 && dip0 < vlo) || (pr.af > 0.0 && dipf < vlo));
    if !ok {
        return false;
    }
    keep(best, l, t, total, sign)
}

/// Whether a candidate whose duration is at least `bound` may still beat
/// the best so far.
#[inline]
fn may_beat(best: &Best, bound: f64) -> bool {
    match &best.seven {
        Some(b) => bound < b.total * (1.0 + EPS_T) + EPS_T && bound < best.cap,
        None => true,
    }
}

/// Candidate profiles in one frame: the cruise (`VEL`) when `vel` is set
/// (returns whether it is valid), else the others, skipping those that
/// cannot beat the best so far. `fast` (the frame searched first): the
/// both-plateau family is tried first and, when it holds a valid profile,
/// ends the search (it is then the frame's optimum among the profiles after
/// a velocity gap, if any; those before it, all one-signed, are searched by
/// [`early_after`] up to `cap`, the gap's end); otherwise the remaining
/// families follow as in the full search.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn solve_frame<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    sign: f64,
    vel: bool,
    fast: bool,
    cap: Option<f64>,
    star: Star,
    best: &mut Best,
) -> bool {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let Lim {
        vmax,
        amax,
        amin,
        ju,
        jd,
        ..
    } = *l;
    // VEL: cruise at vmax (reciprocals: a few independent divisions
    // instead of a chain of them).
    if vel {
        let (iju, ijd, ic, ivmax) = (l.iju, l.ijd, l.ic, l.ivmax);
        let (h_ju, h_jd) = (0.5 * iju, 0.5 * ijd);
        let rad_a = (vmax - v0 + a0 * a0 * h_ju) * ic;
        let rad_b = (vmax - vf + af * af * h_ju) * ic;
        if rad_a >= -EPS_T && rad_b >= -EPS_T {
            let mut a1 = rad_a.fmax(0.0).sqrt();
            let mut t1 = 0.0;
            if a1 > amax {
                a1 = amax;
                t1 = (vmax - v0 - (amax * amax - a0 * a0) * h_ju - amax * amax * h_jd) * l.iamax;
            }
            let t0 = (a1 - a0) * iju;
            let t2 = a1 * ijd;
            let mut a5 = -rad_b.fmax(0.0).sqrt();
            let mut t5 = 0.0;
            if a5 < amin {
                a5 = amin;
                t5 = (vf - vmax + amin * amin * h_jd - (af * af - amin * amin) * h_ju) * l.iamin;
            }
            let t4 = -a5 * ijd;
            let t6 = (af - a5) * iju;
            // Displacement without the cruise, straight-line (phase 4 has
            // zero length here).
            let (ju6, jd6) = (ju * (1.0 / 6.0), jd * (1.0 / 6.0));
            let a1 = a0 + t0 * ju;
            let v1 = v0 + t0 * (a0 + 0.5 * t0 * ju);
            let v2 = v1 + t1 * a1;
            let mut p = t0 * (v0 + t0 * (0.5 * a0 + t0 * ju6))
                + t1 * (v1 + 0.5 * t1 * a1)
                + t2 * (v2 + t2 * (0.5 * a1 - t2 * jd6));
            let v3 = v2 + t2 * (a1 - 0.5 * t2 * jd);
            let a3 = a1 - t2 * jd;
            let a4 = a3 - t4 * jd;
            let v4 = v3 + t4 * (a3 - 0.5 * t4 * jd);
            let v5 = v4 + t5 * a4;
            p += t4 * (v3 + t4 * (0.5 * a3 - t4 * jd6))
                + t5 * (v4 + 0.5 * t5 * a4)
                + t6 * (v5 + t6 * (0.5 * a4 + t6 * ju6));
            let t3 = (pd - p) * ivmax;
            // Most cruises are too long for `pd`: the rejection of
            // [`check`] for a negative duration, before building the
            // candidate.
            let others = t0.abs() + t1.abs() + t2.abs() + t4.abs() + t5.abs() + t6.abs();
            if t3 < -EPS_T * (1.0 + others - t3) {
                return false;
            }
            let mut t = [t0, t1, t2, t3, t4, t5, t6];
            // A valid cruise ends the frame's search (but for the
            // profiles of [`early_after`]).
            return check_vel::<SYM>(pr, l, &mut t, sign, best);
        }
        return false;
    }

    let (iju, ijd, ic) = (l.iju, l.ijd, l.ic);
    let (h_ju, h_jd) = (0.5 * iju, 0.5 * ijd);
    // Cheap necessary conditions. Where the falling pulse crosses zero
    // acceleration the velocity peaks at `v0 + c·a1² - a0²/(2 ju)`, which
    // may not exceed the limit (the start velocity after a brake), so
    // `a1² ≤ rad_a`; likewise the fall from that peak to the target needs
    // `a5² ≤ rad_b`. Margins cover `check`'s tolerances.
    let vs = l.vmax.fmax(-l.vmin).fmax(v0.abs());
    let vtop = vmax.fmax(v0) + 1e-9 * vs;
    let rad_a = (vtop - v0 + a0 * a0 * h_ju) * ic;
    let rad_b = (vtop - vf + af * af * h_ju) * ic;
    let no_amax_peak = rad_a < amax * amax * (1.0 - 1e-9);
    let no_amin_fall = rad_b < amin * amin * (1.0 - 1e-9);

    let both = !no_amax_peak && !no_amin_fall;

    // Fast search: both plateaus first; when that family holds a valid
    // profile it is the frame's optimum (the families without one are not
    // searched). Otherwise the other families follow as in the full search.
    if fast && both && acc0_acc1::<SYM>(pr, l, sign, best) {
        early_after::<SYM>(pr, l, sign, cap, star, best);
        return true;
    }

    // NONE: phases 1, 3+5 (one pulse of length T), 7.
    // With `g > 0`, `a1 ≥ √g`; when `af ≤ 0` the pulse crosses zero.
    let g = ((vf - v0) - (af * af - a0 * a0) * h_ju) * ic;
    let a1_cap = if af <= 0.0 {
        amax.fmin(rad_a.fmax(0.0).sqrt())
    } else {
        amax
    };
    if g <= 0.0 || g <= a1_cap * a1_cap * (1.0 + 1e-9) + 1e-12 {
        let mut lo = ((a0 - af) * ijd).fmax(0.0);
        let mut hi = (amax - amin) * ijd;
        // With u = jd·T: a1 = (u + g/u)/2 ≤ a1_cap and a5 = (g/u - u)/2 ≥
        // amin bound u (limits widened by the margins above).
        let cap = a1_cap * (1.0 + 1e-9) + 1e-12;
        let am = amin * (1.0 + 1e-9) - 1e-12;
        let d1 = cap * cap - g;
        let d2 = am * am + g;
        if d2 < 0.0 {
            hi = -1.0;
        } else {
            let (r1, r2) = (d1.fmax(0.0).sqrt(), d2.sqrt());
            hi = hi.fmin((cap + r1).fmin(r2 - am) * ijd);
            lo = lo.fmax((cap - r1).fmax(-am - r2) * ijd);
        }
        let bound = lo * (1.0 + jd * iju) + (af - a0) * iju;
        if lo <= hi && may_beat(best, bound) {
            none_family::<SYM>(pr, l, g, lo, hi, sign, best);
        }
    }

    // ACC0: plateau at amax, then one falling pulse T, then rising to af.
    if !(af <= 0.0 && no_amax_peak) {
        let mut lo = ((amax - af) * ijd).fmax(0.0);
        let mut hi = (amax - amin) * ijd;
        // In terms of a5 = amax - jd·T: the plateau is not negative when
        // `c·a5² ≥ kk`, and a peak (a5 ≤ 0) needs `a5² ≤ rad_b`.
        let v1 = v0 + (amax * amax - a0 * a0) * h_ju;
        let kk = (v1 - vf + amax * amax * h_jd + af * af * h_ju - 1e-9 * vs) * ic;
        let r = kk.fmax(0.0).sqrt();
        let mut a5_lo = if rad_b >= 0.0 {
            amin.fmax(-rad_b.sqrt())
        } else {
            0.0
        };
        let mut a5_hi = af;
        if a5_hi < r {
            a5_hi = a5_hi.fmin(-r);
        } else if a5_lo > -r {
            a5_lo = a5_lo.fmax(r);
        }
        let m = 1e-9 * (amax - amin);
        lo = lo.fmax((amax - a5_hi - m) * ijd);
        hi = hi.fmin((amax - a5_lo + m) * ijd);
        let bound = (amax - a0) * iju + lo + (af - amax + jd * lo) * iju;
        if lo <= hi + EPS_T && may_beat(best, bound) {
            acc0_family::<SYM>(pr, l, lo, hi.fmax(lo), sign, best);
        }
    }

    // ACC1: rise to a1 (unknown), fall to amin, plateau, rise to af.
    if !(a0 >= 0.0 && no_amin_fall) {
        let mut lo = a0.fmax(amin);
        let mut hi = amax;
        // A peak (a1 > 0) needs `a1² ≤ rad_a`; the plateau is not negative
        // when `c·a1² ≥ k1`.
        let k1 = (vf - v0 + a0 * a0 * h_ju + amin * amin * h_jd
            - (af * af - amin * amin) * h_ju
            - 1e-9 * vs)
            * ic;
        let r = k1.fmax(0.0).sqrt();
        let m = 1e-9 * (amax - amin);
        hi = hi.fmin(rad_a.fmax(0.0).sqrt() + m);
        if hi < r - m {
            hi = hi.fmin(-r + m);
        } else if lo > -r + m {
            lo = lo.fmax(r - m);
        }
        let bound = (lo - a0) * iju + (lo - amin) * ijd + (af - amin) * iju;
        if lo <= hi && may_beat(best, bound) {
            acc1_family::<SYM>(pr, l, lo, hi, sign, best);
        }
    }

    if !fast && both {
        acc0_acc1::<SYM>(pr, l, sign, best);
    }
    false
}

/// `NONE` candidates: rise to `a1`, one falling pulse of length `T` in
/// `[lo, hi]` to `a5`, rise to `af`; with `u = jd·T`, `a1 = (u + g/u)/2`
/// and `a5 = (g/u - u)/2` (whether a valid one was found).
#[inline(always)]
fn none_family<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    g: f64,
    lo: f64,
    hi: f64,
    sign: f64,
    best: &mut Best,
) -> bool {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let Lim { ju, jd, iju, .. } = *l;
    let s = ju + jd;
    let k1 = -a0 * a0 + af * af + 2.0 * ju * (v0 - vf);
    let k2 =
        -a0 * a0 * a0 + 3.0 * a0 * ju * v0 + af * af * af - 3.0 * af * ju * vf + 3.0 * ju * ju * pd;
    let k3 = -a0 * a0 - af * af + 2.0 * ju * (v0 + vf);
    let poly = [
        -3.0 * k1 * k1,
        -8.0 * s * k2,
        6.0 * s * s * k3,
        0.0,
        jd * s * s * (jd + 2.0 * ju),
    ];
    for &tt in poly_roots(poly, lo, hi).as_slice() {
        if tt <= 0.0 {
            continue;
        }
        let h = g / (jd * tt);
        let a1 = 0.5 * (jd * tt + h);
        let a5 = 0.5 * (h - jd * tt);
        let mut t = [(a1 - a0) * iju, 0.0, tt, 0.0, 0.0, 0.0, (af - a5) * iju];
        if check::<SYM>(pr, l, &mut t, sign, best) {
            return true; // duration grows with T
        }
    }
    false
}

/// `ACC0` candidates: rise to `amax`, plateau, one falling pulse of length
/// `T` in `[lo, hi]`, rise to `af`.
#[inline(always)]
fn acc0_family<const SYM: bool>(pr: &Prob, l: &Lim, lo: f64, hi: f64, sign: f64, best: &mut Best) {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let Lim {
        amax,
        ju,
        jd,
        iju,
        ijd,
        iamax,
        ..
    } = *l;
    let s = ju + jd;
    let (h_ju, h_jd) = (0.5 * iju, 0.5 * ijd);
    let v1 = v0 + (amax * amax - a0 * a0) * h_ju;
    let acc0 = |tt: f64| -> [f64; 7] {
        let mut t = [
            (amax - a0) * iju,
            0.0,
            tt,
            0.0,
            0.0,
            0.0,
            (af - amax + jd * tt) * iju,
        ];
        // Velocity without the plateau, closed form.
        let a5 = amax - jd * tt;
        let v = v1 + (amax * amax - a5 * a5) * h_jd + (af * af - a5 * a5) * h_ju;
        t[1] = (vf - v) * iamax;
        t
    };
    let t0 = acc0(0.0);
    let (p0, _, _) = run(v0, a0, [(t0[0], ju), (t0[1], 0.0), (t0[6], ju)]);
    let poly = [
        24.0 * amax * ju * ju * (p0 - pd),
        0.0,
        -6.0 * jd * s * (af * af - amax * amax - 2.0 * ju * vf),
        -4.0 * amax * jd * s * (2.0 * jd + ju),
        3.0 * jd * jd * s * s,
    ];
    for &tt in poly_roots(poly, lo, hi).as_slice() {
        let mut t = acc0(tt);
        check::<SYM>(pr, l, &mut t, sign, best);
    }
}

/// `ACC1` candidates: rise to `a1` in `[lo, hi]`, fall to `amin`, plateau,
/// rise to `af`.
#[inline(always)]
fn acc1_family<const SYM: bool>(pr: &Prob, l: &Lim, lo: f64, hi: f64, sign: f64, best: &mut Best) {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let Lim {
        amin,
        ju,
        jd,
        iju,
        ijd,
        iamin,
        ..
    } = *l;
    let s = ju + jd;
    let (h_ju, h_jd) = (0.5 * iju, 0.5 * ijd);
    let acc1 = |a1: f64| -> [f64; 7] {
        let mut t = [
            (a1 - a0) * iju,
            0.0,
            (a1 - amin) * ijd,
            0.0,
            0.0,
            0.0,
            (af - amin) * iju,
        ];
        // Velocity without the plateau, closed form.
        let v = v0
            + (a1 * a1 - a0 * a0) * h_ju
            + (a1 * a1 - amin * amin) * h_jd
            + (af * af - amin * amin) * h_ju;
        t[5] = (vf - v) * iamin;
        t
    };
    let t0 = acc1(0.0);
    let (p0, _, _) = run(
        v0,
        a0,
        [(t0[0], ju), (t0[2], -jd), (t0[5], 0.0), (t0[6], ju)],
    );
    let poly = [
        24.0 * amin * jd * jd * ju * ju * (p0 - pd),
        12.0 * amin * jd * s * (2.0 * ju * v0 - a0 * a0),
        -6.0 * s * (-a0 * a0 * jd + amin * amin * ju + 2.0 * jd * ju * v0),
        4.0 * amin * s * (jd + 2.0 * ju),
        -3.0 * s * s,
    ];
    for &a1 in poly_roots(poly, lo, hi).as_slice() {
        let mut t = acc1(a1);
        check::<SYM>(pr, l, &mut t, sign, best);
    }
}

/// `ACC0_ACC1`: both plateaus, unknown plateau length t2 (whether a valid
/// candidate was found).
#[inline(always)]
fn acc0_acc1<const SYM: bool>(pr: &Prob, l: &Lim, sign: f64, best: &mut Best) -> bool {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let Lim {
        amax, amin, ju, jd, ..
    } = *l;
    let mut found = false;
    let (iju, ijd, iamin) = (l.iju, l.ijd, l.iamin);
    let bound = (amax - a0) * iju + (amax - amin) * ijd + (af - amin) * iju;
    if may_beat(best, bound) {
        // Velocity change without the plateaus, closed form.
        let dv0 = (amax * amax - a0 * a0) * (0.5 * iju)
            + (amax * amax - amin * amin) * (0.5 * ijd)
            + (af * af - amin * amin) * (0.5 * iju);
        let acc01 = |t2: f64| -> [f64; 7] {
            let mut t = [
                (amax - a0) * iju,
                t2,
                (amax - amin) * ijd,
                0.0,
                0.0,
                0.0,
                (af - amin) * iju,
            ];
            t[5] = (vf - (v0 + dv0 + amax * t2)) * iamin;
            t
        };
        let t0 = acc01(0.0);
        let (p0, _, _) = run(
            v0,
            a0,
            [(t0[0], ju), (t0[2], -jd), (t0[5], 0.0), (t0[6], ju)],
        );
        let da = amax - amin;
        let poly = [
            24.0 * amin * jd * jd * ju * ju * (p0 - pd),
            -12.0
                * jd
                * ju
                * da
                * (-a0 * a0 * jd + amax * amax * jd + amax * amax * ju - amax * amin * ju
                    + 2.0 * jd * ju * v0),
            -12.0 * amax * jd * jd * ju * ju * da,
        ];
        for &t2 in quadratic_in(poly, 0.0, f64::MAX).as_slice() {
            let mut t = acc01(t2);
            found |= check::<SYM>(pr, l, &mut t, sign, best);
        }
    }
    found
}

/// [`solve_g`] with `SYM` chosen from the limits (the tests' entry).
#[cfg(test)]
pub(crate) fn solve(pr: &Prob, l: &Lim) -> Option<Seven> {
    let mut best = Best::new();
    if l.is_symmetric() {
        solve_g::<true>(pr, l, &mut best)
    } else {
        solve_g::<false>(pr, l, &mut best)
    }
    best.seven
}

/// The time-optimal profile from a start inside the limits, or `None`.
///
/// The frame is chosen first. The positions reachable at `(vf, af)` after
/// a time `T` form an interval that collapses to one point `p*` at the
/// duration of the fastest velocity change; while the velocity change
/// stays possible as `T` grows, the optimum is the first `T` whose
/// interval reaches `pd`, through its upper end (the UDDU frame) when
/// `pd > p*`, through its lower end (DUUD) when `pd < p*`. So only that
/// frame is searched. When the velocity change is impossible for a range
/// of durations (a "gap", see [`direction`]) the other frame is searched
/// too (pruned by the best duration so far), as it is when the preferred
/// frame finds nothing. Near `pd = p*` (within rounding) or after a brake,
/// both frames are searched in full.
///
/// `SYM`: the limits are symmetric (see [`Lim::spec`]); the results are
/// the same bit for bit either way. The optimum is left in `best` (given
/// empty), which the caller reads in place (not copied out).
pub(crate) fn solve_g<const SYM: bool>(pr: &Prob, l: &Lim, best: &mut Best) {
    let l = &l.spec::<SYM>();
    let (sign, gap, star) = direction::<SYM>(pr, l);
    if sign == 0.0 {
        return solve_both::<SYM>(pr, l, gap, star, best);
    }
    let [star_up, star_down] = star;
    // Deciding the family early (see [`solve_frame`]): after a velocity
    // gap the reachable positions restart from one point and grow again,
    // so a valid both-plateau profile is the optimum of the durations
    // after it; the shorter profiles before the gap (one-signed) are
    // searched up to its end (`cap`) by [`early_after`]. (Checked against
    // the exhaustive search in the tests.)
    let fast = true;
    let cap = gap.map(|g| g.cap);
    let done = |best: &Best| match (&best.seven, gap) {
        (None, _) => false,
        (Some(_), None) => true,
        // Before the gap, or after it when the gap ends on the same side.
        (Some(b), Some(g)) => b.total <= g.t_a || g.sign == sign,
    };
    // (The mirrored problem is built only when searched.)
    if sign > 0.0 {
        search_frame::<SYM>(pr, l, 1.0, fast, cap, star_up, best);
        if !done(best) {
            search_frame::<SYM>(&pr.mirror(), &l.mirror(), -1.0, false, cap, star_down, best);
        }
    } else {
        search_frame::<SYM>(&pr.mirror(), &l.mirror(), -1.0, fast, cap, star_down, best);
        if !done(best) {
            search_frame::<SYM>(pr, l, 1.0, false, cap, star_up, best);
        }
    }
}

/// All candidates of one frame, the cruise first. A valid cruise ends the
/// search but for the profiles that may still come before it (see
/// [`early_after`]; `cap`: the end of the durations before a velocity gap).
#[inline]
#[allow(clippy::too_many_arguments)]
fn search_frame<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    sign: f64,
    fast: bool,
    cap: Option<f64>,
    star: Star,
    best: &mut Best,
) {
    let l = &l.spec::<SYM>();
    if solve_vel::<SYM>(pr, l, sign, best) {
        early_after::<SYM>(pr, l, sign, cap, star, best);
    } else {
        solve_no_cruise::<SYM>(pr, l, sign, fast, cap, star, best);
    }
}

/// The cruise candidate of one frame (whether valid); separate from
/// [`solve_no_cruise`] so each call sets up only what it uses.
#[inline(always)]
fn solve_vel<const SYM: bool>(pr: &Prob, l: &Lim, sign: f64, best: &mut Best) -> bool {
    let l = &l.spec::<SYM>();
    solve_frame::<SYM>(pr, l, sign, true, false, None, Star::ANY, best)
}

/// The candidates without cruise of one frame.
#[inline(never)]
fn solve_no_cruise<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    sign: f64,
    fast: bool,
    cap: Option<f64>,
    star: Star,
    best: &mut Best,
) {
    let l = &l.spec::<SYM>();
    solve_frame::<SYM>(pr, l, sign, false, fast, cap, star, best);
}

/// After a valid cruise or both-plateau profile of one frame, the profiles
/// of the frame that may still be shorter.
///
/// The frame's candidates that matter lie on its chain of extremal
/// profiles, which starts at the fastest velocity change (`star`); along
/// it the falling pulse's start acceleration `a1` grows and its end `a5`
/// falls, and the reachable end position `P(T)` moves at `dP/dT = H`, the
/// Hamiltonian, which at the pulse ends equals `v(s1) + a1·L/2 = v(s2) -
/// a5·L/2` (`L` the pulse length). A later cruise can only reach `pd` after
/// an earlier profile did when `P` falls back in between, which needs
/// `H < 0`. On profiles with `a1 ≥ 0 ≥ a5`, `P` falls, if at all, before
/// it rises — checked (not proven) by the comparison with the exhaustive
/// search in the tests. The others are one-signed and come first on the
/// chain: with `a1 ≤ 0` (the chain starting so) `H ≥ v(s2) ≥ vf -
/// max(af, 0)²/(2 ju)`; with `a5 ≥ 0`, `H ≥ v(s1)`, and `v(s1) < 0` needs
/// `2 jd·(vf - af²/(2 ju)) < a1² < min(a0² - 2 ju·v0, amax²)`. Across a
/// velocity gap `P` also jumps back: every one-signed profile up to the gap
/// (`cap`; all the profiles before it are one-signed) is searched then.
/// Their velocity never exceeds `w = max(v0, vf)` (it falls until the last
/// phase, or rises from the first one on), so they reach at most
/// `max(w, 0)·T`: none when that stays below `pd`.
#[inline(always)]
fn early_after<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    sign: f64,
    cap: Option<f64>,
    star: Star,
    best: &mut Best,
) {
    let l = &l.spec::<SYM>();
    let Some(b) = &best.seven else { return };
    let Prob { v0, a0, vf, af, .. } = *pr;
    let vs = l.vmax.fmax(-l.vmin).fmax(v0.abs());
    let tol = 1e-9 * vs;
    let (ea, eb) = match cap {
        None => (
            star.a1 <= 1e-9 && vf - af.fmax(0.0) * af.fmax(0.0) * (0.5 * l.iju) < tol,
            star.a5 >= -1e-9
                && v0 - a0.fmin(0.0) * a0.fmin(0.0) * (0.5 * l.iju) < tol
                && 2.0 * l.jd * (vf - af * af * (0.5 * l.iju))
                    < (a0 * a0 - 2.0 * l.ju * v0).fmin(l.amax * l.amax) + tol,
        ),
        Some(_) => (a0 < 0.0, af > 0.0),
    };
    if !(ea || eb) {
        return;
    }
    let cap = cap.unwrap_or(f64::INFINITY);
    let tmax = b.total.fmin(cap);
    let w = v0.fmax(vf).fmax(0.0);
    let reach = w * tmax + 1e-8 * (pr.pd.abs() + vs * tmax);
    if pr.pd <= reach {
        best.cap = cap;
        solve_early::<SYM>(pr, l, sign, ea, eb, best);
        best.cap = f64::INFINITY;
    }
}

/// The candidates of one frame whose pulse starts at `a1 ≤ 0` (`ea`) or
/// ends at `a5 ≥ 0` (`eb`), see [`early_after`]: the no-plateau family
/// and the plateau family on the same side, each over the part of its
/// interval where the acceleration keeps its sign, skipped when it cannot
/// reach `pd`.
#[inline(never)]
fn solve_early<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    sign: f64,
    ea: bool,
    eb: bool,
    best: &mut Best,
) {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let Lim {
        amax,
        amin,
        jd,
        iju,
        ijd,
        ic,
        ..
    } = *l;
    let (h_ju, h_jd) = (0.5 * iju, 0.5 * ijd);
    // Limits widened by the margins of [`solve_frame`].
    let cap = amax * (1.0 + 1e-9) + 1e-12;
    let am = amin * (1.0 + 1e-9) - 1e-12;
    let m = 1e-9 * (amax - amin);
    // Velocities stay below `w = max(v0, vf)`: a profile of duration T
    // reaches at most `max(w, 0)·T` (with a margin).
    let vs = l.vmax.fmax(-l.vmin).fmax(v0.abs());
    let w = v0.fmax(vf).fmax(0.0);
    let reach = |tmax: f64| w * tmax + 1e-8 * (pd.abs() + vs * tmax);
    // NONE with `a1 ≤ 0` (g < 0) or `a5 ≥ 0` (g > 0): `u² ≤ |g|`, u = jd·T;
    // the duration `T·(1 + jd/ju) + (af - a0)/ju` grows with T.
    let g = ((vf - v0) - (af * af - a0 * a0) * h_ju) * ic;
    if (g < 0.0 && ea) || (g > 0.0 && eb) {
        let k = 1.0 + jd * iju;
        let mut lo = ((a0 - af) * ijd).fmax(0.0);
        let mut hi = ((amax - amin) * ijd).fmin(g.abs().sqrt() * ijd * (1.0 + 1e-9) + 1e-12);
        if g < 0.0 {
            // a5 = (g/u - u)/2 ≥ amin.
            let d2 = am * am + g;
            hi = if d2 < 0.0 {
                -1.0
            } else {
                hi.fmin((d2.sqrt() - am) * ijd)
            };
        } else {
            // a1 = (u + g/u)/2 ≤ amax.
            let d1 = cap * cap - g;
            if d1 < 0.0 {
                hi = -1.0;
            } else {
                let r1 = d1.sqrt();
                hi = hi.fmin((cap + r1) * ijd);
                lo = lo.fmax((cap - r1) * ijd);
            }
        }
        let (tmin, tmax) = (lo * k + (af - a0) * iju, hi * k + (af - a0) * iju);
        if lo <= hi && pd <= reach(tmax) && may_beat(best, tmin) {
            none_family::<SYM>(pr, l, g, lo, hi, sign, best);
        }
    }
    // ACC0 with `a5 = amax - jd·T ≥ 0`: the acceleration is ≥ 0 from its
    // first zero on, so the plateau gains at most `vf` minus the lowest
    // velocity.
    if eb {
        let lo = ((amax - af) * ijd).fmax(0.0);
        let mut hi = amax * ijd * (1.0 + 1e-9);
        // The plateau is not negative when `c·a5² ≥ kk`.
        let v1 = v0 + (amax * amax - a0 * a0) * h_ju;
        let kk = (v1 - vf + amax * amax * h_jd + af * af * h_ju - 1e-9 * vs) * ic;
        if kk > 0.0 {
            hi = hi.fmin((amax - kk.sqrt() + m) * ijd);
        }
        let vlow = v0 - (-a0).fmax(0.0).powi(2) * h_ju;
        let tmin = (amax - a0) * iju + lo + (af - amax + jd * lo) * iju;
        let tmax = (amax - a0) * iju + (vf - vlow) * l.iamax + hi + af * iju;
        if lo <= hi && pd <= reach(tmax) && may_beat(best, tmin) {
            acc0_family::<SYM>(pr, l, lo, hi, sign, best);
        }
    }
    // ACC1 with `a1 ≤ 0`: the velocity falls until the last phase, the
    // plateau by at most `v0 - vmin`.
    if ea {
        let lo = a0.fmax(amin);
        let mut hi = m;
        // The plateau is not negative when `c·a1² ≥ k1`.
        let k1 = (vf - v0 + a0 * a0 * h_ju + amin * amin * h_jd
            - (af * af - amin * amin) * h_ju
            - 1e-9 * vs)
            * ic;
        if k1 > 0.0 {
            hi = hi.fmin(-k1.sqrt() + m);
        }
        let vlow = l.vmin.fmin(v0) - 1e-9 * vs;
        let tmin = (lo - a0) * iju + (lo - amin) * ijd + (af - amin) * iju;
        let tmax = -a0 * iju - amin * ijd - (v0 - vlow) * l.iamin + (af - amin) * iju;
        if lo <= hi && pd <= reach(tmax) && may_beat(best, tmin) {
            acc1_family::<SYM>(pr, l, lo, hi, sign, best);
        }
    }
}

/// Reference for the tests: every family of both frames, without any of
/// the shortcuts (direction, early stops).
#[cfg(test)]
pub(crate) fn solve_reference(pr: &Prob, l: &Lim) -> Option<Seven> {
    let mut best = Best::new();
    let (mpr, ml) = (pr.mirror(), l.mirror());
    solve_vel::<false>(pr, l, 1.0, &mut best);
    solve_vel::<false>(&mpr, &ml, -1.0, &mut best);
    solve_no_cruise::<false>(pr, l, 1.0, false, None, Star::ANY, &mut best);
    solve_no_cruise::<false>(&mpr, &ml, -1.0, false, None, Star::ANY, &mut best);
    best.seven
}

/// The full search of both frames (a valid cruise ends its frame but for
/// the profiles of [`early_after`]; after a brake all of them).
fn solve_both<const SYM: bool>(
    pr: &Prob,
    l: &Lim,
    gap: Option<Gap>,
    star: [Star; 2],
    best: &mut Best,
) {
    let l = &l.spec::<SYM>();
    let (mpr, ml) = (pr.mirror(), l.mirror());
    let up = solve_vel::<SYM>(pr, l, 1.0, best);
    let down = solve_vel::<SYM>(&mpr, &ml, -1.0, best);
    // After a brake (no gap information) any profile may beat the cruise.
    let inside = pr.v0 <= l.vmax && pr.v0 >= l.vmin && pr.a0 <= l.amax && pr.a0 >= l.amin;
    let cap = match gap {
        Some(g) => Some(g.cap),
        None if !inside => Some(f64::INFINITY),
        None => None,
    };
    let [su, sd] = star;
    for (p, ll, sign, cruise, st) in [(pr, l, 1.0, up, su), (&mpr, &ml, -1.0, down, sd)] {
        if !cruise {
            solve_no_cruise::<SYM>(p, ll, sign, false, None, st, best);
        } else {
            early_after::<SYM>(p, ll, sign, cap, st, best);
        }
    }
}

/// The frame of the optimum, `(sign, gap)`: sign +1 (UDDU) or -1 (DUUD)
/// from the sign of `pd - p*`, `p*` the displacement of the fastest
/// velocity change, 0 when the start is outside the limits or `pd` is
/// within rounding of `p*`. `gap`: see [`gap`].
#[inline]
pub(crate) fn direction<const SYM: bool>(pr: &Prob, l: &Lim) -> (f64, Option<Gap>, [Star; 2]) {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let Lim {
        vmax,
        vmin,
        amax,
        amin,
        ju,
        jd,
        ..
    } = *l;
    if !(v0 <= vmax && v0 >= vmin && a0 <= amax && a0 >= amin) {
        return (0.0, None, [Star::ANY; 2]);
    }
    let (iju, ijd, ic) = (l.iju, l.ijd, l.ic);
    let (h_ju, h_jd) = (0.5 * iju, 0.5 * ijd);
    let dv = vf - v0;
    let vs = vmax.fmax(-vmin);
    let gap = if a0 > 0.0 && af > 0.0 {
        gap::<SYM>(pr, l)
    } else if a0 < 0.0 && af < 0.0 {
        gap::<SYM>(&pr.mirror(), &l.mirror()).map(|g| Gap { sign: -g.sign, ..g })
    } else {
        None
    };
    let direct = if af >= a0 {
        (af * af - a0 * a0) * h_ju
    } else {
        (a0 * a0 - af * af) * h_jd
    };
    // Three phases: ramp to the extreme acceleration a1, plateau, ramp to af.
    let (j1, j3, ij1, ij3, a1, tp) = if dv >= direct {
        let mut a1 = ((dv + a0 * a0 * h_ju + af * af * h_jd) * ic)
            .fmax(0.0)
            .sqrt();
        let mut tp = 0.0;
        if a1 > amax {
            a1 = amax;
            tp = (dv - (amax * amax - a0 * a0) * h_ju - (amax * amax - af * af) * h_jd) * l.iamax;
        }
        (ju, -jd, iju, -ijd, a1, tp)
    } else {
        let mut a1 = -((a0 * a0 * h_jd + af * af * h_ju - dv) * ic)
            .fmax(0.0)
            .sqrt();
        let mut tp = 0.0;
        if a1 < amin {
            a1 = amin;
            tp = (dv - (a0 * a0 - amin * amin) * h_jd - (af * af - amin * amin) * h_ju) * l.iamin;
        }
        (-jd, ju, -ijd, iju, a1, tp)
    };
    let t1 = ((a1 - a0) * ij1).fmax(0.0);
    let t3 = ((af - a1) * ij3).fmax(0.0);
    let tp = tp.fmax(0.0);
    // Displacement: ramp, plateau, ramp.
    let v1 = v0 + t1 * (a0 + 0.5 * t1 * j1);
    let mut p = t1 * (v0 + t1 * (0.5 * a0 + t1 * j1 * (1.0 / 6.0)));
    p += tp * (v1 + 0.5 * tp * a1);
    let v2 = v1 + tp * a1;
    p += t3 * (v2 + t3 * (0.5 * a1 + t3 * j3 * (1.0 / 6.0)));
    // The fastest change seen in each frame: rising first, it is the
    // UDDU frame's pulse start `a1` with end `af`, and the mirror frame's
    // start `-a0` with end `-a1`; falling first, the other way round.
    let star = if j1 > 0.0 {
        [Star { a1, a5: af }, Star { a1: -a0, a5: -a1 }]
    } else {
        [Star { a1: a0, a5: a1 }, Star { a1: -a1, a5: -af }]
    };
    (side(pd, p, vs * (t1 + tp + t3)), gap, star)
}

/// The fastest velocity change of one frame (the start of its chain of
/// extremal profiles), as the accelerations at the start `a1` and the end
/// `a5` of its falling pulse (see [`early_after`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Star {
    pub a1: f64,
    pub a5: f64,
}

impl Star {
    /// Unknown (any one-signed profile may come first).
    const ANY: Star = Star {
        a1: f64::NEG_INFINITY,
        a5: f64::INFINITY,
    };
}

/// Sign of `pd - p` (0 within rounding; `vt`: velocity scale × duration).
#[inline]
fn side(pd: f64, p: f64, vt: f64) -> f64 {
    let tol = 1e-9 * (pd.abs() + p.abs() + vt) + 1e-300;
    if pd > p + tol {
        1.0
    } else if pd < p - tol {
        -1.0
    } else {
        0.0
    }
}

/// With `a0 > 0` and `af > 0` the velocity change `dv` takes at least
/// `B = a0²/(2 jd) + af²/(2 ju)` once the acceleration has time to dip to
/// 0: the least change in a time `T` is that of the fall to a dip `m` and
/// the rise to `af`, `B - c·m²`, and `m` falls as `T` grows. So when
/// `dv < B` the target velocity is reachable for durations up to `t_a`
/// (dip `+√((B - dv)/c)`), not between, and again from `t_b` (dip
/// `-√((B - dv)/c)`) on, where the reachable positions restart from the
/// single point `p**` (the only profile of duration `t_b` reaching `dv`;
/// when `-√((B - dv)/c)` lies below `amin` it holds `amin` for a while).
/// Returns `(t_a, sign of pd - p**)`; sign 0 when unsure (a dip within
/// 10⁻⁶ of 0; both frames are then searched), `None` without a gap.
#[inline(always)]
fn gap<const SYM: bool>(pr: &Prob, l: &Lim) -> Option<Gap> {
    let l = &l.spec::<SYM>();
    let Prob { v0, a0, pd, vf, af } = *pr;
    let (ju, jd) = (l.ju, l.jd);
    let (iju, ijd, ic) = (l.iju, l.ijd, l.ic);
    let vs = l.vmax.fmax(-l.vmin);
    let b = 0.5 * (a0 * a0 * ijd + af * af * iju);
    let dv = vf - v0;
    let r = b - dv;
    if r < -1e-9 * (vs + v0.abs() + vf.abs()) {
        return None;
    }
    let m = (r.fmax(0.0) * ic).sqrt();
    let t_a = (a0 - m) * ijd + (af - m) * iju;
    let cap = t_a * (1.0 + 1e-9) + 1e-12;
    if m <= 1e-6 {
        return Some(Gap {
            t_a: f64::NEG_INFINITY,
            sign: 0.0,
            cap,
        });
    }
    if -m < l.amin {
        // The dip is cut at `amin`: the profile at t_b (the fastest
        // velocity change through negative accelerations, so the only
        // profile of its duration that reaches `dv`) falls from a0 to
        // amin, holds amin for `tp` (> 0: without the plateau the change
        // would be `B - amin²/(2 c)`, above dv), and rises to af.
        let amin = l.amin;
        let (t1, t2) = ((a0 - amin) * ijd, (af - amin) * iju);
        let tp =
            (dv - (a0 * a0 - amin * amin) * (0.5 * ijd) - (af * af - amin * amin) * (0.5 * iju))
                * l.iamin;
        let tp = tp.fmax(0.0);
        let v1 = v0 + t1 * (a0 - 0.5 * t1 * jd);
        let v2 = v1 + tp * amin;
        let p = t1 * (v0 + t1 * (0.5 * a0 - t1 * jd * (1.0 / 6.0)))
            + tp * (v1 + 0.5 * tp * amin)
            + t2 * (v2 + t2 * (0.5 * amin + t2 * ju * (1.0 / 6.0)));
        return Some(Gap {
            t_a,
            sign: side(pd, p, vs * (t1 + tp + t2)),
            cap,
        });
    }
    // The profile at t_b: fall from a0 to -m, rise to af.
    let (t1, t2) = ((a0 + m) * ijd, (af + m) * iju);
    let v1 = v0 + t1 * (a0 - 0.5 * t1 * jd);
    let p = t1 * (v0 + t1 * (0.5 * a0 - t1 * jd * (1.0 / 6.0)))
        + t2 * (v1 + t2 * (-0.5 * m + t2 * ju * (1.0 / 6.0)));
    Some(Gap {
        t_a,
        sign: side(pd, p, vs * (t1 + t2)),
        cap,
    })
}

/// A velocity gap (see [`gap`]): `t_a` the end of the durations before it
/// (-∞ when unsure), `sign` the frame where the reachable positions
/// restart after it (0 when unsure), `cap` an upper bound on the
/// durations before it (with a margin).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gap {
    pub t_a: f64,
    pub sign: f64,
    pub cap: f64,
}

/// A brake of at most two phases `(jerk, duration)` that brings `(v0, a0)`
/// back inside the limits as fast as possible (zero durations when already
/// inside).
#[inline(always)]
pub(crate) fn brake(v0: f64, a0: f64, l: &Lim) -> [(f64, f64); 2] {
    let none = [(0.0, 0.0); 2];
    // Common case: inside, and no unavoidable overshoot.
    let inside = (v0 <= l.vmax) & (v0 >= l.vmin) & (a0 <= l.amax) & (a0 >= l.amin);
    // The velocity where the acceleration reaches 0 at full jerk,
    // `v0 ± a0²/(2j)`, without a branch on the sign of `a0` (a coin
    // toss): `a0·|a0|` is `±a0²` exactly, so the same numbers.
    let ij = if a0 >= 0.0 { l.ijd } else { l.iju };
    let w = v0 + a0 * a0.abs() * (0.5 * ij);
    if inside & (w <= l.vmax) & (w >= l.vmin) {
        return none;
    }
    brake_outside(v0, a0, l)
}

/// [`brake`] for a start outside the limits or about to leave them.
#[inline(never)]
fn brake_outside(v0: f64, a0: f64, l: &Lim) -> [(f64, f64); 2] {
    let none = [(0.0, 0.0); 2];
    let over_up = a0 > 0.0 && v0 + a0 * a0 / (2.0 * l.jd) > l.vmax;
    let under_low = a0 < 0.0 && v0 - a0 * a0 / (2.0 * l.ju) < l.vmin;
    if a0 > l.amax {
        acceleration_brake(v0, a0, l)
    } else if a0 < l.amin {
        flip(acceleration_brake(-v0, -a0, &l.mirror()))
    } else if (v0 > l.vmax && !under_low) || over_up {
        velocity_brake(v0, a0, l)
    } else if (v0 < l.vmin && !over_up) || under_low {
        flip(velocity_brake(-v0, -a0, &l.mirror()))
    } else {
        none
    }
}

fn flip(b: [(f64, f64); 2]) -> [(f64, f64); 2] {
    [(-b[0].0, b[0].1), (-b[1].0, b[1].1)]
}

/// `a0 > amax`: ramp the acceleration down to `amax` (or further, when the
/// velocity would overshoot `vmax`).
fn acceleration_brake(v0: f64, a0: f64, l: &Lim) -> [(f64, f64); 2] {
    let jd = l.jd;
    if v0 + a0 * a0 / (2.0 * jd) > l.vmax {
        return velocity_brake(v0, a0, l);
    }
    let t1 = (a0 - l.amax) / jd;
    let v1 = v0 + t1 * (a0 - 0.5 * jd * t1);
    if v1 < l.vmin {
        // Still below the minimum velocity: hold amax until back inside,
        // but not so long that vmax would be overshot afterwards.
        let to_vmin = (l.vmin - v1) / l.amax;
        let to_vmax = (l.vmax - l.amax * l.amax / (2.0 * jd) - v1) / l.amax;
        return [(-jd, t1), (0.0, to_vmin.fmin(to_vmax).fmax(0.0))];
    }
    [(-jd, t1), (0.0, 0.0)]
}

/// The velocity is above `vmax` or will overshoot it: decelerate with the
/// falling jerk (and the `amin` plateau) until the velocity is back at
/// `vmax`, never so far that `vmin` would be undershot afterwards.
fn velocity_brake(v0: f64, a0: f64, l: &Lim) -> [(f64, f64); 2] {
    let (ju, jd) = (l.ju, l.jd);
    let t_amin = (a0 - l.amin) / jd;
    let t_vmax = (a0 + (a0 * a0 + 2.0 * jd * (v0 - l.vmax)).fmax(0.0).sqrt()) / jd;
    // v(t) - a(t)^2 / (2 ju) = vmin with a(t) = a0 - jd t.
    let qa = 0.5 * jd + jd * jd / (2.0 * ju);
    let qb = a0 * (1.0 + jd / ju);
    let qc = v0 - a0 * a0 / (2.0 * ju) - l.vmin;
    // (No such cap when the minimum is undershot whatever we do.)
    let disc = qb * qb + 4.0 * qa * qc;
    let doomed_low = (a0 < 0.0 && qc < 0.0) || disc < 0.0;
    let t_vmin = if doomed_low {
        f64::INFINITY
    } else {
        (qb + disc.sqrt()) / (2.0 * qa)
    };
    let t_stop = t_vmax.fmin(t_vmin);
    if t_amin < t_stop {
        let t1 = t_amin.fmax(0.0);
        let v1 = v0 + t1 * (a0 - 0.5 * jd * t1);
        let to_vmax = (v1 - l.vmax) / -l.amin;
        let to_vmin = if doomed_low {
            f64::INFINITY
        } else {
            (v1 - l.amin * l.amin / (2.0 * ju) - l.vmin) / -l.amin
        };
        [(-jd, t1), (0.0, to_vmax.fmin(to_vmin).fmax(0.0))]
    } else {
        [(-jd, t_stop.fmax(0.0)), (0.0, 0.0)]
    }
}
