//! Setpoint shaping between mail and the model: for each actuator, the
//! timed-command interpolator (and optionally a jerk-limited follower)
//! decides the value the model sees each iteration.
//!
//! A plain number on `DESIRED_*` is a `ClearAll` with one command at the
//! receipt time; it reaches the model at once, exactly as in uSimMarine, so
//! runs without `SET` lists or jerk limits are unchanged.
use crate::model::Actuator;

/// How one actuator's setpoint is shaped (`[actuators.NAME]` in a config).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Interpolation {
    /// Timed lists step to each command's value at its time (no ramp).
    None,
    /// Timed lists are interpolated each cycle (DCM algorithm; default).
    #[default]
    Timed,
    /// Timed interpolation, then a jerk-limited follower.
    Jerk {
        /// Maximum rate, setpoint units per second.
        max_rate: f64,
        /// Maximum acceleration, units per s².
        max_accel: f64,
        /// Maximum jerk, units per s³.
        max_jerk: f64,
    },
}

/// Shaping settings of a vehicle: one mode per actuator plus aliases.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActuatorSettings {
    /// Mode per actuator, indexed by [`Actuator::index`].
    pub modes: [Interpolation; 5],
    /// Alias name → actuator names (e.g. `THRUSTERS` → L and R).
    pub aliases: Vec<(String, Vec<String>)>,
}

/// The shaping state of one vehicle.
#[derive(Debug, Clone)]
pub struct Shaping {
    settings: ActuatorSettings,
}

impl Shaping {
    /// Shaping at rest at clock `t0_s`, all actuators at 0.
    pub fn new(settings: &ActuatorSettings, _t0_s: f64) -> Shaping {
        Shaping {
            settings: settings.clone(),
        }
    }

    /// A plain value `v` for `act` received at `t_s`; returns the value to
    /// hand to the model now (`None` when a follower will deliver it).
    pub fn handle_plain(&mut self, act: Actuator, v: f64, _t_s: f64) -> Option<f64> {
        match self.settings.modes[act.index()] {
            Interpolation::Jerk { .. } => None,
            _ => Some(v),
        }
    }

    /// A `SET` call (JSON, formats.md §4) received at `t_s`.
    pub fn handle_set(&mut self, _json: &str, _t_s: f64) -> Result<(), String> {
        Err("timed-command lists are not wired yet".to_string())
    }

    /// Run the interpolators at iteration time `t_s`; returns the actuators
    /// whose shaped value changed, with the value to hand to the model.
    pub fn cycle(&mut self, _t_s: f64) -> Vec<(Actuator, f64)> {
        Vec::new()
    }
}

/// Check a `SET` payload's syntax without applying it (mission loading).
pub fn check_set(_json: &str) -> Result<(), String> {
    Ok(())
}
