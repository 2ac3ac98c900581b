//! `usim up`: an embedded broker plus one child `usim run` process per
//! vehicle config, their logs streamed with the vehicle name in front.
//!
//! On SIGINT/SIGTERM every child gets SIGTERM (so each publishes `offline`
//! and disconnects), has 5 s to exit, and is then killed. Children also get
//! SIGTERM from the kernel if `usim up` itself dies (Linux
//! `PR_SET_PDEATHSIG`), so no vehicle outlives its launcher.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;
use tracing::{error, info, warn};

use super::bridge::shutdown_signal;
use super::broker::EmbeddedBroker;
use super::endpoint::BrokerUrl;
use super::fleet_runtime::{run_fleet, FleetRunOptions, DEFAULT_FLEET_NAME};
use super::BridgeError;

/// How long children get to exit after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long the embedded broker outlives the vehicles at a stop.
pub const BROKER_DRAIN: Duration = Duration::from_millis(500);

/// What `usim up` launches.
#[derive(Debug, Clone)]
pub struct FleetOptions {
    /// One vehicle config per child.
    pub configs: Vec<PathBuf>,
    /// Listen address of the embedded broker.
    pub bind: SocketAddr,
    /// Use this broker instead of starting the embedded one.
    pub external: Option<BrokerUrl>,
    /// Extra arguments for every `usim run` (e.g. `--time-warp 2`).
    /// Children inherit the environment, so `RUST_LOG` applies to them too.
    pub run_args: Vec<String>,
    /// Run the vehicles in this process on one connection
    /// ([`super::fleet_runtime`]) instead of one child each.
    pub in_process: bool,
    /// Time warp of the in-process fleet (children get it in `run_args`).
    pub time_warp: f64,
}

/// How the fleet ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetEnd {
    /// Stopped by a signal; every child stopped.
    Stopped,
    /// Every child exited by itself; `true` if all succeeded.
    ChildrenExited(bool),
}

/// A child's exit, sent by the task that waits for it.
type Exit = (String, std::io::Result<ExitStatus>);

/// Launch and supervise the fleet (see the module doc).
pub async fn up(o: &FleetOptions) -> Result<FleetEnd, BridgeError> {
    let (names, loaded) = load_configs(o)?;
    let (broker, url) = match &o.external {
        Some(url) => (None, url.clone()),
        None => {
            let b = EmbeddedBroker::start(o.bind)?;
            let url = b.url();
            info!("embedded MQTT broker listening on {}", b.addr());
            (Some(b), url)
        }
    };
    let end = if o.in_process {
        run_in_process(o, loaded, url).await?;
        FleetEnd::Stopped
    } else {
        // Signals first: a Ctrl-C while children start must stop them too.
        let shutdown = shutdown_signal()?;
        let (running, exit_rx) = spawn_children(o, &names, &url).await?;
        info!(
            "{} vehicles on {url}: {} (Ctrl-C stops them all)",
            names.len(),
            names.join(", ")
        );
        supervise(running, exit_rx, shutdown).await
    };
    if broker.is_some() && end == FleetEnd::Stopped {
        // Let the embedded broker deliver the vehicles' last messages
        // (their retained `offline`) before it goes.
        tokio::time::sleep(BROKER_DRAIN).await;
    }
    Ok(end)
}

/// Every config loaded and checked before anything starts: unique names,
/// and with `--in-process` one topic root; all problems at once.
fn load_configs(
    o: &FleetOptions,
) -> Result<(Vec<String>, Vec<crate::config::VehicleConfig>), BridgeError> {
    if o.configs.is_empty() {
        return Err(BridgeError::BadOption(
            "no vehicle config given: usim up CONFIG...".into(),
        ));
    }
    let mut names: Vec<String> = Vec::new();
    let mut loaded = Vec::new();
    let mut problems = Vec::new();
    for path in &o.configs {
        match crate::config::load_vehicle(path) {
            Ok(cfg) if names.contains(&cfg.name) => problems.push(format!(
                "{}: vehicle name {:?} is used twice (names must be unique on a broker)",
                path.display(),
                cfg.name
            )),
            Ok(cfg) => {
                names.push(cfg.name.clone());
                loaded.push(cfg);
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    if problems.is_empty() && o.in_process {
        let root = loaded[0].mqtt.topic_root.clone();
        let differs = o
            .configs
            .iter()
            .zip(&loaded)
            .find(|(_, v)| v.mqtt.topic_root != root);
        if let Some((path, v)) = differs {
            problems.push(format!(
                "{}: [mqtt] topic_root {:?} differs from the first config's {root:?}: \
                 --in-process runs one fleet with one topic root",
                path.display(),
                v.mqtt.topic_root
            ));
        }
    }
    if !problems.is_empty() {
        return Err(BridgeError::BadOption(problems.join("\n")));
    }
    Ok((names, loaded))
}

/// `--in-process`: the whole fleet in this process (`usim fleet`'s runtime).
async fn run_in_process(
    o: &FleetOptions,
    loaded: Vec<crate::config::VehicleConfig>,
    url: BrokerUrl,
) -> Result<(), BridgeError> {
    let first = &loaded[0];
    let live = super::bridge::LiveOptions {
        credentials: super::endpoint::credentials(
            first.mqtt.username.clone(),
            first.mqtt.password.clone(),
        ),
        topic_root: first.mqtt.topic_root.clone(),
        broker: url,
        ca_file: None,
        time_warp: o.time_warp,
        start_time_s: None,
        stats_path: None,
        nmea: None,
    };
    let opts = FleetRunOptions {
        app_tick: first.app_tick,
        fleet_name: DEFAULT_FLEET_NAME.to_string(),
        vehicles: loaded,
        encounters: None,
        live,
    };
    run_fleet(opts).await.map(drop)
}

/// One `usim run` child per config, its output prefixed by its name; a
/// start that fails stops those already started.
async fn spawn_children(
    o: &FleetOptions,
    names: &[String],
    url: &BrokerUrl,
) -> Result<(Vec<(String, u32)>, mpsc::Receiver<Exit>), BridgeError> {
    let exe = std::env::current_exe()?;
    let width = names.iter().map(String::len).max().unwrap_or(0);
    let (exit_tx, mut exit_rx) = mpsc::channel::<Exit>(64);
    let mut running: Vec<(String, u32)> = Vec::new();
    for (path, name) in o.configs.iter().zip(names) {
        let mut cmd = Command::new(&exe);
        cmd.arg("run")
            .arg(path)
            .arg("--broker")
            .arg(url.to_string());
        cmd.args(&o.run_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            cmd.env("NO_COLOR", "1");
        }
        die_with_parent(&mut cmd);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                stop_all(&running, &mut exit_rx).await;
                return Err(BridgeError::Io(std::io::Error::new(
                    e.kind(),
                    format!("cannot start {}: {e}", exe.display()),
                )));
            }
        };
        let label = format!("{name:>width$} |");
        if let Some(out) = child.stdout.take() {
            tokio::spawn(stream_lines(out, label.clone()));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(stream_lines(err, label));
        }
        running.push((name.clone(), child.id().unwrap_or(0)));
        let tx = exit_tx.clone();
        let name = name.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            let _ = tx.send((name, status)).await;
        });
    }
    Ok((running, exit_rx))
}

/// Wait for a signal (stop every child) or for the children to exit.
async fn supervise(
    mut running: Vec<(String, u32)>,
    mut exit_rx: mpsc::Receiver<Exit>,
    shutdown: impl std::future::Future<Output = &'static str>,
) -> FleetEnd {
    tokio::pin!(shutdown);
    let mut all_ok = true;
    loop {
        tokio::select! {
            why = &mut shutdown => {
                info!("{why}: stopping {} vehicles", running.len());
                stop_all(&running, &mut exit_rx).await;
                return FleetEnd::Stopped;
            }
            exited = exit_rx.recv() => {
                let Some((name, status)) = exited else {
                    return FleetEnd::ChildrenExited(all_ok);
                };
                running.retain(|(n, _)| *n != name);
                match status {
                    Ok(s) if s.success() => info!("{name} exited"),
                    Ok(s) => { all_ok = false; error!("{name} exited with {s}") }
                    Err(e) => { all_ok = false; error!("{name}: cannot wait for it: {e}") }
                }
                if running.is_empty() {
                    return FleetEnd::ChildrenExited(all_ok);
                }
            }
        }
    }
}

/// SIGTERM every running child, wait up to [`STOP_GRACE`], then SIGKILL.
async fn stop_all(running: &[(String, u32)], exits: &mut mpsc::Receiver<Exit>) {
    let mut left: Vec<(String, u32)> = running.to_vec();
    for (_, pid) in &left {
        send_signal(*pid, libc::SIGTERM);
    }
    let deadline = tokio::time::Instant::now() + STOP_GRACE;
    while !left.is_empty() {
        match tokio::time::timeout_at(deadline, exits.recv()).await {
            Ok(Some((name, _))) => left.retain(|(n, _)| *n != name),
            Ok(None) => break,
            Err(_) => {
                for (name, pid) in &left {
                    warn!("{name} did not stop within {STOP_GRACE:?}: killing it");
                    send_signal(*pid, libc::SIGKILL);
                }
                // Reap them (kill_on_drop would otherwise leave zombies until exit).
                let reap = tokio::time::Instant::now() + Duration::from_secs(2);
                while !left.is_empty() {
                    match tokio::time::timeout_at(reap, exits.recv()).await {
                        Ok(Some((name, _))) => left.retain(|(n, _)| *n != name),
                        _ => break,
                    }
                }
                break;
            }
        }
    }
}

fn send_signal(pid: u32, sig: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pid > 0 {
        // SAFETY: kill(2) has no memory effects; a stale pid only yields ESRCH.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: prctl is async-signal-safe; nothing else runs in the closure.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// Copy a child's output to our stderr, one prefixed line at a time.
async fn stream_lines(stream: impl AsyncRead + Unpin, label: String) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        eprintln!("{label} {line}");
    }
}
