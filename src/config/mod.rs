//! Vehicle configs (docs/formats.md §1): TOML → validated [`VehicleConfig`].
//!
//! Two layers, as in ripgrep: [`RawVehicle`] mirrors the file (serde, every
//! value with its span, unknown keys refused), and [`build_vehicle`] turns it
//! into [`Params`] applying uSimMarine's own rules line by line (docs/model.md
//! §2): classic applies lines last-first (the earlier line wins), V22 in file
//! order (the later line wins). Values uSimMarine would reject become
//! warnings naming the key; malformed TOML, unknown keys, wrong types and
//! non-finite numbers are errors naming the file, line and key.
use std::path::Path;

use crate::interp::shaping::{ActuatorSettings, Interpolation};
use crate::model::current_field::CurrentField;
use crate::model::geodesy::Geodesy;
use crate::model::pose::parse_pose;
use crate::model::trig::MathMode;
use crate::model::{drift, Actuator, ModelVariant, Params};

pub mod env;
mod error;
pub mod obstacles;
mod raw;
pub mod sensors;
pub mod v22;

pub use crate::text::{clip, nearest, MAX_ECHO_CHARS};

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
    /// `LENGTH=` of `NODE_REPORT_LOCAL`, m (default 0); also the AIS length.
    pub platform_length: f64,
    /// Beam, m (default 0: not available), for AIS static data (docs/nmea.md).
    pub platform_beam: f64,
    /// AIS MMSI (`None`: the default of docs/nmea.md).
    pub mmsi: Option<u32>,
    /// AIS ship type 0..=99 (default 0: not available).
    pub ais_ship_type: u8,
    /// The obstacle field and how this vehicle meets it (`[obstacles]`,
    /// docs/obstacles.md); `None`: no obstacles.
    pub obstacles: Option<std::sync::Arc<crate::obstacle::Setup>>,
    /// Warnings for values uSimMarine would reject ("unhandled config"), naming the key.
    pub warnings: Vec<String>,
}

impl AsRef<Params> for VehicleConfig {
    fn as_ref(&self) -> &Params {
        &self.params
    }
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
            platform_beam: 0.0,
            mmsi: None,
            ais_ship_type: 0,
            obstacles: None,
            warnings: Vec::new(),
        }
    }
}

pub use error::{ConfigError, Source};
pub use raw::*;

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

/// The one rule for vehicle names, in a config (`name`), on the command
/// line (`--name`, `usim fleet --fleet-name`) and for spawned copies: 1 to
/// 64 characters, each an ASCII letter, digit, `_`, `-` or `.` ([`NAME_RULE`]).
/// A name is an MQTT topic level and part of the client id: `$`, `+`, `#`,
/// `/`, spaces and control characters would break one or the other (a `$`
/// in a client id stopped the embedded broker, issue 20).
pub fn check_vehicle_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS {
        return Err(format!("{NAME_RULE}; this one has {n} characters"));
    }
    if let Some(c) = name.chars().find(|c| !name_char_ok(*c)) {
        return Err(format!("{NAME_RULE}; found {}", c.escape_default()));
    }
    Ok(())
}

/// Longest vehicle (and fleet) name, characters.
pub const MAX_NAME_CHARS: usize = 64;

/// The vehicle-name rule as stated in every error that refuses a name.
pub const NAME_RULE: &str = "a vehicle name has 1 to 64 characters, each an ASCII letter, digit, \
     `_`, `-` or `.` (it is an MQTT topic level and part of the client id)";

fn name_char_ok(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Smallest and largest time warp (`--time-warp`): outside, the iteration
/// period (whole nanoseconds) or the clock would leave their useful range.
pub const TIME_WARP_RANGE: (f64, f64) = (0.001, 1000.0);
/// Largest start time (`--start-time`, mission `start_time`), s: 1e10 s is
/// the year 2286 as Unix time, where an f64 still resolves 2 µs.
pub const MAX_START_TIME_S: f64 = 1e10;

/// Check a time warp given as `what` (a flag or a key).
pub fn check_time_warp(what: &str, w: f64) -> Result<(), String> {
    let (lo, hi) = TIME_WARP_RANGE;
    if w.is_finite() && (lo..=hi).contains(&w) {
        Ok(())
    } else {
        Err(format!(
            "{what} must be a number from {lo} to {hi}, got {w:?}"
        ))
    }
}

/// Check a start time (clock value at start-up, s) given as `what`.
pub fn check_start_time(what: &str, s: f64) -> Result<(), String> {
    if s.is_finite() && (0.0..=MAX_START_TIME_S).contains(&s) {
        Ok(())
    } else {
        Err(format!(
            "{what} must be a number of seconds from 0 to 1e10 (Unix time up to the year \
             2286), got {s:?}"
        ))
    }
}

/// Largest input file (vehicle config, mission, current field) read, bytes.
/// A real one is a few kilobytes; 32,000 mission posts are ~2 MB.
pub const MAX_INPUT_BYTES: u64 = crate::input_file::MAX_TEXT_BYTES;

/// Read a text file of at most `max` bytes with [`crate::input_file`]'s
/// rules: regular files only (a FIFO or `/dev/zero` is refused without
/// blocking), size capped.
pub fn read_capped(path: &Path, max: u64) -> Result<String, String> {
    crate::input_file::read_text(path, max).map_err(|e| e.to_string())
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
    if let Some(name) = vehicle_name(src, raw)? {
        cfg.name = name;
    }
    let mut p = Params {
        variant: model_variant(src, raw)?,
        ..Params::default()
    };
    let lines = usim_lines(src, raw)?;
    apply_lines(src, &mut p, lines, &mut warnings);
    origin(src, raw, &mut p)?;
    conversions(src, raw, &mut p)?;
    current_field(src, raw, &mut p, &mut warnings)?;
    if let Some(sn) = &raw.sensors {
        sensors::build(src, sn, &cfg.name, &mut p)?;
    }
    live_settings(src, raw, &mut cfg)?;
    parse_ais_keys(src, raw, &mut cfg)?;
    env::build(
        src,
        raw.sea.as_ref(),
        raw.wind.as_ref(),
        raw.current_tide.as_ref(),
        cfg.platform_length,
        cfg.platform_beam,
        &mut p,
    )?;
    if let Some(m) = &raw.mqtt {
        mqtt_settings(src, m, &mut cfg.mqtt)?;
    }
    v22::build(src, raw, &mut p, &mut warnings)?;
    p.actuators = build_actuators(src, raw)?;
    if let Some(ob) = &raw.obstacles {
        cfg.obstacles = Some(obstacles::build(src, ob)?);
    }
    cfg.params = p;
    cfg.warnings = warnings;
    Ok(cfg)
}

/// `name`, checked by the one name rule ([`check_vehicle_name`]).
fn vehicle_name(src: &Source<'_>, raw: &RawVehicle) -> Result<Option<String>, ConfigError> {
    if let Some(n) = &raw.name {
        let name = n.get_ref().trim();
        if let Err(why) = check_vehicle_name(name) {
            return Err(src.error(n.span().start, "name", why));
        }
        return Ok(Some(name.to_string()));
    }
    Ok(None)
}

/// `model = "classic" | "v22"` (default classic).
fn model_variant(src: &Source<'_>, raw: &RawVehicle) -> Result<ModelVariant, ConfigError> {
    if let Some(m) = &raw.model {
        return Ok(match m.get_ref().to_lowercase().as_str() {
            "classic" => ModelVariant::Classic,
            "v22" => ModelVariant::V22,
            other => {
                return Err(src.error(
                    m.span().start,
                    "model",
                    format!("unknown model `{other}`; use \"classic\" or \"v22\""),
                ))
            }
        });
    }
    Ok(ModelVariant::Classic)
}

/// The uSimMarine config lines of `raw`, each with the byte offset it
/// stands at (numbers must be finite).
fn usim_lines(src: &Source<'_>, raw: &RawVehicle) -> Result<Vec<(usize, Line)>, ConfigError> {
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
    Ok(lines)
}

/// Applies the lines in uSimMarine's order (classic: last line first, so
/// the earlier line wins; V22: file order); a refused line is a warning.
fn apply_lines(
    src: &Source<'_>,
    p: &mut Params,
    mut lines: Vec<(usize, Line)>,
    warnings: &mut Vec<String>,
) {
    let v22 = p.variant == ModelVariant::V22;
    lines.sort_by_key(|(o, _)| *o);
    if !v22 {
        lines.reverse(); // classic: last line first, the earlier line wins
    }
    for (offset, line) in &lines {
        if let Err(msg) = apply_line(p, line, v22) {
            let key = match line {
                Line::Num(k, _) | Line::Bool(k, _) | Line::Text(k, _) => *k,
            };
            warnings.push(src.warning(*offset, key, &msg));
        }
    }
}

/// `lat_origin`/`lon_origin`: both or neither, in range.
fn origin(src: &Source<'_>, raw: &RawVehicle, p: &mut Params) -> Result<(), ConfigError> {
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
    Ok(())
}

/// `geodesy` and `math`: how lat/lon and the position step's trigonometry
/// are computed.
fn conversions(src: &Source<'_>, raw: &RawVehicle, p: &mut Params) -> Result<(), ConfigError> {
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
    Ok(())
}

/// `current_field` (a file relative to the config) unless
/// `current_field_active = false`; the field's own warnings are appended.
fn current_field(
    src: &Source<'_>,
    raw: &RawVehicle,
    p: &mut Params,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
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
            p.current_field = Some(Box::new(field));
        }
    }
    Ok(())
}

/// The AIS keys (docs/nmea.md): `platform_beam` (m, ≥ 0), `mmsi` (1 to
/// 999999999) and `ais_ship_type` (0 to 99).
fn parse_ais_keys(
    src: &Source,
    raw: &RawVehicle,
    cfg: &mut VehicleConfig,
) -> Result<(), ConfigError> {
    if let Some(b) = &raw.platform_beam {
        let v = *b.get_ref();
        if !(v.is_finite() && v >= 0.0) {
            return Err(src.error(b.span().start, "platform_beam", "must be a beam >= 0 in m"));
        }
        cfg.platform_beam = v;
    }
    if let Some(m) = &raw.mmsi {
        let v = *m.get_ref();
        if !(1..=999_999_999).contains(&v) {
            return Err(src.error(
                m.span().start,
                "mmsi",
                "must be a 9-digit MMSI, 1 to 999999999",
            ));
        }
        cfg.mmsi = Some(v as u32);
    }
    if let Some(t) = &raw.ais_ship_type {
        let v = *t.get_ref();
        if !(0..=99).contains(&v) {
            return Err(src.error(
                t.span().start,
                "ais_ship_type",
                "must be an AIS ship type 0 to 99",
            ));
        }
        cfg.ais_ship_type = v as u8;
    }
    Ok(())
}

/// Live-run settings: `app_tick`, `node_report_local`, `platform_type`,
/// `platform_length`.
fn live_settings(
    src: &Source<'_>,
    raw: &RawVehicle,
    cfg: &mut VehicleConfig,
) -> Result<(), ConfigError> {
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
    Ok(())
}

/// The `[mqtt]` table.
fn mqtt_settings(src: &Source<'_>, m: &RawMqtt, mqtt: &mut MqttConfig) -> Result<(), ConfigError> {
    if let Some(b) = &m.broker {
        mqtt.broker = b.clone();
    }
    if let Some(r) = &m.topic_root {
        mqtt.topic_root = r.clone();
    }
    mqtt.username = m.username.clone();
    mqtt.password = m.password.clone();
    if let Some(mp) = &m.max_payload {
        let v = *mp.get_ref();
        if !(1..=MAX_MQTT_PAYLOAD as i64).contains(&v) {
            return Err(src.error(
                mp.span().start,
                "mqtt.max_payload",
                format!("must be 1..={MAX_MQTT_PAYLOAD} bytes (the MQTT maximum)"),
            ));
        }
        mqtt.max_payload = v as usize;
    }
    if let Some(pm) = &m.publish {
        mqtt.publish = match pm.get_ref().trim() {
            "all" => PublishMode::All,
            "report" => PublishMode::Report,
            other => {
                return Err(src.error(
                    pm.span().start,
                    "mqtt.publish",
                    format!("`{other}`: \"all\" (every variable) or \"report\" (NODE_REPORT only)"),
                ))
            }
        };
    }
    Ok(())
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
        Line::Num(key, v) => apply_number(p, key, *v, v22),
        Line::Bool(key, b) => apply_bool(p, key, *b, v22),
        Line::Text(key, s) => apply_text(p, key, s, v22),
    }
}

/// A numeric line of the core model (docs/model.md §2.2); V22-only keys go
/// on to [`apply_v22_number`] (a warning on a classic vehicle).
fn apply_number(p: &mut Params, key: &str, v: f64, v22: bool) -> Result<(), String> {
    match key {
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
            let slot = if key == "max_acceleration" {
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
        _ if !v22 => {
            return Err(
                "is a uSimMarineV22 parameter; the classic model ignores it (set model = \"v22\")"
                    .into(),
            )
        }
        _ => return apply_v22_number(p, key, v),
    }
    Ok(())
}

/// A numeric line only uSimMarineV22 reads (docs/v22.md §2).
fn apply_v22_number(p: &mut Params, key: &str, v: f64) -> Result<(), String> {
    match key {
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
    Ok(())
}

/// A true/false line.
fn apply_bool(p: &mut Params, key: &str, b: bool, v22: bool) -> Result<(), String> {
    match key {
        "thrust_reflect" => p.thrust_map.set_reflect(b),
        "sim_pause" => p.sim_pause = b,
        "dual_state" => p.dual_state = b,
        "post_navpos_summary" => {
            if !v22 {
                return Err("is a uSimMarineV22 parameter; the classic model ignores it".into());
            }
            p.post_navpos_summary = b;
        }
        _ => return Err("unhandled".into()),
    }
    Ok(())
}

/// A text line: `prefix`, `start_pos`, `drift_vector`, `thrust_map`, the
/// thrust modes.
fn apply_text(p: &mut Params, key: &str, s: &str, v22: bool) -> Result<(), String> {
    match key {
        "prefix" => {
            if s.trim().is_empty() || s.contains(char::is_whitespace) {
                return Err("must be non-empty without white space; ignored".into());
            }
            p.prefix = s.trim().to_string();
        }
        "start_pos" => {
            p.start_pos_lines += 1;
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
                    "is a uSimMarineV22 parameter; the classic model starts in normal mode".into(),
                )
            }
            "differential" | "true" => p.thrust_mode_diff = true,
            "normal" | "false" => p.thrust_mode_diff = false,
            _ => return Err("expected \"differential\"/true or \"normal\"/false; ignored".into()),
        },
        "thrust_mode_reverse" => match s.trim().to_lowercase().as_str() {
            "reverse" | "true" => p.thrust_mode_reverse = true,
            "normal" | "false" => p.thrust_mode_reverse = false,
            _ => return Err("expected \"reverse\"/true or \"normal\"/false; ignored".into()),
        },
        _ => return Err("unhandled".into()),
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
            "mqtt" | "actuators" | "aliases" | "sea" | "wind" | "current_tide" | "sensors"
            | "obstacles" => "{}",
            "mmsi" | "ais_ship_type" => "1",
            _ => "1.0",
        }
    }

    #[test]
    fn every_known_key_is_accepted_and_documented_in_docs_config_md() {
        let doc = include_str!("../../docs/config.md");
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
                "sensors" => "`[sensors]`".to_string(),
                "obstacles" => "`[obstacles]`".to_string(),
                "sea" | "wind" | "current_tide" => format!("`[{key}]`"),
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
