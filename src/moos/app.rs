//! `usim moos`: one usim vehicle as a MOOS app, in place of uSimMarine.
//!
//! Each iteration (AppTick per MOOS second, as a MOOSApp under
//! `MOOSTimeWarp`): the mail since the last iteration is parsed as
//! uSimMarine reads it ([`crate::command::parse`]: doubles and strings as
//! their MOOS types), the model steps to the MOOS time, and the
//! iteration's postings (NAV_*, USM_*, with their double/string types;
//! `NODE_REPORT_LOCAL` when configured) go to the MOOSDB in one packet.
//! The configuration comes from the mission's `.moos` file through
//! [`crate::moos_import`], the same mapping as `usim import-moos`.
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::appcast::{report, AppCaster, CastSettings};
use super::codec::DataType;
use super::conn::{Conn, ConnOptions, Incoming};
use super::log_safe;
use super::mission::{read_globals, MissionGlobals};
use crate::command::{parse, Payload, SUBSCRIPTIONS};
use crate::config::VehicleConfig;
use crate::live::node_report::{node_report_local, Platform};
use crate::live::vehicle::echo_vars;
use crate::model::{PubValue, Vehicle};

/// The variables uSimMarineV22 reads only with its embedded PID coupled.
const PID_MAIL: &[&str] = &[
    "DESIRED_HEADING",
    "DESIRED_SPEED",
    "DESIRED_DEPTH",
    "SPEED_FACTOR",
    "MOOS_MANUAL_OVERRIDE",
    "MOOS_MANUAL_OVERIDE",
];

/// The variables only uSimMarineV22 registers for (the classic
/// uSimMarine's `registerVariables` lacks them).
const V22_MAIL: &[&str] = &[
    "NAV_X",
    "NAV_Y",
    "NAV_HEADING",
    "USM_TURN_RADIUS",
    "USM_RESET_NAV",
    "WIND_CONDITIONS",
];

/// Longest step of the vehicle's clock followed at once, real s (× the
/// warp in MOOS s): a longer (or backward) change of the MOOS clock is a
/// clock correction, not time that passed.
pub const MAX_CLOCK_STEP: f64 = 10.0;

/// The vehicle's clock over the MOOS clock: equal to it, except that a
/// jump of the MOOS clock (backwards, or forward by more than
/// [`MAX_CLOCK_STEP`]: a skew correction after the DB host's clock was
/// set) is not stepped across. The vehicle then advances one nominal
/// iteration, and catches up with the MOOS clock by at most one more
/// iteration's length per iteration (never backwards, never a jump).
#[derive(Debug, Clone)]
pub struct ModelClock {
    last: f64,
    offset: f64,
    nominal: f64,
    max_step: f64,
}

impl ModelClock {
    /// A clock at MOOS time `start` (s), iterations of `nominal` MOOS s,
    /// under time warp `warp`.
    pub fn new(start: f64, nominal: f64, warp: f64) -> ModelClock {
        ModelClock {
            last: start,
            offset: 0.0,
            nominal,
            max_step: (MAX_CLOCK_STEP * warp).max(10.0 * nominal),
        }
    }

    /// The vehicle's time for MOOS time `moos` (s), and the MOOS clock's
    /// jump when one was not followed.
    pub fn next(&mut self, moos: f64) -> (f64, Option<f64>) {
        let d = moos + self.offset - self.last;
        if !(0.0..=self.max_step).contains(&d) {
            // (NaN too) not followed: one nominal iteration instead.
            self.last += self.nominal;
            if moos.is_finite() {
                self.offset = self.last - moos;
            }
            return (self.last, Some(d));
        }
        if self.offset != 0.0 {
            // Catch up by at most one iteration's length.
            let c = self.offset.clamp(-self.nominal, self.nominal);
            self.offset -= c;
        }
        let t = moos + self.offset;
        let t = if t.is_finite() {
            t.max(self.last)
        } else {
            self.last + self.nominal
        };
        self.last = t;
        (t, None)
    }

    /// Vehicle time minus MOOS time, s (0 but after a jump).
    pub fn offset(&self) -> f64 {
        self.offset
    }
}

/// A vehicle and its community, read from a `.moos` file.
#[derive(Debug, Clone)]
pub struct MoosVehicle {
    /// The vehicle config (name = `Community`).
    pub config: VehicleConfig,
    /// Mission-wide keys.
    pub globals: MissionGlobals,
    /// The block read (`uSimMarine`, `uSimMarineV22`, or the alias's).
    pub process: String,
    /// Lines of the block usim does not carry over, as `usim import-moos`
    /// reports them (`line N: key ...: reason`).
    pub warnings: Vec<String>,
    /// Which block was read and why, when the alias did not name one.
    pub note: Option<String>,
    /// The block's own lines (key lower-cased, value), for the appcast's
    /// framework settings (`deprecated_ok`, `term_report_interval`).
    pub block: Vec<(String, String)>,
}

/// Read the vehicle of `path` as uSimMarine does: the block named by the
/// alias (pAntler's `~ NAME`) when the file has one, else the block of
/// `process` (`uSimMarine` / `uSimMarineV22`), else the first of those
/// two blocks. `process` also says the model of an aliased block (default:
/// the alias's `uSimMarine…` prefix, else V22). Only that block and the
/// mission-wide keys are read: another app's (`pMarinePIDV22`) never.
pub fn load_mission(
    path: &Path,
    alias: Option<&str>,
    process: Option<&str>,
) -> anyhow::Result<MoosVehicle> {
    let text = crate::config::read_capped(path, 4 * 1024 * 1024)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let globals = read_globals(&text);
    let names = crate::moos_import::block_names(&text);
    let has = |n: &str| names.iter().any(|b| b.eq_ignore_ascii_case(n));
    let v22_of = |name: &str| {
        let l = name.to_ascii_lowercase();
        if l.starts_with("usimmarinev22") {
            Some(true)
        } else if l.starts_with("usimmarine") {
            Some(false)
        } else {
            None
        }
    };
    let mut note = None;
    let (block, v22) = match alias.filter(|a| has(a)) {
        Some(a) => (
            Some(a),
            Some(process.and_then(v22_of).or(v22_of(a)).unwrap_or(true)),
        ),
        None => {
            if let Some(a) = alias {
                note = Some(format!(
                    "no `ProcessConfig = {}` block for the alias: reading {}",
                    log_safe(a, 80),
                    process.map_or(
                        "the first uSimMarine or uSimMarineV22 block".to_string(),
                        |p| { format!("`ProcessConfig = {p}`") }
                    )
                ));
            }
            (process, None)
        }
    };
    let imported = crate::moos_import::import_with(
        &text,
        &crate::moos_import::ImportOptions {
            block,
            v22,
            pid_from: None,
        },
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let config = crate::config::parse_vehicle(path, &imported.toml)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut warnings: Vec<String> = imported.unmapped.iter().map(|u| u.to_string()).collect();
    warnings.extend(globals.warnings.iter().cloned());
    warnings.extend(config.warnings.iter().cloned());
    let block = crate::moos_import::block_lines(&text, &imported.process);
    Ok(MoosVehicle {
        config,
        globals,
        process: imported.process,
        warnings,
        note,
        block,
    })
}

/// Everything a running app needs.
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// The vehicle.
    pub config: VehicleConfig,
    /// Our MOOS name (pAntler's alias; default the process name).
    pub moos_name: String,
    /// DB host.
    pub host: String,
    /// DB port.
    pub port: u16,
    /// `MOOSTimeWarp`.
    pub time_warp: f64,
    /// The app's name for appcasts (`GetAppName()`: the alias, else the
    /// process name).
    pub app_name: String,
    /// The community (`Community`; default the vehicle's name).
    pub community: String,
    /// Configuration warnings, shown in the appcast.
    pub config_warnings: Vec<String>,
    /// The AppCasting framework's block settings.
    pub cast: CastSettings,
}

impl AppOptions {
    /// The options of a vehicle read from a mission, under `moos_name`
    /// (the alias) at `host:port` and `time_warp`.
    pub fn from_mission(
        v: MoosVehicle,
        moos_name: String,
        host: String,
        port: u16,
        time_warp: f64,
    ) -> AppOptions {
        let (cast, mut config_warnings) = CastSettings::from_block(&v.block);
        config_warnings.splice(0..0, v.warnings.iter().cloned());
        AppOptions {
            app_name: moos_name.clone(),
            community: v
                .globals
                .community
                .clone()
                .unwrap_or_else(|| v.config.name.clone()),
            moos_name,
            host,
            port,
            time_warp,
            config_warnings,
            cast,
            config: v.config,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct AppSummary {
    /// Iterations run.
    pub iterations: u64,
    /// Deadlines skipped because an iteration was more than a period late.
    pub skipped: u64,
    /// MOOS seconds the run covered.
    pub moos_seconds: f64,
    /// Mail messages that did not parse or were refused by the model.
    pub bad_messages: u64,
    /// Connections made.
    pub connections: u64,
    /// Jumps of the MOOS clock not stepped across ([`ModelClock`]).
    pub clock_jumps: u64,
}

/// Run until `stop` is set.
pub fn run_app(opts: AppOptions, stop: Arc<AtomicBool>) -> anyhow::Result<AppSummary> {
    let cfg = &opts.config;
    anyhow::ensure!(
        opts.time_warp.is_finite() && opts.time_warp > 0.0,
        "MOOSTimeWarp must be a positive number, got {}",
        opts.time_warp
    );
    anyhow::ensure!(
        cfg.app_tick.is_finite() && cfg.app_tick > 0.0,
        "AppTick must be a positive number, got {}",
        cfg.app_tick
    );
    let conn = Conn::start(ConnOptions {
        host: opts.host.clone(),
        port: opts.port,
        name: opts.moos_name.clone(),
        time_warp: opts.time_warp,
    });
    let echoes = echo_vars(cfg);
    // uSimMarineV22 registers for the PID's mail only when its own block
    // couples the PID (USM_MOOSApp::registerVariables): in a mission where
    // pMarinePIDV22 takes the helm's DESIRED_HEADING, the simulator does not.
    let pid = cfg.params.pid.is_some();
    let v22 = cfg.params.variant == crate::model::ModelVariant::V22;
    for (var, _, _) in SUBSCRIPTIONS {
        if !echoes.contains(var)
            && (pid || !PID_MAIL.contains(var))
            && (v22 || !V22_MAIL.contains(var))
        {
            conn.register(var, 0.0);
        }
    }
    for var in AppCaster::REGISTERS {
        conn.register(var, 0.0);
    }
    let platform = cfg.node_report_local.then(|| Platform {
        name: cfg.name.clone(),
        kind: cfg.platform_type.clone(),
        length_m: cfg.platform_length,
    });
    let start_clock = conn.moos_time();
    let mut model_clock = ModelClock::new(start_clock, 1.0 / cfg.app_tick, opts.time_warp);
    let mut vehicle = Vehicle::new(cfg, start_clock);
    let mut caster = AppCaster::new(
        &opts.app_name,
        &opts.community,
        opts.time_warp,
        cfg.params.variant,
        &opts.cast,
        &opts.config_warnings,
    );
    let period = Duration::from_secs_f64(1.0 / (cfg.app_tick * opts.time_warp));
    info!(
        "vehicle {} as MOOS app {} ({}): AppTick {} Hz, MOOSTimeWarp {}, MOOSDB {}:{}",
        cfg.name,
        log_safe(&opts.moos_name, 80),
        format!("{:?}", cfg.params.variant),
        cfg.app_tick,
        opts.time_warp,
        opts.host,
        opts.port
    );
    let mut summary = AppSummary::default();
    let origin = Instant::now();
    let mut k: u64 = 0;
    let mut bad_logged = Instant::now() - Duration::from_secs(10);
    let mut bad_unlogged = 0u64;
    let mut mail = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        k += 1;
        let mut deadline = origin + period.mul_f64(k as f64);
        let now = Instant::now();
        if now > deadline + period {
            // More than a period late: skip to the next deadline ahead.
            let behind = (now - deadline).as_secs_f64() / period.as_secs_f64();
            let skip = behind.floor() as u64;
            summary.skipped += skip;
            k += skip;
            deadline = origin + period.mul_f64(k as f64);
        }
        // Wait for the deadline, taking mail as it comes.
        loop {
            let now = Instant::now();
            if now >= deadline || stop.load(Ordering::SeqCst) {
                break;
            }
            match conn.recv_timeout((deadline - now).min(Duration::from_millis(100))) {
                Some(ev) => mail.push(ev),
                None => continue,
            }
        }
        while let Some(ev) = conn.try_recv() {
            mail.push(ev);
        }
        let (clock, jump) = model_clock.next(conn.moos_time());
        if let Some(j) = jump {
            summary.clock_jumps += 1;
            warn!(
                "the MOOS clock jumped by {j:.3} s: not stepped across; the vehicle's clock \
                 catches up ({:.3} s behind)",
                -model_clock.offset()
            );
        }
        for ev in mail.drain(..) {
            let m = match ev {
                Incoming::Mail(m) => m,
                Incoming::Connected(_) => {
                    summary.connections += 1;
                    continue;
                }
                Incoming::Disconnected(_) => continue,
            };
            if m.source == opts.moos_name {
                // Our own posting coming back (a prefix such as NAV makes
                // NAV_X both posted and a V22 input): never a command.
                continue;
            }
            if caster.on_mail(&m.key, &m.sval, m.dval, clock) {
                continue;
            }
            let payload = match m.data_type {
                DataType::Double => Payload::Number(m.dval),
                _ => Payload::Text(m.sval.clone()),
            };
            let r = parse(&m.key, &payload).and_then(|cmd| vehicle.handle_command(cmd, clock));
            if let Err(e) = r {
                caster.run_warning(&format!(
                    "mail {} refused: {}",
                    log_safe(&m.key, 80),
                    log_safe(&e.reason, 200)
                ));
                summary.bad_messages += 1;
                bad_unlogged += 1;
                if bad_logged.elapsed() >= Duration::from_secs(1) {
                    bad_logged = Instant::now();
                    warn!(
                        "mail {} = {} from {} refused: {} ({} refused since the last line)",
                        log_safe(&m.key, 80),
                        log_safe(&payload.to_string(), 120),
                        log_safe(&m.source, 80),
                        log_safe(&e.reason, 200),
                        std::mem::take(&mut bad_unlogged)
                    );
                }
            }
        }
        vehicle.step(clock);
        summary.iterations += 1;
        if conn.is_connected() {
            // Built and posted only when due (AppCastingMOOSApp::PostReport).
            let appcast = caster.post_report(summary.iterations, clock, || {
                report(cfg, &vehicle, vehicle.is_enabled())
            });
            let pubs = vehicle.publications();
            let report = platform
                .as_ref()
                .map(|p| node_report_local(p, &vehicle.snapshot(), clock));
            // Stamped with the iteration's MOOS time (the state's time);
            // a value that is not finite is never posted.
            conn.notify_many(
                pubs.iter()
                    .filter_map(|p| match &p.value {
                        PubValue::Number(v) => v.is_finite().then_some((p.var.as_str(), Ok(*v))),
                        PubValue::Text(s) => Some((p.var.as_str(), Err(s.as_str()))),
                    })
                    .chain(report.as_deref().map(|r| ("NODE_REPORT_LOCAL", Err(r))))
                    .chain(appcast.as_deref().map(|a| ("APPCAST", Err(a)))),
                clock,
            );
        }
        summary.moos_seconds = clock - start_clock;
    }
    info!(
        "vehicle {} stopping after {} iterations ({} skipped)",
        cfg.name, summary.iterations, summary.skipped
    );
    Ok(summary)
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
        // Back to the MOOS clock it follows again, catching up 0.25 s a step.
        let (t0, _) = c.next(101.75 + 0.25);
        let (t1, _) = c.next(101.75 + 0.5);
        assert!(t1 - t0 >= 0.25 && t1 - t0 <= 0.5);
        // Real stalls (seconds) are time that passed: followed.
        let mut c = ModelClock::new(0.0, 0.25, 10.0);
        assert_eq!(c.next(60.0), (60.0, None));
    }
}
