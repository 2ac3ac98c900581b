//! The host's loop on tokio: wake at each deadline, iterate, measure; stop
//! on SIGINT/SIGTERM. Shared by every adapter that runs on tokio (`usim
//! run`, `usim fleet`, the tools' `--duration`).
use std::future::Future;
use std::path::Path;
use std::time::Instant;

use super::schedule::Schedule;
use super::stats::RunStats;

/// Call `iterate` with the vehicle clock (s) at every deadline of
/// `schedule` until `shutdown` resolves, and return what it resolved with.
/// `iterate` returns the publications its transport refused. Before each
/// iteration the task yields once, so a connection task on the same
/// thread takes what its socket already holds: mail that arrived before
/// the deadline is in this iteration.
pub async fn tick_loop<F>(
    schedule: &mut Schedule,
    stats: &mut RunStats,
    shutdown: impl Future<Output = &'static str>,
    mut iterate: F,
) -> &'static str
where
    F: FnMut(f64) -> u64,
{
    tokio::pin!(shutdown);
    loop {
        let deadline = tokio::time::Instant::from_std(schedule.next_deadline());
        tokio::select! {
            biased;
            why = &mut shutdown => return why,
            _ = tokio::time::sleep_until(deadline) => {}
        }
        let wake = schedule.on_wake(Instant::now());
        tokio::task::yield_now().await;
        stats.begin(&wake);
        let refused = iterate(wake.clock_s);
        stats.end(refused);
    }
}

/// A future that resolves with the signal's name on SIGINT or SIGTERM.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = &'static str>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        }
    })
}

/// A future that resolves after `duration` (a tool's `--duration`), or
/// never without one: the other half of a tool's "stop on a signal or when
/// the time is up".
pub async fn run_for(duration: Option<std::time::Duration>) {
    match duration {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

/// Write a run's summary as one line of JSON to `path` (`--stats`).
pub fn write_stats(path: &Path, summary: &impl serde::Serialize) -> std::io::Result<()> {
    let json = serde_json::to_string(summary).unwrap_or_default();
    std::fs::write(path, json + "\n").map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("cannot write stats file {}: {e}", path.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop runs iterations on the schedule's grid and stops on the
    /// shutdown future (a timer here, a signal in use).
    #[tokio::test(flavor = "current_thread")]
    async fn the_tick_loop_iterates_until_shutdown() {
        let mut s = Schedule::new(Instant::now(), 50.0, 100.0, 1.0);
        let mut stats = RunStats::default();
        let mut clocks = Vec::new();
        let stop = async {
            tokio::time::sleep(std::time::Duration::from_millis(105)).await;
            "timer"
        };
        let why = tick_loop(&mut s, &mut stats, stop, |t| {
            clocks.push(t);
            0
        })
        .await;
        assert_eq!(why, "timer");
        assert!(clocks.len() >= 3 && clocks.len() <= 11, "{clocks:?}");
        assert!(clocks.windows(2).all(|w| w[1] > w[0]));
        assert!(clocks[0] >= 50.01, "{clocks:?}");
        assert_eq!(stats.lateness.ticks(), clocks.len() as u64);
    }
}
