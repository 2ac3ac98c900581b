//! Vehicle configs (docs/formats.md §1): TOML → validated [`VehicleConfig`].
//!
//! Two layers, as in ripgrep: [`RawVehicle`] mirrors the file (serde, every
//! value with its span, unknown keys refused), and [`build_vehicle`] turns it
//! into [`Params`] applying uSimMarine's own rules line by line (docs/model.md
//! §2): classic applies lines last-first (the earlier line wins), V22 in file
//! order (the later line wins). Values uSimMarine would reject become
//! warnings naming the key; malformed TOML, unknown keys, wrong types and
//! non-finite numbers are errors naming the file, line and key.
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::interp::shaping::{ActuatorSettings, Interpolation};
use crate::model::current_field::CurrentField;
use crate::model::geodesy::Geodesy;
use crate::model::pose::parse_pose;
use crate::model::trig::MathMode;
use crate::model::{drift, Actuator, ModelVariant, Params};

/// MQTT settings of a live vehicle (`[mqtt]` table).
#[derive(Debug, Clone, PartialEq)]
pub struct MqttConfig {
    /// Broker URL, `mqtt://host:port` (or `mqtts://` with the `tls` feature).
    pub broker: String,
    /// First topic level: topics are `{topic_root}/{vehicle}/{VARIABLE}`.
    pub topic_root: String,
    /// Optional user name for the broker.
    pub username: Option<String>,
    /// Optional password for the broker.
    pub password: Option<String>,
    /// Largest message payload a vehicle takes, bytes: a larger one is
    /// dropped with one log line, without disconnecting (default 64 KiB).
    pub max_payload: usize,
    /// What a live vehicle publishes each iteration (`[mqtt] publish`).
    pub publish: PublishMode,
}

/// `[mqtt] publish`: every variable on its own topic plus `NODE_REPORT`
/// (`"all"`, the default), or only `NODE_REPORT` and `USM_TIME`
/// (`"report"`: large fleets; the per-variable topics are most of a
/// broker's load).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PublishMode {
    /// Every publication, `NODE_REPORT` and `USM_TIME`.
    #[default]
    All,
    /// `NODE_REPORT` and `USM_TIME` only.
    Report,
}

/// The largest packet MQTT allows (remaining length 268,435,455 bytes).
pub const MAX_MQTT_PAYLOAD: usize = 268_435_455;

/// Default of `[mqtt] max_payload`, bytes: twice the largest `SET` list a
/// person writes by hand, half the per-iteration mailbox.
pub const DEFAULT_MAX_PAYLOAD: usize = 64 * 1024;

impl Default for MqttConfig {
    fn default() -> Self {
        MqttConfig {
            broker: "mqtt://127.0.0.1:1883".to_string(),
            topic_root: "usim".to_string(),
            username: None,
            password: None,
            max_payload: DEFAULT_MAX_PAYLOAD,
            publish: PublishMode::All,
        }
    }
}

/// A loaded, validated vehicle config.
#[derive(Debug, Clone)]
pub struct VehicleConfig {
    /// Vehicle name: MQTT topics, CSV, logs (default `"vehicle"`).
    pub name: String,
    /// Model parameters and start pose.
    pub params: Params,
    /// Iterations per second in live runs, Hz (default 10).
    pub app_tick: f64,
    /// MQTT settings.
    pub mqtt: MqttConfig,
    /// Also publish MOOS's `NODE_REPORT_LOCAL` string each iteration (live runs).
    pub node_report_local: bool,
    /// `TYPE=` of `NODE_REPORT_LOCAL` (default `"unknown"`).
    pub platform_type: String,
    /// `LENGTH=` of `NODE_REPORT_LOCAL`, m (default 0).
    pub platform_length: f64,
    /// Warnings for values uSimMarine would reject ("unhandled config"), naming the key.
    pub warnings: Vec<String>,
}

impl Default for VehicleConfig {
    fn default() -> Self {
        VehicleConfig {
            name: "vehicle".to_string(),
            params: Params::default(),
            app_tick: 10.0,
            mqtt: MqttConfig::default(),
            node_report_local: false,
            platform_type: "unknown".to_string(),
            platform_length: 0.0,
            warnings: Vec::new(),
        }
    }
}

/// A config (or mission) that could not be loaded: where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// The key involved, if known.
    pub key: Option<String>,
    /// What is wrong and, where possible, what to do.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", clip(&self.message, MAX_ECHO_CHARS))
    }
}

/// Longest error message shown, characters: values echoed in errors (a
/// 100 KB line, a huge payload) are clipped with `…`.
pub const MAX_ECHO_CHARS: usize = 1000;

/// `text` clipped to `max` characters (with `…` and the number of
/// characters left out).
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => {
            let left = text[cut..].chars().count();
            std::borrow::Cow::Owned(format!("{}… ({left} more characters)", &text[..cut]))
        }
    }
}

impl std::error::Error for ConfigError {}

/// Source text of a TOML file, for turning spans into line numbers.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    /// The file the text came from.
    pub path: &'a Path,
    /// The text.
    pub text: &'a str,
}

impl Source<'_> {
    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// The byte offsets of every `\n`, for [`Source::line_in`] (many
    /// lookups in one file: O(log n) each instead of O(n)).
    pub fn newlines(&self) -> Vec<usize> {
        self.text
            .bytes()
            .enumerate()
            .filter_map(|(i, b)| (b == b'\n').then_some(i))
            .collect()
    }

    /// [`Source::line_of`] with the index of [`Source::newlines`].
    pub fn line_in(newlines: &[usize], offset: usize) -> usize {
        newlines.partition_point(|&n| n < offset) + 1
    }

    /// An error at byte `offset` about `key`.
    pub fn error(&self, offset: usize, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            path: self.path.to_path_buf(),
            line: Some(self.line_of(offset)),
            key: Some(key.to_string()),
            message: message.into(),
        }
    }

    /// A warning line `file:line: key `k`: message`.
    pub fn warning(&self, offset: usize, key: &str, message: &str) -> String {
        format!(
            "{}:{}: key `{key}`: {message}",
            self.path.display(),
            self.line_of(offset)
        )
    }

    /// Turn a TOML/serde error into a [`ConfigError`] with line, key and a
    /// suggestion for unknown keys. The suggestion comes from the keys of
    /// the table the key stands in (serde's "expected one of" list), falling
    /// back to `known`, and is never the key itself.
    pub fn toml_error(&self, err: &toml::de::Error, known: &[&str]) -> ConfigError {
        let offset = err.span().map(|s| s.start);
        let line = offset.map(|o| self.line_of(o));
        let msg = err.message().to_string();
        if let Some(rest) = msg.strip_prefix("unknown field `") {
            let key = rest.split('`').next().unwrap_or("").to_string();
            let expected = expected_keys(rest);
            let candidates: Vec<&str> = if expected.is_empty() {
                known.to_vec()
            } else {
                expected.iter().map(String::as_str).collect()
            };
            let misplaced = !expected.is_empty()
                && VEHICLE_KEYS.contains(&key.as_str())
                && expected
                    .iter()
                    .filter(|k| VEHICLE_KEYS.contains(&k.as_str()))
                    .count()
                    < VEHICLE_KEYS.len() / 2;
            let hint = match nearest(&key, candidates.iter().copied()) {
                _ if misplaced => format!(
                    "; `{key}` is a vehicle key: in a mission it goes in the [vehicle] table (or in the vehicle file)"
                ),
                Some(n) => format!("; did you mean `{n}`?"),
                None => match nearest(&key, MOOS_APP_SETTINGS.iter().copied()) {
                    // A MOOS habit (or its typo) in a usim config.
                    Some(n) if candidates.contains(&"app_tick") => format!(
                        "; did you mean `{n}`? That is a MOOS app setting usim does not have (its iteration rate is `app_tick`)"
                    ),
                    _ => String::new(),
                },
            };
            // `usim example` lists the keys of vehicle tables only.
            let in_example = !expected.is_empty()
                && expected.iter().all(|k| {
                    VEHICLE_KEYS.contains(&k.as_str())
                        || MQTT_KEYS.contains(&k.as_str())
                        || ACTUATOR_KEYS.contains(&k.as_str())
                });
            let see = if in_example {
                " (`usim example` lists every key, docs/config.md explains them)"
            } else {
                ""
            };
            return ConfigError {
                path: self.path.to_path_buf(),
                line,
                key: Some(key),
                message: format!("unknown key{hint}{see}"),
            };
        }
        // The key is what stands before `=` on the offending line.
        let line_text = offset.and_then(|o| {
            let start = self.text[..o.min(self.text.len())]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            self.text[start..].lines().next()
        });
        let kv = line_text.and_then(|l| {
            let (k, v) = l.split_once('=')?;
            let k = k.trim().trim_matches('"');
            (!k.is_empty() && !k.starts_with('[')).then(|| (k.to_string(), v.trim()))
        });
        let mut message = msg.trim().to_string();
        if let Some((k, v)) = &kv {
            // `thrust_map = 0:0` reads as a TOML time: say to quote it.
            let unquoted = !v.starts_with(['"', '\'', '[', '{']);
            let string_key = STRING_KEYS.contains(&k.as_str());
            if unquoted && (v.contains(':') || string_key) {
                let value = v.split('#').next().unwrap_or(v).trim();
                let reads = if v.contains(':') {
                    "TOML reads it as a date or time"
                } else {
                    "TOML cannot read it"
                };
                message = format!(
                    "{message}; `{value}` is not quoted, so {reads}: write it as a string, {k} = \"{value}\""
                );
            }
        }
        ConfigError {
            path: self.path.to_path_buf(),
            line,
            key: kv.map(|(k, _)| k),
            message,
        }
    }
}

/// The keys serde lists after an unknown field: "..., expected one of `a`, `b`".
fn expected_keys(rest: &str) -> Vec<String> {
    let Some((_, list)) = rest.split_once("expected") else {
        return Vec::new();
    };
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A file of the wrong kind: a mission where a vehicle config is expected,
/// or the reverse. `None` if `text` does not look like the other kind.
pub fn wrong_kind(path: &Path, text: &str, want_mission: bool) -> Option<ConfigError> {
    let table: toml::Table = text.parse().ok()?;
    let is_mission = table.get("mission").is_some_and(toml::Value::is_table)
        || table.get("post").is_some_and(toml::Value::is_array);
    let shown = path.display();
    let message = if want_mission && !is_mission {
        let vehicle_keys = table
            .keys()
            .filter(|k| VEHICLE_KEYS.contains(&k.as_str()))
            .count();
        if vehicle_keys == 0 {
            return None;
        }
        format!(
            "this is a vehicle config, not a mission: `usim replay` wants a mission file with a [mission] table and [[post]] messages (docs/formats.md §2). Run this vehicle live with `usim run {shown}`, or replay it from a mission that names it: [mission] vehicle = \"{shown}\""
        )
    } else if !want_mission && is_mission {
        let vehicle = table
            .get("mission")
            .and_then(|m| m.get("vehicle"))
            .and_then(toml::Value::as_str)
            .map(|v| format!("`usim run` with its vehicle file ({v}, relative to the mission)"))
            .unwrap_or_else(|| "`usim run` with a vehicle config".to_string());
        format!(
            "this is a mission file, not a vehicle config: `usim run` and `usim up` want a vehicle config (docs/formats.md §1, `usim example`). Replay the mission with `usim replay {shown}`, or drive its vehicle live: {vehicle}"
        )
    } else {
        return None;
    };
    Some(ConfigError {
        path: path.to_path_buf(),
        line: None,
        key: None,
        message,
    })
}

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
    pub mqtt: Option<RawMqtt>,
    pub actuators: Option<BTreeMap<String, Spanned<RawActuator>>>,
    pub aliases: Option<BTreeMap<String, Spanned<Vec<String>>>>,
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
    "mqtt",
    "actuators",
    "aliases",
];

/// Keys whose value is a TOML string (an unquoted value gets a hint).
const STRING_KEYS: &[&str] = &[
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

/// One uSimMarine config line: the key, where it stands, and its value.
#[derive(Debug, Clone)]
enum Line {
    Num(&'static str, f64),
    Bool(&'static str, bool),
    Text(&'static str, String),
}

/// Load a vehicle config file.
pub fn load_vehicle(path: &Path) -> Result<VehicleConfig, ConfigError> {
    let text = read_text(path, "config")?;
    parse_vehicle(path, &text)
}

/// Read a whole text file; the error names the file and what it was for.
pub fn read_text(path: &Path, what: &str) -> Result<String, ConfigError> {
    read_capped(path, MAX_INPUT_BYTES).map_err(|message| ConfigError {
        path: path.to_path_buf(),
        line: None,
        key: None,
        message: format!("cannot read the {what}: {message}"),
    })
}

/// The one rule for vehicle names, in a config and on the command line
/// (`--name`): 1 to 64 characters, none of them whitespace, a control
/// character, `/`, `+` or `#` (a name is an MQTT topic level and part of
/// the client id).
pub fn check_vehicle_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    let bad = name
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '+' | '#'));
    if n == 0 || n > 64 {
        Err(format!(
            "a vehicle name must have 1 to 64 characters, this one has {n}"
        ))
    } else if let Some(c) = bad {
        Err(format!(
            "a vehicle name may not contain whitespace, control characters, `/`, `+` or `#` \
             (it is an MQTT topic level); found {:?}",
            c
        ))
    } else {
        Ok(())
    }
}

/// Largest input file (vehicle config, mission, current field) read, bytes.
/// A real one is a few kilobytes; 32,000 mission posts are ~2 MB.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// Read a text file of at most `max` bytes. Only regular files are read: a
/// FIFO would block forever and a device such as `/dev/zero` never ends, so
/// both are refused before opening (`stat` does not block).
pub fn read_capped(path: &Path, max: u64) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device?)"
        };
        return Err(format!("{} is {kind}", path.display()));
    }
    if meta.len() > max {
        return Err(format!(
            "{} is {} bytes, more than the {max} bytes accepted",
            path.display(),
            meta.len()
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{} grew past the {max} bytes accepted while being read",
            path.display()
        ));
    }
    String::from_utf8(bytes).map_err(|e| format!("{} is not UTF-8 text: {e}", path.display()))
}

/// Parse a vehicle config from its text (`path` names it in messages and
/// anchors relative paths such as `current_field`).
pub fn parse_vehicle(path: &Path, text: &str) -> Result<VehicleConfig, ConfigError> {
    let src = Source { path, text };
    let raw: RawVehicle = toml::from_str(text).map_err(|e| {
        wrong_kind(path, text, false).unwrap_or_else(|| src.toml_error(&e, VEHICLE_KEYS))
    })?;
    build_vehicle(&src, &raw)
}

/// Validate a [`RawVehicle`] from `src` into a [`VehicleConfig`].
pub fn build_vehicle(src: &Source<'_>, raw: &RawVehicle) -> Result<VehicleConfig, ConfigError> {
    let mut cfg = VehicleConfig::default();
    let mut warnings = Vec::new();
    if let Some(n) = &raw.name {
        let name = n.get_ref().trim();
        if let Err(why) = check_vehicle_name(name) {
            return Err(src.error(n.span().start, "name", why));
        }
        cfg.name = name.to_string();
    }
    let mut p = Params::default();
    if let Some(m) = &raw.model {
        p.variant = match m.get_ref().to_lowercase().as_str() {
            "classic" => ModelVariant::Classic,
            "v22" => ModelVariant::V22,
            other => {
                return Err(src.error(
                    m.span().start,
                    "model",
                    format!("unknown model `{other}`; use \"classic\" or \"v22\""),
                ))
            }
        };
    }
    let v22 = p.variant == ModelVariant::V22;

    // Collect the uSimMarine lines with their positions.
    let mut lines: Vec<(usize, Line)> = Vec::new();
    macro_rules! num {
        ($($f:ident),*) => {$(
            if let Some(v) = &raw.$f {
                let x = *v.get_ref();
                if !x.is_finite() {
                    return Err(src.error(v.span().start, stringify!($f), "must be a finite number (not nan or inf)"));
                }
                lines.push((v.span().start, Line::Num(stringify!($f), x)));
            }
        )*};
    }
    num!(
        start_x,
        start_y,
        start_heading,
        start_speed,
        start_depth,
        thrust_factor,
        turn_rate,
        max_acceleration,
        max_deceleration,
        buoyancy_rate,
        max_depth_rate,
        max_depth_rate_speed,
        default_water_depth,
        drift_x,
        drift_y,
        rotate_speed,
        max_rudder_degs_per_sec,
        trim_tolerance,
        max_trim_delay,
        turn_spd_loss,
        max_speed,
        turn_radius,
        turn_spd_map_null_speed,
        turn_spd_map_null_rate,
        turn_spd_map_full_speed,
        turn_spd_map_full_rate
    );
    macro_rules! boolean {
        ($($f:ident),*) => {$(
            if let Some(v) = &raw.$f {
                lines.push((v.span().start, Line::Bool(stringify!($f), *v.get_ref())));
            }
        )*};
    }
    boolean!(thrust_reflect, sim_pause, dual_state, post_navpos_summary);
    macro_rules! text {
        ($($f:ident),*) => {$(
            if let Some(v) = &raw.$f {
                lines.push((v.span().start, Line::Text(stringify!($f), v.get_ref().clone())));
            }
        )*};
    }
    text!(start_pos, drift_vector, prefix);
    for (f, v) in [
        ("thrust_mode_diff", &raw.thrust_mode_diff),
        ("thrust_mode_reverse", &raw.thrust_mode_reverse),
    ] {
        if let Some(v) = v {
            let s = match v.get_ref() {
                BoolOrText::Bool(b) => b.to_string(),
                BoolOrText::Text(s) => s.clone(),
            };
            lines.push((v.span().start, Line::Text(f, s)));
        }
    }
    if let Some(tm) = &raw.thrust_map {
        let start = tm.span().start;
        match tm.get_ref() {
            Lines::One(s) => lines.push((start, Line::Text("thrust_map", s.clone()))),
            Lines::Many(v) => {
                for (i, s) in v.iter().enumerate() {
                    // keep list order: offsets just after the key's
                    lines.push((start + i, Line::Text("thrust_map", s.clone())));
                }
            }
        }
    }
    lines.sort_by_key(|(o, _)| *o);
    if !v22 {
        lines.reverse(); // classic: last line first, the earlier line wins
    }
    for (offset, line) in &lines {
        if let Err(msg) = apply_line(&mut p, line, v22) {
            let key = match line {
                Line::Num(k, _) | Line::Bool(k, _) | Line::Text(k, _) => *k,
            };
            warnings.push(src.warning(*offset, key, &msg));
        }
    }

    // Non-uSimMarine keys.
    match (&raw.lat_origin, &raw.lon_origin) {
        (Some(lat), Some(lon)) => {
            let (a, o) = (*lat.get_ref(), *lon.get_ref());
            if !(a.is_finite() && (-90.0..=90.0).contains(&a)) {
                return Err(src.error(
                    lat.span().start,
                    "lat_origin",
                    "must be a latitude in [-90, 90] degrees",
                ));
            }
            if !(o.is_finite() && (-180.0..=180.0).contains(&o)) {
                return Err(src.error(
                    lon.span().start,
                    "lon_origin",
                    "must be a longitude in [-180, 180] degrees",
                ));
            }
            p.origin = Some((a, o));
        }
        (Some(v), None) | (None, Some(v)) => {
            return Err(src.error(
                v.span().start,
                if raw.lat_origin.is_some() {
                    "lat_origin"
                } else {
                    "lon_origin"
                },
                "lat_origin and lon_origin go together: set both to enable lat/lon, or neither",
            ))
        }
        (None, None) => {}
    }
    if let Some(g) = &raw.geodesy {
        p.geodesy = match g.get_ref().to_lowercase().as_str() {
            "utm" => Geodesy::Utm,
            "local_grid" => Geodesy::LocalGrid,
            other => {
                return Err(src.error(
                    g.span().start,
                    "geodesy",
                    format!("unknown conversion `{other}`; use \"utm\" or \"local_grid\""),
                ))
            }
        };
    }
    if let Some(m) = &raw.math {
        p.math = match m.get_ref().to_lowercase().as_str() {
            "fast" => MathMode::Fast,
            "libm" => MathMode::Libm,
            other => {
                return Err(src.error(
                    m.span().start,
                    "math",
                    format!("unknown math `{other}`; use \"fast\" (usim's own trigonometry, the default) or \"libm\" (the C library, bit-identical with uSimMarine on glibc)"),
                ))
            }
        };
    }
    if let Some(cf) = &raw.current_field {
        let active = raw
            .current_field_active
            .as_ref()
            .is_none_or(|a| *a.get_ref());
        if active {
            let file = src
                .path
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join(cf.get_ref());
            let text = read_capped(&file, MAX_INPUT_BYTES).map_err(|e| {
                src.error(
                    cf.span().start,
                    "current_field",
                    format!("cannot read {}: {e}", file.display()),
                )
            })?;
            let (field, field_warnings) = CurrentField::parse(&text).map_err(|e| {
                src.error(
                    cf.span().start,
                    "current_field",
                    format!("{}: {e}", file.display()),
                )
            })?;
            for w in field_warnings {
                warnings.push(format!("{}: {w}", file.display()));
            }
            p.current_field = Some(field);
        }
    }
    if let Some(t) = &raw.app_tick {
        let v = *t.get_ref();
        if !(v.is_finite() && v > 0.0 && v <= 1000.0) {
            return Err(src.error(t.span().start, "app_tick", "must be a rate in (0, 1000] Hz"));
        }
        cfg.app_tick = v;
    }
    if let Some(b) = &raw.node_report_local {
        cfg.node_report_local = *b.get_ref();
    }
    if let Some(t) = &raw.platform_type {
        let v = t.get_ref().trim();
        if v.is_empty() || v.contains([',', '=']) {
            return Err(src.error(
                t.span().start,
                "platform_type",
                "must be a non-empty word without `,` or `=` (it is a NODE_REPORT_LOCAL field)",
            ));
        }
        cfg.platform_type = v.to_string();
    }
    if let Some(l) = &raw.platform_length {
        let v = *l.get_ref();
        if !(v.is_finite() && v >= 0.0) {
            return Err(src.error(
                l.span().start,
                "platform_length",
                "must be a length >= 0 in m",
            ));
        }
        cfg.platform_length = v;
    }
    if let Some(m) = &raw.mqtt {
        if let Some(b) = &m.broker {
            cfg.mqtt.broker = b.clone();
        }
        if let Some(r) = &m.topic_root {
            cfg.mqtt.topic_root = r.clone();
        }
        cfg.mqtt.username = m.username.clone();
        cfg.mqtt.password = m.password.clone();
        if let Some(mp) = &m.max_payload {
            let v = *mp.get_ref();
            if !(1..=MAX_MQTT_PAYLOAD as i64).contains(&v) {
                return Err(src.error(
                    mp.span().start,
                    "mqtt.max_payload",
                    format!("must be 1..={MAX_MQTT_PAYLOAD} bytes (the MQTT maximum)"),
                ));
            }
            cfg.mqtt.max_payload = v as usize;
        }
        if let Some(pm) = &m.publish {
            cfg.mqtt.publish = match pm.get_ref().trim() {
                "all" => PublishMode::All,
                "report" => PublishMode::Report,
                other => {
                    return Err(src.error(
                        pm.span().start,
                        "mqtt.publish",
                        format!(
                            "`{other}`: \"all\" (every variable) or \"report\" (NODE_REPORT only)"
                        ),
                    ))
                }
            };
        }
    }
    crate::config_v22::build(src, raw, &mut p, &mut warnings)?;
    p.actuators = build_actuators(src, raw)?;
    cfg.params = p;
    cfg.warnings = warnings;
    Ok(cfg)
}

fn build_actuators(src: &Source<'_>, raw: &RawVehicle) -> Result<ActuatorSettings, ConfigError> {
    let mut s = ActuatorSettings::default();
    let names: Vec<&str> = Actuator::ALL.iter().map(|a| a.name()).collect();
    for (name, spec) in raw.actuators.iter().flatten() {
        let at = spec.span().start;
        let key = format!("actuators.{name}");
        let Some(act) = Actuator::from_name(name) else {
            let hint = nearest(name, names.iter().copied())
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            return Err(src.error(
                at,
                &key,
                format!("unknown actuator{hint} (one of {})", names.join(", ")),
            ));
        };
        let spec = spec.get_ref();
        let mode = match spec.interpolation.as_deref().unwrap_or("timed") {
            "none" => Interpolation::None,
            "timed" => Interpolation::Timed,
            "jerk" => {
                let get = |v: Option<f64>, what: &str| match v {
                    Some(x) if x.is_finite() && x > 0.0 => Ok(x),
                    _ => Err(src.error(
                        at,
                        &key,
                        format!("interpolation = \"jerk\" needs {what} > 0 (finite)"),
                    )),
                };
                Interpolation::Jerk {
                    max_rate: get(spec.max_rate, "max_rate")?,
                    max_accel: get(spec.max_accel, "max_accel")?,
                    max_jerk: get(spec.max_jerk, "max_jerk")?,
                }
            }
            other => {
                return Err(src.error(
                    at,
                    &key,
                    format!("unknown interpolation `{other}`; use \"none\", \"timed\" or \"jerk\""),
                ))
            }
        };
        s.modes[act.index()] = mode;
        if let Some(n) = spec.max_pending {
            if !(1..=10_000_000).contains(&n) {
                return Err(src.error(
                    at,
                    &key,
                    format!("max_pending = {n}: must be 1..10000000 (pending timed commands)"),
                ));
            }
            s.max_pending[act.index()] = Some(n as usize);
        }
    }
    for (alias, members) in raw.aliases.iter().flatten() {
        let at = members.span().start;
        if Actuator::from_name(alias).is_some() {
            return Err(src.error(
                at,
                &format!("aliases.{alias}"),
                "an alias cannot have an actuator's name",
            ));
        }
        for m in members.get_ref() {
            if Actuator::from_name(m).is_none() {
                return Err(src.error(
                    at,
                    &format!("aliases.{alias}"),
                    format!("`{m}` is not an actuator (one of {})", names.join(", ")),
                ));
            }
        }
        s.aliases.push((alias.clone(), members.get_ref().clone()));
    }
    Ok(s)
}

/// Apply one config line with uSimMarine's checks (docs/model.md §2.2). An error
/// is the warning text; the parameter keeps its previous value (except where
/// uSimMarine clamps and warns).
fn apply_line(p: &mut Params, line: &Line, v22: bool) -> Result<(), String> {
    match line {
        Line::Num(key, v) => {
            let v = *v;
            match *key {
                "start_x" => p.start.x = v,
                "start_y" => p.start.y = v,
                "start_heading" => p.start.heading = v,
                "start_speed" => p.start.speed = v,
                "start_depth" => {
                    if v < 0.0 {
                        p.start.depth = 0.0;
                        return Err("negative start depth; set to 0".into());
                    }
                    p.start.depth = v;
                }
                "thrust_factor" => {
                    if !p.thrust_map.set_thrust_factor(v) {
                        return Err("must be >= 0; ignored".into());
                    }
                }
                "turn_rate" => p.turn_rate = v.clamp(0.0, 100.0),
                "max_acceleration" | "max_deceleration" => {
                    let slot = if *key == "max_acceleration" {
                        &mut p.max_acceleration
                    } else {
                        &mut p.max_deceleration
                    };
                    if v < 0.0 {
                        *slot = 0.0;
                        return Err("negative; set to 0 (no limit)".into());
                    }
                    *slot = v;
                }
                "buoyancy_rate" => p.buoyancy_rate = v,
                "max_depth_rate" => p.max_depth_rate = v,
                "max_depth_rate_speed" => p.max_depth_rate_speed = v,
                "default_water_depth" => {
                    if v < 0.0 {
                        return Err("must be >= 0; ignored".into());
                    }
                    p.default_water_depth = v;
                }
                "drift_x" => p.drift_x = v,
                "drift_y" => p.drift_y = v,
                "rotate_speed" => p.rotate_speed = v,
                "max_rudder_degs_per_sec" => {
                    if v < 0.0 {
                        return Err("must be >= 0; ignored".into());
                    }
                    p.max_rudder_degs_per_sec = v;
                }
                "trim_tolerance" | "max_trim_delay" if !v22 => {}
                _ if !v22 => return Err("is a uSimMarineV22 parameter; the classic model ignores it (set model = \"v22\")".into()),
                "turn_spd_loss" => {
                    if !(0.0..=1.0).contains(&v) {
                        return Err("must be in [0, 1]; ignored".into());
                    }
                    p.turn_spd_loss = v;
                }
                "trim_tolerance" => p.trim_tolerance = v,
                "max_trim_delay" => p.max_trim_delay = v,
                "max_speed" => {
                    // docs/v22.md §2.3: any numeric line sets the turn
                    // limit's max speed to the publication cap as it now is
                    let res = if v <= 0.0 {
                        Err("must be > 0; the publication cap is unchanged".into())
                    } else {
                        p.max_speed = v;
                        Ok(())
                    };
                    p.turn_limit_max_speed = p.max_speed;
                    return res;
                }
                "turn_radius" => {
                    if v < 0.0 {
                        return Err("must be >= 0; ignored".into());
                    }
                    p.turn_radius = v;
                }
                "turn_spd_map_null_speed" => {
                    if v <= 0.0 {
                        return Err("must be > 0; ignored".into());
                    }
                    p.turn_spd_map_null_speed = v;
                }
                "turn_spd_map_null_rate" => {
                    if !(0.0..=100.0).contains(&v) {
                        return Err("must be in [0, 100]; ignored".into());
                    }
                    p.turn_spd_map_null_rate = v;
                }
                "turn_spd_map_full_speed" => p.turn_spd_map_full_speed = v,
                "turn_spd_map_full_rate" => p.turn_spd_map_full_rate = v,
                _ => return Err("unhandled".into()),
            }
        }
        Line::Bool(key, b) => match *key {
            "thrust_reflect" => p.thrust_map.set_reflect(*b),
            "sim_pause" => p.sim_pause = *b,
            "dual_state" => p.dual_state = *b,
            "post_navpos_summary" => {
                if !v22 {
                    return Err("is a uSimMarineV22 parameter; the classic model ignores it".into());
                }
                p.post_navpos_summary = *b;
            }
            _ => return Err("unhandled".into()),
        },
        Line::Text(key, s) => match *key {
            "prefix" => {
                if s.trim().is_empty() || s.contains(char::is_whitespace) {
                    return Err("must be non-empty without white space; ignored".into());
                }
                p.prefix = s.trim().to_string();
            }
            "start_pos" => {
                let (pose, err) = parse_pose(s);
                if let Some(v) = pose.x {
                    p.start.x = v;
                }
                if let Some(v) = pose.y {
                    p.start.y = v;
                }
                if let Some(v) = pose.heading {
                    p.start.heading = v;
                }
                if let Some(v) = pose.speed {
                    p.start.speed = v;
                }
                if let Some(v) = pose.depth {
                    p.start.depth = v;
                }
                if let Some(e) = err {
                    return Err(e);
                }
            }
            "drift_vector" => {
                let (a, m) = drift::parse_vector(s).map_err(|e| format!("{e}; ignored"))?;
                let (dx, dy) = drift::components(a, m);
                p.drift_x = dx;
                p.drift_y = dy;
            }
            "thrust_map" => {
                p.thrust_map.add_line(s).map_err(|e| e.to_string())?;
            }
            "thrust_mode_diff" => match s.trim().to_lowercase().as_str() {
                _ if !v22 => {
                    return Err(
                        "is a uSimMarineV22 parameter; the classic model starts in normal mode"
                            .into(),
                    )
                }
                "differential" | "true" => p.thrust_mode_diff = true,
                "normal" | "false" => p.thrust_mode_diff = false,
                _ => {
                    return Err(
                        "expected \"differential\"/true or \"normal\"/false; ignored".into(),
                    )
                }
            },
            "thrust_mode_reverse" => match s.trim().to_lowercase().as_str() {
                "reverse" | "true" => p.thrust_mode_reverse = true,
                "normal" | "false" => p.thrust_mode_reverse = false,
                _ => return Err("expected \"reverse\"/true or \"normal\"/false; ignored".into()),
            },
            _ => return Err("unhandled".into()),
        },
    }
    Ok(())
}

/// Settings every MOOS app has, as MOOS writes them: a usim config that
/// names one (or a typo of one) is told what it is.
pub const MOOS_APP_SETTINGS: &[&str] = &["CommsTick", "AppTick", "MaxAppTick", "IterateMode"];

/// The warning for a vehicle config without a `name` key (`None` when it
/// has one, or is not TOML: its errors are reported elsewhere): usim then
/// calls the vehicle `vehicle`, which the user should hear about.
pub fn unnamed_notice(path: &Path, text: &str) -> Option<String> {
    let table: toml::Table = text.parse().ok()?;
    if table.contains_key("name") {
        return None;
    }
    Some(format!(
        "{} has no `name`, so usim calls the vehicle `vehicle` (topics {{root}}/vehicle/...); name it with --name NAME or `name = \"NAME\"` in the config",
        path.display()
    ))
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&w, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 4) && *c != word)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<VehicleConfig, ConfigError> {
        parse_vehicle(Path::new("test.toml"), text)
    }

    /// A value of the right TOML type for `key`, to probe the loader.
    fn sample(key: &str) -> &'static str {
        match key {
            "name" => "\"a\"",
            "model" => "\"classic\"",
            "prefix" | "start_pos" | "drift_vector" | "thrust_map" | "geodesy" | "math" => "\"\"",
            "platform_type" => "\"kayak\"",
            "current_field" => "\"nonexistent.cfd\"",
            "thrust_mode_diff" | "thrust_mode_reverse" => "false",
            "thrust_reflect"
            | "sim_pause"
            | "dual_state"
            | "post_navpos_summary"
            | "current_field_active"
            | "node_report_local" => "false",
            "mqtt" | "actuators" | "aliases" => "{}",
            _ => "1.0",
        }
    }

    #[test]
    fn every_known_key_is_accepted_and_documented_in_docs_config_md() {
        let doc = include_str!("../docs/config.md");
        for key in VEHICLE_KEYS {
            // the loader knows it: no "unknown key" error for it
            let text = format!("{key} = {}\n", sample(key));
            if let Err(e) = parse(&text) {
                assert!(!e.message.contains("unknown key"), "{key}: {e}");
            }
            let shown = match *key {
                "mqtt" => "`[mqtt]`".to_string(),
                "actuators" => "`[actuators.NAME]`".to_string(),
                "aliases" => "`[aliases]`".to_string(),
                k => format!("`{k}`"),
            };
            assert!(doc.contains(&shown), "docs/config.md lacks {shown}");
        }
        for key in MQTT_KEYS {
            let v = match *key {
                "max_payload" => "4096",
                "publish" => "\"report\"",
                _ => "\"x\"",
            };
            let text = format!("[mqtt]\n{key} = {v}\n");
            parse(&text).unwrap_or_else(|e| panic!("[mqtt] {key}: {e}"));
            assert!(
                doc.contains(&format!("`[mqtt]` `{key}`")),
                "docs/config.md lacks [mqtt] {key}"
            );
        }
        for key in ACTUATOR_KEYS {
            let v = if *key == "interpolation" {
                "\"timed\""
            } else {
                "1.0"
            };
            let text = format!("[actuators.DESIRED_RUDDER]\n{key} = {v}\n");
            parse(&text).unwrap_or_else(|e| panic!("actuators {key}: {e}"));
            assert!(
                doc.contains(&format!("`[actuators.NAME]` `{key}`")),
                "docs/config.md lacks {key}"
            );
        }
        // and the probe is real: a key the loader does not know is refused
        let e = parse("no_such_key = 1\n").unwrap_err();
        assert!(e.message.contains("unknown key"), "{e}");
        let e = parse("[mqtt]\nno_such_key = 1\n").unwrap_err();
        assert!(e.message.contains("unknown key"), "{e}");
    }

    #[test]
    fn defaults_are_usimmarine_code_defaults() {
        let c = parse("").unwrap();
        let p = &c.params;
        assert_eq!(p.turn_rate, 70.0);
        assert_eq!(p.max_acceleration, 0.0);
        assert_eq!(p.max_deceleration, 0.5);
        assert_eq!(p.buoyancy_rate, 0.025);
        assert_eq!(p.max_depth_rate_speed, 2.0);
        assert_eq!(p.thrust_map.thrust_factor(), 20.0);
        assert_eq!(p.prefix, "USM");
        assert_eq!(c.app_tick, 10.0);
    }

    #[test]
    fn typo_names_line_key_and_suggestion() {
        let e = parse("name = \"a\"\n\ntrun_rate = 40\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.key.as_deref(), Some("trun_rate"));
        assert!(e.to_string().contains("did you mean `turn_rate`"), "{e}");
        assert!(e.to_string().starts_with("test.toml:3"), "{e}");
    }

    #[test]
    fn wrong_type_names_line_and_key() {
        let e = parse("turn_rate = 40\nmax_speed = \"fast\"\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(e.key.as_deref(), Some("max_speed"), "{e}");
    }

    #[test]
    fn nan_and_inf_are_errors() {
        let e = parse("turn_rate = nan\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("turn_rate"));
        assert!(parse("drift_x = inf\n").is_err());
        assert!(parse("drift_x = -inf\n").is_err());
    }

    #[test]
    fn rejected_values_are_warnings() {
        let c = parse(
            "thrust_map = \"20:1, 50:0.5\"\ndrift_vector = \"10, 2e-1\"\nmax_acceleration = -1\n",
        )
        .unwrap();
        assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
        assert!(c
            .warnings
            .iter()
            .any(|w| w.contains("thrust_map") && w.contains(":1:")));
        assert_eq!(c.params.thrust_map.positive(), &[(20.0, 1.0)]);
        assert_eq!(c.params.drift_x, 0.0);
        assert_eq!(c.params.max_acceleration, 0.0);
    }

    #[test]
    fn conflicting_lines_follow_the_variant_order() {
        // classic: the earlier line wins; V22: the later line wins (docs/model.md §2.1)
        let text = "start_x = 5\nstart_pos = \"x=7, y=1\"\n";
        assert_eq!(parse(text).unwrap().params.start.x, 5.0);
        let v22 = format!("model = \"v22\"\n{text}");
        assert_eq!(parse(&v22).unwrap().params.start.x, 7.0);
    }

    #[test]
    fn thrust_map_lines_accumulate() {
        let c = parse("thrust_map = [\"20:1\", \"-50:-1, 60:3\"]\n").unwrap();
        assert_eq!(c.params.thrust_map.positive(), &[(20.0, 1.0), (60.0, 3.0)]);
        assert_eq!(c.params.thrust_map.negative(), &[(-50.0, -1.0)]);
    }

    #[test]
    fn v22_keys_warn_in_classic() {
        let c = parse("turn_spd_loss = 0.6\n").unwrap();
        assert_eq!(c.params.turn_spd_loss, 0.85);
        assert_eq!(c.warnings.len(), 1);
        let c = parse("model = \"v22\"\nturn_spd_loss = 0.6\n").unwrap();
        assert_eq!(c.params.turn_spd_loss, 0.6);
    }

    #[test]
    fn actuators_and_aliases() {
        let c = parse(
            "[actuators.DESIRED_RUDDER]\ninterpolation = \"jerk\"\nmax_rate = 20\nmax_accel = 40\nmax_jerk = 200\n[aliases]\nTHRUSTERS = [\"DESIRED_THRUST_L\", \"DESIRED_THRUST_R\"]\n",
        )
        .unwrap();
        assert!(matches!(
            c.params.actuators.modes[1],
            Interpolation::Jerk { .. }
        ));
        assert_eq!(c.params.actuators.aliases.len(), 1);
        let e = parse("[actuators.DESIRED_RUDER]\n").unwrap_err();
        assert!(e.to_string().contains("DESIRED_RUDDER"), "{e}");
        let e = parse("[actuators.DESIRED_RUDDER]\ninterpolation = \"jerk\"\n").unwrap_err();
        assert!(e.to_string().contains("max_rate"), "{e}");
    }

    #[test]
    fn origin_needs_both() {
        assert!(parse("lat_origin = 42.0\n").is_err());
        let c = parse("lat_origin = 42.0\nlon_origin = -71\ngeodesy = \"local_grid\"\n").unwrap();
        assert_eq!(c.params.origin, Some((42.0, -71.0)));
        assert!(parse("lat_origin = 95.0\nlon_origin = 0\n").is_err());
    }

    #[test]
    fn math_mode() {
        use crate::model::trig::MathMode;
        assert_eq!(parse("name = \"a\"\n").unwrap().params.math, MathMode::Fast);
        assert_eq!(
            parse("math = \"LIBM\"\n").unwrap().params.math,
            MathMode::Libm
        );
        assert_eq!(
            parse("math = \"fast\"\n").unwrap().params.math,
            MathMode::Fast
        );
        let e = parse("name = \"a\"\nmath = \"glibc\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(":2") && e.contains("math") && e.contains("libm"),
            "{e}"
        );
    }
}
