//! Live subcommands: `run`, `broker`, `up`, `post`, `watch` (docs/mqtt.md).
//!
//! The arguments here only mirror the flags; [`crate::mqtt`] does the work
//! on a current-thread tokio runtime (one OS thread per vehicle process).
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::mqtt::bridge::{run_vehicle, RunOptions};
use crate::mqtt::broker::{EmbeddedBroker, DEFAULT_BIND};
use crate::mqtt::endpoint::{credentials, BrokerUrl, DEFAULT_BROKER};
use crate::mqtt::fleet::{self, FleetEnd, FleetOptions};
use crate::mqtt::tools::{self, PostOptions, ToolConnection, WatchEnd, WatchMode, WatchOptions};

/// Arguments of `usim run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Vehicle config (TOML, formats.md §1).
    pub config: PathBuf,
    /// Broker URL (mqtt://HOST:PORT, or mqtts:// with the `tls` feature);
    /// default: mqtt.broker of the config, else mqtt://127.0.0.1:1883.
    #[arg(long, value_name = "URL")]
    pub broker: Option<String>,
    /// Vehicle name (topics, logs); default: `name` of the config.
    #[arg(long)]
    pub name: Option<String>,
    /// MOOS-style time warp: the clock and the iteration rate run W times faster.
    #[arg(long, value_name = "W", default_value_t = 1.0)]
    pub time_warp: f64,
    /// Topic root; default: mqtt.topic_root of the config.
    #[arg(long, value_name = "ROOT")]
    pub topic_root: Option<String>,
    /// Broker user name (password: mqtt.password of the config or $USIM_MQTT_PASSWORD).
    #[arg(long)]
    pub username: Option<String>,
    /// CA bundle (PEM) for mqtts://; default: the system bundle.
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
    /// Clock value at start-up, s; default: Unix time now, like MOOSTime.
    #[arg(long, value_name = "S")]
    pub start_time: Option<f64>,
    /// On exit, write tick statistics (lateness histogram, drops) to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
}

/// Arguments of `usim broker`.
#[derive(Debug, clap::Args)]
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
    /// Send even if the vehicle would drop it (unknown variable, bad payload).
    #[arg(long)]
    pub no_check: bool,
    /// Set the retain flag (vehicles ignore retained commands).
    #[arg(long)]
    pub retain: bool,
    /// Give up after S seconds.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub timeout: f64,
}

/// Arguments of `usim watch`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Vehicle name.
    pub vehicle: String,
    /// Variables to show (default: every topic of the vehicle).
    pub vars: Vec<String>,
    #[command(flatten)]
    pub tool: ToolArgs,
    /// Print each variable's current value once (`VAR value` lines) and exit.
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

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")
}

fn seconds(s: f64, what: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| format!("{what} must be a positive number of seconds, got {s}"))
}

/// Run `usim run`.
pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let mut config = crate::config::load_vehicle(&a.config)?;
    if let Some(name) = a.name {
        config.name = name;
    }
    let broker = BrokerUrl::parse(a.broker.as_deref().unwrap_or(&config.mqtt.broker))?;
    let topic_root = a
        .topic_root
        .unwrap_or_else(|| config.mqtt.topic_root.clone());
    let user = a.username.or_else(|| config.mqtt.username.clone());
    let opts = RunOptions {
        credentials: credentials(user, config.mqtt.password.clone()),
        config,
        broker,
        topic_root,
        ca_file: a.ca_file,
        time_warp: a.time_warp,
        start_time_s: a.start_time,
        stats_path: a.stats,
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
    };
    match runtime()?.block_on(fleet::up(&opts))? {
        FleetEnd::Stopped | FleetEnd::ChildrenExited(true) => Ok(ExitCode::SUCCESS),
        FleetEnd::ChildrenExited(false) => anyhow::bail!("some vehicles failed (see their logs)"),
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
    runtime()?.block_on(tools::post(&opts))?;
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
    let timeout = match (a.timeout, a.once) {
        (Some(s), _) => Some(seconds(s, "--timeout")?),
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
             (USM_DRIFT_SUMMARY, USM_RESET_COUNT) or only in some modes",
            missing.join(", "),
            opts.vehicle,
            opts.conn.url,
            timeout.map(|d| d.as_secs_f64()).unwrap_or(0.0),
            opts.conn.topic_root
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
