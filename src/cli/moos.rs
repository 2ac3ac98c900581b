//! MOOS subcommands (docs/moos.md): `moosdb`, `moos`, `moos-bridge`,
//! `moos-up`, and pAntler's calling convention (`APP MISSION.moos ALIAS`).
use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use tracing::{info, warn};

use crate::moos::app::{load_mission, run_app, AppOptions};
use crate::moos::bridge::{run_bridge, BridgeOptions, DEFAULT_MIRROR};
use crate::moos::db::DbConfig;
use crate::moos::mission::{read_globals, MissionGlobals, MAX_TIME_WARP};
use crate::moos::server::{Server, ServerOptions};
use crate::moos::{host_name, log_safe};
use crate::mqtt::endpoint::BrokerUrl;

/// Names under which the binary runs as `usim moos` (a symlink).
pub const APP_NAMES: &[&str] = &["uSimMarine", "uSimMarineV22"];

/// pAntler's convention: started as `uSimMarine` / `uSimMarineV22` (a
/// symlink to usim), or with a first argument ending in `.moos`, the
/// command line is that of `usim moos`. Other command lines are unchanged.
pub fn antler_args(args: Vec<OsString>) -> Vec<OsString> {
    let Some(argv0) = args.first() else {
        return args;
    };
    let base = Path::new(argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is_db_alias = |a: &OsString| {
        let a = a.to_string_lossy();
        a == "MOOSDB" || a == "--alias=MOOSDB"
    };
    // `Run = usim @ NewConsole = false ~ MOOSDB` (or usim installed as
    // `MOOSDB`): the server, with the mission file; the alias is dropped.
    let db_by_alias = args
        .get(1)
        .is_some_and(|a| a.to_string_lossy().ends_with(".moos"))
        && args.iter().skip(2).any(is_db_alias);
    if base == "MOOSDB" || db_by_alias {
        let mut out: Vec<OsString> = vec!["usim".into(), "moosdb".into()];
        out.extend(args.into_iter().skip(1).filter(|a| !is_db_alias(a)));
        return out;
    }
    let mut out: Vec<OsString> = vec!["usim".into(), "moos".into()];
    if let Some(name) = APP_NAMES.iter().find(|n| n.eq_ignore_ascii_case(&base)) {
        out.push(format!("--process={name}").into());
        out.extend(args.into_iter().skip(1));
        return out;
    }
    let first_is_mission = args
        .get(1)
        .is_some_and(|a| a.to_string_lossy().ends_with(".moos"));
    if first_is_mission {
        out.extend(args.into_iter().skip(1));
        return out;
    }
    args
}

/// Arguments of `usim moosdb`.
#[derive(Debug, Args)]
pub struct MoosDbArgs {
    /// Mission file: ServerPort, Community, MOOSTimeWarp, ClientTimeout.
    #[arg(value_name = "MISSION.moos")]
    pub mission: Option<PathBuf>,
    /// Port (default: ServerPort of the mission, else 9000).
    #[arg(long = "moos_port", value_name = "N")]
    pub port: Option<u16>,
    /// Community name (default: Community of the mission, else `usim`).
    #[arg(long = "moos_community", value_name = "NAME")]
    pub community: Option<String>,
    /// Time warp (default: MOOSTimeWarp of the mission, else 1).
    #[arg(long = "moos_time_warp", value_name = "W")]
    pub time_warp: Option<f64>,
    /// Drop a client after this many seconds of silence (default: ClientTimeout, else 5).
    #[arg(long = "moos_timeout", value_name = "S")]
    pub timeout: Option<f64>,
    /// Address to listen on (default all interfaces, as the MOOSDB).
    #[arg(long, value_name = "IP", default_value = "0.0.0.0")]
    pub bind: IpAddr,
    /// Also mirror the community onto this MQTT broker (as `usim moos-bridge`).
    #[arg(long, value_name = "URL")]
    pub mqtt: Option<String>,
    /// Topic root of the mirror.
    #[arg(long, value_name = "ROOT", default_value = "usim")]
    pub topic_root: String,
}

/// Arguments of `usim moos`.
#[derive(Debug, Args)]
pub struct MoosArgs {
    /// The mission file (ServerHost, ServerPort, MOOSTimeWarp, LatOrigin,
    /// LongOrigin, Community, the ProcessConfig = uSimMarine block).
    #[arg(value_name = "MISSION.moos")]
    pub mission: PathBuf,
    /// MOOS name (pAntler's alias; default: the process name, uSimMarine).
    #[arg(value_name = "ALIAS")]
    pub alias: Option<String>,
    /// MOOS name, pAntler's other form.
    #[arg(long = "alias", value_name = "NAME")]
    pub alias_flag: Option<String>,
    /// Which block to read: uSimMarine or uSimMarineV22 (default: the first).
    #[arg(long, value_name = "NAME")]
    pub process: Option<String>,
    /// DB host (default: ServerHost).
    #[arg(long = "moos_host", value_name = "HOST")]
    pub host: Option<String>,
    /// DB port (default: ServerPort).
    #[arg(long = "moos_port", value_name = "N")]
    pub port: Option<u16>,
    /// Time warp (default: MOOSTimeWarp).
    #[arg(long = "moos_time_warp", value_name = "W")]
    pub time_warp: Option<f64>,
    /// Write a JSON summary (iterations, MOOS seconds, ...) here on exit.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
}

/// Arguments of `usim moos-bridge`.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// Mission file for ServerHost, ServerPort and MOOSTimeWarp.
    #[arg(value_name = "MISSION.moos")]
    pub mission: Option<PathBuf>,
    /// DB host.
    #[arg(long = "moos_host", value_name = "HOST")]
    pub host: Option<String>,
    /// DB port.
    #[arg(long = "moos_port", value_name = "N")]
    pub port: Option<u16>,
    /// The bridge's MOOS name.
    #[arg(long = "moos_name", value_name = "NAME", default_value = "usim_bridge")]
    pub name: String,
    /// MQTT broker.
    #[arg(long, value_name = "URL", default_value = "mqtt://127.0.0.1:1883")]
    pub broker: String,
    /// Topic root.
    #[arg(long, value_name = "ROOT", default_value = "usim")]
    pub topic_root: String,
    /// MOOS variables to mirror (globs; repeat; default NODE_REPORT*, NAV_*, DESIRED_*, USM_*, DB_*).
    #[arg(long, value_name = "GLOB")]
    pub mirror: Vec<String>,
    /// Variables posted back from MQTT into the MOOSDB (repeat).
    #[arg(long = "to-moos", value_name = "VAR")]
    pub to_moos: Vec<String>,
}

/// Arguments of `usim moos-up`.
#[derive(Debug, Args)]
pub struct MoosUpArgs {
    /// One mission file per vehicle; each gets its own MOOSDB on its ServerPort.
    #[arg(value_name = "MISSION.moos", required = true)]
    pub missions: Vec<PathBuf>,
    /// Override every mission's MOOSTimeWarp.
    #[arg(long = "moos_time_warp", value_name = "W")]
    pub time_warp: Option<f64>,
    /// Mirror every community onto this MQTT broker.
    #[arg(long, value_name = "URL")]
    pub mqtt: Option<String>,
    /// Topic root of the mirror.
    #[arg(long, value_name = "ROOT", default_value = "usim")]
    pub topic_root: String,
    /// Write one JSON summary per vehicle here on exit (an array).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
}

fn read_mission_globals(path: &Path) -> anyhow::Result<MissionGlobals> {
    let text = crate::config::read_capped(path, 4 * 1024 * 1024)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let g = read_globals(&text);
    for w in &g.warnings {
        warn!("{}: {w}", path.display());
    }
    Ok(g)
}

fn check_warp(w: f64) -> anyhow::Result<f64> {
    anyhow::ensure!(
        w.is_finite() && w > 0.0 && w <= MAX_TIME_WARP,
        "time warp must be in (0, {MAX_TIME_WARP}], got {w}"
    );
    Ok(w)
}

/// Wait for SIGINT/SIGTERM, then set `stop`.
fn wait_for_signal(stop: &AtomicBool) -> anyhow::Result<&'static str> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let why = rt.block_on(async {
        let sig = crate::mqtt::bridge::shutdown_signal()?;
        Ok::<_, crate::mqtt::BridgeError>(sig.await)
    })?;
    stop.store(true, Ordering::SeqCst);
    Ok(why)
}

fn start_db(
    port: u16,
    bind: IpAddr,
    community: &str,
    warp: f64,
    timeout: f64,
) -> anyhow::Result<Server> {
    let server = Server::start(ServerOptions {
        bind: SocketAddr::new(bind, port),
        db: DbConfig {
            community: community.to_string(),
            host: host_name(),
            client_timeout: timeout,
        },
        time_warp: warp,
    })
    .with_context(|| format!("cannot listen on port {port} (another MOOSDB running?)"))?;
    info!(
        "MOOSDB for community {} listening on {} (MOOSTimeWarp {warp}, ClientTimeout {timeout} s)",
        log_safe(community, 80),
        server.addr()
    );
    Ok(server)
}

fn spawn_bridge(
    url: &str,
    root: &str,
    port: u16,
    warp: f64,
    name: &str,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let opts = BridgeOptions {
        host: "127.0.0.1".into(),
        port,
        moos_name: name.to_string(),
        time_warp: warp,
        broker: BrokerUrl::parse(url)?,
        root: root.to_string(),
        mirror: DEFAULT_MIRROR.iter().map(|s| s.to_string()).collect(),
        to_moos: Vec::new(),
    };
    let s = Arc::clone(stop);
    Ok(std::thread::spawn(move || {
        if let Err(e) = run_bridge(opts, s) {
            warn!("MQTT mirror stopped: {e:#}");
        }
    }))
}

/// `usim moosdb`.
pub fn moosdb(a: MoosDbArgs) -> anyhow::Result<ExitCode> {
    let g = match &a.mission {
        Some(p) => read_mission_globals(p)?,
        None => MissionGlobals::default(),
    };
    let port = a.port.unwrap_or(g.server_port);
    let community = a
        .community
        .or(g.community.clone())
        .unwrap_or_else(|| "usim".into());
    let warp = check_warp(a.time_warp.unwrap_or(g.time_warp))?;
    let timeout = a.timeout.unwrap_or(g.client_timeout);
    anyhow::ensure!(
        timeout.is_finite() && timeout > 0.0,
        "--moos_timeout must be positive"
    );
    let server = start_db(port, a.bind, &community, warp, timeout)?;
    let stop = Arc::new(AtomicBool::new(false));
    let bridge = match &a.mqtt {
        Some(url) => Some(spawn_bridge(
            url,
            &a.topic_root,
            server.addr().port(),
            warp,
            "usim_moosdb_mirror",
            &stop,
        )?),
        None => None,
    };
    let why = wait_for_signal(&stop)?;
    info!("{why}: MOOSDB stopping");
    server.stop();
    if let Some(b) = bridge {
        let _ = b.join();
    }
    Ok(ExitCode::SUCCESS)
}

/// `usim moos`.
pub fn moos(a: MoosArgs) -> anyhow::Result<ExitCode> {
    let alias = a.alias_flag.clone().or(a.alias.clone());
    let block = a.process.clone().or(alias.clone());
    let v = load_mission(&a.mission, block.as_deref())?;
    for w in &v.warnings {
        warn!("{}: {w}", a.mission.display());
    }
    let warp = check_warp(a.time_warp.unwrap_or(v.globals.time_warp))?;
    let opts = AppOptions {
        moos_name: alias.unwrap_or_else(|| v.process.clone()),
        host: a.host.unwrap_or(v.globals.server_host.clone()),
        port: a.port.unwrap_or(v.globals.server_port),
        time_warp: warp,
        config: v.config,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    let app = std::thread::spawn(move || run_app(opts, s));
    let why = wait_for_signal(&stop)?;
    info!("{why}: stopping");
    let summary = app
        .join()
        .map_err(|_| anyhow::anyhow!("the vehicle thread panicked"))??;
    if let Some(p) = &a.stats {
        std::fs::write(p, serde_json::to_string(&summary)? + "\n")
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `usim moos-bridge`.
pub fn bridge(a: BridgeArgs) -> anyhow::Result<ExitCode> {
    let g = match &a.mission {
        Some(p) => read_mission_globals(p)?,
        None => MissionGlobals::default(),
    };
    let opts = BridgeOptions {
        host: a.host.unwrap_or(g.server_host.clone()),
        port: a.port.unwrap_or(g.server_port),
        moos_name: a.name,
        time_warp: g.time_warp,
        broker: BrokerUrl::parse(&a.broker)?,
        root: a.topic_root,
        mirror: if a.mirror.is_empty() {
            DEFAULT_MIRROR.iter().map(|s| s.to_string()).collect()
        } else {
            a.mirror
        },
        to_moos: a.to_moos,
    };
    crate::mqtt::topics::check_var(&opts.root)
        .or_else(|_| crate::mqtt::topics::Topics::new(&opts.root, "x").map(|_| ()))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    let t = std::thread::spawn(move || run_bridge(opts, s));
    let why = wait_for_signal(&stop)?;
    info!("{why}: bridge stopping");
    t.join()
        .map_err(|_| anyhow::anyhow!("the bridge thread panicked"))??;
    Ok(ExitCode::SUCCESS)
}

/// `usim moos-up`.
pub fn up(a: MoosUpArgs) -> anyhow::Result<ExitCode> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut servers = Vec::new();
    let mut apps = Vec::new();
    let mut bridges = Vec::new();
    let mut ports = std::collections::BTreeMap::new();
    let mut loaded = Vec::new();
    for m in &a.missions {
        let v = load_mission(m, None)?;
        for w in &v.warnings {
            warn!("{}: {w}", m.display());
        }
        if let Some(other) = ports.insert(v.globals.server_port, m.clone()) {
            anyhow::bail!(
                "{} and {} both use ServerPort {}: one MOOSDB per community needs its own port",
                other.display(),
                m.display(),
                v.globals.server_port
            );
        }
        loaded.push(v);
    }
    for v in loaded {
        let warp = check_warp(a.time_warp.unwrap_or(v.globals.time_warp))?;
        let community = v
            .globals
            .community
            .clone()
            .unwrap_or_else(|| v.config.name.clone());
        let port = v.globals.server_port;
        let server = start_db(
            port,
            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            &community,
            warp,
            v.globals.client_timeout,
        )?;
        if let Some(url) = &a.mqtt {
            bridges.push(spawn_bridge(
                url,
                &a.topic_root,
                port,
                warp,
                "usim_bridge",
                &stop,
            )?);
        }
        servers.push(server);
        let opts = AppOptions {
            moos_name: v.process.clone(),
            host: "127.0.0.1".into(),
            port,
            time_warp: warp,
            config: v.config,
        };
        let s = Arc::clone(&stop);
        apps.push(std::thread::spawn(move || run_app(opts, s)));
    }
    let why = wait_for_signal(&stop)?;
    info!("{why}: stopping {} vehicles", apps.len());
    let mut summaries = Vec::new();
    for h in apps {
        match h.join() {
            Ok(Ok(s)) => summaries.push(s),
            Ok(Err(e)) => warn!("a vehicle failed: {e:#}"),
            Err(_) => warn!("a vehicle thread panicked"),
        }
    }
    for s in &servers {
        s.stop();
    }
    for b in bridges {
        let _ = b.join();
    }
    if let Some(p) = &a.stats {
        std::fs::write(p, serde_json::to_string(&summaries)? + "\n")
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn antler_conventions() {
        assert_eq!(
            antler_args(v(&["/opt/bin/uSimMarine", "m.moos", "uSimMarine_a"])),
            v(&[
                "usim",
                "moos",
                "--process=uSimMarine",
                "m.moos",
                "uSimMarine_a"
            ])
        );
        assert_eq!(
            antler_args(v(&["usim", "alpha.moos", "--alias=sim"])),
            v(&["usim", "moos", "alpha.moos", "--alias=sim"])
        );
        assert_eq!(
            antler_args(v(&["usim", "replay", "m.toml"])),
            v(&["usim", "replay", "m.toml"])
        );
    }
}
