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
/// step), then what a batch step's setpoints and idle cycle touch (the
/// flags, the [`Deferred`] record, the time memo, `fed`: two cache lines);
/// the vehicle's per-step fields end right before this struct
/// (`Vehicle`'s layout), so `busy` shares their cache lines.
///
/// While no actuator may hold timed commands and none has a jerk follower
/// (plain setpoints only, e.g. a batch fleet sending every setpoint every
/// step), plain values and idle cycles are not written into the bank's
/// five interpolators (nine cache lines) but into [`Deferred`], and
/// written back before anything reads the bank (a `SET`, a full cycle,
/// `Debug`): the bank then holds exactly what the eager updates would
/// have left (tests below). `Debug` shows that written-back state, in
/// the fields' order, without the record.
#[derive(Clone)]
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
    /// Bit `i`: actuator `i`'s mode is [`Interpolation::Jerk`] (from
    /// `settings`, fixed; read by every plain value instead of the modes).
    jerk: u8,
    /// Whether `memo_us` holds a time (the memo's `Option`, kept apart so
    /// that the memo takes 16 bytes, not 24).
    memo_some: bool,
    /// The bank updates held back (see the struct's documentation).
    deferred: Deferred,
    /// The last time converted to µs: `t_s` bits, and [`seconds_to_us`]
    /// of it in `memo_us` (if `memo_some`). A batch step converts the
    /// same clock for each setpoint and for the cycle; the memo makes
    /// that one conversion.
    memo_bits: u64,
    /// See `memo_bits`.
    memo_us: i64,
    /// Last value handed to the model, per actuator.
    fed: [f64; 5],
    bank: ActuatorBank,
    settings: ActuatorSettings,
    /// Boxed: a follower is some hundreds of bytes and most vehicles have
    /// none; inline, five of them made every vehicle ~2 KB larger (memory
    /// a fleet of 100,000 vehicles makes and walks through every step).
    followers: [Option<Box<JerkFollower>>; 5],
}

/// Plain values and idle cycles not yet written into the bank (bit `i` of
/// a mask: actuator `i`). Only while `on`: then no actuator has pending
/// timed commands, a jerk mode or a follower, and the value of each
/// actuator set here is `Shaping::fed` (a plain value is fed at once).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
struct Deferred {
    /// The record is in use: the bank lags behind it.
    on: bool,
    /// Actuators given a plain value since the write-back: each is the
    /// bank's `set_now(fed[i], times[i])` to do.
    set: u8,
    /// Each actuator's `fresh` flag (a plain value since the last cycle).
    fresh: u8,
    /// Each actuator's `driven` flag (`is_active`).
    driven: u8,
    /// Some idle cycle ran since the write-back, the last at `cycle_us`.
    cycled: bool,
    /// The last idle cycle's time, µs (every actuator's cycle time).
    cycle_us: i64,
    /// Receipt times of the plain values in `set`, µs.
    times: [i64; 5],
}

impl Deferred {
    /// Write the record into `bank` (values from `fed`); the record is
    /// then empty (still `on`).
    fn write_back(&mut self, bank: &mut ActuatorBank, fed: &[f64; 5]) {
        for act in Actuator::ALL {
            let i = act.index();
            let bit = 1u8 << i;
            let tc = bank.get_mut(act);
            if self.set & bit != 0 {
                tc.set_now(fed[i], self.times[i]);
            }
            let cycle = self.cycled.then_some(self.cycle_us);
            tc.restore_idle(self.fresh & bit != 0, self.driven & bit != 0, cycle);
        }
        self.set = 0;
        self.cycled = false;
    }
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
        let jerk = Actuator::ALL
            .iter()
            .filter(|a| matches!(settings.modes[a.index()], Interpolation::Jerk { .. }))
            .fold(0u8, |m, a| m | 1 << a.index());
        let mut s = Shaping {
            settings: settings.clone(),
            bank,
            followers,
            fed: [0.0; 5],
            busy: false,
            has_followers,
            timed: false,
            jerk,
            deferred: Deferred::default(),
            memo_some: false,
            memo_bits: f64::NAN.to_bits(),
            memo_us: 0,
        };
        s.defer_if_plain();
        s
    }

    /// Start deferring (see [`Shaping`]) if only plain values can come:
    /// no pending timed commands, no follower, no jerk mode. The record
    /// starts from the bank's flags.
    fn defer_if_plain(&mut self) {
        if self.timed || self.has_followers || self.jerk != 0 || self.deferred.on {
            return;
        }
        let mut d = Deferred {
            on: true,
            ..Deferred::default()
        };
        for act in Actuator::ALL {
            let (fresh, driven) = self.bank.get(act).idle_flags();
            d.fresh |= u8::from(fresh) << act.index();
            d.driven |= u8::from(driven) << act.index();
        }
        self.deferred = d;
    }

    /// Write the deferred updates into the bank and stop deferring (before
    /// a `SET` or a full cycle uses the bank).
    #[cold]
    #[inline(never)]
    fn stop_deferring(&mut self) {
        self.deferred.write_back(&mut self.bank, &self.fed);
        self.deferred.on = false;
    }

    /// The bank as the eager updates would have left it.
    fn bank_view(&self) -> std::borrow::Cow<'_, ActuatorBank> {
        if !self.deferred.on {
            return std::borrow::Cow::Borrowed(&self.bank);
        }
        let mut bank = self.bank.clone();
        let mut d = self.deferred;
        d.write_back(&mut bank, &self.fed);
        std::borrow::Cow::Owned(bank)
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
        let i = act.index();
        let bit = 1u8 << i;
        self.busy = true;
        if self.deferred.on {
            // the bank's set_now, deferred (no jerk mode: fed at once)
            let d = &mut self.deferred;
            d.set |= bit;
            d.fresh |= bit;
            d.times[i] = time_us;
            self.fed[i] = v;
            return Some(v);
        }
        self.bank.set_plain_us(act, v, time_us);
        if self.jerk & bit != 0 {
            None
        } else {
            self.fed[i] = v;
            Some(v)
        }
    }

    /// [`seconds_to_us`] of `t_s`, through the one-entry memo.
    #[inline]
    fn clock_us(&mut self, t_s: f64) -> Option<i64> {
        if t_s.to_bits() != self.memo_bits {
            self.convert(t_s);
        }
        self.memo_some.then_some(self.memo_us)
    }

    /// The memo's miss, out of line: the hit path must not compute it.
    #[cold]
    #[inline(never)]
    fn convert(&mut self, t_s: f64) {
        self.set_memo(t_s, seconds_to_us(t_s));
    }

    /// Set the time memo to clock `t_s` and `seconds_to_us(t_s)` computed
    /// by the caller once for many vehicles (a batch step); the next
    /// setpoints and cycle at `t_s` then convert nothing.
    #[inline]
    pub fn prime_time(&mut self, t_s: f64, t_us: Option<i64>) {
        debug_assert_eq!(t_us, seconds_to_us(t_s));
        self.set_memo(t_s, t_us);
    }

    #[inline(always)]
    fn set_memo(&mut self, t_s: f64, t_us: Option<i64>) {
        self.memo_bits = t_s.to_bits();
        self.memo_some = t_us.is_some();
        self.memo_us = t_us.unwrap_or(0);
    }

    /// A `SET` call (JSON, docs/formats.md §4) received at `t_s`. On error the
    /// buffers are unchanged.
    pub fn handle_set(&mut self, json: &str, t_s: f64) -> Result<(), String> {
        let call = parse_set(json, t_s).map_err(|e| e.to_string())?;
        if self.deferred.on {
            self.stop_deferring();
        }
        if let Err(e) = self.bank.apply(&call) {
            // refused: nothing changed; defer again
            self.defer_if_plain();
            return Err(e.to_string());
        }
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

    /// Where the fields a plain `DESIRED_THRUST` or `DESIRED_RUDDER` and
    /// the idle cycle touch end (the flags, the deferral record, the time
    /// memo, `fed` of those two), bytes: a batch step prefetches up to here.
    pub(crate) const SETPOINT_END: usize = std::mem::offset_of!(Shaping, fed) + 16;

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
                if self.deferred.on {
                    let d = &mut self.deferred;
                    d.driven = d.fresh;
                    d.fresh = 0;
                    d.cycled = true;
                    d.cycle_us = t;
                } else {
                    self.bank.cycle_idle_us(t);
                }
            }
            self.busy = false;
            return;
        }
        if self.deferred.on {
            self.stop_deferring();
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
        self.defer_if_plain();
    }
}

impl std::fmt::Debug for Shaping {
    /// As `#[derive(Debug)]` would show the fields, the bank written back
    /// and the deferral record left out: the same text whether or not
    /// updates are deferred.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shaping")
            .field("busy", &self.busy)
            .field("has_followers", &self.has_followers)
            .field("timed", &self.timed)
            .field(
                "time_memo",
                &(self.memo_bits, self.memo_some.then_some(self.memo_us)),
            )
            .field("fed", &self.fed)
            .field("bank", &self.bank_view())
            .field("settings", &self.settings)
            .field("followers", &self.followers)
            .finish()
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
        let mut full = eager(s.clone());
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
            assert_eq!(state(&s.bank_view()), state(&full.bank), "step {k}");
            assert_eq!(s.is_busy(), full.is_busy(), "step {k}");
            fed_total += fed.len();
        }
        assert!(idle_cycles > 40, "the idle path ran ({idle_cycles})");
        // the SET ramps thrust from 0 toward 40 % over 0.9 s, then holds
        assert!(fed_total >= 5, "the thrust ramp was fed ({fed_total})");
        assert_eq!(s.bank_view().value(Actuator::Thrust), 40.0);
    }

    /// The eager reference: a shaping (fresh, nothing deferred yet) that
    /// never defers, so every plain value goes straight into the bank and
    /// every cycle is the full one (marked as having followers, it has
    /// none: the full cycle then feeds and flags exactly as the idle one,
    /// which the test above checks).
    fn eager(mut s: Shaping) -> Shaping {
        assert!(s.deferred.on && s.deferred.set == 0 && !s.deferred.cycled);
        s.deferred.on = false;
        s.has_followers = true;
        s
    }

    /// A small deterministic generator for the random sequences (Knuth's
    /// MMIX LCG, top 53 bits).
    struct Lcg(u64);

    impl Lcg {
        fn unit(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Deferred plain values and idle cycles against the eager updates of
    /// the bank: after every step of a random sequence of plain values
    /// (all five actuators, refused times among them), `SET` calls
    /// (future ramps, empty `ClearAll`, refused ones) and cycles (some at
    /// a time that does not convert), the written-back bank, every
    /// interpolator field included (`Debug`), the fed values and the
    /// flags equal the eager ones, and `Debug` of the deferring shaping
    /// shows that bank.
    #[test]
    fn deferred_updates_equal_the_eager_ones() {
        let mut none = ActuatorSettings::default();
        none.modes[Actuator::Rudder.index()] = Interpolation::None;
        for settings in [ActuatorSettings::default(), none] {
            let mut lazy = Shaping::new(&settings, 0.5);
            let mut ref_ = eager(Shaping::new(&settings, 0.5));
            assert!(lazy.deferred.on);
            let mut rng = Lcg(26);
            let (mut deferred_cycles, mut sets) = (0, 0);
            for k in 1..=4000u64 {
                let t = k as f64 * 0.1;
                for _ in 0..(rng.unit() * 4.0) as usize {
                    let act = Actuator::ALL[(rng.unit() * 5.0) as usize % 5];
                    let v = (rng.unit() - 0.5) * 250.0;
                    let at = if rng.unit() < 0.03 { f64::NAN } else { t };
                    assert_eq!(lazy.handle_plain(act, v, at), ref_.handle_plain(act, v, at));
                }
                let set = match (rng.unit() * 60.0) as u32 {
                    0 => Some(format!(
                        r#"["DESIRED_THRUST", "ClearAll", [[{:.2}, 70], [{:.2}, -20]]]"#,
                        t + 0.35,
                        t + 1.2
                    )),
                    1 => Some(r#"["DESIRED_RUDDER", "ClearAll", []]"#.to_string()),
                    2 => Some(format!(
                        r#"["DESIRED_ELEVATOR", "Merge", [[{:.2}, 5]]]"#,
                        t + 0.5
                    )),
                    3 => Some(r#"["NOT_AN_ACTUATOR", "Merge", [[1, 5]]]"#.to_string()),
                    _ => None,
                };
                if let Some(json) = set {
                    let (a, b) = (lazy.handle_set(&json, t), ref_.handle_set(&json, t));
                    assert_eq!(a, b, "k {k}");
                    sets += usize::from(a.is_ok());
                }
                if lazy.deferred.on && lazy.is_busy() {
                    deferred_cycles += 1;
                }
                let at = if rng.unit() < 0.02 { f64::INFINITY } else { t };
                let (mut fa, mut fb) = (Vec::new(), Vec::new());
                lazy.cycle(at, |a, v| fa.push((a, v.to_bits())));
                ref_.cycle(at, |a, v| fb.push((a, v.to_bits())));
                assert_eq!(fa, fb, "k {k}");
                assert_eq!(lazy.busy, ref_.busy, "k {k}");
                assert_eq!(lazy.timed, ref_.timed, "k {k}");
                let (fa, fb) = (lazy.fed.map(f64::to_bits), ref_.fed.map(f64::to_bits));
                assert_eq!(fa, fb, "k {k}");
                assert_eq!(
                    format!("{:?}", lazy.bank_view()),
                    format!("{:?}", ref_.bank)
                );
                // Debug shows the written-back bank (the time memo may
                // differ: the full cycle converts its time without it)
                let bank = format!("bank: {:?}", ref_.bank);
                assert!(format!("{lazy:?}").contains(&bank), "k {k}");
            }
            // both paths ran: deferred cycles and SETs (full cycles)
            assert!(deferred_cycles > 2000, "{deferred_cycles}");
            assert!(sets > 50, "{sets}");
        }
    }
}
