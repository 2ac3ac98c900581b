//! `usim import-moos`: a MOOS mission file's `ProcessConfig = uSimMarine`
//! (or `uSimMarineV22`) block, plus the mission-wide `LatOrigin`,
//! `LongOrigin` and `Community`, turned into a usim vehicle config with the
//! same meaning (docs/formats.md §8).
//!
//! Sans-IO: [`import`] is a pure function of the file's text. MOOS's reading
//! rules (docs/model.md §2.1): every blank (space, tab, CR) is removed from
//! a config line, `//` starts a comment, the key is case-insensitive and the
//! value follows the first `=`; a line with an empty value is skipped.
//! A usim config holds each key once, so repeated keys are merged as the app
//! would apply them (classic: the earlier line wins; V22: the later one);
//! `thrust_map` lines accumulate into a list in file order. Every line that
//! cannot be carried over is reported with its line number and the reason.
use std::fmt;

use crate::model::angles::is_number;

/// A line of the block that is not in the imported config, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmapped {
    /// 1-based line in the `.moos` file.
    pub line: usize,
    /// The key as written (blanks removed).
    pub key: String,
    /// Why it was left out.
    pub reason: String,
}

impl fmt::Display for Unmapped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: key `{}`: {}", self.line, self.key, self.reason)
    }
}

/// The result of an import.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The block's process name as written (`uSimMarine`, `uSimMarineV22`).
    pub process: String,
    /// The usim config, TOML text.
    pub toml: String,
    /// Lines left out, in file order.
    pub unmapped: Vec<Unmapped>,
    /// The mission's PID app block (`pMarinePIDV22`, else `pMarinePID`)
    /// and its line, when present and not imported (`--pid-from`): the
    /// mission closes the loop there.
    pub pid_app: Option<(String, usize)>,
    /// The block the PID settings came from (`--pid-from`).
    pub pid_from: Option<String>,
    /// The mission's uFldObstacleSim block, written as the `[obstacles]`
    /// table (its `file` as the block wrote it: relative to the `.moos`).
    pub obstacles: Option<ObstacleBlock>,
}

/// What a `.moos` file's `ProcessConfig = uFldObstacleSim` block (and a
/// uFldCollObDetect block's `collision_dist`) says about the obstacles
/// (docs/obstacles.md, docs/formats.md §8): read by `usim moos` and
/// written as `[obstacles]` by `usim import-moos`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObstacleBlock {
    /// `obstacle_file` as written (relative to the `.moos` file).
    pub file: String,
    /// `sensor_range`, m.
    pub sensor_range: Option<f64>,
    /// `post_points` (`true`, any case).
    pub post_points: bool,
    /// `refresh_interval`, s (0 or absent: once).
    pub refresh_interval: Option<f64>,
    /// uFldCollObDetect's `collision_dist`, m: the hit range.
    pub hit_range: Option<f64>,
}

impl ObstacleBlock {
    /// The obstacle settings: the block's values over the defaults.
    pub fn settings(&self) -> crate::obstacle::Settings {
        let mut s = crate::obstacle::Settings::default();
        if let Some(x) = self.sensor_range {
            s.sensor_range = x;
        }
        if let Some(x) = self.hit_range {
            s.hit_range = x;
        }
        s.post_points = self.post_points;
        s.refresh_interval = self.refresh_interval;
        s
    }

    /// The `[obstacles]` table (docs/config.md) with `file` = the block's.
    pub fn toml(&self) -> String {
        self.toml_with_file(&self.file)
    }

    /// The `[obstacles]` table with the obstacle file named `file`.
    pub fn toml_with_file(&self, file: &str) -> String {
        let mut t = format!("\n[obstacles]\nfile = {}\n", toml_str(file));
        if let Some(x) = self.hit_range {
            t.push_str(&format!("hit_range = {}\n", toml_f64(x)));
        }
        if let Some(x) = self.sensor_range {
            t.push_str(&format!("sensor_range = {}\n", toml_f64(x)));
        }
        if self.post_points {
            t.push_str("post_points = true\n");
        }
        if let Some(x) = self.refresh_interval {
            t.push_str(&format!("refresh_interval = {}\n", toml_f64(x)));
        }
        t
    }
}

/// The uFldObstacleSim block of a `.moos` file's text: `None` without the
/// block or without its `obstacle_file`. A range that is not a number in
/// [0, 1e6] is an error naming the block and the key.
pub fn obstacle_block(text: &str) -> Result<Option<ObstacleBlock>, String> {
    let names = block_names(text);
    let has = |n: &str| names.iter().any(|b| b.eq_ignore_ascii_case(n));
    if !has("uFldObstacleSim") {
        return Ok(None);
    }
    let sim = block_lines(text, "uFldObstacleSim");
    let Some(file) = sim
        .iter()
        .find(|(k, _)| k == "obstacle_file")
        .map(|(_, v)| v)
    else {
        return Ok(None);
    };
    let range =
        |lines: &[(String, String)], block: &str, key: &str| -> Result<Option<f64>, String> {
            let Some((_, v)) = lines.iter().find(|(k, _)| k == key) else {
                return Ok(None);
            };
            match v.parse::<f64>() {
                Ok(x)
                    if x.is_finite()
                        && (0.0..=crate::config::obstacles::MAX_RANGE_M).contains(&x) =>
                {
                    Ok(Some(x))
                }
                _ => Err(format!(
                    "{block}: key `{key}`: expected a number ≥ 0, got `{}`",
                    crate::text::escape_control(&v.chars().take(40).collect::<String>())
                )),
            }
        };
    let hit_range = if has("uFldCollObDetect") {
        range(
            &block_lines(text, "uFldCollObDetect"),
            "uFldCollObDetect",
            "collision_dist",
        )?
    } else {
        None
    };
    Ok(Some(ObstacleBlock {
        file: file.clone(),
        sensor_range: range(&sim, "uFldObstacleSim", "sensor_range")?,
        post_points: sim
            .iter()
            .any(|(k, v)| k == "post_points" && v.eq_ignore_ascii_case("true")),
        refresh_interval: range(&sim, "uFldObstacleSim", "refresh_interval")?.filter(|x| *x > 0.0),
        hit_range,
    }))
}

/// Why nothing could be imported.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError(pub String);

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ImportError {}

/// How a uSimMarine parameter is written in TOML.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    Num,
    Bool,
    Text,
    /// `thrust_mode_diff`, `thrust_mode_reverse`: the word as a string.
    Word,
    /// `thrust_map`, `polar_plot`, `wormhole`: lines accumulate, in file order.
    Lines,
}

/// Keys uSimMarine (both variants) handles, with their TOML type.
const COMMON: &[(&str, Ty)] = &[
    ("start_x", Ty::Num),
    ("start_y", Ty::Num),
    ("start_heading", Ty::Num),
    ("start_speed", Ty::Num),
    ("start_depth", Ty::Num),
    ("start_pos", Ty::Text),
    ("prefix", Ty::Text),
    ("turn_rate", Ty::Num),
    ("thrust_map", Ty::Lines),
    ("thrust_factor", Ty::Num),
    ("thrust_reflect", Ty::Bool),
    ("max_acceleration", Ty::Num),
    ("max_deceleration", Ty::Num),
    ("buoyancy_rate", Ty::Num),
    ("max_depth_rate", Ty::Num),
    ("max_depth_rate_speed", Ty::Num),
    ("default_water_depth", Ty::Num),
    ("drift_x", Ty::Num),
    ("drift_y", Ty::Num),
    ("drift_vector", Ty::Text),
    ("rotate_speed", Ty::Num),
    ("max_rudder_degs_per_sec", Ty::Num),
    ("sim_pause", Ty::Bool),
    ("dual_state", Ty::Bool),
    ("trim_tolerance", Ty::Num),
    ("max_trim_delay", Ty::Num),
];

/// Keys only uSimMarineV22 handles.
const V22_ONLY: &[(&str, Ty)] = &[
    ("turn_spd_loss", Ty::Num),
    ("max_speed", Ty::Num),
    ("turn_radius", Ty::Num),
    ("turn_spd_map_null_speed", Ty::Num),
    ("turn_spd_map_null_rate", Ty::Num),
    ("turn_spd_map_full_speed", Ty::Num),
    ("turn_spd_map_full_rate", Ty::Num),
    ("thrust_mode_diff", Ty::Word),
    ("thrust_mode_reverse", Ty::Word),
    ("post_navpos_summary", Ty::Bool),
    ("wind_conditions", Ty::Text),
    ("polar_plot", Ty::Lines),
    ("wormhole", Ty::Lines),
];

/// uSimMarineV22's embedded PID keys (docs/v22.md §2.2): they count only
/// when the block couples the PID with a `yaw_pid_*` key (§2.1).
const V22_PID: &[(&str, Ty)] = &[
    ("yaw_pid_kp", Ty::Num),
    ("yaw_pid_kd", Ty::Num),
    ("yaw_pid_ki", Ty::Num),
    ("yaw_pid_integral_limit", Ty::Num),
    ("yaw_pid_ki_limit", Ty::Num),
    ("maxrudder", Ty::Num),
    ("speed_pid_kp", Ty::Num),
    ("speed_pid_kd", Ty::Num),
    ("speed_pid_ki", Ty::Num),
    ("speed_pid_integral_limit", Ty::Num),
    ("maxthrust", Ty::Num),
    ("speed_factor", Ty::Num),
    ("depth_control", Ty::Bool),
    ("z_to_pitch_pid_kp", Ty::Num),
    ("z_to_pitch_pid_kd", Ty::Num),
    ("z_to_pitch_pid_ki", Ty::Num),
    ("z_to_pitch_pid_integral_limit", Ty::Num),
    ("maxpitch", Ty::Num),
    ("pitch_pid_kp", Ty::Num),
    ("pitch_pid_kd", Ty::Num),
    ("pitch_pid_ki", Ty::Num),
    ("pitch_pid_integral_limit", Ty::Num),
    ("maxelevator", Ty::Num),
    ("simulation", Ty::Bool),
    ("tardy_helm_threshold", Ty::Num),
    ("tardy_nav_threshold", Ty::Num),
    ("sim_instability", Ty::Num),
    ("heading_debug", Ty::Bool),
    ("speed_debug", Ty::Bool),
    ("depth_debug", Ty::Bool),
    ("post_des_thrust", Ty::Text),
    ("post_des_rudder", Ty::Text),
];

/// The keys that couple the PID (docs/v22.md §2.1), whatever their value.
const YAW_PID_KEYS: &[&str] = &[
    "yaw_pid_kp",
    "yaw_pid_kd",
    "yaw_pid_ki",
    "yaw_pid_integral_limit",
    "yaw_pid_ki_limit",
];

/// The key a line sets for "the later line wins": `yaw_pid_ki_limit` is
/// an alias of `yaw_pid_integral_limit` (docs/v22.md §2.2).
fn slot(key: &str) -> &str {
    if key == "yaw_pid_ki_limit" {
        "yaw_pid_integral_limit"
    } else {
        key
    }
}

/// Classic's deprecated names (mapped with a warning by uSimMarine).
const CLASSIC_ALIASES: &[(&str, &str)] = &[
    ("force_x", "drift_x"),
    ("force_y", "drift_y"),
    ("force_theta", "rotate_speed"),
    ("force_vector", "drift_vector"),
    ("startheading", "start_heading"),
    ("startdepth", "start_depth"),
    ("startspeed", "start_speed"),
];

/// V22 keys usim does not model.
const V22_OUT_OF_SCOPE: &[&str] = &["active_start"];

/// Keys of every MOOS app that usim has no use for (uSimMarine reports
/// them as unhandled too).
const MOOS_APP_KEYS: &[&str] = &["iteratemode"];

/// Keys the MOOS and MOOS-IvP app frameworks handle for every app
/// (`AppCastingMOOSApp::reportUnhandledConfigWarning` never reports them;
/// `AppTick` is mapped on its own): dropped without a word.
const FRAMEWORK_KEYS: &[&str] = &[
    "app_logging",
    "deprecated_ok",
    "commstick",
    "maxapptick",
    "term_report_interval",
    "max_appcast_events",
];

/// Every key a uSimMarine block may hold, as MOOS-IvP documents it: the
/// candidates of a "did you mean" for a line that is none of them.
fn known_keys() -> impl Iterator<Item = &'static str> {
    COMMON
        .iter()
        .chain(V22_ONLY)
        .chain(V22_PID)
        .map(|(k, _)| *k)
        .chain(CLASSIC_ALIASES.iter().map(|(k, _)| *k))
        .chain(V22_OUT_OF_SCOPE.iter().copied())
        .chain(FRAMEWORK_KEYS.iter().copied().filter(|k| {
            // the MOOS settings are suggested as MOOS writes them (`CommsTick`)
            !crate::config::MOOS_APP_SETTINGS
                .iter()
                .any(|m| m.eq_ignore_ascii_case(k))
        }))
        .chain(crate::config::MOOS_APP_SETTINGS.iter().copied())
}

/// One config line of the block, blanks removed.
#[derive(Debug, Clone)]
struct Line {
    line: usize,
    key: String,
    value: String,
}

/// The names of the file's `ProcessConfig = NAME` blocks, in file order
/// (the same reading rules as [`import`]).
pub fn block_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for raw in text.lines() {
        let line: String = raw
            .split("//")
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !matches!(c, ' ' | '\t' | '\r'))
            .collect();
        if line.starts_with('{') {
            depth += 1;
        } else if line.starts_with('}') {
            depth = depth.saturating_sub(1);
        } else if depth == 0 {
            if let Some((k, v)) = line.split_once('=') {
                if k.eq_ignore_ascii_case("processconfig") {
                    let name = v.strip_suffix('{').unwrap_or(v);
                    if v.ends_with('{') {
                        depth += 1;
                    }
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// The lines of the first `ProcessConfig = NAME` block (name compared
/// without case), as (key lower-cased, value) with blanks removed, in
/// file order; empty values dropped (MOOS's reading rules).
pub fn block_lines(text: &str, name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut state = 0u8; // 0 outside, 1 saw the header, 2 inside ours, 3 inside another
    for raw in text.lines() {
        let line: String = raw
            .split("//")
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !matches!(c, ' ' | '\t' | '\r'))
            .collect();
        if line.is_empty() {
            continue;
        }
        match state {
            0 | 1 if line.starts_with('{') => {
                state = if state == 1 { 2 } else { 3 };
                if state == 2 {
                    if let Some((k, v)) = line[1..].split_once('=') {
                        if !v.is_empty() {
                            out.push((k.to_ascii_lowercase(), v.to_string()));
                        }
                    }
                }
            }
            2 | 3 if line.starts_with('}') => {
                if state == 2 {
                    return out;
                }
                state = 0;
            }
            2 => {
                if let Some((k, v)) = line.split_once('=') {
                    if !k.is_empty() && !v.is_empty() {
                        out.push((k.to_ascii_lowercase(), v.to_string()));
                    }
                }
            }
            3 => {}
            _ => {
                if let Some((k, v)) = line.split_once('=') {
                    if k.eq_ignore_ascii_case("processconfig") {
                        let (n, open) = match v.strip_suffix('{') {
                            Some(n) => (n, true),
                            None => (v, false),
                        };
                        let ours = n.eq_ignore_ascii_case(name);
                        state = match (ours, open) {
                            (true, true) => 2,
                            (true, false) => 1,
                            (false, true) => 3,
                            (false, false) => 0,
                        };
                    }
                }
            }
        }
    }
    out
}

/// What to import, beyond the text.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImportOptions<'a> {
    /// The block to read (default: the first `uSimMarine` or
    /// `uSimMarineV22` block).
    pub block: Option<&'a str>,
    /// The model of a block whose name is neither `uSimMarine` nor
    /// `uSimMarineV22` (pAntler's alias, e.g. `uSimMarine_alpha`): true for
    /// V22. Ignored for a block with one of those names.
    pub v22: Option<bool>,
    /// Take the V22 embedded PID's settings from this block too (e.g.
    /// `pMarinePIDV22`: `usim import-moos --pid-from`). The simulator
    /// itself never reads another app's block; `usim moos` leaves this unset.
    pub pid_from: Option<&'a str>,
}

/// Import the block of `process` (default: the first `uSimMarine` or
/// `uSimMarineV22` block) from the text of a `.moos` file, reading only
/// that block and the mission-wide keys (as uSimMarine does).
pub fn import(text: &str, process: Option<&str>) -> Result<Imported, ImportError> {
    import_with(
        text,
        &ImportOptions {
            block: process,
            ..ImportOptions::default()
        },
    )
}

/// [`import`] with every option.
pub fn import_with(text: &str, opts: &ImportOptions<'_>) -> Result<Imported, ImportError> {
    let process = opts.block;
    let mut blocks: Vec<(String, Vec<Line>)> = Vec::new();
    let mut globals: Vec<Line> = Vec::new();
    // Parser state: outside, saw `ProcessConfig = X` (waiting for `{`), inside.
    let mut pending: Option<String> = None;
    let mut inside: Option<(String, Vec<Line>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let no_comment = raw.split("//").next().unwrap_or("");
        let squeezed: String = no_comment
            .chars()
            .filter(|c| !matches!(c, ' ' | '\t' | '\r'))
            .collect();
        if squeezed.is_empty() {
            continue;
        }
        if let Some((name, lines)) = inside.as_mut() {
            if squeezed.starts_with('}') {
                let (name, lines) = (std::mem::take(name), std::mem::take(lines));
                blocks.push((name, lines));
                inside = None;
                continue;
            }
            if let Some(l) = split_line(n, &squeezed) {
                lines.push(l);
            }
            continue;
        }
        if let Some(name) = pending.take() {
            if let Some(rest) = squeezed.strip_prefix('{') {
                let mut lines = Vec::new();
                if let Some(l) = (!rest.is_empty()).then(|| split_line(n, rest)).flatten() {
                    lines.push(l);
                }
                inside = Some((name, lines));
                continue;
            }
            return Err(ImportError(format!(
                "line {n}: expected `{{` to open the ProcessConfig block of {name}"
            )));
        }
        let Some((key, value)) = squeezed.split_once('=') else {
            continue;
        };
        if key.eq_ignore_ascii_case("processconfig") {
            // `ProcessConfig = name {` on one line is allowed too.
            match value.strip_suffix('{') {
                Some(name) => inside = Some((name.to_string(), Vec::new())),
                None => pending = Some(value.to_string()),
            }
            continue;
        }
        globals.push(Line {
            line: n,
            key: key.to_ascii_lowercase(),
            value: value.to_string(),
        });
    }
    if let Some((name, _)) = inside {
        return Err(ImportError(format!(
            "the ProcessConfig block of {name} is not closed with `}}`"
        )));
    }

    let wanted = |name: &str| match process {
        Some(p) => name.eq_ignore_ascii_case(p),
        None => {
            name.eq_ignore_ascii_case("usimmarine") || name.eq_ignore_ascii_case("usimmarinev22")
        }
    };
    let Some((name, lines)) = blocks.iter().find(|(n, _)| wanted(n)) else {
        let found: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
        return Err(ImportError(format!(
            "no `ProcessConfig = {}` block (blocks found: {})",
            process.unwrap_or("uSimMarine or uSimMarineV22"),
            if found.is_empty() {
                "none".to_string()
            } else {
                found.join(", ")
            }
        )));
    };
    let v22 = if name.eq_ignore_ascii_case("usimmarinev22") {
        true
    } else if name.eq_ignore_ascii_case("usimmarine") {
        false
    } else if let Some(v) = opts.v22 {
        v
    } else {
        return Err(ImportError(format!(
            "`{name}` is not uSimMarine or uSimMarineV22: usim imports only those"
        )));
    };

    let mut unmapped = Vec::new();
    // usim's `sensor_*` lines: the `[sensors]` table, in file order.
    let mut sensors = Sensors::default();
    // usim's `sea_*` lines: the `[sea]` table, in file order.
    let mut sea: Vec<(&'static str, String)> = Vec::new();
    // (usim key, TOML value, line) in file order.
    let mut entries: Vec<(String, String, usize)> = Vec::new();
    // Keys whose lines accumulate: (key, first line, values in file order).
    let mut accumulated: Vec<(&'static str, usize, Vec<String>)> = Vec::new();
    // V22 embeds the PID iff a `yaw_pid_*` line is present (MOOS drops
    // lines with an empty value), whatever its value (docs/v22.md §2.1).
    let pid_coupled = v22
        && lines
            .iter()
            .any(|l| !l.value.is_empty() && YAW_PID_KEYS.contains(&l.key.as_str()));
    // Another app's block (pMarinePIDV22) is read only when asked
    // (`--pid-from`): uSimMarineV22 configures its PID in its own block.
    let mut pid_lines: Vec<Line> = Vec::new();
    let mut pid_from = None;
    let pid_app = ["pmarinepidv22", "pmarinepid"]
        .iter()
        .find_map(|p| blocks.iter().find(|(n, _)| n.eq_ignore_ascii_case(p)))
        .map(|(n, l)| (n.clone(), l.first().map_or(0, |l| l.line)));
    if let Some(from) = opts.pid_from {
        let Some((pname, plines)) = blocks.iter().find(|(n, _)| n.eq_ignore_ascii_case(from))
        else {
            return Err(ImportError(format!(
                "--pid-from {from}: the file has no `ProcessConfig = {from}` block"
            )));
        };
        let gains: Vec<Line> = plines
            .iter()
            .filter(|l| !l.value.is_empty() && V22_PID.iter().any(|(k, _)| *k == l.key))
            .cloned()
            .collect();
        let has_yaw = gains.iter().any(|l| YAW_PID_KEYS.contains(&l.key.as_str()));
        let why_not = if gains.is_empty() {
            Some(format!("--pid-from {pname}: the block has no PID settings"))
        } else if !v22 {
            Some(format!(
                "--pid-from {pname}: the classic model has no embedded PID (import with --process uSimMarineV22 to run them in usim's V22 PID)"
            ))
        } else if pid_coupled {
            Some(format!(
                "--pid-from {pname}: the uSimMarineV22 block embeds its own PID (yaw_pid_* keys), which wins"
            ))
        } else if !has_yaw {
            Some(format!(
                "--pid-from {pname}: the block has no yaw_pid_* key, which the V22 PID needs"
            ))
        } else {
            None
        };
        if let Some(reason) = why_not {
            return Err(ImportError(reason));
        }
        pid_lines = gains;
        pid_from = Some(pname.clone());
    }
    // pNodeReporter says what the vehicle is (after the block's own keys).
    let mut node_entries: Vec<(String, String, usize)> = Vec::new();
    if let Some((_, nlines)) = blocks
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("pnodereporter"))
    {
        for l in nlines.iter().filter(|l| !l.value.is_empty()) {
            let report = |reason: &str| Unmapped {
                line: l.line,
                key: l.key.clone(),
                reason: reason.to_string(),
            };
            match l.key.as_str() {
                "platform_type" if l.value.contains([',', '=']) => unmapped.push(report(
                    "pNodeReporter's platform_type is not a single word: not imported",
                )),
                "platform_type" => {
                    node_entries.push(("platform_type".into(), toml_str(&l.value), l.line))
                }
                "platform_length" => match number(&l.value) {
                    Some(v) if v >= 0.0 => {
                        node_entries.push(("platform_length".into(), toml_f64(v), l.line))
                    }
                    _ => unmapped.push(report(
                        "pNodeReporter's platform_length is not a length >= 0: not imported",
                    )),
                },
                _ => {}
            }
        }
    }
    let sim_lines = lines.iter().map(|l| (l, false));
    for (l, from_pid) in sim_lines.chain(pid_lines.iter().map(|l| (l, true))) {
        let mut report = |reason: String| {
            unmapped.push(Unmapped {
                line: l.line,
                key: l.key.clone(),
                reason,
            })
        };
        if l.value.is_empty() {
            continue; // MOOS drops lines with an empty value
        }
        let key = l.key.to_ascii_lowercase();
        if key.starts_with(SEA_PREFIX) {
            if let Err(why) = sea_line(&key, &l.value, &mut sea) {
                report(why);
            }
            continue;
        }
        if key.starts_with(SENSOR_PREFIX) {
            if let Err(why) = sensor_line(&key, &l.value, v22, &mut sensors) {
                report(why);
            }
            continue;
        }
        let (usim_key, ty) = match lookup(&key, v22, pid_coupled || from_pid) {
            Lookup::Found(k, ty) => (k, ty),
            Lookup::AppTick => {
                match number(&l.value) {
                    Some(v) if v > 0.0 && v <= 1000.0 => {
                        entries.push(("app_tick".into(), toml_f64(v), l.line))
                    }
                    _ => report(format!(
                        "`{}` is not a rate in (0, 1000] Hz; app_tick left at its default",
                        l.value
                    )),
                }
                continue;
            }
            Lookup::Report(reason) => {
                report(reason);
                continue;
            }
            Lookup::Framework => continue,
        };
        let value = match ty {
            Ty::Num => match number(&l.value) {
                Some(v) => toml_f64(v),
                None => {
                    report(format!(
                        "`{}` is not a number in MOOS's sense (no exponent, no letters): uSimMarine ignores the line",
                        l.value
                    ));
                    continue;
                }
            },
            Ty::Bool => match boolean(&l.value, v22) {
                Some(b) => b.to_string(),
                None if usim_key == "depth_control" => {
                    report(format!(
                        "`{}` is not true/false: uSimMarineV22 does not start with it, usim refuses it (docs/v22.md §14.4)",
                        l.value
                    ));
                    continue;
                }
                None => {
                    report(format!(
                        "`{}` is not true/false: uSimMarine ignores the line",
                        l.value
                    ));
                    continue;
                }
            },
            Ty::Text | Ty::Word => toml_str(&l.value),
            Ty::Lines => {
                match accumulated.iter_mut().find(|a| a.0 == usim_key) {
                    Some(a) => a.2.push(l.value.clone()),
                    None => accumulated.push((usim_key, l.line, vec![l.value.clone()])),
                }
                continue;
            }
        };
        entries.push((usim_key.to_string(), value, l.line));
    }

    entries.extend(node_entries);
    // One line per key: classic applies the last line first (the earliest
    // wins), V22 in file order (the latest wins).
    let mut kept: Vec<(String, String, usize)> = Vec::new();
    for e in entries {
        match kept.iter().position(|k| slot(&k.0) == slot(&e.0)) {
            None => kept.push(e),
            Some(i) => {
                let (winner, loser) = if v22 {
                    (e.clone(), kept[i].clone())
                } else {
                    (kept[i].clone(), e.clone())
                };
                unmapped.push(Unmapped {
                    line: loser.2,
                    key: loser.0.clone(),
                    reason: format!(
                        "repeats `{}` of line {}; {} applies both and line {} wins, so only that one is kept",
                        winner.0,
                        winner.2,
                        if v22 { "uSimMarineV22" } else { "uSimMarine" },
                        winner.2
                    ),
                });
                if v22 {
                    kept.remove(i);
                    kept.push(e);
                }
            }
        }
    }
    for (key, line, maps) in accumulated {
        // classic applies the thrust_map lines last-first, V22 in file
        // order: the list is written in file order and usim applies it
        // with the same rule, so the accumulated result is the same.
        let list: Vec<String> = maps.iter().map(|m| toml_str(m)).collect();
        let value = if list.len() == 1 {
            list[0].clone()
        } else {
            format!("[{}]", list.join(", "))
        };
        let at = kept.iter().position(|k| k.2 > line).unwrap_or(kept.len());
        kept.insert(at, (key.to_string(), value, line));
    }

    let global = |k: &str| globals.iter().find(|g| g.key == k);
    let mut out = String::new();
    out.push_str(&format!(
        "# Imported by `usim import-moos` from ProcessConfig = {name}.\n"
    ));
    if let Some(p) = &pid_from {
        out.push_str(&format!(
            "# The PID settings come from ProcessConfig = {p} (--pid-from): usim runs them in the V22 embedded PID, so do not run {p} with this vehicle.\n"
        ));
    }
    if let Some(c) = global("community") {
        match crate::config::check_vehicle_name(&c.value) {
            Ok(()) => out.push_str(&format!("name = {}\n", toml_str(&c.value))),
            // e.g. a `$(VNAME)` kept by --keep-undefined: no name, said so
            Err(why) => unmapped.push(Unmapped {
                line: c.line,
                key: "Community".into(),
                reason: format!("not a usim vehicle name, so the config has no `name`: {why}"),
            }),
        }
    }
    out.push_str(&format!(
        "model = \"{}\"\n",
        if v22 { "v22" } else { "classic" }
    ));
    match (global("latorigin"), global("longorigin")) {
        (Some(la), Some(lo)) => match (number(&la.value), number(&lo.value)) {
            (Some(a), Some(o)) => {
                out.push_str(&format!("lat_origin = {}\n", toml_f64(a)));
                out.push_str(&format!("lon_origin = {}\n", toml_f64(o)));
            }
            _ => unmapped.push(Unmapped {
                line: la.line,
                key: "LatOrigin".into(),
                reason: "LatOrigin/LongOrigin are not numbers: no lat/lon output".into(),
            }),
        },
        (Some(g), None) | (None, Some(g)) => unmapped.push(Unmapped {
            line: g.line,
            key: g.key.clone(),
            reason: "LatOrigin and LongOrigin go together: no lat/lon output".into(),
        }),
        (None, None) => {}
    }
    for (k, v, _) in &kept {
        out.push_str(&format!("{k} = {v}\n"));
    }
    if !(sensors.keys.is_empty() && sensors.faults.is_empty()) {
        out.push_str("\n[sensors]\n");
        for (k, v) in &sensors.keys {
            out.push_str(&format!("{k} = {v}\n"));
        }
        if !sensors.faults.is_empty() {
            out.push_str(&format!("faults = [{}]\n", sensors.faults.join(", ")));
        }
    }
    if !sea.is_empty() {
        out.push_str("\n[sea]\n");
        for (k, v) in &sea {
            out.push_str(&format!("{k} = {v}\n"));
        }
    }
    let obstacles = obstacle_block(text).map_err(ImportError)?;
    if let Some(b) = &obstacles {
        out.push_str(&b.toml());
    }
    unmapped.sort_by_key(|u| u.line);
    Ok(Imported {
        obstacles,
        process: name.clone(),
        toml: out,
        unmapped,
        pid_app: pid_app.filter(|_| pid_from.is_none()),
        pid_from,
    })
}

/// usim's own `.moos` keys for the `[sea]` table (docs/moos.md §1.6):
/// `sea_<key>` for each `[sea]` key (uSimMarine has no sea).
pub const SEA_PREFIX: &str = "sea_";

/// One `sea_*` line (`key` lower-cased) into `sea`; the error says why it
/// is not imported. The values are checked by the config's own `[sea]`
/// rules when the result loads.
fn sea_line(key: &str, value: &str, sea: &mut Vec<(&'static str, String)>) -> Result<(), String> {
    let k = &key[SEA_PREFIX.len()..];
    let Some(&k) = crate::config::SEA_KEYS.iter().find(|x| **x == k) else {
        let names: Vec<String> = crate::config::SEA_KEYS
            .iter()
            .map(|x| format!("{SEA_PREFIX}{x}"))
            .collect();
        return Err(format!(
            "not one of usim's sea keys ({}): not imported",
            names.join(", ")
        ));
    };
    if sea.iter().any(|(x, _)| *x == k) {
        return Err(format!("repeats `{key}`: the first line is kept"));
    }
    let v = match k {
        "active" => match value.to_ascii_lowercase().as_str() {
            "true" => "true".to_string(),
            "false" => "false".to_string(),
            _ => return Err(format!("`{value}` is not true or false: not imported")),
        },
        "spectrum" => toml_str(&value.to_ascii_lowercase()),
        _ => {
            let integer = matches!(k, "seed" | "components");
            match number(value) {
                Some(v) if integer && v.fract() == 0.0 && (0.0..9.0e15).contains(&v) => {
                    format!("{}", v as i64)
                }
                Some(v) if !integer => toml_f64(v),
                _ => {
                    return Err(format!(
                        "`{value}` is not {}: not imported",
                        if integer {
                            "an integer ≥ 0"
                        } else {
                            "a number"
                        }
                    ))
                }
            }
        }
    };
    sea.push((k, v));
    Ok(())
}

/// usim's own `.moos` keys for the `[sensors]` table (docs/moos.md,
/// "Sensors"): uSimMarine has no sensor model, so these are usim's
/// invention: `sensor_<key>` for each `[sensors]` key, and `sensor_fault`
/// (repeatable) for one entry of `faults`.
pub const SENSOR_PREFIX: &str = "sensor_";

/// The `[sensors]` keys read so far: (key, TOML value), fault strings.
#[derive(Default)]
struct Sensors {
    keys: Vec<(&'static str, String)>,
    faults: Vec<String>,
}

/// One `sensor_*` line (`key` lower-cased) into `s`; the error says why it
/// is not imported.
fn sensor_line(key: &str, value: &str, v22: bool, s: &mut Sensors) -> Result<(), String> {
    let k = &key[SENSOR_PREFIX.len()..];
    if v22 {
        return Err(
            "usim's sensors are classic-only (not with uSimMarineV22): not imported".into(),
        );
    }
    if k == "fault" {
        s.faults.push(toml_str(value));
        return Ok(());
    }
    let Some(&k) = crate::config::SENSOR_KEYS
        .iter()
        .find(|x| **x == k && **x != "faults")
    else {
        let names: Vec<String> = crate::config::SENSOR_KEYS
            .iter()
            .filter(|x| **x != "faults")
            .map(|x| format!("{SENSOR_PREFIX}{x}"))
            .collect();
        return Err(format!(
            "not one of usim's sensor keys ({}, {SENSOR_PREFIX}fault): not imported",
            names.join(", ")
        ));
    };
    if s.keys.iter().any(|(x, _)| *x == k) {
        return Err(format!("repeats `{key}`: the first line is kept"));
    }
    let integer = matches!(k, "seed" | "gps_fix_quality" | "gps_satellites");
    let v = match number(value) {
        Some(v) if integer && v.fract() == 0.0 && v.abs() < 9.0e15 => format!("{}", v as i64),
        Some(v) if !integer => toml_f64(v),
        _ => {
            return Err(format!(
                "`{value}` is not {}: not imported",
                if integer { "an integer" } else { "a number" }
            ))
        }
    };
    s.keys.push((k, v));
    Ok(())
}

enum Lookup {
    Found(&'static str, Ty),
    /// A framework key: nothing to import, nothing to report.
    Framework,
    AppTick,
    Report(String),
}

fn lookup(key: &str, v22: bool, pid_coupled: bool) -> Lookup {
    if let Some((k, ty)) = COMMON.iter().find(|(k, _)| *k == key) {
        return Lookup::Found(k, *ty);
    }
    if let Some((k, ty)) = V22_ONLY.iter().find(|(k, _)| *k == key) {
        return if v22 {
            Lookup::Found(k, *ty)
        } else {
            Lookup::Report(
                "a uSimMarineV22 parameter: the classic uSimMarine ignores it (import with --process uSimMarineV22 for V22)".into(),
            )
        };
    }
    if let Some((k, ty)) = V22_PID.iter().find(|(k, _)| *k == key) {
        return if !v22 {
            Lookup::Report(
                "a uSimMarineV22 parameter (embedded PID): the classic uSimMarine ignores it (import with --process uSimMarineV22 for V22)".into(),
            )
        } else if pid_coupled {
            Lookup::Found(k, *ty)
        } else {
            Lookup::Report(
                "a PID key without a yaw_pid_* key in the block: uSimMarineV22 does not embed the PID and ignores it (docs/v22.md §2.1)".into(),
            )
        };
    }
    if let Some((_, to)) = CLASSIC_ALIASES.iter().find(|(k, _)| *k == key) {
        if v22 {
            return Lookup::Report(format!(
                "a deprecated classic name that uSimMarineV22 does not accept (write `{to}`)"
            ));
        }
        let ty = COMMON
            .iter()
            .find(|(k, _)| k == to)
            .map_or(Ty::Num, |(_, t)| *t);
        return Lookup::Found(to, ty);
    }
    if key == "apptick" {
        return Lookup::AppTick;
    }
    if key == "current_field" || key == "current_field_active" {
        return Lookup::Report(
            "documented for uSimMarine but not implemented by it; usim's own `current_field` takes a field file (docs/current_field.md)".into(),
        );
    }
    if FRAMEWORK_KEYS.contains(&key) {
        return Lookup::Framework;
    }
    if MOOS_APP_KEYS.contains(&key) {
        return Lookup::Report("a MOOS app setting with no meaning for usim".into());
    }
    if V22_OUT_OF_SCOPE.contains(&key) {
        return Lookup::Report("not modelled by usim".into());
    }
    let hint = match crate::config::nearest(key, known_keys()) {
        Some(n) => format!("; did you mean `{n}`?"),
        None => String::new(),
    };
    Lookup::Report(format!(
        "not a uSimMarine parameter (uSimMarine reports it as unhandled){hint}"
    ))
}

/// `key=value` with the key lower-cased; `None` without `=`.
fn split_line(n: usize, squeezed: &str) -> Option<Line> {
    let (k, v) = squeezed.split_once('=')?;
    if k.is_empty() {
        return None;
    }
    Some(Line {
        line: n,
        key: k.to_ascii_lowercase(),
        value: v.to_string(),
    })
}

/// A MOOS number (`isNumber`) as f64.
fn number(s: &str) -> Option<f64> {
    if !is_number(s) {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `true`/`false` in any case (V22 also the words of `setBooleanOnString`).
fn boolean(s: &str, v22: bool) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        "on" | "yes" if v22 => Some(true),
        "off" | "no" if v22 => Some(false),
        _ => None,
    }
}

/// A TOML float that reads back to `v` exactly.
fn toml_f64(v: f64) -> String {
    format!("{v:?}")
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_block_with_moos_rules() {
        let text = "LatOrigin = 43.8\nLongOrigin = -70.3\nCommunity = alpha\n\
            ProcessConfig = pHelmIvP\n{\n  AppTick = 4\n}\n\
            ProcessConfig = uSimMarine\n{\n  AppTick = 10  // comment\n  Turn_Rate = 5 0\n  \
            THRUST_MAP = 20 : 1, 100 : 5\n  start_pos = x = 1 , y = 2\n  junk = 3\n  max_speed = 2\n  prefix =\n}\n";
        let imp = import(text, None).unwrap();
        assert_eq!(imp.process, "uSimMarine");
        assert_eq!(
            imp.toml,
            "# Imported by `usim import-moos` from ProcessConfig = uSimMarine.\n\
             name = \"alpha\"\nmodel = \"classic\"\nlat_origin = 43.8\nlon_origin = -70.3\n\
             app_tick = 10.0\nturn_rate = 50.0\nthrust_map = \"20:1,100:5\"\n\
             start_pos = \"x=1,y=2\"\n"
        );
        let lines: Vec<(usize, &str)> = imp
            .unmapped
            .iter()
            .map(|u| (u.line, u.key.as_str()))
            .collect();
        assert_eq!(lines, [(14, "junk"), (15, "max_speed")]);
    }

    #[test]
    fn classic_keeps_the_earlier_line_v22_the_later() {
        let c = "ProcessConfig = uSimMarine\n{\nstart_x = 1\nstart_x = 2\n}\n";
        let imp = import(c, None).unwrap();
        assert!(imp.toml.contains("start_x = 1.0\n"), "{}", imp.toml);
        assert_eq!(imp.unmapped[0].line, 4);
        let v = c.replace("uSimMarine\n", "uSimMarineV22\n");
        let imp = import(&v, None).unwrap();
        assert!(imp.toml.contains("start_x = 2.0\n"), "{}", imp.toml);
        assert_eq!(imp.unmapped[0].line, 3);
    }

    #[test]
    fn v22_pid_keys_need_a_yaw_pid_key() {
        let c = "ProcessConfig = uSimMarineV22\n{\nspeed_pid_kp = 1\nmaxrudder = 50\n}\n";
        let imp = import(c, None).unwrap();
        assert!(!imp.toml.contains("speed_pid_kp"), "{}", imp.toml);
        assert_eq!(imp.unmapped.len(), 2);
        assert!(imp.unmapped[0].reason.contains("yaw_pid_*"));
        let c = c.replace("maxrudder = 50", "maxrudder = 50\nYAW_PID_KP =");
        assert_eq!(
            import(&c, None).unwrap().unmapped.len(),
            2,
            "an empty value does not couple"
        );
        let c = c.replace("YAW_PID_KP =", "YAW_PID_KP = 2");
        let imp = import(&c, None).unwrap();
        assert!(imp.unmapped.is_empty(), "{:?}", imp.unmapped);
        assert!(
            imp.toml
                .ends_with("speed_pid_kp = 1.0\nmaxrudder = 50.0\nyaw_pid_kp = 2.0\n"),
            "{}",
            imp.toml
        );
    }

    #[test]
    fn errors_name_what_is_missing() {
        assert!(import("", None)
            .unwrap_err()
            .0
            .contains("blocks found: none"));
        let e = import("ProcessConfig = pHelmIvP\n{\n}\n", None).unwrap_err();
        assert!(e.0.contains("blocks found: pHelmIvP"), "{e}");
        assert!(import("ProcessConfig = uSimMarine\n{\nx=1\n", None)
            .unwrap_err()
            .0
            .contains("not closed"));
        assert!(import("ProcessConfig = uSimMarine\nx=1\n", None)
            .unwrap_err()
            .0
            .contains("expected `{`"));
    }

    #[test]
    fn hostile_text_never_panics() {
        for t in [
            "ProcessConfig = uSimMarine {\n=\n==\n}\n",
            "ProcessConfig=\n{\n}",
            "}\n}\n{",
            "ProcessConfig = uSimMarine\n{ start_x = 1\n}",
            "LatOrigin = x\nLongOrigin = 1e5\nProcessConfig = uSimMarine\n{\n}",
            "ProcessConfig = uSimMarine\n{\nstart_x = --5\nthrust_map = \"\\\n}",
        ] {
            let _ = import(t, None);
        }
    }
}
