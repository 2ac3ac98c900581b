//! Tick deadlines, the vehicle clock and tick lateness, sans-IO: every
//! instant is an argument, so the rules are tested without sleeping.
//!
//! * Deadlines are absolute: iteration `k` is due at `start + k·period`,
//!   `period = 1 / (app_tick · time_warp)` in whole nanoseconds, computed by
//!   multiplication, so there is no drift however late a wake-up is.
//! * A late wake-up runs one iteration at the real time of waking (the
//!   vehicle clock is read then, so Δt covers the real elapsed time, as
//!   uSimMarine's does) and the deadlines it missed are skipped, not
//!   caught up in a burst.
//! * The vehicle clock is MOOS-like: `clock = start_time_s + elapsed_real_s ·
//!   time_warp`. As with MOOS's time warp the iteration rate is scaled too,
//!   so each step still covers about `1/app_tick` s of vehicle time.
use std::time::{Duration, Instant};

/// Shortest real tick period accepted (1 kHz).
pub const MIN_PERIOD: Duration = Duration::from_millis(1);

/// The tick schedule and clock of one vehicle process.
#[derive(Debug, Clone)]
pub struct Schedule {
    origin: Instant,
    start_time_s: f64,
    time_warp: f64,
    period_ns: u64,
    next_k: u64,
}

/// One wake-up, as [`Schedule::on_wake`] saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wake {
    /// Index of the deadline this wake-up served.
    pub k: u64,
    /// How late the wake-up was against that deadline.
    pub lateness: Duration,
    /// Deadlines skipped because the wake-up was more than a period late.
    pub skipped: u64,
    /// The vehicle clock at the wake-up, s.
    pub clock_s: f64,
}

impl Schedule {
    /// A schedule starting at `origin` (the clock reads `start_time_s`
    /// there), ticking at `app_tick_hz · time_warp` real iterations per
    /// second. The first deadline is one period after `origin`. The real
    /// period is kept at or above [`MIN_PERIOD`].
    pub fn new(origin: Instant, start_time_s: f64, app_tick_hz: f64, time_warp: f64) -> Schedule {
        let rate = app_tick_hz * time_warp;
        let period_ns = if rate.is_finite() && rate > 0.0 {
            (1e9 / rate).round() as u64
        } else {
            1_000_000_000
        };
        Schedule {
            origin,
            start_time_s,
            time_warp,
            period_ns: period_ns.max(MIN_PERIOD.as_nanos() as u64),
            next_k: 1,
        }
    }

    /// The real time between two deadlines.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period_ns)
    }

    /// Deadline of iteration `k`.
    pub fn deadline(&self, k: u64) -> Instant {
        let ns = u128::from(k) * u128::from(self.period_ns);
        let ns = u64::try_from(ns).unwrap_or(u64::MAX);
        self.origin + Duration::from_nanos(ns)
    }

    /// When to wake up next.
    pub fn next_deadline(&self) -> Instant {
        self.deadline(self.next_k)
    }

    /// The vehicle clock at `now`, s.
    pub fn clock_at(&self, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.origin).as_secs_f64();
        self.start_time_s + elapsed * self.time_warp
    }

    /// Account for a wake-up at `now` (at or after [`Self::next_deadline`])
    /// and move on to the next deadline after `now`.
    pub fn on_wake(&mut self, now: Instant) -> Wake {
        let k = self.next_k;
        let lateness = now.saturating_duration_since(self.deadline(k));
        // Index of the last deadline at or before `now`.
        let elapsed_ns = now.saturating_duration_since(self.origin).as_nanos();
        let due = u64::try_from(elapsed_ns / u128::from(self.period_ns)).unwrap_or(u64::MAX);
        let next = due.max(k).saturating_add(1);
        let skipped = next - k - 1;
        self.next_k = next;
        Wake {
            k,
            lateness,
            skipped,
            clock_s: self.clock_at(now),
        }
    }
}

/// Tick lateness histogram: 100 µs buckets up to 100 ms, then one overflow
/// bucket; a few kilobytes whatever the run length.
#[derive(Debug, Clone)]
pub struct LatenessStats {
    buckets: Vec<u64>,
    overflow: u64,
    max: Duration,
    ticks: u64,
    skipped: u64,
}

/// Width of one [`LatenessStats`] bucket.
pub const BUCKET: Duration = Duration::from_micros(100);
const N_BUCKETS: usize = 1000;

impl Default for LatenessStats {
    fn default() -> Self {
        LatenessStats {
            buckets: vec![0; N_BUCKETS],
            overflow: 0,
            max: Duration::ZERO,
            ticks: 0,
            skipped: 0,
        }
    }
}

impl LatenessStats {
    /// Record one wake-up.
    pub fn record(&mut self, wake: &Wake) {
        self.ticks += 1;
        self.skipped += wake.skipped;
        self.max = self.max.max(wake.lateness);
        let i = (wake.lateness.as_nanos() / BUCKET.as_nanos()) as usize;
        match self.buckets.get_mut(i) {
            Some(b) => *b += 1,
            None => self.overflow += 1,
        }
    }

    /// Iterations recorded.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Deadlines skipped in all.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Largest lateness seen.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The `q`-quantile (0..=1) as the upper edge of its bucket (so an
    /// over-estimate by at most 100 µs); `None` before the first tick.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        if self.ticks == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.ticks as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(BUCKET * (i as u32 + 1));
            }
        }
        Some(self.max)
    }

    /// Non-empty buckets as `(upper edge in µs, count)`, overflow last with
    /// the maximum as its edge.
    pub fn histogram_us(&self) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| ((i as u64 + 1) * BUCKET.as_micros() as u64, *n))
            .collect();
        if self.overflow > 0 {
            out.push((self.max.as_micros() as u64, self.overflow));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn deadlines_are_absolute_and_late_ticks_skip() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 100.0, 10.0, 1.0);
        assert_eq!(s.period(), 100 * MS);
        assert_eq!(s.next_deadline(), t0 + 100 * MS);
        // On time (2 ms late): next deadline stays on the grid.
        let w = s.on_wake(t0 + 102 * MS);
        assert_eq!((w.k, w.skipped), (1, 0));
        assert_eq!(w.lateness, 2 * MS);
        assert!((w.clock_s - 100.102).abs() < 1e-9);
        assert_eq!(s.next_deadline(), t0 + 200 * MS);
        // 250 ms late for k = 2 (due at 200): deadlines 3 and 4 skipped.
        let w = s.on_wake(t0 + 450 * MS);
        assert_eq!((w.k, w.skipped), (2, 2));
        assert_eq!(w.lateness, 250 * MS);
        assert_eq!(s.next_deadline(), t0 + 500 * MS);
        // After many ticks the grid has not drifted.
        for k in 5..1005 {
            s.on_wake(s.next_deadline());
            assert_eq!(s.next_deadline(), t0 + MS * 100 * (k + 1));
        }
    }

    #[test]
    fn time_warp_scales_clock_and_rate() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 0.0, 10.0, 4.0);
        assert_eq!(s.period(), 25 * MS);
        let w = s.on_wake(t0 + 25 * MS);
        assert!((w.clock_s - 0.1).abs() < 1e-12);
    }

    #[test]
    fn period_is_bounded() {
        let s = Schedule::new(Instant::now(), 0.0, 1e6, 10.0);
        assert_eq!(s.period(), MIN_PERIOD);
        let s = Schedule::new(Instant::now(), 0.0, 0.0, 1.0);
        assert_eq!(s.period(), Duration::from_secs(1));
    }

    #[test]
    fn quantiles_from_the_histogram() {
        let mut st = LatenessStats::default();
        assert_eq!(st.quantile(0.5), None);
        for i in 0..100u64 {
            let lateness = Duration::from_micros(if i < 99 { 50 } else { 5_000 });
            st.record(&Wake {
                k: i,
                lateness,
                skipped: 0,
                clock_s: 0.0,
            });
        }
        assert_eq!(st.quantile(0.5), Some(Duration::from_micros(100)));
        assert_eq!(st.quantile(0.99), Some(Duration::from_micros(100)));
        assert_eq!(st.quantile(1.0), Some(Duration::from_micros(5_100)));
        assert_eq!(st.max(), Duration::from_micros(5_000));
        assert_eq!(st.histogram_us(), vec![(100, 99), (5_100, 1)]);
    }
}
