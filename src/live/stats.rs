//! What a live run measures for `--stats` and `-v`: tick lateness (in
//! [`super::schedule::LatenessStats`]), the time and CPU time one iteration
//! takes, and the rate-limited count of refused publications.
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use super::schedule::{LatenessStats, Schedule, Wake};

/// How often tick statistics are logged at debug level (`-v`).
pub const STATS_EVERY: Duration = Duration::from_secs(10);

/// A duration in ms (0 for none).
pub fn ms(d: Option<Duration>) -> f64 {
    d.map(|d| d.as_secs_f64() * 1e3).unwrap_or(0.0)
}

/// CPU time of the calling thread so far (zero if the clock is missing).
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// How long the iterations took (all vehicles), 0.1 ms buckets up to 1 s.
#[derive(Debug)]
pub struct WorkStats {
    buckets: Vec<u64>,
    n: u64,
    max: Duration,
}

impl Default for WorkStats {
    fn default() -> Self {
        WorkStats {
            buckets: vec![0; 10_001],
            n: 0,
            max: Duration::ZERO,
        }
    }
}

impl WorkStats {
    /// Record one iteration's duration.
    pub fn record(&mut self, d: Duration) {
        let i = ((d.as_micros() / 100) as usize).min(self.buckets.len() - 1);
        self.buckets[i] += 1;
        self.n += 1;
        self.max = self.max.max(d);
    }

    /// Upper edge of the `q`-quantile's bucket, ms (0 before any).
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return (i + 1) as f64 * 0.1;
            }
        }
        self.max_ms()
    }

    /// Largest, ms.
    pub fn max_ms(&self) -> f64 {
        self.max.as_secs_f64() * 1e3
    }
}

/// The statistics of a live run's iterations: lateness of each wake-up,
/// wall and CPU time of each iteration, refused publications.
#[derive(Debug)]
pub struct RunStats {
    /// Tick lateness.
    pub lateness: LatenessStats,
    /// Wall time of one iteration (all vehicles).
    pub work: WorkStats,
    /// CPU time of the host's thread in one iteration.
    pub cpu: WorkStats,
    /// Publications the transport refused (queue full), so far.
    pub publish_dropped: u64,
    publish_dropped_logged: Instant,
    last_log: Instant,
    started: Option<(Instant, Duration)>,
}

impl Default for RunStats {
    fn default() -> Self {
        RunStats {
            lateness: LatenessStats::default(),
            work: WorkStats::default(),
            cpu: WorkStats::default(),
            publish_dropped: 0,
            publish_dropped_logged: Instant::now(),
            last_log: Instant::now(),
            started: None,
        }
    }
}

impl RunStats {
    /// An iteration starts after wake-up `wake`.
    pub fn begin(&mut self, wake: &Wake) {
        self.lateness.record(wake);
        self.started = Some((Instant::now(), thread_cpu()));
    }

    /// The iteration begun last is done; `refused` publications of it were
    /// refused by the transport (one warning per 5 s at most).
    pub fn end(&mut self, refused: u64) {
        if let Some((t0, c0)) = self.started.take() {
            self.work.record(t0.elapsed());
            self.cpu.record(thread_cpu().saturating_sub(c0));
        }
        if refused > 0 {
            self.publish_dropped += refused;
            if self.publish_dropped_logged.elapsed() >= Duration::from_secs(5) {
                self.publish_dropped_logged = Instant::now();
                warn!(
                    "outgoing queue full: {} publications dropped so far (broker slow or \
                     unreachable)",
                    self.publish_dropped
                );
            }
        }
        if self.last_log.elapsed() >= STATS_EVERY {
            self.last_log = Instant::now();
            let l = &self.lateness;
            debug!(
                "ticks {} (skipped {}), lateness p50 {:.1} ms p99 {:.1} ms max {:.1} ms, \
                 iteration p99 {:.1} ms",
                l.ticks(),
                l.skipped(),
                ms(l.quantile(0.5)),
                ms(l.quantile(0.99)),
                l.max().as_secs_f64() * 1e3,
                self.work.quantile_ms(0.99)
            );
        }
    }
}

/// The tick part of a run's `--stats` file (every live runtime's).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TickSummary {
    /// Iterations run.
    pub ticks: u64,
    /// Deadlines skipped because an iteration was more than a period late.
    pub skipped: u64,
    /// Real tick period, ms.
    pub period_ms: f64,
    /// Tick lateness p50, ms (upper edge of a 0.1 ms bucket).
    pub lateness_p50_ms: f64,
    /// Tick lateness p99, ms.
    pub lateness_p99_ms: f64,
    /// Largest tick lateness, ms.
    pub lateness_max_ms: f64,
    /// Lateness histogram: `[upper edge µs, count]`.
    pub lateness_histogram_us: Vec<(u64, u64)>,
}

impl TickSummary {
    /// The summary of `stats` for a run on `schedule`.
    pub fn of(stats: &RunStats, schedule: &Schedule) -> TickSummary {
        let l = &stats.lateness;
        TickSummary {
            ticks: l.ticks(),
            skipped: l.skipped(),
            period_ms: schedule.period().as_secs_f64() * 1e3,
            lateness_p50_ms: ms(l.quantile(0.5)),
            lateness_p99_ms: ms(l.quantile(0.99)),
            lateness_max_ms: l.max().as_secs_f64() * 1e3,
            lateness_histogram_us: l.histogram_us(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_quantiles_are_bucket_edges() {
        let mut w = WorkStats::default();
        assert_eq!(w.quantile_ms(0.99), 0.0);
        for _ in 0..99 {
            w.record(Duration::from_micros(50));
        }
        w.record(Duration::from_millis(3));
        assert!((w.quantile_ms(0.5) - 0.1).abs() < 1e-12);
        assert!((w.quantile_ms(1.0) - 3.1).abs() < 1e-9);
        assert!((w.max_ms() - 3.0).abs() < 1e-9);
        // Over a second lands in the last bucket.
        w.record(Duration::from_secs(5));
        assert_eq!(w.max_ms(), 5000.0);
    }

    #[test]
    fn run_stats_count_iterations_and_refusals() {
        let mut s = RunStats::default();
        let wake = Wake {
            k: 1,
            lateness: Duration::from_micros(250),
            skipped: 2,
            clock_s: 0.0,
        };
        s.begin(&wake);
        s.end(3);
        s.begin(&wake);
        s.end(0);
        assert_eq!(s.lateness.ticks(), 2);
        assert_eq!(s.lateness.skipped(), 4);
        assert_eq!(s.publish_dropped, 3);
        assert!(s.work.quantile_ms(0.5) > 0.0);
    }
}
