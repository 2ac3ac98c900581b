//! The `SET` payload (docs/formats.md §4): a DCM `set` call as JSON,
//! `["DESIRED_RUDDER", "Merge", [[30.0, 12.0], [0.0, "+2.5", 0]]]`.
use std::fmt;

use serde_json::Value;

use super::{seconds_to_us, TimedCommand, UpdateKind, MAX_TIME_US};

/// A parsed `set` call. Its target is resolved (actuator or alias) by
/// [`ActuatorBank::apply`](super::ActuatorBank::apply).
#[derive(Debug, Clone, PartialEq)]
pub struct SetCall {
    /// Actuator or alias name as given (e.g. `"DESIRED_RUDDER"`).
    pub target: String,
    /// How the commands combine with the pending ones.
    pub update: UpdateKind,
    /// The commands in the order given; times are absolute (µs, vehicle
    /// clock), relative times already resolved against the receipt time.
    pub commands: Vec<TimedCommand>,
}

/// Why a `set` call (or an alias table) was refused. Nothing was changed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SetError {
    /// The payload is not JSON; serde_json's reason (with line and column).
    Json(String),
    /// The JSON is not shaped like `[target, update, [[value, time], ...]]`.
    Shape(String),
    /// The update kind is not one of the four.
    UnknownUpdate(String),
    /// The target is neither an actuator nor an alias.
    UnknownActuator {
        /// The name given.
        name: String,
        /// Known actuator and alias names.
        known: Vec<String>,
    },
    /// Item `index` (0-based) of the command list is invalid.
    Command {
        /// Position in the list, 0-based.
        index: usize,
        /// What was wrong with it.
        reason: String,
    },
    /// The receipt time is NaN, infinite or out of range.
    ReceiptTime(f64),
    /// A value or time given directly (not in a list) is invalid.
    Value(String),
    /// An alias definition is invalid.
    Alias(String),
    /// The call would leave more pending commands on an actuator than its
    /// cap allows (a flood of future commands must not grow memory).
    TooMany {
        /// The actuator.
        actuator: String,
        /// Commands that would have been pending.
        pending: usize,
        /// The cap (`[actuators.NAME] max_pending`).
        max: usize,
    },
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::Json(e) => write!(f, "malformed JSON: {e}"),
            SetError::Shape(e) => write!(f, "{e}"),
            SetError::UnknownUpdate(k) => write!(
                f,
                "unknown update kind {k:?} (expected Merge, ClearAll, ClearAfter or ClearBefore)"
            ),
            SetError::UnknownActuator { name, known } => {
                write!(
                    f,
                    "unknown actuator or alias {name:?} (known: {})",
                    known.join(", ")
                )
            }
            SetError::Command { index, reason } => write!(f, "command {index}: {reason}"),
            SetError::ReceiptTime(t) => write!(f, "receipt time {t} s is not a usable time"),
            SetError::Value(e) => write!(f, "{e}"),
            SetError::Alias(e) => write!(f, "alias: {e}"),
            SetError::TooMany {
                actuator,
                pending,
                max,
            } => write!(
                f,
                "{actuator}: refused, {pending} commands would be pending and the limit is {max} \
                 (send ClearAll or ClearAfter first, or raise [actuators.{actuator}] max_pending)"
            ),
        }
    }
}

impl std::error::Error for SetError {}

/// Parses a `SET` payload received at `receipt_time_s` (vehicle clock, s).
///
/// A number time is the vehicle clock in seconds; a string `"+2.5"` is 2.5 s
/// after receipt. An optional third item per command (importance) must be a
/// number and is ignored. Errors name what was wrong.
pub fn parse_set(json: &str, receipt_time_s: f64) -> Result<SetCall, SetError> {
    let root: Value = serde_json::from_str(json).map_err(|e| SetError::Json(e.to_string()))?;
    let Value::Array(items) = root else {
        return Err(SetError::Shape(format!(
            "expected a JSON array [actuator, update, commands], got {}",
            kind_of(&root)
        )));
    };
    if items.len() != 3 {
        return Err(SetError::Shape(format!(
            "expected 3 items [actuator, update, commands], got {}",
            items.len()
        )));
    }
    let Value::String(target) = &items[0] else {
        return Err(SetError::Shape(format!(
            "item 0 (actuator) must be a string, got {}",
            kind_of(&items[0])
        )));
    };
    let Value::String(update) = &items[1] else {
        return Err(SetError::Shape(format!(
            "item 1 (update kind) must be a string, got {}",
            kind_of(&items[1])
        )));
    };
    let update =
        UpdateKind::from_name(update).ok_or_else(|| SetError::UnknownUpdate(update.clone()))?;
    let commands = parse_commands(&items[2], receipt_time_s)?;
    Ok(SetCall {
        target: target.clone(),
        update,
        commands,
    })
}

/// Parses a command list `[[value, time(, importance)], ...]` received at
/// `receipt_time_s` (s); used by [`parse_set`] and the `usim interp` script.
pub fn parse_commands(list: &Value, receipt_time_s: f64) -> Result<Vec<TimedCommand>, SetError> {
    let receipt_us = seconds_to_us(receipt_time_s).ok_or(SetError::ReceiptTime(receipt_time_s))?;
    let Value::Array(items) = list else {
        return Err(SetError::Shape(format!(
            "the command list must be an array of [value, time] items, got {}",
            kind_of(list)
        )));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            parse_command(item, receipt_us).map_err(|reason| SetError::Command { index, reason })
        })
        .collect()
}

fn parse_command(item: &Value, receipt_us: i64) -> Result<TimedCommand, String> {
    let Value::Array(parts) = item else {
        return Err(format!(
            "expected [value, time] or [value, time, importance], got {}",
            kind_of(item)
        ));
    };
    if !(2..=3).contains(&parts.len()) {
        return Err(format!(
            "expected [value, time] or [value, time, importance], got {} items",
            parts.len()
        ));
    }
    let value = match &parts[0] {
        Value::Number(n) => n.as_f64().filter(|v| v.is_finite()),
        other => return Err(format!("value must be a number, got {}", show(other))),
    }
    .ok_or_else(|| format!("value {} is not a finite number", parts[0]))?;
    let time_us = match &parts[1] {
        Value::Number(n) => {
            let t = n.as_f64().unwrap_or(f64::NAN);
            seconds_to_us(t).ok_or_else(|| format!("time {n} s is not finite or out of range"))?
        }
        Value::String(s) => relative_time(s, receipt_us)?,
        other => {
            return Err(format!(
                "time must be a number (s, vehicle clock) or a string like \"+2.5\" (s after receipt), got {}",
                show(other)
            ))
        }
    };
    if let Some(imp) = parts.get(2) {
        if !imp.is_number() {
            return Err(format!("importance must be a number, got {}", show(imp)));
        }
    }
    Ok(TimedCommand { value, time_us })
}

/// `"+2.5"` → receipt + 2.5 s (each rounded to µs first, then added).
fn relative_time(s: &str, receipt_us: i64) -> Result<i64, String> {
    let bad = || {
        format!("time {s:?}: a string time must be \"+SECONDS\" (a finite, non-negative offset after receipt)")
    };
    let Some(rest) = s.trim().strip_prefix('+') else {
        return Err(bad());
    };
    if rest.starts_with(['+', '-']) {
        return Err(bad());
    }
    let offset_s: f64 = rest.trim().parse().map_err(|_| bad())?;
    let offset_us = seconds_to_us(offset_s).ok_or_else(bad)?;
    let t = receipt_us + offset_us; // both within ±2^61: no overflow
    if t.abs() > MAX_TIME_US {
        return Err(format!("time {s:?} after receipt is out of range"));
    }
    Ok(t)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON value for an error message, shortened.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        let head: String = s.chars().take(37).collect();
        format!("{} {head}...", kind_of(v))
    } else {
        format!("{} {s}", kind_of(v))
    }
}
