//! Monte Carlo sweeps (docs/sweeps.md): a base mission, seeded random
//! variables (uniform, normal, a start position in a polygon) and
//! parameter grids; every run is a pure function of `(seed, run index)`,
//! so a sweep's summary is byte-identical for the same seed and its shards
//! (`--shard I/N`) merge into exactly the unsharded summary.
//!
//! [`parse`] reads a sweep file's text (pure, no files: a fuzz target);
//! [`load`] also loads the base mission and checks every target against
//! it. Errors name the file, the line and the key.
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::command::{self, Payload};
use crate::config::{self, ConfigError, Source};
use crate::mission::Mission;
use crate::model::Vehicle;

/// A sweep file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweepFile {
    sweep: Spanned<RawSweep>,
    var: Option<Vec<Spanned<RawVar>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    mission: Spanned<String>,
    seed: Option<Spanned<i64>>,
    runs: Option<Spanned<i64>>,
    reach: Option<Spanned<RawReach>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReach {
    vehicle: Option<Spanned<String>>,
    x: Spanned<f64>,
    y: Spanned<f64>,
    radius: Spanned<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVar {
    name: Spanned<String>,
    kind: Spanned<String>,
    target: Spanned<String>,
    min: Option<Spanned<f64>>,
    max: Option<Spanned<f64>>,
    mean: Option<Spanned<f64>>,
    std: Option<Spanned<f64>>,
    values: Option<Spanned<Vec<f64>>>,
    points: Option<Spanned<Vec<[f64; 2]>>>,
}

const SWEEP_KEYS: &[&str] = &[
    "sweep", "var", "mission", "seed", "runs", "reach", "vehicle", "x", "y", "radius", "name",
    "kind", "target", "min", "max", "mean", "std", "values", "points",
];

/// How a variable gets its value in each run.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    /// Uniform in `[min, max)`.
    Uniform {
        /// Lower bound.
        min: f64,
        /// Upper bound (> min).
        max: f64,
    },
    /// Normal with this mean and standard deviation (> 0).
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std: f64,
    },
    /// A parameter grid: every run of the sweep is repeated for each value.
    Grid(Vec<f64>),
    /// A uniform random point inside a simple polygon (x, y), m.
    Polygon(Vec<[f64; 2]>),
}

/// What a variable sets in the mission.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The time of post `n` (0-based, file order), s.
    PostTime(usize),
    /// The numeric value of post `n` (0-based).
    PostValue(usize),
    /// A vehicle's start position (x, y), m (polygon variables).
    Start(String),
    /// A vehicle's numeric field: `start_x`, `start_y`, `start_heading`,
    /// `start_speed`, `start_depth`, `turn_rate`, `max_acceleration`,
    /// `max_deceleration`, `drift_x`, `drift_y`; with the vehicle's
    /// `[sea]`, `[wind]`, `[current_tide]` or `[sensors]` table on, that
    /// table's `sea_*`, `wind_*`, `current_tide_*` or `sensors_*` fields
    /// (docs/sweeps.md, docs/model.md §24).
    Field(String, String),
}

const FIELDS: &[&str] = &[
    "start_x",
    "start_y",
    "start_heading",
    "start_speed",
    "start_depth",
    "turn_rate",
    "max_acceleration",
    "max_deceleration",
    "drift_x",
    "drift_y",
    "sea_hs",
    "sea_tp",
    "sea_gamma",
    "sea_direction",
    "sea_spreading",
    "sea_seed",
    "wind_speed",
    "wind_direction",
    "wind_gusts",
    "wind_surface_drag",
    "wind_length_scale",
    "wind_seed",
    "current_tide_mean",
    "current_tide_amplitude",
    "current_tide_period",
    "current_tide_phase",
    "sensors_seed",
    "sensors_gps_sigma",
    "sensors_gps_bias_sigma",
    "sensors_gps_outlier_prob",
    "sensors_gps_outlier_m",
    "sensors_gps_dropout_at",
    "sensors_gps_dropout_for",
    "sensors_heading_sigma",
    "sensors_heading_bias",
    "sensors_speed_sigma",
    "sensors_depth_sigma",
    "sensors_latency",
];

/// The vehicle table a field lives in (`sea`, `wind`, `current_tide`,
/// `sensors`), `None` for the vehicle's own numbers.
fn field_table(field: &str) -> Option<&'static str> {
    ["sea", "wind", "current_tide", "sensors"]
        .into_iter()
        .find(|t| field.strip_prefix(t).is_some_and(|r| r.starts_with('_')))
}

/// A drawn seed: the value's whole part, |x| (0 for a non-finite draw).
fn whole_seed(x: f64) -> u64 {
    if x.is_finite() {
        x.abs().trunc().min(9.0e15) as u64
    } else {
        0
    }
}

/// A drawn value clamped into a table's range `[lo, hi]` (NaN: `lo`).
fn clamp_drawn(x: f64, lo: f64, hi: f64) -> f64 {
    if x.is_nan() {
        lo
    } else {
        x.clamp(lo, hi)
    }
}

/// The drawn values of one vehicle's table fields, in variable order:
/// `(field without its table prefix, value)`.
type Drawn<'a> = [(&'a str, &'a str, f64)];

/// Apply the drawn table fields (`sea_*`, `wind_*`, `current_tide_*`,
/// `sensors_*`; docs/sweeps.md) of one vehicle to its parameters `p`
/// together, so its sea and wind are rebuilt once and a dropout's `at` and
/// `for` make one fault. A value outside the table's range is clamped into
/// it (the ranges of docs/config.md). A table not drawn is left as it is.
fn apply_table_fields(p: &mut crate::model::Params, drawn: &Drawn<'_>) {
    let of = |table: &str| -> Vec<(&str, f64)> {
        drawn
            .iter()
            .filter(|d| d.0 == table)
            .map(|d| (d.1, d.2))
            .collect()
    };
    if let Some(env) = p.env.as_deref_mut() {
        apply_sea(env, &of("sea"));
        apply_wind(env, &of("wind"));
        if let Some(t) = env.tide.as_mut() {
            for (f, x) in of("current_tide") {
                match f {
                    "mean" => t.mean = clamp_drawn(x, -10.0, 10.0),
                    "amplitude" => t.amplitude = clamp_drawn(x, -10.0, 10.0),
                    "period" => t.period_s = clamp_drawn(x, 1.0, 1e9),
                    "phase" => t.phase_deg = clamp_drawn(x, -360.0, 360.0),
                    _ => {}
                }
            }
        }
    }
    apply_sensors(p, &of("sensors"));
}

/// Rebuild the sea from drawn `hs`, `tp`, `gamma` (a JONSWAP sea; γ = 1 is
/// exactly Pierson–Moskowitz), `direction`, `spreading`, `seed`; `hs` is
/// also held to the steepness limit Hs ≤ λp/10.
fn apply_sea(env: &mut crate::model::env::Environment, drawn: &[(&str, f64)]) {
    use crate::model::env::{waves, Spectrum, WaveField};
    let Some(sea) = env.sea.as_ref().filter(|_| !drawn.is_empty()) else {
        return;
    };
    let mut st = *sea.state();
    for &(f, x) in drawn {
        match f {
            "hs" => st.hs_m = clamp_drawn(x, 1e-3, 30.0),
            "tp" => st.tp_s = clamp_drawn(x, 1.0, 40.0),
            "gamma" => {
                st.spectrum = Spectrum::Jonswap {
                    gamma: clamp_drawn(x, 1.0, 20.0),
                }
            }
            "direction" => st.direction_deg = clamp_drawn(x, -360.0, 360.0),
            "spreading" => st.spreading_deg = clamp_drawn(x, 0.0, 80.0),
            "seed" => st.seed = whole_seed(x),
            _ => {}
        }
    }
    let lambda_p = waves::G * st.tp_s * st.tp_s / std::f64::consts::TAU;
    st.hs_m = st.hs_m.min(waves::MAX_STEEPNESS * lambda_p);
    if let Ok(f) = WaveField::new(&st) {
        env.sea = Some(std::sync::Arc::new(f));
    }
}

/// Rebuild the wind from drawn `speed`, `direction`, `gusts` (on when the
/// value is at least 0.5), `surface_drag`, `length_scale`, `seed`.
fn apply_wind(env: &mut crate::model::env::Environment, drawn: &[(&str, f64)]) {
    use crate::model::env::{wind::MAX_SPEED_MPS, Wind};
    let Some(wind) = env.wind.as_ref().filter(|_| !drawn.is_empty()) else {
        return;
    };
    let mut ws = wind.settings;
    for &(f, x) in drawn {
        match f {
            "speed" => ws.speed_mps = clamp_drawn(x, 0.0, MAX_SPEED_MPS),
            "direction" => ws.direction_deg = clamp_drawn(x, -360.0, 360.0),
            "gusts" => ws.gusts = x >= 0.5,
            "surface_drag" => ws.surface_drag = clamp_drawn(x, 0.0, 0.05),
            "length_scale" => ws.length_scale_m = clamp_drawn(x, 1.0, 10_000.0),
            "seed" => ws.seed = whole_seed(x),
            _ => {}
        }
    }
    if let Ok(w) = Wind::new(&ws) {
        env.wind = Some(std::sync::Arc::new(w));
    }
}

/// Remake the vehicle's sensor suite from its settings with the drawn
/// `sensors_*` values; `gps_dropout_at` / `gps_dropout_for` add one GPS
/// failure (`gps=off,at=A,for=F`: A defaults to 0 s, without F the GPS
/// stays off).
fn apply_sensors(p: &mut crate::model::Params, drawn: &[(&str, f64)]) {
    use crate::sensor::{fault, FaultEvent, Suite, Which, MAX_LATENCY_S, MAX_POS_M};
    let Some(suite) = p
        .sensors
        .as_ref()
        .and_then(|b| b.0.as_any().downcast_ref::<Suite>())
        .filter(|_| !drawn.is_empty())
    else {
        return;
    };
    let mut s = suite.settings().clone();
    let (mut at, mut dur) = (None, None);
    for &(f, x) in drawn {
        match f {
            "seed" => s.seed = whole_seed(x),
            "gps_sigma" => s.gps_sigma = clamp_drawn(x, 0.0, MAX_POS_M),
            "gps_bias_sigma" => s.gps_bias_sigma = clamp_drawn(x, 0.0, MAX_POS_M),
            "gps_outlier_prob" => s.gps_outlier_prob = clamp_drawn(x, 0.0, 1.0),
            "gps_outlier_m" => s.gps_outlier_m = clamp_drawn(x, 0.0, MAX_POS_M),
            "gps_dropout_at" => at = Some(clamp_drawn(x, 0.0, fault::MAX_TIME_S)),
            "gps_dropout_for" => dur = Some(clamp_drawn(x, 0.0, fault::MAX_TIME_S)),
            "heading_sigma" => s.heading_sigma = clamp_drawn(x, 0.0, 180.0),
            "heading_bias" => s.heading_bias = clamp_drawn(x, -180.0, 180.0),
            "speed_sigma" => s.speed_sigma = clamp_drawn(x, 0.0, 100.0),
            "depth_sigma" => s.depth_sigma = clamp_drawn(x, 0.0, 1000.0),
            "latency" => s.latency = clamp_drawn(x, 0.0, MAX_LATENCY_S),
            _ => {}
        }
    }
    if at.is_some() || dur.is_some() {
        s.faults.push(FaultEvent {
            which: Some(Which::Gps),
            on: false,
            at: Some(at.unwrap_or(0.0)),
            duration: dur,
        });
    }
    p.sensors = Some(suite.with_settings(s).boxed());
}

/// One sweep variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    /// Column name in the summary.
    pub name: String,
    /// How it is drawn.
    pub dist: Dist,
    /// What it sets.
    pub target: Target,
    /// Line of its `target` key (for errors found against the mission).
    pub line: usize,
}

/// "Time to reach a point": the first mission time a vehicle is within
/// `radius` (m) of `(x, y)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reach {
    /// Vehicle name (None: the mission's first vehicle).
    pub vehicle: Option<String>,
    /// Point east, m.
    pub x: f64,
    /// Point north, m.
    pub y: f64,
    /// Radius, m.
    pub radius: f64,
    /// Line of the table.
    pub line: usize,
}

/// A parsed sweep file.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    /// The base mission's path as written (relative to the sweep file).
    pub mission: String,
    /// Line of `sweep.mission`.
    pub mission_line: usize,
    /// Seed of every random draw.
    pub seed: u64,
    /// Random runs per grid point.
    pub runs: u64,
    /// Variables in file order.
    pub vars: Vec<Var>,
    /// Optional "time to reach" metric.
    pub reach: Option<Reach>,
}

impl SweepSpec {
    /// Number of grid points (product of the grid variables' sizes).
    pub fn grid_points(&self) -> u64 {
        self.vars
            .iter()
            .map(|v| match &v.dist {
                Dist::Grid(vals) => vals.len() as u64,
                _ => 1,
            })
            .fold(1u64, |a, b| a.saturating_mul(b))
    }

    /// Total runs: grid points × random runs.
    pub fn total_runs(&self) -> u64 {
        self.grid_points().saturating_mul(self.runs)
    }
}

/// Largest magnitude of a value a sweep variable may draw (bounds of a
/// uniform range, grid values, polygon coordinates, mean ± 8.6 standard
/// deviations of a normal): 10^12. Far beyond any position (m), time (s)
/// or rate a mission uses, and small enough that every difference, sum and
/// distance the runs compute from drawn values stays finite.
pub const MAX_VALUE: f64 = 1e12;

/// Box–Muller draws from 53-bit uniforms lie within this many standard
/// deviations of the mean (√(−2 ln 2⁻⁵³) ≈ 8.57).
const NORMAL_REACH: f64 = 8.6;

fn out_of_range_rule() -> String {
    format!("sweep values must lie within ±{MAX_VALUE:e} so every draw and everything derived from it (differences, distances) stays finite")
}

fn out_of_range(x: f64) -> String {
    format!("{x:e} is out of range: {}", out_of_range_rule())
}

/// The largest sweep: 10^9 runs.
pub const MAX_RUNS: u64 = 1_000_000_000;

/// Parse a sweep file's text (`path` only names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<SweepSpec, ConfigError> {
    let src = Source { path, text };
    let raw: RawSweepFile = toml::from_str(text).map_err(|e| src.toml_error(&e, SWEEP_KEYS))?;
    let s = raw.sweep.get_ref();
    let seed = match &s.seed {
        Some(v) if *v.get_ref() < 0 => {
            return Err(src.error(v.span().start, "sweep.seed", "must be >= 0"))
        }
        Some(v) => *v.get_ref() as u64,
        None => 0,
    };
    let runs = match &s.runs {
        Some(v) if *v.get_ref() < 1 || *v.get_ref() as u64 > MAX_RUNS => {
            return Err(src.error(
                v.span().start,
                "sweep.runs",
                format!("must be 1..={MAX_RUNS}"),
            ))
        }
        Some(v) => *v.get_ref() as u64,
        None => 1,
    };
    let finite = |v: &Spanned<f64>, key: &str| -> Result<f64, ConfigError> {
        let x = *v.get_ref();
        if x.is_finite() {
            Ok(x)
        } else {
            Err(src.error(v.span().start, key, "must be a finite number"))
        }
    };
    let reach = match &s.reach {
        Some(r) => {
            let g = r.get_ref();
            let radius = finite(&g.radius, "sweep.reach.radius")?;
            if radius <= 0.0 {
                return Err(src.error(
                    g.radius.span().start,
                    "sweep.reach.radius",
                    "must be a positive distance in metres",
                ));
            }
            Some(Reach {
                vehicle: g.vehicle.as_ref().map(|v| v.get_ref().trim().to_string()),
                x: finite(&g.x, "sweep.reach.x")?,
                y: finite(&g.y, "sweep.reach.y")?,
                radius,
                line: src.line_of(r.span().start),
            })
        }
        None => None,
    };
    let mut vars = Vec::new();
    for v in raw.var.iter().flatten() {
        let at = v.span().start;
        let v = v.get_ref();
        let name = v.name.get_ref().trim().to_string();
        if name.is_empty() || name.contains([',', '"', '\n', '\r']) {
            return Err(src.error(
                v.name.span().start,
                "var.name",
                "a column name: not empty, no commas, quotes or line breaks",
            ));
        }
        if vars.iter().any(|w: &Var| w.name == name) {
            return Err(src.error(
                v.name.span().start,
                "var.name",
                format!("two variables are called `{name}`"),
            ));
        }
        let need = |o: &Option<Spanned<f64>>, key: &str| -> Result<f64, ConfigError> {
            match o {
                Some(x) => finite(x, key),
                None => Err(src.error(
                    v.kind.span().start,
                    key,
                    format!("a {} variable needs `{}`", v.kind.get_ref(), &key[4..]),
                )),
            }
        };
        let dist = match v.kind.get_ref().as_str() {
            "uniform" => {
                let (min, max) = (need(&v.min, "var.min")?, need(&v.max, "var.max")?);
                if min >= max {
                    let at = v.max.as_ref().map_or(at, |m| m.span().start);
                    return Err(src.error(
                        at,
                        "var.max",
                        format!("empty range: min ({min}) must be less than max ({max})"),
                    ));
                }
                for (x, key, o) in [(min, "var.min", &v.min), (max, "var.max", &v.max)] {
                    if x.abs() > MAX_VALUE {
                        let at = o.as_ref().map_or(at, |m| m.span().start);
                        return Err(src.error(at, key, out_of_range(x)));
                    }
                }
                Dist::Uniform { min, max }
            }
            "normal" => {
                let (mean, std) = (need(&v.mean, "var.mean")?, need(&v.std, "var.std")?);
                if std <= 0.0 {
                    let at = v.std.as_ref().map_or(at, |m| m.span().start);
                    return Err(src.error(at, "var.std", "must be > 0"));
                }
                // Box–Muller draws lie within 8.6 standard deviations.
                let reach = mean.abs() + NORMAL_REACH * std;
                if !reach.is_finite() || reach > MAX_VALUE {
                    let (key, o) = if mean.abs() > MAX_VALUE {
                        ("var.mean", &v.mean)
                    } else {
                        ("var.std", &v.std)
                    };
                    let at = o.as_ref().map_or(at, |m| m.span().start);
                    return Err(src.error(
                        at,
                        key,
                        format!(
                            "draws reach |mean| + {NORMAL_REACH} std = {reach:e}; {}",
                            out_of_range_rule()
                        ),
                    ));
                }
                Dist::Normal { mean, std }
            }
            "grid" => match &v.values {
                Some(vals) if vals.get_ref().is_empty() => {
                    return Err(src.error(
                        vals.span().start,
                        "var.values",
                        "empty range: give at least one value",
                    ))
                }
                Some(vals) if vals.get_ref().iter().any(|x| !x.is_finite()) => {
                    return Err(src.error(
                        vals.span().start,
                        "var.values",
                        "every value must be a finite number",
                    ))
                }
                Some(vals) if vals.get_ref().iter().any(|x| x.abs() > MAX_VALUE) => {
                    let x = vals.get_ref().iter().find(|x| x.abs() > MAX_VALUE).copied();
                    return Err(src.error(
                        vals.span().start,
                        "var.values",
                        out_of_range(x.unwrap_or(f64::INFINITY)),
                    ));
                }
                Some(vals) => Dist::Grid(vals.get_ref().clone()),
                None => {
                    return Err(src.error(
                        v.kind.span().start,
                        "var.values",
                        "a grid variable needs `values = [...]`",
                    ))
                }
            },
            "polygon" => match &v.points {
                Some(p) => {
                    let pts = p.get_ref();
                    if pts.len() < 3 {
                        return Err(src.error(
                            p.span().start,
                            "var.points",
                            format!(
                                "a polygon needs at least 3 points, this one has {}",
                                pts.len()
                            ),
                        ));
                    }
                    if pts.iter().flatten().any(|x| !x.is_finite()) {
                        return Err(src.error(
                            p.span().start,
                            "var.points",
                            "every coordinate must be a finite number",
                        ));
                    }
                    if let Some(x) = pts.iter().flatten().find(|x| x.abs() > MAX_VALUE) {
                        return Err(src.error(p.span().start, "var.points", out_of_range(*x)));
                    }
                    if polygon_area(pts).abs() < 1e-9 {
                        return Err(src.error(
                            p.span().start,
                            "var.points",
                            "the polygon has no area",
                        ));
                    }
                    Dist::Polygon(pts.clone())
                }
                None => {
                    return Err(src.error(
                        v.kind.span().start,
                        "var.points",
                        "a polygon variable needs `points = [[x, y], ...]`",
                    ))
                }
            },
            other => {
                return Err(src.error(
                    v.kind.span().start,
                    "var.kind",
                    format!("`{other}`: the kinds are uniform, normal, grid, polygon"),
                ))
            }
        };
        let target = parse_target(v.target.get_ref())
            .map_err(|why| src.error(v.target.span().start, "var.target", why))?;
        let polygon = matches!(dist, Dist::Polygon(_));
        if polygon != matches!(target, Target::Start(_)) {
            return Err(src.error(
                v.target.span().start,
                "var.target",
                "a polygon sets a start position (`VEHICLE.start`), and only a polygon does",
            ));
        }
        vars.push(Var {
            name,
            dist,
            target,
            line: src.line_of(v.target.span().start),
        });
    }
    let spec = SweepSpec {
        mission: s.mission.get_ref().clone(),
        mission_line: src.line_of(s.mission.span().start),
        seed,
        runs,
        vars,
        reach,
    };
    if spec.grid_points().saturating_mul(spec.runs) > MAX_RUNS {
        return Err(src.error(
            raw.sweep.span().start,
            "sweep.runs",
            format!("runs × grid points exceeds {MAX_RUNS}"),
        ));
    }
    Ok(spec)
}

fn parse_target(t: &str) -> Result<Target, String> {
    let parts: Vec<&str> = t.trim().split('.').collect();
    let usage = "targets: `post.N.t`, `post.N.value` (N from 1, file order), `VEHICLE.start` (polygon) or `VEHICLE.FIELD`";
    match parts.as_slice() {
        ["post", n, field] => {
            let n: usize = n
                .parse()
                .ok()
                .filter(|&n: &usize| n >= 1)
                .ok_or_else(|| format!("`{t}`: the post number counts from 1; {usage}"))?;
            match *field {
                "t" => Ok(Target::PostTime(n - 1)),
                "value" => Ok(Target::PostValue(n - 1)),
                _ => Err(format!("`{t}`: a post's `t` or `value`; {usage}")),
            }
        }
        [vehicle, "start"] => Ok(Target::Start(vehicle.to_string())),
        [vehicle, field] if FIELDS.contains(field) => {
            Ok(Target::Field(vehicle.to_string(), field.to_string()))
        }
        [_, field] => Err(format!(
            "`{t}`: unknown field `{field}` (fields: {}); {usage}",
            FIELDS.join(", ")
        )),
        _ => Err(format!("`{t}`: {usage}")),
    }
}

/// Twice the signed area of a polygon (shoelace), m².
fn polygon_area(p: &[[f64; 2]]) -> f64 {
    let n = p.len();
    (0..n)
        .map(|i| {
            let (a, b) = (p[i], p[(i + 1) % n]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum()
}

/// Whether `(x, y)` is inside the polygon (even-odd rule).
pub fn in_polygon(p: &[[f64; 2]], x: f64, y: f64) -> bool {
    let mut inside = false;
    let n = p.len();
    let mut j = n - 1;
    for i in 0..n {
        let (a, b) = (p[i], p[j]);
        if (a[1] > y) != (b[1] > y) && x < (b[0] - a[0]) * (y - a[1]) / (b[1] - a[1]) + a[0] {
            inside = !inside;
        }
        j = i;
    }
    inside
}

pub use crate::model::rng::Rng;

/// What a sweep run needs of each vehicle after each iteration besides
/// its position: its motion for encounters, its heading (degrees) for the
/// final pose, its heave and its GPS error for the environment columns
/// (96 bytes, recorded by the blocked replay loop next to the 16-byte
/// positions).
#[derive(Debug, Clone, Copy)]
struct SweepMotion {
    motion: crate::encounter::Motion,
    heading: f64,
    /// Heave, m (NaN without a sea or before the first step).
    heave: f64,
    /// Sensed minus true position, m; −1 while the GPS has no fix; NaN
    /// without sensors or before the first posting.
    gps_error: f64,
}

/// A vehicle's position (m) and [`SweepMotion`].
fn sweep_record(v: &Vehicle) -> (nalgebra::Vector2<f64>, SweepMotion) {
    let (p, motion) = crate::encounter::Pose::split(v);
    let gps_error = match v.sensed() {
        None => f64::NAN,
        Some(r) => r
            .pos
            .map_or(-1.0, |(x, y)| (x - v.nav().x).hypot(y - v.nav().y)),
    };
    (
        p,
        SweepMotion {
            motion,
            heading: v.nav().heading,
            heave: v.wave_motion().map_or(f64::NAN, |m| m.heave),
            gps_error,
        },
    )
}

/// Per vehicle, which environment columns its summary has: a sea
/// (`V_heave_rms`), sensors (`V_gps_lost`, `V_gps_error_rms`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct EnvColumns {
    sea: bool,
    sensors: bool,
}

/// The environment statistics of one vehicle over a run's iterations.
#[derive(Debug, Clone, Copy, Default)]
struct EnvStats {
    heave2: f64,
    heave_n: u64,
    err2: f64,
    err_n: u64,
    lost: u64,
}

impl EnvStats {
    fn add(&mut self, r: &SweepMotion) {
        if !r.heave.is_nan() {
            self.heave2 += r.heave * r.heave;
            self.heave_n += 1;
        }
        if r.gps_error < 0.0 {
            self.lost += 1;
        } else if !r.gps_error.is_nan() {
            self.err2 += r.gps_error * r.gps_error;
            self.err_n += 1;
        }
    }

    /// √(sum / n), NaN for n = 0.
    fn rms(sum: f64, n: u64) -> f64 {
        if n == 0 {
            f64::NAN
        } else {
            (sum / n as f64).sqrt()
        }
    }

    /// Append this vehicle's columns to a summary line.
    fn push(&self, cols: EnvColumns, line: &mut Vec<u8>) {
        use crate::replay::csv::push_f64;
        if cols.sea {
            line.push(b',');
            push_f64(line, Self::rms(self.heave2, self.heave_n));
        }
        if cols.sensors {
            let _ = write!(line, ",{},", self.lost);
            push_f64(line, Self::rms(self.err2, self.err_n));
        }
    }
}

impl AsRef<crate::encounter::Motion> for SweepMotion {
    fn as_ref(&self) -> &crate::encounter::Motion {
        &self.motion
    }
}

/// A loaded sweep: the spec, its base mission, and where the targets point.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The spec.
    pub spec: SweepSpec,
    /// The base mission.
    pub mission: Mission,
    /// Sweep file path.
    pub path: PathBuf,
    /// FNV-1a 64 of the sweep file's bytes and then its base mission's:
    /// what a shard part's end line and a resumed `.partial` are checked
    /// against.
    pub hash: u64,
    reach_vehicle: usize,
    /// Resolved vehicle index of each var (for Start/Field targets).
    var_vehicle: Vec<usize>,
    /// Each vehicle's environment columns (from the base mission).
    env_cols: Vec<EnvColumns>,
}

/// Load a sweep file and its base mission; every target is checked
/// against the mission before anything runs.
pub fn load(path: &Path) -> Result<Sweep, ConfigError> {
    let text = config::read_text(path, "sweep")?;
    let spec = parse(path, &text)?;
    let err = |line: usize, key: &str, message: String| ConfigError {
        path: path.to_path_buf(),
        line: Some(line),
        key: Some(key.to_string()),
        message,
    };
    let mpath = {
        let p = Path::new(&spec.mission);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            path.parent().unwrap_or_else(|| Path::new(".")).join(p)
        }
    };
    let mission = crate::mission::load(&mpath).map_err(|mut e| {
        if e.line.is_none() {
            e.message = format!(
                "{} (sweep.mission of {}:{})",
                e.message,
                path.display(),
                spec.mission_line
            );
        }
        e
    })?;
    let hash = {
        let mut h = Fnv::default();
        h.update(text.as_bytes());
        h.update(&[0]);
        // Loaded above, so readable; a change in between only changes the hash.
        h.update(
            config::read_text(&mpath, "mission")
                .unwrap_or_default()
                .as_bytes(),
        );
        h.0
    };
    let names: Vec<&str> = (0..mission.vehicle_count())
        .map(|i| mission.vehicle_at(i).name.as_str())
        .collect();
    let find = |name: &str, line: usize, key: &str| -> Result<usize, ConfigError> {
        mission.vehicle_index(name).ok_or_else(|| {
            err(
                line,
                key,
                format!(
                    "no vehicle called `{name}` in the mission (vehicles: {})",
                    names.join(", ")
                ),
            )
        })
    };
    let mut var_vehicle = Vec::new();
    for v in &spec.vars {
        let vi = match &v.target {
            Target::PostTime(n) | Target::PostValue(n) => {
                let Some(post) = mission.posts.get(*n) else {
                    return Err(err(
                        v.line,
                        "var.target",
                        format!(
                            "post {} does not exist: the mission has {} posts",
                            n + 1,
                            mission.posts.len()
                        ),
                    ));
                };
                if matches!(v.target, Target::PostValue(_))
                    && command::parse(&post.var, &Payload::Number(0.0)).is_err()
                    && command::parse(&post.var, &Payload::Number(1.0)).is_err()
                {
                    return Err(err(
                        v.line,
                        "var.target",
                        format!("post {} ({}) does not take a number", n + 1, post.var),
                    ));
                }
                0
            }
            Target::Start(name) => find(name, v.line, "var.target")?,
            Target::Field(name, f) => {
                let vi = find(name, v.line, "var.target")?;
                check_table_field(&mission.vehicle_at(vi).params, name, f)
                    .map_err(|m| err(v.line, "var.target", m))?;
                vi
            }
        };
        var_vehicle.push(vi);
    }
    let reach_vehicle = match &spec.reach {
        Some(Reach {
            vehicle: Some(name),
            line,
            ..
        }) => find(name, *line, "sweep.reach.vehicle")?,
        _ => 0,
    };
    let env_cols = (0..mission.vehicle_count())
        .map(|i| {
            let p = &mission.vehicle_at(i).params;
            EnvColumns {
                sea: p.env.as_deref().is_some_and(|e| e.sea.is_some()),
                sensors: p.sensors.is_some(),
            }
        })
        .collect();
    Ok(Sweep {
        spec,
        mission,
        path: path.to_path_buf(),
        hash,
        reach_vehicle,
        var_vehicle,
        env_cols,
    })
}

/// Why vehicle `name` (parameters `p`) cannot take a drawn `field`: its
/// table is off, or (`sensors_gps_bias_sigma`) the table has no bias
/// correlation time, or (`sensors_gps_dropout_*`) its `faults` list is full.
fn check_table_field(p: &crate::model::Params, name: &str, field: &str) -> Result<(), String> {
    let Some(table) = field_table(field) else {
        return Ok(());
    };
    let env = p.env.as_deref();
    let suite = p
        .sensors
        .as_ref()
        .and_then(|b| b.0.as_any().downcast_ref::<crate::sensor::Suite>());
    let on = match table {
        "sea" => env.is_some_and(|e| e.sea.is_some()),
        "wind" => env.is_some_and(|e| e.wind.is_some()),
        "current_tide" => env.is_some_and(|e| e.tide.is_some()),
        _ => suite.is_some(),
    };
    if !on {
        return Err(format!(
            "vehicle `{name}` has no [{table}] table to vary (`{field}`)"
        ));
    }
    let settings = suite.map(|s| s.settings());
    if field == "sensors_gps_bias_sigma" && settings.is_some_and(|s| s.gps_bias_tau <= 0.0) {
        return Err(format!(
            "vehicle `{name}`: `{field}` needs gps_bias_tau (s > 0) in its [sensors] table"
        ));
    }
    let full = crate::sensor::fault::MAX_PENDING / 2;
    if field.starts_with("sensors_gps_dropout_") && settings.is_some_and(|s| s.faults.len() >= full)
    {
        return Err(format!(
            "vehicle `{name}`: its [sensors] faults list has {full} entries, no room for `{field}`"
        ));
    }
    Ok(())
}

/// One run's drawn values: one number per scalar variable, two (x, y) per
/// polygon variable, in variable order.
fn draw(spec: &SweepSpec, run: u64) -> Vec<f64> {
    let mut rng = Rng::for_run(spec.seed, run);
    let mut grid_index = run / spec.runs;
    // Grid coordinates: the last grid variable varies fastest.
    let mut grid_pick = vec![0usize; spec.vars.len()];
    for (i, v) in spec.vars.iter().enumerate().rev() {
        if let Dist::Grid(vals) = &v.dist {
            let n = vals.len() as u64;
            grid_pick[i] = (grid_index % n) as usize;
            grid_index /= n;
        }
    }
    let mut out = Vec::with_capacity(spec.vars.len() + 2);
    for (i, v) in spec.vars.iter().enumerate() {
        match &v.dist {
            Dist::Uniform { min, max } => out.push(min + (max - min) * rng.unit()),
            Dist::Normal { mean, std } => out.push(mean + std * rng.normal()),
            Dist::Grid(vals) => out.push(vals[grid_pick[i]]),
            Dist::Polygon(p) => {
                let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
                for q in p {
                    x0 = x0.min(q[0]);
                    y0 = y0.min(q[1]);
                    x1 = x1.max(q[0]);
                    y1 = y1.max(q[1]);
                }
                // Rejection sampling; a polygon with area accepts a point
                // with probability area/box, bounded away from 0 in
                // practice; after many misses take the vertex centroid.
                let mut pick = None;
                for _ in 0..100_000 {
                    let x = x0 + (x1 - x0) * rng.unit();
                    let y = y0 + (y1 - y0) * rng.unit();
                    if in_polygon(p, x, y) {
                        pick = Some((x, y));
                        break;
                    }
                }
                let (x, y) = pick.unwrap_or_else(|| {
                    let n = p.len() as f64;
                    (
                        p.iter().map(|q| q[0]).sum::<f64>() / n,
                        p.iter().map(|q| q[1]).sum::<f64>() / n,
                    )
                });
                out.push(x);
                out.push(y);
            }
        }
    }
    out
}

impl Sweep {
    /// The mission of run `run` and the values drawn for it.
    pub fn mission_for(&self, run: u64) -> (Mission, Vec<f64>) {
        let values = draw(&self.spec, run);
        let mut m = self.mission.clone();
        // (vehicle, table, field, value) of the table fields, applied per
        // vehicle after the loop
        let mut tables: Vec<(usize, &str, &str, f64)> = Vec::new();
        let mut k = 0;
        for (i, v) in self.spec.vars.iter().enumerate() {
            let x = values[k];
            k += 1;
            let vi = self.var_vehicle[i];
            match &v.target {
                // A time drawn below 0 is delivered at the start.
                Target::PostTime(n) => m.posts[*n].t = x.max(0.0),
                Target::PostValue(n) => {
                    let post = &mut m.posts[*n];
                    if let Ok(c) = command::parse(&post.var, &Payload::Number(x)) {
                        post.command = c;
                    }
                }
                Target::Start(_) => {
                    let s = &mut m.vehicle_at_mut(vi).params.start;
                    s.x = x;
                    s.y = values[k];
                    k += 1;
                }
                Target::Field(_, f) => {
                    let p = &mut m.vehicle_at_mut(vi).params;
                    match f.as_str() {
                        "start_x" => p.start.x = x,
                        "start_y" => p.start.y = x,
                        "start_heading" => p.start.heading = x,
                        "start_speed" => p.start.speed = x,
                        "start_depth" => p.start.depth = x,
                        "turn_rate" => p.turn_rate = x,
                        "max_acceleration" => p.max_acceleration = x,
                        "max_deceleration" => p.max_deceleration = x,
                        "drift_x" => p.drift_x = x,
                        "drift_y" => p.drift_y = x,
                        f => {
                            if let Some(t) = field_table(f) {
                                tables.push((vi, t, &f[t.len() + 1..], x));
                            }
                        }
                    }
                }
            }
        }
        let mut done: Vec<usize> = Vec::new();
        for &(vi, ..) in &tables {
            if !done.contains(&vi) {
                done.push(vi);
                let drawn: Vec<(&str, &str, f64)> = tables
                    .iter()
                    .filter(|d| d.0 == vi)
                    .map(|d| (d.1, d.2, d.3))
                    .collect();
                apply_table_fields(&mut m.vehicle_at_mut(vi).params, &drawn);
            }
        }
        (m, values)
    }

    /// The summary header: `run`, the variables, then per vehicle
    /// `V_x,V_y,V_heading,V_distance` (and `V_heave_rms` with a sea,
    /// `V_gps_lost,V_gps_error_rms` with sensors), then `min_range` (fleets),
    /// `near_misses,collisions` (missions with encounter ranges),
    /// `reach_time` (if configured), `obstacle_hits` (if a vehicle has
    /// obstacles, docs/obstacles.md) and `dropped`.
    pub fn header(&self) -> String {
        let mut h = String::from("run");
        for v in &self.spec.vars {
            if matches!(v.dist, Dist::Polygon(_)) {
                h.push_str(&format!(",{0}_x,{0}_y", v.name));
            } else {
                h.push_str(&format!(",{}", v.name));
            }
        }
        for i in 0..self.mission.vehicle_count() {
            let n = &self.mission.vehicle_at(i).name;
            h.push_str(&format!(",{n}_x,{n}_y,{n}_heading,{n}_distance"));
            let c = self.env_cols.get(i).copied().unwrap_or_default();
            if c.sea {
                h.push_str(&format!(",{n}_heave_rms"));
            }
            if c.sensors {
                h.push_str(&format!(",{n}_gps_lost,{n}_gps_error_rms"));
            }
        }
        if self.mission.vehicle_count() > 1 {
            h.push_str(",min_range");
        }
        if self.mission.encounters.is_some() {
            h.push_str(",near_misses,collisions");
        }
        if self.spec.reach.is_some() {
            h.push_str(",reach_time");
        }
        if has_obstacles(&self.mission) {
            h.push_str(",obstacle_hits");
        }
        h.push_str(",dropped");
        h
    }

    /// Run `run` and return its summary line (with its newline).
    pub fn run_one(&self, run: u64) -> std::io::Result<String> {
        self.run_one_to(run, None)
    }

    /// [`Sweep::run_one`], also writing the run's replay to
    /// [`RunFiles::path`] if `files` is given: exactly the bytes `usim
    /// replay` writes for the run's mission ([`Sweep::mission_for`]),
    /// streamed as the run goes and renamed into place when complete. The
    /// summary line is the same with or without it.
    pub fn run_one_to(&self, run: u64, files: Option<&RunFiles>) -> std::io::Result<String> {
        let (m, values) = self.mission_for(run);
        let n = m.vehicle_count();
        let mut dist = vec![0.0f64; n];
        let mut last: Vec<(f64, f64)> = Vec::with_capacity(n);
        let mut final_pose = vec![(0.0, 0.0, 0.0); n];
        let any_env = self.env_cols.iter().any(|c| c.sea || c.sensors);
        let mut env = vec![EnvStats::default(); if any_env { n } else { 0 }];
        let mut min_range = f64::INFINITY;
        let mut reach_time = f64::NAN;
        let mut tracker = m.encounters.map(crate::encounter::Tracker::new);
        let reach = self.spec.reach.clone();
        let rv = self.reach_vehicle;
        let mut on_step = |k: u64, t: f64, pos: &[nalgebra::Vector2<f64>], recs: &[SweepMotion]| {
            for (i, (p, r)) in pos.iter().zip(recs).enumerate() {
                if k == 0 {
                    last.push((p.x, p.y));
                } else {
                    let (px, py) = last[i];
                    dist[i] += (p.x - px).hypot(p.y - py);
                    last[i] = (p.x, p.y);
                }
                final_pose[i] = (p.x, p.y, r.heading);
                if k > 0 {
                    if let Some(e) = env.get_mut(i) {
                        e.add(r);
                    }
                }
            }
            if n > 1 && n <= 32 {
                for a in 0..n {
                    for b in a + 1..n {
                        let d = (last[b].0 - last[a].0).hypot(last[b].1 - last[a].1);
                        min_range = min_range.min(d);
                    }
                }
            }
            if let Some(tr) = tracker.as_mut() {
                crate::encounter::observe_split(tr, t, pos, recs, |_| {});
            }
            if let Some(r) = &reach {
                if reach_time.is_nan() {
                    let (x, y) = last[rv];
                    if (x - r.x).hypot(y - r.y) <= r.radius {
                        reach_time = t;
                    }
                }
            }
        };
        let summary = match files {
            // No rows: the blocked loop (chunks of vehicles through several
            // iterations at a time, src/replay/mod.rs).
            None => crate::replay::run_fleet_split(
                &m,
                crate::replay::NoRows,
                None,
                |_, _| {},
                sweep_record,
                on_step,
            )?,
            Some(f) => {
                let path = f.path(run);
                let context = |e: std::io::Error| {
                    std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display()))
                };
                let mut tmp = crate::atomic_file::AtomicFile::create(&path)?;
                let mut w = std::io::BufWriter::with_capacity(1 << 16, tmp.take());
                let (mut pos, mut recs) = (Vec::with_capacity(n), Vec::with_capacity(n));
                let s = crate::replay::run_into(
                    &m,
                    f.format,
                    &mut w,
                    None,
                    |_, _| {},
                    |k, t, vs: &[Vehicle]| {
                        crate::replay::record_split(vs, sweep_record, &mut pos, &mut recs);
                        on_step(k, t, &pos, &recs);
                    },
                )
                .map_err(context)?;
                let file = w.into_inner().map_err(|e| context(e.into_error()))?;
                tmp.commit_file(file).map_err(context)?;
                s
            }
        };
        if n > 32 {
            // Large fleets: the least range the tracker saw within the
            // near-miss range (infinite if none, or no ranges given).
            if let Some((r, _)) = tracker.as_ref().and_then(|t| t.min_range) {
                min_range = r;
            }
        }
        use crate::replay::csv::push_f64;
        let mut line = Vec::with_capacity(256);
        let _ = write!(line, "{run}");
        for v in values {
            line.push(b',');
            push_f64(&mut line, v);
        }
        for (i, &(x, y, h)) in final_pose.iter().enumerate() {
            for v in [x, y, h, dist[i]] {
                line.push(b',');
                push_f64(&mut line, v);
            }
            if let Some(e) = env.get(i) {
                e.push(self.env_cols[i], &mut line);
            }
        }
        if n > 1 {
            line.push(b',');
            push_f64(&mut line, min_range);
        }
        if let Some(tr) = &tracker {
            let _ = write!(line, ",{},{}", tr.near_misses, tr.collisions);
        }
        if self.spec.reach.is_some() {
            line.push(b',');
            push_f64(
                &mut line,
                crate::replay::csv::round_to_microsecond(reach_time),
            );
        }
        if has_obstacles(&m) {
            let _ = write!(line, ",{}", summary.obstacle_hit_count);
        }
        let _ = writeln!(line, ",{}", summary.dropped.len());
        Ok(String::from_utf8_lossy(&line).into_owned())
    }
}

/// Whether a vehicle of `m` has obstacles (the `obstacle_hits` column).
fn has_obstacles(m: &Mission) -> bool {
    (0..m.vehicle_count()).any(|i| m.vehicle_at(i).obstacles.is_some())
}

/// A shard `I/N`: the I-th (0-based) of N contiguous slices of the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Index, 0-based.
    pub index: u64,
    /// Count, ≥ 1.
    pub count: u64,
}

impl Shard {
    /// Parse `I/N` with `0 <= I < N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}`: a shard is I/N, e.g. 0/4"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: I is a number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("`{s}`: N is a number"))?;
        if count == 0 || index >= count {
            return Err(format!("`{s}`: need 0 <= I < N"));
        }
        Ok(Shard { index, count })
    }

    /// The runs of this shard out of `total`.
    pub fn range(&self, total: u64) -> std::ops::Range<u64> {
        let at = |i: u64| ((total as u128 * i as u128) / self.count as u128) as u64;
        at(self.index)..at(self.index + 1)
    }
}

/// Where a sweep writes every run's replay (`usim sweep --runs-dir`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFiles {
    /// The directory (it must exist).
    pub dir: PathBuf,
    /// CSV or MCAP.
    pub format: crate::replay::Format,
}

impl RunFiles {
    /// The file of run `run`: `DIR/run-000123.csv` (six digits or more).
    pub fn path(&self, run: u64) -> PathBuf {
        self.dir
            .join(format!("run-{run:06}.{}", self.format.extension()))
    }
}

/// Run the runs `range` of `sweep` in parallel (rayon) and write the
/// header and one line per run, in run order, to `out`.
pub fn run(sweep: &Sweep, range: std::ops::Range<u64>, out: &mut dyn Write) -> std::io::Result<()> {
    run_with_files(sweep, range, out, None)
}

/// [`run`], also writing each run's replay into `files` if given (one file
/// per run, see [`Sweep::run_one_to`]); the summary is the same.
pub fn run_with_files(
    sweep: &Sweep,
    range: std::ops::Range<u64>,
    out: &mut dyn Write,
    files: Option<&RunFiles>,
) -> std::io::Result<()> {
    writeln!(out, "{}", sweep.header())?;
    stream_rows(sweep, range, out, files, &Stop::new(false))?;
    Ok(())
}

/// FNV-1a, 64 bits: the checksum of a shard part and the spec hash (an
/// integrity check against truncation and edits, not a defence against
/// a forger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Add bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Fnv::default();
        h.update(bytes);
        h.0
    }
}

/// A writer that hashes what passes through it (the part checksum).
pub struct Hashing<W> {
    /// The writer underneath.
    pub inner: W,
    /// Hash of the bytes written so far.
    pub hash: Fnv,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The tag that starts a shard part's end line.
pub const PART_END_TAG: &str = "#usim-sweep-part";

/// The last line of a shard's summary (`usim sweep --shard I/N`): which
/// sweep it belongs to and a checksum of the lines above it, so `usim
/// sweep merge` can tell a finished part from a truncated one, a part of
/// another sweep or seed, and name the shards that are missing.
///
/// `#usim-sweep-part spec=<16 hex> seed=<n> shard=<i>/<n> total=<runs> rows=<n> fnv=<16 hex>`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartEnd {
    /// Hash of the sweep file and its base mission ([`Sweep::hash`]).
    pub spec: u64,
    /// The sweep's seed.
    pub seed: u64,
    /// Which shard.
    pub shard: Shard,
    /// Runs in the whole sweep.
    pub total: u64,
    /// Rows above the end line (the header not counted).
    pub rows: u64,
    /// FNV-1a 64 of every byte above the end line.
    pub fnv: u64,
}

impl PartEnd {
    /// The end line (without its newline).
    pub fn line(&self) -> String {
        format!(
            "{PART_END_TAG} spec={:016x} seed={} shard={}/{} total={} rows={} fnv={:016x}",
            self.spec,
            self.seed,
            self.shard.index,
            self.shard.count,
            self.total,
            self.rows,
            self.fnv
        )
    }

    /// Parse an end line (without its newline).
    pub fn parse(line: &str) -> Result<PartEnd, String> {
        let rest = line
            .strip_prefix(PART_END_TAG)
            .ok_or("not a part end line")?;
        let mut f = std::collections::BTreeMap::new();
        for item in rest.split_ascii_whitespace() {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| "a field is not key=value".to_string())?;
            if f.insert(k, v).is_some() {
                return Err(format!("field {k} twice"));
            }
        }
        let get = |k: &str| f.get(k).copied().ok_or(format!("no {k}="));
        let hex = |k: &str| -> Result<u64, String> {
            let v = get(k)?;
            if v.len() != 16 {
                return Err(format!("{k}= is not 16 hex digits"));
            }
            u64::from_str_radix(v, 16).map_err(|_| format!("{k}= is not 16 hex digits"))
        };
        let num = |k: &str| -> Result<u64, String> {
            get(k)?
                .parse()
                .map_err(|_| format!("{k}= is not a whole number"))
        };
        let shard = Shard::parse(get("shard")?)?;
        let total = num("total")?;
        if total > MAX_RUNS {
            return Err(format!("total= above {MAX_RUNS}"));
        }
        if f.len() != 6 {
            return Err("unknown fields".into());
        }
        Ok(PartEnd {
            spec: hex("spec")?,
            seed: num("seed")?,
            shard,
            total,
            rows: num("rows")?,
            fnv: hex("fnv")?,
        })
    }
}

/// Join shard summaries (each ending with its [`PartEnd`] line) into the
/// summary the unsharded sweep writes, in run order. Every part must be
/// intact (its checksum and row count), of the same sweep (spec hash,
/// seed, shard count, header), and every shard must be there once; the
/// error names the part and what is wrong, or the shards that are missing
/// and their runs.
pub fn merge(parts: &[(String, String)]) -> Result<String, String> {
    let mut header: Option<(&str, &str)> = None;
    let mut first: Option<(&str, PartEnd)> = None;
    let mut shards: Vec<(PartEnd, &str, &str)> = Vec::new();
    for (name, text) in parts {
        let body_len = text
            .trim_end_matches('\n')
            .rfind('\n')
            .map(|i| i + 1)
            .ok_or_else(|| format!("{name}: not a sweep part (fewer than two lines)"))?;
        let (body, last) = text.split_at(body_len);
        let last = last.strip_suffix('\n').unwrap_or(last);
        if !last.starts_with(PART_END_TAG) {
            return Err(format!(
                "{name}: no end line: the part is truncated, still being written, or not \
                 written by `usim sweep --shard I/N`"
            ));
        }
        let end = PartEnd::parse(last).map_err(|e| format!("{name}: bad end line: {e}"))?;
        if Fnv::of(body.as_bytes()) != end.fnv {
            return Err(format!(
                "{name}: checksum mismatch: the part was changed or damaged after it was written"
            ));
        }
        let (h, rows) = body.split_once('\n').unwrap_or((body, ""));
        match (header, first) {
            (Some((fh, fname)), Some((_, fe))) => {
                if fe.seed != end.seed {
                    return Err(format!(
                        "{name}: seed {} but {fname} has seed {}",
                        end.seed, fe.seed
                    ));
                }
                if fe.spec != end.spec {
                    return Err(format!(
                        "{name}: another sweep than {fname} (the sweep file or its mission differ: spec {:016x} vs {:016x})",
                        end.spec, fe.spec
                    ));
                }
                if fe.shard.count != end.shard.count || fe.total != end.total {
                    return Err(format!(
                        "{name}: shard {}/{} of {} runs but {fname} is {}/{} of {} runs",
                        end.shard.index,
                        end.shard.count,
                        end.total,
                        fe.shard.index,
                        fe.shard.count,
                        fe.total
                    ));
                }
                if fh != h {
                    return Err(format!("{name}: its header differs from {fname}'s"));
                }
            }
            _ => {
                header = Some((h, name));
                first = Some((name, end));
            }
        }
        if let Some((_, _, other)) = shards.iter().find(|(e, _, _)| e.shard == end.shard) {
            return Err(format!(
                "{name}: shard {}/{} appears twice (also {other})",
                end.shard.index, end.shard.count
            ));
        }
        let want = end.shard.range(end.total);
        let mut n = 0u64;
        for (i, l) in rows.lines().enumerate() {
            let run: Option<u64> = l.split(',').next().and_then(|r| r.parse().ok());
            if run != Some(want.start + i as u64) {
                return Err(format!(
                    "{name}:{}: expected run {}, found `{}`",
                    i + 2,
                    want.start + i as u64,
                    l.split(',').next().unwrap_or("")
                ));
            }
            n += 1;
        }
        if n != end.rows || n != want.end - want.start {
            return Err(format!(
                "{name}: {n} rows, but shard {}/{} has {} runs",
                end.shard.index,
                end.shard.count,
                want.end - want.start
            ));
        }
        shards.push((end, rows, name));
    }
    let ((h, _), (_, fe)) = header.zip(first).ok_or("no files to merge")?;
    let missing: Vec<String> = (0..fe.shard.count)
        .filter(|i| !shards.iter().any(|(e, _, _)| e.shard.index == *i))
        .take(20)
        .map(|i| {
            let r = Shard {
                index: i,
                count: fe.shard.count,
            }
            .range(fe.total);
            format!("{i}/{} (runs {}..{})", fe.shard.count, r.start, r.end)
        })
        .collect();
    if !missing.is_empty() {
        let n = fe.shard.count - shards.len() as u64;
        return Err(format!(
            "{n} of {} shards missing: {}{}",
            fe.shard.count,
            missing.join(", "),
            if n > 20 { ", ..." } else { "" }
        ));
    }
    shards.sort_by_key(|(e, _, _)| e.shard.index);
    let mut out =
        String::with_capacity(shards.iter().map(|s| s.1.len()).sum::<usize>() + h.len() + 1);
    out.push_str(h);
    out.push('\n');
    for (_, rows, _) in shards {
        out.push_str(rows);
    }
    Ok(out)
}

/// What stops a sweep early (Ctrl-C): set it and the runs not yet started
/// are skipped; the finished rows before the first skipped one are kept.
pub type Stop = std::sync::atomic::AtomicBool;

/// Run the runs `range` of `sweep` in parallel (rayon), writing one line
/// per run in run order to `out` (no header), flushed every chunk, so
/// memory stays flat however many runs. Returns the rows written: fewer
/// than the range when `stop` was set.
pub fn stream_rows(
    sweep: &Sweep,
    range: std::ops::Range<u64>,
    out: &mut dyn Write,
    files: Option<&RunFiles>,
    stop: &Stop,
) -> std::io::Result<u64> {
    use rayon::prelude::*;
    use std::sync::atomic::Ordering;
    // A few runs per thread per chunk: rows reach the file soon after they
    // finish, and memory holds one chunk.
    let chunk = (rayon::current_num_threads() as u64 * 8).clamp(16, 4096);
    let mut start = range.start;
    let mut written = 0;
    while start < range.end {
        let end = (start + chunk).min(range.end);
        let lines: Vec<Option<std::io::Result<String>>> = (start..end)
            .into_par_iter()
            .map(|r| (!stop.load(Ordering::Relaxed)).then(|| sweep.run_one_to(r, files)))
            .collect();
        for l in lines {
            match l {
                Some(l) => out.write_all(l?.as_bytes())?,
                None => {
                    out.flush()?;
                    return Ok(written);
                }
            }
            written += 1;
        }
        out.flush()?;
        start = end;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<SweepSpec, ConfigError> {
        parse(Path::new("s.toml"), text)
    }

    const HEAD: &str = "[sweep]\nmission = \"m.toml\"\nseed = 7\nruns = 10\n";

    #[test]
    fn empty_range_and_small_polygon_are_refused_with_line_and_key() {
        let e = p(&format!(
            "{HEAD}[[var]]\nname = \"a\"\nkind = \"uniform\"\ntarget = \"post.1.t\"\nmin = 5\nmax = 5\n"
        ))
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(10), Some("var.max")),
            "{e}"
        );
        assert!(
            e.to_string().contains("empty range") && e.to_string().contains("s.toml"),
            "{e}"
        );
        let e = p(&format!(
            "{HEAD}[[var]]\nname = \"g\"\nkind = \"grid\"\ntarget = \"post.1.t\"\nvalues = []\n"
        ))
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(9), Some("var.values")),
            "{e}"
        );
        let e = p(&format!(
            "{HEAD}[[var]]\nname = \"s\"\nkind = \"polygon\"\ntarget = \"boat.start\"\npoints = [[0, 0], [1, 0]]\n"
        ))
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(9), Some("var.points")),
            "{e}"
        );
        assert!(e.to_string().contains("at least 3 points"), "{e}");
        let e = p(&format!(
            "{HEAD}[[var]]\nname = \"n\"\nkind = \"normal\"\ntarget = \"post.1.value\"\nmean = 1\nstd = 0\n"
        ))
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("var.std"));
        let e = p(&format!(
            "{HEAD}[[var]]\nname = \"n\"\nkind = \"uniform\"\ntarget = \"post.0.t\"\nmin = 1\nmax = 2\n"
        ))
        .unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(8), Some("var.target")),
            "{e}"
        );
    }

    #[test]
    fn grid_times_runs_and_draws_are_per_run() {
        let s = p(&format!(
            "{HEAD}[[var]]\nname = \"a\"\nkind = \"grid\"\ntarget = \"post.1.value\"\nvalues = [1, 2, 3]\n\
             [[var]]\nname = \"u\"\nkind = \"uniform\"\ntarget = \"post.1.t\"\nmin = 0\nmax = 10\n"
        ))
        .unwrap();
        assert_eq!(s.total_runs(), 30);
        // Runs 0..10 at the first grid value, 10..20 at the second.
        assert_eq!(draw(&s, 0)[0], 1.0);
        assert_eq!(draw(&s, 19)[0], 2.0);
        assert_eq!(draw(&s, 29)[0], 3.0);
        // A run's draws depend on (seed, run) only.
        assert_eq!(draw(&s, 5), draw(&s, 5));
        assert_ne!(draw(&s, 5)[1], draw(&s, 6)[1]);
        let u: Vec<f64> = (0..30).map(|r| draw(&s, r)[1]).collect();
        assert!(u.iter().all(|x| (0.0..10.0).contains(x)));
    }

    #[test]
    fn rng_moments() {
        let mut r = Rng::for_run(1, 2);
        let n = 100_000;
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let x = r.normal();
            s += x;
            s2 += x * x;
        }
        let mean = s / n as f64;
        let var = s2 / n as f64 - mean * mean;
        // Standard error of the mean 1/sqrt(n) = 0.003.
        assert!(
            mean.abs() < 0.015 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
    }

    #[test]
    fn polygon_membership() {
        let sq = [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]];
        assert!(in_polygon(&sq, 1.0, 1.0));
        assert!(!in_polygon(&sq, 3.0, 1.0));
        let tri = [[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]];
        assert!(in_polygon(&tri, 1.0, 1.0) && !in_polygon(&tri, 3.0, 3.0));
    }

    /// `sea_gamma = 1` is Pierson–Moskowitz bit for bit (JONSWAP's factor
    /// (1 − 0.287 ln γ)·γ^… is exactly 1 at γ = 1, docs/model.md §24.1);
    /// the other table fields land in the settings, clamped into range.
    #[test]
    fn table_fields_reach_the_sea_wind_tide_and_sensors() {
        use crate::model::env::{Environment, SeaState, Spectrum, Tide, WaveField, Wind};
        use std::sync::Arc;
        let pm = SeaState {
            spectrum: Spectrum::PiersonMoskowitz,
            ..SeaState::default()
        };
        let mut p = crate::model::Params {
            env: Some(Box::new(Environment {
                sea: Some(Arc::new(WaveField::new(&SeaState::default()).unwrap())),
                wind: Some(Arc::new(Wind::new(&Default::default()).unwrap())),
                tide: Some(Tide::default()),
                ..Environment::default()
            })),
            sensors: Some(crate::sensor::Suite::new(Default::default(), "v").boxed()),
            ..Default::default()
        };
        apply_table_fields(
            &mut p,
            &[
                ("sea", "gamma", 1.0),
                ("wind", "gusts", 0.2),
                ("wind", "surface_drag", 9.0),
                ("current_tide", "period", 600.0),
                ("sensors", "gps_sigma", 2.5),
                ("sensors", "gps_dropout_for", 30.0),
            ],
        );
        let env = p.env.as_deref().unwrap();
        let want = WaveField::new(&pm).unwrap();
        for t in [0.0, 1.7, 33.3] {
            let got = env.sea.as_ref().unwrap().elevation(3.0, -2.0, t);
            assert_eq!(got.to_bits(), want.elevation(3.0, -2.0, t).to_bits());
        }
        let w = env.wind.as_ref().unwrap().settings;
        assert!(!w.gusts && w.surface_drag == 0.05, "{w:?}");
        assert_eq!(env.tide.unwrap().period_s, 600.0);
        let b = p.sensors.as_ref().unwrap();
        let s = b.0.as_any().downcast_ref::<crate::sensor::Suite>().unwrap();
        assert_eq!(s.settings().gps_sigma, 2.5);
        let f = s.settings().faults[0];
        assert_eq!((f.at, f.duration, f.on), (Some(0.0), Some(30.0), false));
    }

    #[test]
    fn shards_cover_the_runs_once() {
        for total in [0u64, 1, 7, 100, 10_001] {
            for n in 1..6 {
                let mut next = 0;
                for i in 0..n {
                    let r = Shard { index: i, count: n }.range(total);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, total);
            }
        }
        assert!(Shard::parse("3/3").is_err() && Shard::parse("1/0").is_err());
        assert_eq!(Shard::parse("2/5"), Ok(Shard { index: 2, count: 5 }));
    }
}
