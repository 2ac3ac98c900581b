//! usim — a marine vehicle simulator modelled on uSimMarine (MOOS-IvP), with
//! MQTT in place of the MOOS database.
//!
//! The crate is a sans-IO core with thin shells around it:
//!
//! * [`model`]: the uSimMarine physics ([`model::Vehicle`]); no clock, files or
//!   network — time and inputs are arguments.
//! * [`interp`]: setpoint shaping: timed-command lists and jerk-limited profiles.
//! * [`command`]: parsing of message payloads into [`command::Command`]s.
//! * [`config`], [`mission`]: vehicle configs and mission files (TOML).
//! * [`moos`]: MOOS V10: codec, client, MOOSDB, `usim moos`, the MQTT bridge.
//! * [`moos_import`]: a MOOS `.moos` uSimMarine block → a vehicle config.
//!   (Foxglove, Rerun, PlotJuggler).
//! * [`batch`]: a vectorised fleet stepped from setpoint arrays (Python, RL).
//! * [`mcap_log`]: MCAP output of runs (Foxglove, Rerun, PlotJuggler).
//! * [`replay`]: the deterministic mission runner and its CSV and MCAP output
//! * [`replay`]: the deterministic mission runner and its CSV output.
//! * [`plot`]: `usim plot` figures (SVG, PNG) from replay CSVs.
//! * [`mqtt`]: the live vehicle process, the embedded broker and tools.
//! * [`view`]: `usim view`, the live fleet view in the browser.
//! * [`nmea`]: NMEA 0183 and AIS output (and AIS input), sans-IO.
//! * [`ros2`]: ROS 2 messages in CDR, names, QoS and the state mapping, sans-IO.
//! * `dds` (feature `ros2`, on by default): the DDS participant (RustDDS) over [`ros2`].
//! * [`cli`]: the `usim` command line.
//! * [`fuzz_entry`]: fuzz target bodies (`fuzz/`), replayed by `cargo test`.

pub mod actuator;
pub mod alog;
pub mod atomic_file;
pub mod batch;
pub mod cli;
pub mod command;
pub mod config;
#[cfg(feature = "ros2")]
pub mod dds;
pub mod encounter;
pub mod fuzz_entry;
pub mod input_file;
pub mod interp;
pub mod mission;
pub mod model;
pub mod moos;
pub mod moos_import;
pub mod mqtt;
pub mod nmea;
pub mod nsplug;
pub mod plot;
pub mod replay;
pub mod ros2;
pub mod sweep;
pub mod text;
pub mod view;
