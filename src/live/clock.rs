//! The live clocks, beside the tick [`super::schedule::Schedule`] (real
//! time, or warped: MOOS's `MOOSTimeWarp`):
//!
//! * [`unix_time_s`]: the wall clock as MOOSTime (s since the Unix epoch),
//!   the default start of every live vehicle clock;
//! * [`ModelClock`]: the vehicle's clock over an outside clock that may be
//!   corrected (the MOOSDB's): jumps are not stepped across;
//! * [`LockStep`]: a clock driven from outside (ROS 2's `/clock`, a test
//!   harness): one iteration per period of outside time, never backwards.
//!
//! Sans-IO but for [`unix_time_s`]: every time is an argument.

/// Seconds since the Unix epoch (MOOSTime's origin).
pub fn unix_time_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Longest step of the vehicle's clock followed at once, real s (× the
/// warp in outside s): a longer (or backward) change of the outside clock
/// is a clock correction, not time that passed.
pub const MAX_CLOCK_STEP: f64 = 10.0;

/// The vehicle's clock over an outside clock (the MOOS clock): equal to
/// it, except that a jump of the outside clock (backwards, or forward by
/// more than [`MAX_CLOCK_STEP`]: a skew correction after the DB host's
/// clock was set) is not stepped across. The vehicle then advances one
/// nominal iteration, and catches up with the outside clock by at most one
/// more iteration's length per iteration (never backwards, never a jump).
#[derive(Debug, Clone)]
pub struct ModelClock {
    last: f64,
    offset: f64,
    nominal: f64,
    max_step: f64,
}

impl ModelClock {
    /// A clock at outside time `start` (s), iterations of `nominal`
    /// outside s, under time warp `warp`.
    pub fn new(start: f64, nominal: f64, warp: f64) -> ModelClock {
        ModelClock {
            last: start,
            offset: 0.0,
            nominal,
            max_step: (MAX_CLOCK_STEP * warp).max(10.0 * nominal),
        }
    }

    /// The vehicle's time for outside time `outside` (s), and the outside
    /// clock's jump when one was not followed.
    pub fn next(&mut self, outside: f64) -> (f64, Option<f64>) {
        let d = outside + self.offset - self.last;
        if !(0.0..=self.max_step).contains(&d) {
            // (NaN too) not followed: one nominal iteration instead.
            self.last += self.nominal;
            if outside.is_finite() {
                self.offset = self.last - outside;
            }
            return (self.last, Some(d));
        }
        if self.offset != 0.0 {
            // Catch up by at most one iteration's length.
            let c = self.offset.clamp(-self.nominal, self.nominal);
            self.offset -= c;
        }
        let t = outside + self.offset;
        let t = if t.is_finite() {
            t.max(self.last)
        } else {
            self.last + self.nominal
        };
        self.last = t;
        (t, None)
    }

    /// Vehicle time minus outside time, s (0 but after a jump).
    pub fn offset(&self) -> f64 {
        self.offset
    }
}

/// A clock driven from outside, in lock-step: the vehicle iterates when
/// the outside time has moved on by at least one period (s) since its last
/// iteration, at that outside time. Time that stands still, runs
/// backwards or is not finite runs no iteration (a simulation paused or
/// reset upstream does not move the vehicle).
#[derive(Debug, Clone)]
pub struct LockStep {
    last: f64,
    period: f64,
}

impl LockStep {
    /// Starting at outside time `start_s`, one iteration per `period_s`
    /// (a period that is not a positive number is taken as 0: every
    /// advance of the outside time is an iteration).
    pub fn new(start_s: f64, period_s: f64) -> LockStep {
        LockStep {
            last: start_s,
            period: if period_s.is_finite() && period_s > 0.0 {
                period_s
            } else {
                0.0
            },
        }
    }

    /// The outside clock reads `t_s`: the time of the iteration now due,
    /// if one is.
    pub fn offer(&mut self, t_s: f64) -> Option<f64> {
        // Within a part in 10⁹ of the period: 10.1 − 10.0 is one 0.1 s
        // period even though its double is a hair less.
        let due =
            t_s.is_finite() && t_s > self.last && t_s - self.last >= self.period * (1.0 - 1e-9);
        due.then(|| {
            self.last = t_s;
            t_s
        })
    }

    /// Time of the last iteration, s.
    pub fn last(&self) -> f64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_clock_never_steps_across_a_jump() {
        let mut c = ModelClock::new(100.0, 0.25, 1.0);
        assert_eq!(c.next(100.25), (100.25, None));
        assert_eq!(c.next(100.5), (100.5, None));
        // A correction of an hour: one nominal step, then catching up.
        let (t, j) = c.next(3700.75);
        assert_eq!((t, j), (100.75, Some(3600.25)));
        let (t, j) = c.next(3701.0);
        assert_eq!((t, j), (101.25, None));
        // Backwards and absurd: never back, never NaN.
        let (t, j) = c.next(-1e300);
        assert_eq!(t, 101.5);
        assert!(j.is_some());
        let (t, _) = c.next(f64::NAN);
        assert_eq!(t, 101.75);
        // Back to the outside clock it follows again, catching up 0.25 s a step.
        let (t0, _) = c.next(101.75 + 0.25);
        let (t1, _) = c.next(101.75 + 0.5);
        assert!(t1 - t0 >= 0.25 && t1 - t0 <= 0.5);
        // Real stalls (seconds) are time that passed: followed.
        let mut c = ModelClock::new(0.0, 0.25, 10.0);
        assert_eq!(c.next(60.0), (60.0, None));
    }

    #[test]
    fn lock_step_iterates_once_per_period_of_outside_time() {
        let mut c = LockStep::new(10.0, 0.1);
        assert_eq!(c.offer(10.05), None);
        assert_eq!(c.offer(10.1), Some(10.1));
        assert_eq!(c.offer(10.1), None);
        // Backwards, NaN, infinite: nothing, and the clock stays.
        assert_eq!(c.offer(5.0), None);
        assert_eq!(c.offer(f64::NAN), None);
        assert_eq!(c.offer(f64::INFINITY), None);
        assert_eq!(c.last(), 10.1);
        // A long pause upstream is one iteration at the new time.
        assert_eq!(c.offer(20.0), Some(20.0));
        // No period: every advance.
        let mut c = LockStep::new(0.0, f64::NAN);
        assert_eq!(c.offer(1e-9), Some(1e-9));
    }
}
