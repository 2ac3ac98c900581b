//! Validated model parameters (docs/model.md §2.2) with uSimMarine's defaults.
use super::current_field::CurrentField;
use super::geodesy::{GeoConverter, Geodesy};
use super::thrust_map::ThrustMap;
use crate::interp::shaping::ActuatorSettings;

/// Which uSimMarine the model follows (docs/model.md §0, §16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModelVariant {
    /// The original `uSimMarine` the manual describes (default).
    #[default]
    Classic,
    /// `uSimMarineV22`: turn-speed map, configurable turn loss, posting on
    /// even iterations, published speed capped at `max_speed`.
    V22,
}

/// Start pose (`start_x`, ..., or `start_pos`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StartPose {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Heading, degrees, stored verbatim until the first step.
    pub heading: f64,
    /// Speed, m/s.
    pub speed: f64,
    /// Depth, m.
    pub depth: f64,
}

/// Every model parameter, in uSimMarine's units, with its defaults.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Params {
    // The fields every model step reads come first, in one 64-byte
    // line at the start of a vehicle (`Vehicle` is `repr(C, align(64))`
    // and holds its `Params` first): a fleet of 100,000 vehicles reads them
    // from memory every step. Then the rest, as documented.
    /// Classic or V22 (default classic).
    pub variant: ModelVariant,
    /// Propagate NAV without drift and ground truth with drift (default false).
    pub dual_state: bool,
    /// Trigonometry of the position step: usim's own (default) or libm.
    pub math: super::trig::MathMode,
    /// m/s², 0 = no limit (default 0).
    pub max_acceleration: f64,
    /// m/s², 0 = no limit (default 0.5).
    pub max_deceleration: f64,
    /// Turn speed loss factor in [0, 1] (classic: fixed 0.85).
    pub turn_spd_loss: f64,
    /// m/s (default 0.5).
    pub max_depth_rate: f64,
    /// m/s at which the full depth rate is reached (default 2.0).
    pub max_depth_rate_speed: f64,
    /// Built-in current field, added to the drift when active (boxed: one
    /// pointer in the step's first line instead of ~100 bytes).
    pub current_field: Option<Box<CurrentField>>,
    /// Rudder rate limit, deg/s, 0 = none (default 0).
    pub max_rudder_degs_per_sec: f64,
    /// Publication prefix (default `USM`).
    pub prefix: String,
    /// Start pose (default all 0).
    pub start: StartPose,
    /// How many `start_pos` config lines were applied: uSimMarineV22 keeps
    /// its `USM_RESET_COUNT` in the model's pose reset, which each such line
    /// calls, so a V22 vehicle's counter starts here (classic starts at 0;
    /// docs/v22.md, publications).
    pub start_pos_lines: u64,
    /// Turning characteristic, 0..100 (default 70).
    pub turn_rate: f64,
    /// Thrust → speed map, with thrust factor (default 20) and reflect (default false).
    pub thrust_map: ThrustMap,
    /// m/s, positive floats up (default 0.025).
    pub buoyancy_rate: f64,
    /// m, 0 = unknown (default 0).
    pub default_water_depth: f64,
    /// Drift east, m/s (default 0).
    pub drift_x: f64,
    /// Drift north, m/s (default 0).
    pub drift_y: f64,
    /// Extra turn rate, deg/s (default 0).
    pub rotate_speed: f64,
    /// Start paused (default false).
    pub sim_pause: bool,
    /// Start in differential thrust mode (V22 `thrust_mode_diff`, default false).
    pub thrust_mode_diff: bool,
    /// Start with thrust reversed (default false).
    pub thrust_mode_reverse: bool,
    /// V22: publish `USM_NAVPOS_SUMMARY` with the pose (default false; beside
    /// the flags above, where it takes no padding of its own).
    pub post_navpos_summary: bool,
    /// V22: cap of the published speed, m/s (default 5).
    pub max_speed: f64,
    /// V22: turn radius limit, m (0 = off; docs/v22.md §6).
    pub turn_radius: f64,
    /// V22: the turn limit's max speed, m/s (0 = no speed scaling; set by
    /// any numeric `max_speed` line, docs/v22.md §6.1).
    pub turn_limit_max_speed: f64,
    /// V22: the embedded PID, when coupled (a `yaw_pid_*` key is present).
    pub pid: Option<super::pid::PidSettings>,
    /// V22: publish the PID's thrust under this name (`post_des_thrust`).
    pub post_des_thrust: Option<String>,
    /// V22: publish the PID's rudder under this name (`post_des_rudder`).
    pub post_des_rudder: Option<String>,
    /// V22: trim handshake tolerance, degrees (default 5).
    pub trim_tolerance: f64,
    /// V22: trim handshake maximum delay, s (default 10).
    pub max_trim_delay: f64,
    /// V22: wind and polar plot (`wind_conditions`, `polar_plot`).
    pub sailing: super::sailing::Sailing,
    /// V22: wormholes (`wormhole` lines).
    pub wormholes: super::wormhole::WormholeSet,
    /// V22 turn-speed map null speed, m/s (default 0).
    pub turn_spd_map_null_speed: f64,
    /// V22 turn-speed map null rate, 0..100 (default 0).
    pub turn_spd_map_null_rate: f64,
    /// V22 turn-speed map full speed, m/s (default 1; overwritten by 5 every step).
    pub turn_spd_map_full_speed: f64,
    /// V22 turn-speed map full rate (default 100; overwritten by turn_rate every step).
    pub turn_spd_map_full_rate: f64,
    /// Origin (lat, lon), degrees: enables lat/lon output.
    pub origin: Option<(f64, f64)>,
    /// UTM (MOOS default build) or local grid.
    pub geodesy: Geodesy,
    /// Setpoint shaping per actuator and aliases.
    pub actuators: ActuatorSettings,
    /// The environment layer: sea, wind, tide (docs/model.md §24); `None`
    /// (the default) leaves the model exactly uSimMarine's.
    pub env: Option<Box<super::env::Environment>>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            variant: ModelVariant::Classic,
            prefix: "USM".to_string(),
            start: StartPose::default(),
            start_pos_lines: 0,
            turn_rate: 70.0,
            thrust_map: ThrustMap::default(),
            max_acceleration: 0.0,
            max_deceleration: 0.5,
            buoyancy_rate: 0.025,
            max_depth_rate: 0.5,
            max_depth_rate_speed: 2.0,
            default_water_depth: 0.0,
            drift_x: 0.0,
            drift_y: 0.0,
            rotate_speed: 0.0,
            max_rudder_degs_per_sec: 0.0,
            sim_pause: false,
            dual_state: false,
            thrust_mode_diff: false,
            thrust_mode_reverse: false,
            turn_spd_loss: 0.85,
            max_speed: 5.0,
            turn_radius: 0.0,
            turn_limit_max_speed: 0.0,
            pid: None,
            post_des_thrust: None,
            post_des_rudder: None,
            post_navpos_summary: false,
            trim_tolerance: 5.0,
            max_trim_delay: 10.0,
            sailing: Default::default(),
            wormholes: Default::default(),
            turn_spd_map_null_speed: 0.0,
            turn_spd_map_null_rate: 0.0,
            turn_spd_map_full_speed: 1.0,
            turn_spd_map_full_rate: 100.0,
            origin: None,
            geodesy: Geodesy::Utm,
            math: super::trig::MathMode::Fast,
            current_field: None,
            actuators: ActuatorSettings::default(),
            env: None,
        }
    }
}

impl Params {
    /// V22: depth control on (the default; off only with a coupled PID and
    /// `depth_control = false`, docs/v22.md §16).
    pub fn depth_control(&self) -> bool {
        self.pid.as_ref().is_none_or(|p| p.depth_control)
    }

    /// The lat/lon converter, if an origin is set and valid.
    pub fn geo_converter(&self) -> Option<GeoConverter> {
        let (lat, lon) = self.origin?;
        GeoConverter::new(lat, lon, self.geodesy).ok()
    }
}

impl AsRef<Params> for Params {
    fn as_ref(&self) -> &Params {
        self
    }
}
