//! Where and why a config or mission could not be loaded: [`ConfigError`]
//! (file, line, key, message) and [`Source`], the text that turns TOML spans
//! into line numbers and serde's errors into messages with a suggestion.
use std::fmt;
use std::path::{Path, PathBuf};

use super::raw::{ACTUATOR_KEYS, MQTT_KEYS, STRING_KEYS, VEHICLE_KEYS};
use crate::text::{clip, nearest, MAX_ECHO_CHARS};

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
                None => match nearest(&key, super::MOOS_APP_SETTINGS.iter().copied()) {
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
