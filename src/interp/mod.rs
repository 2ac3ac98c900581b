//! Setpoint shaping: timed-command lists (DCM `set`) and jerk-limited profiles.
pub mod jerk_profile;
pub mod shaping;
pub mod timed_commands;
