//! Mission files (docs/formats.md §2): a vehicle plus a time line of messages.
//!
//! A mission may also name several vehicles (docs/fleets.md): `[[vehicle]]`
//! tables or `mission.vehicles = ["a.toml", ...]`, each with its own name;
//! a post then says which vehicle it is for (`vehicle = "name"`).
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
    /// Index of the vehicle it is for ([`Mission::vehicle_at`]; 0 in a
    /// one-vehicle mission).
    pub vehicle: usize,
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
    /// The vehicle (the first one of a multi-vehicle mission).
    pub vehicle: VehicleConfig,
    /// The other vehicles of a multi-vehicle mission, in file order (empty
    /// for one vehicle). Vehicle `i` of [`Mission::vehicle_at`] is
    /// `vehicle` for 0 and `more_vehicles[i - 1]` after.
    pub more_vehicles: Vec<VehicleConfig>,
    /// Encounter ranges between vehicles (`mission.near_miss`,
    /// `mission.collision`), if set.
    pub encounters: Option<EncounterRanges>,
    /// Clock at start-up, s.
    pub start_time: f64,
    /// Step timing.
    pub timing: Timing,
    /// Iterations after start-up.
    pub steps: u64,
    /// A CSV row every N iterations (plus row 0 and the last).
    pub output_every: u64,
    /// Extra CSV columns after the fixed ones (`columns`, docs/formats.md
    /// §3): indices into [`crate::model::Snapshot::EXTRA_NAMES`], in that
    /// list's order; empty (the default) keeps the fixed columns' bytes.
    pub columns: Vec<usize>,
    /// Posts in file order.
    pub posts: Vec<Post>,
}

/// Ranges at which two vehicles' encounter is reported, m (horizontal
/// distance between their reference points). The vehicle config has no
/// length key, so the collision range is given per mission (e.g. the sum of
/// the two half-lengths).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EncounterRanges {
    /// A pair closer than this is a near miss, m.
    pub near_miss: f64,
    /// A pair closer than this is a collision, m (≤ `near_miss`).
    pub collision: f64,
}

impl Mission {
    /// Number of vehicles (1 for a one-vehicle mission).
    pub fn vehicle_count(&self) -> usize {
        1 + self.more_vehicles.len()
    }

    /// Vehicle `i` (0-based, file order).
    pub fn vehicle_at(&self, i: usize) -> &VehicleConfig {
        if i == 0 {
            &self.vehicle
        } else {
            &self.more_vehicles[i - 1]
        }
    }

    /// Vehicle `i`, mutable.
    pub fn vehicle_at_mut(&mut self, i: usize) -> &mut VehicleConfig {
        if i == 0 {
            &mut self.vehicle
        } else {
            &mut self.more_vehicles[i - 1]
        }
    }

    /// Index of the vehicle called `name`.
    pub fn vehicle_index(&self, name: &str) -> Option<usize> {
        (0..self.vehicle_count()).find(|&i| self.vehicle_at(i).name == name)
    }

    /// The one-vehicle mission of vehicle `i`: the same timing, that
    /// vehicle, and only its posts (for replaying a fleet's vehicle alone).
    pub fn only(&self, i: usize) -> Mission {
        Mission {
            name: self.name.clone(),
            description: self.description.clone(),
            vehicle: self.vehicle_at(i).clone(),
            more_vehicles: Vec::new(),
            encounters: None,
            start_time: self.start_time,
            timing: self.timing.clone(),
            steps: self.steps,
            output_every: self.output_every,
            columns: self.columns.clone(),
            posts: self
                .posts
                .iter()
                .filter(|p| p.vehicle == i)
                .map(|p| Post {
                    vehicle: 0,
                    ..p.clone()
                })
                .collect(),
        }
    }

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
struct RawMissionFile<V> {
    mission: Spanned<RawMission>,
    vehicle: Option<V>,
    post: Option<Vec<Spanned<RawPost>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMission {
    name: Option<String>,
    description: Option<String>,
    vehicle: Option<Spanned<String>>,
    vehicles: Option<Spanned<Vec<Spanned<String>>>>,
    near_miss: Option<Spanned<f64>>,
    collision: Option<Spanned<f64>>,
    start_time: Option<Spanned<f64>>,
    dt: Option<Spanned<f64>>,
    dt_pattern: Option<Spanned<Vec<f64>>>,
    steps: Option<Spanned<i64>>,
    duration: Option<Spanned<f64>>,
    output_every: Option<Spanned<i64>>,
    columns: Option<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPost {
    vehicle: Option<Spanned<String>>,
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
    "columns",
    "vehicles",
    "near_miss",
    "collision",
    "t",
    "var",
    "value",
];

/// Load a mission file (and the vehicle file it names).
pub fn load(path: &Path) -> Result<Mission, ConfigError> {
    let text = config::read_text(path, "mission")?;
    parse(path, &text)
}

/// Parse a mission from its text; `path` names it and anchors relative
/// paths. One way through: the raw tables, the vehicles (each built once),
/// the timing, then the posts.
pub fn parse(path: &Path, text: &str) -> Result<Mission, ConfigError> {
    let src = Source { path, text };
    let (mission_raw, raw_posts, inline) = read_raw(&src)?;
    let m = mission_raw.get_ref();
    let m_at = mission_raw.span().start;
    let vehicles = mission_vehicles(&src, m, m_at, inline)?;
    check_unique_names(&src, m, &vehicles)?;
    let names: Vec<String> = vehicles.iter().map(|(v, _)| v.name.clone()).collect();
    let mut vehicles = vehicles.into_iter().map(|(v, _)| v);
    let Some(vehicle) = vehicles.next() else {
        return Err(src.error(m_at, "mission.vehicle", "no vehicle"));
    };
    let more_vehicles: Vec<VehicleConfig> = vehicles.collect();
    let encounters = encounter_ranges(&src, m)?;
    let start_time = start_time(&src, m)?;
    let timing = timing(&src, m)?;
    let steps = steps(&src, m, m_at, &timing)?;
    let output_every = output_every(&src, m)?;
    let columns = columns(&src, m)?;
    // Line numbers by binary search in one newline index: linear loading
    // (counting newlines per post made 32,000 posts take 16 s).
    let newlines = src.newlines();
    // Vehicle by name (names are unique by now): linear in the posts.
    let index_of: std::collections::HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let posts = raw_posts
        .iter()
        .flatten()
        .map(|p| post(&src, p.get_ref(), &names, &index_of, &newlines))
        .collect::<Result<Vec<_>, _>>()?;
    let name = m.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "mission".to_string())
    });
    Ok(Mission {
        name,
        description: m.description.clone().unwrap_or_default(),
        vehicle,
        more_vehicles,
        encounters,
        start_time,
        timing,
        steps,
        output_every,
        columns,
        posts,
    })
}

/// The mission file's tables as written: `[mission]`, the posts, and the
/// inline vehicle tables if any.
type RawParts = (
    Spanned<RawMission>,
    Option<Vec<Spanned<RawPost>>>,
    Option<Vec<Spanned<RawVehicle>>>,
);

/// Reads the TOML (a vehicle config given as a mission is named as such).
fn read_raw(src: &Source<'_>) -> Result<RawParts, ConfigError> {
    let (path, text) = (src.path, src.text);
    let mut known: Vec<&str> = MISSION_KEYS.to_vec();
    known.extend_from_slice(config::VEHICLE_KEYS);
    let de_error = |e: toml::de::Error| {
        config::wrong_kind(path, text, true).unwrap_or_else(|| src.toml_error(&e, &known))
    };
    // `[vehicle]` (one table) or `[[vehicle]]` (an array of tables): serde
    // needs to know which before it reads the spans, so look first.
    Ok(if has_vehicle_array(text) {
        let raw: RawMissionFile<Vec<Spanned<RawVehicle>>> =
            toml::from_str(text).map_err(de_error)?;
        (raw.mission, raw.post, raw.vehicle)
    } else {
        let raw: RawMissionFile<Spanned<RawVehicle>> = toml::from_str(text).map_err(de_error)?;
        (raw.mission, raw.post, raw.vehicle.map(|v| vec![v]))
    })
}

/// The mission's vehicles, each with the offset of its name or entry:
/// `mission.vehicle` (a file), `mission.vehicles` (files) or inline tables.
fn mission_vehicles(
    src: &Source<'_>,
    m: &RawMission,
    m_at: usize,
    inline: Option<Vec<Spanned<RawVehicle>>>,
) -> Result<Vec<(VehicleConfig, usize)>, ConfigError> {
    let path = src.path;
    let both = "give the vehicles one way: mission.vehicle (a file), mission.vehicles (files), [vehicle] or [[vehicle]] tables";
    // (vehicle, offset of its name or entry for messages)
    let mut vehicles: Vec<(VehicleConfig, usize)> = Vec::new();
    match (&m.vehicle, &m.vehicles, &inline) {
        (Some(p), None, None) => {
            let file = resolve(path, p.get_ref());
            let v = config::load_vehicle(&file).map_err(|mut e| {
                e.message = format!("{} (vehicle of mission {})", e.message, path.display());
                e
            })?;
            vehicles.push((v, p.span().start));
        }
        (None, Some(list), None) => {
            if list.get_ref().is_empty() {
                return Err(src.error(
                    list.span().start,
                    "mission.vehicles",
                    "an empty list: name at least one vehicle file",
                ));
            }
            for p in list.get_ref() {
                let file = resolve(path, p.get_ref());
                let v = config::load_vehicle(&file).map_err(|mut e| {
                    e.message = format!("{} (vehicle of mission {})", e.message, path.display());
                    e
                })?;
                vehicles.push((v, p.span().start));
            }
        }
        (None, None, Some(list)) => {
            if list.is_empty() {
                return Err(src.error(m_at, "vehicle", "no [[vehicle]] table"));
            }
            for v in list {
                let at = v
                    .get_ref()
                    .name
                    .as_ref()
                    .map_or(v.span().start, |n| n.span().start);
                vehicles.push((config::build_vehicle(src, v.get_ref())?, at));
            }
        }
        (None, None, None) => return Err(src.error(
            m_at,
            "mission.vehicle",
            "no vehicle: set mission.vehicle = \"path/to/vehicle.toml\" or add a [vehicle] table",
        )),
        (Some(p), _, _) => return Err(src.error(p.span().start, "mission.vehicle", both)),
        (None, Some(p), Some(_)) => {
            return Err(src.error(p.span().start, "mission.vehicles", both))
        }
    }
    Ok(vehicles)
}

/// Two vehicles of one mission may not share a name.
fn check_unique_names(
    src: &Source<'_>,
    m: &RawMission,
    vehicles: &[(VehicleConfig, usize)],
) -> Result<(), ConfigError> {
    // Names seen so far, by name: linear loading for 100,000 vehicles (a
    // scan of the earlier vehicles per vehicle was quadratic).
    let mut first_of = std::collections::HashMap::with_capacity(vehicles.len());
    for (v, at) in vehicles.iter() {
        let first = match first_of.entry(v.name.as_str()) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(*at);
                None
            }
            std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
        };
        if let Some(first) = first {
            let key = if m.vehicles.is_some() {
                "mission.vehicles"
            } else {
                "vehicle.name"
            };
            return Err(src.error(
                *at,
                key,
                format!(
                    "two vehicles are called `{}` (the first at line {}): give each vehicle its own name",
                    v.name,
                    src.line_of(first)
                ),
            ));
        }
    }
    Ok(())
}

/// `near_miss`/`collision`, m: the encounter ranges, if any.
fn encounter_ranges(
    src: &Source<'_>,
    m: &RawMission,
) -> Result<Option<EncounterRanges>, ConfigError> {
    let positive = |v: &Spanned<f64>, key: &str| -> Result<f64, ConfigError> {
        let x = *v.get_ref();
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(src.error(v.span().start, key, "must be a positive distance in metres"))
        }
    };
    Ok(match (&m.near_miss, &m.collision) {
        (None, None) => None,
        (Some(n), None) => Some(EncounterRanges {
            near_miss: positive(n, "near_miss")?,
            collision: 0.0,
        }),
        (None, Some(c)) => {
            let c = positive(c, "collision")?;
            Some(EncounterRanges {
                near_miss: c,
                collision: c,
            })
        }
        (Some(n), Some(c)) => {
            let (nv, cv) = (positive(n, "near_miss")?, positive(c, "collision")?);
            if cv > nv {
                return Err(src.error(
                    c.span().start,
                    "collision",
                    format!("the collision range ({cv} m) must not exceed near_miss ({nv} m)"),
                ));
            }
            Some(EncounterRanges {
                near_miss: nv,
                collision: cv,
            })
        }
    })
}

/// `start_time`, s: the clock at start-up (the same range as `--start-time`).
fn start_time(src: &Source<'_>, m: &RawMission) -> Result<f64, ConfigError> {
    Ok(match &m.start_time {
        Some(s) => {
            let v = *s.get_ref();
            if let Err(why) = crate::config::check_start_time("start_time", v) {
                return Err(src.error(s.span().start, "start_time", why));
            }
            v
        }
        None => 0.0,
    })
}

/// `dt` or `dt_pattern`, s (default dt 0.1).
fn timing(src: &Source<'_>, m: &RawMission) -> Result<Timing, ConfigError> {
    Ok(match (&m.dt, &m.dt_pattern) {
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
    })
}

/// `steps` or `duration` (s) as a number of iterations.
fn steps(
    src: &Source<'_>,
    m: &RawMission,
    m_at: usize,
    timing: &Timing,
) -> Result<u64, ConfigError> {
    Ok(match (&m.steps, &m.duration) {
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
            steps_for_duration(timing, v).ok_or_else(|| {
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
    })
}

/// `output_every`: a CSV row every N iterations (default 1).
fn output_every(src: &Source<'_>, m: &RawMission) -> Result<u64, ConfigError> {
    Ok(match &m.output_every {
        Some(o) if *o.get_ref() < 1 => {
            return Err(src.error(o.span().start, "output_every", "must be >= 1"))
        }
        Some(o) => *o.get_ref() as u64,
        None => 1,
    })
}

/// `columns`: extra CSV columns by name, any order, each at most once;
/// returned in [`Snapshot::EXTRA_NAMES`]'s order (the order they are
/// written). An unknown name is an error with the known ones.
///
/// [`Snapshot::EXTRA_NAMES`]: crate::model::Snapshot::EXTRA_NAMES
fn columns(src: &Source<'_>, m: &RawMission) -> Result<Vec<usize>, ConfigError> {
    let known = crate::model::Snapshot::EXTRA_NAMES;
    let mut out = Vec::new();
    for name in m.columns.iter().flat_map(|c| c.get_ref()) {
        let at = name.span().start;
        let Some(i) = known.iter().position(|k| k == name.get_ref()) else {
            let hint = crate::text::nearest(name.get_ref(), known.iter().copied())
                .map(|n| format!("did you mean `{n}`? "))
                .unwrap_or_default();
            let shown = crate::text::escape_control(name.get_ref());
            return Err(src.error(
                at,
                "columns",
                format!(
                    "unknown column {shown:?}; {hint}known: {}",
                    known.join(", ")
                ),
            ));
        };
        if out.contains(&i) {
            return Err(src.error(
                at,
                "columns",
                format!("{shown:?} given twice", shown = known[i]),
            ));
        }
        out.push(i);
    }
    out.sort_unstable();
    Ok(out)
}

/// One `[[post]]`: its vehicle, time, variable and value, parsed as the
/// live runtime parses a message (errors name the line and key).
fn post(
    src: &Source<'_>,
    p: &RawPost,
    names: &[String],
    index_of: &std::collections::HashMap<&str, usize>,
    newlines: &[usize],
) -> Result<Post, ConfigError> {
    let vehicle_index = match &p.vehicle {
        Some(v) => index_of.get(v.get_ref().trim()).copied().ok_or_else(|| {
            src.error(
                v.span().start,
                "post.vehicle",
                format!(
                    "no vehicle called `{}` in this mission (vehicles: {})",
                    v.get_ref(),
                    names.join(", ")
                ),
            )
        })?,
        None if names.len() > 1 => {
            return Err(src.error(
                p.t.span().start,
                "post.vehicle",
                format!(
                    "this mission has {} vehicles ({}): say which one the post is for with vehicle = \"name\"",
                    names.len(),
                    names.join(", ")
                ),
            ))
        }
        None => 0,
    };
    let t = *p.t.get_ref();
    if !t.is_finite() || t < 0.0 {
        return Err(src.error(
            p.t.span().start,
            "post.t",
            format!("post time {t} must be a finite number of seconds >= 0 (mission time)"),
        ));
    }
    let var = p.var.get_ref().trim().to_string();
    let payload = post_payload(src, p)?;
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
    Ok(Post {
        t,
        var,
        command,
        line: Source::line_in(newlines, p.value.span().start),
        vehicle: vehicle_index,
    })
}

/// A post's TOML value as a message payload (a number or a string).
fn post_payload(src: &Source<'_>, p: &RawPost) -> Result<Payload, ConfigError> {
    Ok(match p.value.get_ref() {
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
    })
}

/// Whether the text has a `[[vehicle]]` array-of-tables header.
fn has_vehicle_array(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("[[") && {
            let inner: String = l.chars().filter(|c| !c.is_whitespace()).collect();
            inner.starts_with("[[vehicle]]")
        }
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
