//! usim — a marine vehicle simulator modelled on uSimMarine (MOOS-IvP), with
//! MQTT in place of the MOOS database.
//!
//! A sans-IO core with thin shells around it, in five layers (docs/architecture.md).
//! A module imports modules of its own layer and of the layers listed before it,
//! never of a later one (tests/layers.rs checks this list against the `pub mod`
//! items below, the files of `src/` and the imports).
//!
//! ## Core: the simulation, sans-IO (no clock, files or network)
//!
//! * [`actuator`]: the five `DESIRED_*` actuators and their MOOS names.
//! * [`command`]: message names and payloads → [`command::Command`]s, with bounds.
//! * [`interp`]: setpoint shaping: timed-command lists and jerk-limited profiles.
//! * [`model`]: the uSimMarine and V22 physics ([`model::Vehicle`]); time and
//!   inputs are arguments.
//! * [`obstacle`]: polygon obstacles in uFldObstacleSim's file format: hits,
//!   sensed points and the MOOS-IvP postings (sans-IO).
//! * [`sensor`]: sensor degradation between the true state and the `NAV_*`
//!   postings (noise, Gauss–Markov bias, outliers, dropouts, latency), seeded.
//! * [`text`]: clipping echoed text, the nearest known word to a typo.
//!
//! ## Files: configs, missions and the formats usim reads and writes
//!
//! * [`alog`]: MOOS's alog text log, writer and reader.
//! * [`atomic_file`]: output files that appear whole or not at all.
//! * [`config`]: vehicle configs (TOML) → validated parameters.
//! * [`input_file`]: the one reader of outside files (regular files, size caps).
//! * [`mission`]: mission files: vehicles, timing, posts.
//! * [`moos_import`]: a `.moos` file's uSimMarine block → a vehicle config.
//! * [`nmea`]: NMEA 0183 and AIS out, AIS in (codecs, sans-IO).
//! * [`nsplug`]: MOOS-IvP's mission preprocessor (`#include`, `#define`, `$(MACRO)`).
//! * [`ros2`]: ROS 2 messages in CDR, names, QoS and the state mapping (sans-IO).
//!
//! ## Runners: the offline paths
//!
//! * [`batch`]: a vectorised fleet stepped from setpoint arrays (Python, RL).
//! * [`encounter`]: closest point of approach, near misses, collisions.
//! * [`recording`]: a live run's messages → CSV, MCAP or alog (`usim record`).
//! * [`replay`]: the deterministic mission runner; CSV, posts, MCAP, ROS 2 bag
//!   and alog outputs.
//! * [`sweep`]: seeded Monte Carlo sweeps, shards and their merge.
//!
//! ## Transports: the live shells (sockets and threads)
//!
//! * `dds` (feature `ros2`, on by default): the ROS 2 participant (RustDDS) over
//!   [`ros2`].
//! * [`live`]: the live host every transport shares: clock, ticks,
//!   mailbox, publication set, name claim, stats; transports are adapters
//!   over its [`live::host::Transport`] interface.
//! * [`moos`]: MOOS V10: codec, client, MOOSDB, `usim moos`, the MQTT bridge.
//! * [`mqtt`]: `usim run`/`fleet` on MQTT, the embedded broker, the tools,
//!   `record`'s subscriptions, the NMEA server.
//! * [`view`]: `usim view`, the live fleet view in the browser.
//!
//! ## Tools: what the user calls
//!
//! * [`cli`]: the `usim` command line, one module per subcommand.
//! * `fuzz_entry` (feature `fuzz`, not part of the API): the fuzz target bodies
//!   of `fuzz/`, replayed by `cargo test --test fuzz_corpus`.
//! * [`plot`]: `usim plot` figures (SVG, PNG) from run CSVs and alogs.

// core
pub mod actuator;
pub mod command;
pub mod interp;
pub mod model;
pub mod obstacle;
pub mod sensor;
pub mod text;
// files
pub mod alog;
pub mod atomic_file;
pub mod config;
pub mod input_file;
pub mod mission;
pub mod moos_import;
pub mod nmea;
pub mod nsplug;
pub mod ros2;
// runners
pub mod batch;
pub mod encounter;
pub mod recording;
pub mod replay;
pub mod sweep;
// transports
#[cfg(feature = "ros2")]
pub mod dds;
pub mod live;
pub mod moos;
pub mod mqtt;
pub mod view;
// tools
pub mod cli;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz_entry;
pub mod plot;
