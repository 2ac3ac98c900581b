//! A vectorised fleet for batch users (the Python package's `Fleet`, RL and
//! Monte Carlo loops): `n` independent [`Vehicle`]s stepped together from a
//! flat array of actuator setpoints, their state written into a caller's
//! flat array. Sans-IO: no clock or files.
//!
//! One [`BatchFleet::step`] is, for every vehicle `i` in order, exactly what
//! a replay does when the setpoints are posted just before an iteration:
//! each setpoint is handled as its message (`DESIRED_THRUST`, ...) stamped
//! with the vehicle's next clock `start_time + k_i·dt`, then the vehicle
//! steps at that clock. So a fleet's vehicle `i` equals a single vehicle
//! given the same mail (the Python tests check it).
//!
//! The per-step output is lean on purpose: only the requested [`Field`]s,
//! read from the NAV record where possible; latitude/longitude and the
//! other derived columns cost a [`Vehicle::snapshot`] and are computed only
//! when asked for. Nothing is allocated per step on one thread.
//!
//! Sans-IO as the model is, with one exception the caller opts into:
//! [`BatchFleet::set_threads`] splits a step over scoped threads (chunks of
//! contiguous vehicles). The vehicles are independent, so the results are
//! the same bits on any number of threads.
use crate::command::{check_bounds, Command};
use crate::interp::timed_commands::seconds_to_us;
use crate::model::{Actuator, Params, Vehicle};
use crate::sweep::Rng;

/// Largest fleet, vehicles (a bound checked before anything is allocated).
pub const MAX_VEHICLES: usize = 10_000_000;

/// A state column a [`BatchFleet`] can write, with the CSV column's name
/// and units (docs/formats.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Mission time of the vehicle, s.
    T,
    /// East, m.
    X,
    /// North, m.
    Y,
    /// Stored speed, m/s.
    Speed,
    /// Heading, degrees.
    Heading,
    /// Depth, m.
    Depth,
    /// Pitch, radians.
    Pitch,
    /// Yaw, radians.
    Yaw,
    /// Speed over ground, m/s.
    Sog,
    /// Heading over ground, degrees.
    Hog,
    /// Drift east, m/s.
    DriftX,
    /// Drift north, m/s.
    DriftY,
    /// Ground-truth east, m.
    GtX,
    /// Ground-truth north, m.
    GtY,
    /// Altitude, m (NaN until set).
    Altitude,
    /// Last published speed, m/s (snapshot).
    NavSpeed,
    /// Last published heading, degrees (snapshot).
    NavHeading,
    /// Latitude, degrees (snapshot; NaN without an origin).
    Lat,
    /// Longitude, degrees (snapshot).
    Lon,
    /// Rudder as the model holds it (snapshot).
    Rudder,
    /// Thrust, percent (snapshot).
    Thrust,
    /// Elevator, percent (snapshot).
    Elevator,
    /// Left thruster, percent (snapshot).
    ThrustL,
    /// Right thruster, percent (snapshot).
    ThrustR,
    /// Current-field velocity east, m/s (snapshot).
    CurrentX,
    /// Current-field velocity north, m/s (snapshot).
    CurrentY,
}

impl Field {
    /// Every field, in CSV column order.
    pub const ALL: [Field; 26] = [
        Field::T,
        Field::X,
        Field::Y,
        Field::Speed,
        Field::Heading,
        Field::Depth,
        Field::Altitude,
        Field::Pitch,
        Field::Yaw,
        Field::Sog,
        Field::Hog,
        Field::NavSpeed,
        Field::NavHeading,
        Field::Lat,
        Field::Lon,
        Field::DriftX,
        Field::DriftY,
        Field::Rudder,
        Field::Thrust,
        Field::Elevator,
        Field::GtX,
        Field::GtY,
        Field::ThrustL,
        Field::ThrustR,
        Field::CurrentX,
        Field::CurrentY,
    ];

    /// The CSV column name (docs/formats.md §3).
    pub fn name(self) -> &'static str {
        let i = Field::ALL.iter().position(|&f| f == self).unwrap_or(0);
        crate::model::Snapshot::VALUE_NAMES[i]
    }

    /// The field of a CSV column name.
    pub fn from_name(name: &str) -> Option<Field> {
        crate::model::Snapshot::VALUE_NAMES
            .iter()
            .position(|&n| n == name)
            .map(|i| Field::ALL[i])
    }

    /// Whether the field needs a full [`Vehicle::snapshot`] (lat/lon and
    /// the published, actuator and current columns).
    fn needs_snapshot(self) -> bool {
        matches!(
            self,
            Field::NavSpeed
                | Field::NavHeading
                | Field::Lat
                | Field::Lon
                | Field::Rudder
                | Field::Thrust
                | Field::Elevator
                | Field::ThrustL
                | Field::ThrustR
                | Field::CurrentX
                | Field::CurrentY
        )
    }
}

/// One step's clock for the vehicles at iteration `k` (see [`BatchFleet::step`]).
#[derive(Debug, Clone, Copy)]
struct ClockMemo {
    /// Iteration since the last reset.
    k: u64,
    /// `start_time + k·dt`, s.
    clock: f64,
    /// [`seconds_to_us`] of the clock.
    us: Option<i64>,
    /// The µs when a setpoint at this clock passes the message's time
    /// check (finite, within ±`limits::TIME_S`, convertible).
    checked: Option<i64>,
}

impl ClockMemo {
    /// No iteration yet (every `k` differs from it).
    const NONE: ClockMemo = ClockMemo {
        k: u64::MAX,
        clock: f64::NAN,
        us: None,
        checked: None,
    };

    fn at(start_time: f64, dt: f64, k: u64) -> ClockMemo {
        let clock = start_time + k as f64 * dt;
        let us = seconds_to_us(clock);
        let time_ok = clock.is_finite() && clock.abs() <= crate::command::limits::TIME_S;
        ClockMemo {
            k,
            clock,
            us,
            checked: us.filter(|_| time_ok),
        }
    }
}

/// Most steps one [`BatchFleet::step_repeat`] call takes.
pub const MAX_REPEAT: u32 = 10_000;

/// Most threads a [`BatchFleet`] steps on.
pub const MAX_THREADS: usize = 256;

/// Fewest vehicles a step thread is given: below it a thread's start
/// (tens of µs) costs more than the vehicles' steps (~0.07 µs each).
pub const MIN_CHUNK: usize = 256;

/// Memo slots of a chunk's clocks (one per step of a repeat, reused).
const MEMO_SLOTS: usize = 16;

/// What every chunk of one [`BatchFleet::step_repeat`] shares (read only).
struct StepCtx<'a> {
    start_time: f64,
    dt: f64,
    actions: &'a [Actuator],
    fields: &'a [Field],
    snapshot_needed: bool,
    /// The state row is (x, y, speed, heading).
    plain_row: bool,
    /// ... and the setpoint row (thrust, rudder): the loop made for it.
    thrust_rudder: bool,
    repeat: u32,
}

/// Contiguous vehicles of a fleet with their clocks, setpoint and state
/// rows (a thread's share of a step).
struct Chunk<'a> {
    vehicles: &'a mut [Vehicle],
    k: &'a mut [u64],
    setpoints: &'a [f64],
    out: &'a mut [f64],
}

impl StepCtx<'_> {
    /// Step every vehicle of `c` `repeat` times, then write its state row.
    /// The clock of iteration k, its µs for the setpoints' timing and
    /// whether the setpoints may take the checked path are computed once
    /// per k while the vehicles share it (they do unless some were reset).
    fn run(&self, c: Chunk<'_>) {
        if self.thrust_rudder {
            self.run_thrust_rudder(c);
            return;
        }
        let (m, w) = (self.actions.len(), self.fields.len());
        let mut memo = [ClockMemo::NONE; MEMO_SLOTS];
        for (i, (v, k)) in c.vehicles.iter_mut().zip(c.k.iter_mut()).enumerate() {
            for r in 0..self.repeat as usize {
                *k += 1;
                let slot = &mut memo[r % MEMO_SLOTS];
                if *k != slot.k {
                    *slot = ClockMemo::at(self.start_time, self.dt, *k);
                }
                if m > 0 {
                    BatchFleet::set_row(v, self.actions, &c.setpoints[i * m..(i + 1) * m], slot);
                }
                v.step(slot.clock);
            }
            if self.plain_row {
                // The default columns, written straight from the record.
                BatchFleet::write_plain(v, &mut c.out[i * 4..(i + 1) * 4]);
            } else if w > 0 {
                BatchFleet::write_row(
                    v,
                    self.fields,
                    self.snapshot_needed,
                    self.start_time,
                    &mut c.out[i * w..(i + 1) * w],
                );
            }
        }
    }

    /// [`StepCtx::run`] for setpoint rows (thrust, rudder) and state rows
    /// (x, y, speed, heading), already checked: the same handling, with
    /// constant actuators (each setpoint folds to its own code) and the
    /// vehicle two ahead prefetched (a fleet larger than the caches reads
    /// each vehicle's lines from memory).
    fn run_thrust_rudder(&self, c: Chunk<'_>) {
        const AHEAD: usize = 2;
        let mut memo = [ClockMemo::NONE; MEMO_SLOTS];
        let rows = c.setpoints.chunks_exact(2).zip(c.out.chunks_exact_mut(4));
        for (i, (k, (row, state))) in c.k.iter_mut().zip(rows).enumerate() {
            if let Some(next) = c.vehicles.get(i + AHEAD) {
                next.prefetch_setpoint_step();
            }
            let v = &mut c.vehicles[i];
            for r in 0..self.repeat as usize {
                *k += 1;
                let slot = &mut memo[r % MEMO_SLOTS];
                if *k != slot.k {
                    *slot = ClockMemo::at(self.start_time, self.dt, *k);
                }
                let clock = slot.clock;
                match slot.checked {
                    Some(t_us) => {
                        v.prime_clock(clock, slot.us);
                        v.set_desired_checked(Actuator::Thrust, row[0], clock, t_us);
                        v.set_desired_checked(Actuator::Rudder, row[1], clock, t_us);
                    }
                    None => {
                        BatchFleet::set_row(v, &[Actuator::Thrust, Actuator::Rudder], row, slot)
                    }
                }
                v.step(clock);
            }
            BatchFleet::write_plain(v, state);
        }
    }
}

/// Why a batch call was refused (nothing was changed).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchError(pub String);

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BatchError {}

/// `n` vehicles stepped together (see the module documentation).
#[derive(Debug, Clone)]
pub struct BatchFleet {
    params: Vec<Params>,
    vehicles: Vec<Vehicle>,
    /// Iterations of each vehicle since its last reset.
    k: Vec<u64>,
    start_time: f64,
    dt: f64,
    actions: Vec<Actuator>,
    fields: Vec<Field>,
    snapshot_needed: bool,
    /// An upper bound of every `k[i]` (exact after [`BatchFleet::check_clock`]
    /// rescans): the next step's clock is checked against it, O(1).
    k_max: u64,
    /// Threads a step is split over (see [`BatchFleet::set_threads`]).
    threads: usize,
}

/// Heap bytes assumed per vehicle beyond its two structs (the config's
/// strings, thrust map and the shaping buffers; ~1.5 KiB measured for
/// configs/kayak.toml), for [`BatchFleet::bytes_needed`].
const HEAP_BYTES_PER_VEHICLE: u64 = 2048;

impl BatchFleet {
    /// A fleet of one vehicle per entry of `params`, clock `start_time` s at
    /// start-up, step `dt` s; `actions` are the columns of a setpoint row,
    /// `fields` the columns of a state row.
    pub fn new(
        params: Vec<Params>,
        start_time: f64,
        dt: f64,
        actions: Vec<Actuator>,
        fields: Vec<Field>,
    ) -> Result<BatchFleet, BatchError> {
        if params.is_empty() || params.len() > MAX_VEHICLES {
            return Err(BatchError(format!(
                "a fleet has 1 to {MAX_VEHICLES} vehicles, not {}",
                params.len()
            )));
        }
        if !(dt.is_finite() && dt > 0.0 && dt <= 3600.0) {
            return Err(BatchError(format!(
                "dt must be a finite step in (0, 3600] s, not {dt}"
            )));
        }
        if !(start_time.is_finite() && start_time.abs() <= crate::command::limits::TIME_S) {
            return Err(BatchError(format!(
                "start_time must be finite and at most {} s, not {start_time}",
                crate::command::limits::TIME_S
            )));
        }
        // Reserved first: a fleet too large for the memory left is an
        // error, not an abort of the caller's process.
        let mut vehicles = Vec::new();
        vehicles.try_reserve_exact(params.len()).map_err(|e| {
            BatchError(format!(
                "a fleet of {} vehicles does not fit in memory ({e})",
                params.len()
            ))
        })?;
        vehicles.extend(
            params
                .iter()
                .map(|p| Vehicle::from_params(p.clone(), start_time)),
        );
        let snapshot_needed = fields.iter().any(|f| f.needs_snapshot());
        Ok(BatchFleet {
            k: vec![0; params.len()],
            k_max: 0,
            params,
            vehicles,
            start_time,
            dt,
            actions,
            fields,
            snapshot_needed,
            threads: 1,
        })
    }

    /// Bytes a fleet of `n` vehicles with `fields` state columns needs
    /// (the vehicles, a kept copy of each one's parameters, a caller's
    /// state array), an estimate made before anything is allocated so a
    /// caller can refuse a fleet that would not fit (`Fleet(config,
    /// 10_000_000)` needs about 55 GB).
    pub fn bytes_needed(n: usize, fields: usize) -> u64 {
        let per = std::mem::size_of::<Vehicle>() as u64
            + 2 * std::mem::size_of::<Params>() as u64
            + HEAP_BYTES_PER_VEHICLE
            + 8 * fields as u64;
        (n as u64).saturating_mul(per)
    }

    /// Number of vehicles.
    pub fn len(&self) -> usize {
        self.vehicles.len()
    }

    /// Always false (a fleet has at least one vehicle).
    pub fn is_empty(&self) -> bool {
        self.vehicles.is_empty()
    }

    /// Step, s.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// The setpoint columns.
    pub fn actions(&self) -> &[Actuator] {
        &self.actions
    }

    /// The state columns.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The vehicles.
    pub fn vehicles(&self) -> &[Vehicle] {
        &self.vehicles
    }

    /// Iterations of vehicle `i` since its last reset.
    pub fn iterations(&self, i: usize) -> u64 {
        self.k[i]
    }

    fn command(act: Actuator, v: f64) -> Command {
        crate::model::desired_command(act, v)
    }

    /// Check a setpoint array (`len() × actions().len()`, row-major): every
    /// value finite and within the message bounds. Names the first bad one.
    pub fn check_actions(&self, setpoints: &[f64]) -> Result<(), BatchError> {
        let m = self.actions.len();
        if setpoints.len() != self.len() * m {
            return Err(BatchError(format!(
                "setpoints: expected {} × {m} values, got {}",
                self.len(),
                setpoints.len()
            )));
        }
        if m == 0 {
            return Ok(());
        }
        // Fast path: all finite and small (the common case) needs no Command.
        // A fold without an early exit, so that it is vectorised (NaN
        // fails the comparison as in `all`).
        if setpoints.iter().fold(true, |ok, v| ok & (v.abs() <= 100.0)) {
            return Ok(());
        }
        for (i, row) in setpoints.chunks_exact(m).enumerate() {
            for (&act, &v) in self.actions.iter().zip(row) {
                if let Err(reason) = check_bounds(&Self::command(act, v)) {
                    return Err(BatchError(format!(
                        "vehicle {i}: {} = {v}: {reason}",
                        act.name()
                    )));
                }
            }
        }
        Ok(())
    }

    /// One iteration of every vehicle with setpoint row `i` of `setpoints`
    /// (`len() × actions().len()`, row-major; nothing is changed if any
    /// value is refused), then the state rows into `out` (`len() ×
    /// fields().len()`, row-major).
    pub fn step(&mut self, setpoints: &[f64], out: &mut [f64]) -> Result<(), BatchError> {
        self.step_repeat(setpoints, out, 1)
    }

    /// `repeat` iterations of every vehicle with the same setpoint rows
    /// (an RL env's frame skip in one call), then the state rows into
    /// `out`: bit for bit what `repeat` calls of [`BatchFleet::step`] give
    /// (the vehicles are independent, so each runs its `repeat` steps in
    /// turn while it is in the cache). On [`BatchFleet::threads`] threads
    /// the fleet is cut into that many contiguous chunks of vehicles, each
    /// stepped by its own scoped thread: the same per-vehicle work, so the
    /// same bits whatever the thread count (tests below).
    pub fn step_repeat(
        &mut self,
        setpoints: &[f64],
        out: &mut [f64],
        repeat: u32,
    ) -> Result<(), BatchError> {
        if !(1..=MAX_REPEAT).contains(&repeat) {
            return Err(BatchError(format!(
                "repeat must be in 1..={MAX_REPEAT} steps, not {repeat}"
            )));
        }
        self.check_actions(setpoints)?;
        self.check_out(out)?;
        self.check_clock_ahead(u64::from(repeat))?;
        self.k_max += u64::from(repeat);
        let plain_row = self.fields == [Field::X, Field::Y, Field::Speed, Field::Heading];
        let ctx = StepCtx {
            start_time: self.start_time,
            dt: self.dt,
            actions: &self.actions,
            fields: &self.fields,
            snapshot_needed: self.snapshot_needed,
            plain_row,
            thrust_rudder: plain_row && self.actions == [Actuator::Thrust, Actuator::Rudder],
            repeat,
        };
        let n = self.vehicles.len();
        let chunks = self.threads.min(n.div_ceil(MIN_CHUNK)).max(1);
        if chunks == 1 {
            ctx.run(Chunk {
                vehicles: &mut self.vehicles,
                k: &mut self.k,
                setpoints,
                out,
            });
            return Ok(());
        }
        let (m, w) = (self.actions.len(), self.fields.len());
        let per = n.div_ceil(chunks);
        let mut parts = Vec::with_capacity(chunks);
        let (mut vs, mut ks, mut sp, mut o) =
            (&mut self.vehicles[..], &mut self.k[..], setpoints, out);
        while !vs.is_empty() {
            let c = per.min(vs.len());
            let (v0, v1) = vs.split_at_mut(c);
            let (k0, k1) = ks.split_at_mut(c);
            let (s0, s1) = sp.split_at(c * m);
            let (o0, o1) = o.split_at_mut(c * w);
            parts.push(Chunk {
                vehicles: v0,
                k: k0,
                setpoints: s0,
                out: o0,
            });
            (vs, ks, sp, o) = (v1, k1, s1, o1);
        }
        let ctx = &ctx;
        std::thread::scope(|scope| {
            let mut parts = parts.into_iter();
            let first = parts.next();
            for part in parts {
                scope.spawn(move || ctx.run(part));
            }
            if let Some(part) = first {
                ctx.run(part);
            }
        });
        Ok(())
    }

    /// Threads [`BatchFleet::step`] splits the fleet over (1: the calling
    /// thread alone, the default).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Step on `threads` threads (1 to [`MAX_THREADS`]); the results do
    /// not depend on it. A fleet smaller than 2 × [`MIN_CHUNK`] vehicles
    /// is stepped on fewer threads (a thread costs tens of µs to start).
    pub fn set_threads(&mut self, threads: usize) -> Result<(), BatchError> {
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(BatchError(format!(
                "threads must be in 1..={MAX_THREADS}, not {threads}"
            )));
        }
        self.threads = threads;
        Ok(())
    }

    /// The setpoint row `row` of `actions` for vehicle `v` at the clock of
    /// `memo`, as the messages would be handled (see [`BatchFleet::step`]).
    #[inline(always)]
    fn set_row(v: &mut Vehicle, actions: &[Actuator], row: &[f64], memo: &ClockMemo) {
        let clock = memo.clock;
        v.prime_clock(clock, memo.us);
        if let Some(t_us) = memo.checked {
            for (&act, &value) in actions.iter().zip(row) {
                // Every value was checked by `check_actions`, the clock in
                // ClockMemo::at: the message's handling without the
                // message or its checks (bit for bit, tests below).
                v.set_desired_checked(act, value, clock, t_us);
            }
        } else {
            for (&act, &value) in actions.iter().zip(row) {
                // A clock out of range: refused as the message is.
                let _ = v.set_desired(act, value, clock);
            }
        }
    }

    /// The default state row (x, y, speed, heading) from the NAV record.
    #[inline(always)]
    fn write_plain(v: &Vehicle, row: &mut [f64]) {
        let nav = v.nav();
        row[0] = nav.x;
        row[1] = nav.y;
        row[2] = nav.speed;
        row[3] = nav.heading;
    }

    /// Check that every vehicle's next step has a clock a message can
    /// carry (`start_time + (k + 1)·dt` finite and within ±[`TIME_S`]
    /// s), as a single vehicle refuses a step past it: past it every
    /// setpoint would be refused silently. O(1) unless the bound is near.
    ///
    /// [`TIME_S`]: crate::command::limits::TIME_S
    pub fn check_clock(&mut self) -> Result<(), BatchError> {
        self.check_clock_ahead(1)
    }

    /// [`BatchFleet::check_clock`] for the next `ahead` steps: the clock
    /// of each vehicle's last one, `start_time + (k + ahead)·dt`.
    fn check_clock_ahead(&mut self, ahead: u64) -> Result<(), BatchError> {
        let ok = |k: u64| {
            let c = self.start_time + (k + ahead) as f64 * self.dt;
            c.is_finite() && c.abs() <= crate::command::limits::TIME_S
        };
        if ok(self.k_max) {
            return Ok(());
        }
        // The bound may be stale after resets: the exact largest k.
        self.k_max = self.k.iter().copied().max().unwrap_or(0);
        if ok(self.k_max) {
            return Ok(());
        }
        let i = self.k.iter().position(|&k| k == self.k_max).unwrap_or(0);
        let what = if ahead == 1 {
            "next step".to_string()
        } else {
            format!("step {ahead} from now")
        };
        Err(BatchError(format!(
            "vehicle {i}: its {what} would be at clock {} s (start_time {} s + {} steps of \
             {} s), past ±{} s, the largest time a message can carry: reset it, or start \
             the fleet at a smaller start_time",
            self.start_time + (self.k_max + ahead) as f64 * self.dt,
            self.start_time,
            self.k_max + ahead,
            self.dt,
            crate::command::limits::TIME_S
        )))
    }

    /// One iteration of vehicle `i` alone with setpoint row `row`
    /// (`actions().len()` values), exactly as [`BatchFleet::step`] steps it
    /// (the same handling, the same clock); no state row is written.
    pub fn step_one(&mut self, i: usize, row: &[f64]) -> Result<(), BatchError> {
        if i >= self.len() || row.len() != self.actions.len() {
            return Err(BatchError(format!(
                "step_one: vehicle {i} of {}, {} setpoints for {} actions",
                self.len(),
                row.len(),
                self.actions.len()
            )));
        }
        for (&act, &v) in self.actions.iter().zip(row) {
            check_bounds(&Self::command(act, v)).map_err(|reason| {
                BatchError(format!("vehicle {i}: {} = {v}: {reason}", act.name()))
            })?;
        }
        let k = self.k[i] + 1;
        let memo = ClockMemo::at(self.start_time, self.dt, k);
        if !(memo.clock.is_finite() && memo.clock.abs() <= crate::command::limits::TIME_S) {
            return Err(BatchError(format!(
                "vehicle {i}: its next step would be at clock {} s, past ±{} s",
                memo.clock,
                crate::command::limits::TIME_S
            )));
        }
        self.k[i] = k;
        self.k_max = self.k_max.max(k);
        let v = &mut self.vehicles[i];
        Self::set_row(v, &self.actions, row, &memo);
        v.step(memo.clock);
        Ok(())
    }

    /// The first setpoint of a thrust column (`DESIRED_THRUST`, `_L`,
    /// `_R`) outside the nominal ±100 percent, as (vehicle, actuator,
    /// value): the model takes it unclipped, as uSimMarine does
    /// (docs/model.md), which is seldom what a caller meant.
    pub fn thrust_beyond_nominal(&self, setpoints: &[f64]) -> Option<(usize, Actuator, f64)> {
        let m = self.actions.len();
        if m == 0 || setpoints.len() != self.len() * m {
            return None;
        }
        if setpoints.iter().fold(true, |ok, v| ok & (v.abs() <= 100.0)) {
            return None;
        }
        for (i, row) in setpoints.chunks_exact(m).enumerate() {
            for (&act, &v) in self.actions.iter().zip(row) {
                let thrust = matches!(
                    act,
                    Actuator::Thrust | Actuator::ThrustL | Actuator::ThrustR
                );
                if thrust && v.abs() > 100.0 {
                    return Some((i, act, v));
                }
            }
        }
        None
    }

    fn check_out(&self, out: &[f64]) -> Result<(), BatchError> {
        if out.len() != self.len() * self.fields.len() {
            return Err(BatchError(format!(
                "state output: expected {} × {} values, got {}",
                self.len(),
                self.fields.len(),
                out.len()
            )));
        }
        Ok(())
    }

    /// The state rows without stepping.
    pub fn write_state(&self, out: &mut [f64]) -> Result<(), BatchError> {
        self.check_out(out)?;
        let w = self.fields.len();
        if w == 0 {
            return Ok(());
        }
        for (v, row) in self.vehicles.iter().zip(out.chunks_exact_mut(w)) {
            Self::write_row(v, &self.fields, self.snapshot_needed, self.start_time, row);
        }
        Ok(())
    }

    #[inline(always)]
    fn write_row(v: &Vehicle, fields: &[Field], snap: bool, start: f64, row: &mut [f64]) {
        let nav = v.nav();
        if !snap {
            // The record's own fields only (the common case): no snapshot.
            for (f, o) in fields.iter().zip(row.iter_mut()) {
                *o = match f {
                    Field::X => nav.x,
                    Field::Y => nav.y,
                    Field::Speed => nav.speed,
                    Field::Heading => nav.heading,
                    other => Self::field_of(v, *other, start),
                };
            }
            return;
        }
        let s = v.snapshot();
        for (f, o) in fields.iter().zip(row.iter_mut()) {
            *o = if f.needs_snapshot() {
                let i = Field::ALL.iter().position(|g| g == f).unwrap_or(0);
                s.values()[i]
            } else {
                Self::field_of(v, *f, start)
            };
        }
    }

    /// One field that needs no snapshot (NaN for one that does).
    fn field_of(v: &Vehicle, f: Field, start: f64) -> f64 {
        let nav = v.nav();
        let gt = v.ground_truth();
        match f {
            Field::T => nav.stamp - start,
            Field::X => nav.x,
            Field::Y => nav.y,
            Field::Speed => nav.speed,
            Field::Heading => nav.heading,
            Field::Depth => nav.depth,
            Field::Pitch => nav.pitch,
            Field::Yaw => nav.yaw,
            Field::Sog => nav.sog,
            Field::Hog => nav.hog(),
            Field::DriftX => v.drift().0,
            Field::DriftY => v.drift().1,
            Field::GtX => gt.x,
            Field::GtY => gt.y,
            Field::Altitude => nav.altitude.unwrap_or(f64::NAN),
            _ => f64::NAN,
        }
    }

    /// Send one message to vehicle `i` at its next clock (e.g. `DRIFT_X`);
    /// the message is handled as [`Vehicle::handle_command`] handles it.
    pub fn send(&mut self, i: usize, cmd: Command) -> Result<(), BatchError> {
        let Some(v) = self.vehicles.get_mut(i) else {
            return Err(BatchError(format!(
                "no vehicle {i} in a fleet of {}",
                self.len()
            )));
        };
        let clock = self.start_time + (self.k[i] + 1) as f64 * self.dt;
        v.handle_command(cmd, clock)
            .map_err(|e| BatchError(format!("vehicle {i}: {e}")))
    }

    /// Restart vehicle `i` from its configured start, or from `pose`
    /// (x, y m; heading degrees) if given, with drift `drift` (east, north
    /// m/s) if given, else the configured one. Its clock restarts at 0.
    pub fn reset_vehicle(
        &mut self,
        i: usize,
        pose: Option<(f64, f64, f64)>,
        drift: Option<(f64, f64)>,
    ) -> Result<(), BatchError> {
        let Some(base) = self.params.get(i) else {
            return Err(BatchError(format!(
                "no vehicle {i} in a fleet of {}",
                self.len()
            )));
        };
        let finite = |vals: &[f64]| vals.iter().all(|v| v.is_finite() && v.abs() <= 1e7);
        if let Some((x, y, h)) = pose {
            if !finite(&[x, y, h]) {
                return Err(BatchError(format!(
                    "vehicle {i}: start pose ({x}, {y}, {h}) must be finite and within ±1e7"
                )));
            }
        }
        if let Some((dx, dy)) = drift {
            if !(finite(&[dx, dy]) && dx.abs() <= 100.0 && dy.abs() <= 100.0) {
                return Err(BatchError(format!(
                    "vehicle {i}: drift ({dx}, {dy}) m/s must be finite and within ±100"
                )));
            }
        }
        let mut p = base.clone();
        if let Some((x, y, h)) = pose {
            p.start.x = x;
            p.start.y = y;
            p.start.heading = h;
        }
        if let Some((dx, dy)) = drift {
            p.drift_x = dx;
            p.drift_y = dy;
        }
        self.vehicles[i] = Vehicle::from_params(p, self.start_time);
        self.k[i] = 0;
        Ok(())
    }

    /// Restart vehicle `i` with a seeded random start and drift: the start
    /// moved uniformly within `start_radius` m of the configured one, the
    /// heading by up to ±`heading_spread` degrees, and a drift of uniform
    /// direction and magnitude up to `max_drift` m/s. The same
    /// `(seed, i)` always gives the same draw.
    pub fn reset_random(
        &mut self,
        i: usize,
        seed: u64,
        start_radius: f64,
        heading_spread: f64,
        max_drift: f64,
    ) -> Result<(), BatchError> {
        let Some(base) = self.params.get(i) else {
            return Err(BatchError(format!(
                "no vehicle {i} in a fleet of {}",
                self.len()
            )));
        };
        let ok = |v: f64, max: f64| v.is_finite() && (0.0..=max).contains(&v);
        if !(ok(start_radius, 1e6) && ok(heading_spread, 180.0) && ok(max_drift, 100.0)) {
            return Err(BatchError(format!(
                "random reset: start_radius in [0, 1e6] m, heading_spread in [0, 180] deg, \
                 max_drift in [0, 100] m/s (got {start_radius}, {heading_spread}, {max_drift})"
            )));
        }
        let mut rng = Rng::for_run(seed, i as u64);
        let r = start_radius * rng.unit().sqrt();
        let a = std::f64::consts::TAU * rng.unit();
        let dh = heading_spread * (2.0 * rng.unit() - 1.0);
        let dm = max_drift * rng.unit();
        let da = std::f64::consts::TAU * rng.unit();
        let s = base.start;
        let pose = (s.x + r * a.cos(), s.y + r * a.sin(), s.heading + dh);
        let drift = (base.drift_x + dm * da.sin(), base.drift_y + dm * da.cos());
        self.reset_vehicle(i, Some(pose), Some(drift))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kayak() -> Params {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/kayak.toml"),
        )
        .unwrap();
        crate::config::parse_vehicle(std::path::Path::new("kayak.toml"), &text)
            .unwrap()
            .params
    }

    fn fleet(n: usize, fields: Vec<Field>) -> BatchFleet {
        BatchFleet::new(
            vec![kayak(); n],
            0.0,
            0.1,
            vec![Actuator::Thrust, Actuator::Rudder],
            fields,
        )
        .unwrap()
    }

    #[test]
    fn each_vehicle_equals_a_single_vehicle_given_the_same_mail() {
        let fields = Field::ALL.to_vec();
        let mut f = fleet(3, fields.clone());
        let mut singles: Vec<Vehicle> =
            (0..3).map(|_| Vehicle::from_params(kayak(), 0.0)).collect();
        let mut out = vec![0.0; 3 * 26];
        // The default columns (written straight from the record).
        let plain = [Field::X, Field::Y, Field::Speed, Field::Heading];
        let mut g = fleet(3, plain.to_vec());
        let mut out_plain = vec![0.0; 3 * 4];
        for k in 1..=200u64 {
            let sp: Vec<f64> = (0..3)
                .flat_map(|i| {
                    [
                        20.0 + 10.0 * i as f64,
                        ((k as f64) * 0.1 + i as f64).sin() * 60.0,
                    ]
                })
                .collect();
            if k == 50 || k == 120 {
                // a timed list on a third actuator: the vehicles leave the
                // deferred plain path for the full cycles, then return
                let set = Command::Set(format!(
                    r#"["DESIRED_ELEVATOR","ClearAll",[[{:.1},30],[{:.1},-10]]]"#,
                    k as f64 * 0.1 + 0.5,
                    k as f64 * 0.1 + 2.0
                ));
                for (i, v) in singles.iter_mut().enumerate() {
                    f.send(i, set.clone()).unwrap();
                    g.send(i, set.clone()).unwrap();
                    v.handle_command(set.clone(), k as f64 * 0.1).unwrap();
                }
            }
            f.step(&sp, &mut out).unwrap();
            g.step(&sp, &mut out_plain).unwrap();
            for i in 0..3 {
                for (j, p) in plain.iter().enumerate() {
                    let col = Field::ALL.iter().position(|f| f == p).unwrap();
                    assert_eq!(out_plain[i * 4 + j].to_bits(), out[i * 26 + col].to_bits());
                }
            }
            let clock = k as f64 * 0.1;
            for (i, v) in singles.iter_mut().enumerate() {
                v.handle_command(Command::DesiredThrust(sp[2 * i]), clock)
                    .unwrap();
                v.handle_command(Command::DesiredRudder(sp[2 * i + 1]), clock)
                    .unwrap();
                v.step(clock);
                // the whole state, shaping included, of both fleet paths
                // (the generic loop and the thrust-rudder one)
                let state = format!("{v:?}");
                assert_eq!(format!("{:?}", f.vehicles()[i]), state, "k {k} vehicle {i}");
                assert_eq!(format!("{:?}", g.vehicles()[i]), state, "k {k} vehicle {i}");
                let want = v.snapshot().values();
                for (j, w) in want.iter().enumerate() {
                    let got = out[i * 26 + j];
                    assert!(
                        got.to_bits() == w.to_bits(),
                        "k {k} vehicle {i} {}: {got} vs {w}",
                        fields[j].name()
                    );
                }
            }
        }
        // The elevator ramps reached the vehicles (the SETs were applied).
        assert!(singles[0].snapshot().elevator != 0.0);
        // Moved: 40 % thrust for 20 s on a kayak (about 1 m/s).
        let (x, y) = (out[2 * 26 + 1], out[2 * 26 + 2]);
        assert!(x.hypot(y) > 5.0, "{x} {y}");
    }

    fn config(name: &str) -> Params {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        crate::config::parse_vehicle(&path, &text).unwrap().params
    }

    /// `Vehicle::set_desired` (the fleet's setpoint path) against
    /// `handle_command` of the same `DESIRED_*` message: the whole vehicle
    /// state (`Debug` of every field, shaping buffers included) and the
    /// published rows equal bit for bit after every step of a random
    /// sequence over all five actuators, with values past ±100 %, refused
    /// ones (NaN, ±inf, past the ±10,000 % bound, a bad receipt time),
    /// mode switches and `SET` lists between them.
    #[test]
    fn set_desired_equals_the_message_path_bit_for_bit() {
        for name in [
            "kayak.toml",
            "v22_pid_boat.toml",
            "v22_pid_uuv.toml",
            "catamaran_diff.toml",
            "example.toml",
            "uuv.toml",
        ] {
            let p = config(name);
            let mut fast = Vehicle::from_params(p.clone(), 0.0);
            let mut slow = Vehicle::from_params(p, 0.0);
            let mut rng = Rng::for_run(22, 0);
            for k in 1..=3000u64 {
                let clock = k as f64 * 0.1;
                for _ in 0..(rng.unit() * 4.0) as usize {
                    let act = Actuator::ALL[(rng.unit() * 5.0) as usize % 5];
                    let u = rng.unit();
                    let v = match (rng.unit() * 20.0) as u32 {
                        0 => f64::NAN,
                        1 => f64::INFINITY * (u - 0.5).signum(),
                        2 => (u - 0.5) * 4e4, // often past ±10,000
                        3 => (u * 8.0).round() * 12.5 - 50.0, // halves and repeats
                        _ => (u - 0.5) * 300.0,
                    };
                    let t = if rng.unit() < 0.02 { f64::NAN } else { clock };
                    // The fleet's checked path where the checks pass.
                    let us = crate::interp::timed_commands::seconds_to_us(t);
                    let checked = v.is_finite()
                        && v.abs() <= crate::command::limits::ACTUATOR
                        && t.is_finite()
                        && t.abs() <= crate::command::limits::TIME_S;
                    let a = match us.filter(|_| checked) {
                        Some(t_us) => {
                            // as the fleet does: the clock primed first
                            fast.prime_clock(t, us);
                            fast.set_desired_checked(act, v, t, t_us);
                            Ok(())
                        }
                        None => fast.set_desired(act, v, t),
                    };
                    let b = slow.handle_command(crate::model::desired_command(act, v), t);
                    assert_eq!(a, b, "{name} k {k} {} = {v}", act.name());
                }
                let extra = match (rng.unit() * 40.0) as u32 {
                    0 => Some(Command::Set(format!(
                        r#"["DESIRED_RUDDER","ClearAll",[[{:.3},40],[{:.3},-20]]]"#,
                        clock + 1.0,
                        clock + 3.0
                    ))),
                    1 => Some(Command::Set(format!(
                        r#"["DESIRED_THRUST","Merge",[[{:.3},70]]]"#,
                        clock + 2.0
                    ))),
                    2 => Some(Command::ThrustModeDifferential(
                        if rng.unit() < 0.5 { "true" } else { "false" }.into(),
                    )),
                    3 => Some(Command::ThrustModeReverse(
                        if rng.unit() < 0.5 { "true" } else { "false" }.into(),
                    )),
                    _ => None,
                };
                if let Some(cmd) = extra {
                    let a = fast.handle_command(cmd.clone(), clock);
                    let b = slow.handle_command(cmd, clock);
                    assert_eq!(a, b, "{name} k {k}");
                }
                fast.step(clock);
                slow.step(clock);
                let (a, b) = (fast.snapshot().values(), slow.snapshot().values());
                for (x, y) in a.iter().zip(b.iter()) {
                    assert_eq!(x.to_bits(), y.to_bits(), "{name} k {k}");
                }
                assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{name} k {k}");
            }
            // The sequence moved the vehicle (it was not a no-op).
            let nav = fast.nav();
            assert!(nav.x.hypot(nav.y) > 1.0, "{name}: {} {}", nav.x, nav.y);
        }
    }

    #[test]
    fn refused_setpoints_change_nothing_and_name_the_vehicle() {
        let mut f = fleet(2, vec![Field::X, Field::Y]);
        let mut out = vec![0.0; 4];
        let before = format!("{:?}", f.vehicles());
        let e = f.step(&[50.0, 0.0, f64::NAN, 0.0], &mut out).unwrap_err();
        assert!(
            e.0.contains("vehicle 1") && e.0.contains("DESIRED_THRUST"),
            "{e}"
        );
        let e = f
            .step(&[50.0, 0.0, 0.0, f64::INFINITY], &mut out)
            .unwrap_err();
        assert!(e.0.contains("DESIRED_RUDDER"), "{e}");
        let e = f.step(&[50.0, 0.0, 0.0, 1e300], &mut out).unwrap_err();
        assert!(e.0.contains("vehicle 1"), "{e}");
        assert!(f.step(&[50.0, 0.0], &mut out).is_err());
        assert!(f.step(&[50.0, 0.0, 1.0, 1.0], &mut [0.0; 3]).is_err());
        assert_eq!(before, format!("{:?}", f.vehicles()));
        assert_eq!(f.iterations(0), 0);
    }

    #[test]
    fn reset_restarts_the_clock_and_seeded_reset_is_repeatable() {
        let mut f = fleet(2, vec![Field::T, Field::X, Field::Y, Field::DriftX]);
        let mut out = vec![0.0; 8];
        for _ in 0..10 {
            f.step(&[100.0, 0.0, 100.0, 0.0], &mut out).unwrap();
        }
        assert!((out[0] - 1.0).abs() < 1e-12);
        f.reset_vehicle(0, Some((5.0, 6.0, 90.0)), Some((0.5, 0.0)))
            .unwrap();
        f.write_state(&mut out).unwrap();
        assert_eq!(&out[..4], &[0.0, 5.0, 6.0, 0.5]);
        assert_eq!(f.iterations(0), 0);
        assert_eq!(f.iterations(1), 10);
        f.reset_random(1, 7, 10.0, 30.0, 0.3).unwrap();
        let mut a = vec![0.0; 8];
        f.write_state(&mut a).unwrap();
        f.reset_random(1, 7, 10.0, 30.0, 0.3).unwrap();
        let mut b = vec![0.0; 8];
        f.write_state(&mut b).unwrap();
        assert_eq!(a, b);
        // Within the radius of the configured start (kayak: 0, 0).
        assert!(a[5].hypot(a[6]) <= 10.0 && a[7].abs() <= 0.3);
        f.reset_random(1, 8, 10.0, 30.0, 0.3).unwrap();
        f.write_state(&mut b).unwrap();
        assert_ne!(a, b);
        assert!(f
            .reset_vehicle(0, Some((f64::NAN, 0.0, 0.0)), None)
            .is_err());
        assert!(f.reset_random(0, 1, -1.0, 0.0, 0.0).is_err());
        assert!(f.reset_vehicle(9, None, None).is_err());
    }

    #[test]
    fn bad_shapes_are_refused_before_allocating() {
        assert!(BatchFleet::new(vec![], 0.0, 0.1, vec![], vec![]).is_err());
        assert!(BatchFleet::new(vec![kayak()], 0.0, f64::NAN, vec![], vec![]).is_err());
        assert!(BatchFleet::new(vec![kayak()], 0.0, 0.0, vec![], vec![]).is_err());
        assert!(BatchFleet::new(vec![kayak()], f64::INFINITY, 0.1, vec![], vec![]).is_err());
        assert_eq!(Field::from_name("lat"), Some(Field::Lat));
        assert_eq!(Field::Lat.name(), "lat");
        assert_eq!(Field::from_name("nope"), None);
    }

    /// Issue 37.19: past ±1e12 s a setpoint message is refused (its time
    /// is out of range), so a fleet whose next clock passes it refuses the
    /// step, naming the vehicle, as a single vehicle does; a reset makes
    /// it steppable again.
    #[test]
    fn a_step_past_the_largest_message_time_is_refused() {
        let mut f = BatchFleet::new(
            vec![kayak(); 2],
            1e12 - 0.25,
            0.1,
            vec![Actuator::Thrust, Actuator::Rudder],
            vec![Field::T],
        )
        .unwrap();
        let mut out = vec![0.0; 2];
        f.step(&[50.0, 0.0, 50.0, 0.0], &mut out).unwrap();
        f.step(&[50.0, 0.0, 50.0, 0.0], &mut out).unwrap();
        let before = format!("{:?}", f.vehicles());
        let e = f.step(&[50.0, 0.0, 50.0, 0.0], &mut out).unwrap_err();
        assert!(
            e.0.contains("vehicle 0") && e.0.contains("1000000000000"),
            "{e}"
        );
        assert_eq!(before, format!("{:?}", f.vehicles()));
        assert_eq!(f.iterations(0), 2);
        // Vehicle 0 reset: vehicle 1 is still at the bound.
        f.reset_vehicle(0, None, None).unwrap();
        let e = f.step(&[50.0, 0.0, 50.0, 0.0], &mut out).unwrap_err();
        assert!(e.0.contains("vehicle 1"), "{e}");
        f.reset_vehicle(1, None, None).unwrap();
        f.step(&[50.0, 0.0, 50.0, 0.0], &mut out).unwrap();
        assert!(f.step_one(0, &[50.0, 0.0]).is_ok());
        assert!(f.step_one(0, &[50.0, 0.0]).is_err());
    }

    /// `step_one` steps one vehicle exactly as `step` steps it.
    #[test]
    fn step_one_equals_the_fleet_step() {
        let mut a = fleet(3, vec![Field::X, Field::Y, Field::Speed, Field::Heading]);
        let mut b = a.clone();
        let mut out = vec![0.0; 12];
        for k in 0..300 {
            let sp: Vec<f64> = (0..3)
                .flat_map(|i| [60.0 + i as f64, (k as f64 * 0.05 + i as f64).sin() * 80.0])
                .collect();
            a.step(&sp, &mut out).unwrap();
            for i in 0..3 {
                b.step_one(i, &sp[2 * i..2 * i + 2]).unwrap();
            }
        }
        assert_eq!(format!("{:?}", a.vehicles()), format!("{:?}", b.vehicles()));
        assert!(b.step_one(3, &[0.0, 0.0]).is_err());
        assert!(b.step_one(0, &[f64::NAN, 0.0]).is_err());
    }

    #[test]
    fn memory_is_estimated_before_allocating_and_thrust_past_100_is_found() {
        // 10 M vehicles: tens of GB, refused by a caller with a 4 GiB budget.
        assert!(BatchFleet::bytes_needed(10_000_000, 4) > 30_000_000_000);
        assert!(BatchFleet::bytes_needed(1000, 4) < 10_000_000);
        let f = fleet(2, vec![Field::X]);
        assert_eq!(f.thrust_beyond_nominal(&[50.0, 150.0, 100.0, -100.0]), None);
        assert_eq!(
            f.thrust_beyond_nominal(&[50.0, 0.0, -500.0, 0.0]),
            Some((1, Actuator::Thrust, -500.0))
        );
    }

    /// Issue 41: a fleet stepped on 2 or 3 threads, and one stepped with
    /// `step_repeat` (the env's frame skip), equals the one-thread fleet
    /// stepped one call per step bit for bit: the whole vehicle state
    /// (`Debug` of every field) and every state row, on the thrust-rudder
    /// loop and the generic one, across resets that leave the vehicles'
    /// clocks apart and chunks of unequal length.
    #[test]
    fn threads_and_repeat_give_the_bits_of_one_thread() {
        let n = 2 * MIN_CHUNK + 37;
        for fields in [
            vec![Field::X, Field::Y, Field::Speed, Field::Heading],
            vec![Field::T, Field::X, Field::Sog, Field::Hog, Field::Thrust],
        ] {
            let w = fields.len();
            let one = fleet(n, fields.clone());
            let mut fleets = [one.clone(), one.clone(), one.clone(), one];
            fleets[1].set_threads(2).unwrap();
            fleets[2].set_threads(3).unwrap();
            fleets[3].set_threads(2).unwrap();
            let mut outs = vec![vec![0.0; n * w]; 4];
            let mut rng = Rng::for_run(41, 0);
            for call in 0..30u64 {
                // thrust 0..100 %, rudder ±100 %
                let sp: Vec<f64> = (0..2 * n)
                    .map(|j| match j % 2 {
                        0 => 100.0 * rng.unit(),
                        _ => 200.0 * rng.unit() - 100.0,
                    })
                    .collect();
                for (f, o) in fleets.iter_mut().zip(outs.iter_mut()).take(3) {
                    for _ in 0..4 {
                        f.step(&sp, o).unwrap();
                    }
                }
                fleets[3].step_repeat(&sp, &mut outs[3], 4).unwrap();
                if call % 20 == 7 {
                    let i = (rng.unit() * n as f64) as usize;
                    for f in fleets.iter_mut() {
                        f.reset_random(i, call, 5.0, 20.0, 0.2).unwrap();
                    }
                }
                let want = format!("{:?}", fleets[0].vehicles());
                for (j, (f, o)) in fleets.iter().zip(&outs).enumerate().skip(1) {
                    assert_eq!(format!("{:?}", f.vehicles()), want, "fleet {j} call {call}");
                    let same = o
                        .iter()
                        .zip(&outs[0])
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "fleet {j} call {call}: state rows differ");
                }
            }
            // They moved (24 s of random forward thrust: a kayak makes
            // about 1 m/s at 40 %); column 1 is y or x.
            let moved = (0..n).filter(|&i| outs[0][i * w + 1].abs() > 0.5).count();
            assert!(moved > n / 4, "{moved} of {n} moved");
        }
        let mut f = fleet(2, vec![Field::X]);
        assert!(f.set_threads(0).is_err() && f.set_threads(MAX_THREADS + 1).is_err());
        assert!(f.step_repeat(&[0.0; 4], &mut [0.0; 2], 0).is_err());
        assert_eq!(f.iterations(0), 0);
    }

    /// A repeat whose last step would pass the largest message time is
    /// refused whole (nothing changes), as its single steps would be.
    #[test]
    fn a_repeat_past_the_largest_message_time_is_refused_whole() {
        let mut f = BatchFleet::new(
            vec![kayak(); 2],
            1e12 - 0.25,
            0.1,
            vec![Actuator::Thrust, Actuator::Rudder],
            vec![Field::T],
        )
        .unwrap();
        let mut out = vec![0.0; 2];
        let before = format!("{:?}", f.vehicles());
        let e = f
            .step_repeat(&[50.0, 0.0, 50.0, 0.0], &mut out, 3)
            .unwrap_err();
        assert!(e.0.contains("step 3 from now"), "{e}");
        assert_eq!(before, format!("{:?}", f.vehicles()));
        f.step_repeat(&[50.0, 0.0, 50.0, 0.0], &mut out, 2).unwrap();
        assert_eq!(f.iterations(1), 2);
    }
}
