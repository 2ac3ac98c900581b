//! A vehicle table as written in TOML, before validation: every value with
//! its span, and the lists of known keys (for suggestions and `usim example`).
use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// `thrust_map` as one line or a list of lines.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Lines {
    /// One `t:s, t:s` line.
    One(String),
    /// Several lines; they accumulate.
    Many(Vec<String>),
}

/// A bool, or a string that uSimMarine reads as one (`"differential"`, `"reverse"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum BoolOrText {
    /// TOML boolean.
    Bool(bool),
    /// uSimMarine's word.
    Text(String),
}

/// A number, or text that uSimMarineV22 checks itself (`"abc"` warns).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum NumOrText {
    /// TOML number.
    Num(f64),
    /// Text as written.
    Text(String),
}

/// `[mqtt]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMqtt {
    /// Broker URL.
    pub broker: Option<String>,
    /// Topic root.
    pub topic_root: Option<String>,
    /// User name.
    pub username: Option<String>,
    /// Password.
    pub password: Option<String>,
    /// Largest payload taken, bytes.
    pub max_payload: Option<Spanned<i64>>,
    /// `"all"` or `"report"`.
    pub publish: Option<Spanned<String>>,
}

/// `[actuators.NAME]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawActuator {
    /// `"none"`, `"timed"` (default) or `"jerk"`.
    pub interpolation: Option<String>,
    /// Jerk mode: maximum rate, units/s.
    pub max_rate: Option<f64>,
    /// Jerk mode: maximum acceleration, units/s².
    pub max_accel: Option<f64>,
    /// Jerk mode: maximum jerk, units/s³.
    pub max_jerk: Option<f64>,
    /// Cap on pending timed commands (default 10,000).
    pub max_pending: Option<i64>,
}

type S<T> = Option<Spanned<T>>;

/// A vehicle table as written (docs/formats.md §1). Every value carries its span.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RawVehicle {
    pub name: S<String>,
    pub model: S<String>,
    pub prefix: S<String>,
    pub start_x: S<f64>,
    pub start_y: S<f64>,
    pub start_heading: S<f64>,
    pub start_speed: S<f64>,
    pub start_depth: S<f64>,
    pub start_pos: S<String>,
    pub thrust_map: S<Lines>,
    pub thrust_reflect: S<bool>,
    pub thrust_factor: S<f64>,
    pub turn_rate: S<f64>,
    pub max_acceleration: S<f64>,
    pub max_deceleration: S<f64>,
    pub buoyancy_rate: S<f64>,
    pub max_depth_rate: S<f64>,
    pub max_depth_rate_speed: S<f64>,
    pub default_water_depth: S<f64>,
    pub drift_x: S<f64>,
    pub drift_y: S<f64>,
    pub drift_vector: S<String>,
    pub rotate_speed: S<f64>,
    pub max_rudder_degs_per_sec: S<f64>,
    pub sim_pause: S<bool>,
    pub dual_state: S<bool>,
    pub trim_tolerance: S<f64>,
    pub max_trim_delay: S<f64>,
    pub turn_spd_loss: S<f64>,
    pub max_speed: S<f64>,
    pub turn_radius: S<f64>,
    pub turn_spd_map_null_speed: S<f64>,
    pub turn_spd_map_null_rate: S<f64>,
    pub turn_spd_map_full_speed: S<f64>,
    pub turn_spd_map_full_rate: S<f64>,
    pub thrust_mode_diff: S<BoolOrText>,
    pub thrust_mode_reverse: S<BoolOrText>,
    pub post_navpos_summary: S<bool>,
    pub lat_origin: S<f64>,
    pub lon_origin: S<f64>,
    pub geodesy: S<String>,
    pub math: S<String>,
    pub current_field: S<String>,
    pub current_field_active: S<bool>,
    /// `[sea]`, `[wind]`, `[current_tide]` (docs/model.md §24).
    pub sea: Option<RawSea>,
    pub wind: Option<RawWind>,
    pub current_tide: Option<RawTide>,
    pub app_tick: S<f64>,
    // uSimMarineV22 extras (docs/v22.md §15)
    pub yaw_pid_kp: S<NumOrText>,
    pub yaw_pid_kd: S<NumOrText>,
    pub yaw_pid_ki: S<NumOrText>,
    pub yaw_pid_integral_limit: S<NumOrText>,
    pub yaw_pid_ki_limit: S<NumOrText>,
    pub maxrudder: S<NumOrText>,
    pub speed_pid_kp: S<NumOrText>,
    pub speed_pid_kd: S<NumOrText>,
    pub speed_pid_ki: S<NumOrText>,
    pub speed_pid_integral_limit: S<NumOrText>,
    pub maxthrust: S<NumOrText>,
    pub speed_factor: S<NumOrText>,
    pub depth_control: S<BoolOrText>,
    pub z_to_pitch_pid_kp: S<NumOrText>,
    pub z_to_pitch_pid_kd: S<NumOrText>,
    pub z_to_pitch_pid_ki: S<NumOrText>,
    pub z_to_pitch_pid_integral_limit: S<NumOrText>,
    pub maxpitch: S<NumOrText>,
    pub pitch_pid_kp: S<NumOrText>,
    pub pitch_pid_kd: S<NumOrText>,
    pub pitch_pid_ki: S<NumOrText>,
    pub pitch_pid_integral_limit: S<NumOrText>,
    pub maxelevator: S<NumOrText>,
    pub simulation: S<BoolOrText>,
    pub tardy_helm_threshold: S<NumOrText>,
    pub tardy_nav_threshold: S<NumOrText>,
    pub sim_instability: S<NumOrText>,
    pub heading_debug: S<BoolOrText>,
    pub speed_debug: S<BoolOrText>,
    pub depth_debug: S<BoolOrText>,
    pub wind_conditions: S<String>,
    pub polar_plot: S<Lines>,
    pub wormhole: S<Lines>,
    pub post_des_thrust: S<String>,
    pub post_des_rudder: S<String>,
    pub node_report_local: S<bool>,
    pub platform_type: S<String>,
    pub platform_length: S<f64>,
    pub platform_beam: S<f64>,
    pub mmsi: S<i64>,
    pub ais_ship_type: S<i64>,
    pub mqtt: Option<RawMqtt>,
    pub actuators: Option<BTreeMap<String, Spanned<RawActuator>>>,
    pub aliases: Option<BTreeMap<String, Spanned<Vec<String>>>>,
    pub sensors: Option<Spanned<RawSensors>>,
    pub obstacles: Option<Spanned<RawObstacles>>,
}

/// Every key a vehicle table accepts (for suggestions and `usim example`).
pub const VEHICLE_KEYS: &[&str] = &[
    "name",
    "model",
    "prefix",
    "start_x",
    "start_y",
    "start_heading",
    "start_speed",
    "start_depth",
    "start_pos",
    "thrust_map",
    "thrust_reflect",
    "thrust_factor",
    "turn_rate",
    "max_acceleration",
    "max_deceleration",
    "buoyancy_rate",
    "max_depth_rate",
    "max_depth_rate_speed",
    "default_water_depth",
    "drift_x",
    "drift_y",
    "drift_vector",
    "rotate_speed",
    "max_rudder_degs_per_sec",
    "sim_pause",
    "dual_state",
    "trim_tolerance",
    "max_trim_delay",
    "turn_spd_loss",
    "max_speed",
    "turn_radius",
    "turn_spd_map_null_speed",
    "turn_spd_map_null_rate",
    "turn_spd_map_full_speed",
    "turn_spd_map_full_rate",
    "thrust_mode_diff",
    "thrust_mode_reverse",
    "post_navpos_summary",
    "lat_origin",
    "lon_origin",
    "geodesy",
    "math",
    "current_field",
    "current_field_active",
    "sea",
    "wind",
    "current_tide",
    "app_tick",
    "yaw_pid_kp",
    "yaw_pid_kd",
    "yaw_pid_ki",
    "yaw_pid_integral_limit",
    "yaw_pid_ki_limit",
    "maxrudder",
    "speed_pid_kp",
    "speed_pid_kd",
    "speed_pid_ki",
    "speed_pid_integral_limit",
    "maxthrust",
    "speed_factor",
    "depth_control",
    "z_to_pitch_pid_kp",
    "z_to_pitch_pid_kd",
    "z_to_pitch_pid_ki",
    "z_to_pitch_pid_integral_limit",
    "maxpitch",
    "pitch_pid_kp",
    "pitch_pid_kd",
    "pitch_pid_ki",
    "pitch_pid_integral_limit",
    "maxelevator",
    "simulation",
    "tardy_helm_threshold",
    "tardy_nav_threshold",
    "sim_instability",
    "heading_debug",
    "speed_debug",
    "depth_debug",
    "wind_conditions",
    "polar_plot",
    "wormhole",
    "post_des_thrust",
    "post_des_rudder",
    "node_report_local",
    "platform_type",
    "platform_length",
    "platform_beam",
    "mmsi",
    "ais_ship_type",
    "mqtt",
    "actuators",
    "aliases",
    "sensors",
    "obstacles",
];

/// Keys whose value is a TOML string (an unquoted value gets a hint).
pub const STRING_KEYS: &[&str] = &[
    "name",
    "model",
    "prefix",
    "start_pos",
    "thrust_map",
    "drift_vector",
    "geodesy",
    "math",
    "current_field",
    "platform_type",
    "thrust_mode_diff",
    "thrust_mode_reverse",
];

/// Every key of the `[mqtt]` table.
pub const MQTT_KEYS: &[&str] = &[
    "broker",
    "topic_root",
    "username",
    "password",
    "max_payload",
    "publish",
];

/// Every key of an `[actuators.NAME]` table.
pub const ACTUATOR_KEYS: &[&str] = &["interpolation", "max_rate", "max_accel", "max_jerk"];

/// `[sea]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RawSea {
    pub active: S<bool>,
    pub spectrum: S<String>,
    pub hs: S<f64>,
    pub tp: S<f64>,
    pub gamma: S<f64>,
    pub direction: S<f64>,
    pub spreading: S<f64>,
    pub components: S<i64>,
    pub seed: S<i64>,
    pub wave_drift: S<f64>,
}

/// `[wind]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RawWind {
    pub active: S<bool>,
    pub speed: S<f64>,
    pub direction: S<f64>,
    pub gusts: S<bool>,
    pub surface_drag: S<f64>,
    pub length_scale: S<f64>,
    pub components: S<i64>,
    pub seed: S<i64>,
    pub windage: S<f64>,
    pub weathervane: S<f64>,
}

/// `[current_tide]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RawTide {
    pub active: S<bool>,
    pub mean: S<f64>,
    pub amplitude: S<f64>,
    pub period: S<f64>,
    pub phase: S<f64>,
}

/// Every key of `[sea]`.
pub const SEA_KEYS: &[&str] = &[
    "active",
    "spectrum",
    "hs",
    "tp",
    "gamma",
    "direction",
    "spreading",
    "components",
    "seed",
    "wave_drift",
];
/// Every key of `[wind]`.
pub const WIND_KEYS: &[&str] = &[
    "active",
    "speed",
    "direction",
    "gusts",
    "surface_drag",
    "length_scale",
    "components",
    "seed",
    "windage",
    "weathervane",
];
/// Every key of `[current_tide]`.
pub const TIDE_KEYS: &[&str] = &["active", "mean", "amplitude", "period", "phase"];

/// `[sensors]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RawSensors {
    pub seed: S<i64>,
    pub gps_sigma: S<f64>,
    pub gps_bias_sigma: S<f64>,
    pub gps_bias_tau: S<f64>,
    pub gps_outlier_prob: S<f64>,
    pub gps_outlier_m: S<f64>,
    pub gps_fix_quality: S<i64>,
    pub gps_hdop: S<f64>,
    pub gps_satellites: S<i64>,
    pub heading_sigma: S<f64>,
    pub heading_bias: S<f64>,
    pub speed_sigma: S<f64>,
    pub depth_sigma: S<f64>,
    pub latency: S<f64>,
    pub faults: Option<Vec<Spanned<String>>>,
}

/// Every key of the `[sensors]` table.
pub const SENSOR_KEYS: &[&str] = &[
    "seed",
    "gps_sigma",
    "gps_bias_sigma",
    "gps_bias_tau",
    "gps_outlier_prob",
    "gps_outlier_m",
    "gps_fix_quality",
    "gps_hdop",
    "gps_satellites",
    "heading_sigma",
    "heading_bias",
    "speed_sigma",
    "depth_sigma",
    "latency",
    "faults",
];

/// `[obstacles]` as written (docs/obstacles.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RawObstacles {
    pub file: S<String>,
    pub sensor_range: S<f64>,
    pub hit_range: S<f64>,
    pub post_points: S<bool>,
    pub refresh_interval: S<f64>,
}

/// Every key of the `[obstacles]` table.
pub const OBSTACLE_KEYS: &[&str] = &[
    "file",
    "sensor_range",
    "hit_range",
    "post_points",
    "refresh_interval",
];
