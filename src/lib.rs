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
//! * [`replay`]: the deterministic mission runner and its CSV output.
//! * [`mqtt`]: the live vehicle process, the embedded broker and tools.
//! * [`cli`]: the `usim` command line.

pub mod cli;
pub mod command;
pub mod config;
pub mod interp;
pub mod mission;
pub mod model;
pub mod moos_import;
pub mod mqtt;
pub mod replay;
