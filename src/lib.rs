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
//! * [`moos_import`]: a MOOS `.moos` uSimMarine block → a vehicle config.
//! * [`batch`]: a vectorised fleet stepped from setpoint arrays (Python, RL).
//! * [`replay`]: the deterministic mission runner and its CSV output.
//! * [`mcap_log`]: MCAP output of runs (Foxglove, Rerun, PlotJuggler).
//! * [`plot`]: `usim plot` figures (SVG, PNG) from replay CSVs.
//! * [`mqtt`]: the live vehicle process, the embedded broker and tools.
//! * [`view`]: `usim view`, the live fleet view in the browser.
//! * [`cli`]: the `usim` command line.
//! * [`fuzz_entry`]: fuzz target bodies (`fuzz/`), replayed by `cargo test`.

pub mod atomic_file;
pub mod batch;
pub mod cli;
pub mod command;
pub mod config;
pub mod config_v22;
pub mod encounter;
pub mod fuzz_entry;
pub mod interp;
pub mod mcap_log;
pub mod mission;
pub mod model;
pub mod moos_import;
pub mod mqtt;
pub mod plot;
pub mod replay;
pub mod sweep;
pub mod view;
