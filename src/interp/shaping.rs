//! Setpoint shaping between mail and the model: for each actuator, the
//! timed-command interpolator (and optionally a jerk-limited follower)
//! decides the value the model sees each iteration.
//!
//! A plain number on `DESIRED_*` is a `ClearAll` with one command at the
//! receipt time; it reaches the model at once, exactly as in uSimMarine, so
//! runs without `SET` lists or jerk limits are unchanged.
use crate::actuator::Actuator;
use crate::interp::jerk_profile::JerkFollower;
use crate::interp::timed_commands::{parse_set, seconds_to_us, ActuatorBank};

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
    /// Cap on pending timed commands per actuator (`None`: the default,
    /// [`crate::interp::timed_commands::DEFAULT_MAX_PENDING`]).
    pub max_pending: [Option<usize>; 5],
}

/// The shaping state of one vehicle: the timed-command bank, the jerk
/// followers, and the last value handed to the model per actuator.
#[derive(Debug, Clone)]
pub struct Shaping {
    settings: ActuatorSettings,
    bank: ActuatorBank,
    /// Boxed: a follower is some hundreds of bytes and most vehicles have
    /// none; inline, five of them made every vehicle ~2 KB larger (memory
    /// a fleet of 100,000 vehicles makes and walks through every step).
    followers: [Option<Box<JerkFollower>>; 5],
    /// Last value handed to the model, per actuator.
    fed: [f64; 5],
    /// Something may change at the next cycle (pending commands, a moving follower).
    busy: bool,
}

impl Shaping {
    /// Shaping at rest at clock `t0_s`, all actuators at 0. Aliases were
    /// validated by the config loader; an invalid one is dropped here.
    pub fn new(settings: &ActuatorSettings, t0_s: f64) -> Shaping {
        let mut bank = ActuatorBank::new(&settings.aliases).unwrap_or_else(|e| {
            tracing::warn!("actuator aliases ignored: {e}");
            ActuatorBank::new(&[]).expect("a bank without aliases always builds")
        });
        bank.start(t0_s);
        let mut followers: [Option<Box<JerkFollower>>; 5] = Default::default();
        for act in Actuator::ALL {
            if let Some(max) = settings.max_pending[act.index()] {
                bank.set_max_pending(act, max);
            }
            match settings.modes[act.index()] {
                Interpolation::None => bank.set_ramp(act, false),
                Interpolation::Timed => {}
                Interpolation::Jerk {
                    max_rate,
                    max_accel,
                    max_jerk,
                } => match JerkFollower::new(max_rate, max_accel, max_jerk, 0.0, t0_s) {
                    Ok(f) => followers[act.index()] = Some(Box::new(f)),
                    Err(e) => tracing::warn!("{}: jerk limits ignored: {e}", act.name()),
                },
            }
        }
        Shaping {
            settings: settings.clone(),
            bank,
            followers,
            fed: [0.0; 5],
            busy: false,
        }
    }

    /// A plain value `v` for `act` received at `t_s`; returns the value to
    /// hand to the model now (`None` when a jerk follower will deliver it).
    #[inline]
    pub fn handle_plain(&mut self, act: Actuator, v: f64, t_s: f64) -> Option<f64> {
        // ActuatorBank::set_plain's refusals (a non-finite value or time),
        // without building its error.
        if !v.is_finite() {
            return None;
        }
        let time_us = seconds_to_us(t_s)?;
        self.bank.set_plain_us(act, v, time_us);
        self.busy = true;
        match self.settings.modes[act.index()] {
            Interpolation::Jerk { .. } => None,
            _ => {
                self.fed[act.index()] = v;
                Some(v)
            }
        }
    }

    /// A `SET` call (JSON, docs/formats.md §4) received at `t_s`. On error the
    /// buffers are unchanged.
    pub fn handle_set(&mut self, json: &str, t_s: f64) -> Result<(), String> {
        let call = parse_set(json, t_s).map_err(|e| e.to_string())?;
        self.bank.apply(&call).map_err(|e| e.to_string())?;
        self.busy = true;
        Ok(())
    }

    /// Pending timed commands over all actuators.
    pub fn pending_total(&self) -> usize {
        self.bank.pending_total()
    }

    /// Whether the next [`Shaping::cycle`] may change anything.
    pub fn is_busy(&self) -> bool {
        self.busy
    }

    /// Run the interpolators at iteration time `t_s` and call `feed` for
    /// each actuator whose shaped value changed, with the value for the model.
    pub fn cycle(&mut self, t_s: f64, mut feed: impl FnMut(Actuator, f64)) {
        if !self.busy {
            return;
        }
        self.bank.cycle(t_s);
        let mut busy = false;
        for act in Actuator::ALL {
            let i = act.index();
            let target = self.bank.value(act);
            busy |= self.bank.has_pending(act);
            let out = match &mut self.followers[i] {
                Some(f) => {
                    let out = f.sample(target, t_s);
                    let sp = f.setpoint();
                    busy |= out != target || sp.v != 0.0 || sp.a != 0.0;
                    out
                }
                None => target,
            };
            if out != self.fed[i] && out.is_finite() {
                self.fed[i] = out;
                feed(act, out);
            }
        }
        self.busy = busy;
    }
}

/// Check a `SET` payload's syntax without applying it (mission loading).
pub fn check_set(json: &str) -> Result<(), String> {
    parse_set(json, 0.0).map(|_| ()).map_err(|e| e.to_string())
}
