//! Lock-step on a ROS 2 graph, sans-IO: when `usim ros2 --lockstep` runs
//! its next iteration. Two rules (docs/ros2.md, "Sim time and lock-step"):
//!
//! * [`StepRequests`] (`--lockstep step`): a node asks for iterations on
//!   `/usim/step` (`std_msgs/Float64`, the number of iterations, a whole
//!   number from 1 to [`MAX_STEP_REQUEST`]); usim runs them as fast as it
//!   can, and then waits.
//! * [`AckGate`] (`--lockstep ack`): after each iteration every vehicle's
//!   controller acknowledges the stamp of the odometry it has handled on
//!   `/NAME/usim/ack` (`std_msgs/Float64`, s, to within
//!   [`ACK_TOLERANCE_S`], after its commands); usim
//!   runs the next iteration when the slowest vehicle has acknowledged.
//!
//! No clock or socket: times are arguments, the adapter (`crate::dds`)
//! carries the messages.

/// Topic of step requests (`std_msgs/Float64`).
pub const STEP_TOPIC: &str = "/usim/step";

/// Most iterations one step request may ask for.
pub const MAX_STEP_REQUEST: f64 = 1_000_000.0;

/// Most iterations waiting to run at once (requests beyond are refused).
pub const MAX_PENDING_STEPS: u64 = 10_000_000;

/// The lock-step rule of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Iterate on requests on [`STEP_TOPIC`].
    Step,
    /// Iterate when every vehicle has acknowledged the last iteration.
    Ack,
}

/// Iterations asked for on [`STEP_TOPIC`] and not run yet.
#[derive(Debug, Clone, Default)]
pub struct StepRequests {
    pending: u64,
}

impl StepRequests {
    /// No iteration pending.
    pub fn new() -> StepRequests {
        StepRequests::default()
    }

    /// A request for `n` iterations; refused (with the reason) unless `n` is
    /// a whole number from 1 to [`MAX_STEP_REQUEST`] and the pending total
    /// stays within [`MAX_PENDING_STEPS`].
    pub fn request(&mut self, n: f64) -> Result<(), String> {
        if !((1.0..=MAX_STEP_REQUEST).contains(&n) && n.fract() == 0.0) {
            return Err(format!(
                "a step request is a whole number of iterations from 1 to {MAX_STEP_REQUEST}, got {n}"
            ));
        }
        // n is a whole number within u64 (checked above).
        let k = n as u64;
        if self.pending + k > MAX_PENDING_STEPS {
            return Err(format!(
                "{} iterations already pending: at most {MAX_PENDING_STEPS}",
                self.pending
            ));
        }
        self.pending += k;
        Ok(())
    }

    /// Whether an iteration may run now (then it is counted as run).
    pub fn take(&mut self) -> bool {
        let due = self.pending > 0;
        self.pending = self.pending.saturating_sub(1);
        due
    }

    /// Iterations pending.
    pub fn pending(&self) -> u64 {
        self.pending
    }
}

/// How far an acknowledged stamp may be from the published one, s: a
/// node that turns the header's `sec` and `nanosec` back into seconds
/// (`sec + nanosec · 1e-9`) does not get usim's double back bit for bit.
pub const ACK_TOLERANCE_S: f64 = 1e-6;

/// When lock-step sends the messages of the current iteration again to
/// the vehicles that have not acknowledged it: after twice the
/// time the last iteration took to be acknowledged by every vehicle, within
/// `[min_s, max_s]` (s). A sample lost on the way (a full socket buffer of
/// a busy subscriber) costs about one iteration's time, not a fixed wait.
pub fn resend_after_s(last_round_s: f64, min_s: f64, max_s: f64) -> f64 {
    let t = 2.0 * last_round_s;
    if t.is_finite() {
        t.clamp(min_s, max_s)
    } else {
        max_s
    }
}

/// What an acknowledgement did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ack {
    /// It acknowledges the current iteration.
    Current,
    /// It is for an earlier iteration (a late repeat): ignored.
    Stale,
}

/// The slowest-subscriber gate of `--lockstep ack`: one acknowledged time
/// per vehicle; due when each vehicle has acknowledged the last published
/// iteration's time.
#[derive(Debug, Clone)]
pub struct AckGate {
    published: f64,
    acked: Vec<Option<f64>>,
}

impl AckGate {
    /// A gate over `vehicles` vehicles, nothing published yet.
    pub fn new(vehicles: usize) -> AckGate {
        AckGate {
            published: f64::NEG_INFINITY,
            acked: vec![None; vehicles],
        }
    }

    /// The iteration at time `t_s` (s) was published: wait for its acks.
    pub fn published(&mut self, t_s: f64) {
        self.published = t_s;
    }

    /// Time of the last published iteration, s.
    pub fn last_published(&self) -> f64 {
        self.published
    }

    /// Vehicle `i` acknowledged time `t_s` (s). An ack of a time that was
    /// never published (in the future, not finite) or of an unknown vehicle
    /// is refused with the reason.
    pub fn ack(&mut self, i: usize, t_s: f64) -> Result<Ack, String> {
        let Some(slot) = self.acked.get_mut(i) else {
            return Err(format!("no vehicle {i}"));
        };
        if !t_s.is_finite() || t_s > self.published + ACK_TOLERANCE_S {
            return Err(format!(
                "acknowledges time {t_s} s, but the last iteration published is at {} s",
                self.published
            ));
        }
        if t_s < self.published - ACK_TOLERANCE_S {
            return Ok(Ack::Stale);
        }
        *slot = Some(self.published);
        Ok(Ack::Current)
    }

    /// Whether every vehicle acknowledged the last published iteration.
    pub fn due(&self) -> bool {
        self.published.is_finite() && self.acked.iter().all(|a| *a == Some(self.published))
    }

    /// Whether vehicle `i` has not acknowledged the last iteration yet.
    pub fn is_waiting(&self, i: usize) -> bool {
        self.acked
            .get(i)
            .is_some_and(|a| *a != Some(self.published))
    }

    /// Vehicles that have not acknowledged the last iteration yet.
    pub fn waiting(&self) -> usize {
        self.acked
            .iter()
            .filter(|a| **a != Some(self.published))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_requests_count_whole_iterations_and_refuse_the_rest() {
        let mut s = StepRequests::new();
        assert!(!s.take());
        s.request(3.0).unwrap();
        assert_eq!(s.pending(), 3);
        assert!(s.take() && s.take() && s.take());
        assert!(!s.take());
        for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, 2e6] {
            let e = s.request(bad).unwrap_err();
            assert!(e.contains("whole number"), "{bad}: {e}");
        }
        assert_eq!(s.pending(), 0);
        for _ in 0..10 {
            s.request(MAX_STEP_REQUEST).unwrap();
        }
        let e = s.request(1.0).unwrap_err();
        assert!(e.contains("already pending"), "{e}");
        assert_eq!(s.pending(), MAX_PENDING_STEPS);
    }

    #[test]
    fn resend_waits_twice_the_last_round_within_bounds() {
        assert_eq!(resend_after_s(0.04, 0.01, 0.25), 0.08);
        assert_eq!(resend_after_s(0.001, 0.01, 0.25), 0.01);
        assert_eq!(resend_after_s(3.0, 0.01, 0.25), 0.25);
        assert_eq!(resend_after_s(f64::NAN, 0.01, 0.25), 0.25);
    }

    #[test]
    fn the_gate_opens_when_the_slowest_vehicle_acks() {
        let mut g = AckGate::new(3);
        assert!(!g.due());
        g.published(10.0);
        assert_eq!(g.ack(0, 10.0), Ok(Ack::Current));
        assert_eq!(g.ack(2, 10.0), Ok(Ack::Current));
        assert!(!g.due());
        assert_eq!(g.waiting(), 1);
        assert!(g.is_waiting(1) && !g.is_waiting(0) && !g.is_waiting(9));
        assert_eq!(g.ack(1, 10.0), Ok(Ack::Current));
        assert!(g.due());
        g.published(10.1);
        assert!(!g.due());
        assert_eq!(g.waiting(), 3);
        // A late repeat of the old ack does not count; the future, NaN and
        // an unknown vehicle are refused.
        assert_eq!(g.ack(0, 10.0), Ok(Ack::Stale));
        assert!(g.ack(0, 10.2).unwrap_err().contains("last iteration"));
        assert!(g.ack(0, f64::NAN).is_err());
        // Within a microsecond (a stamp read back as sec + nanosec·1e-9).
        assert_eq!(g.ack(0, 10.1 - 4e-7), Ok(Ack::Current));
        assert_eq!(g.ack(0, 10.1 - 2e-6), Ok(Ack::Stale));
        assert!(g.ack(3, 10.1).is_err());
        assert!(!g.due());
        for i in 0..3 {
            g.ack(i, 10.1 + 5e-7).unwrap();
        }
        assert!(g.due());
        // No vehicles: due once something is published.
        let mut g = AckGate::new(0);
        assert!(!g.due());
        g.published(1.0);
        assert!(g.due());
    }
}
