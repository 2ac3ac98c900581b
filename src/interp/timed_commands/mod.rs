/*!
Timed-command lists and their per-cycle interpolation (the DCM `set`
semantics of the seed documents `000_…`/`001_…`/`004_…`).

This module owns:

* [`TimedCommands`]: the buffer of pending commands of **one** actuator and
  the interpolator that runs once per cycle, with the state of the seed
  algorithm (`sendCommand`, `lastCommandDouble`, `lastCommandValue`,
  `lastCycleTime`, `lastCommandTime`);
* [`UpdateKind`]: how a new list is merged into the pending ones;
* [`parse_set`] / [`SetCall`] / [`SetError`]: the `SET` payload of
  docs/formats.md §4, `["DESIRED_RUDDER", "Merge", [[30.0, 12.0], [0.0, 14.5, 0]]]`;
* [`ActuatorBank`] / [`Actuator`]: the five `DESIRED_*` actuators of the
  simulator with their aliases.

It is sans-IO: no clock, no files, no logging. Time is always an argument.

# Time

Times are seconds (`f64`) at the API and **integer microseconds** (`i64`)
inside, so that two commands given at the same time in seconds compare equal.
Conversion rounds to the nearest microsecond ([`seconds_to_us`]); accepted
times lie within ±[`MAX_TIME_US`] µs (about ±73,000 years), so that every
difference of two times fits an `i64`.

# The per-cycle algorithm

Each cycle at time `now` (one call of [`TimedCommands::cycle_us`]), with
`prev` the time of the previous cycle:

1. While the earliest pending command has `time <= now` (it has passed): it is
   applied — `lastCommandDouble = lastCommandValue = value`,
   `sendCommand = round(value)`, `lastCommandTime = time` — and removed; the
   loop goes on with the next one.
2. If a pending command remains (it lies in the future, at `(T, V)`): when the
   last applied command happened between the previous cycle and this one
   (`prev <= lastCommandTime <= now`), the ramp starts at
   `(lastCommandTime, lastCommandValue)`, otherwise at
   `(prev, lastCommandDouble)`. With `(t0, v0)` that start,
   `lastCommandDouble = ((V − v0)·(now − t0)) / (T − t0) + v0` and
   `sendCommand` is its nearest integer.
3. `lastCycleTime = now`.

Departures from the seed, all for robustness and none visible in its
examples: before the first cycle `prev` is taken as `now` (the value holds)
unless [`TimedCommands::start_us`] gave a start time; if the clock goes
backwards `t0` is clamped to `now` (the value holds for that cycle); the
interpolated value is clamped to the interval between `v0` and `V`, which
only matters when the formula overflows for values near `f64::MAX`.

# Update kinds

See [`UpdateKind`]. Two commands at the same microsecond: the newer one
replaces the older one (within one list, the later item wins). This is
deterministic where the DCM warns the result is unpredictable.

# Cost

Pending commands are a `BTreeMap` keyed by time with the earliest one cached:
a cycle in which nothing is due reads only the cache (O(1)); each applied
command costs one B-tree removal (O(log n)), paid once per command; a merge of
`k` commands into `n` costs O(k log n); `ClearAfter`/`ClearBefore` split the
tree in O(log n) plus the dropped commands.
*/

mod bank;
mod parse;

use std::collections::BTreeMap;

pub use bank::{Actuator, ActuatorBank};
pub use parse::{parse_commands, parse_set, SetCall, SetError};

/// Largest accepted magnitude of a time, µs (2^61 µs ≈ 73,000 years).
pub const MAX_TIME_US: i64 = 1 << 61;

/// Default cap on the pending commands of one actuator (a vehicle config's
/// `[actuators.NAME] max_pending`): a `SET` that would leave more pending is
/// refused whole. 10,000 commands are about 10 minutes of a 16 Hz profile
/// and at most ~0.5 MB of memory per actuator.
pub const DEFAULT_MAX_PENDING: usize = 10_000;

/// Converts seconds to the nearest integer microsecond.
///
/// `None` if `t_s` is NaN, infinite, or beyond ±[`MAX_TIME_US`] µs.
pub fn seconds_to_us(t_s: f64) -> Option<i64> {
    let us = round_half_away(t_s * 1e6);
    if us.is_finite() && us.abs() <= MAX_TIME_US as f64 {
        Some(us as i64)
    } else {
        None
    }
}

/// `x.round()` (nearest integer, halves away from zero) without the
/// software `round` call that targets without SSE4.1 make of it (about 25
/// instructions, twice per setpoint and once per cycle in a batch step):
/// the same value for every `f64`, NaN and ±0 included (checked against
/// `f64::round` in the tests).
#[inline]
pub fn round_half_away(x: f64) -> f64 {
    // 2^52: from there on every f64 is an integer.
    const TWO52: f64 = 4_503_599_627_370_496.0;
    let y = x.abs();
    if y.is_nan() || y >= TWO52 {
        return x; // NaN, ±inf, or an integer already
    }
    // y + 2^52 rounds y to the nearest integer, ties to even (exact below 2^52).
    let mut r = (y + TWO52) - TWO52;
    // r − y is exact (Sterbenz, or r = 0); a tie rounded down goes up instead.
    if r - y == -0.5 {
        r += 1.0;
    }
    r.copysign(x)
}

/// Converts integer microseconds to seconds (nearest `f64`).
pub fn us_to_seconds(t_us: i64) -> f64 {
    t_us as f64 / 1e6
}

/// One timed command: reach `value` at `time_us`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimedCommand {
    /// The setpoint, in the actuator's unit (percent for the `DESIRED_*`
    /// actuators). Always finite.
    pub value: f64,
    /// When the value is to be reached, vehicle clock in integer µs.
    pub time_us: i64,
}

/// How a new list of timed commands is combined with the pending ones
/// (seed `004_…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpdateKind {
    /// Add the new commands to the pending ones.
    Merge,
    /// Drop every pending command, then add the new ones. With an empty list
    /// this only clears: the last value is kept.
    ClearAll,
    /// Drop the pending commands at or after the earliest new command, then
    /// add the new ones. With an empty list nothing is dropped.
    ClearAfter,
    /// Drop the pending commands at or before the latest new command, then
    /// add the new ones. With an empty list nothing is dropped.
    ClearBefore,
}

impl UpdateKind {
    /// All kinds, in the order of the DCM documentation.
    pub const ALL: [UpdateKind; 4] = [
        UpdateKind::ClearAll,
        UpdateKind::Merge,
        UpdateKind::ClearAfter,
        UpdateKind::ClearBefore,
    ];

    /// The kind named exactly `name` (`"Merge"`, `"ClearAll"`, `"ClearAfter"`,
    /// `"ClearBefore"`; case-sensitive, as in the DCM).
    pub fn from_name(name: &str) -> Option<UpdateKind> {
        UpdateKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The DCM name of the kind.
    pub fn name(self) -> &'static str {
        match self {
            UpdateKind::Merge => "Merge",
            UpdateKind::ClearAll => "ClearAll",
            UpdateKind::ClearAfter => "ClearAfter",
            UpdateKind::ClearBefore => "ClearBefore",
        }
    }
}

impl std::fmt::Display for UpdateKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The pending timed commands of one actuator and its interpolator.
///
/// Inputs: [`apply`](Self::apply) (a `set` call), [`start_us`](Self::start_us).
/// Per cycle: [`cycle_us`](Self::cycle_us). Outputs: getters.
#[derive(Debug, Clone)]
pub struct TimedCommands {
    /// Pending commands by time (µs); at most one per microsecond.
    pending: BTreeMap<i64, f64>,
    /// Copy of the earliest pending command, so an idle cycle is O(1).
    front: Option<(i64, f64)>,
    last_command_double: f64,
    last_command_value: f64,
    last_cycle_time_us: Option<i64>,
    last_command_time_us: Option<i64>,
    driven: bool,
    /// `false`: no ramp, each command is stepped to at its time.
    ramp: bool,
    /// A plain value was applied since the last cycle (that cycle reports
    /// [`is_active`](Self::is_active)).
    fresh: bool,
    /// Most pending commands [`try_apply`](Self::try_apply) accepts.
    max_pending: usize,
}

impl Default for TimedCommands {
    fn default() -> Self {
        TimedCommands::new(0.0)
    }
}

impl TimedCommands {
    /// An actuator holding `initial` (its unit; a non-finite value is taken
    /// as 0), with no pending commands and no cycle run yet.
    pub fn new(initial: f64) -> TimedCommands {
        let initial = if initial.is_finite() { initial } else { 0.0 };
        TimedCommands {
            pending: BTreeMap::new(),
            front: None,
            last_command_double: initial,
            last_command_value: initial,
            last_cycle_time_us: None,
            last_command_time_us: None,
            driven: false,
            ramp: true,
            fresh: false,
            max_pending: DEFAULT_MAX_PENDING,
        }
    }

    /// Sets the cap on pending commands used by [`try_apply`](Self::try_apply)
    /// (at least 1).
    pub fn set_max_pending(&mut self, max: usize) {
        self.max_pending = max.max(1);
    }

    /// The cap on pending commands (see [`set_max_pending`](Self::set_max_pending)).
    pub fn max_pending(&self) -> usize {
        self.max_pending
    }

    /// A plain value received at `time_us`: every pending command is dropped
    /// and `value` becomes the current value at once, as if a command at
    /// `time_us` had just been applied (uSimMarine applies a plain setpoint
    /// on receipt). Because it takes effect immediately, a later `SET` in the
    /// same iteration (e.g. `ClearAll` with no commands) cannot undo it: the
    /// later message wins. A non-finite value is ignored.
    pub fn set_now(&mut self, value: f64, time_us: i64) {
        if !value.is_finite() {
            return;
        }
        if !self.pending.is_empty() {
            self.pending = BTreeMap::new();
        }
        self.front = None;
        self.last_command_double = value;
        self.last_command_value = value;
        self.last_command_time_us = Some(time_us.clamp(-MAX_TIME_US, MAX_TIME_US));
        self.fresh = true;
    }

    /// [`apply`](Self::apply) unless the pending commands would then exceed
    /// the cap ([`DEFAULT_MAX_PENDING`] unless set): then nothing changes and
    /// the error is the number of commands that would have been pending.
    pub fn try_apply(
        &mut self,
        update: UpdateKind,
        commands: &[TimedCommand],
    ) -> Result<(), usize> {
        let after = self.count_after(update, commands);
        if after > self.max_pending {
            return Err(after);
        }
        self.apply(update, commands);
        Ok(())
    }

    /// How many commands would be pending after `apply(update, commands)`.
    pub(crate) fn count_after(&self, update: UpdateKind, commands: &[TimedCommand]) -> usize {
        let mut new: Vec<i64> = commands
            .iter()
            .filter(|c| c.value.is_finite())
            .map(|c| c.time_us.clamp(-MAX_TIME_US, MAX_TIME_US))
            .collect();
        new.sort_unstable();
        new.dedup();
        let (kept, overlaps): (usize, Box<dyn Fn(i64) -> bool + '_>) = match update {
            UpdateKind::Merge => (
                self.pending.len(),
                Box::new(|t| self.pending.contains_key(&t)),
            ),
            UpdateKind::ClearAll => (0, Box::new(|_| false)),
            UpdateKind::ClearAfter => match new.first() {
                Some(&first) => (self.pending.range(..first).count(), Box::new(|_| false)),
                None => (self.pending.len(), Box::new(|_| false)),
            },
            UpdateKind::ClearBefore => match new.last() {
                Some(&last) => (
                    self.pending.range(last..).count(),
                    Box::new(move |t| t == last && self.pending.contains_key(&t)),
                ),
                None => (self.pending.len(), Box::new(|_| false)),
            },
        };
        kept + new.iter().filter(|&&t| !overlaps(t)).count()
    }

    /// Sets the time of a virtual cycle before the first one, µs: the first
    /// real cycle ramps from there (as the seed's second example, whose
    /// previous cycle is at 0). Without it the first cycle only applies
    /// commands that have passed and otherwise holds the value.
    pub fn start_us(&mut self, t_us: i64) {
        self.last_cycle_time_us = Some(t_us.clamp(-MAX_TIME_US, MAX_TIME_US));
    }

    /// Combines `commands` with the pending ones as `update` says. Commands
    /// whose time has already passed are applied at the next cycle.
    ///
    /// Cannot fail: commands from [`parse_set`] are valid. For commands built
    /// by hand, a non-finite value is skipped and a time beyond
    /// ±[`MAX_TIME_US`] is clamped to it.
    pub fn apply(&mut self, update: UpdateKind, commands: &[TimedCommand]) {
        match update {
            UpdateKind::Merge => {}
            // A new map: a cleared one gives its nodes back to the allocator.
            UpdateKind::ClearAll => self.pending = BTreeMap::new(),
            UpdateKind::ClearAfter => {
                if let Some(first) = commands.iter().map(|c| c.time_us).min() {
                    drop(self.pending.split_off(&first));
                }
            }
            UpdateKind::ClearBefore => {
                if let Some(last) = commands.iter().map(|c| c.time_us).max() {
                    // Keeps the commands at or after `last`; the one at
                    // `last` itself is replaced just below.
                    self.pending = self.pending.split_off(&last);
                }
            }
        }
        for c in commands.iter().filter(|c| c.value.is_finite()) {
            let t = c.time_us.clamp(-MAX_TIME_US, MAX_TIME_US);
            self.pending.insert(t, c.value);
        }
        self.refresh_front();
    }

    /// Runs the interpolator once at `now_us` (see the module doc) and returns
    /// [`is_active`](Self::is_active): whether a timed command set the value
    /// in this cycle.
    pub fn cycle_us(&mut self, now_us: i64) -> bool {
        let now = now_us.clamp(-MAX_TIME_US, MAX_TIME_US);
        let prev = self.last_cycle_time_us.unwrap_or(now);
        let mut driven = std::mem::take(&mut self.fresh);
        while let Some((time, value)) = self.front {
            if time <= now {
                driven = true;
                // Passed: apply it and go on with the next one.
                self.last_command_double = value;
                self.last_command_value = value;
                self.last_command_time_us = Some(time);
                self.pending.pop_first();
                self.refresh_front();
                continue;
            }
            // Future: ramp toward it.
            if !self.ramp {
                break;
            }
            driven = true;
            let (t0, v0) = match self.last_command_time_us {
                Some(t) if prev <= t && t <= now => (t, self.last_command_value),
                _ => (prev.min(now), self.last_command_double),
            };
            let v = interpolate(v0, value, (now - t0) as f64, (time - t0) as f64);
            self.last_command_double = v;
            break;
        }
        self.last_cycle_time_us = Some(now);
        self.driven = driven;
        driven
    }

    /// [`cycle_us`](Self::cycle_us) of an actuator without pending commands:
    /// only the cycle time and the fresh flag move on.
    #[inline]
    pub(crate) fn cycle_idle_us(&mut self, now_us: i64) {
        debug_assert!(self.front.is_none() && self.pending.is_empty());
        let now = now_us.clamp(-MAX_TIME_US, MAX_TIME_US);
        self.driven = std::mem::take(&mut self.fresh);
        self.last_cycle_time_us = Some(now);
    }

    /// The flags an idle cycle moves: (`fresh`: a plain value since the
    /// last cycle, `driven`: [`is_active`](Self::is_active)).
    #[inline]
    pub(crate) fn idle_flags(&self) -> (bool, bool) {
        (self.fresh, self.driven)
    }

    /// Write back what a run of plain values and idle cycles deferred by
    /// the caller left (see `interp::shaping`): the `fresh` and `driven`
    /// flags, and, if some idle cycle ran, the time of the last one (µs,
    /// clamped as [`cycle_idle_us`](Self::cycle_idle_us) clamps it).
    #[inline]
    pub(crate) fn restore_idle(&mut self, fresh: bool, driven: bool, cycle_us: Option<i64>) {
        debug_assert!(self.front.is_none() && self.pending.is_empty());
        self.fresh = fresh;
        self.driven = driven;
        if let Some(now) = cycle_us {
            self.last_cycle_time_us = Some(now.clamp(-MAX_TIME_US, MAX_TIME_US));
        }
    }

    /// `true` (the default): ramp toward the next command each cycle, as the
    /// DCM does. `false`: hold the value and step to each command at its
    /// time (a vehicle config's `interpolation = "none"`).
    pub fn set_ramp(&mut self, ramp: bool) {
        self.ramp = ramp;
    }

    /// [`cycle_us`](Self::cycle_us) at `now_s` seconds; a NaN, infinite or
    /// out-of-range time is ignored (nothing changes) and gives `false`.
    pub fn cycle(&mut self, now_s: f64) -> bool {
        match seconds_to_us(now_s) {
            Some(t) => self.cycle_us(t),
            None => false,
        }
    }

    /// The current value, double precision (`lastCommandDouble`): the setpoint
    /// the model should see.
    pub fn value(&self) -> f64 {
        self.last_command_double
    }

    /// `sendCommand`: the nearest integer of [`value`](Self::value) (halves
    /// away from zero), as the DCM sends it to the hardware.
    pub fn send_command(&self) -> f64 {
        // Always the rounded current value: computed when asked, not per cycle.
        round_half_away(self.last_command_double)
    }

    /// `lastCommandValue`: the value of the last applied command, without
    /// interpolation.
    pub fn last_command_value(&self) -> f64 {
        self.last_command_value
    }

    /// `lastCommandTime`, µs: the time of the last applied command.
    pub fn last_command_time_us(&self) -> Option<i64> {
        self.last_command_time_us
    }

    /// `lastCycleTime`, µs: the time of the last cycle (or of
    /// [`start_us`](Self::start_us)).
    pub fn last_cycle_time_us(&self) -> Option<i64> {
        self.last_cycle_time_us
    }

    /// Whether the last cycle applied or interpolated a timed command, i.e.
    /// the value was set by the list in that cycle (it may have changed).
    /// `false` once the list is exhausted and the value holds.
    pub fn is_active(&self) -> bool {
        self.driven
    }

    /// Number of pending commands.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// The earliest pending command, if any.
    pub fn next_command(&self) -> Option<TimedCommand> {
        self.front
            .map(|(time_us, value)| TimedCommand { value, time_us })
    }

    /// The pending commands in time order.
    pub fn pending(&self) -> impl Iterator<Item = TimedCommand> + '_ {
        self.pending
            .iter()
            .map(|(&time_us, &value)| TimedCommand { value, time_us })
    }

    fn refresh_front(&mut self) {
        self.front = self.pending.first_key_value().map(|(&t, &v)| (t, v));
    }
}

/// The seed's formula `((v1 − v0)·d1)/d2 + v0`, evaluated as written (so the
/// seed's numbers come out exactly), with `0 <= d1 < d2`. Falls back to a
/// convex combination if it overflows, and is clamped to `[v0, v1]`.
fn interpolate(v0: f64, v1: f64, d1: f64, d2: f64) -> f64 {
    let mut v = ((v1 - v0) * d1) / d2 + v0;
    if !v.is_finite() {
        let r = d1 / d2;
        v = v0 * (1.0 - r) + v1 * r;
    }
    if v.is_nan() {
        return v0;
    }
    let (lo, hi) = if v0 <= v1 { (v0, v1) } else { (v1, v0) };
    v.clamp(lo, hi)
}

#[cfg(test)]
mod tests;
