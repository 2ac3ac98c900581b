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
use crate::command::{Payload, SUBSCRIPTIONS};
use crate::config::VehicleConfig;
use crate::live::host::{Host, Transport, Value};
use crate::live::inbox::DropLog;
use crate::live::schedule::Schedule;
use crate::live::stats::RunStats;
use crate::live::vehicle::{LiveVehicle, PubSet};

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

pub use crate::live::clock::{ModelClock, MAX_CLOCK_STEP};

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
    let mut config = crate::config::parse_vehicle(path, &imported.toml)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if config.obstacles.is_none() {
        config.obstacles = obstacles_from_moos(path, &text)?;
    }
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

/// The obstacles of a `.moos` file's `ProcessConfig = uFldObstacleSim`
/// block (docs/obstacles.md): its `obstacle_file` (relative to the file),
/// `sensor_range`, `post_points`, `refresh_interval`, and the hit range
/// from a uFldCollObDetect block's `collision_dist`. `None` without such a
/// block or without `obstacle_file`.
fn obstacles_from_moos(
    path: &Path,
    text: &str,
) -> anyhow::Result<Option<std::sync::Arc<crate::obstacle::Setup>>> {
    let Some(b) = crate::moos_import::obstacle_block(text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
    else {
        return Ok(None);
    };
    let setup = crate::config::obstacles::from_file(path, &b.file, b.settings())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(setup))
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

/// What a vehicle posts to the MOOSDB each iteration: the model's
/// postings (NAV_*, USM_* with their types) and `NODE_REPORT_LOCAL` when
/// configured; no `NODE_REPORT` JSON, `PID_OUTPUT` or `USM_TIME` (usim's
/// MQTT additions).
pub const MOOS_PUBLICATIONS: PubSet = PubSet {
    postings: true,
    pid_output: false,
    node_report: false,
    usm_time: false,
};

/// The host's [`Transport`] on the MOOSDB: one iteration's postings,
/// stamped with its MOOS time and sent as one packet; a number that is not
/// finite is never posted.
struct MoosOut<'a> {
    conn: &'a Conn,
    posts: Vec<(String, Result<f64, String>)>,
}

impl Transport for MoosOut<'_> {
    fn connected(&self) -> bool {
        self.conn.is_connected()
    }

    fn publish(&mut self, _vehicle: usize, var: &str, value: Value<'_>) -> bool {
        match value {
            Value::Number(v) if v.is_finite() => self.posts.push((var.to_string(), Ok(v))),
            Value::Number(_) => {}
            Value::Text(s) => self.posts.push((var.to_string(), Err(s.to_string()))),
        }
        true
    }
}

impl MoosOut<'_> {
    /// Post the batch (and `extra`, the appcast) stamped `clock`.
    fn send(&mut self, extra: Option<(&str, &str)>, clock: f64) {
        let posts = self
            .posts
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_ref().map(|x| *x).map_err(String::as_str)))
            .chain(extra.map(|(k, v)| (k, Err(v))));
        self.conn.notify_many(posts, clock);
        self.posts.clear();
    }
}

/// Register for the mail uSimMarine(V22) registers for: every subscribed
/// variable but the vehicle's own postings (`echoes`), the PID's mail only
/// with the embedded PID coupled, V22's only for V22, and the appcast's.
fn register_mail(conn: &Conn, cfg: &VehicleConfig, echoes: &[&str]) {
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
}

/// The app's state between iterations.
struct App<'a> {
    opts: &'a AppOptions,
    conn: &'a Conn,
    host: Host,
    caster: AppCaster,
    model_clock: ModelClock,
    drops: DropLog,
    summary: AppSummary,
    out: MoosOut<'a>,
}

impl App<'_> {
    /// The mail of one iteration at vehicle time `clock`: connection
    /// events counted, our own postings skipped, appcast requests to the
    /// caster, the rest into the vehicle's inbox (refusals to the appcast
    /// and the log).
    fn take_mail(&mut self, mail: &mut Vec<Incoming>, clock: f64) {
        let inbox = self.host.inbox(0);
        for ev in mail.drain(..) {
            let m = match ev {
                Incoming::Mail(m) => m,
                Incoming::Connected(_) => {
                    self.summary.connections += 1;
                    continue;
                }
                Incoming::Disconnected(_) => continue,
            };
            if m.source == self.opts.moos_name {
                // Our own posting coming back (a prefix such as NAV makes
                // NAV_X both posted and a V22 input): never a command.
                continue;
            }
            if self.caster.on_mail(&m.key, &m.sval, m.dval, clock) {
                continue;
            }
            let payload = match m.data_type {
                DataType::Double => Payload::Number(m.dval),
                _ => Payload::Text(m.sval.clone()),
            };
            if let Err(e) = inbox.accept_payload(&m.key, &payload) {
                let origin = format!("{} from {}", log_safe(&m.key, 80), log_safe(&m.source, 80));
                self.refused(&origin, &m.key, &payload.to_string(), &e.reason);
            }
        }
    }

    /// One refused message: an appcast run warning and a (rate-limited) log line.
    fn refused(&mut self, origin: &str, key: &str, payload: &str, reason: &str) {
        self.caster.run_warning(&format!(
            "mail {} refused: {}",
            log_safe(key, 80),
            log_safe(reason, 200)
        ));
        self.drops
            .dropped(origin, &log_safe(payload, 120), &log_safe(reason, 200));
    }

    /// One iteration at the MOOS time now: mail, step, postings.
    fn iterate(&mut self, mail: &mut Vec<Incoming>) -> f64 {
        let (clock, jump) = self.model_clock.next(self.conn.moos_time());
        if let Some(j) = jump {
            self.summary.clock_jumps += 1;
            warn!(
                "the MOOS clock jumped by {j:.3} s: not stepped across; the vehicle's clock \
                 catches up ({:.3} s behind)",
                -self.model_clock.offset()
            );
        }
        self.take_mail(mail, clock);
        self.host.iterate(clock, &mut self.out);
        for r in self.host.take_refusals() {
            self.refused(&r.var, &r.var, &r.payload, &r.reason);
        }
        self.summary.iterations += 1;
        if self.out.connected() {
            // Built and posted only when due (AppCastingMOOSApp::PostReport).
            let v = &self.host.vehicles()[0].vehicle;
            let cfg = &self.opts.config;
            let appcast = self.caster.post_report(self.summary.iterations, clock, || {
                report(cfg, v, v.is_enabled())
            });
            self.out
                .send(appcast.as_deref().map(|a| ("APPCAST", a)), clock);
        }
        clock
    }
}

/// Wait for `deadline` (or `stop`, checked at least every 100 ms), taking
/// the connection's mail into `mail` as it comes, then what is queued.
fn take_mail_until(conn: &Conn, deadline: Instant, stop: &AtomicBool, mail: &mut Vec<Incoming>) {
    loop {
        let now = Instant::now();
        if now >= deadline || stop.load(Ordering::SeqCst) {
            break;
        }
        if let Some(ev) = conn.recv_timeout((deadline - now).min(Duration::from_millis(100))) {
            mail.push(ev);
        }
    }
    while let Some(ev) = conn.try_recv() {
        mail.push(ev);
    }
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
    let start_clock = conn.moos_time();
    let live = LiveVehicle::new(cfg, start_clock, MOOS_PUBLICATIONS, String::new());
    register_mail(&conn, cfg, &live.echoes);
    let caster = AppCaster::new(
        &opts.app_name,
        &opts.community,
        opts.time_warp,
        cfg.params.variant,
        &opts.cast,
        &opts.config_warnings,
    );
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
    let mut app = App {
        opts: &opts,
        conn: &conn,
        host: Host::new(vec![live]),
        caster,
        model_clock: ModelClock::new(start_clock, 1.0 / cfg.app_tick, opts.time_warp),
        drops: DropLog::new(),
        summary: AppSummary::default(),
        out: MoosOut {
            conn: &conn,
            posts: Vec::new(),
        },
    };
    let mut schedule = Schedule::new(Instant::now(), start_clock, cfg.app_tick, opts.time_warp);
    let mut stats = RunStats::default();
    let mut mail = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        take_mail_until(&conn, schedule.next_deadline(), &stop, &mut mail);
        let wake = schedule.on_wake(Instant::now());
        stats.begin(&wake);
        let clock = app.iterate(&mut mail);
        stats.end(0);
        app.summary.moos_seconds = clock - start_clock;
    }
    let mut summary = app.summary;
    summary.skipped = stats.lateness.skipped();
    summary.bad_messages = app.host.counters().bad_messages;
    info!(
        "vehicle {} stopping after {} iterations ({} skipped)",
        cfg.name, summary.iterations, summary.skipped
    );
    Ok(summary)
}
