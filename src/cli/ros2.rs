//! `usim ros2`: vehicles as ROS 2 nodes on a DDS domain (docs/ros2.md), on
//! the live host (`crate::dds::live`).
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::live::runtime;
use crate::config::VehicleConfig;
use crate::dds::live::{NodeOptions, Ros2Node};
use crate::live::run::{run_for, shutdown_signal, tick_loop};
use crate::live::schedule::Schedule;
use crate::live::stats::RunStats;
use crate::ros2::lockstep::Mode;

/// `--lockstep` rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LockstepArg {
    /// One iteration per request on /usim/step (std_msgs/Float64: how many).
    Step,
    /// The next iteration when every vehicle acknowledged the last on /NAME/usim/ack.
    Ack,
}

/// Arguments of `usim ros2`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Topics per vehicle NAME: /NAME/odom /NAME/pose /NAME/fix /tf /clock, \
    /NAME/nav_x ... (postings), commands /NAME/desired_rudder ... (std_msgs/Float64) and \
    /NAME/usm_reset /NAME/drift_vector_add /NAME/set (std_msgs/String), refused commands on \
    /NAME/usim/errors (at most 20 answers a second per vehicle). Received CDR is bounded: a \
    message at most 64 KiB, a string 16 KiB; a reader keeps 10 samples a topic. --spawn N \
    --config C names the copies NAME_0001, NAME_0002 ... (`-` is not in ROS names), positions as \
    `usim fleet`. See docs/ros2.md."
)]
pub struct Ros2Args {
    /// Vehicle configs (names must be unique ROS names).
    #[arg(value_name = "CONFIG")]
    pub configs: Vec<PathBuf>,
    /// The vehicles (and start time) of a mission file; its posts are not played.
    #[arg(long, value_name = "MISSION")]
    pub mission: Option<PathBuf>,
    /// --spawn N --config C --spacing M.
    #[command(flatten)]
    pub spawn: super::live::SpawnArgs,
    /// DDS domain; default: $ROS_DOMAIN_ID, else 0.
    #[arg(long, value_name = "ID")]
    pub domain: Option<u16>,
    /// Iterations per second (sim time); default: app_tick of the first vehicle.
    #[arg(long, value_name = "HZ")]
    pub app_tick: Option<f64>,
    /// --time-warp W (/clock follows the clock), --start-time S (default: the mission's start, if any).
    #[command(flatten)]
    pub clock: super::live::ClockArgs,
    /// Advance only when told: `step` (/usim/step) or `ack` (every vehicle acknowledged).
    #[arg(long, value_enum, value_name = "RULE")]
    pub lockstep: Option<LockstepArg>,
    /// Stop after N iterations.
    #[arg(long, value_name = "N")]
    pub steps: Option<u64>,
    /// Stop after S seconds of wall time.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Do not publish usim's postings (NAV_*, USM_*) as topics (odometry, fix, pose, /tf, /clock only).
    #[arg(long)]
    pub no_postings: bool,
    /// Listen S seconds for another usim running the same vehicle names (0: no claim).
    #[arg(long, value_name = "S", default_value_t = 2.5)]
    pub claim_window: f64,
}

fn domain(a: Option<u16>) -> anyhow::Result<u16> {
    if let Some(d) = a {
        return Ok(d);
    }
    match std::env::var("ROS_DOMAIN_ID") {
        Ok(s) if !s.trim().is_empty() => s.trim().parse::<u16>().map_err(|_| {
            anyhow::anyhow!(
                "ROS_DOMAIN_ID must be a number from 0 to 232, got {:?}",
                crate::text::clip(&s, 40)
            )
        }),
        _ => Ok(0),
    }
}

fn vehicles(a: &Ros2Args) -> anyhow::Result<(Vec<VehicleConfig>, Option<f64>)> {
    let mut out = Vec::new();
    let mut start = None;
    if let Some(m) = &a.mission {
        let m = crate::mission::load(m)?;
        start = Some(m.start_time);
        out.push(m.vehicle);
        out.extend(m.more_vehicles);
    }
    for path in &a.configs {
        out.push(crate::config::load_vehicle(path)?);
    }
    // `usim fleet`'s names are NAME-0001: `-` is not in ROS names.
    out.extend(a.spawn.vehicles()?.into_iter().map(|mut v| {
        v.name = v.name.replace('-', "_");
        v
    }));
    if out.is_empty() {
        anyhow::bail!(
            "no vehicles: give configs (usim ros2 A.toml B.toml), --mission M, or --spawn N --config C"
        );
    }
    let mut seen = std::collections::HashSet::new();
    for v in &out {
        if !seen.insert(v.name.as_str()) {
            anyhow::bail!("vehicle name `{}` is given twice", v.name.escape_default());
        }
    }
    Ok((out, start))
}

fn positive(x: f64, flag: &str) -> anyhow::Result<f64> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        anyhow::bail!("{flag} must be a number > 0, got {x}")
    }
}

/// Run `usim ros2`.
pub fn run(a: Ros2Args) -> anyhow::Result<ExitCode> {
    let (vehicles, mission_start) = vehicles(&a)?;
    let app_tick = positive(a.app_tick.unwrap_or(vehicles[0].app_tick), "--app-tick")?;
    let warp = positive(a.clock.time_warp, "--time-warp")?;
    let (duration, claim_window) = durations(&a)?;
    let start_time_s = a
        .clock
        .start_time
        .or(mission_start)
        .unwrap_or_else(crate::live::clock::unix_time_s);
    if !start_time_s.is_finite() {
        anyhow::bail!("--start-time must be a finite number of seconds");
    }
    let lockstep = a.lockstep.map(|l| match l {
        LockstepArg::Step => Mode::Step,
        LockstepArg::Ack => Mode::Ack,
    });
    let opts = NodeOptions {
        domain: domain(a.domain)?,
        vehicles,
        start_time_s,
        postings: !a.no_postings,
        lockstep,
        claim_window,
    };
    let mut node = Ros2Node::open(&opts)?;
    tracing::info!(
        "usim ros2: {} vehicle(s) on DDS domain {}, {app_tick} Hz{}",
        opts.vehicles.len(),
        opts.domain,
        match lockstep {
            Some(Mode::Step) => ", lock-step on /usim/step".to_string(),
            Some(Mode::Ack) => ", lock-step on acknowledgements".to_string(),
            None => format!(", time warp {warp}"),
        }
    );
    match lockstep {
        Some(mode) => run_lockstep(&mut node, mode, app_tick, duration, a.steps)?,
        None => {
            let schedule = Schedule::new(Instant::now(), start_time_s, app_tick, warp);
            run_live(&mut node, schedule, duration, a.steps)?;
        }
    }
    let c = node.host().counters();
    tracing::info!(
        "usim ros2: stopped after {} iterations at clock {} s; {} bad messages, {} dropped",
        node.iterations(),
        node.clock(),
        c.bad_messages,
        c.mail_dropped
    );
    Ok(ExitCode::SUCCESS)
}

/// `--duration` and `--claim-window`, checked.
fn durations(a: &Ros2Args) -> anyhow::Result<(Option<Duration>, Option<Duration>)> {
    if !(a.claim_window.is_finite() && (0.0..=60.0).contains(&a.claim_window)) {
        anyhow::bail!(
            "--claim-window must be from 0 to 60 s, got {}",
            a.claim_window
        );
    }
    let duration = super::live::optional_seconds(a.duration, "--duration")?;
    let claim_window = (a.claim_window > 0.0).then(|| Duration::from_secs_f64(a.claim_window));
    Ok((duration, claim_window))
}

/// Lock-step: the node iterates when told; a signal (or `--duration`) sets
/// the stop flag from a thread of its own, polled between iterations.
fn run_lockstep(
    node: &mut Ros2Node,
    mode: Mode,
    app_tick: f64,
    duration: Option<Duration>,
    steps: Option<u64>,
) -> anyhow::Result<()> {
    let rt = runtime()?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let signal = rt.block_on(async { shutdown_signal() })?;
    let waiter = std::thread::spawn(move || {
        rt.block_on(async {
            tokio::select! {
                _ = signal => {}
                _ = run_for(duration) => {}
                _ = async {
                    while !flag.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                } => {}
            }
        });
        flag.store(true, Ordering::Relaxed);
    });
    node.run_lockstep(mode, 1.0 / app_tick, &stop, steps);
    stop.store(true, Ordering::Relaxed);
    let _ = waiter.join();
    Ok(())
}

/// Live: iterate on the tick schedule until a signal, `--duration` or `--steps`.
fn run_live(
    node: &mut Ros2Node,
    mut schedule: Schedule,
    duration: Option<Duration>,
    steps: Option<u64>,
) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let signal = shutdown_signal()?;
        let mut stats = RunStats::default();
        let done = tokio::sync::Notify::new();
        let stop = async {
            tokio::select! {
                why = signal => why,
                _ = run_for(duration) => "--duration",
                _ = done.notified() => "--steps",
            }
        };
        tick_loop(&mut schedule, &mut stats, stop, |t| {
            let failed = node.iterate(t);
            if steps.is_some_and(|n| node.iterations() >= n) {
                done.notify_one();
            }
            failed
        })
        .await;
        anyhow::Ok(())
    })
}
