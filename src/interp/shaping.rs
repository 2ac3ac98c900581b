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
#[repr(C)]
pub struct ActuatorSettings {
    /// Mode per actuator, indexed by [`Actuator::index`] (first: a batch
    /// step's setpoints read it; `repr(C)` keeps it next to the bank).
    pub modes: [Interpolation; 5],
    /// Alias name → actuator names (e.g. `THRUSTERS` → L and R).
    pub aliases: Vec<(String, Vec<String>)>,
    /// Cap on pending timed commands per actuator (`None`: the default,
    /// [`crate::interp::timed_commands::DEFAULT_MAX_PENDING`]).
    pub max_pending: [Option<usize>; 5],
}

/// The shaping state of one vehicle: the timed-command bank, the jerk
/// followers, and the last value handed to the model per actuator.
///
/// `repr(C)`, the fields a step reads first: `busy` (read by every model
/// step), then what a batch step's setpoints and idle cycle touch; the
/// vehicle's per-step fields end right before this struct (`Vehicle`'s
/// layout), so `busy` shares their cache lines.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Shaping {
    /// Something may change at the next cycle (pending commands, a moving follower).
    busy: bool,
    /// Some actuator has a jerk follower (fixed at construction).
    has_followers: bool,
    /// Some actuator may hold pending timed commands: set by every `SET`,
    /// recomputed by each full cycle. While it and `has_followers` are
    /// false, a cycle can only restamp the interpolators (no value changes).
    timed: bool,
    /// The last time converted to µs: (`t_s` bits, [`seconds_to_us`] of it).
    /// A batch step converts the same clock for each setpoint and for the
    /// cycle; the memo makes that one conversion.
    time_memo: (u64, Option<i64>),
    /// Last value handed to the model, per actuator.
    fed: [f64; 5],
    bank: ActuatorBank,
    settings: ActuatorSettings,
    /// Boxed: a follower is some hundreds of bytes and most vehicles have
    /// none; inline, five of them made every vehicle ~2 KB larger (memory
    /// a fleet of 100,000 vehicles makes and walks through every step).
    followers: [Option<Box<JerkFollower>>; 5],
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
        let has_followers = followers.iter().any(Option::is_some);
        Shaping {
            settings: settings.clone(),
            bank,
            followers,
            fed: [0.0; 5],
            busy: false,
            has_followers,
            timed: false,
            time_memo: (f64::NAN.to_bits(), None),
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
        let time_us = self.clock_us(t_s)?;
        self.handle_plain_us(act, v, time_us)
    }

    /// [`Shaping::handle_plain`] of a finite `v` received at `time_us`
    /// ([`seconds_to_us`] of the receipt time, checked by the caller).
    #[inline(always)]
    pub fn handle_plain_us(&mut self, act: Actuator, v: f64, time_us: i64) -> Option<f64> {
        debug_assert!(v.is_finite());
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

    /// [`seconds_to_us`] of `t_s`, through the one-entry memo.
    #[inline]
    fn clock_us(&mut self, t_s: f64) -> Option<i64> {
        if t_s.to_bits() != self.time_memo.0 {
            self.convert(t_s);
        }
        self.time_memo.1
    }

    /// The memo's miss, out of line: the hit path must not compute it.
    #[cold]
    #[inline(never)]
    fn convert(&mut self, t_s: f64) {
        self.time_memo = (t_s.to_bits(), seconds_to_us(t_s));
    }

    /// Set the time memo to clock `t_s` and `seconds_to_us(t_s)` computed
    /// by the caller once for many vehicles (a batch step); the next
    /// setpoints and cycle at `t_s` then convert nothing.
    #[inline]
    pub fn prime_time(&mut self, t_s: f64, t_us: Option<i64>) {
        debug_assert_eq!(t_us, seconds_to_us(t_s));
        self.time_memo = (t_s.to_bits(), t_us);
    }

    /// A `SET` call (JSON, docs/formats.md §4) received at `t_s`. On error the
    /// buffers are unchanged.
    pub fn handle_set(&mut self, json: &str, t_s: f64) -> Result<(), String> {
        let call = parse_set(json, t_s).map_err(|e| e.to_string())?;
        self.bank.apply(&call).map_err(|e| e.to_string())?;
        self.busy = true;
        self.timed = true;
        Ok(())
    }

    /// Pending timed commands over all actuators.
    pub fn pending_total(&self) -> usize {
        self.bank.pending_total()
    }

    /// Where `busy` (the one field a model step reads here) lies in the
    /// struct, bytes (the vehicle's layout and prefetch).
    pub(crate) const BUSY_OFFSET: usize = std::mem::offset_of!(Shaping, busy);

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
        if !self.timed && !self.has_followers {
            // Nothing pending and no follower: each actuator's value is the
            // one last handed to the model (`fed`), so nothing is fed; only
            // the interpolators' cycle time and fresh flags move on, as the
            // full cycle below would do (the idle path of plain setpoints,
            // e.g. a batch fleet sending both setpoints every step).
            if let Some(t) = self.clock_us(t_s) {
                self.bank.cycle_idle_us(t);
            }
            self.busy = false;
            return;
        }
        self.bank.cycle(t_s);
        let mut busy = false;
        let mut timed = false;
        for act in Actuator::ALL {
            let i = act.index();
            let target = self.bank.value(act);
            timed |= self.bank.has_pending(act);
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
        self.timed = timed;
        self.busy = busy || timed;
    }
}

/// Check a `SET` payload's syntax without applying it (mission loading).
pub fn check_set(json: &str) -> Result<(), String> {
    parse_set(json, 0.0).map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// value and last command value (bits), cycle and command times (µs),
    /// active, pending count.
    type ActuatorState = (u64, u64, Option<i64>, Option<i64>, bool, usize);

    /// The bank state a cycle can change, per actuator, as bits.
    fn state(bank: &ActuatorBank) -> Vec<ActuatorState> {
        Actuator::ALL
            .iter()
            .map(|&a| {
                let tc = bank.get(a);
                (
                    tc.value().to_bits(),
                    tc.last_command_value().to_bits(),
                    tc.last_cycle_time_us(),
                    tc.last_command_time_us(),
                    tc.is_active(),
                    tc.pending_len(),
                )
            })
            .collect()
    }

    #[test]
    fn the_idle_cycle_leaves_the_bank_as_the_full_cycle_does() {
        // Reference: the same shaping made to take the full cycle every time
        // (`timed` set before each cycle; the full cycle recomputes it).
        let mut s = Shaping::new(&ActuatorSettings::default(), 0.0);
        let mut full = s.clone();
        let set = r#"["DESIRED_THRUST", "ClearAll", [[1, "+0.35"], [40, "+0.9"]]]"#;
        let mut fed_total = 0;
        let mut idle_cycles = 0;
        for k in 1..=80 {
            let t = k as f64 * 0.1;
            if k % 4 != 0 {
                // plain setpoints most steps (the batch fleet's pattern)
                let v = (k % 7) as f64 * 3.5 - 10.0;
                assert_eq!(s.handle_plain(Actuator::Rudder, v, t), Some(v));
                assert_eq!(full.handle_plain(Actuator::Rudder, v, t), Some(v));
            }
            if k == 30 {
                // a SET with future commands: the full cycle until they pass
                s.handle_set(set, t).expect("valid");
                full.handle_set(set, t).expect("valid");
            }
            if s.is_busy() && !s.timed {
                idle_cycles += 1;
            }
            full.timed = true;
            let (mut fed, mut fed_full) = (Vec::new(), Vec::new());
            s.cycle(t, |a, v| fed.push((a, v.to_bits())));
            full.cycle(t, |a, v| fed_full.push((a, v.to_bits())));
            assert_eq!(fed, fed_full, "step {k}");
            assert_eq!(state(&s.bank), state(&full.bank), "step {k}");
            assert_eq!(s.is_busy(), full.is_busy(), "step {k}");
            fed_total += fed.len();
        }
        assert!(idle_cycles > 40, "the idle path ran ({idle_cycles})");
        // the SET ramps thrust from 0 toward 40 % over 0.9 s, then holds
        assert!(fed_total >= 5, "the thrust ramp was fed ({fed_total})");
        assert_eq!(s.bank.value(Actuator::Thrust), 40.0);
    }
}
