//! The five `DESIRED_*` actuators of the simulator, each with its own
//! [`TimedCommands`], and the aliases that name groups of them.
pub use crate::actuator::Actuator;

use super::{seconds_to_us, SetCall, SetError, TimedCommands};

/// The timed-command state of every actuator, plus the aliases.
///
/// Use: [`apply`](Self::apply) each `SET` call and
/// [`set_plain`](Self::set_plain) each plain number on a `DESIRED_*`
/// variable as they arrive; each iteration, [`cycle`](Self::cycle) at the
/// iteration time before the model step, then read [`value`](Self::value) of
/// the actuators that [`is_active`](Self::is_active).
///
/// `repr(C)`, the actuators first: a batch step's setpoints and cycle read
/// them, next to the shaping flags before them (`Shaping`'s layout).
#[derive(Debug, Clone)]
#[repr(C)]
pub struct ActuatorBank {
    actuators: [TimedCommands; 5],
    aliases: Vec<(String, Vec<Actuator>)>,
}

impl ActuatorBank {
    /// A bank with every actuator at 0 and the given aliases: `(alias name,
    /// member actuator names)`, e.g. `("THRUSTERS", ["DESIRED_THRUST_L",
    /// "DESIRED_THRUST_R"])`.
    ///
    /// Errors: an alias with no members, a member that is not an actuator
    /// (aliases of aliases included), an alias named like an actuator, or the
    /// same alias twice. Repeated members count once.
    pub fn new(aliases: &[(String, Vec<String>)]) -> Result<ActuatorBank, SetError> {
        let mut resolved: Vec<(String, Vec<Actuator>)> = Vec::with_capacity(aliases.len());
        for (name, members) in aliases {
            if Actuator::from_name(name).is_some() {
                return Err(SetError::Alias(format!(
                    "{name:?} is an actuator name, not a new alias"
                )));
            }
            if resolved.iter().any(|(n, _)| n == name) {
                return Err(SetError::Alias(format!("{name:?} is defined twice")));
            }
            if members.is_empty() {
                return Err(SetError::Alias(format!("{name:?} has no members")));
            }
            let mut list = Vec::with_capacity(members.len());
            for m in members {
                let a = Actuator::from_name(m).ok_or_else(|| {
                    SetError::Alias(format!(
                        "{name:?}: unknown actuator {m:?} (known: {})",
                        Actuator::ALL.map(Actuator::name).join(", ")
                    ))
                })?;
                if !list.contains(&a) {
                    list.push(a);
                }
            }
            resolved.push((name.clone(), list));
        }
        Ok(ActuatorBank {
            actuators: Default::default(),
            aliases: resolved,
        })
    }

    /// The actuators named by `name`: one actuator, or an alias's members.
    pub fn resolve(&self, name: &str) -> Result<Vec<Actuator>, SetError> {
        if let Some(a) = Actuator::from_name(name) {
            return Ok(vec![a]);
        }
        if let Some((_, members)) = self.aliases.iter().find(|(n, _)| n == name) {
            return Ok(members.clone());
        }
        let known = Actuator::ALL
            .iter()
            .map(|a| a.name().to_string())
            .chain(self.aliases.iter().map(|(n, _)| n.clone()))
            .collect();
        Err(SetError::UnknownActuator {
            name: name.to_string(),
            known,
        })
    }

    /// Applies a parsed `set` call to its actuator or to each member of its
    /// alias. Atomic: on error (unknown target) nothing changes.
    pub fn apply(&mut self, call: &SetCall) -> Result<(), SetError> {
        let targets = self.resolve(&call.target)?;
        // Check every member first, so a refusal changes nothing.
        for &a in &targets {
            let tc = &self.actuators[a.index()];
            let after = tc.count_after(call.update, &call.commands);
            if after > tc.max_pending() {
                return Err(SetError::TooMany {
                    actuator: a.name().to_string(),
                    pending: after,
                    max: tc.max_pending(),
                });
            }
        }
        for a in targets {
            // Cannot fail: checked above.
            let _ = self.actuators[a.index()].try_apply(call.update, &call.commands);
        }
        Ok(())
    }

    /// Sets the cap on pending commands of `actuator` (see
    /// [`TimedCommands::set_max_pending`]).
    pub fn set_max_pending(&mut self, actuator: Actuator, max: usize) {
        self.actuators[actuator.index()].set_max_pending(max);
    }

    /// Pending commands over all actuators.
    pub fn pending_total(&self) -> usize {
        self.actuators.iter().map(TimedCommands::pending_len).sum()
    }

    /// A plain number posted on a `DESIRED_*` variable at `t_s` (vehicle
    /// clock, s): the pending commands are dropped and the value holds from
    /// now on, as if a command at `t_s` had just been applied
    /// ([`TimedCommands::set_now`]; uSimMarine's behaviour). Messages of one
    /// iteration therefore act in arrival order: a `SET` after the plain
    /// value acts on it, and cannot bring back an older value.
    /// Errors (nothing changes): a NaN/infinite value or time.
    pub fn set_plain(&mut self, actuator: Actuator, value: f64, t_s: f64) -> Result<(), SetError> {
        if !value.is_finite() {
            let name = actuator.name();
            return Err(SetError::Value(format!(
                "{name}: value {value} is not finite"
            )));
        }
        let time_us = seconds_to_us(t_s).ok_or(SetError::ReceiptTime(t_s))?;
        self.actuators[actuator.index()].set_now(value, time_us);
        Ok(())
    }

    /// [`set_plain`](Self::set_plain) with the checks done by the caller: a
    /// finite `value` received at `time_us` (from [`seconds_to_us`]).
    #[inline]
    pub fn set_plain_us(&mut self, actuator: Actuator, value: f64, time_us: i64) {
        self.actuators[actuator.index()].set_now(value, time_us);
    }

    /// Sets the time of a virtual cycle before the first one (s), for every
    /// actuator: the first [`cycle`](Self::cycle) ramps from there. Call it
    /// with the start-up time (or run `cycle` once at start-up). A non-finite
    /// time is ignored.
    pub fn start(&mut self, t_s: f64) {
        if let Some(t) = seconds_to_us(t_s) {
            self.actuators.iter_mut().for_each(|tc| tc.start_us(t));
        }
    }

    /// Ramp (`true`, default) or step (`false`) toward the commands of
    /// `actuator`: see [`TimedCommands::set_ramp`].
    pub fn set_ramp(&mut self, actuator: Actuator, ramp: bool) {
        self.actuators[actuator.index()].set_ramp(ramp);
    }

    /// Runs every actuator's interpolator at the iteration time `t_s`
    /// (vehicle clock, s). A NaN/infinite time is ignored (nothing changes).
    pub fn cycle(&mut self, t_s: f64) {
        if let Some(t) = seconds_to_us(t_s) {
            self.actuators.iter_mut().for_each(|tc| {
                tc.cycle_us(t);
            });
        }
    }

    /// [`cycle`](Self::cycle) at `t_us` (from [`seconds_to_us`]) when no
    /// actuator has pending commands (the caller knows): the same state
    /// changes, without looking for commands.
    #[inline]
    pub fn cycle_idle_us(&mut self, t_us: i64) {
        self.actuators
            .iter_mut()
            .for_each(|tc| tc.cycle_idle_us(t_us));
    }

    /// The setpoint of `actuator` after the last cycle (`lastCommandDouble`),
    /// in its unit (percent).
    pub fn value(&self, actuator: Actuator) -> f64 {
        self.actuators[actuator.index()].value()
    }

    /// Whether the last cycle set `actuator` from its timed list (a command
    /// applied or interpolated): then feed [`value`](Self::value) to the
    /// model. `false` when the list is exhausted and the value holds.
    pub fn is_active(&self, actuator: Actuator) -> bool {
        self.actuators[actuator.index()].is_active()
    }

    /// Whether `actuator` has pending commands.
    pub fn has_pending(&self, actuator: Actuator) -> bool {
        self.actuators[actuator.index()].pending_len() > 0
    }

    /// The timed-command state of `actuator`, to change (the shaping
    /// layer's write-back of deferred plain values and idle cycles).
    #[inline]
    pub(crate) fn get_mut(&mut self, actuator: Actuator) -> &mut TimedCommands {
        &mut self.actuators[actuator.index()]
    }

    /// The full timed-command state of `actuator`.
    pub fn get(&self, actuator: Actuator) -> &TimedCommands {
        &self.actuators[actuator.index()]
    }
}
