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

/// The `--moos_*` switches of a MOOS app that `usim moos` takes, as
/// CMOOSApp reads them (`--moos_host=H`, `--moos_port=N`,
/// `--moos_time_warp=W`, `--moos_name=NAME`, `--moos_file=FILE`,
/// `--moos_app_name=NAME`).
const APP_SWITCHES: &[&str] = &[
    "--moos_host",
    "--moos_port",
    "--moos_time_warp",
    "--moos_name",
];
/// The switches of the MOOSDB that `usim moosdb` takes.
const DB_SWITCHES: &[&str] = &[
    "--moos_port",
    "--moos_community",
    "--moos_time_warp",
    "--moos_timeout",
];

/// A mission file as MOOS-IvP apps recognise one on their command line
/// (their `main.cpp`: an argument ending in `.moos` or `.moos++`, the
/// latter being pAntler's copy with `--MOOSTimeWarp=` and other overloads).
fn is_mission_name(a: &str) -> bool {
    a.ends_with(".moos") || a.ends_with(".moos++")
}

/// pAntler's calling convention (docs/moos.md §1.1), as a `usim`
/// command line: sans IO but for `is_file` (does an argument name an
/// existing file) and `subcommands` (usim's own subcommand names).
///
/// pAntler runs `APP MISSION ALIAS [ExtraProcessParams…]` (MOOSEssentials'
/// `Antler.cpp`, `DoNixOSLaunch`); MISSION is the file pAntler was given,
/// or its overloaded copy `MISSION++`. usim is a MOOS app when:
/// * started as `uSimMarine` / `uSimMarineV22` (a symlink): `usim moos`
///   with that process, the arguments read as those apps' `main.cpp`
///   reads them (a `.moos`/`.moos++` argument anywhere is the mission,
///   `--alias=NAME` or else the second argument the alias);
/// * started as `MOOSDB`, or as usim with the alias `MOOSDB`: `usim moosdb`
///   with the mission (the MOOSDB's first free parameter);
/// * started as usim with a first argument that is not a subcommand and
///   is a mission name or an existing file: `usim moos`.
///
/// `-h`/`--help`, `-v`/`--version`, `-e`/`--example`, `-i`/`--interface`
/// are those of the apps. Any other argument (an ExtraProcessParams one)
/// is ignored with a warning, as the apps ignore it. `Ok` with the
/// arguments unchanged when none of this applies; `Err` when usim is
/// started as a MOOS app but cannot run as one (no mission file).
pub fn antler_args_with(
    args: Vec<OsString>,
    is_file: &dyn Fn(&str) -> bool,
    subcommands: &[String],
) -> Result<Vec<OsString>, String> {
    let Some(argv0) = args.first() else {
        return Ok(args);
    };
    let base = Path::new(argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let process = APP_NAMES.iter().find(|n| n.eq_ignore_ascii_case(&base));
    if base.eq_ignore_ascii_case("MOOSDB") {
        return Ok(db_args(&text[1..]));
    }
    if process.is_none() {
        // usim's own command line, unless its first argument is a mission.
        let Some(first) = text.get(1) else {
            return Ok(args);
        };
        if first.starts_with('-')
            || subcommands.iter().any(|s| s == first)
            || !(is_mission_name(first) || is_file(first))
        {
            return Ok(args);
        }
    }
    // The apps' main.cpp: help and friends first, the mission anywhere,
    // `--alias=` or the second argument the alias.
    let mut mission: Option<&str> = None;
    let mut alias: Option<&str> = None;
    let mut switches: Vec<String> = Vec::new();
    let mut ignored: Vec<&str> = Vec::new();
    let first_is_file = process.is_none();
    for (i, a) in text.iter().enumerate().skip(1) {
        match a.as_str() {
            "-h" | "--help" | "-help" => {
                return Ok(["usim", "moos", "--help"].map(OsString::from).to_vec())
            }
            "-v" | "--version" | "-version" => {
                return Ok(["usim", "--version"].map(OsString::from).to_vec())
            }
            "-e" | "--example" | "-example" => {
                return Ok(["usim", "example"].map(OsString::from).to_vec())
            }
            "-i" | "--interface" => return Ok(["usim", "interface"].map(OsString::from).to_vec()),
            _ => {}
        }
        if is_mission_name(a) || (i == 1 && first_is_file) {
            mission = Some(a);
        } else if let Some(n) = a.strip_prefix("--alias=") {
            alias = Some(n);
        } else if let Some(f) = a.strip_prefix("--moos_file=") {
            mission = Some(f);
        } else if let Some(n) = a.strip_prefix("--moos_app_name=") {
            alias = Some(n);
        } else if APP_SWITCHES
            .iter()
            .any(|s| a.strip_prefix(s).is_some_and(|r| r.starts_with('=')))
        {
            switches.push(a.clone());
        } else if i == 2 && !a.starts_with('-') {
            alias = Some(a);
        } else {
            ignored.push(a);
        }
    }
    if alias == Some("MOOSDB") && process.is_none() {
        return Ok(db_args(&text[1..]));
    }
    let shown = if process.is_some() {
        base.as_str()
    } else {
        "usim"
    };
    let Some(mission) = mission else {
        return Err(format!(
            "{shown} cannot start as a MOOS app: no mission file (an argument ending in .moos or .moos++) in `{}`; pAntler runs `{shown} MISSION.moos ALIAS` (is InhibitMOOSParams set?)",
            crate::text::escape_control(&text[1..].join(" "))
        ));
    };
    let mut out: Vec<OsString> = vec!["usim".into(), "moos".into(), mission.into()];
    if let Some(p) = process {
        out.push(format!("--process={p}").into());
    }
    if let Some(a) = alias {
        out.push(format!("--alias={a}").into());
    }
    out.extend(switches.into_iter().map(OsString::from));
    out.extend(ignored.into_iter().map(|a| format!("--ignored={a}").into()));
    Ok(out)
}

/// `MOOSDB [MISSION] [--moos_port=N …]` as `usim moosdb`: the first free
/// parameter is the mission file (the MOOSDB's `CMOOSDB::Run`); pAntler's
/// alias and other arguments are ignored with a warning.
fn db_args(rest: &[String]) -> Vec<OsString> {
    let mut out: Vec<OsString> = vec!["usim".into(), "moosdb".into()];
    let mut mission = false;
    for a in rest {
        if DB_SWITCHES
            .iter()
            .any(|s| a.strip_prefix(s).is_some_and(|r| r.starts_with('=')))
        {
            out.push(a.into());
        } else if !a.starts_with('-') && !mission {
            mission = true;
            out.push(a.into());
        } else if a == "MOOSDB" || a == "--alias=MOOSDB" {
            // pAntler's alias of the DB: nothing to do.
        } else {
            out.push(format!("--ignored={a}").into());
        }
    }
    out
}

/// [`antler_args_with`] on this machine's files and usim's subcommands.
pub fn antler_args(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    use clap::CommandFactory;
    let cmd = crate::cli::Cli::command();
    let subs: Vec<String> = cmd
        .get_subcommands()
        .flat_map(|c| {
            std::iter::once(c.get_name().to_string()).chain(c.get_all_aliases().map(str::to_string))
        })
        .chain(["help".to_string()])
        .collect();
    antler_args_with(args, &|p| Path::new(p).is_file(), &subs)
}

/// Arguments of `usim moosdb`.
#[derive(Debug, Args)]
#[command(
    after_help = "Limits (docs/security.md, usim moosdb): the whole handshake (protocol string and name) within 5 s; at most 128 unfinished handshakes, a new connection beyond closing the oldest; a name packet of at most 64 KiB and a client name of at most 256 bytes (else poisoned); client packets of at most 16 MiB; mail queued for a client at most 16 MiB or 4,096 packets, beyond which it is disconnected (one log line); mail held for a synchronous client 20,000 messages or 16 MiB (oldest half dropped); at most 65,536 variables, names of at most 65,536 bytes, 256 MiB of names and values stored, 256 writers remembered per variable (writes and registrations beyond are refused and logged); 1,024 wildcard registrations per client, patterns of at most 256 bytes. With --bind ADDR the --mqtt mirror connects to ADDR (loopback for 0.0.0.0)."
)]
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
    /// Address to listen on (default all interfaces, as the MOOSDB); the
    /// `--mqtt` mirror connects there (to loopback for 0.0.0.0 or ::).
    #[arg(long, value_name = "IP", default_value = "0.0.0.0")]
    pub bind: IpAddr,
    /// Also mirror the community onto this MQTT broker (as `usim moos-bridge`).
    #[arg(long, value_name = "URL")]
    pub mqtt: Option<String>,
    /// Topic root of the mirror.
    #[arg(long, value_name = "ROOT", default_value = "usim")]
    pub topic_root: String,
    /// Arguments pAntler passed that the MOOSDB ignores (logged).
    #[arg(long, value_name = "ARG", hide = true, allow_hyphen_values = true)]
    pub ignored: Vec<String>,
}

/// Arguments of `usim moos`.
#[derive(Debug, Args)]
#[command(
    after_help = "Clock (docs/moos.md 4.1): with the MOOSDB on another host the clock skew comes from timing echoes: only finite echoes of our own timing messages (round trip up to 10 s) with a skew within a day x warp are used, filtered as MOOS does; outliers beyond 1 s x warp need 5 in a row. The vehicle never steps across a jump of the MOOS clock (backwards, or over 10 s x warp): it advances one iteration and catches up."
)]
pub struct MoosArgs {
    /// The mission file (ServerHost, ServerPort, MOOSTimeWarp, LatOrigin,
    /// LongOrigin, Community, the ProcessConfig = uSimMarine block).
    #[arg(value_name = "MISSION.moos")]
    pub mission: PathBuf,
    /// pAntler's alias: the MOOS name, and the block read when the file has
    /// a `ProcessConfig = ALIAS` block (as uSimMarine reads the block of
    /// its alias); default: the process name.
    #[arg(value_name = "ALIAS")]
    pub alias: Option<String>,
    /// The alias, the apps' other form (`--alias=NAME`).
    #[arg(long = "alias", value_name = "NAME")]
    pub alias_flag: Option<String>,
    /// The simulator: uSimMarine or uSimMarineV22 (default: the first of
    /// their blocks in the file; for an aliased block, the alias's prefix,
    /// else uSimMarineV22).
    #[arg(long, value_name = "NAME")]
    pub process: Option<String>,
    /// The MOOS name only (CMOOSApp's `--moos_name`), whatever the block.
    #[arg(long = "moos_name", value_name = "NAME")]
    pub moos_name: Option<String>,
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
    /// Arguments pAntler passed that uSimMarine ignores (logged).
    #[arg(long, value_name = "ARG", hide = true, allow_hyphen_values = true)]
    pub ignored: Vec<String>,
}

/// Arguments of `usim moos-bridge`.
#[derive(Debug, Args)]
#[command(
    after_help = "Limits (docs/security.md): a mirrored value whose MQTT packet would be over 64 KiB, and a MOOS name that is not a valid topic level (control characters, +, #, U+FFFE ...), are dropped with one log line each; MQTT messages of any size are read, and one over 64 KiB for the MOOSDB is dropped with one log line. Postings from MQTT carry SrcAux usim_bridge:mqtt and are never mirrored back (no loops, whatever bridges share the community). A vehicle silent for 10 s, and every vehicle at exit, has its retained status cleared."
)]
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
    /// MOOS variables to mirror (globs; repeat; default NODE_REPORT*, NAV_*, DESIRED_*, USM_*, DB_*, VIEW_*).
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

/// The variables the mission's pMarineViewer buttons post: a bridge of
/// that mission carries them from MQTT into the community (as `--to-moos`),
/// so `usim view MISSION`'s buttons and `usim post` reach the helm.
fn button_vars(path: &Path) -> Vec<String> {
    let Ok(text) = crate::config::read_capped(path, 4 * 1024 * 1024) else {
        return Vec::new();
    };
    let vars = crate::view::buttons::variables(&crate::view::buttons::from_mission(&text).0);
    if !vars.is_empty() {
        info!(
            "{}: the pMarineViewer buttons' variables go from MQTT into the MOOSDB: {}",
            path.display(),
            log_safe(&vars.join(", "), 400)
        );
    }
    vars
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

/// Where an in-process client reaches a DB listening on `bound`: the
/// address itself, or loopback when it listens on every interface.
fn dial_address(bound: SocketAddr) -> SocketAddr {
    let ip = match bound.ip() {
        IpAddr::V4(v) if v.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v) if v.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bound.port())
}

fn spawn_bridge(
    url: &str,
    root: &str,
    db: SocketAddr,
    warp: f64,
    name: &str,
    to_moos: Vec<String>,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    let db = dial_address(db);
    let opts = BridgeOptions {
        host: db.ip().to_string(),
        port: db.port(),
        moos_name: name.to_string(),
        time_warp: warp,
        broker: BrokerUrl::parse(url)?,
        root: root.to_string(),
        mirror: DEFAULT_MIRROR.iter().map(|s| s.to_string()).collect(),
        to_moos,
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
    for i in &a.ignored {
        warn!(
            "argument {} ignored (the MOOSDB does not use it)",
            log_safe(i, 80)
        );
    }
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
            server.addr(),
            warp,
            "usim_moosdb_mirror",
            a.mission.as_deref().map(button_vars).unwrap_or_default(),
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
    for i in &a.ignored {
        warn!(
            "argument {} ignored (uSimMarine does not use it)",
            log_safe(i, 80)
        );
    }
    if let Some(p) = &a.process {
        anyhow::ensure!(
            APP_NAMES.iter().any(|n| n.eq_ignore_ascii_case(p)),
            "--process {}: usim runs as uSimMarine or uSimMarineV22",
            crate::text::escape_control(p)
        );
    }
    let alias = a.alias_flag.clone().or(a.alias.clone());
    let v = load_mission(&a.mission, alias.as_deref(), a.process.as_deref())?;
    if let Some(n) = &v.note {
        info!("{}: {n}", a.mission.display());
    }
    for w in &v.warnings {
        warn!("{}: {w}", a.mission.display());
    }
    let warp = check_warp(a.time_warp.unwrap_or(v.globals.time_warp))?;
    let app_name = alias.clone().unwrap_or_else(|| v.process.clone());
    let moos_name = a.moos_name.clone().unwrap_or_else(|| app_name.clone());
    let host = a.host.unwrap_or(v.globals.server_host.clone());
    let port = a.port.unwrap_or(v.globals.server_port);
    let mut opts = AppOptions::from_mission(v, moos_name, host, port, warp);
    opts.app_name = app_name;
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
    let mut to_moos = a.to_moos;
    if let Some(p) = &a.mission {
        for v in button_vars(p) {
            if !to_moos.contains(&v) {
                to_moos.push(v);
            }
        }
    }
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
        to_moos,
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
        let v = load_mission(m, None, None)?;
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
                server.addr(),
                warp,
                "usim_bridge",
                Vec::new(),
                &stop,
            )?);
        }
        servers.push(server);
        let name = v.process.clone();
        let opts = AppOptions::from_mission(v, name, "127.0.0.1".into(), port, warp);
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

    fn antler(args: &[&str]) -> Result<Vec<OsString>, String> {
        let subs: Vec<String> = ["replay", "moos", "moosdb", "run", "help"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        antler_args_with(v(args), &|p| p == "targ_alpha.txt", &subs)
    }

    /// The argv pAntler builds (`APP MISSION ALIAS [extra…]`, MOOSEssentials'
    /// Antler.cpp), with its `MISSION.moos++` copy under `--MOOSTimeWarp=`,
    /// and the forms the IvP apps' main.cpp accepts.
    #[test]
    fn antler_conventions() {
        // `Run = usim @ NewConsole = false ~ uSimMarine`, plain and warped
        for m in [
            "alpha.moos",
            "alpha.moos++",
            "/tmp/x/alpha.moos++",
            "targ_alpha.txt",
        ] {
            assert_eq!(
                antler(&["usim", m, "uSimMarine"]).unwrap(),
                v(&["usim", "moos", m, "--alias=uSimMarine"]),
                "{m}"
            );
        }
        // through the symlinks: the process is the name
        assert_eq!(
            antler(&["/opt/bin/uSimMarine", "m.moos++", "uSimMarine_a"]).unwrap(),
            v(&[
                "usim",
                "moos",
                "m.moos++",
                "--process=uSimMarine",
                "--alias=uSimMarine_a"
            ])
        );
        assert_eq!(
            antler(&["uSimMarineV22", "--alias=sim", "alpha.moos"]).unwrap(),
            v(&[
                "usim",
                "moos",
                "alpha.moos",
                "--process=uSimMarineV22",
                "--alias=sim"
            ])
        );
        // ExtraProcessParams: MOOS switches kept, the rest ignored (logged)
        assert_eq!(
            antler(&[
                "usim",
                "a.moos",
                "sim",
                "--moos_port=9101",
                "--verbose",
                "x"
            ])
            .unwrap(),
            v(&[
                "usim",
                "moos",
                "a.moos",
                "--alias=sim",
                "--moos_port=9101",
                "--ignored=--verbose",
                "--ignored=x"
            ])
        );
        // the DB, as usim with alias MOOSDB or as a MOOSDB symlink
        assert_eq!(
            antler(&["usim", "alpha.moos++", "MOOSDB"]).unwrap(),
            v(&["usim", "moosdb", "alpha.moos++"])
        );
        assert_eq!(
            antler(&[
                "/usr/local/bin/MOOSDB",
                "alpha.moos",
                "MOOSDB",
                "--moos_port=9102"
            ])
            .unwrap(),
            v(&["usim", "moosdb", "alpha.moos", "--moos_port=9102"])
        );
        assert_eq!(antler(&["MOOSDB"]).unwrap(), v(&["usim", "moosdb"]));
        // the apps' help and friends
        assert_eq!(
            antler(&["uSimMarineV22", "--help"]).unwrap(),
            v(&["usim", "moos", "--help"])
        );
        assert_eq!(
            antler(&["uSimMarine", "-i"]).unwrap(),
            v(&["usim", "interface"])
        );
        // usim's own command lines are unchanged
        for a in [
            &["usim", "replay", "m.toml"][..],
            &["usim", "--version"],
            &["usim"],
            &["usim", "nosuchcommand"],
            &["usim", "moos", "a.moos", "sim"],
        ] {
            assert_eq!(antler(a).unwrap(), v(a));
        }
        // a MOOS app without a mission file: an error that says so
        let e = antler(&["uSimMarineV22", "uSimMarineV22"]).unwrap_err();
        assert!(
            e.contains("uSimMarineV22 cannot start as a MOOS app: no mission file"),
            "{e}"
        );
        assert!(antler(&["uSimMarine"]).is_err());
    }
}
