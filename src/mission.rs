//! Mission files (docs/formats.md §2): a vehicle plus a time line of messages.
//!
//! Loading checks everything that can be checked before the run: the
//! timing keys, every post's time (finite, ≥ 0), variable (known, with a
//! suggestion for typos) and value type (a number for a numeric variable).
//! Errors name the file, the line and the key.
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::command::{self, Command, Payload};
use crate::config::{self, ConfigError, RawVehicle, Source, VehicleConfig};

/// One scheduled message.
#[derive(Debug, Clone, PartialEq)]
pub struct Post {
    /// Mission time, s after start.
    pub t: f64,
    /// MOOS variable name.
    pub var: String,
    /// The parsed message.
    pub command: Command,
    /// Line of the post's value in the mission file (for messages).
    pub line: usize,
}

/// Step timing of a replay.
#[derive(Debug, Clone, PartialEq)]
pub enum Timing {
    /// Uniform steps: `rel_k = k·dt`, s.
    Uniform(f64),
    /// A repeating list of intervals, s, summed in order.
    Pattern(Vec<f64>),
}

/// A loaded mission.
#[derive(Debug, Clone)]
pub struct Mission {
    /// Mission name (default: the file stem).
    pub name: String,
    /// Free text.
    pub description: String,
    /// The vehicle.
    pub vehicle: VehicleConfig,
    /// Clock at start-up, s.
    pub start_time: f64,
    /// Step timing.
    pub timing: Timing,
    /// Iterations after start-up.
    pub steps: u64,
    /// A CSV row every N iterations (plus row 0 and the last).
    pub output_every: u64,
    /// Posts in file order.
    pub posts: Vec<Post>,
}

impl Mission {
    /// Mission time of iteration `k`, s: `k·dt` (one multiplication), or
    /// the pattern's intervals summed in order.
    pub fn rel_time(&self, k: u64) -> f64 {
        match &self.timing {
            Timing::Uniform(dt) => k as f64 * dt,
            Timing::Pattern(p) => {
                let mut t = 0.0;
                for i in 0..k {
                    t += p[(i % p.len() as u64) as usize];
                }
                t
            }
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMissionFile {
    mission: Spanned<RawMission>,
    vehicle: Option<Spanned<RawVehicle>>,
    post: Option<Vec<Spanned<RawPost>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMission {
    name: Option<String>,
    description: Option<String>,
    vehicle: Option<Spanned<String>>,
    start_time: Option<Spanned<f64>>,
    dt: Option<Spanned<f64>>,
    dt_pattern: Option<Spanned<Vec<f64>>>,
    steps: Option<Spanned<i64>>,
    duration: Option<Spanned<f64>>,
    output_every: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPost {
    t: Spanned<f64>,
    var: Spanned<String>,
    value: Spanned<toml::Value>,
}

const MISSION_KEYS: &[&str] = &[
    "mission",
    "vehicle",
    "post",
    "name",
    "description",
    "start_time",
    "dt",
    "dt_pattern",
    "steps",
    "duration",
    "output_every",
    "t",
    "var",
    "value",
];

/// Load a mission file (and the vehicle file it names).
pub fn load(path: &Path) -> Result<Mission, ConfigError> {
    let text = config::read_text(path, "mission")?;
    parse(path, &text)
}

/// Parse a mission from its text; `path` names it and anchors relative paths.
pub fn parse(path: &Path, text: &str) -> Result<Mission, ConfigError> {
    let src = Source { path, text };
    let mut known: Vec<&str> = MISSION_KEYS.to_vec();
    known.extend_from_slice(config::VEHICLE_KEYS);
    let raw: RawMissionFile = toml::from_str(text).map_err(|e| {
        config::wrong_kind(path, text, true).unwrap_or_else(|| src.toml_error(&e, &known))
    })?;
    let m = raw.mission.get_ref();
    let m_at = raw.mission.span().start;

    let vehicle = match (&m.vehicle, &raw.vehicle) {
        (Some(p), None) => {
            let file = resolve(path, p.get_ref());
            config::load_vehicle(&file).map_err(|mut e| {
                e.message = format!("{} (vehicle of mission {})", e.message, path.display());
                e
            })?
        }
        (None, Some(v)) => config::build_vehicle(&src, v.get_ref())?,
        (Some(p), Some(_)) => return Err(src.error(
            p.span().start,
            "mission.vehicle",
            "give the vehicle either as a file (mission.vehicle) or inline ([vehicle]), not both",
        )),
        (None, None) => return Err(src.error(
            m_at,
            "mission.vehicle",
            "no vehicle: set mission.vehicle = \"path/to/vehicle.toml\" or add a [vehicle] table",
        )),
    };

    let start_time = match &m.start_time {
        Some(s) if !s.get_ref().is_finite() => {
            return Err(src.error(
                s.span().start,
                "start_time",
                "must be a finite number of seconds",
            ))
        }
        Some(s) => *s.get_ref(),
        None => 0.0,
    };
    let timing = match (&m.dt, &m.dt_pattern) {
        (Some(dt), None) => {
            let v = *dt.get_ref();
            if !(v.is_finite() && v > 0.0) {
                return Err(src.error(
                    dt.span().start,
                    "dt",
                    "must be a positive number of seconds",
                ));
            }
            Timing::Uniform(v)
        }
        (None, Some(p)) => {
            let v = p.get_ref();
            if v.is_empty() || v.iter().any(|d| !(d.is_finite() && *d > 0.0)) {
                return Err(src.error(
                    p.span().start,
                    "dt_pattern",
                    "must be a non-empty list of positive intervals in seconds",
                ));
            }
            Timing::Pattern(v.clone())
        }
        (Some(dt), Some(_)) => {
            return Err(src.error(
                dt.span().start,
                "dt",
                "give either dt or dt_pattern, not both",
            ))
        }
        (None, None) => Timing::Uniform(0.1),
    };
    let steps = match (&m.steps, &m.duration) {
        (Some(s), None) => {
            let v = *s.get_ref();
            if v < 0 || v as f64 > MAX_STEPS {
                return Err(src.error(
                    s.span().start,
                    "steps",
                    format!("must be 0..={MAX_STEPS:e}"),
                ));
            }
            v as u64
        }
        (None, Some(d)) => {
            let v = *d.get_ref();
            if !(v.is_finite() && v >= 0.0) {
                return Err(src.error(
                    d.span().start,
                    "duration",
                    "must be a finite number of seconds >= 0",
                ));
            }
            steps_for_duration(&timing, v).ok_or_else(|| {
                src.error(d.span().start, "duration", "too long for the step size")
            })?
        }
        (Some(s), Some(_)) => {
            return Err(src.error(
                s.span().start,
                "steps",
                "give either steps or duration, not both",
            ))
        }
        (None, None) => {
            return Err(src.error(
                m_at,
                "mission.steps",
                "set mission.steps (iterations) or mission.duration (seconds)",
            ))
        }
    };
    let output_every = match &m.output_every {
        Some(o) if *o.get_ref() < 1 => {
            return Err(src.error(o.span().start, "output_every", "must be >= 1"))
        }
        Some(o) => *o.get_ref() as u64,
        None => 1,
    };

    let mut posts = Vec::new();
    // Line numbers by binary search in one newline index: linear loading
    // (counting newlines per post made 32,000 posts take 16 s).
    let newlines = src.newlines();
    for p in raw.post.iter().flatten() {
        let p = p.get_ref();
        let t = *p.t.get_ref();
        if !t.is_finite() || t < 0.0 {
            return Err(src.error(
                p.t.span().start,
                "post.t",
                format!("post time {t} must be a finite number of seconds >= 0 (mission time)"),
            ));
        }
        let var = p.var.get_ref().trim().to_string();
        let payload = match p.value.get_ref() {
            toml::Value::Float(f) => Payload::Number(*f),
            toml::Value::Integer(i) => Payload::Number(*i as f64),
            toml::Value::String(s) => Payload::Text(s.clone()),
            toml::Value::Boolean(b) => Payload::Text(b.to_string()),
            other => {
                return Err(src.error(
                    p.value.span().start,
                    "post.value",
                    format!(
                        "a post value is a number or a string, not a {}",
                        other.type_str()
                    ),
                ))
            }
        };
        let command = command::parse(&var, &payload).map_err(|e| {
            let key = if command::kind_of(&var).is_none() {
                "post.var"
            } else {
                "post.value"
            };
            let at = if key == "post.var" {
                p.var.span().start
            } else {
                p.value.span().start
            };
            src.error(at, key, format!("{var} = {}: {}", e.payload, e.reason))
        })?;
        if let Command::Set(json) = &command {
            crate::interp::shaping::check_set(json).map_err(|e| {
                src.error(
                    p.value.span().start,
                    "post.value",
                    format!("SET {json}: {e}"),
                )
            })?;
        }
        posts.push(Post {
            t,
            var,
            command,
            line: Source::line_in(&newlines, p.value.span().start),
        });
    }

    let name = m.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mission".to_string())
    });
    Ok(Mission {
        name,
        description: m.description.clone().unwrap_or_default(),
        vehicle,
        start_time,
        timing,
        steps,
        output_every,
        posts,
    })
}

fn resolve(mission: &Path, rel: &str) -> PathBuf {
    let p = Path::new(rel);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        mission.parent().unwrap_or_else(|| Path::new(".")).join(p)
    }
}

/// Largest number of iterations a mission may ask for.
const MAX_STEPS: f64 = 1e12;

/// Iterations that cover `duration` seconds, computed without iterating
/// over the steps: whole pattern cycles by division, then at most one
/// cycle walked through (a pattern's time is cycles × cycle sum plus the
/// partial sums of the last cycle).
fn steps_for_duration(timing: &Timing, duration: f64) -> Option<u64> {
    match timing {
        Timing::Uniform(dt) => {
            let n = (duration / dt - 1e-9).ceil();
            (0.0..MAX_STEPS).contains(&n).then_some(n.max(0.0) as u64)
        }
        Timing::Pattern(p) => {
            let cycle: f64 = p.iter().sum();
            let len = p.len() as f64;
            let target = duration - 1e-9;
            if target <= 0.0 {
                return Some(0);
            }
            let whole = (target / cycle).floor();
            if whole.is_nan() || whole * len >= MAX_STEPS {
                return None;
            }
            // Back off one cycle for rounding, then walk at most two cycles.
            let whole = (whole - 1.0).max(0.0);
            let mut t = whole * cycle;
            let mut k = (whole * len) as u64;
            let mut i = 0usize;
            while t < target {
                t += p[i % p.len()];
                i += 1;
                k += 1;
                if i > 4 * p.len() + 4 {
                    return None;
                }
            }
            Some(k)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mission_key_is_documented_in_docs_formats_md() {
        let doc = include_str!("../docs/formats.md");
        for key in MISSION_KEYS {
            assert!(
                doc.contains(&format!("`{key}`")),
                "docs/formats.md lacks `{key}`"
            );
        }
    }

    fn parse_str(text: &str) -> Result<Mission, ConfigError> {
        parse(Path::new("m.toml"), text)
    }

    const HEAD: &str = "[mission]\ndt = 0.1\nsteps = 10\n[vehicle]\nturn_rate = 40\n";

    #[test]
    fn minimal_mission() {
        let m = parse_str(&format!(
            "{HEAD}[[post]]\nt = 1.0\nvar = \"DESIRED_THRUST\"\nvalue = 60\n"
        ))
        .unwrap();
        assert_eq!(m.steps, 10);
        assert_eq!(m.posts[0].command, Command::DesiredThrust(60.0));
        assert_eq!(m.posts[0].line, 9, "the value line");
        assert_eq!(m.rel_time(3), 3.0 * 0.1);
        assert_eq!(m.vehicle.params.turn_rate, 40.0);
    }

    #[test]
    fn negative_time_is_an_error_with_line() {
        let e = parse_str(&format!(
            "{HEAD}[[post]]\nt = -1.0\nvar = \"DESIRED_THRUST\"\nvalue = 60\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(7));
        assert!(e.to_string().contains(">= 0"), "{e}");
    }

    #[test]
    fn unknown_variable_suggests() {
        let e = parse_str(&format!(
            "{HEAD}[[post]]\nt = 1\nvar = \"DESIRED_TRUST\"\nvalue = 60\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(8));
        assert!(e.to_string().contains("DESIRED_THRUST"), "{e}");
    }

    #[test]
    fn non_numeric_value_for_numeric_variable() {
        let e = parse_str(&format!(
            "{HEAD}[[post]]\nt = 1\nvar = \"DESIRED_RUDDER\"\nvalue = \"hard left\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("post.value"));
        assert!(e.to_string().contains("not a number"), "{e}");
        let e = parse_str(&format!(
            "{HEAD}[[post]]\nt = 1\nvar = \"DESIRED_RUDDER\"\nvalue = nan\n"
        ))
        .unwrap_err();
        assert!(e.to_string().contains("finite"), "{e}");
    }

    #[test]
    fn duration_and_pattern() {
        let m =
            parse_str("[mission]\ndt_pattern = [0.1, 0.25]\nduration = 1.0\n[vehicle]\n").unwrap();
        // 0.1, 0.35, 0.45, 0.7, 0.8, 1.05 -> 6 steps
        assert_eq!(m.steps, 6);
        assert!((m.rel_time(2) - 0.35).abs() < 1e-15);
        let m = parse_str("[mission]\ndt = 0.1\nduration = 60\n[vehicle]\n").unwrap();
        assert_eq!(m.steps, 600);
    }

    #[test]
    fn missing_pieces_are_explained() {
        assert!(parse_str("[mission]\ndt = 0.1\n[vehicle]\n")
            .unwrap_err()
            .to_string()
            .contains("steps"));
        assert!(parse_str("[mission]\nsteps = 3\n")
            .unwrap_err()
            .to_string()
            .contains("vehicle"));
        let e = parse_str("[mission]\nsteps = 3\nstpes = 4\n[vehicle]\n").unwrap_err();
        assert!(e.to_string().contains("did you mean `steps`"), "{e}");
    }
}
