//! The live host: the vehicle loop of every live transport written once
//! (MQTT `usim run` and `usim fleet`, MOOS `usim moos`, ROS 2), so each
//! transport is a thin adapter that owns only its wire protocol and
//! connection handling (docs/architecture.md, "One live host").
//!
//! * [`host`]: the core ([`host::Host`]: mail, step, publication set per
//!   iteration) and the adapter interface ([`host::Transport`]), sans-IO.
//! * [`vehicle`]: one live vehicle: model, inbox, publication set
//!   (`NAV_*`, `USM_*`, `NODE_REPORT`, `NODE_REPORT_LOCAL`), echo variables.
//! * [`inbox`]: parsing received mail into the vehicle's mailbox, the
//!   rate-limited drop log.
//! * [`mailbox`]: mail between two iterations, bounded, with
//!   latest-value-wins coalescing of plain setpoints (sans-IO).
//! * [`schedule`]: absolute tick deadlines, the real or warped vehicle
//!   clock and tick lateness statistics (sans-IO: instants are arguments).
//! * [`clock`]: Unix time, the vehicle clock over a corrected outside clock,
//!   the lock-step clock (sans-IO).
//! * [`claim`]: the live-name claim rule (sans-IO; each transport carries
//!   its messages).
//! * [`nmea_out`]: NMEA 0183 and AIS out (engine, UDP, TCP server) of `usim
//!   nmea` and of a live run's `--nmea-udp`/`--nmea-tcp`, in process.
//! * [`node_report`]: MOOS's `NODE_REPORT_LOCAL` string (sans-IO).
//! * [`stats`]: iteration timing and refused publications (`--stats`, `-v`).
//! * [`run`]: the deadline loop on tokio, signals, `--stats` files.
pub mod claim;
pub mod clock;
pub mod host;
pub mod inbox;
pub mod mailbox;
pub mod nmea_out;
pub mod node_report;
pub mod run;
pub mod schedule;
pub mod stats;
pub mod vehicle;

/// Check a live run's timing options: `app_tick` (iterations per second;
/// `what` names it in the error), the time warp (> 0) and the start time
/// (a finite clock value, s).
pub fn check_timing(
    what: &str,
    app_tick: f64,
    time_warp: f64,
    start_time_s: Option<f64>,
) -> Result<(), String> {
    crate::config::check_time_warp("--time-warp", time_warp)?;
    if let Some(s) = start_time_s {
        crate::config::check_start_time("--start-time", s)?;
    }
    if !(app_tick.is_finite() && app_tick > 0.0) {
        return Err(format!(
            "{what} must be a positive number of iterations per second, got {app_tick}"
        ));
    }
    Ok(())
}
