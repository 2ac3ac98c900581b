/*!
Time-optimal jerk-limited ("double S", seven-segment) motion profiles.

This module owns the one-degree-of-freedom profile generator of the Orocos
interpolation notes, completed for every case the notes leave as TODO: from
any start state `(p0, v0, a0)` to any target `(pf, vf, af)` under
`v_min ≤ v ≤ v_max`, `a_min ≤ a ≤ a_max`, `j_min ≤ j ≤ j_max`, the
minimum-time profile. It is sans-IO: time is always an argument.

* [`plan`]: one motion → a [`Profile`] (sample it with [`Profile::at`]).
* [`simulate`]: the stateless "simulation mode": all setpoints of a motion at
  a fixed interval.
* [`Interpolator`]: the stateful API of the notes (`SetMax…`, `SetMin…`,
  `SetGoal…`, `Scale…`/`Reset…`, `GetNewSetpoint`), re-planning from the
  current state whenever a limit or the goal changes mid-motion.
* [`JerkFollower`]: an actuator smoother that follows a commanded value.

Units are whatever the caller uses for position (`u`): velocities in u/s,
accelerations in u/s², jerks in u/s³, times in s.

A start that breaks a limit, or cannot avoid breaking one (for example
`v0 + a0²/(2·j_max) > v_max` with `a0 > 0`), is first brought back inside the
limits as fast as possible (the *brake*, at most two segments); the fastest
motion follows from there and respects every limit.
*/

mod roots;
mod solve;

use std::fmt;

use roots::FastMinMax;
use solve::{Lim, Prob};

/// Why a profile could not be planned.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProfileError {
    /// A limit is not strictly on its side of zero (maximums > 0, minimums
    /// < 0) or not finite.
    InvalidLimit {
        /// The limit's name (`v_max`, `a_min`, ...).
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A state value is NaN or infinite.
    NonFinite {
        /// The value's name (`p0`, `vf`, ...).
        name: &'static str,
    },
    /// The target velocity or acceleration lies outside the limits.
    TargetOutOfLimits {
        /// `vf` or `af`.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The allowed minimum.
        min: f64,
        /// The allowed maximum.
        max: f64,
    },
    /// The target acceleration cannot be reached at the target velocity
    /// without passing a velocity limit just before arriving (e.g.
    /// `vf - af²/(2·j_max) < v_min` with `af > 0`).
    TargetUnreachable,
    /// A scale factor outside `(0, 1]`.
    InvalidScale {
        /// The factor given.
        value: f64,
    },
    /// A time interval that is not finite and positive.
    InvalidInterval {
        /// The value given, s.
        value: f64,
    },
    /// No valid profile was found (a numerical failure; please report the
    /// inputs).
    NoSolution,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::InvalidLimit { name, value } => {
                let side = if name.ends_with("min") {
                    "negative"
                } else {
                    "positive"
                };
                write!(f, "limit {name} = {value} must be finite and {side}")
            }
            ProfileError::NonFinite { name } => write!(f, "{name} is not a finite number"),
            ProfileError::TargetOutOfLimits {
                name,
                value,
                min,
                max,
            } => write!(
                f,
                "target {name} = {value} lies outside the limits [{min}, {max}]"
            ),
            ProfileError::TargetUnreachable => write!(
                f,
                "the target acceleration cannot be reached at the target velocity \
                 within the velocity limits (|af| too large for vf)"
            ),
            ProfileError::InvalidScale { value } => {
                write!(f, "scale factor {value} must lie in (0, 1]")
            }
            ProfileError::InvalidInterval { value } => {
                write!(f, "time interval {value} s must be finite and positive")
            }
            ProfileError::NoSolution => write!(
                f,
                "no valid profile found (numerical failure; please report the inputs)"
            ),
        }
    }
}

impl std::error::Error for ProfileError {}

/// Kinematic limits. Maximums are positive, minimums negative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Maximum velocity, u/s (> 0).
    pub v_max: f64,
    /// Minimum velocity, u/s (< 0).
    pub v_min: f64,
    /// Maximum acceleration, u/s² (> 0).
    pub a_max: f64,
    /// Minimum acceleration, u/s² (< 0).
    pub a_min: f64,
    /// Maximum jerk, u/s³ (> 0).
    pub j_max: f64,
    /// Minimum jerk, u/s³ (< 0).
    pub j_min: f64,
}

impl Limits {
    /// Symmetric limits `|v| ≤ v_max`, `|a| ≤ a_max`, `|j| ≤ j_max` (u/s,
    /// u/s², u/s³), each finite and > 0.
    pub fn symmetric(v_max: f64, a_max: f64, j_max: f64) -> Result<Limits, ProfileError> {
        Limits::new(v_max, -v_max, a_max, -a_max, j_max, -j_max)
    }

    /// Asymmetric limits; maximums finite and > 0, minimums finite and < 0.
    pub fn new(
        v_max: f64,
        v_min: f64,
        a_max: f64,
        a_min: f64,
        j_max: f64,
        j_min: f64,
    ) -> Result<Limits, ProfileError> {
        let l = Limits {
            v_max,
            v_min,
            a_max,
            a_min,
            j_max,
            j_min,
        };
        l.validate()?;
        Ok(l)
    }

    #[inline]
    fn validate(&self) -> Result<(), ProfileError> {
        if self.are_valid() {
            return Ok(());
        }
        self.invalid()
    }

    /// Whether [`Limits::validate`] passes, without a branch per limit:
    /// `x·0` is 0 exactly when `x` is finite (NaN and infinities give
    /// NaN), then the signs.
    #[inline(always)]
    fn are_valid(&self) -> bool {
        let z = self.v_max * 0.0
            + self.v_min * 0.0
            + self.a_max * 0.0
            + self.a_min * 0.0
            + self.j_max * 0.0
            + self.j_min * 0.0;
        let lo = self.v_max.fmin(self.a_max).fmin(self.j_max);
        let hi = self.v_min.fmax(self.a_min).fmax(self.j_min);
        (z == 0.0) & (lo > 0.0) & (hi < 0.0)
    }

    /// The error of [`Limits::validate`] (out of line).
    #[inline(never)]
    fn invalid(&self) -> Result<(), ProfileError> {
        for (name, value) in [
            ("v_max", self.v_max),
            ("a_max", self.a_max),
            ("j_max", self.j_max),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(ProfileError::InvalidLimit { name, value });
            }
        }
        for (name, value) in [
            ("v_min", self.v_min),
            ("a_min", self.a_min),
            ("j_min", self.j_min),
        ] {
            if !(value.is_finite() && value < 0.0) {
                return Err(ProfileError::InvalidLimit { name, value });
            }
        }
        Ok(())
    }
}

/// A kinematic state: position u, velocity u/s, acceleration u/s².
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct State {
    /// Position, u.
    pub p: f64,
    /// Velocity, u/s.
    pub v: f64,
    /// Acceleration, u/s².
    pub a: f64,
}

impl State {
    /// A state from position, velocity and acceleration.
    pub fn new(p: f64, v: f64, a: f64) -> State {
        State { p, v, a }
    }

    /// At rest at `p`.
    pub fn rest(p: f64) -> State {
        State { p, v: 0.0, a: 0.0 }
    }
}

/// A setpoint: position u, velocity u/s, acceleration u/s², jerk u/s³.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Setpoint {
    /// Position, u.
    pub p: f64,
    /// Velocity, u/s.
    pub v: f64,
    /// Acceleration, u/s².
    pub a: f64,
    /// Jerk, u/s³.
    pub j: f64,
}

/// 1/6 (a multiplication is cheaper than a division by 6).
const SIXTH: f64 = 1.0 / 6.0;

/// Number of constant-jerk segments: 2 brake + 7 motion, zero-length
/// ones included (no branches when filling, nothing left unset).
const SEGMENTS: usize = 9;

/// A planned motion: constant-jerk segments from `t = 0` (relative time, s).
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// Segment start times, s; `start[SEGMENTS]` is the duration, segments
    /// 0 and 1 the brake (zero-length without one).
    start: [f64; SEGMENTS + 1],
    /// State at each segment's start: position u, velocity u/s,
    /// acceleration u/s²; and its jerk, u/s³.
    p: [f64; SEGMENTS],
    v: [f64; SEGMENTS],
    a: [f64; SEGMENTS],
    j: [f64; SEGMENTS],
    /// First slot to look at (2 without a brake; its slots are zero-length).
    first: usize,
    target: State,
}

/// The segments of a [`Profile`] being written, in order (every slot is
/// written once).
struct Fill<'a> {
    prof: &'a mut Profile,
    i: usize,
}

impl Fill<'_> {
    /// Set the next segment to `dur` s at jerk `j` from `s`.
    #[inline(always)]
    fn set(&mut self, dur: f64, j: f64, s: &State) {
        let (i, prof) = (self.i, &mut *self.prof);
        prof.p[i] = s.p;
        prof.v[i] = s.v;
        prof.a[i] = s.a;
        prof.j[i] = j;
        prof.start[i + 1] = prof.start[i] + dur;
        self.i += 1;
    }

    /// Set the next segment to `dur` s at jerk `j` from `s`, and advance
    /// `s` to its end (unchanged, exactly, when `dur` is 0).
    #[inline(always)]
    fn push(&mut self, dur: f64, j: f64, s: &mut State) {
        self.set(dur, j, s);
        s.p += dur * (s.v + dur * (0.5 * s.a + dur * j * SIXTH));
        s.v += dur * (s.a + 0.5 * dur * j);
        s.a += dur * j;
    }

    /// [`Fill::push`] for a segment of constant acceleration (`j` is 0,
    /// of either sign).
    #[inline(always)]
    fn hold(&mut self, dur: f64, j: f64, s: &mut State) {
        self.set(dur, j, s);
        s.p += dur * (s.v + 0.5 * dur * s.a);
        s.v += dur * s.a;
    }
}

impl Profile {
    /// A profile that stays at `s` (moving on at its velocity and
    /// acceleration) — the result of an already reached target.
    fn hold(s: State) -> Profile {
        Profile {
            start: [0.0; SEGMENTS + 1],
            p: [s.p; SEGMENTS],
            v: [s.v; SEGMENTS],
            a: [s.a; SEGMENTS],
            j: [0.0; SEGMENTS],
            first: 0,
            target: s,
        }
    }

    /// Total duration, s (brake included).
    pub fn duration(&self) -> f64 {
        self.start[SEGMENTS]
    }

    /// Duration of the initial brake, s (0 when the start was inside the
    /// limits).
    pub fn brake_duration(&self) -> f64 {
        self.start[2]
    }

    /// The target state.
    pub fn target(&self) -> State {
        self.target
    }

    /// The segments as `(start time s, duration s, jerk u/s³)`.
    pub fn segments(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        (0..SEGMENTS)
            .filter(|&i| self.start[i + 1] > self.start[i])
            .map(|i| (self.start[i], self.start[i + 1] - self.start[i], self.j[i]))
    }

    /// The setpoint at time `t` s after the start. Before 0 the start state
    /// is held; after the end the target state moves on at its velocity and
    /// acceleration (jerk 0).
    #[inline]
    pub fn at(&self, t: f64) -> Setpoint {
        let end = self.start[SEGMENTS];
        if t >= end || t.is_nan() {
            let dt = if t.is_finite() { t - end } else { 0.0 };
            let s = self.target;
            return Setpoint {
                p: s.p + dt * (s.v + 0.5 * dt * s.a),
                v: s.v + dt * s.a,
                a: s.a,
                j: 0.0,
            };
        }
        // The last segment starting at or before `t` (start times do not
        // decrease; zero-length segments are passed over).
        // (The start times do not decrease; the scan starts after the
        // brake slots without a brake.)
        let mut i = self.first;
        while i + 1 < SEGMENTS && t >= self.start[i + 1] {
            i += 1;
        }
        let dt = (t - self.start[i]).max(0.0);
        let (p, v, a, j) = (self.p[i], self.v[i], self.a[i], self.j[i]);
        Setpoint {
            p: p + dt * (v + dt * (0.5 * a + dt * j * SIXTH)),
            v: v + dt * (a + 0.5 * dt * j),
            a: a + dt * j,
            j,
        }
    }

    /// All setpoints at `t = k·dt` for `k = 0, 1, ...` while `t` is before
    /// the end, then the final setpoint at exactly the duration.
    pub fn setpoints(&self, dt: f64) -> Result<Vec<(f64, Setpoint)>, ProfileError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(ProfileError::InvalidInterval { value: dt });
        }
        let dur = self.duration();
        let steps = (dur / dt).ceil();
        if steps > 1e8 {
            return Err(ProfileError::InvalidInterval { value: dt });
        }
        let mut out = Vec::with_capacity(steps as usize + 2);
        let mut k = 0u64;
        loop {
            let t = k as f64 * dt;
            if t >= dur {
                break;
            }
            out.push((t, self.at(t)));
            k += 1;
        }
        out.push((dur, self.at(dur)));
        Ok(out)
    }
}

fn finite(name: &'static str, x: f64) -> Result<(), ProfileError> {
    if x.is_finite() {
        Ok(())
    } else {
        Err(ProfileError::NonFinite { name })
    }
}

/// Plan the time-optimal motion from `start` to `target` under `limits`.
///
/// The target velocity and acceleration must lie inside the limits; the
/// start may lie outside (it is braked first). [`plan_into`] writes the
/// result into an existing profile instead (no 400-byte copy).
pub fn plan(start: State, target: State, limits: &Limits) -> Result<Profile, ProfileError> {
    // Written in place in the result (the initial values are all
    // overwritten, so the compiler drops them).
    let mut out = Ok(Profile::hold(target));
    if let Ok(prof) = &mut out {
        plan_in_place(start, target, limits, prof)?;
    }
    out
}

/// [`plan`] into `out`: on success `out` holds the motion's profile; on
/// error it is left unchanged (every error is found before it is written).
/// Re-planning into the same profile (an [`Interpolator`], a
/// [`JerkFollower`]) saves copying the 400-byte result.
pub fn plan_into(
    start: State,
    target: State,
    limits: &Limits,
    out: &mut Profile,
) -> Result<(), ProfileError> {
    plan_in_place(start, target, limits, out)
}

/// The body of [`plan`] and [`plan_into`] (inlined into both).
#[inline(always)]
fn plan_in_place(
    start: State,
    target: State,
    limits: &Limits,
    prof: &mut Profile,
) -> Result<(), ProfileError> {
    // Every input check at once (one branch, not taken by valid input):
    // the limits as [`Limits::validate`] checks them, the states finite
    // (`x·0` is 0 exactly when `x` is finite), the target inside the
    // limits. The errors themselves, in their order, out of line.
    let (l, s, t) = (limits, &start, &target);
    let z = (s.p * 0.0 + s.v * 0.0 + s.a * 0.0) + (t.p * 0.0 + t.v * 0.0 + t.a * 0.0);
    let ok = l.are_valid()
        & (z == 0.0)
        & (t.v <= l.v_max)
        & (t.v >= l.v_min)
        & (t.a <= l.a_max)
        & (t.a >= l.a_min);
    if !ok {
        input_error(start, target, limits)?;
    }
    let symmetric = (limits.v_min == -limits.v_max)
        & (limits.a_min == -limits.a_max)
        & (limits.j_min == -limits.j_max);
    if symmetric {
        plan_normalised::<true>(start, target, limits, prof)
    } else {
        plan_normalised::<false>(start, target, limits, prof)
    }
}

/// The first error of the inputs of [`plan_in_place`] (the limits, the
/// states' finiteness, the target inside the limits), out of line.
#[cold]
#[inline(never)]
fn input_error(start: State, target: State, limits: &Limits) -> Result<(), ProfileError> {
    limits.validate()?;
    finite("p0", start.p)?;
    finite("v0", start.v)?;
    finite("a0", start.a)?;
    finite("pf", target.p)?;
    finite("vf", target.v)?;
    finite("af", target.a)?;
    if target.v > limits.v_max || target.v < limits.v_min {
        return Err(ProfileError::TargetOutOfLimits {
            name: "vf",
            value: target.v,
            min: limits.v_min,
            max: limits.v_max,
        });
    }
    if target.a > limits.a_max || target.a < limits.a_min {
        return Err(ProfileError::TargetOutOfLimits {
            name: "af",
            value: target.a,
            min: limits.a_min,
            max: limits.a_max,
        });
    }
    Ok(())
}

/// The rest of [`plan_in_place`], in normalised units; `SYM`: the limits
/// are symmetric (the search then runs with the acceleration and jerk
/// limits as constants, see `Lim::spec`; the same results bit for bit).
#[inline(always)]
fn plan_normalised<const SYM: bool>(
    start: State,
    target: State,
    limits: &Limits,
    prof: &mut Profile,
) -> Result<(), ProfileError> {
    // Normalised units: acceleration unit a_max, time unit a_max / j_max.
    let au = limits.a_max;
    let tu = limits.a_max / limits.j_max;
    // Reciprocals: one division instead of one per velocity/position.
    let ivu = limits.j_max / (au * au);
    let ipu = ivu * ivu * au;
    let l = if SYM {
        // The same numbers without six divisions: `a_min/au` is exactly
        // −1 and `−j_min/j_max` exactly 1, so the falling jerk's
        // reciprocals are 1, and `v_min·ivu` is exactly `−(v_max·ivu)`.
        Lim::symmetric(limits.v_max * ivu)
    } else {
        Lim::new(
            limits.v_max * ivu,
            limits.v_min * ivu,
            1.0,
            limits.a_min / au,
            1.0,
            -limits.j_min / limits.j_max,
        )
    };
    let (vf, af) = (target.v * ivu, target.a / au);
    let reach_tol = 1e-12 * l.vmax.max(-l.vmin);
    // The three exits (none taken by most plans) behind one branch; the
    // sign of `af` is a coin toss a branch of its own would mispredict.
    let unreachable = ((af > 0.0) & (vf - af * af / (2.0 * l.ju) < l.vmin - reach_tol))
        | ((af < 0.0) & (vf + af * af / (2.0 * l.jd) > l.vmax + reach_tol));
    let (v0, a0) = (start.v * ivu, start.a / au);
    let pd_total = (target.p - start.p) * ipu;
    let reached = (start.p == target.p) & (start.v == target.v) & (start.a == target.a);
    if unreachable | !pd_total.is_finite() | reached {
        if unreachable {
            return Err(ProfileError::TargetUnreachable);
        }
        if !pd_total.is_finite() {
            return Err(ProfileError::NonFinite { name: "pf - p0" });
        }
        *prof = Profile::hold(target);
        return Ok(());
    }

    // Brake back inside the limits.
    let br = solve::brake(v0, a0, &l);
    let braked = br[0].1 > 0.0 || br[1].1 > 0.0;
    let (mut pb, mut vb, mut ab) = (0.0, v0, a0);
    if braked {
        for &(j, t) in &br {
            pb += t * (vb + t * (0.5 * ab + t * j * SIXTH));
            vb += t * (ab + 0.5 * t * j);
            ab += t * j;
        }
    }
    let pr = Prob {
        v0: vb,
        a0: ab,
        pd: pd_total - pb,
        vf,
        af,
    };
    let mut best = solve::Best::new();
    solve::solve_g::<SYM>(&pr, &l, &mut best);
    let Some(seven) = &best.seven else {
        return Err(ProfileError::NoSolution);
    };

    // Back to user units.
    let mut s = start;
    let ju_ = limits.j_max;
    prof.first = 0;
    prof.target = target;
    prof.start[0] = 0.0;
    let mut fill = Fill { prof, i: 0 };
    if braked {
        for &(j, t) in &br {
            fill.push(t * tu, j * ju_, &mut s);
        }
    } else {
        fill.set(0.0, 0.0, &s);
        fill.set(0.0, 0.0, &s);
        fill.prof.first = 2;
    }
    // Plateaus and cruise hold their limit exactly (no drift over long
    // phases). No branch per phase: a zero-length phase changes nothing.
    let (a_hi, a_lo, v_cruise) = if seven.sign > 0.0 {
        (limits.a_max, limits.a_min, limits.v_max)
    } else {
        (limits.a_min, limits.a_max, limits.v_min)
    };
    let t = seven.t.map(|ti| ti * tu);
    let (j_up, j_down, j_hold) = (
        seven.jerk(0) * ju_,
        seven.jerk(2) * ju_,
        seven.jerk(1) * ju_,
    );
    fill.push(t[0], j_up, &mut s);
    if seven.t[1] > 0.0 {
        s.a = a_hi;
    }
    fill.hold(t[1], j_hold, &mut s);
    fill.push(t[2], j_down, &mut s);
    if seven.t[3] > 0.0 {
        s.a = 0.0;
        s.v = v_cruise;
    }
    fill.hold(t[3], j_hold, &mut s);
    fill.push(t[4], j_down, &mut s);
    if seven.t[5] > 0.0 {
        s.a = a_lo;
    }
    fill.hold(t[5], j_hold, &mut s);
    fill.push(t[6], j_up, &mut s);
    Ok(())
}

/// The stateless "simulation mode": every setpoint of the motion from
/// `start` to `target` at `t = 0, dt, 2·dt, ...` (s), plus the final one at
/// exactly the duration. Each item is `(t s, setpoint)`.
pub fn simulate(
    start: State,
    target: State,
    limits: &Limits,
    dt: f64,
) -> Result<Vec<(f64, Setpoint)>, ProfileError> {
    plan(start, target, limits)?.setpoints(dt)
}

/// The stateful interpolator of the Orocos notes, with absolute time.
///
/// Every mutator (`set_*`, `scale_*`, `reset_*`) may be called at any
/// instant of a running motion: the motion is re-planned from the state at
/// the interpolator's current time, which is the time of the latest
/// [`Interpolator::setpoint`] call (or of construction). Times must not
/// decrease. On error a mutator leaves the interpolator unchanged.
#[derive(Clone, Debug)]
pub struct Interpolator {
    nominal: Limits,
    v_scale: f64,
    a_scale: f64,
    goal: State,
    now: f64,
    t0: f64,
    profile: Profile,
}

impl Interpolator {
    /// An interpolator at rest at `p` (u) at absolute time `t_s` (s), with
    /// the goal equal to the start.
    pub fn new(limits: Limits, p: f64, t_s: f64) -> Result<Interpolator, ProfileError> {
        limits.validate()?;
        finite("p", p)?;
        finite("t", t_s)?;
        let s = State::rest(p);
        Ok(Interpolator {
            nominal: limits,
            v_scale: 1.0,
            a_scale: 1.0,
            goal: s,
            now: t_s,
            t0: t_s,
            profile: Profile::hold(s),
        })
    }

    /// The limits in force (nominal limits times the scale factors).
    pub fn limits(&self) -> Limits {
        let n = &self.nominal;
        Limits {
            v_max: n.v_max * self.v_scale,
            v_min: n.v_min * self.v_scale,
            a_max: n.a_max * self.a_scale,
            a_min: n.a_min * self.a_scale,
            j_max: n.j_max,
            j_min: n.j_min,
        }
    }

    /// The goal state.
    pub fn goal(&self) -> State {
        self.goal
    }

    /// The motion currently planned, and its absolute start time (s).
    pub fn profile(&self) -> (&Profile, f64) {
        (&self.profile, self.t0)
    }

    /// The state at the current time.
    pub fn state(&self) -> State {
        let s = self.profile.at(self.now - self.t0);
        State::new(s.p, s.v, s.a)
    }

    /// Absolute time at which the goal is reached, s.
    pub fn end_time(&self) -> f64 {
        self.t0 + self.profile.duration()
    }

    fn replan(
        &mut self,
        nominal: Limits,
        vs: f64,
        as_: f64,
        goal: State,
    ) -> Result<(), ProfileError> {
        nominal.validate()?;
        let start = self.state();
        let limits = Limits {
            v_max: nominal.v_max * vs,
            v_min: nominal.v_min * vs,
            a_max: nominal.a_max * as_,
            a_min: nominal.a_min * as_,
            ..nominal
        };
        // (Unchanged on error.)
        plan_into(start, goal, &limits, &mut self.profile)?;
        self.nominal = nominal;
        self.v_scale = vs;
        self.a_scale = as_;
        self.goal = goal;
        self.t0 = self.now;
        Ok(())
    }

    fn with_nominal(&mut self, f: impl FnOnce(&mut Limits)) -> Result<(), ProfileError> {
        let mut n = self.nominal;
        f(&mut n);
        self.replan(n, self.v_scale, self.a_scale, self.goal)
    }

    /// `SetMaxVelocity`: nominal maximum velocity, u/s (> 0).
    pub fn set_max_velocity(&mut self, v: f64) -> Result<(), ProfileError> {
        self.with_nominal(|n| n.v_max = v)
    }
    /// `SetMaxAcceleration`: nominal maximum acceleration, u/s² (> 0).
    pub fn set_max_acceleration(&mut self, a: f64) -> Result<(), ProfileError> {
        self.with_nominal(|n| n.a_max = a)
    }
    /// `SetMaxJerk`: maximum jerk, u/s³ (> 0).
    pub fn set_max_jerk(&mut self, j: f64) -> Result<(), ProfileError> {
        self.with_nominal(|n| n.j_max = j)
    }
    /// `SetMinVelocity`: nominal minimum velocity, u/s (< 0).
    pub fn set_min_velocity(&mut self, v: f64) -> Result<(), ProfileError> {
        self.with_nominal(|n| n.v_min = v)
    }
    /// `SetMinAcceleration`: nominal minimum acceleration, u/s² (< 0).
    pub fn set_min_acceleration(&mut self, a: f64) -> Result<(), ProfileError> {
        self.with_nominal(|n| n.a_min = a)
    }
    /// `SetMinJerk`: minimum jerk, u/s³ (< 0).
    pub fn set_min_jerk(&mut self, j: f64) -> Result<(), ProfileError> {
        self.with_nominal(|n| n.j_min = j)
    }

    /// `SetGoalPosition`, u.
    pub fn set_goal_position(&mut self, p: f64) -> Result<(), ProfileError> {
        let g = State { p, ..self.goal };
        self.replan(self.nominal, self.v_scale, self.a_scale, g)
    }
    /// `SetGoalVelocity`, u/s.
    pub fn set_goal_velocity(&mut self, v: f64) -> Result<(), ProfileError> {
        let g = State { v, ..self.goal };
        self.replan(self.nominal, self.v_scale, self.a_scale, g)
    }
    /// `SetGoalAcceleration`, u/s².
    pub fn set_goal_acceleration(&mut self, a: f64) -> Result<(), ProfileError> {
        let g = State { a, ..self.goal };
        self.replan(self.nominal, self.v_scale, self.a_scale, g)
    }
    /// Set the whole goal state at once.
    pub fn set_goal(&mut self, goal: State) -> Result<(), ProfileError> {
        self.replan(self.nominal, self.v_scale, self.a_scale, goal)
    }

    /// `ScaleVelocity`: velocity limits become nominal × `f`, `0 < f ≤ 1`.
    /// A current velocity beyond the scaled limits is braked first.
    pub fn scale_velocity(&mut self, f: f64) -> Result<(), ProfileError> {
        if !(f > 0.0 && f <= 1.0) {
            return Err(ProfileError::InvalidScale { value: f });
        }
        self.replan(self.nominal, f, self.a_scale, self.goal)
    }
    /// `ScaleAcceleration`: acceleration limits become nominal × `f`,
    /// `0 < f ≤ 1`.
    pub fn scale_acceleration(&mut self, f: f64) -> Result<(), ProfileError> {
        if !(f > 0.0 && f <= 1.0) {
            return Err(ProfileError::InvalidScale { value: f });
        }
        self.replan(self.nominal, self.v_scale, f, self.goal)
    }
    /// `ResetVelocity`: back to the nominal velocity limits.
    pub fn reset_velocity(&mut self) -> Result<(), ProfileError> {
        self.replan(self.nominal, 1.0, self.a_scale, self.goal)
    }
    /// `ResetAcceleration`: back to the nominal acceleration limits.
    pub fn reset_acceleration(&mut self) -> Result<(), ProfileError> {
        self.replan(self.nominal, self.v_scale, 1.0, self.goal)
    }

    /// `GetNewSetpoint`: the setpoint at absolute time `t_s` (s), which
    /// becomes the current time. A time before the current one is treated
    /// as the current time.
    pub fn setpoint(&mut self, t_s: f64) -> Setpoint {
        if t_s > self.now && t_s.is_finite() {
            self.now = t_s;
        }
        self.profile.at(self.now - self.t0)
    }
}

/// Jerk-limited smoothing of an actuator setpoint (rudder, thrust, ...).
///
/// The output follows the commanded `target` as fast as possible with
/// `|rate| ≤ max_rate` (setpoint units per s), `|accel| ≤ max_accel` (units
/// per s²) and `|jerk| ≤ max_jerk` (units per s³); whenever the target
/// changes, the motion is re-planned from the current state, and a reached
/// target is held at rest.
#[derive(Clone, Debug)]
pub struct JerkFollower {
    interp: Interpolator,
}

impl JerkFollower {
    /// A follower resting at `initial` (setpoint units) at time `t0_s` (s).
    /// The three limits must be finite and > 0.
    pub fn new(
        max_rate: f64,
        max_accel: f64,
        max_jerk: f64,
        initial: f64,
        t0_s: f64,
    ) -> Result<JerkFollower, ProfileError> {
        let limits = Limits::symmetric(max_rate, max_accel, max_jerk)?;
        Ok(JerkFollower {
            interp: Interpolator::new(limits, initial, t0_s)?,
        })
    }

    /// The smoothed setpoint at time `t_s` (s, non-decreasing), following
    /// `target`. A non-finite target is ignored (the previous one is kept).
    pub fn sample(&mut self, target: f64, t_s: f64) -> f64 {
        // Advance to t_s first so that a new target is planned from the
        // state at t_s.
        let sp = self.interp.setpoint(t_s);
        if target.is_finite()
            && target != self.interp.goal.p
            && self.interp.set_goal(State::rest(target)).is_ok()
        {
            return self.interp.setpoint(t_s).p;
        }
        sp.p
    }

    /// The full setpoint (position, rate, acceleration, jerk) at the
    /// current time.
    pub fn setpoint(&self) -> Setpoint {
        let i = &self.interp;
        i.profile.at(i.now - i.t0)
    }

    /// The target being followed.
    pub fn target(&self) -> f64 {
        self.interp.goal.p
    }
}

#[cfg(test)]
mod tests;
