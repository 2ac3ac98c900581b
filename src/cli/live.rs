//! Live subcommands: `run`, `broker`, `up`, `post`, `watch` (docs/mqtt.md).
//!
//! The arguments here only mirror the flags; [`crate::mqtt`] does the work
//! on a current-thread tokio runtime (one OS thread per vehicle process).
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::live::nmea_out::NmeaOutOptions;
use crate::mqtt::bridge::{run_vehicle, LiveOptions, RunOptions};
use crate::mqtt::broker::{EmbeddedBroker, DEFAULT_BIND};
use crate::mqtt::endpoint::{credentials, BrokerUrl, DEFAULT_BROKER};
use crate::mqtt::fleet::{self, FleetEnd, FleetOptions};
use crate::mqtt::fleet_runtime::{run_fleet, FleetRunOptions};
use crate::mqtt::tools::{self, PostOptions, ToolConnection, WatchEnd, WatchMode, WatchOptions};
use crate::mqtt::topics::ON_CHANGE;
use crate::nmea::Identity;

/// Arguments of `usim run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Vehicle config (TOML, docs/formats.md §1).
    pub config: PathBuf,
    /// Vehicle name (topics, logs); default: `name` of the config.
    #[arg(long)]
    pub name: Option<String>,
    /// Broker, clock and outputs (shared with `usim fleet`).
    #[command(flatten)]
    pub live: LiveArgs,
}

/// The clock options of every live runtime (`usim run`, `usim fleet`,
/// `usim ros2`).
#[derive(Debug, clap::Args)]
pub struct ClockArgs {
    /// MOOS-style time warp: the clock and the iteration rate run W times faster.
    #[arg(long, value_name = "W", default_value_t = 1.0)]
    pub time_warp: f64,
    /// Clock value at start-up, s; default: Unix time now, like MOOSTime
    /// (`usim ros2 --mission`: the mission's start).
    #[arg(long, value_name = "S")]
    pub start_time: Option<f64>,
}

/// The options `usim run` and `usim fleet` share: the MQTT connection,
/// the clock, the outputs besides MQTT.
#[derive(Debug, clap::Args)]
pub struct LiveArgs {
    /// Broker URL (mqtt://HOST:PORT, or mqtts:// with the `tls` feature);
    /// default: mqtt.broker of the (first) config, else mqtt://127.0.0.1:1883.
    #[arg(long, value_name = "URL")]
    pub broker: Option<String>,
    /// Topic root; default: mqtt.topic_root of the config (a fleet's configs must agree).
    #[arg(long, value_name = "ROOT")]
    pub topic_root: Option<String>,
    /// Broker user name (password: mqtt.password of the (first) config or $USIM_MQTT_PASSWORD).
    #[arg(long)]
    pub username: Option<String>,
    /// CA bundle (PEM) for mqtts://; default: the system bundle.
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
    /// --time-warp W, --start-time S.
    #[command(flatten)]
    pub clock: ClockArgs,
    /// On exit, write tick statistics (lateness, iteration time, drops) to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Also publish MOOS's NODE_REPORT_LOCAL string each iteration
    /// (NAME=..,X=..,Y=..,SPD=..,HDG=..,DEP=..,LAT=..,LON=..,TIME=..,TYPE=..,LENGTH=..;
    /// TIME is the vehicle clock in Unix s, like USM_TIME). Same as
    /// `node_report_local = true` in the config.
    #[arg(long)]
    pub node_report_local: bool,
    /// --nmea-udp, --nmea-tcp, --nmea-broadcast.
    #[command(flatten)]
    pub nmea: NmeaOutArgs,
}

/// NMEA 0183 and AIS straight from the live vehicles (`usim run`, `usim
/// fleet`; docs/nmea.md, "In process"), as `usim nmea` sends them.
#[derive(Debug, clap::Args)]
pub struct NmeaOutArgs {
    /// Also send NMEA/AIS of the vehicles to this UDP address (repeatable), as `usim nmea --udp`.
    #[arg(long, value_name = "HOST:PORT")]
    pub nmea_udp: Vec<String>,
    /// Also serve NMEA/AIS to TCP clients on this address (port 0: any free port), as `usim nmea --tcp`.
    #[arg(long, value_name = "HOST:PORT")]
    pub nmea_tcp: Option<String>,
    /// Allow broadcast --nmea-udp destinations (off by default).
    #[arg(long)]
    pub nmea_broadcast: bool,
}

impl NmeaOutArgs {
    /// The in-process NMEA output of `vehicles` (none without --nmea-udp
    /// or --nmea-tcp): `usim nmea`'s defaults, each vehicle's AIS identity
    /// from its config, `own` the own ship.
    fn options(
        &self,
        vehicles: &[crate::config::VehicleConfig],
        own: Option<String>,
    ) -> anyhow::Result<Option<NmeaOutOptions>> {
        if self.nmea_udp.is_empty() && self.nmea_tcp.is_none() {
            return Ok(None);
        }
        Ok(Some(NmeaOutOptions {
            own,
            identities: vehicles.iter().map(Identity::of_config).collect(),
            engine: crate::nmea::Options {
                static_warmup_s: crate::live::nmea_out::STATIC_WARMUP_S,
                ..crate::nmea::Options::default()
            },
            udp: addrs("--nmea-udp", &self.nmea_udp)?,
            broadcast: self.nmea_broadcast,
            tcp: self
                .nmea_tcp
                .as_deref()
                .map(|s| addr("--nmea-tcp", s))
                .transpose()?,
            max_rate: crate::live::nmea_out::DEFAULT_MAX_RATE,
            flag_prefix: "nmea-",
        }))
    }
}

impl LiveArgs {
    /// The runtime's options: the flags, else `first`'s `[mqtt]` table;
    /// `topic_root` and `nmea` as the caller resolved them.
    fn options(
        &self,
        first: &crate::config::VehicleConfig,
        topic_root: String,
        nmea: Option<NmeaOutOptions>,
    ) -> anyhow::Result<LiveOptions> {
        let broker = BrokerUrl::parse(self.broker.as_deref().unwrap_or(&first.mqtt.broker))?;
        let user = self
            .username
            .clone()
            .or_else(|| first.mqtt.username.clone());
        Ok(LiveOptions {
            broker,
            topic_root,
            credentials: credentials(user, first.mqtt.password.clone()),
            ca_file: self.ca_file.clone(),
            time_warp: self.clock.time_warp,
            start_time_s: self.clock.start_time,
            stats_path: self.stats.clone(),
            nmea,
        })
    }
}

/// Arguments of `usim broker`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Limits (docs/security.md): at most 1000 connections in all; the last 100 of them\n\
only for this host's own clients (127.0.0.1, ::1), so local vehicles still connect when\n\
other hosts fill the rest; at most 64 connections per other address; a client has 5 s to\n\
send its MQTT CONNECT (at most 64 KiB) or is closed; client ids with `$`, `+`, `#`, `/` or\n\
control characters are refused (CONNACK \"identifier rejected\"); an empty client id (what\n\
mosquitto_pub/mosquitto_sub send) is given one (\"auto-...\") with a clean session, refused\n\
without; payloads up to 32 KiB. At a connection limit the connection idle longest (nothing\n\
sent since its CONNECT but pings) is closed to admit the new one; if none is idle, the new\n\
connection is closed at once. Both are logged (rate-limited)."
)]
pub struct BrokerArgs {
    /// Listen address (loopback by default; 0.0.0.0:1883 opens it to the network).
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_BIND)]
    pub bind: SocketAddr,
}

/// Arguments of `usim up`.
#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// Vehicle configs: one `usim run` process each.
    #[arg(required = true, value_name = "CONFIG")]
    pub configs: Vec<PathBuf>,
    /// Listen address of the embedded broker.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_BIND)]
    pub bind: SocketAddr,
    /// Use this broker (e.g. mosquitto) instead of starting the embedded one.
    #[arg(long, value_name = "URL")]
    pub broker: Option<String>,
    /// Time warp for every vehicle.
    #[arg(long, value_name = "W")]
    pub time_warp: Option<f64>,
    /// Also serve the live view in the browser (`usim view`) and print its URL.
    #[arg(long)]
    pub view: bool,
    /// Listen address of the view (with --view; port 0 picks a free port).
    #[arg(long, value_name = "ADDR", default_value = crate::view::server::DEFAULT_BIND)]
    pub view_bind: SocketAddr,
    /// Token the view requires (with --view). Default: a random one,
    /// printed in the URL.
    #[arg(long, value_name = "T", conflicts_with = "view_no_token")]
    pub view_token: Option<String>,
    /// No token for the view (loopback --view-bind only).
    #[arg(long)]
    pub view_no_token: bool,
    /// Run every vehicle in this process on one connection (the runtime of
    /// `usim fleet`) instead of one `usim run` process per vehicle: for
    /// large fleets. The configs must share one topic root.
    #[arg(long)]
    pub in_process: bool,
}

/// `[mqtt] publish` for every vehicle of `usim fleet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PublishArg {
    /// Every variable on its topic, NODE_REPORT and USM_TIME.
    All,
    /// NODE_REPORT and USM_TIME only (large fleets).
    Report,
}

/// `--spawn N --config C --spacing M` of the fleet commands (`usim fleet`,
/// `usim ros2`): N copies of one config on a square grid.
#[derive(Debug, clap::Args)]
pub struct SpawnArgs {
    /// Add N vehicles made from --config on a square grid (names: see below).
    #[arg(long, value_name = "N", requires = "config")]
    pub spawn: Option<usize>,
    /// The config --spawn copies.
    #[arg(long, value_name = "C", requires = "spawn")]
    pub config: Option<PathBuf>,
    /// Distance between spawned vehicles' start positions, m.
    #[arg(long, value_name = "M", default_value_t = 50.0)]
    pub spacing: f64,
}

impl SpawnArgs {
    /// The spawned vehicles (none without --spawn); an error names a bad
    /// --spacing or the config that does not load.
    pub fn vehicles(&self) -> anyhow::Result<Vec<crate::config::VehicleConfig>> {
        let (Some(n), Some(path)) = (self.spawn, &self.config) else {
            return Ok(Vec::new());
        };
        if !(self.spacing.is_finite() && self.spacing >= 0.0) {
            anyhow::bail!(
                "--spacing must be a number of metres >= 0, got {}",
                self.spacing
            );
        }
        let base = crate::config::load_vehicle(path)?;
        Ok(crate::mqtt::fleet_runtime::spawn(&base, n, self.spacing))
    }
}

/// Arguments of `usim fleet`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Each vehicle has the topics of `usim run` ({root}/{name}/...), so `usim post NAME` and\n\
`usim watch NAME` work unchanged; all of them share one connection, one tick schedule and\n\
one thread. The fleet's own topics are {root}/{fleet}/status (retained online/offline, the\n\
connection's last will) and {root}/{fleet}/ENCOUNTER (with --near-miss/--collision: one JSON\n\
object per event: t, event, a, b, range, cpa_time, cpa_range, cpa_bearing). On SIGINT/SIGTERM\n\
every vehicle's status becomes offline, then the fleet's.\n\n\
--spawn N --config C names the copies {name}-0001, {name}-0002, ... and puts their start\n\
positions on a square grid (ceil(sqrt(N)) columns, --spacing m apart, east then north)\n\
from the config's start position.\n\n\
Examples:\n  usim fleet configs/kayak.toml configs/uuv.toml\n  \
usim fleet --spawn 1000 --config configs/kayak.toml --publish report --stats fleet.json\n  \
usim fleet a.toml b.toml --near-miss 50 --collision 5   # then: usim watch fleet ENCOUNTER"
)]
pub struct FleetArgs {
    /// Vehicle configs (names must be unique).
    #[arg(value_name = "CONFIG")]
    pub configs: Vec<PathBuf>,
    /// --spawn N --config C --spacing M.
    #[command(flatten)]
    pub spawn: SpawnArgs,
    /// Fleet name: its status and ENCOUNTER topics and its MQTT client id.
    #[arg(long, value_name = "NAME", default_value = crate::mqtt::fleet_runtime::DEFAULT_FLEET_NAME)]
    pub fleet_name: String,
    /// Iterations per second of the whole fleet; default: app_tick of the first config.
    #[arg(long, value_name = "HZ")]
    pub app_tick: Option<f64>,
    /// Override [mqtt] publish of every vehicle (report: NODE_REPORT and USM_TIME only).
    #[arg(long, value_enum)]
    pub publish: Option<PublishArg>,
    /// Publish ENCOUNTER events for pairs closer than M metres (default: off).
    #[arg(long, value_name = "M")]
    pub near_miss: Option<f64>,
    /// Collision range, m (at most --near-miss; default: off).
    #[arg(long, value_name = "M")]
    pub collision: Option<f64>,
    /// The own ship of --nmea-udp/--nmea-tcp (NMEA sentences, !AIVDO); the others are AIS targets.
    #[arg(long, value_name = "NAME")]
    pub nmea_own: Option<String>,
    /// Broker, clock and outputs (shared with `usim run`).
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Broker and topic options shared by `post` and `watch`.
#[derive(Debug, clap::Args)]
pub struct ToolArgs {
    /// Broker URL.
    #[arg(long, value_name = "URL", default_value = DEFAULT_BROKER)]
    pub broker: String,
    /// Topic root.
    #[arg(long, value_name = "ROOT", default_value = "usim")]
    pub topic_root: String,
    /// Broker user name (password from $USIM_MQTT_PASSWORD).
    #[arg(long)]
    pub username: Option<String>,
    /// CA bundle (PEM) for mqtts://.
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
}

impl ToolArgs {
    pub(crate) fn connection(&self) -> anyhow::Result<ToolConnection> {
        Ok(ToolConnection {
            url: BrokerUrl::parse(&self.broker)?,
            topic_root: self.topic_root.clone(),
            credentials: credentials(self.username.clone(), None),
            ca_file: self.ca_file.clone(),
        })
    }
}

/// Arguments of `usim post`.
#[derive(Debug, clap::Args)]
pub struct PostArgs {
    /// Vehicle name.
    pub vehicle: String,
    /// Variable, e.g. DESIRED_THRUST, USM_RESET, DRIFT_VECTOR_ADD, SET.
    pub var: String,
    /// Value as text, e.g. 60 or "x=0, y=0, heading=90".
    #[arg(allow_hyphen_values = true)]
    pub value: String,
    #[command(flatten)]
    pub tool: ToolArgs,
    /// Skip the checks: send even if the vehicle would drop it (unknown
    /// variable, bad payload), and do not look for the vehicle's retained
    /// `status` (without this, a vehicle that is not online is warned about).
    #[arg(long)]
    pub no_check: bool,
    /// Set the MQTT retain flag: the broker stores the message and hands it
    /// to later subscribers. A running vehicle applies it like any message;
    /// a vehicle ignores only the stored copy it is handed when it
    /// (re)subscribes (so a retained USM_RESET does not replay at each
    /// reconnection).
    #[arg(long)]
    pub retain: bool,
    /// Give up after S seconds.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub timeout: f64,
}

/// Arguments of `usim watch`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Most variables are posted every iteration (V22: the pose every second one).\n\
Posted only when they change: USM_DRIFT_SUMMARY, USM_FSUMMARY (classic), USM_RESET_COUNT;\n\
--once waits for those without a time limit (Ctrl-C stops, --timeout S gives up).\n\
`status` is retained: it arrives at once.\n\n\
Times: NODE_REPORT's `t` is the mission time (s since the vehicle started, as in the CSV);\n\
USM_TIME is the vehicle clock in Unix seconds (MOOS time).\n\n\
Examples:\n  usim watch kayak\n  usim watch kayak NAV_X NAV_Y --once\n  usim watch kayak USM_RESET_COUNT --once   # waits for the next USM_RESET"
)]
pub struct WatchArgs {
    /// Vehicle name.
    pub vehicle: String,
    /// Variables to show (default: every topic of the vehicle).
    pub vars: Vec<String>,
    #[command(flatten)]
    pub tool: ToolArgs,
    /// Print each variable's current value once (`VAR value` lines) and exit;
    /// gives up after 10 s unless a variable posted only on change is asked for.
    #[arg(long)]
    pub once: bool,
    /// Exit after N messages.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Plain `VAR value` lines as messages arrive, even on a terminal.
    #[arg(long)]
    pub lines: bool,
    /// Give up after S seconds (default 10 with --once, else none).
    #[arg(long, value_name = "S")]
    pub timeout: Option<f64>,
}

/// Each of `list` as a socket address (`what` names the flag in errors).
pub(crate) fn addrs(what: &str, list: &[String]) -> anyhow::Result<Vec<SocketAddr>> {
    list.iter().map(|s| addr(what, s)).collect()
}

pub(crate) fn addr(what: &str, s: &str) -> anyhow::Result<SocketAddr> {
    s.to_socket_addrs()
        .with_context(|| format!("{what} {s:?}: expected HOST:PORT"))?
        .next()
        .with_context(|| format!("{what} {s:?}: no address"))
}

/// An optional `--duration`-style flag `what` checked by [`seconds`].
pub(crate) fn optional_seconds(s: Option<f64>, what: &str) -> anyhow::Result<Option<Duration>> {
    s.map(|s| seconds(s, what)).transpose()
}

/// The current-thread tokio runtime every live subcommand runs on.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")
}

/// `s` seconds (> 0) as a duration; an error names the flag `what`.
pub(crate) fn seconds(s: f64, what: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| format!("{what} must be a positive number of seconds, got {s}"))
}

/// Run `usim run`.
pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let mut config = crate::config::load_vehicle(&a.config)?;
    match a.name {
        Some(name) => config.name = name,
        None => {
            let text = std::fs::read_to_string(&a.config).unwrap_or_default();
            if let Some(note) = crate::config::unnamed_notice(&a.config, &text) {
                eprintln!("usim: warning: {note}");
            }
        }
    }
    let live = a.live;
    config.node_report_local |= live.node_report_local;
    let nmea = live
        .nmea
        .options(std::slice::from_ref(&config), Some(config.name.clone()))?;
    let topic_root = (live.topic_root.clone()).unwrap_or_else(|| config.mqtt.topic_root.clone());
    let opts = RunOptions {
        live: live.options(&config, topic_root, nmea)?,
        config,
    };
    runtime()?.block_on(run_vehicle(opts))?;
    Ok(ExitCode::SUCCESS)
}

/// Run `usim broker`.
pub fn broker(a: BrokerArgs) -> anyhow::Result<ExitCode> {
    if !a.bind.ip().is_loopback() {
        tracing::warn!(
            "listening on {}: anyone who can reach it can drive the vehicles \
             (no authentication; use mosquitto with an ACL for that)",
            a.bind
        );
    }
    let broker = EmbeddedBroker::start(a.bind)?;
    tracing::info!(
        "embedded MQTT broker listening on {} (Ctrl-C stops it)",
        broker.url()
    );
    runtime()?.block_on(async {
        let shutdown = crate::mqtt::bridge::shutdown_signal()?;
        tokio::pin!(shutdown);
        let mut check = tokio::time::interval(Duration::from_millis(500));
        loop {
            tokio::select! {
                why = &mut shutdown => {
                    tracing::info!("{why}: broker stopped");
                    return Ok(ExitCode::SUCCESS);
                }
                _ = check.tick() => {
                    if !broker.is_running() {
                        anyhow::bail!("the embedded broker stopped (see the log above)");
                    }
                }
            }
        }
    })
}

/// Run `usim up`.
pub fn up(a: UpArgs) -> anyhow::Result<ExitCode> {
    let mut run_args = Vec::new();
    if let Some(w) = a.time_warp {
        run_args.push("--time-warp".to_string());
        run_args.push(w.to_string());
    }
    let opts = FleetOptions {
        configs: a.configs,
        bind: a.bind,
        external: a.broker.as_deref().map(BrokerUrl::parse).transpose()?,
        run_args,
        in_process: a.in_process,
        time_warp: a.time_warp.unwrap_or(1.0),
    };
    let view = if a.view {
        // The view follows the topic root of the first config.
        let first = crate::config::load_vehicle(&opts.configs[0])?;
        let url = match &opts.external {
            Some(u) => u.clone(),
            None => BrokerUrl::parse(&format!("mqtt://{}", loopback_of(opts.bind)))?,
        };
        let token = crate::view::server::choose_token(
            &a.view_bind,
            a.view_token,
            a.view_no_token,
            "--view-no-token",
        )?;
        crate::view::server::warn_if_open(&a.view_bind, token.as_deref());
        Some(crate::view::server::ViewOptions::new(
            ToolConnection {
                url,
                topic_root: first.mqtt.topic_root.clone(),
                credentials: None,
                ca_file: None,
            },
            a.view_bind,
            token,
        ))
    } else {
        None
    };
    let end = runtime()?.block_on(async {
        if let Some(v) = view {
            let server = crate::view::server::ViewServer::bind(v).await?;
            println!("usim view: open {}", server.url());
            tokio::spawn(async move {
                if let Err(e) = server.run(std::future::pending()).await {
                    tracing::error!("view: {e}");
                }
            });
        }
        fleet::up(&opts).await.map_err(anyhow::Error::from)
    })?;
    match end {
        FleetEnd::Stopped | FleetEnd::ChildrenExited(true) => Ok(ExitCode::SUCCESS),
        FleetEnd::ChildrenExited(false) => anyhow::bail!("some vehicles failed (see their logs)"),
    }
}

/// Run `usim fleet`.
pub fn fleet(a: FleetArgs) -> anyhow::Result<ExitCode> {
    let mut vehicles = Vec::new();
    for path in &a.configs {
        vehicles.push(crate::config::load_vehicle(path)?);
    }
    vehicles.extend(a.spawn.vehicles()?);
    if vehicles.is_empty() {
        anyhow::bail!(
            "no vehicles: give configs (usim fleet A.toml B.toml) or --spawn N --config C"
        );
    }
    let live = a.live;
    for v in &mut vehicles {
        v.node_report_local |= live.node_report_local;
        match a.publish {
            Some(PublishArg::All) => v.mqtt.publish = crate::config::PublishMode::All,
            Some(PublishArg::Report) => v.mqtt.publish = crate::config::PublishMode::Report,
            None => {}
        }
    }
    if let Some(own) = &a.nmea_own {
        if !vehicles.iter().any(|v| &v.name == own) {
            anyhow::bail!("--nmea-own {own:?}: no vehicle of the fleet has that name");
        }
    }
    let topic_root = match &live.topic_root {
        Some(r) => r.clone(),
        None => one_topic_root(&vehicles, &a.configs)?,
    };
    let nmea = live.nmea.options(&vehicles, a.nmea_own)?;
    let opts = FleetRunOptions {
        app_tick: a.app_tick.unwrap_or(vehicles[0].app_tick),
        live: live.options(&vehicles[0], topic_root, nmea)?,
        vehicles,
        fleet_name: a.fleet_name,
        encounters: encounter_ranges(a.near_miss, a.collision)?,
    };
    warn_other_tick_rates(&opts);
    runtime()?.block_on(run_fleet(opts))?;
    Ok(ExitCode::SUCCESS)
}

/// The topic root all `vehicles` share (one connection, one wildcard set).
pub(crate) fn one_topic_root(
    vehicles: &[crate::config::VehicleConfig],
    paths: &[PathBuf],
) -> anyhow::Result<String> {
    let root = vehicles[0].mqtt.topic_root.clone();
    if let Some((i, v)) = vehicles
        .iter()
        .enumerate()
        .find(|(_, v)| v.mqtt.topic_root != root)
    {
        let path = paths.get(i).map(|p| p.display().to_string());
        anyhow::bail!(
            "{}: [mqtt] topic_root {:?} differs from the first vehicle's {:?}: one fleet \
             has one topic root (give --topic-root, or run separate fleets)",
            path.unwrap_or_else(|| format!("vehicle {}", v.name)),
            v.mqtt.topic_root,
            root
        );
    }
    Ok(root)
}

fn warn_other_tick_rates(o: &FleetRunOptions) {
    if let Some(v) = o.vehicles.iter().find(|v| v.app_tick != o.app_tick) {
        tracing::warn!(
            "vehicle {} has app_tick {} Hz; the fleet runs every vehicle at {} Hz",
            v.name,
            v.app_tick,
            o.app_tick
        );
    }
}

/// `--near-miss` / `--collision` as the mission's `near_miss` /
/// `collision`: one alone sets both ranges' meaning as in a mission file.
fn encounter_ranges(
    near_miss: Option<f64>,
    collision: Option<f64>,
) -> anyhow::Result<Option<crate::mission::EncounterRanges>> {
    let positive = |v: f64, flag: &str| -> anyhow::Result<f64> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            anyhow::bail!("{flag} must be a positive number of metres, got {v}")
        }
    };
    use crate::mission::EncounterRanges;
    Ok(match (near_miss, collision) {
        (None, None) => None,
        (Some(n), None) => Some(EncounterRanges {
            near_miss: positive(n, "--near-miss")?,
            collision: 0.0,
        }),
        (None, Some(c)) => {
            let c = positive(c, "--collision")?;
            Some(EncounterRanges {
                near_miss: c,
                collision: c,
            })
        }
        (Some(n), Some(c)) => {
            let (n, c) = (positive(n, "--near-miss")?, positive(c, "--collision")?);
            if c > n {
                anyhow::bail!("--collision {c} is larger than --near-miss {n}");
            }
            Some(EncounterRanges {
                near_miss: n,
                collision: c,
            })
        }
    })
}

/// The address to reach a listener bound to `bind` from this machine.
fn loopback_of(bind: SocketAddr) -> SocketAddr {
    if bind.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], bind.port()))
    } else {
        bind
    }
}

/// Run `usim post`.
pub fn post(a: PostArgs) -> anyhow::Result<ExitCode> {
    let opts = PostOptions {
        conn: a.tool.connection()?,
        vehicle: a.vehicle,
        var: a.var,
        value: a.value,
        check: !a.no_check,
        retain: a.retain,
        timeout: seconds(a.timeout, "--timeout")?,
    };
    if let Some(warning) = runtime()?.block_on(tools::post(&opts))? {
        eprintln!("usim: warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Run `usim watch`.
pub fn watch(a: WatchArgs) -> anyhow::Result<ExitCode> {
    let mode = if a.once {
        WatchMode::Once
    } else if a.lines || a.count.is_some() || !std::io::IsTerminal::is_terminal(&std::io::stdout())
    {
        WatchMode::Lines
    } else {
        WatchMode::Table
    };
    let on_change: Vec<&str> = a
        .vars
        .iter()
        .map(String::as_str)
        .filter(|v| ON_CHANGE.contains(v))
        .collect();
    let timeout = match (a.timeout, a.once) {
        (Some(s), _) => Some(seconds(s, "--timeout")?),
        (None, true) if !on_change.is_empty() => {
            eprintln!(
                "usim: {} posted only when it changes: waiting for it (Ctrl-C stops, --timeout S gives up)",
                on_change.join(", ") + if on_change.len() > 1 { " are" } else { " is" }
            );
            None
        }
        (None, true) => Some(Duration::from_secs(10)),
        (None, false) => None,
    };
    let opts = WatchOptions {
        conn: a.tool.connection()?,
        vehicle: a.vehicle,
        vars: a.vars,
        mode,
        count: a.count,
        timeout,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match runtime()?.block_on(tools::watch(&opts, &mut out))? {
        WatchEnd::Done | WatchEnd::Interrupted => Ok(ExitCode::SUCCESS),
        WatchEnd::TimedOut { received, missing } if !missing.is_empty() => anyhow::bail!(
            "no {} from vehicle {:?} on {} within {:.1} s ({received} other messages): is it \
             running with topic root {:?}? Some variables are posted only when they change \
             ({}) or only in some modes",
            missing.join(", "),
            opts.vehicle,
            opts.conn.url,
            timeout.map(|d| d.as_secs_f64()).unwrap_or(0.0),
            opts.conn.topic_root,
            ON_CHANGE.join(", ")
        ),
        WatchEnd::TimedOut { received: 0, .. } => anyhow::bail!(
            "nothing from vehicle {:?} on {} within {:.1} s: is it running (usim run CONFIG) \
             with topic root {:?}?",
            opts.vehicle,
            opts.conn.url,
            timeout.map(|d| d.as_secs_f64()).unwrap_or(0.0),
            opts.conn.topic_root
        ),
        WatchEnd::TimedOut { received, .. } => anyhow::bail!(
            "timed out after {received} messages from vehicle {:?}",
            opts.vehicle
        ),
    }
}
