//! The `usim` command line: clap definitions and dispatch to one module per
//! subcommand. Only this module and `main.rs` print to the terminal.
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod env;
pub mod import;
pub mod info;
pub mod interp;
pub mod live;
pub mod logging;
pub mod moos;
pub mod nmea;
pub mod plot;
pub mod profile;
pub mod record;
pub mod replay;
#[cfg(feature = "ros2")]
pub mod ros2;
pub mod sweep;
pub mod view;

/// usim — a uSimMarine-compatible marine vehicle simulator over MQTT.
#[derive(Debug, Parser)]
#[command(
    name = "usim",
    version,
    about,
    long_about = None,
    after_help = "Quick start:\n  usim replay missions/harbour_turns.toml -o turns.csv   # offline, to CSV\n  usim up configs/kayak.toml                             # live, with the embedded broker\n  usim post kayak DESIRED_THRUST 60                      # drive it (another terminal)\n  usim watch kayak                                       # what it posts\n  usim view                                              # the fleet in the browser\n\n`usim <command> --help` explains each command; `usim example` prints a config with every key."
)]
pub struct Cli {
    /// More log output (-v: debug, -vv: trace). RUST_LOG overrides it.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a mission file to CSV, faster than real time.
    Replay(replay::ReplayArgs),
    /// Plot runs (replay or record CSVs) to one SVG or PNG figure.
    Plot(plot::PlotArgs),
    /// Record live vehicles (reports and commands) to CSV or MCAP.
    Record(record::RecordArgs),
    /// Monte Carlo sweep of a mission: seeded random variables and grids, in parallel, one summary row per run.
    Sweep(sweep::SweepArgs),
    /// Print an example vehicle config (like uSimMarine --example).
    Example(info::ExampleArgs),
    /// Print the subscribed and published variables with units (like uSimMarine --interface).
    Interface(info::InterfaceArgs),
    /// Preview a timed-command script: print the interpolated value each cycle.
    Interp(interp::InterpArgs),
    /// Time-optimal jerk-limited (double S) profiles: batch durations or one motion's setpoints.
    Profile(profile::ProfileArgs),
    /// Run one vehicle live on an MQTT broker.
    Run(live::RunArgs),
    /// Run the embedded MQTT broker.
    Broker(live::BrokerArgs),
    /// Start an embedded broker and one vehicle process per config (or all in one with --in-process).
    Up(live::UpArgs),
    /// Run many vehicles in one process on one MQTT connection (large fleets, live encounters).
    Fleet(live::FleetArgs),
    /// Post one value to a vehicle's variable (like uPokeDB).
    Post(live::PostArgs),
    /// Watch a vehicle's published variables as a live table (like uXMS).
    Watch(live::WatchArgs),
    /// Serve live vehicles as NMEA 0183 and AIS over UDP/TCP (chart plotters, gpsd).
    Nmea(nmea::NmeaArgs),
    /// Serve a live view of the fleet in the browser, with commanding (like pMarineViewer).
    View(view::ViewArgs),
    /// Turn a MOOS file's uSimMarine block into a usim vehicle config.
    ImportMoos(import::ImportArgs),
    /// Run a MOOSDB-compatible server (MOOS V10), optionally mirrored onto MQTT.
    Moosdb(moos::MoosDbArgs),
    /// Run one vehicle as a MOOS app in place of uSimMarine (config from the .moos file).
    Moos(moos::MoosArgs),
    /// Mirror a MOOS community onto MQTT, and chosen variables back.
    MoosBridge(moos::BridgeArgs),
    /// One MOOSDB and one vehicle per mission file, from one command.
    MoosUp(moos::MoosUpArgs),
    /// Run vehicles as ROS 2 nodes on a DDS domain: odometry, fix, /tf, /clock, commands, lock-step.
    #[cfg(feature = "ros2")]
    Ros2(ros2::Ros2Args),
    /// Sample a vehicle file's sea, wind and tide at one point as CSV.
    Env(env::EnvArgs),
}

/// Run the parsed command line; the error chain is printed by `main`.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    init_logging(cli.verbose);
    match cli.command {
        Command::Replay(a) => replay::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Record(a) => record::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Example(a) => info::example(a),
        Command::Interface(a) => info::interface(a),
        Command::Interp(a) => interp::run(a),
        Command::Profile(a) => profile::run(a),
        Command::Run(a) => live::run(a),
        Command::Broker(a) => live::broker(a),
        Command::Up(a) => live::up(a),
        Command::Fleet(a) => live::fleet(a),
        Command::Post(a) => live::post(a),
        Command::Watch(a) => live::watch(a),
        Command::Nmea(a) => nmea::run(a),
        Command::View(a) => view::run(a),
        Command::ImportMoos(a) => import::run(a),
        Command::Moosdb(a) => moos::moosdb(a),
        Command::Moos(a) => moos::moos(a),
        Command::MoosBridge(a) => moos::bridge(a),
        Command::MoosUp(a) => moos::up(a),
        #[cfg(feature = "ros2")]
        Command::Ros2(a) => ros2::run(a),
        Command::Env(a) => env::run(a),
    }
}

fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    // rumqttd logs every connection at info and every ordinary disconnect
    // as an error, RustDDS every socket at info: keep them quiet unless
    // asked (RUST_LOG overrides all).
    let level = match verbose {
        0 => "info,rumqttd=off,rustdds=warn",
        1 => "debug,rumqttd=warn,rustdds=info",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    logging::init(filter);
}
