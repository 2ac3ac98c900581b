//! The uSimMarine vehicle model, sans-IO (docs/model.md).
//!
//! [`Vehicle`] is uSimMarine's `USM_MOOSApp` + `USM_Model` without the MOOS
//! I/O: [`Vehicle::handle_command`] is `OnNewMail` for one message,
//! [`Vehicle::step`] is `Iterate` (propagate, then post), and
//! [`Vehicle::publications`] is what that iteration posted. Time is always an
//! argument (clock seconds); nothing here reads a clock, a file or a socket.
//!
//! One step runs the stages of `propagateNodeRecord` in order, one module
//! each: [`speed`], [`heading`], [`depth`], [`position`] (with [`drift`] and
//! the [`current_field`]), then altitude and [`geodesy`].
//!
//! Heading convention: marine degrees, 0 = north (+y), 90 = east (+x),
//! clockwise; x = east metres, y = north metres. Pitch and yaw are radians.
use crate::command::{Command, MessageError, Payload};
use crate::interp::shaping::Shaping;

pub mod angles;
pub mod current_field;
pub mod depth;
pub mod drift;
pub mod env;
pub mod geodesy;
pub mod handshake;
pub mod heading;
#[cfg(test)]
mod layout_tests;
pub mod params;
pub mod pid;
pub mod pose;
pub mod position;
pub mod rng;
pub mod sailing;
pub mod sensing;
pub mod speed;
pub mod thrust_map;
pub mod trig;
mod trig_tables;
pub mod turn_limit;
mod v22_app;
pub mod wormhole;

pub use crate::actuator::Actuator;
pub use params::{ModelVariant, Params, StartPose};

use angles::{angle360, snap_to_step};
use heading::TurnSpeedMap;

/// A navigation record (uSimMarine's `NodeRecord`): stored verbatim.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Record {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Stored speed (the step mean), m/s; negative astern.
    pub speed: f64,
    /// Heading, degrees (in [0, 360) after the first step).
    pub heading: f64,
    /// Depth, m (positive down).
    pub depth: f64,
    /// Altitude above the bottom, m (`None` until first set).
    pub altitude: Option<f64>,
    /// Pitch, radians.
    pub pitch: f64,
    /// Yaw, radians (east-north-up sense).
    pub yaw: f64,
    /// Speed over ground, m/s.
    pub sog: f64,
    /// Heading over ground: the inputs of the last position step's bearing,
    /// computed when read ([`Record::hog`]): a fleet that never reads it
    /// pays nothing for it (about 120 instructions a step).
    hog: position::HogInputs,
    /// Time stamp, clock seconds.
    pub stamp: f64,
    /// The position (x, y), m, at which the record's lat/lon were last
    /// computed (V22 publishes these stored values, docs/v22.md §13).
    pub ll_xy: (f64, f64),
}

impl Record {
    /// Heading over ground, degrees: the bearing of the last position
    /// step's displacement (0 before the first step).
    pub fn hog(&self) -> f64 {
        self.hog.value()
    }

    /// The inputs of [`Record::hog`], for a caller that keeps the record's
    /// heading over ground to compute later, if at all (the encounter
    /// poses of the blocked fleet replay: most are never asked for it).
    pub fn hog_inputs(&self) -> position::HogInputs {
        self.hog
    }
}

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

/// The state as the CSV (docs/formats.md §3) and `NODE_REPORT` show it.
/// Units: m, m/s, degrees; pitch and yaw in radians; NaN = not set.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Snapshot {
    /// Iteration index (0 = after start-up).
    pub k: u64,
    /// Mission time, s (clock − start time).
    pub t: f64,
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Stored speed, m/s.
    pub speed: f64,
    /// Heading, degrees.
    pub heading: f64,
    /// Depth, m.
    pub depth: f64,
    /// Altitude, m (NaN until set).
    pub altitude: f64,
    /// Pitch, radians.
    pub pitch: f64,
    /// Yaw, radians.
    pub yaw: f64,
    /// Speed over ground, m/s.
    pub sog: f64,
    /// Heading over ground, degrees.
    pub hog: f64,
    /// Last published `<PREFIX>_SPEED`, m/s (NaN before the first).
    pub nav_speed: f64,
    /// Last published `<PREFIX>_HEADING`, degrees (NaN before the first).
    pub nav_heading: f64,
    /// Latitude, degrees (NaN without an origin).
    pub lat: f64,
    /// Longitude, degrees (NaN without an origin).
    pub lon: f64,
    /// Drift east, m/s.
    pub drift_x: f64,
    /// Drift north, m/s.
    pub drift_y: f64,
    /// Rudder as the model holds it.
    pub rudder: f64,
    /// Thrust, percent.
    pub thrust: f64,
    /// Elevator, percent (unclipped).
    pub elevator: f64,
    /// Ground-truth east, m.
    pub gt_x: f64,
    /// Ground-truth north, m.
    pub gt_y: f64,
    /// Left thruster, percent (differential mode, docs/model.md §15.2).
    pub thrust_l: f64,
    /// Right thruster, percent.
    pub thrust_r: f64,
    /// Current-field velocity east at the vehicle, m/s, added to the drift
    /// in the last step (0 without a field, docs/model.md §19).
    pub current_x: f64,
    /// Current-field velocity north at the vehicle, m/s.
    pub current_y: f64,
    /// What the sensors reported in the last posting (only with a
    /// `[sensors]` table; not a CSV column; in `NODE_REPORT` as `sensed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensed: Option<SensedNav>,
    /// The hull in the sea (only with a `[sea]`; CSV columns on request,
    /// docs/formats.md §3; in `NODE_REPORT` as `wave`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wave: Option<WaveOut>,
}

/// The hull's wave-frequency motion as the outputs show it (docs/model.md
/// §24.5): the surface elevation and heave (m, up), roll (degrees,
/// starboard down positive) and pitch (degrees, bow up positive) from the
/// waves alone (the model's own depth pitch is [`Snapshot::pitch`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct WaveOut {
    /// Free-surface elevation at the hull's centre, m.
    pub elevation: f64,
    /// Heave, m: the elevation averaged over the waterplane.
    pub heave: f64,
    /// Roll, degrees.
    pub roll: f64,
    /// Pitch, degrees.
    pub pitch: f64,
}

impl From<&env::WaveMotion> for WaveOut {
    fn from(m: &env::WaveMotion) -> WaveOut {
        WaveOut {
            elevation: m.elevation,
            heave: m.heave,
            roll: m.roll_deg,
            pitch: m.pitch_deg,
        }
    }
}

/// The sensed navigation of the last posting, as published: position (m,
/// and degrees with an origin; NaN during a dropout), speed (m/s, rounded
/// as `NAV_SPEED`), heading (degrees, wrapped as `NAV_HEADING`), depth (m),
/// and the GPS fix (GGA quality 0 = none, HDOP, satellites).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct SensedNav {
    /// East, m (NaN: no fix).
    pub x: f64,
    /// North, m (NaN: no fix).
    pub y: f64,
    /// Latitude, degrees (NaN: no fix or no origin).
    pub lat: f64,
    /// Longitude, degrees (NaN: no fix or no origin).
    pub lon: f64,
    /// Published speed, m/s (NaN: no reading).
    pub speed: f64,
    /// Published heading, degrees (NaN: no reading).
    pub heading: f64,
    /// Depth, m (NaN: no reading).
    pub depth: f64,
    /// GGA fix quality (0: no fix).
    pub fix: u8,
    /// Horizontal dilution of precision (NaN: no fix).
    pub hdop: f64,
    /// Satellites in use.
    pub satellites: u8,
}

impl Snapshot {
    /// The names of [`Snapshot::values`], in order: the CSV columns after `k`.
    pub const VALUE_NAMES: [&'static str; 26] = [
        "t",
        "x",
        "y",
        "speed",
        "heading",
        "depth",
        "altitude",
        "pitch",
        "yaw",
        "sog",
        "hog",
        "nav_speed",
        "nav_heading",
        "lat",
        "lon",
        "drift_x",
        "drift_y",
        "rudder",
        "thrust",
        "elevator",
        "gt_x",
        "gt_y",
        "thrust_l",
        "thrust_r",
        "current_x",
        "current_y",
    ];

    /// The CSV columns a mission can add after the fixed ones (`[mission]
    /// columns`, docs/formats.md §3), in the order they are written: the
    /// sea's (m, m, degrees, degrees; NaN without a `[sea]`) and the
    /// sensors' (m, m, degrees, GGA quality; NaN without `[sensors]`, the
    /// position NaN while the GPS has no fix).
    pub const EXTRA_NAMES: [&'static str; 8] = [
        "wave_elevation",
        "heave",
        "roll",
        "wave_pitch",
        "sensed_x",
        "sensed_y",
        "sensed_heading",
        "gps_fix",
    ];

    /// The value of extra column `i` of [`Snapshot::EXTRA_NAMES`] (NaN for
    /// an index beyond the list).
    pub fn extra_value(&self, i: usize) -> f64 {
        let nan = f64::NAN;
        let w = self.wave;
        let s = self.sensed;
        match i {
            0 => w.map_or(nan, |w| w.elevation),
            1 => w.map_or(nan, |w| w.heave),
            2 => w.map_or(nan, |w| w.roll),
            3 => w.map_or(nan, |w| w.pitch),
            4 => s.map_or(nan, |s| s.x),
            5 => s.map_or(nan, |s| s.y),
            6 => s.map_or(nan, |s| s.heading),
            7 => s.map_or(nan, |s| f64::from(s.fix)),
            _ => nan,
        }
    }

    /// Every number after `k`, in CSV column order (`t` first, exact as the
    /// model holds it): the one list the CSV and MCAP writers share.
    #[inline]
    pub fn values(&self) -> [f64; 26] {
        [
            self.t,
            self.x,
            self.y,
            self.speed,
            self.heading,
            self.depth,
            self.altitude,
            self.pitch,
            self.yaw,
            self.sog,
            self.hog,
            self.nav_speed,
            self.nav_heading,
            self.lat,
            self.lon,
            self.drift_x,
            self.drift_y,
            self.rudder,
            self.thrust,
            self.elevator,
            self.gt_x,
            self.gt_y,
            self.thrust_l,
            self.thrust_r,
            self.current_x,
            self.current_y,
        ]
    }
}

/// One simulated vehicle: parameters, the two records, actuators and
/// everything mail can change.
///
/// Laid out for fleets (`repr(C)`, the order below is the memory order): a
/// step of 100,000 vehicles cannot find their state in any cache, so the
/// fields every step reads or writes sit together, on 10 of the vehicle's
/// 49 cache lines instead of ~17 spread over the whole struct:
/// `Params`' per-step fields (its first line, the vehicle being aligned to
/// 64 bytes), then from `V22State::sailing_on` (its last field) through
/// the per-step fields here to `Shaping::busy` (its first). The rest (the
/// ground-truth record, configuration kept for resets, V22 extras) comes
/// after. The arithmetic is untouched: only where the fields live changed.
/// `layout_tests` checks the span.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Vehicle {
    params: Params,
    /// Padding that keeps every field after `params` at the same offset
    /// modulo 64 whatever `Params`' size: the per-step span's cache lines
    /// do not move when a parameter is added (see [`PARAMS_PHASE`]).
    _params_pad: [u8; PARAMS_PAD],
    /// V22 extras: PID, sailing, wormholes, handshake, postings.
    v22: v22_app::V22State,
    // -- read or written by every step, from here to `shaping`'s first field
    nav: Record,
    iteration: u64,
    /// Whole seconds spent paused (`paused_centis / 100`), s.
    paused_whole_s: f64,
    // app state
    paused_since: Option<f64>,
    // actuators as the model holds them
    rudder: f64,
    /// Clock of the last rudder value (the rate limit's start), s: read
    /// and written by every `DESIRED_RUDDER`, a batch step's setpoint.
    /// Between `rudder` and `thrust` on purpose: a step reads those two
    /// right after a batch's setpoints wrote them (8 bytes each), and as
    /// neighbours they were read as one 16-byte load, which store
    /// forwarding cannot serve from two stores (a stall every step).
    rudder_t_last: f64,
    thrust: f64,
    elevator: f64,
    /// (thrust, M(thrust)) of the last thrust-map lookup.
    map_cache: (f64, f64),
    /// Memo of the heading step's quotients.
    turn_factors: heading::TurnFactors,
    // environment and settings changeable by mail
    rotate_speed: f64,
    buoyancy_rate: f64,
    turn_rate: f64,
    water_depth: f64,
    turn_radius: f64,
    drift: (f64, f64),
    /// Current-field velocity applied in the last step, m/s (east, north).
    current: (f64, f64),
    /// The NAV record's speed and heading (as stored, m/s and degrees) and
    /// the classic reverse flag of the last posting; the published values
    /// (rounded, wrapped) are derived only when asked for.
    nav_posted: Option<(f64, f64, bool)>,
    posted: Option<Posting>,
    /// Model thrust mode: differential.
    mode_diff: bool,
    /// Classic app flag: differential (gates DESIRED_THRUST/RUDDER).
    app_diff: bool,
    reverse: bool,
    enabled: bool,
    obstacle: bool,
    reset_fresh: bool,
    drift_fresh: bool,
    /// Position-step trigonometry memos, NAV and GT records (the GT one
    /// only in dual-state mode).
    trig: [position::TrigMemo; 2],
    shaping: Shaping,
    // -- the rest: dual-state, differential thrust, V22 and rare paths
    gt: Record,
    thrust_l: f64,
    thrust_r: f64,
    start_time: f64,
    tsm: TurnSpeedMap,
    /// The turn rate's bits for which `tsm` is normalized
    /// ([`TurnSpeedMap::normalize`]; `None`: not yet).
    tsm_key: Option<u64>,
    paused_centis: i64,
    reset_count: u64,
    /// Steps skipped because they produced a non-finite state.
    skipped_steps: u64,
    geo: Option<geodesy::GeoConverter>,
    /// The sensor suite (`[sensors]`), if any, and its last reading.
    sensors: Option<sensing::SensorBox>,
    sensed: Option<sensing::Reading>,
    /// The environment's wave-frequency motion at the end of the last step
    /// (`None` before the first and after a reset): the next step adds the
    /// change from it (docs/model.md §24.5).
    wave: Option<env::WaveMotion>,
    /// The environment's slow forcing of the last step.
    env_forcing: env::StepForcing,
}

/// Where the field after `Vehicle::params` starts modulo 64, bytes: the
/// phase for which the per-step span lies on 9 cache lines and the setpoint
/// fields on the span's last line and the next (`layout_tests`).
const PARAMS_PHASE: usize = 24;

/// Bytes of `Vehicle::_params_pad`: from the end of `Params` to the next
/// offset at [`PARAMS_PHASE`] modulo 64.
const PARAMS_PAD: usize = (PARAMS_PHASE + 64 - std::mem::size_of::<Params>() % 64) % 64;

/// Bytes `[start, end)` of a [`Vehicle`] that hold its per-step fields
/// (besides the `Params` in its first 64 bytes): from `V22State::sailing_on`
/// to `Shaping::busy`.
const STEP_SPAN: (usize, usize) = (
    std::mem::offset_of!(Vehicle, v22.sailing_on),
    std::mem::offset_of!(Vehicle, shaping) + Shaping::BUSY_OFFSET + 1,
);

/// Where the shaping fields of a plain thrust or rudder setpoint end in a
/// [`Vehicle`], bytes (see [`Vehicle::prefetch_setpoint_step`]).
const SETPOINT_END: usize = std::mem::offset_of!(Vehicle, shaping) + Shaping::SETPOINT_END;

/// The `DESIRED_*` message of actuator `act` with value `v`, percent.
pub fn desired_command(act: Actuator, v: f64) -> Command {
    match act {
        Actuator::Thrust => Command::DesiredThrust(v),
        Actuator::Rudder => Command::DesiredRudder(v),
        Actuator::Elevator => Command::DesiredElevator(v),
        Actuator::ThrustL => Command::DesiredThrustL(v),
        Actuator::ThrustR => Command::DesiredThrustR(v),
    }
}

impl Vehicle {
    /// A vehicle at its start pose from anything that holds its parameters
    /// (a `config::VehicleConfig`, or `Params` themselves); `start_time_s` is
    /// the clock at start-up, s. The model never sees the config file.
    pub fn new(cfg: &impl AsRef<Params>, start_time_s: f64) -> Vehicle {
        Vehicle::from_params(cfg.as_ref().clone(), start_time_s)
    }

    /// A vehicle from validated parameters; `start_time_s` is the clock at start-up.
    pub fn from_params(params: Params, start_time_s: f64) -> Vehicle {
        let s = params.start;
        let rec = Record {
            x: s.x,
            y: s.y,
            speed: s.speed,
            heading: s.heading,
            depth: s.depth,
            stamp: start_time_s,
            ll_xy: (s.x, s.y),
            ..Record::default()
        };
        let geo = params.geo_converter();
        let shaping = Shaping::new(&params.actuators, start_time_s);
        Vehicle {
            start_time: start_time_s,
            nav: rec,
            gt: rec,
            rudder: 0.0,
            thrust: 0.0,
            elevator: 0.0,
            thrust_l: 0.0,
            thrust_r: 0.0,
            mode_diff: params.thrust_mode_diff,
            app_diff: params.thrust_mode_diff,
            reverse: params.thrust_mode_reverse,
            rudder_t_last: 0.0,
            drift: (params.drift_x, params.drift_y),
            current: (0.0, 0.0),
            rotate_speed: params.rotate_speed,
            buoyancy_rate: params.buoyancy_rate,
            turn_rate: params.turn_rate,
            water_depth: params.default_water_depth,
            turn_radius: params.turn_radius,
            tsm: TurnSpeedMap {
                null_speed: params.turn_spd_map_null_speed,
                null_rate: params.turn_spd_map_null_rate,
                full_speed: params.turn_spd_map_full_speed,
                full_rate: params.turn_spd_map_full_rate,
            },
            tsm_key: None,
            paused_since: if params.sim_pause {
                Some(start_time_s)
            } else {
                None
            },
            paused_centis: 0,
            paused_whole_s: 0.0,
            enabled: true,
            obstacle: false,
            iteration: 0,
            // V22 counts the config's `start_pos` lines too (docs/v22.md).
            reset_count: match params.variant {
                ModelVariant::V22 => params.start_pos_lines,
                ModelVariant::Classic => 0,
            },
            reset_fresh: false,
            drift_fresh: true,
            nav_posted: None,
            posted: None,
            trig: Default::default(),
            turn_factors: Default::default(),
            map_cache: (f64::NAN, 0.0),
            geo,
            shaping,
            v22: v22_app::V22State::new(&params),
            sensors: params.sensors.clone(),
            sensed: None,
            params,
            _params_pad: [0; PARAMS_PAD],
            skipped_steps: 0,
            wave: None,
            env_forcing: env::StepForcing::default(),
        }
    }

    /// Whether the simulation is enabled (`USM_ENABLED`).
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The parameters the vehicle was built with.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The NAV record (published as `<PREFIX>_*`).
    pub fn nav(&self) -> &Record {
        &self.nav
    }

    /// The ground-truth record (propagated only in dual-state mode).
    pub fn ground_truth(&self) -> &Record {
        &self.gt
    }

    /// Current drift (east, north), m/s.
    pub fn drift(&self) -> (f64, f64) {
        self.drift
    }

    /// The wave-frequency motion at the end of the last step (heave, roll,
    /// pitch, the surface elevation; docs/model.md §24.3), `None` without a
    /// sea or before the first step.
    pub fn wave_motion(&self) -> Option<&env::WaveMotion> {
        self.wave.as_ref()
    }

    /// The hull's wave-frequency motion now (docs/model.md §24.5): that of
    /// the last step, or before the first step (and after a reset) the
    /// motion at the current pose, which the next step starts from. `None`
    /// without a sea. In dual state, of the ground-truth record (the one
    /// the sea moves).
    pub fn wave_now(&self) -> Option<env::WaveMotion> {
        let env = self.params.env.as_deref()?;
        env.sea.as_ref()?;
        if let Some(m) = self.wave {
            return Some(m);
        }
        let r = if self.params.dual_state {
            &self.gt
        } else {
            &self.nav
        };
        let tau = r.stamp - self.start_time;
        Some(env.wave_motion(r.x, r.y, tau, r.heading, r.depth))
    }

    /// The environment layer (`[sea]`, `[wind]`, `[current_tide]`), if any
    /// part is on: for the surface elevation anywhere and the wind.
    pub fn environment(&self) -> Option<&env::Environment> {
        self.params.env.as_deref()
    }

    /// Simulated time τ of the environment layer, s (the NAV record's
    /// stamp minus the start-up clock): the time the sea and the wind of
    /// the last step's end are evaluated at.
    pub fn env_time(&self) -> f64 {
        self.nav.stamp - self.start_time
    }

    /// What the sensors reported in the last posting (`[sensors]`; `None`
    /// without a suite or before the first posting): the position (m)
    /// is `None` while the GPS has no fix.
    pub fn sensed(&self) -> Option<&sensing::Reading> {
        self.sensed.as_ref()
    }

    /// What the environment added to the last step: windage and Stokes
    /// drift (m/s), weathervaning yaw rate (deg/s); zero without one.
    pub fn env_forcing(&self) -> env::StepForcing {
        self.env_forcing
    }

    /// Iterations run so far.
    pub fn iteration(&self) -> u64 {
        self.iteration
    }

    /// Whether the simulation is paused (`USM_SIM_PAUSED`, `sim_pause`).
    pub fn is_paused(&self) -> bool {
        self.paused_since.is_some()
    }

    /// Steps skipped so far because they would have made the state non-finite.
    pub fn skipped_steps(&self) -> u64 {
        self.skipped_steps
    }

    /// Pending timed commands (`SET` lists) over all actuators.
    pub fn pending_timed_commands(&self) -> usize {
        self.shaping.pending_total()
    }

    /// Ask the CPU to start loading the cache lines the next [`Vehicle::step`]
    /// reads (the `Params` line and the per-step span, see [`Vehicle`]):
    /// a fleet calls it a vehicle or two ahead, so those lines arrive from
    /// memory while it steps the one before. Changes nothing; a hint only
    /// (no-op off x86-64).
    #[inline]
    pub fn prefetch_step(&self) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let base = (self as *const Vehicle).cast::<i8>();
            // SAFETY: prefetching has no effect on memory or on the
            // program's state, whatever the address; all these lie
            // inside `*self` anyway.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(base);
                let mut at = STEP_SPAN.0 & !63;
                while at < STEP_SPAN.1 {
                    _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(at));
                    at += 64;
                }
            }
        }
    }

    /// [`Vehicle::prefetch_step`] and the lines of the setpoint path after
    /// the step span (the shaping fields a plain `DESIRED_THRUST` or
    /// `DESIRED_RUDDER` writes, [`Shaping`]'s first 96 bytes): what a
    /// batch step of such setpoints reads. A hint only.
    #[inline]
    pub fn prefetch_setpoint_step(&self) {
        self.prefetch_step();
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let base = (self as *const Vehicle).cast::<i8>();
            // SAFETY: as in prefetch_step (a hint; inside `*self`).
            unsafe {
                let mut at = (STEP_SPAN.1 + 63) & !63;
                while at < SETPOINT_END {
                    _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(at));
                    at += 64;
                }
            }
        }
    }

    fn is_v22(&self) -> bool {
        self.params.variant == ModelVariant::V22
    }

    /// Handle one message received at clock `t_s` (before the next
    /// [`Vehicle::step`]). An error means the message was dropped and the
    /// state is unchanged.
    pub fn handle_command(&mut self, cmd: Command, t_s: f64) -> Result<(), MessageError> {
        use Command as C;
        // V22: the last iteration's pose events may stand for the records
        // themselves; mail may change them (a DESIRED_* value changes the
        // actuators only, never a record: it skips the copy, as the batch
        // path `set_desired` does)
        let actuator_only = matches!(
            cmd,
            C::DesiredThrust(_)
                | C::DesiredRudder(_)
                | C::DesiredElevator(_)
                | C::DesiredThrustL(_)
                | C::DesiredThrustR(_)
        );
        if self.v22.pose_live && !actuator_only {
            self.v22_freeze_poses();
        }
        // The step-boundary guard for inputs: nothing non-finite gets in,
        // whoever built the command.
        if !(t_s.is_finite() && t_s.abs() <= crate::command::limits::TIME_S) {
            return Err(MessageError::new(
                cmd.var(),
                format!("{cmd:?}"),
                format!("receipt time {t_s} is not finite or out of range"),
            ));
        }
        if let Err(reason) = crate::command::check_bounds(&cmd) {
            let shown = cmd
                .number()
                .map(crate::command::fmt_num)
                .unwrap_or_default();
            return Err(MessageError::new(cmd.var(), shown, reason));
        }
        match cmd {
            C::DesiredThrust(v) => self.handle_setpoint(Actuator::Thrust, v, t_s),
            C::DesiredRudder(v) => self.handle_setpoint(Actuator::Rudder, v, t_s),
            C::DesiredElevator(v) => self.handle_setpoint(Actuator::Elevator, v, t_s),
            C::DesiredThrustL(v) => self.handle_setpoint(Actuator::ThrustL, v, t_s),
            C::DesiredThrustR(v) => self.handle_setpoint(Actuator::ThrustR, v, t_s),
            C::Set(json) => {
                self.shaping
                    .handle_set(&json, t_s)
                    .map_err(|e| MessageError::new("SET", &json, e))?;
            }
            C::ThrustModeDifferential(s) => {
                let on = if self.is_v22() {
                    match s.trim().to_lowercase().as_str() {
                        "differential" | "true" => true,
                        "normal" | "false" => false,
                        _ => {
                            return Err(bad_text(
                                "THRUST_MODE_DIFFERENTIAL",
                                &s,
                                "expected differential/true or normal/false",
                            ))
                        }
                    }
                } else {
                    parse_bool(&s).ok_or_else(|| {
                        bad_text("THRUST_MODE_DIFFERENTIAL", &s, "expected true or false")
                    })?
                };
                self.app_diff = on;
                self.mode_diff = on;
            }
            C::ThrustModeReverse(s) => {
                let on = if self.is_v22() {
                    match s.trim().to_lowercase().as_str() {
                        "reverse" | "true" => true,
                        "normal" | "false" => false,
                        _ => {
                            return Err(bad_text(
                                "THRUST_MODE_REVERSE",
                                &s,
                                "expected reverse/true or normal/false",
                            ))
                        }
                    }
                } else {
                    s.trim().eq_ignore_ascii_case("true")
                };
                self.reverse = on;
            }
            C::SimPaused(s) => {
                let pause = if self.is_v22() {
                    match s.trim().to_lowercase().as_str() {
                        "true" | "on" | "yes" => true,
                        "false" | "off" | "no" => false,
                        "toggle" => !self.is_paused(),
                        _ => {
                            return Err(bad_text(
                                "USM_SIM_PAUSED",
                                &s,
                                "expected true/false/toggle",
                            ))
                        }
                    }
                } else {
                    s.trim().to_uppercase() == "TRUE"
                };
                self.set_paused(pause, t_s);
            }
            C::BuoyancyRate(v) => self.buoyancy_rate = v,
            C::RotateSpeed(v) => self.rotate_speed = v,
            C::DriftX(v) => self.set_drift((v, self.drift.1), false),
            C::DriftY(v) => self.set_drift((self.drift.0, v), false),
            C::DriftVector(s) => {
                let (a, m) =
                    drift::parse_vector(&s).map_err(|r| bad_text("DRIFT_VECTOR", &s, r))?;
                let d = drift::components(a, m);
                drift::check(d).map_err(|r| bad_text("DRIFT_VECTOR", &s, r))?;
                self.set_drift(d, true);
            }
            C::DriftVectorAdd(s) => {
                let (a, m) =
                    drift::parse_vector(&s).map_err(|r| bad_text("DRIFT_VECTOR_ADD", &s, r))?;
                let d = drift::add(self.drift, a, m);
                drift::check(d).map_err(|r| bad_text("DRIFT_VECTOR_ADD", &s, r))?;
                self.set_drift(d, true);
            }
            C::DriftVectorMult(k) => {
                let d = drift::mult(self.drift, k);
                drift::check(d).map_err(|r| MessageError::new("DRIFT_VECTOR_MULT", k, r))?;
                self.set_drift(d, true);
            }
            C::WaterDepth(v) => {
                if v < 0.0 {
                    return Err(MessageError::new(
                        "WATER_DEPTH",
                        v,
                        "negative water depth is ignored",
                    ));
                }
                self.water_depth = v;
            }
            C::Reset(s) => self.handle_reset(&s)?,
            C::Sensor(s) => {
                let t = t_s - self.start_time;
                match &mut self.sensors {
                    Some(b) => {
                        b.0.command(&s, t)
                            .map_err(|r| bad_text("USM_SENSOR", &s, r))?
                    }
                    None => {
                        return Err(bad_text(
                            "USM_SENSOR",
                            &s,
                            "this vehicle has no [sensors] table (add one to its config)",
                        ))
                    }
                }
            }
            C::TurnRate(v) => self.turn_rate = v.clamp(0.0, 100.0),
            C::Enabled(s) => {
                self.enabled = if self.is_v22() && s.trim().eq_ignore_ascii_case("toggle") {
                    !self.enabled // V22 reads MOOS's boolean words, toggle included
                } else {
                    parse_bool(&s)
                        .ok_or_else(|| bad_text("USM_ENABLED", &s, "expected true or false"))?
                };
            }
            C::ObstacleHit(p) => {
                self.obstacle = match (&p, self.is_v22()) {
                    // classic reads a double: any string message is −1, i.e. a hit
                    (Payload::Number(v), false) => *v != 0.0,
                    (Payload::Text(_), false) => true,
                    (Payload::Text(s), true) if s.trim().eq_ignore_ascii_case("toggle") => {
                        !self.obstacle
                    }
                    (Payload::Text(s), true) => parse_bool(s)
                        .ok_or_else(|| bad_text("OBSTACLE_HIT", s, "expected true or false"))?,
                    (Payload::Number(v), true) => *v != 0.0,
                };
            }
            C::TurnRadius(v) => {
                if v < 0.0 {
                    return Err(MessageError::new("USM_TURN_RADIUS", v, "must be >= 0"));
                }
                self.turn_radius = v;
            }
            other => self.handle_v22_command(other, t_s)?,
        }
        Ok(())
    }

    /// A plain number `v` on `DESIRED_<act>` received at clock `t_s`: exactly
    /// what [`Vehicle::handle_command`] does with that message (same checks,
    /// shaping and actuator handling; same numbers), without building a
    /// [`Command`]: the per-vehicle setpoint path of batch users
    /// ([`crate::batch::BatchFleet`]). A refusal (non-finite or out-of-range
    /// value or time) is the message path's own error; nothing changes.
    #[inline]
    pub fn set_desired(&mut self, act: Actuator, v: f64, t_s: f64) -> Result<(), MessageError> {
        // handle_command's two guards: receipt time, then check_bounds
        // (finite and within ±limits::ACTUATOR percent for every DESIRED_*).
        let time_ok = t_s.is_finite() && t_s.abs() <= crate::command::limits::TIME_S;
        if !(time_ok && v.is_finite() && v.abs() <= crate::command::limits::ACTUATOR) {
            return self.handle_command(desired_command(act, v), t_s);
        }
        self.handle_setpoint(act, v, t_s);
        Ok(())
    }

    /// [`Vehicle::set_desired`] of a value and a receipt time the caller
    /// has checked (a batch checks the whole setpoint array and each clock
    /// once): `v` finite and within ±`limits::ACTUATOR` percent, `t_s`
    /// finite and within ±`limits::TIME_S`, and `t_us` its
    /// `seconds_to_us` (primed with [`Vehicle::prime_clock`] first, as a
    /// batch does, the clock memo ends as the message leaves it). The same
    /// handling, without the checks; each arm
    /// with a constant actuator, so its handling folds to that actuator's.
    #[inline(always)]
    pub fn set_desired_checked(&mut self, act: Actuator, v: f64, t_s: f64, t_us: i64) {
        debug_assert!(v.is_finite() && v.abs() <= crate::command::limits::ACTUATOR);
        debug_assert!(t_s.is_finite() && t_s.abs() <= crate::command::limits::TIME_S);
        match act {
            Actuator::Thrust => self.setpoint_us(Actuator::Thrust, v, t_s, t_us),
            Actuator::Rudder => self.setpoint_us(Actuator::Rudder, v, t_s, t_us),
            Actuator::Elevator => self.setpoint_us(Actuator::Elevator, v, t_s, t_us),
            Actuator::ThrustL => self.setpoint_us(Actuator::ThrustL, v, t_s, t_us),
            Actuator::ThrustR => self.setpoint_us(Actuator::ThrustR, v, t_s, t_us),
        }
    }

    /// [`Vehicle::handle_setpoint`] with the receipt time in µs.
    #[inline(always)]
    fn setpoint_us(&mut self, act: Actuator, v: f64, t_s: f64, t_us: i64) {
        if let Some(now) = self.shaping.handle_plain_us(act, v, t_us) {
            self.apply_actuator(act, now, t_s);
        }
    }

    /// Hand the vehicle clock `t_s` already converted to integer µs
    /// (`t_us` must be `interp::timed_commands::seconds_to_us(t_s)`): a
    /// batch converts each step's clock once for all its vehicles instead
    /// of once per vehicle. Changes no state that the model reads.
    #[inline]
    pub fn prime_clock(&mut self, t_s: f64, t_us: Option<i64>) {
        self.shaping.prime_time(t_s, t_us);
    }

    /// A plain number on a `DESIRED_*` variable: a `ClearAll` with one command
    /// at the receipt time for the shaping layer, and (unless the actuator is
    /// smoothed) uSimMarine's handling of the message right away.
    #[inline]
    fn handle_setpoint(&mut self, act: Actuator, v: f64, t_s: f64) {
        if let Some(now) = self.shaping.handle_plain(act, v, t_s) {
            self.apply_actuator(act, now, t_s);
        }
    }

    /// uSimMarine's mail handling of one actuator value at clock `t_s`.
    #[inline(always)]
    fn apply_actuator(&mut self, act: Actuator, v: f64, t_s: f64) {
        let v22 = self.is_v22();
        match act {
            Actuator::Thrust => {
                if v22 {
                    if !self.mode_diff {
                        self.thrust = v;
                    }
                } else if !self.app_diff {
                    self.thrust = v;
                    self.mode_diff = false;
                }
            }
            Actuator::Rudder => {
                let gated = if v22 { self.mode_diff } else { self.app_diff };
                if !gated {
                    self.set_rudder(v, t_s);
                    if !v22 {
                        self.mode_diff = false;
                    }
                }
            }
            Actuator::Elevator => self.elevator = v,
            Actuator::ThrustL => {
                if self.mode_diff || (!v22 && self.app_diff) {
                    self.thrust_l = v.clamp(-100.0, 100.0);
                }
            }
            Actuator::ThrustR => {
                if self.mode_diff || (!v22 && self.app_diff) {
                    self.thrust_r = v.clamp(-100.0, 100.0);
                }
            }
        }
    }

    /// Rudder rate limit per message (docs/model.md §15.1).
    fn set_rudder(&mut self, v: f64, t_s: f64) {
        let rho = self.params.max_rudder_degs_per_sec;
        let dmax = if rho > 0.0 {
            (t_s - self.rudder_t_last) * rho
        } else {
            100.0
        };
        // `clamp(−|dmax|, |dmax|)` as two tests: in the V22 step the
        // PID's rudder comes through here every step, and `clamp`'s
        // `maxsd`/`minsd` put two dependent operations into the chain
        // from one heading to the next (a NaN `dmax`, whose `clamp`
        // panics, leaves the change as it is; `−c > m` is `c < −m`,
        // written so that it is not compiled into a `maxsd` again)
        let m = dmax.abs();
        let c = v - self.rudder;
        let change = if c > m {
            m
        } else if -c > m {
            -m
        } else {
            c
        };
        self.rudder += change;
        self.rudder_t_last = t_s;
    }

    fn set_drift(&mut self, d: (f64, f64), fresh: bool) {
        if d.0.is_finite() && d.1.is_finite() {
            self.drift = d;
            if fresh || self.is_v22() {
                self.drift_fresh = true;
            }
        }
    }

    fn handle_reset(&mut self, s: &str) -> Result<(), MessageError> {
        // Stricter than uSimMarine for live messages: every value must be a
        // finite number and every key known, or nothing is applied.
        let (p, err) = pose::parse_pose(s);
        if let Some(e) = err {
            return Err(bad_text("USM_RESET", s, e));
        }
        pose::check_bounds(&p).map_err(|e| bad_text("USM_RESET", s, e))?;
        for elem in s.split(',') {
            let val = elem.split_once('=').map(|(_, v)| v).unwrap_or(elem);
            if crate::command::parse_number(val).is_err() {
                return Err(bad_text(
                    "USM_RESET",
                    s,
                    format!("`{}` is not a finite number", val.trim()),
                ));
            }
        }
        for rec in [&mut self.nav, &mut self.gt] {
            apply_pose(rec, &p);
        }
        self.wave = None; // a reset moves the hull, not the sea
        self.reset_count += 1;
        if self.is_v22() {
            self.v22_reset_posted();
        } else {
            self.reset_fresh = true;
        }
        Ok(())
    }

    fn set_paused(&mut self, pause: bool, t_s: f64) {
        match (pause, self.paused_since) {
            (true, None) => self.paused_since = Some(t_s),
            (false, Some(since)) => {
                // MBTimer counts ticks of times() (1/100 s)
                self.paused_centis += ((t_s - since) * 100.0).round().max(0.0) as i64;
                self.paused_whole_s = (self.paused_centis / 100) as f64;
                self.paused_since = None;
            }
            _ => {}
        }
    }

    /// Run one iteration (uSimMarine's `Iterate`) at clock `t_s`: actuator
    /// shaping, propagation (docs/model.md §5–§11), then the postings, which
    /// [`Vehicle::publications`] returns until the next step.
    pub fn step(&mut self, t_s: f64) {
        self.iteration += 1;
        if self.shaping.is_busy() {
            let mut shaped = [None; 5];
            let mut any = false;
            self.shaping.cycle(t_s, |act, v| {
                shaped[act.index()] = Some(v);
                any = true;
            });
            if any {
                for act in Actuator::ALL {
                    if let Some(v) = shaped[act.index()] {
                        self.apply_actuator(act, v, t_s);
                    }
                }
            }
        }
        let v22 = self.is_v22();
        if v22 {
            // (`posted` stays `None` for good: only the classic step posts)
            self.step_v22(t_s);
            return;
        }
        self.posted = None;
        if self.obstacle {
            return; // classic freezes for good
        }
        if v22 && !self.enabled {
            self.nav.stamp = t_s;
            self.gt.stamp = t_s;
        } else if v22 && self.obstacle {
            self.post(0.0, self.nav.heading);
            return;
        } else {
            // the new speed and heading straight from the step when it
            // wrote them: read back from the record, the two 8-byte
            // stores just made would feed one 16-byte load, which store
            // forwarding cannot serve (a stall of ~15 cycles a step)
            // (in registers: an `Option` of them comes back through
            // memory, and was read back the same way)
            let (speed, heading) = self.propagate(t_s);
            if !speed.is_nan() {
                if !self.enabled {
                    return;
                }
                self.post(speed, heading);
                return;
            }
        }
        if !self.enabled && !v22 {
            return;
        }
        if v22 && self.iteration % 2 != 0 {
            return;
        }
        self.post(self.nav.speed, self.nav.heading);
    }

    /// `USM_Model::propagate(T)`: the step length from the record's stamp,
    /// less whole seconds spent paused. Returns the NAV record's new speed
    /// (m/s) and heading (degrees) if it wrote them (always finite), else
    /// NaN for both.
    fn propagate(&mut self, t_s: f64) -> (f64, f64) {
        const NONE: (f64, f64) = (f64::NAN, f64::NAN);
        if self.is_paused() {
            return NONE;
        }
        let w = self.paused_whole_s;
        let t_a = t_s - w;
        let dt = t_a - self.nav.stamp;
        if !dt.is_finite() {
            return NONE;
        }
        let dual = self.params.dual_state;
        let nav_drift = !dual;
        // The new values in locals, written field by field only once they
        // are known to be finite (no copy of the records in and out).
        let nav = self.propagate_record(dt, nav_drift, false);
        // Quarantine (rapier-style): a non-finite result never enters the state.
        let ok = if dual {
            let gt = self.propagate_record(dt, true, true);
            let ok = nav.is_finite() && gt.is_finite();
            if ok {
                gt.write(&mut self.gt);
            }
            ok
        } else {
            nav.is_finite()
        };
        if ok {
            nav.write(&mut self.nav);
            (nav.speed, nav.heading)
        } else {
            // Rate-limited: the 1st, 10th, 100th... occurrence is logged, with
            // the number of lines left out since the last one.
            self.skipped_steps += 1;
            let n = self.skipped_steps;
            if n == 1 || (n % 10 == 0 && (n as f64).log10().fract() == 0.0) {
                let suppressed = if n == 1 { 0 } else { n - n / 10 - 1 };
                tracing::warn!(
                    "step at t={t_s} produced a non-finite state; step skipped \
                     ({n} skipped so far, {suppressed} such warnings suppressed)"
                );
            }
            NONE
        }
    }

    /// `propagateNodeRecord` for one record: speed, heading, depth, position,
    /// altitude (docs/model.md §6).
    #[inline(always)]
    fn propagate_record(&mut self, dt: f64, with_drift: bool, which_gt: bool) -> Propagated {
        let rec = if which_gt { &self.gt } else { &self.nav };
        let (x_p, y_p, v_p, h_p) = (rec.x, rec.y, rec.speed, rec.heading);
        let (yaw_p, pitch_p, z_p) = (rec.yaw, rec.pitch, rec.depth);
        let (stamp_p, altitude_p) = (rec.stamp, rec.altitude);
        let p = &self.params;
        // `math = "fast"`: the speed and heading steps multiply by
        // reciprocals where the C++ divides (docs/model.md §20.1)
        let fast = p.math == trig::MathMode::Fast;
        let lim = speed::SpeedLimits {
            max_accel: p.max_acceleration,
            max_decel: p.max_deceleration,
            turn_loss: p.turn_spd_loss,
        };
        let (thrust, rudder) = if self.mode_diff {
            (
                (self.thrust_l + self.thrust_r) / 2.0,
                (self.thrust_l - self.thrust_r) / 2.0,
            )
        } else {
            (self.thrust, self.rudder)
        };
        // M(T) of the (reverse-negated) thrust, cached: thrust rarely changes.
        let t_eff = if self.reverse { -thrust } else { thrust };
        if self.map_cache.0.to_bits() != t_eff.to_bits() {
            self.map_cache = (t_eff, p.thrust_map.speed(t_eff));
        }
        let mut v_raw = self.map_cache.1;
        if self.v22.sailing_on && !self.mode_diff {
            if let Some(w) = p.env.as_ref().and_then(|e| e.wind.as_ref()) {
                // docs/model.md §24.4: the environment's wind, not `wind_conditions`
                let dir = angle360(w.settings.direction_deg);
                self.v22.sailing.wind = sailing::Wind {
                    set: true,
                    dir,
                    speed: w.speed_at(stamp_p - self.start_time),
                };
                self.v22.sailing.plot.set_wind_angle(dir);
            }
            // docs/v22.md §11.3: the sailing cap, after the map, before the turn loss
            let cap = self.v22.sailing.cap(h_p);
            if !which_gt {
                self.v22.sail_cap = cap;
            }
            if cap > 0.0 && v_raw > cap {
                v_raw = cap;
            }
        }
        let v_n = speed::propagate_speed_raw(v_raw, &lim, rudder, self.reverse, v_p, dt, fast)
            .unwrap_or(v_p);
        // (new heading, yaw, the step's mean heading when known from the turn)
        let (h_n, yaw, h_mean) = if self.mode_diff {
            let (h_n, yaw) = heading::propagate_heading_diff(
                self.thrust_l,
                self.thrust_r,
                self.rotate_speed,
                self.reverse,
                h_p,
                dt,
            )
            .unwrap_or((h_p, yaw_p));
            (h_n, yaw, None)
        } else {
            let inp = heading::HeadingInput {
                rudder: self.rudder,
                thrust: self.thrust,
                turn_rate: self.turn_rate,
                rotate_speed: self.rotate_speed,
                v_n,
                reverse: self.reverse,
            };
            let memo = &mut self.turn_factors;
            let (h_n, yaw, turn) = if p.variant == ModelVariant::V22 {
                // `tsm.rate`, normalizing only when the turn rate changed
                let key = Some(inp.turn_rate.to_bits());
                if self.tsm_key != key {
                    self.tsm.normalize(inp.turn_rate);
                    self.tsm_key = key;
                    self.v22.tsm_spans = self.tsm.spans();
                    self.v22.tsm_plain = self.tsm.plain();
                }
                // `tsm.at(v_n)` with the map's two spans of this
                // normalization (the speed changes every step with a PID
                // rudder: the division stays, as a multiplication by the
                // reciprocal under `math = "fast"`)
                let (tsm, spans, plain) = (&self.tsm, self.v22.tsm_spans, self.v22.tsm_plain);
                let rate = |_| tsm.at_clamped(v_n, spans, plain, fast);
                heading::propagate_heading_memo(&inp, h_p, dt, rate, memo, fast)
            } else {
                let rate = |tr: f64| tr.clamp(0.0, 100.0);
                heading::propagate_heading_memo(&inp, h_p, dt, rate, memo, fast)
            };
            // the bisector of h_p and h_n straight from the turn: shorter
            // than going through the wrapped h_n (math = "fast" only)
            let mean = (turn.abs() <= 180.0).then_some(h_p + 0.5 * turn);
            (h_n, yaw, mean)
        };
        let dp = depth::DepthParams {
            buoyancy_rate: self.buoyancy_rate,
            max_depth_rate: p.max_depth_rate,
            max_depth_rate_speed: p.max_depth_rate_speed,
        };
        let (z, pitch) = depth::propagate_depth(&dp, self.elevator, v_n, pitch_p, z_p, dt);
        let drift = if with_drift {
            let (cx, cy) = match &p.current_field {
                Some(f) => f.force_at(x_p, y_p),
                None => (0.0, 0.0),
            };
            match &p.env {
                None => {
                    self.current = (cx, cy);
                    (self.drift.0 + cx, self.drift.1 + cy)
                }
                Some(env) => {
                    // docs/model.md §24.5: the tide on the field, then
                    // windage and Stokes drift, all at the step's start
                    let tau = stamp_p - self.start_time;
                    let k = env.tide.map_or(1.0, |t| t.factor(tau));
                    let (cx, cy) = (cx * k, cy * k);
                    self.current = (cx, cy);
                    let f = env.forcing(tau, h_p, z_p);
                    self.env_forcing = f;
                    (self.drift.0 + cx + f.drift.0, self.drift.1 + cy + f.drift.1)
                }
            }
        } else {
            (0.0, 0.0)
        };
        let memo = &mut self.trig[usize::from(which_gt)];
        let pos = position::position_step(
            x_p, y_p, v_p, v_n, h_p, h_n, h_mean, drift, dt, memo, p.math,
        );
        let (mut x, mut y, mut heading) = (pos.x, pos.y, h_n);
        if self.turn_radius > 0.0 && p.variant == ModelVariant::V22 {
            // docs/v22.md §6: the turn-radius limit (NaN cases guarded)
            let chord = turn_limit::Chord {
                x1: x_p,
                y1: y_p,
                h1: h_p,
                v1: v_n,
                x2: pos.x,
                y2: pos.y,
                h2: h_n,
                v2: pos.speed,
            };
            if let Some((lx, ly, lh)) =
                turn_limit::limit(&chord, self.turn_radius, p.turn_limit_max_speed)
            {
                x = lx;
                y = ly;
                heading = lh;
            }
        }
        if with_drift {
            if let Some(env) = &p.env {
                // docs/model.md §24.5: weathervaning, then the change of the
                // wave-frequency motion since the last step
                heading += self.env_forcing.yaw_rate * dt;
                if env.sea.is_some() {
                    let tau0 = stamp_p - self.start_time;
                    let prev = match self.wave {
                        Some(m) => m,
                        None => env.wave_motion(x_p, y_p, tau0, h_p, z_p),
                    };
                    let now = env.wave_motion(x, y, tau0 + dt, heading, z);
                    x += now.dx - prev.dx;
                    y += now.dy - prev.dy;
                    heading += now.yaw_deg - prev.yaw_deg;
                    self.wave = Some(now);
                }
                heading = angle360(heading);
            }
        }
        let altitude = if self.water_depth > 0.0 {
            Some((self.water_depth - z).max(0.0))
        } else {
            altitude_p
        };
        Propagated {
            x,
            y,
            speed: pos.speed,
            heading,
            depth: z,
            altitude,
            pitch,
            yaw,
            sog: pos.sog,
            hog: pos.hog,
            stamp: stamp_p + dt,
        }
    }

    /// Record what this iteration posts (docs/model.md §4) for the NAV record
    /// `rec`; the postings themselves are built on demand by
    /// [`Vehicle::publications`], so replays pay nothing for them.
    fn post(&mut self, speed: f64, heading: f64) {
        let rev = self.reverse && !self.is_v22();
        // The published (rounded, wrapped) values are derived when read.
        self.nav_posted = Some((speed, heading, rev));
        let drift_summary = if self.drift_fresh {
            self.drift_fresh = false;
            Some(self.drift)
        } else {
            None
        };
        let reset_count = if self.reset_fresh {
            self.reset_fresh = false;
            Some(self.reset_count)
        } else {
            None
        };
        self.posted = Some(Posting {
            reverse: rev,
            drift_summary,
            reset_count,
        });
        if let Some(b) = &mut self.sensors {
            let r = &self.nav;
            self.sensed = Some(b.0.sense(&sensing::Truth {
                t: r.stamp - self.start_time,
                x: r.x,
                y: r.y,
                speed,
                heading,
                depth: r.depth,
            }));
        }
    }

    /// The NAV values a posting shows: the sensed ones with a sensor suite
    /// (NaN where a sensor has no reading), else the record's. Position
    /// (m), stored speed (m/s) and heading (degrees), depth (m).
    fn nav_shown(&self, speed: f64, heading: f64) -> (f64, f64, f64, f64, f64) {
        let r = &self.nav;
        match &self.sensed {
            None => (r.x, r.y, speed, heading, r.depth),
            Some(s) => {
                let (x, y) = s.pos.unwrap_or((f64::NAN, f64::NAN));
                let n = f64::NAN;
                (
                    x,
                    y,
                    s.speed.unwrap_or(n),
                    s.heading.unwrap_or(n),
                    s.depth.unwrap_or(n),
                )
            }
        }
    }

    /// The published speed (rounded to 0.01, V22: capped at `max_speed`) and
    /// heading (wrapped to [0, 360), classic reverse: rotated 180) of a NAV
    /// record's stored `speed` (m/s) and `heading` (degrees).
    fn published_nav(&self, speed: f64, heading: f64, rev: bool) -> (f64, f64) {
        let mut speed = snap_to_step(speed, 0.01);
        if self.is_v22() && speed > self.params.max_speed {
            speed = self.params.max_speed;
        }
        (speed, flip180(angle360(heading), rev))
    }

    /// What the last iteration posted, as uSimMarine's `Notify` calls
    /// (empty on V22's odd iterations and while nothing is posted).
    pub fn publications(&self) -> Vec<Publication> {
        if self.is_v22() {
            return self.publications_v22();
        }
        let Some(p) = &self.posted else {
            return Vec::new();
        };
        let v22 = self.is_v22();
        let (mut x, mut y, mut depth) = (self.nav.x, self.nav.y, self.nav.depth);
        let (speed, heading) = match self.nav_posted {
            Some((speed, heading, rev)) => {
                let (sx, sy, speed, heading, sd) = self.nav_shown(speed, heading);
                (x, y, depth) = (sx, sy, sd);
                self.published_nav(speed, heading, rev)
            }
            None => (f64::NAN, f64::NAN),
        };
        let prefix = &self.params.prefix;
        let rec = &self.nav;
        let mut out = Vec::with_capacity(24);
        let mut num = |name: &str, v: f64| {
            // Never publish NaN/inf (e.g. a latitude beyond the projection).
            if v.is_finite() {
                out.push(Publication {
                    var: format!("{prefix}_{name}"),
                    value: PubValue::Number(v),
                })
            }
        };
        num("X", x);
        num("Y", y);
        if let Some(geo) = &self.geo {
            if x.is_finite() && y.is_finite() {
                let (lat, lon) = geo.to_lat_lon(x, y);
                num("LAT", lat);
                num("LONG", lon);
            }
        }
        num("SPEED", speed);
        num("HEADING", heading);
        num("DEPTH", depth);
        if !v22 {
            let yaw = if p.reverse {
                heading::yaw_of(heading)
            } else {
                rec.yaw
            };
            num("Z", -depth);
            // With a sea, the pitch is the model's plus the waves' and the
            // roll and heave are posted too (docs/moos.md, "Sea state").
            match self.wave_now() {
                None => num("PITCH", rec.pitch),
                Some(w) => num("PITCH", rec.pitch + w.pitch_deg.to_radians()),
            }
            num("YAW", yaw);
            if let Some(w) = self.wave_now() {
                num("ROLL", w.roll_deg.to_radians());
                num("HEAVE", w.heave);
            }
        }
        num(
            "HEADING_OVER_GROUND",
            flip180(angle360(rec.hog()), p.reverse),
        );
        num("SPEED_OVER_GROUND", rec.sog);
        if let Some(alt) = rec.altitude {
            num("ALTITUDE", alt);
        }
        if self.params.dual_state {
            let gt = &self.gt;
            num("GT_X", gt.x);
            num("GT_Y", gt.y);
            num("GT_SPEED", snap_to_step(gt.speed, 0.01));
            num("GT_HEADING", flip180(angle360(gt.heading), p.reverse));
            num("GT_DEPTH", gt.depth);
        }
        let mut fixed = |var: &str, value: PubValue| {
            out.push(Publication {
                var: var.to_string(),
                value,
            })
        };
        if !v22 {
            fixed("TRUE_X", PubValue::Number(rec.x));
            fixed("TRUE_Y", PubValue::Number(rec.y));
            fixed("SIMULATION_MODE", PubValue::Text("TRUE".into()));
        }
        if let Some(d) = p.drift_summary {
            let s = drift::summary(d);
            if !v22 {
                fixed("USM_FSUMMARY", PubValue::Text(s.clone()));
            }
            fixed("USM_DRIFT_SUMMARY", PubValue::Text(s));
        }
        if let Some(n) = p.reset_count {
            fixed("USM_RESET_COUNT", PubValue::Number(n as f64));
        }
        out
    }

    /// The state for the CSV / `NODE_REPORT` at clock `now_s`... as of the last step.
    pub fn snapshot(&self) -> Snapshot {
        let r = &self.nav;
        let nav_pub = match self.nav_posted {
            Some((speed, heading, rev)) => {
                let (_, _, speed, heading, _) = self.nav_shown(speed, heading);
                self.published_nav(speed, heading, rev)
            }
            None => (f64::NAN, f64::NAN),
        };
        let sensed = self.sensed.as_ref().map(|s| {
            let (x, y) = s.pos.unwrap_or((f64::NAN, f64::NAN));
            let (lat, lon) = match (&self.geo, s.pos) {
                (Some(g), Some(_)) => g.to_lat_lon(x, y),
                _ => (f64::NAN, f64::NAN),
            };
            SensedNav {
                x,
                y,
                lat,
                lon,
                speed: nav_pub.0,
                heading: nav_pub.1,
                depth: s.depth.unwrap_or(f64::NAN),
                fix: s.fix_quality,
                hdop: s.hdop,
                satellites: s.satellites,
            }
        });
        let (lat, lon) = match &self.geo {
            Some(g) => g.to_lat_lon(r.x, r.y),
            None => (f64::NAN, f64::NAN),
        };
        Snapshot {
            k: self.iteration,
            t: r.stamp - self.start_time,
            x: r.x,
            y: r.y,
            speed: r.speed,
            heading: r.heading,
            depth: r.depth,
            altitude: r.altitude.unwrap_or(f64::NAN),
            pitch: r.pitch,
            yaw: r.yaw,
            sog: r.sog,
            hog: r.hog(),
            nav_speed: nav_pub.0,
            nav_heading: nav_pub.1,
            lat,
            lon,
            drift_x: self.drift.0,
            drift_y: self.drift.1,
            rudder: self.rudder,
            thrust: self.thrust,
            elevator: self.elevator,
            gt_x: self.gt.x,
            gt_y: self.gt.y,
            thrust_l: self.thrust_l,
            thrust_r: self.thrust_r,
            current_x: self.current.0,
            current_y: self.current.1,
            sensed,
            wave: self.wave_now().as_ref().map(WaveOut::from),
        }
    }
}

/// What one iteration posted, kept compact until asked for.
#[derive(Debug, Clone, Copy)]
struct Posting {
    /// Classic reverse: published headings rotated 180.
    reverse: bool,
    drift_summary: Option<(f64, f64)>,
    reset_count: Option<u64>,
}

/// Rotate a published angle by 180 degrees in classic reverse mode.
fn flip180(h: f64, rev: bool) -> f64 {
    if rev {
        angle360(h + 180.0)
    } else {
        h
    }
}

fn apply_pose(rec: &mut Record, p: &pose::PoseUpdate) {
    if let Some(v) = p.x {
        rec.x = v;
    }
    if let Some(v) = p.y {
        rec.y = v;
    }
    if let Some(v) = p.heading {
        rec.heading = v;
    }
    if let Some(v) = p.speed {
        rec.speed = v;
    }
    if let Some(v) = p.depth {
        rec.depth = v;
    }
}

/// The fields one propagation step of a record writes (docs/model.md §6).
#[derive(Clone, Copy)]
struct Propagated {
    x: f64,
    y: f64,
    speed: f64,
    heading: f64,
    depth: f64,
    altitude: Option<f64>,
    pitch: f64,
    yaw: f64,
    sog: f64,
    hog: position::HogInputs,
    stamp: f64,
}

impl Propagated {
    /// Whether every field of the record after the step is finite, the
    /// heading over ground included.
    #[inline(always)]
    fn is_finite(&self) -> bool {
        let h = &self.hog;
        // Field by field: a sum of finite huge values can overflow to inf.
        // Branch-free: a field is not finite iff its exponent bits are all set.
        let worst = [
            self.x,
            self.y,
            self.speed,
            self.heading,
            self.depth,
            self.pitch,
            self.yaw,
            self.sog,
            self.stamp,
            self.altitude.unwrap_or(0.0),
            h.from.0,
            h.from.1,
            h.to.0,
            h.to.1,
        ]
        .iter()
        .fold(0u64, |worst, v| worst.max(v.to_bits() & EXPONENT_BITS));
        if worst < BELOW_2_1020 {
            // Both ends below 2^1020 in magnitude: their differences are
            // finite, and so is the bearing between them (an arctangent of
            // a finite ratio or an exact case), whatever the hint.
            return true;
        }
        worst != EXPONENT_BITS && h.value().is_finite()
    }

    /// Store the step into `rec` (the fields it does not write stay).
    #[inline(always)]
    fn write(&self, rec: &mut Record) {
        rec.x = self.x;
        rec.y = self.y;
        rec.speed = self.speed;
        rec.heading = self.heading;
        rec.depth = self.depth;
        rec.altitude = self.altitude;
        rec.pitch = self.pitch;
        rec.yaw = self.yaw;
        rec.sog = self.sog;
        rec.hog = self.hog;
        rec.stamp = self.stamp;
        rec.ll_xy = (self.x, self.y);
    }
}

/// Exponent bits of 2^1020: an `f64` whose exponent field is below this is
/// smaller than 2^1020 in magnitude.
const BELOW_2_1020: u64 = (1020 + 1023) << 52;

/// The exponent field of an `f64` (all ones: infinite or NaN).
const EXPONENT_BITS: u64 = 0x7ff0_0000_0000_0000;

/// true/false, case-insensitive (also on/off, yes/no as MOOS's setBooleanOnString).
fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_lowercase().as_str() {
        "true" | "on" | "yes" => Some(true),
        "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

fn bad_text(var: &str, s: &str, reason: impl Into<String>) -> MessageError {
    MessageError::new(var, format!("{s:?}"), reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step_to(from: (f64, f64), to: (f64, f64)) -> Propagated {
        Propagated {
            x: to.0,
            y: to.1,
            speed: 1.0,
            heading: 45.0,
            depth: 0.0,
            altitude: None,
            pitch: 0.0,
            yaw: 0.0,
            sog: 1.0,
            hog: position::HogInputs {
                from,
                to,
                hint: (1.0, 1.0),
                fast: true,
            },
            stamp: 1.0,
        }
    }

    /// The quarantine refuses a step whose heading over ground is not
    /// finite, as it did when the bearing was computed in the step: both
    /// displacements overflow to infinity (∞/∞ has no bearing); one
    /// infinite displacement still has a bearing (due east); ordinary
    /// and huge-but-exact steps pass.
    #[test]
    fn the_quarantine_sees_a_bearing_that_is_not_finite() {
        let big = 1.7e308;
        assert!(step_to((1.0, 2.0), (1.5, 2.5)).is_finite());
        assert!(step_to((-big, -big), (big, big)).hog.value().is_nan());
        assert!(!step_to((-big, -big), (big, big)).is_finite());
        let east = step_to((-big, 0.0), (big, 1.0));
        assert!(
            (east.hog.value() - 90.0).abs() < 1e-9,
            "{}",
            east.hog.value()
        );
        assert!(east.is_finite());
        assert!(step_to((big, big), (big, big)).is_finite());
        let mut s = step_to((0.0, 0.0), (1.0, 1.0));
        s.sog = f64::NAN;
        assert!(!s.is_finite());
        s.sog = 1.0;
        s.hog.from.0 = f64::INFINITY;
        assert!(!s.is_finite());
    }
}
