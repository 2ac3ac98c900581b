//! uSimMarineV22's embedded PID controller (docs/v22.md §2, §4, §5): the
//! heading, speed and depth → pitch → elevator cascade that turns helm
//! setpoints (`DESIRED_HEADING` degrees, `DESIRED_SPEED` m/s,
//! `DESIRED_DEPTH` m) into actuator values (rudder, thrust percent,
//! elevator degrees) once per iteration.
//!
//! Sans-IO: the clock is the iteration time passed to [`PidEngine::step`].
//! With `math = "libm"` every arithmetic expression follows the C++'s
//! evaluation order, so the outputs are bit-identical with the reference
//! runs; with `math = "fast"` (the default) the loops' common case and the
//! heading error are reordered to shorten the step's dependency chain,
//! within a few last bits of the C++'s ([`ScalarPid::advance_fast`]).
use super::angles::angle180;
use super::trig::MathMode;
use super::Record;

/// MOOS's truncated π used by `MOOSRad2Deg` (docs/v22.md §4.6).
#[allow(clippy::approx_constant)] // MOOS's own truncated value, on purpose
const MOOS_PI: f64 = 3.141592653589;

/// Entries kept for the derivative's moving average (docs/v22.md §5).
const DERIV_WINDOW: usize = 9;

/// The sign the C++ computes as `(int)(|x|/x)`: ±1, and for 0 or NaN the
/// integer conversion of NaN (−2147483648 on x86-64), so `s(0)·0 = −0.0`.
fn int_sign(x: f64) -> f64 {
    let q = x.abs() / x;
    if q.is_nan() {
        -2147483648.0
    } else {
        q.trunc()
    }
}

/// Gains and limits of one [`ScalarPid`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gains {
    /// Proportional gain.
    pub kp: f64,
    /// Derivative gain (on the mean of the last nine difference quotients).
    pub kd: f64,
    /// Integral gain (only `ki > 0` integrates).
    pub ki: f64,
    /// Integral limit (|Σ| is clipped to |limit|).
    pub integral_limit: f64,
    /// Output limit (|o| is clipped to |limit|).
    pub output_limit: f64,
}

/// One PID loop (MOOS's `ScalarPID`, docs/v22.md §5).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScalarPid {
    /// Gains and limits (fixed at construction, with the five below).
    gains: Gains,
    /// `ki > 0`: the integral term runs (otherwise Σ stays +0.0, as the
    /// C++ sets it to 0 in every call).
    integrating: bool,
    /// `Run` called before (the first call only primes the loop).
    primed: bool,
    /// `len` is [`DERIV_WINDOW`] (the window is full: the common case
    /// tests one flag).
    full: bool,
    /// The derivative gain (a copy of `gains.kd`, away from `kp`: as
    /// neighbours the two products were packed into one vector multiply
    /// whose shuffles cost more than they saved).
    kd: f64,
    /// |integral limit|.
    ilim: f64,
    /// |output limit|.
    olim: f64,
    /// The proportional gain (a copy of `gains.kp`).
    kp: f64,
    /// `math = "fast"`: the common case takes [`ScalarPid::advance_fast`]
    /// (the same terms, summed in another order; see there).
    fast: bool,
    /// `kd / 9`: the derivative gain over the full window's length.
    kd9: f64,
    prev_err: f64,
    prev_t: f64,
    output: f64,
    /// Difference quotients in a ring of [`DERIV_WINDOW`] slots stored
    /// twice (slot `i` at `i` and `i + DERIV_WINDOW`), so the window,
    /// newest first, is the contiguous `hist[head..head + DERIV_WINDOW]`:
    /// a push writes two slots instead of moving eight. The slots not yet
    /// filled hold +0.0 (see [`ScalarPid::advance`]).
    hist: [f64; 2 * DERIV_WINDOW],
    /// Slot of the newest quotient, `0..DERIV_WINDOW`.
    head: usize,
    /// Quotients in the window (1..=9), as the mean's divisor.
    len: f64,
    integral: f64,
    /// The window's sum from its newest quotient (`S'` of
    /// [`ScalarPid::advance`]; ė is `(S' + 0.0)/len`, see
    /// [`ScalarPid::err_dot`]).
    sum: f64,
}

impl ScalarPid {
    /// A fresh loop with `gains`.
    pub fn new(gains: Gains) -> ScalarPid {
        ScalarPid {
            gains,
            integrating: gains.ki > 0.0,
            kd: gains.kd,
            ilim: gains.integral_limit.abs(),
            olim: gains.output_limit.abs(),
            kp: gains.kp,
            kd9: gains.kd / DERIV_WINDOW as f64,
            ..ScalarPid::default()
        }
    }

    /// The same loop, computed for `math` (fixed at construction): with
    /// [`MathMode::Fast`] the common case sums in another order
    /// ([`ScalarPid::advance_fast`]); with [`MathMode::Libm`] every
    /// operation is the C++'s.
    pub fn with_math(gains: Gains, math: MathMode) -> ScalarPid {
        ScalarPid {
            fast: math == MathMode::Fast,
            ..ScalarPid::new(gains)
        }
    }

    /// The gains and limits.
    pub fn gains(&self) -> Gains {
        self.gains
    }

    /// The integral term Σ as it stands.
    pub fn integral(&self) -> f64 {
        self.integral
    }

    /// The derivative estimate ė as it stands (per second): the mean of
    /// the window as the C++ sums it from 0.0, `(S' + 0.0)/len` (see
    /// `ScalarPid::advance`), 0 when not finite; 0 before the second
    /// call (`len` 0, `S'` +0.0: 0/0 is NaN).
    pub fn err_dot(&self) -> f64 {
        let e = (self.sum + 0.0) / self.len;
        if e.is_finite() {
            e
        } else {
            0.0
        }
    }

    /// `Run(err, t)`: the output for error `err` at time `t_s` (s), or `None`
    /// when time went backwards (the caller then uses 0).
    #[inline(always)]
    pub fn run(&mut self, err: f64, t_s: f64) -> Option<f64> {
        match self.common_dt(err, t_s) {
            Some(dt) => Some(self.advance_common(err, t_s, dt)),
            None => self.run_rare(err, t_s),
        }
    }

    /// [`ScalarPid::run`] with 0 for `None`, as the engine uses it (the
    /// common case's output straight from its register).
    #[inline(always)]
    pub fn run_or_zero(&mut self, err: f64, t_s: f64) -> f64 {
        match self.common_dt(err, t_s) {
            Some(dt) => self.advance_common(err, t_s, dt),
            None => self.run_rare(err, t_s).unwrap_or(0.0),
        }
    }

    /// The step dt (s) of a call in the common case, tested at once: the
    /// window full (so the loop is primed), `err` finite and
    /// 0 < dt < 1e300 (so `t_s` is finite too, `prev_t` always being so).
    /// Then `err − err` is +0.0 and `x` is dt; a NaN or infinite `err`
    /// makes `x` NaN. Anything else (`None`) takes
    /// [`ScalarPid::run_rare`], the C++'s order of tests. (Not `x < ∞`:
    /// LLVM turns that pair of tests into a class test of 16 integer
    /// instructions; a finite bound only sends more rare calls the long
    /// way.)
    #[inline(always)]
    #[allow(clippy::eq_op)] // x − x on purpose: +0 when finite, NaN when not
    fn common_dt(&self, err: f64, t_s: f64) -> Option<f64> {
        if self.full {
            let dt = t_s - self.prev_t;
            let x = (err - err) + dt;
            if x > 0.0 && x < 1e300 {
                return Some(dt);
            }
        }
        None
    }

    /// [`ScalarPid::run`] outside its common case: the first nine calls,
    /// a non-finite input, time standing still or going backwards, or a
    /// huge step.
    #[cold]
    #[inline(never)]
    #[allow(clippy::eq_op)] // x − x on purpose: +0 when finite, NaN when not
    fn run_rare(&mut self, err: f64, t_s: f64) -> Option<f64> {
        // Guards (docs/v22.md §14): nothing non-finite enters the loop's state.
        // Both finite iff (err − err) + (t − t) is +0 (inf − inf and NaN
        // give NaN): one test for the two.
        if (err - err) + (t_s - t_s) != 0.0 {
            return None;
        }
        if self.primed {
            let dt = t_s - self.prev_t;
            // (one test for the two rare cases: dt is never NaN, t_s and
            // prev_t being finite)
            if dt <= 0.0 {
                if dt < 0.0 {
                    return None;
                }
                return Some(self.output);
            }
            if !self.full {
                self.len += 1.0;
                self.full = self.len == DERIV_WINDOW as f64;
            }
            Some(self.advance(err, t_s, dt))
        } else {
            // The C++'s first call only primes: ė = 0, and its integral
            // term integrates over the initial dt of 0 (`len` stays 0, so
            // `err_dot` gives 0 from `sum` +0.0).
            self.primed = true;
            if self.integrating {
                self.integrate(err, 0.0);
            }
            let o = ((self.kp * err) + (self.kd * 0.0)) + self.integral;
            Some(self.finish(err, t_s, o))
        }
    }

    /// Move the ring's head one slot back (the oldest slot becomes the
    /// newest) and return it (`min`: provably in the ring, so the writes
    /// and windows that use it need no bounds checks).
    #[inline(always)]
    fn next_head(&mut self) -> usize {
        let head = if self.head == 0 {
            DERIV_WINDOW - 1
        } else {
            self.head - 1
        }
        .min(DERIV_WINDOW - 1);
        self.head = head;
        head
    }

    /// Write quotient `q` into ring slot `head` (< [`DERIV_WINDOW`]) and
    /// its copy.
    #[inline(always)]
    fn store(&mut self, head: usize, q: f64) {
        self.hist[head] = q;
        self.hist[head + DERIV_WINDOW] = q;
    }

    /// The common case (full window, finite input, 0 < dt < 1e300): the
    /// C++'s arithmetic, or with `math = "fast"` its reordering.
    #[inline(always)]
    fn advance_common(&mut self, err: f64, t_s: f64, dt: f64) -> f64 {
        if self.fast {
            self.advance_fast(err, t_s, dt)
        } else {
            self.advance(err, t_s, dt)
        }
    }

    /// [`ScalarPid::advance`] with a full window under `math = "fast"`:
    /// the same output `kp·e + kd·ė (+ Σ)` with ė the mean of the nine
    /// quotients, but ordered so that less of it waits for `err`, which
    /// (in the heading loop) waits for the last step's heading. What does
    /// not depend on `err` is computed first and off that chain: `1/dt`
    /// and the sum P of the eight older quotients. Then
    /// q = (e − e₋₁)·(1/dt), ė·kd = (q + P)·(kd/9), and the output
    /// `((kp·e) + 0.0) + kd·ė` (the same bits as the C++'s
    /// `((kp·e) + kd·ė) + 0.0`: both are x for any x but a zero, and +0.0
    /// for every zero), so the chain from `err` to the output is a
    /// subtraction, two multiplications and two additions where the
    /// C++'s order, ((0 + q) + h₁) + … + h₈ and two divisions, has ten
    /// additions and two divisions (about 50 cycles longer). The result
    /// differs from the C++'s in the last bits (the reciprocals, and P
    /// summed before q); `math = "libm"` keeps the C++'s order, bit for
    /// bit. A non-finite quotient or derivative term (an error jump that
    /// overflows) takes the C++'s rules instead
    /// ([`ScalarPid::advance_guarded`]).
    #[inline(always)]
    #[allow(clippy::eq_op)] // x − x on purpose: +0 when finite, NaN when not
    fn advance_fast(&mut self, err: f64, t_s: f64, dt: f64) -> f64 {
        let inv_dt = 1.0 / dt;
        // its neighbours `head + 1 ..= head + 8` are the eight older quotients
        let head = self.next_head();
        let h = &self.hist[head..head + DERIV_WINDOW];
        let p = ((((((h[1] + h[2]) + h[3]) + h[4]) + h[5]) + h[6]) + h[7]) + h[8];
        let q = (err - self.prev_err) * inv_dt;
        let sum = q + p;
        let d = sum * self.kd9;
        // q and d both finite iff (q − q) + (d − d) is +0
        if (q - q) + (d - d) != 0.0 {
            return self.advance_guarded(err, t_s, dt, q);
        }
        self.store(head, q);
        self.sum = sum;
        let o = if self.integrating {
            self.integrate(err, dt);
            ((self.kp * err) + d) + self.integral
        } else {
            ((self.kp * err) + 0.0) + d
        };
        self.finish(err, t_s, o)
    }

    /// [`ScalarPid::advance_fast`] when its quotient `q` or its derivative
    /// term is not finite (an error jump that overflows): the C++'s rules
    /// (q → 0, then ė → 0 if not finite) on the fast sum; `head` is
    /// already the new slot.
    #[cold]
    #[inline(never)]
    fn advance_guarded(&mut self, err: f64, t_s: f64, dt: f64, q: f64) -> f64 {
        let q = if q.is_finite() { q } else { 0.0 };
        let head = self.head.min(DERIV_WINDOW - 1);
        self.store(head, q);
        let h = &self.hist[head..head + DERIV_WINDOW];
        let sum = q + (((((((h[1] + h[2]) + h[3]) + h[4]) + h[5]) + h[6]) + h[7]) + h[8]);
        self.sum = sum;
        let mut ed = sum / self.len;
        if !ed.is_finite() {
            ed = 0.0;
        }
        let pd = (self.kp * err) + (self.kd * ed);
        let o = if self.integrating {
            self.integrate(err, dt);
            pd + self.integral
        } else {
            pd + 0.0
        };
        self.finish(err, t_s, o)
    }

    /// A primed call with finite `err` and `t_s`, step `dt` > 0 (s) and
    /// `len` already counting this call's quotient: push the difference
    /// quotient, take the window's mean ė, the output.
    #[inline(always)]
    fn advance(&mut self, err: f64, t_s: f64, dt: f64) -> f64 {
        let mut q = (err - self.prev_err) / dt;
        if !q.is_finite() {
            q = 0.0; // overflow of a pathological error jump
        }
        // push at the front (the oldest slot becomes the newest); at
        // most DERIV_WINDOW kept
        let head = self.next_head();
        self.store(head, q);
        // The C++ sums the window from newest to oldest starting at 0.0:
        // S = ((0.0 + q) + h₁) + … + h₈ (the slots beyond the window hold
        // +0.0, and s + (+0.0) is s for every s but −0.0, which S's partial
        // sums never are: the first is not, as x + (+0.0) is −0.0 for no x
        // in round-to-nearest, and a later one is −0.0 only when both its
        // addends are; so it is the window's sum, bit for bit, without a
        // loop). Here S' = (q + h₁) + … + h₈, one addition fewer, and
        // S = S' + 0.0: when q ≠ −0.0 the two sums agree term by term, and
        // S' ≠ −0.0 as S is not; when q = −0.0 the partial sums differ
        // only as −0.0 against +0.0 until the first term that is not −0.0,
        // where x + (±0.0) gives the same for x ≠ ±0 and +0.0 for x = +0.0,
        // so S' = S unless all nine are −0.0 (S' = −0.0, S = +0.0).
        let h = &self.hist[head..head + DERIV_WINDOW];
        let sum = (((((((h[0] + h[1]) + h[2]) + h[3]) + h[4]) + h[5]) + h[6]) + h[7]) + h[8];
        self.sum = sum;
        let o = if self.integrating {
            let mut ed = (sum + 0.0) / self.len;
            if !ed.is_finite() {
                ed = 0.0;
            }
            self.integrate(err, dt);
            ((self.kp * err) + (self.kd * ed)) + self.integral
        } else {
            // Without the integral term Σ is +0.0 for good, and the
            // output `((kp·e) + (kd·ė)) + (+0.0)`: an ė of −0.0 (from
            // S' = −0.0, where S/len is +0.0) changes `kd·ė` only in the
            // sign of a zero, and then the sum with `kp·e` only in the
            // sign of a zero, which `+ (+0.0)` makes +0.0 either way. (With
            // the integral term Σ may be −0.0: ė is S/len itself.)
            let mut ed = sum / self.len;
            if !ed.is_finite() {
                ed = 0.0;
            }
            ((self.kp * err) + (self.kd * ed)) + 0.0
        };
        self.finish(err, t_s, o)
    }

    /// The integral term over `dt` (s) for error `err`, clipped.
    #[inline(always)]
    fn integrate(&mut self, err: f64, dt: f64) {
        self.integral += (self.gains.ki * err) * dt;
        if self.integral.abs() >= self.ilim {
            self.integral = int_sign(self.integral) * self.ilim;
        }
        if self.integral.is_nan() {
            self.integral = 0.0;
        }
    }

    /// The output `o` clipped (0 when not finite), and the state for the
    /// next call.
    #[inline(always)]
    fn finish(&mut self, err: f64, t_s: f64, o: f64) -> f64 {
        let mut o = o;
        if o.abs() >= self.olim {
            o = int_sign(o) * self.olim;
        }
        if !o.is_finite() {
            o = 0.0;
        }
        self.output = o;
        self.prev_err = err;
        self.prev_t = t_s;
        o
    }
}

/// The PID's configuration (docs/v22.md §2.2), limits already resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct PidSettings {
    /// Heading loop (output limit = `maxrudder`).
    pub yaw: Gains,
    /// Speed loop (output limit = `maxthrust`).
    pub speed: Gains,
    /// Depth → pitch loop (output limit = `maxpitch`, radians as resolved).
    pub depth: Gains,
    /// Pitch → elevator loop (output limit = `maxelevator`).
    pub pitch: Gains,
    /// Rudder clip, degrees (default 100).
    pub max_rudder: f64,
    /// Thrust clip, percent (default 100).
    pub max_thrust: f64,
    /// Pitch clip as resolved (radians when configured; the default 15 as is).
    pub max_pitch: f64,
    /// Elevator clip, degrees (default 13).
    pub max_elevator: f64,
    /// ≠ 0: thrust = desired speed × factor (percent per m/s).
    pub speed_factor: f64,
    /// Depth control on (default true).
    pub depth_control: bool,
    /// No staleness check (default false).
    pub simulation: bool,
    /// Helm staleness threshold, s (default 2).
    pub tardy_helm: f64,
    /// Nav staleness threshold, s (default 2).
    pub tardy_nav: f64,
    /// Rudder bias saw-tooth amplitude, 0..100 (default 0).
    pub sim_instability: f64,
}

impl Default for PidSettings {
    fn default() -> Self {
        PidSettings {
            yaw: Gains {
                output_limit: 100.0,
                ..Gains::default()
            },
            speed: Gains {
                output_limit: 100.0,
                ..Gains::default()
            },
            depth: Gains {
                output_limit: 15.0,
                ..Gains::default()
            },
            pitch: Gains {
                output_limit: 13.0,
                ..Gains::default()
            },
            max_rudder: 100.0,
            max_thrust: 100.0,
            max_pitch: 15.0,
            max_elevator: 13.0,
            speed_factor: 0.0,
            depth_control: true,
            simulation: false,
            tardy_helm: 2.0,
            tardy_nav: 2.0,
            sim_instability: 0.0,
        }
    }
}

/// A posting the engine makes (published after `post_des_*`).
#[derive(Debug, Clone, PartialEq)]
pub enum PidPost {
    /// `PID_HAS_CONTROL` = `true` / `false` (string).
    HasControl(bool),
    /// `PID_STALE` = `Stale <tag>:<Δ>` (Δ in s, `%.3f` trimmed).
    Stale(&'static str, f64),
}

/// The outputs of one PID step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PidOutput {
    /// Thrust, percent (0..maxthrust).
    pub thrust: f64,
    /// Rudder, degrees (±maxrudder), before the model's rate limit.
    pub rudder: f64,
    /// Elevator, degrees (±maxelevator).
    pub elevator: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Stamped {
    v: f64,
    t: f64,
}

/// The embedded PID engine (`PIDEngine`, docs/v22.md §4).
///
/// The C++ keeps the current heading, speed, depth and pitch as stamped
/// inputs, but its step overwrites them from the NAV record (stamped with
/// the clock before the step) before any use, and `NAV_HEADING` by mail is
/// overwritten the same way (docs/v22.md §3): [`PidEngine::step`] reads
/// them straight from the record it is given and the previous clock.
#[derive(Debug, Clone, PartialEq)]
pub struct PidEngine {
    /// Configuration (fixed at construction but for `speed_factor`, which
    /// [`PidEngine::set_speed_factor`] changes with the cached thrust).
    settings: PidSettings,
    clock: f64,
    des_heading: Stamped,
    des_speed: Stamped,
    des_depth: Stamped,
    thrust_memory: f64,
    /// A helm stamp the step needs is 0 (`des_heading.t == 0 ||
    /// des_speed.t == 0`, or with depth control `des_depth.t == 0`), kept
    /// up to date by every change of those stamps: the step's readiness
    /// test reads one flag and the clock.
    unready: bool,
    /// With `speed_factor ≠ 0` (else `None`), the step's thrust: `desired
    /// speed × factor`, 0 below 0.01 or NaN, clipped to `maxthrust`
    /// (docs/v22.md §4.4), computed when the desired speed or the factor
    /// changes (the same operations on the same numbers as the C++ does
    /// every step).
    factor_thrust: Option<f64>,
    override_on: bool,
    bias_t: f64,
    bias_side: f64,
    /// `settings.sim_instability` is ±0 (fixed at construction): the
    /// step's bias test reads one flag rather than comparing a float.
    steady: bool,
    /// Ready (not `unready`), and the common helm-boat setup: no
    /// staleness check (`simulation`), a speed-factor thrust, no depth
    /// control and no instability. Kept up to date with `unready` and
    /// `factor_thrust`: the step then tests this flag (and the clock)
    /// instead of five.
    quick: bool,
    /// `math = "fast"` (fixed at construction): the heading error skips
    /// `angle180`'s `(e + 360) − 360` for e in (−180, 0), and the loops
    /// take their fast common case ([`ScalarPid::with_math`]).
    fast: bool,
    yaw: ScalarPid,
    speed: ScalarPid,
    depth: ScalarPid,
    pitch: ScalarPid,
    pending: Vec<PidPost>,
}

impl PidEngine {
    /// A fresh engine (clock 0, nothing received, override flag on),
    /// computing every operation as the C++ does (`math = "libm"`).
    pub fn new(settings: PidSettings) -> PidEngine {
        PidEngine::with_math(settings, MathMode::Libm)
    }

    /// A fresh engine computing for `math`: with [`MathMode::Fast`] the
    /// heading error and the loops' common case are reordered (within a
    /// few last bits of the C++'s; see [`ScalarPid::advance_fast`]).
    pub fn with_math(settings: PidSettings, math: MathMode) -> PidEngine {
        PidEngine {
            yaw: ScalarPid::with_math(settings.yaw, math),
            speed: ScalarPid::with_math(settings.speed, math),
            depth: ScalarPid::with_math(settings.depth, math),
            pitch: ScalarPid::with_math(settings.pitch, math),
            fast: math == MathMode::Fast,
            factor_thrust: factor_thrust(0.0, &settings),
            steady: settings.sim_instability == 0.0,
            settings,
            clock: 0.0,
            des_heading: Stamped::default(),
            des_speed: Stamped::default(),
            des_depth: Stamped::default(),
            thrust_memory: 0.0,
            unready: true,
            quick: false,
            override_on: true,
            bias_t: 0.0,
            bias_side: 1.0,
            pending: Vec::new(),
        }
    }

    /// The configuration.
    pub fn settings(&self) -> &PidSettings {
        &self.settings
    }

    /// `DESIRED_HEADING`, degrees (stamped with the PID clock), kept as
    /// `angle180(v)`: the C++ wraps the stored value so in every step that
    /// steers (§4.5) before any use, and `angle180` is idempotent (its
    /// result is in [0, 180] and returned as is, or in (−180, 0) and
    /// `(r + 360) − 360` is exactly `r`: both steps are exact there), so
    /// wrapping once on receipt gives the step the same number without
    /// re-testing the range every step.
    pub fn set_desired_heading(&mut self, v: f64) {
        self.des_heading = Stamped {
            v: angle180(v),
            t: self.clock,
        };
        self.restamped();
    }

    /// `DESIRED_SPEED`, m/s.
    pub fn set_desired_speed(&mut self, v: f64) {
        self.des_speed = Stamped { v, t: self.clock };
        self.factor_thrust = factor_thrust(v, &self.settings);
        self.restamped();
    }

    /// `DESIRED_DEPTH`, m.
    pub fn set_desired_depth(&mut self, v: f64) {
        self.des_depth = Stamped { v, t: self.clock };
        self.restamped();
    }

    /// Bring `unready` up to date after a helm stamp changed.
    fn restamped(&mut self) {
        self.unready = self.des_heading.t == 0.0
            || self.des_speed.t == 0.0
            || (self.settings.depth_control && self.des_depth.t == 0.0);
        self.requick();
    }

    /// Bring `quick` up to date after `unready` or `factor_thrust` changed.
    fn requick(&mut self) {
        let s = &self.settings;
        self.quick = !self.unready
            && s.simulation
            && self.factor_thrust.is_some()
            && !s.depth_control
            && self.steady;
    }

    /// `NAV_HEADING` as a PID input, degrees: accepted and without effect.
    /// The C++ stores `angle360(v)` stamped with the PID clock, and its
    /// next step overwrites both from the NAV record before any use
    /// (docs/v22.md §3), so nothing is kept.
    pub fn set_nav_heading(&mut self, v: f64) {
        let _ = v;
    }

    /// `SPEED_FACTOR` (taken as is, negative values too).
    pub fn set_speed_factor(&mut self, v: f64) {
        self.settings.speed_factor = v;
        self.factor_thrust = factor_thrust(self.des_speed.v, &self.settings);
        self.requick();
    }

    /// `MOOS_MANUAL_OVERRIDE` (docs/v22.md §4.8): `true`/`false`,
    /// case-insensitive; anything else is ignored (returns false).
    pub fn manual_override(&mut self, s: &str) -> bool {
        match s.trim().to_ascii_lowercase().as_str() {
            "true" => {
                if !self.override_on {
                    self.pending.push(PidPost::HasControl(false));
                }
                self.override_on = true;
                true
            }
            "false" => {
                if self.override_on {
                    // (the C++ zeroes the current inputs' stamps too: the
                    // next step restamps them before any use)
                    for st in [
                        &mut self.des_heading,
                        &mut self.des_speed,
                        &mut self.des_depth,
                    ] {
                        st.t = 0.0;
                    }
                    self.restamped();
                }
                self.override_on = false;
                self.pending.push(PidPost::HasControl(true));
                true
            }
            _ => false,
        }
    }

    /// Whether the manual override flag is set (no effect on the outputs).
    pub fn override_on(&self) -> bool {
        self.override_on
    }

    /// The thrust memory `m`, percent.
    pub fn thrust_memory(&self) -> f64 {
        self.thrust_memory
    }

    /// One PID step at time `t_s` from `nav` (the NAV record before the
    /// step: its heading, stored speed, depth and pitch are the current
    /// inputs); the engine's postings of the step are appended to `posts`
    /// (pending mail postings first).
    #[inline]
    pub fn step(&mut self, t_s: f64, nav: &Record, posts: &mut Vec<PidPost>) -> PidOutput {
        // The current inputs are the NAV record's, stamped with the clock
        // before this step (`prev`), as the C++ stamps them.
        let prev = self.clock;
        self.clock = t_s;
        if !self.pending.is_empty() {
            posts.append(&mut self.pending);
        }
        if self.quick && prev != 0.0 {
            // `step_general` for `quick`'s setup: ready, no staleness
            // check, the speed-factor thrust (always `Some` here), no
            // elevator, no instability
            let t = self.factor_thrust.unwrap_or(0.0);
            self.thrust_memory = t;
            let mut out = PidOutput {
                thrust: t,
                ..PidOutput::default()
            };
            if t > 0.0 {
                out.rudder = self.rudder(t_s, nav, true);
            }
            return out;
        }
        self.step_general(t_s, nav, posts, prev)
    }

    /// [`PidEngine::step`] in general, `prev` being the clock before it.
    #[inline(always)]
    fn step_general(
        &mut self,
        t_s: f64,
        nav: &Record,
        posts: &mut Vec<PidPost>,
        prev: f64,
    ) -> PidOutput {
        let s = &self.settings;
        let dc = s.depth_control;
        let mut out = PidOutput::default();
        // (the helm's stamps through their flag, kept by every change; the
        // nav stamps are all `prev`)
        if self.unready || prev == 0.0 {
            return out;
        }
        if !s.simulation {
            let mut stale = false;
            let mut check = |tag: &'static str, stamp: f64, thr: f64| {
                let d = t_s - stamp;
                if d > thr {
                    posts.push(PidPost::Stale(tag, d));
                    stale = true;
                }
            };
            check("DesHdg", self.des_heading.t, s.tardy_helm);
            check("DesSpd", self.des_speed.t, s.tardy_helm);
            check("NavHdg", prev, s.tardy_nav);
            check("NavSpd", prev, s.tardy_nav);
            if dc {
                check("DesDepth", self.des_depth.t, s.tardy_helm);
                check("NavDep", prev, s.tardy_nav);
                check("NavPitch", prev, s.tardy_nav);
            }
            if stale {
                return out;
            }
        }
        // thrust (docs/v22.md §4.4)
        let t = match self.factor_thrust {
            Some(t) => t,
            None => {
                let err = self.des_speed.v - nav.speed;
                thrust_limits(
                    self.thrust_memory + self.speed.run_or_zero(err, t_s),
                    s.max_thrust,
                )
            }
        };
        self.thrust_memory = t;
        out.thrust = t;
        if t > 0.0 {
            out.rudder = self.rudder(t_s, nav, self.steady);
            let s = &self.settings;
            if dc {
                // elevator (§4.6)
                let err = nav.depth - self.des_depth.v;
                let p = clip(self.depth.run_or_zero(err, t_s), s.max_pitch);
                let u = self.pitch.run_or_zero(nav.pitch - p, t_s);
                let e = u * 180.0 / MOOS_PI;
                out.elevator = finite_or_zero(clip(e, s.max_elevator));
            }
        }
        out
    }

    /// The step's rudder (docs/v22.md §4.5), degrees, `steady` being
    /// [`PidEngine::steady`] (a constant where known).
    #[inline(always)]
    fn rudder(&mut self, t_s: f64, nav: &Record, steady: bool) -> f64 {
        // `des_heading.v` is stored wrapped to (−180, 180] (the C++ wraps
        // it here: the same number, see `set_desired_heading`)
        let e = nav.heading - self.des_heading.v;
        // (fast: e in (−180, 180] as is; `angle180` gives (e + 360) − 360
        // for e < 0, which rounds e to a multiple of 360's last bit, about
        // 6e-14 degrees)
        let err = if self.fast && e > -180.0 && e <= 180.0 {
            e
        } else {
            angle180(e)
        };
        // `x·(−1.0)` in the C++: negation is the same number
        let mut r = -self.yaw.run_or_zero(err, t_s);
        let mut d = t_s - self.bias_t;
        if d > 10.0 {
            d = 0.0;
            self.bias_t = t_s;
            self.bias_side = -self.bias_side;
        }
        // Without instability (the common case, ±0) the bias is the
        // signed zero `(d/10)·s`, which `d·s` is too (d/10 keeps d's
        // sign, and a NaN or infinite d gives the same NaN): the same
        // bits without the division.
        let s = &self.settings;
        let bias = if steady {
            d * s.sim_instability
        } else {
            (d / 10.0) * s.sim_instability
        };
        r += self.bias_side * bias;
        finite_or_zero(clip(r, s.max_rudder))
    }
}

/// The thrust's lower limit and clip (docs/v22.md §4.4): 0 below 0.01 or
/// NaN, then clipped to `max` percent.
fn thrust_limits(mut t: f64, max: f64) -> f64 {
    if t < 0.01 || t.is_nan() {
        t = 0.0; // (a NaN guard too)
    }
    clip(t, max)
}

/// The thrust with `speed_factor ≠ 0` for desired speed `v` (m/s), percent:
/// `v × factor` through [`thrust_limits`]; `None` with `speed_factor = 0`
/// (the speed loop runs).
fn factor_thrust(v: f64, s: &PidSettings) -> Option<f64> {
    (s.speed_factor != 0.0).then(|| thrust_limits(v * s.speed_factor, s.max_thrust))
}

fn finite_or_zero(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// `v > max ⇒ max, else v < −max ⇒ −max` (the C++'s clip form).
fn clip(v: f64, max: f64) -> f64 {
    if v > max {
        max
    } else if v < -max {
        -max
    } else {
        v
    }
}

/// `PID_STALE`'s text: `Stale <tag>:<Δ>` with Δ as `%.3f`, trailing zeros
/// and point removed.
pub fn stale_text(tag: &str, d: f64) -> String {
    format!("Stale {tag}:{}", super::drift::fmt_x(d, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(kp: f64, kd: f64, ki: f64, ilim: f64, olim: f64) -> ScalarPid {
        ScalarPid::new(Gains {
            kp,
            kd,
            ki,
            integral_limit: ilim,
            output_limit: olim,
        })
    }

    /// A loop computed for `math = "fast"`.
    fn fast_pid(kp: f64, kd: f64, ki: f64, ilim: f64, olim: f64) -> ScalarPid {
        let g = pid(kp, kd, ki, ilim, olim).gains();
        ScalarPid::with_math(g, MathMode::Fast)
    }

    /// A bound on the fast loop's difference from the exact one for one
    /// call: the derivative's nine quotients, each within 2 ulps (x·(1/dt)
    /// against x/dt), summed in another order (a few ulps of Σ|hᵢ| at
    /// most), times kd/9, then the output's two additions.
    fn fast_tolerance(p: &ScalarPid, err: f64, o: f64) -> f64 {
        let g = p.gains();
        let h = p.hist[..DERIV_WINDOW].iter().map(|q| q.abs()).sum::<f64>();
        32.0 * f64::EPSILON * ((g.kp * err).abs() + g.kd.abs() * h + o.abs()) + 1e-300
    }

    #[test]
    fn fast_loop_stays_within_last_bits_of_the_exact_one() {
        // 20,000 calls of heading-like errors, dt near 0.1 s with the
        // jitter of `k·0.1 − (k−1)·0.1`, now and then a repeated or
        // backward time, a NaN error or a big jump; with and without the
        // integral term
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for (kp, kd, ki, ilim) in [
            (1.5, 2.0, 0.0, 0.0),
            (0.8, 0.3, 0.05, 20.0),
            (2.0, 7.0, 0.5, 3.0),
        ] {
            let mut exact = pid(kp, kd, ki, ilim, 100.0);
            let mut fast = fast_pid(kp, kd, ki, ilim, 100.0);
            let mut t = 0.0;
            let mut fast_calls = 0;
            for k in 1..20_000u64 {
                let r = next();
                t = if r < 0.002 {
                    t // time stands still
                } else if r < 0.003 {
                    t - 0.05 // time goes back
                } else {
                    k as f64 * 0.1
                };
                let u = next();
                let err = if u < 0.001 {
                    f64::NAN
                } else if u < 0.002 {
                    1e6 * (next() - 0.5) // a jump
                } else {
                    180.0 * (next() - 0.5)
                };
                let (oe, of) = (exact.run(err, t), fast.run(err, t));
                match (oe, of) {
                    (Some(a), Some(b)) => {
                        let tol = fast_tolerance(&exact, err, a);
                        assert!(
                            (a - b).abs() <= tol,
                            "call {k}: exact {a:e}, fast {b:e}, tol {tol:e}"
                        );
                        assert!(b.is_finite());
                        fast_calls += usize::from(exact.full);
                    }
                    (a, b) => assert_eq!(a, b, "call {k}"),
                }
                let (de, df) = (exact.err_dot(), fast.err_dot());
                let h = exact.hist[..DERIV_WINDOW]
                    .iter()
                    .map(|q| q.abs())
                    .sum::<f64>();
                let tol = 32.0 * f64::EPSILON * h + 1e-300;
                assert!((de - df).abs() <= tol, "call {k}: ė {de:e} / {df:e}");
                assert_eq!(
                    exact.integral().to_bits(),
                    fast.integral().to_bits(),
                    "call {k}: Σ"
                );
            }
            assert!(
                fast_calls > 19_000,
                "the common case ran {fast_calls} times"
            );
        }
    }

    #[test]
    fn fast_loop_keeps_the_guards_of_an_overflowing_derivative() {
        // quotients of 5e307 (finite), nine of which sum past f64::MAX: the
        // C++ sets ė to 0 and so must the fast loop (then o = kp·e exactly)
        for mut p in [
            pid(0.5, 1.0, 0.0, 0.0, f64::MAX),
            fast_pid(0.5, 1.0, 0.0, 0.0, f64::MAX),
        ] {
            let dt = 1e-10;
            let mut last = None;
            for k in 0..30u32 {
                let err = f64::from(k) * 5e297;
                last = p.run(err, f64::from(k) * dt);
                assert!(last.is_some_and(f64::is_finite), "call {k}: {last:?}");
            }
            assert_eq!(last, Some(0.5 * (29.0 * 5e297)));
            assert_eq!(p.err_dot(), 0.0);
            // a jump whose quotient overflows: stored as 0, and a later
            // window without it is the plain mean again
            let mut p = p;
            let o = p.run(-f64::MAX, 30.0 * dt).unwrap();
            assert!(o.is_finite());
        }
        // an overflowing quotient in the fast loop: q → 0, as the C++, and
        // the same output as the exact loop's (here kd·ė overflows, and
        // the output's non-finite guard gives 0)
        let mut e = pid(1.0, 9.0, 0.0, 0.0, f64::MAX);
        let mut f = fast_pid(1.0, 9.0, 0.0, 0.0, f64::MAX);
        let mut outs = Vec::new();
        for p in [&mut e, &mut f] {
            for k in 0..12 {
                p.run(0.0, f64::from(k));
            }
            p.run(f64::MAX, 12.0); // q = MAX, finite
            outs.push(p.run(-f64::MAX, 13.0)); // q = −∞ → 0
            assert_eq!(p.hist[p.head], 0.0);
            outs.push(p.run(0.0, 14.0));
        }
        assert_eq!(outs[..2], outs[2..]);
        assert_eq!(outs[0], Some(0.0));
    }

    #[test]
    fn derivative_is_the_mean_of_the_last_nine_quotients() {
        let mut p = pid(0.0, 1.0, 0.0, 0.0, 1e9);
        // errors 0, 1, 3, 6, 10, ...: quotient k at step k (dt = 1)
        let mut err = 0.0;
        assert_eq!(p.run(err, 0.0), Some(0.0)); // first call: ė = 0
        for k in 1..=12 {
            err += k as f64;
            let o = p.run(err, k as f64).unwrap();
            let lo = (k as i64 - 8).max(1);
            let n = (k as i64 - lo + 1) as f64;
            let mean = (lo..=k as i64).map(|q| q as f64).sum::<f64>() / n;
            assert_eq!(o, mean, "step {k}");
        }
        // after 12 steps the window holds quotients 4..=12: mean 8
        assert_eq!(p.err_dot(), 8.0);
    }

    #[test]
    fn derivative_sum_starts_at_plus_zero() {
        // err −0.0 after +0.0: the quotient is −0.0, and the C++'s sum from
        // 0.0 makes the mean +0.0 (a sum starting at the newest entry would
        // keep −0.0)
        let mut p = pid(0.0, 1.0, 0.0, 0.0, 1e9);
        p.run(0.0, 1.0);
        p.run(-0.0, 2.0);
        assert_eq!(p.err_dot().to_bits(), 0.0f64.to_bits());
        // a partly filled window: the unfilled slots change nothing
        let mut p = pid(0.0, 1.0, 0.0, 0.0, 1e9);
        p.run(0.0, 0.0);
        p.run(0.1, 0.1); // quotient 0.1 / 0.1
        p.run(0.3, 0.3); // quotient 0.2 / 0.2
        let q1 = 0.1 / 0.1;
        let q2 = (0.3 - 0.1) / (0.3 - 0.1);
        assert_eq!(p.err_dot(), ((0.0 + q2) + q1) / 2.0);
    }

    #[test]
    fn integral_is_clipped_to_its_limit_and_first_call_adds_nothing() {
        let mut p = pid(0.0, 0.0, 1.0, 2.5, 100.0);
        assert_eq!(p.run(1.0, 10.0), Some(0.0));
        assert_eq!(p.run(1.0, 11.0), Some(1.0));
        assert_eq!(p.run(1.0, 12.0), Some(2.0));
        assert_eq!(p.run(1.0, 13.0), Some(2.5)); // 3 >= 2.5 -> 2.5
        assert_eq!(p.run(-10.0, 14.0), Some(-2.5)); // 2.5 - 10 = -7.5 -> -2.5
        assert_eq!(p.integral(), -2.5);
        // ki <= 0 (or NaN): no integral, Σ = +0.0 in every call
        for ki in [0.0, -1.0, f64::NAN] {
            let mut p = pid(0.0, 0.0, ki, 2.5, 100.0);
            for (k, e) in [1.0, -3.0, 5.0].into_iter().enumerate() {
                assert_eq!(p.run(e, 10.0 + k as f64), Some(0.0));
                assert_eq!(p.integral().to_bits(), 0.0f64.to_bits());
            }
        }
    }

    #[test]
    fn output_is_clipped_and_zero_dt_repeats_output() {
        let mut p = pid(10.0, 0.0, 0.0, 0.0, 30.0);
        assert_eq!(p.run(5.0, 1.0), Some(30.0));
        assert_eq!(p.run(-5.0, 2.0), Some(-30.0));
        assert_eq!(p.run(1.0, 2.0), Some(-30.0)); // dt = 0: unchanged
        assert_eq!(p.run(1.0, 1.5), None); // time went backwards
        assert_eq!(p.run(1.0, 3.0), Some(10.0));
    }

    #[test]
    fn zero_limits_give_negative_zero() {
        // s(0)·0 = −0.0 as on x86-64
        let mut p = pid(0.0, 0.0, 1.0, 0.0, 0.0);
        let o = p.run(0.0, 1.0).unwrap();
        assert_eq!(o.to_bits(), (-0.0f64).to_bits());
        assert_eq!(p.integral().to_bits(), (-0.0f64).to_bits());
    }

    fn heading_engine() -> PidEngine {
        PidEngine::new(PidSettings {
            yaw: Gains {
                kp: 1.0,
                output_limit: 100.0,
                ..Gains::default()
            },
            speed_factor: 20.0,
            depth_control: false,
            ..PidSettings::default()
        })
    }

    fn nav(h: f64) -> Record {
        Record {
            heading: h,
            speed: 1.0,
            ..Record::default()
        }
    }

    #[test]
    fn angle180_is_idempotent_so_the_desired_heading_may_be_wrapped_on_receipt() {
        // `set_desired_heading` stores angle180(v) where the C++ wraps the
        // stored value in the step: the same number only if wrapping twice
        // is wrapping once, bit for bit
        let mut vals = vec![
            0.0,
            -0.0,
            180.0,
            -180.0,
            360.0,
            -360.0,
            540.0,
            1e-300,
            -1e-300,
            -1e-14,
            179.99999999999997,
            -179.99999999999997,
            180.00000000000003,
            1e9,
            -1e9,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            vals.push((u - 0.5) * 2000.0);
            vals.push((u - 0.5) * 1e-6);
        }
        for v in vals {
            let once = angle180(v);
            assert_eq!(angle180(once).to_bits(), once.to_bits(), "{v:e}");
        }
    }

    #[test]
    fn heading_error_wraps_350_to_10_as_a_starboard_turn() {
        let mut e = heading_engine();
        let mut posts = Vec::new();
        // first step: nothing received yet -> zeros
        assert_eq!(e.step(1.0, &nav(350.0), &mut posts), PidOutput::default());
        e.set_desired_heading(10.0);
        e.set_desired_speed(2.0);
        let o = e.step(1.1, &nav(350.0), &mut posts);
        // error angle180(350 - 10) = -20, rudder = -(kp·ε) = +20 (starboard)
        assert_eq!(o.rudder, 20.0);
        assert_eq!(o.thrust, 40.0);
        assert!(posts.is_empty());
    }

    #[test]
    fn helm_before_the_first_step_does_not_count() {
        let mut e = heading_engine();
        e.set_desired_heading(10.0);
        e.set_desired_speed(2.0);
        let mut posts = Vec::new();
        assert_eq!(e.step(0.1, &nav(0.0), &mut posts).thrust, 0.0);
        assert_eq!(e.step(0.2, &nav(0.0), &mut posts).thrust, 0.0);
        e.set_desired_heading(10.0);
        e.set_desired_speed(2.0);
        assert_eq!(e.step(0.3, &nav(0.0), &mut posts).thrust, 40.0);
    }

    #[test]
    fn stale_helm_posts_and_zeroes_outputs_but_keeps_memory() {
        let mut e = heading_engine();
        let mut posts = Vec::new();
        e.step(1.0, &nav(0.0), &mut posts);
        e.set_desired_heading(0.0);
        e.set_desired_speed(2.0);
        assert_eq!(e.step(1.1, &nav(0.0), &mut posts).thrust, 40.0);
        let o = e.step(3.5, &nav(0.0), &mut posts);
        assert_eq!(o, PidOutput::default());
        assert_eq!(e.thrust_memory(), 40.0);
        let texts: Vec<String> = posts
            .iter()
            .map(|p| match p {
                PidPost::Stale(t, d) => stale_text(t, *d),
                PidPost::HasControl(b) => b.to_string(),
            })
            .collect();
        assert_eq!(
            texts,
            [
                "Stale DesHdg:2.5",
                "Stale DesSpd:2.5",
                "Stale NavHdg:2.4",
                "Stale NavSpd:2.4"
            ]
        );
    }

    #[test]
    fn thrust_below_one_hundredth_is_zero_and_clipped_to_max() {
        let mut e = heading_engine();
        let mut posts = Vec::new();
        e.step(1.0, &nav(0.0), &mut posts);
        e.set_desired_heading(0.0);
        e.set_desired_speed(0.0004); // 0.008 % < 0.01
        assert_eq!(e.step(1.1, &nav(0.0), &mut posts).thrust, 0.0);
        e.set_desired_speed(9.0); // 180 % -> 100
        assert_eq!(e.step(1.2, &nav(0.0), &mut posts).thrust, 100.0);
    }

    #[test]
    fn speed_factor_by_mail_rescales_the_held_desired_speed() {
        // docs/v22.md §4.4: thrust = desired speed × factor, read in every
        // step; the engine computes it on receipt, so a new factor (or a
        // new speed) must show in the next step
        let mut e = heading_engine();
        let mut posts = Vec::new();
        e.step(1.0, &nav(0.0), &mut posts);
        e.set_desired_heading(0.0);
        e.set_desired_speed(2.0);
        assert_eq!(e.step(1.1, &nav(0.0), &mut posts).thrust, 40.0);
        e.set_speed_factor(10.0);
        assert_eq!(e.step(1.2, &nav(0.0), &mut posts).thrust, 20.0);
        e.set_speed_factor(-10.0); // negative: below 0.01, so 0
        assert_eq!(e.step(1.3, &nav(0.0), &mut posts).thrust, 0.0);
        e.set_speed_factor(10.0);
        e.set_desired_speed(3.0);
        assert_eq!(e.step(1.4, &nav(0.0), &mut posts).thrust, 30.0);
        assert_eq!(e.thrust_memory(), 30.0);
    }

    #[test]
    fn manual_override_false_resets_stamps_and_posts() {
        let mut e = heading_engine();
        let mut posts = Vec::new();
        e.step(1.0, &nav(0.0), &mut posts);
        e.set_desired_heading(0.0);
        e.set_desired_speed(2.0);
        assert!(e.manual_override("FALSE"));
        let o = e.step(1.1, &nav(0.0), &mut posts);
        assert_eq!(o.thrust, 0.0);
        assert_eq!(posts, [PidPost::HasControl(true)]);
        assert!(e.manual_override("true"));
        assert!(!e.manual_override("maybe"));
    }
}
