//! The uSimMarine vehicle model, sans-IO (model.md). (API skeleton, being written.)
//!
//! Heading convention: marine degrees, 0 = north (+y), 90 = east (+x),
//! clockwise; x = east metres, y = north metres.
use crate::command::{Command, MessageError};
use crate::config::VehicleConfig;

/// Validated model parameters (model.md §2.2). (Skeleton.)
#[derive(Debug, Clone, Default)]
pub struct Params {}

/// One value the vehicle posts (uSimMarine's `Notify`).
#[derive(Debug, Clone, PartialEq)]
pub enum PubValue {
    /// A double posting.
    Number(f64),
    /// A string posting.
    Text(String),
}

/// One posting: the full variable name (prefix applied, e.g. `NAV_X`) and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Publication {
    /// Variable name as uSimMarine posts it.
    pub var: String,
    /// The value.
    pub value: PubValue,
}

/// The state as the CSV (formats.md §3) and `NODE_REPORT` show it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Snapshot {
    /// Iteration index (0 = after start-up).
    pub k: u64,
    /// Mission time, s (clock − start time).
    pub t: f64,
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
}

/// One simulated vehicle: state, parameters and actuator inputs.
#[derive(Debug, Clone)]
pub struct Vehicle {
    start_time: f64,
}

impl Vehicle {
    /// A vehicle at its start pose; `start_time` is the clock at start-up, s.
    pub fn new(_cfg: &VehicleConfig, start_time: f64) -> Vehicle {
        Vehicle { start_time }
    }

    /// Handle one message received at clock `t_s` (before the next [`Vehicle::step`]).
    /// An error means the message was dropped and the state is unchanged.
    pub fn handle_command(&mut self, _cmd: Command, _t_s: f64) -> Result<(), MessageError> {
        Ok(())
    }

    /// Run one iteration (uSimMarine's `Iterate`) at clock `t_s`; afterwards
    /// [`Vehicle::publications`] holds what this iteration posted.
    pub fn step(&mut self, _t_s: f64) {}

    /// What the last iteration posted (empty on V22's odd iterations).
    pub fn publications(&self) -> &[Publication] {
        &[]
    }

    /// The state for the CSV / NODE_REPORT.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            t: -self.start_time,
            ..Snapshot::default()
        }
    }
}

pub mod current_field;
pub mod geodesy;
