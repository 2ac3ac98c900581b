//! Messages to a vehicle: the variables of uSimMarine's subscription list
//! (docs/model.md §3) plus `SET`, parsed from their payloads into [`Command`]s.
//!
//! This is the one place that knows variable names and payload syntax on the
//! way in. A payload that does not parse is a [`MessageError`] naming the
//! variable, the payload and why; nothing reaches the model.
//!
//! Payload typing follows MOOS (docs/model.md §3): each variable is read either as
//! a number or as a string. Numbers are decimal text (`60`, `-12.5`, `2e-1`);
//! NaN and infinities are rejected. Where MOOS would read a string message as
//! −1 for a numeric variable, usim reports an error instead (documented in the
//! README): a typo in a script should not flip the drift.
use std::fmt;

/// A message payload: MOOS messages are either doubles or strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A double message.
    Number(f64),
    /// A string message.
    Text(String),
}

impl fmt::Display for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::Number(v) => write!(f, "{v}"),
            Payload::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// How a variable's payload is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A finite number.
    Number,
    /// A string with uSimMarine's own syntax.
    Text,
}

/// One parsed message to the vehicle. Numeric values are finite.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `DESIRED_THRUST`, percent (−100..100 nominal; not clipped, docs/model.md §22).
    DesiredThrust(f64),
    /// `DESIRED_RUDDER`, percent of full rudder (±100; clipped in the model, docs/model.md §8).
    DesiredRudder(f64),
    /// `DESIRED_ELEVATOR`, percent.
    DesiredElevator(f64),
    /// `DESIRED_THRUST_L`, percent (differential mode only).
    DesiredThrustL(f64),
    /// `DESIRED_THRUST_R`, percent (differential mode only).
    DesiredThrustR(f64),
    /// `THRUST_MODE_DIFFERENTIAL` string.
    ThrustModeDifferential(String),
    /// `THRUST_MODE_REVERSE` string.
    ThrustModeReverse(String),
    /// `USM_SIM_PAUSED` string.
    SimPaused(String),
    /// `BUOYANCY_RATE`, m/s (positive floats up).
    BuoyancyRate(f64),
    /// `ROTATE_SPEED`, deg/s.
    RotateSpeed(f64),
    /// `DRIFT_X` / `CURRENT_X`, m/s.
    DriftX(f64),
    /// `DRIFT_Y` / `CURRENT_Y`, m/s.
    DriftY(f64),
    /// `DRIFT_VECTOR "ang,mag"` (degrees, m/s): replace the drift.
    DriftVector(String),
    /// `DRIFT_VECTOR_ADD "ang,mag"`: add to the drift.
    DriftVectorAdd(String),
    /// `DRIFT_VECTOR_MULT k`: scale the drift.
    DriftVectorMult(f64),
    /// `WATER_DEPTH`, m (ignored if negative).
    WaterDepth(f64),
    /// `USM_RESET "x=..,y=..,heading=..,speed=..,depth=.."`.
    Reset(String),
    /// `USM_TURN_RATE`, 0..100.
    TurnRate(f64),
    /// `USM_ENABLED` string bool.
    Enabled(String),
    /// `OBSTACLE_HIT`.
    ObstacleHit(Payload),
    /// `USM_TURN_RADIUS`, m (V22).
    TurnRadius(f64),
    /// `SET`: a timed-command list, JSON (docs/formats.md §4).
    Set(String),
    /// `DESIRED_HEADING`, degrees (V22 embedded PID).
    DesiredHeading(f64),
    /// `DESIRED_SPEED`, m/s (V22 embedded PID).
    DesiredSpeed(f64),
    /// `DESIRED_DEPTH`, m (V22 embedded PID).
    DesiredDepth(f64),
    /// `SPEED_FACTOR`, thrust percent per m/s (V22 embedded PID).
    SpeedFactor(f64),
    /// `MOOS_MANUAL_OVERRIDE` (or `MOOS_MANUAL_OVERIDE`) true/false (V22 PID).
    ManualOverride(String),
    /// `USM_RESET_NAV` (any payload): NAV := ground truth (V22).
    ResetNav(String),
    /// `NAV_X`, m: east override while disabled (V22).
    NavX(f64),
    /// `NAV_Y`, m: north override while disabled (V22).
    NavY(f64),
    /// `NAV_HEADING`, degrees: heading override while disabled; PID input (V22).
    NavHeading(f64),
    /// `WIND_CONDITIONS` `"spd=…,dir=…"` (V22 sailing).
    WindConditions(String),
    /// `BUOYANCY_CONTROL` true: buoyancy handshake (V22).
    BuoyancyControl(String),
    /// `TRIM_CONTROL` true: trim handshake (V22).
    TrimControl(String),
    /// `USM_SENSOR "gps=off,at=120,for=30"`: switch a sensor of the
    /// `[sensors]` suite (docs/model.md, "Sensors").
    Sensor(String),
}

impl Command {
    /// The (modern) MOOS variable name of this command.
    pub fn var(&self) -> &'static str {
        use Command as C;
        match self {
            C::DesiredThrust(_) => "DESIRED_THRUST",
            C::DesiredRudder(_) => "DESIRED_RUDDER",
            C::DesiredElevator(_) => "DESIRED_ELEVATOR",
            C::DesiredThrustL(_) => "DESIRED_THRUST_L",
            C::DesiredThrustR(_) => "DESIRED_THRUST_R",
            C::ThrustModeDifferential(_) => "THRUST_MODE_DIFFERENTIAL",
            C::ThrustModeReverse(_) => "THRUST_MODE_REVERSE",
            C::SimPaused(_) => "USM_SIM_PAUSED",
            C::BuoyancyRate(_) => "BUOYANCY_RATE",
            C::RotateSpeed(_) => "ROTATE_SPEED",
            C::DriftX(_) => "DRIFT_X",
            C::DriftY(_) => "DRIFT_Y",
            C::DriftVector(_) => "DRIFT_VECTOR",
            C::DriftVectorAdd(_) => "DRIFT_VECTOR_ADD",
            C::DriftVectorMult(_) => "DRIFT_VECTOR_MULT",
            C::WaterDepth(_) => "WATER_DEPTH",
            C::Reset(_) => "USM_RESET",
            C::TurnRate(_) => "USM_TURN_RATE",
            C::Enabled(_) => "USM_ENABLED",
            C::ObstacleHit(_) => "OBSTACLE_HIT",
            C::TurnRadius(_) => "USM_TURN_RADIUS",
            C::Set(_) => "SET",
            C::DesiredHeading(_) => "DESIRED_HEADING",
            C::DesiredSpeed(_) => "DESIRED_SPEED",
            C::DesiredDepth(_) => "DESIRED_DEPTH",
            C::SpeedFactor(_) => "SPEED_FACTOR",
            C::ManualOverride(_) => "MOOS_MANUAL_OVERRIDE",
            C::ResetNav(_) => "USM_RESET_NAV",
            C::NavX(_) => "NAV_X",
            C::NavY(_) => "NAV_Y",
            C::NavHeading(_) => "NAV_HEADING",
            C::WindConditions(_) => "WIND_CONDITIONS",
            C::BuoyancyControl(_) => "BUOYANCY_CONTROL",
            C::TrimControl(_) => "TRIM_CONTROL",
            C::Sensor(_) => "USM_SENSOR",
        }
    }

    /// The number a numeric command carries (`None` for string commands).
    pub fn number(&self) -> Option<f64> {
        use Command as C;
        match self {
            C::DesiredThrust(v)
            | C::DesiredRudder(v)
            | C::DesiredElevator(v)
            | C::DesiredThrustL(v)
            | C::DesiredThrustR(v)
            | C::BuoyancyRate(v)
            | C::RotateSpeed(v)
            | C::DriftX(v)
            | C::DriftY(v)
            | C::DriftVectorMult(v)
            | C::WaterDepth(v)
            | C::TurnRate(v)
            | C::TurnRadius(v)
            | C::DesiredHeading(v)
            | C::DesiredSpeed(v)
            | C::DesiredDepth(v)
            | C::SpeedFactor(v)
            | C::NavX(v)
            | C::NavY(v)
            | C::NavHeading(v) => Some(*v),
            C::ObstacleHit(Payload::Number(v)) => Some(*v),
            _ => None,
        }
    }
}

/// The physical bounds a vehicle accepts in a message. A value outside is
/// refused at the message with the reason (and the state is unchanged): a
/// marine vehicle simulated in a local frame never needs more, and within
/// them every formula of the model stays finite (positions up to 10,000 km
/// still convert to latitude and longitude).
pub mod limits {
    /// Largest |x|, |y| of a position (`USM_RESET`), m (10,000 km).
    pub const POSITION_M: f64 = 1e7;
    /// Largest |speed| (`USM_RESET speed=`), m/s.
    pub const SPEED_MPS: f64 = 100.0;
    /// Largest |depth| (`USM_RESET depth=`) and `WATER_DEPTH`, m (the
    /// deepest ocean is ~11,000 m).
    pub const DEPTH_M: f64 = 12_000.0;
    /// Largest |drift| component and magnitude, m/s (also after
    /// `DRIFT_VECTOR_ADD` / `_MULT`).
    pub const DRIFT_MPS: f64 = 100.0;
    /// Largest |value| of a `DESIRED_*` actuator, percent or degrees (the
    /// model clips to ±100 where uSimMarine does).
    pub const ACTUATOR: f64 = 10_000.0;
    /// Largest |`BUOYANCY_RATE`|, m/s.
    pub const BUOYANCY_MPS: f64 = 100.0;
    /// Largest |`ROTATE_SPEED`|, degrees/s.
    pub const ROTATE_DEGS: f64 = 3_600.0;
    /// Largest |`DRIFT_VECTOR_MULT`| factor (the product is bounded too).
    pub const DRIFT_FACTOR: f64 = 1e6;
    /// Largest `USM_TURN_RADIUS`, m.
    pub const TURN_RADIUS_M: f64 = 1e7;
    /// Largest |heading| accepted before wrapping into [0, 360), degrees.
    pub const HEADING_DEG: f64 = 1e9;
    /// Largest |clock time| of a message, s (about 31,700 years: beyond it
    /// microsecond steps are lost).
    pub const TIME_S: f64 = 1e12;
}

/// The bound `(limit, unit)` on |value| of a numeric command, if any.
fn bound_of(cmd: &Command) -> Option<(f64, &'static str)> {
    use limits::*;
    use Command as C;
    Some(match cmd {
        C::DesiredThrust(_)
        | C::DesiredRudder(_)
        | C::DesiredElevator(_)
        | C::DesiredThrustL(_)
        | C::DesiredThrustR(_) => (ACTUATOR, "percent"),
        C::BuoyancyRate(_) => (BUOYANCY_MPS, "m/s"),
        C::RotateSpeed(_) => (ROTATE_DEGS, "degrees/s"),
        C::DriftX(_) | C::DriftY(_) => (DRIFT_MPS, "m/s"),
        C::DriftVectorMult(_) => (DRIFT_FACTOR, ""),
        C::WaterDepth(_) => (DEPTH_M, "m"),
        C::TurnRadius(_) => (TURN_RADIUS_M, "m"),
        _ => return None,
    })
}

/// A number for a message: plain decimals, exponent form when huge or tiny.
pub fn fmt_num(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e9 || v.abs() < 1e-6) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// Check a command against [`limits`] (and finiteness): `Err(reason)` for a
/// value the vehicle refuses. `USM_RESET` and the drift vectors are checked
/// where they are parsed (`model::pose`, `model::drift`).
pub fn check_bounds(cmd: &Command) -> Result<(), String> {
    let Some(v) = cmd.number() else {
        return Ok(());
    };
    if !v.is_finite() {
        return Err("not a finite number".to_string());
    }
    if let Some((lim, unit)) = bound_of(cmd) {
        if v.abs() > lim {
            let unit = if unit.is_empty() {
                String::new()
            } else {
                format!(" {unit}")
            };
            return Err(format!(
                "{} is outside the accepted range ±{lim}{unit} (physical bound)",
                fmt_num(v)
            ));
        }
    }
    Ok(())
}

/// Why a message was dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageError {
    /// The variable (MOOS name) the message was for.
    pub var: String,
    /// The payload as received.
    pub payload: String,
    /// What was wrong, for a person.
    pub reason: String,
}

impl MessageError {
    /// A new error for `var` with `payload`.
    /// The payload and the reason are clipped to a few hundred characters
    /// (a 100 KB payload must not become a 100 KB log line).
    pub fn new(var: &str, payload: impl fmt::Display, reason: impl Into<String>) -> Self {
        let clip = |s: String| crate::text::clip(&s, 200).into_owned();
        MessageError {
            var: clip(var.to_string()),
            payload: clip(payload.to_string()),
            reason: crate::text::clip(&reason.into(), 500).into_owned(),
        }
    }
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "message {} = {} dropped: {}",
            self.var, self.payload, self.reason
        )
    }
}

impl std::error::Error for MessageError {}

/// The vehicle's per-iteration report: one JSON object with the CSV columns
/// (docs/formats.md §3); its `t` is the mission time, s since the vehicle started.
pub const NODE_REPORT: &str = "NODE_REPORT";

/// Every variable a vehicle subscribes to, with how its payload is read.
/// Deprecated classic aliases (`USM_FORCE_*`) map to their modern names.
pub const SUBSCRIPTIONS: &[(&str, Kind, &str)] = &[
    ("DESIRED_THRUST", Kind::Number, "thrust, percent"),
    (
        "DESIRED_RUDDER",
        Kind::Number,
        "rudder, percent (clipped to ±100)",
    ),
    (
        "DESIRED_ELEVATOR",
        Kind::Number,
        "elevator, percent (clipped to ±100)",
    ),
    (
        "DESIRED_THRUST_L",
        Kind::Number,
        "left thrust, percent (differential mode)",
    ),
    (
        "DESIRED_THRUST_R",
        Kind::Number,
        "right thrust, percent (differential mode)",
    ),
    (
        "THRUST_MODE_DIFFERENTIAL",
        Kind::Text,
        "true/false: differential thrust mode",
    ),
    (
        "THRUST_MODE_REVERSE",
        Kind::Text,
        "true/false: thrust reversed",
    ),
    (
        "USM_SIM_PAUSED",
        Kind::Text,
        "true/false: pause the simulation",
    ),
    (
        "BUOYANCY_RATE",
        Kind::Number,
        "buoyancy rate, m/s (positive rises)",
    ),
    (
        "USM_BUOYANCY_RATE",
        Kind::Number,
        "deprecated alias of BUOYANCY_RATE",
    ),
    ("ROTATE_SPEED", Kind::Number, "extra turn rate, deg/s"),
    (
        "USM_FORCE_THETA",
        Kind::Number,
        "deprecated alias of ROTATE_SPEED",
    ),
    ("DRIFT_X", Kind::Number, "drift east, m/s"),
    ("CURRENT_X", Kind::Number, "drift east, m/s"),
    ("USM_FORCE_X", Kind::Number, "deprecated alias of DRIFT_X"),
    ("DRIFT_Y", Kind::Number, "drift north, m/s"),
    ("CURRENT_Y", Kind::Number, "drift north, m/s"),
    ("USM_FORCE_Y", Kind::Number, "deprecated alias of DRIFT_Y"),
    (
        "DRIFT_VECTOR",
        Kind::Text,
        "\"ang,mag\": set drift, degrees and m/s",
    ),
    (
        "USM_FORCE_VECTOR",
        Kind::Text,
        "deprecated alias of DRIFT_VECTOR",
    ),
    (
        "DRIFT_VECTOR_ADD",
        Kind::Text,
        "\"ang,mag\": add to drift, degrees and m/s",
    ),
    (
        "USM_FORCE_VECTOR_ADD",
        Kind::Text,
        "deprecated alias of DRIFT_VECTOR_ADD",
    ),
    ("DRIFT_VECTOR_MULT", Kind::Number, "scale the drift vector"),
    (
        "USM_FORCE_VECTOR_MULT",
        Kind::Number,
        "deprecated alias of DRIFT_VECTOR_MULT",
    ),
    ("WATER_DEPTH", Kind::Number, "water depth, m (for altitude)"),
    (
        "USM_WATER_DEPTH",
        Kind::Number,
        "deprecated alias of WATER_DEPTH",
    ),
    (
        "USM_RESET",
        Kind::Text,
        "\"x=..,y=..,heading=..,speed=..,depth=..\": reset pose",
    ),
    ("USM_TURN_RATE", Kind::Number, "turn rate, 0..100"),
    (
        "USM_ENABLED",
        Kind::Text,
        "true/false: enable the simulation",
    ),
    (
        "OBSTACLE_HIT",
        Kind::Text,
        "true/false: vehicle hit an obstacle",
    ),
    ("USM_TURN_RADIUS", Kind::Number, "V22 turn radius limit, m"),
    (
        "SET",
        Kind::Text,
        "timed-command list (JSON, docs/formats.md §4)",
    ),
    (
        "DESIRED_HEADING",
        Kind::Number,
        "V22 PID: heading setpoint, degrees",
    ),
    (
        "DESIRED_SPEED",
        Kind::Number,
        "V22 PID: speed setpoint, m/s",
    ),
    ("DESIRED_DEPTH", Kind::Number, "V22 PID: depth setpoint, m"),
    (
        "SPEED_FACTOR",
        Kind::Number,
        "V22 PID: thrust percent per m/s (0 = speed PID)",
    ),
    (
        "MOOS_MANUAL_OVERRIDE",
        Kind::Text,
        "V22 PID: true/false manual override",
    ),
    (
        "MOOS_MANUAL_OVERIDE",
        Kind::Text,
        "V22 PID: misspelt alias of MOOS_MANUAL_OVERRIDE",
    ),
    (
        "USM_RESET_NAV",
        Kind::Text,
        "V22: any payload: NAV record := ground truth",
    ),
    (
        "NAV_X",
        Kind::Number,
        "V22: east override while disabled, m",
    ),
    (
        "NAV_Y",
        Kind::Number,
        "V22: north override while disabled, m",
    ),
    (
        "NAV_HEADING",
        Kind::Number,
        "V22: heading override while disabled, degrees",
    ),
    (
        "WIND_CONDITIONS",
        Kind::Text,
        "V22 sailing: \"spd=..,dir=..\" m/s, degrees",
    ),
    (
        "BUOYANCY_CONTROL",
        Kind::Text,
        "V22: true starts the buoyancy handshake",
    ),
    (
        "TRIM_CONTROL",
        Kind::Text,
        "V22: true starts the trim handshake",
    ),
    (
        "USM_SENSOR",
        Kind::Text,
        "sensors: \"gps=off[,at=s][,for=s]\" (gps, heading, speed, depth, all; on/off)",
    ),
];

/// How `var` is read, or `None` if the vehicle does not subscribe to it.
pub fn kind_of(var: &str) -> Option<Kind> {
    SUBSCRIPTIONS
        .iter()
        .find(|(name, _, _)| *name == var)
        .map(|(_, kind, _)| *kind)
}

/// Parse a decimal number as MQTT and missions carry it; NaN and ±inf are rejected.
pub fn parse_number(text: &str) -> Result<f64, String> {
    let t = text.trim();
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err("not a finite number".to_string()),
        Err(_) => Err("not a number".to_string()),
    }
}

/// Parse a message for `var` from MQTT text (always UTF-8 text on the wire).
pub fn parse_text(var: &str, text: &str) -> Result<Command, MessageError> {
    match kind_of(var) {
        None => Err(MessageError::new(var, text, unknown_var_reason(var))),
        Some(Kind::Number) => {
            let v = parse_number(text).map_err(|r| MessageError::new(var, text, r))?;
            build(var, Payload::Number(v))
        }
        Some(Kind::Text) => build(var, Payload::Text(text.to_string())),
    }
}

/// Parse a message for `var` from a typed payload (missions: TOML number or
/// string). A numeric variable accepts a number or a numeric string; a string
/// variable accepts a string, or a number written as its decimal text.
pub fn parse(var: &str, payload: &Payload) -> Result<Command, MessageError> {
    match (kind_of(var), payload) {
        (None, _) => Err(MessageError::new(var, payload, unknown_var_reason(var))),
        (Some(Kind::Number), Payload::Number(v)) => {
            if v.is_finite() {
                build(var, Payload::Number(*v))
            } else {
                Err(MessageError::new(var, payload, "not a finite number"))
            }
        }
        (Some(Kind::Number), Payload::Text(t)) => parse_text(var, t),
        (Some(Kind::Text), Payload::Text(_)) => build(var, payload.clone()),
        (Some(Kind::Text), Payload::Number(v)) => build(var, Payload::Text(format!("{v}"))),
    }
}

fn unknown_var_reason(var: &str) -> String {
    // No suggestion for long names: the edit distance costs O(len) per
    // known name, and a flood of long topics must stay cheap.
    if var.len() > 40 {
        return "unknown variable".to_string();
    }
    let names = SUBSCRIPTIONS.iter().map(|(n, _, _)| *n);
    match crate::text::nearest(var, names) {
        Some(near) => format!("unknown variable (did you mean {near}?)"),
        None => "unknown variable".to_string(),
    }
}

fn build(var: &str, p: Payload) -> Result<Command, MessageError> {
    use Command as C;
    let num = |p: &Payload| match p {
        Payload::Number(v) => *v,
        Payload::Text(_) => f64::NAN,
    };
    let text = |p: Payload| match p {
        Payload::Text(s) => s,
        Payload::Number(v) => format!("{v}"),
    };
    let cmd = match var {
        "DESIRED_THRUST" => C::DesiredThrust(num(&p)),
        "DESIRED_RUDDER" => C::DesiredRudder(num(&p)),
        "DESIRED_ELEVATOR" => C::DesiredElevator(num(&p)),
        "DESIRED_THRUST_L" => C::DesiredThrustL(num(&p)),
        "DESIRED_THRUST_R" => C::DesiredThrustR(num(&p)),
        "THRUST_MODE_DIFFERENTIAL" => C::ThrustModeDifferential(text(p)),
        "THRUST_MODE_REVERSE" => C::ThrustModeReverse(text(p)),
        "USM_SIM_PAUSED" => C::SimPaused(text(p)),
        "BUOYANCY_RATE" | "USM_BUOYANCY_RATE" => C::BuoyancyRate(num(&p)),
        "ROTATE_SPEED" | "USM_FORCE_THETA" => C::RotateSpeed(num(&p)),
        "DRIFT_X" | "CURRENT_X" | "USM_FORCE_X" => C::DriftX(num(&p)),
        "DRIFT_Y" | "CURRENT_Y" | "USM_FORCE_Y" => C::DriftY(num(&p)),
        "DRIFT_VECTOR" | "USM_FORCE_VECTOR" => C::DriftVector(text(p)),
        "DRIFT_VECTOR_ADD" | "USM_FORCE_VECTOR_ADD" => C::DriftVectorAdd(text(p)),
        "DRIFT_VECTOR_MULT" | "USM_FORCE_VECTOR_MULT" => C::DriftVectorMult(num(&p)),
        "WATER_DEPTH" | "USM_WATER_DEPTH" => C::WaterDepth(num(&p)),
        "USM_RESET" => C::Reset(text(p)),
        "USM_TURN_RATE" => C::TurnRate(num(&p)),
        "USM_ENABLED" => C::Enabled(text(p)),
        "OBSTACLE_HIT" => C::ObstacleHit(p),
        "USM_TURN_RADIUS" => C::TurnRadius(num(&p)),
        "SET" => C::Set(text(p)),
        "DESIRED_HEADING" => C::DesiredHeading(num(&p)),
        "DESIRED_SPEED" => C::DesiredSpeed(num(&p)),
        "DESIRED_DEPTH" => C::DesiredDepth(num(&p)),
        "SPEED_FACTOR" => C::SpeedFactor(num(&p)),
        "MOOS_MANUAL_OVERRIDE" | "MOOS_MANUAL_OVERIDE" => C::ManualOverride(text(p)),
        "USM_RESET_NAV" => C::ResetNav(text(p)),
        "NAV_X" => C::NavX(num(&p)),
        "NAV_Y" => C::NavY(num(&p)),
        "NAV_HEADING" => C::NavHeading(num(&p)),
        "WIND_CONDITIONS" => C::WindConditions(text(p)),
        "BUOYANCY_CONTROL" => C::BuoyancyControl(text(p)),
        "TRIM_CONTROL" => C::TrimControl(text(p)),
        "USM_SENSOR" => C::Sensor(text(p)),
        _ => return Err(MessageError::new(var, "", unknown_var_reason(var))),
    };
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_accept_exponents_and_reject_nan() {
        assert_eq!(
            parse_text("DESIRED_THRUST", "2e-1"),
            Ok(Command::DesiredThrust(0.2))
        );
        assert!(parse_text("DESIRED_THRUST", "NaN").is_err());
        assert!(parse_text("DESIRED_THRUST", "inf").is_err());
        assert!(parse_text("DESIRED_THRUST", "sixty").is_err());
        assert!(parse("DESIRED_RUDDER", &Payload::Number(f64::INFINITY)).is_err());
    }

    #[test]
    fn unknown_variable_suggests_nearest() {
        let e = parse_text("DESIRED_THURST", "60").unwrap_err();
        assert!(e.reason.contains("DESIRED_THRUST"), "{e}");
    }

    #[test]
    fn aliases_map_to_modern_commands() {
        assert_eq!(parse_text("CURRENT_X", "0.5"), Ok(Command::DriftX(0.5)));
        assert_eq!(
            parse_text("USM_FORCE_VECTOR", "90,1"),
            Ok(Command::DriftVector("90,1".into()))
        );
    }
}
