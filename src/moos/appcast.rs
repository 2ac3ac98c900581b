//! Appcasts (docs/moos.md §1.4), sans IO: what MOOS-IvP's AppCasting apps
//! post on `APPCAST` for uMAC and pMarineViewer, as uSimMarine posts it.
//!
//! * [`AppCast`]: the report and its wire string (MOOS's `AppCast.cpp`,
//!   `getAppCastString`): `proc=..!@#iter=..!@#node=..!@#iter=..!@#
//!   messages=LINE!@LINE!@..!@#config_warnings=W!@W!@#events_total=N!@#
//!   events=..!@#run_warning_total=N!@#run_warnings=COUNT:TEXT!@..`.
//! * [`AppCaster`]: `AppCastingMOOSApp`'s request handling and throttle
//!   (`APPCAST_REQ` = `node=..,app=..,duration=S,key=..,thresh=any`; an
//!   APPCAST at the first iteration, then while a request is alive or a
//!   new configuration warning waits, at most one per
//!   `term_report_interval` real seconds, default 0.5).
//! * [`report`]: the body uSimMarine's / uSimMarineV22's `buildReport`
//!   writes (USM_MOOSApp.cpp), from the vehicle's state.
//!
//! Times are MOOS seconds given by the caller; nothing here reads a clock.
use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::config::VehicleConfig;
use crate::model::drift::{fmt_x, polar};
use crate::model::{ModelVariant, Vehicle};

/// The outer separator of the wire string.
const OSEP: &str = "!@#";
/// The inner separator (between lines, warnings, events).
const ISEP: &str = "!@";
/// Most requesters remembered (hostile mail cannot grow the table).
pub const MAX_REQUESTS: usize = 64;
/// Longest `APPCAST_REQ` read, bytes.
pub const MAX_REQUEST_LEN: usize = 4096;
/// AppCast's default cap on events (`m_max_events`).
const MAX_EVENTS: usize = 8;
/// AppCast's default cap on distinct run warnings (`m_max_run_warnings`).
const MAX_RUN_WARNINGS: usize = 10;
/// AppCast's cap on configuration warnings (`m_max_config_warnings`).
const MAX_CONFIG_WARNINGS: usize = 100;

/// Text made safe for the wire string: no newline, no `!@` (which would
/// split it), no leading `#` (which would join an inner separator into an
/// outer one).
fn clean(s: &str) -> String {
    let mut t: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    while t.contains(ISEP) {
        t = t.replace(ISEP, "! @");
    }
    if t.starts_with('#') {
        t.insert(0, ' ');
    }
    t
}

/// One appcast, as MOOS's `AppCast` holds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppCast {
    /// The app's name (its alias: `GetAppName()`).
    pub proc_name: String,
    /// The community (`Community` of the mission).
    pub node_name: String,
    /// Iterations so far.
    pub iteration: u64,
    /// The body, lines separated by `\n`.
    pub messages: String,
    /// Configuration warnings, in order.
    pub config_warnings: Vec<String>,
    /// Events, oldest first (`[T]: text`, T MOOS seconds since start).
    pub events: VecDeque<String>,
    /// Run warnings and their counts.
    pub run_warnings: BTreeMap<String, u64>,
    /// Every run warning counted, including those past the cap.
    pub run_warning_total: u64,
}

impl AppCast {
    /// Add a configuration warning (at most 100 are kept, as AppCast).
    pub fn cfg_warning(&mut self, s: &str) {
        if self.config_warnings.len() <= MAX_CONFIG_WARNINGS {
            self.config_warnings.push(clean(s));
        }
    }

    /// Count a run warning (10 distinct texts, then "Other Run Warnings").
    pub fn run_warning(&mut self, s: &str) {
        let s = clean(s);
        if self.run_warnings.len() < MAX_RUN_WARNINGS {
            *self.run_warnings.entry(s).or_insert(0) += 1;
        } else {
            *self
                .run_warnings
                .entry("Other Run Warnings".into())
                .or_insert(0) += 1;
        }
        self.run_warning_total += 1;
    }

    /// Add an event at `t` MOOS seconds since the start (8 kept).
    pub fn event(&mut self, s: &str, t: f64) {
        self.events.push_back(format!("[{t:.2}]: {}", clean(s)));
        if self.events.len() > MAX_EVENTS {
            self.events.pop_front();
        }
    }

    /// The `APPCAST` string (`AppCast::getAppCastString`).
    pub fn to_wire(&self) -> String {
        let mut s = format!("proc={}{OSEP}iter={}{OSEP}", self.proc_name, self.iteration);
        if !self.node_name.is_empty() {
            s.push_str(&format!("node={}{OSEP}", self.node_name));
        }
        s.push_str(&format!("iter={}{OSEP}", self.iteration));
        s.push_str("messages=");
        // MOOSChomp(messages, "\n") until empty: each line then ISEP.
        let mut rest = self.messages.as_str();
        while !rest.is_empty() {
            let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
            s.push_str(&clean(line));
            s.push_str(ISEP);
            rest = after;
        }
        s.push_str(OSEP);
        if !self.config_warnings.is_empty() {
            s.push_str("config_warnings=");
            s.push_str(&self.config_warnings.join(ISEP));
        }
        s.push_str(OSEP);
        s.push_str(&format!("events_total={}{OSEP}", self.events.len()));
        if !self.events.is_empty() {
            s.push_str("events=");
            s.push_str(&self.events.iter().cloned().collect::<Vec<_>>().join(ISEP));
        }
        s.push_str(OSEP);
        s.push_str(&format!(
            "run_warning_total={}{OSEP}",
            self.run_warning_total
        ));
        if !self.run_warnings.is_empty() {
            s.push_str("run_warnings=");
            let w: Vec<String> = self
                .run_warnings
                .iter()
                .map(|(t, n)| format!("{n}:{t}"))
                .collect();
            s.push_str(&w.join(ISEP));
        }
        s
    }
}

/// An appcast request (`APPCAST_REQ`): how long it lives and for what.
#[derive(Debug, Clone, PartialEq)]
struct Request {
    /// MOOS s, at most 30.
    duration: f64,
    /// When it came, MOOS s.
    start: f64,
    /// `any`, or `run_warning` (only when a new run warning waits).
    thresh: String,
}

/// `AppCastingMOOSApp`'s side of appcasting: requests, warnings, throttle.
#[derive(Debug, Clone)]
pub struct AppCaster {
    /// The appcast being built.
    pub cast: AppCast,
    requests: HashMap<String, Request>,
    /// Real seconds between appcasts at most once per (0.4..=10 by mail).
    term_report_interval: f64,
    time_warp: f64,
    /// When the last appcast went, MOOS s (0: never, as MOOS).
    last_appcast: f64,
    new_cfg_warning: bool,
    new_run_warning: bool,
    /// Whether an appcast went yet.
    posted: bool,
}

/// The block settings the AppCasting framework reads.
#[derive(Debug, Clone, Default)]
pub struct CastSettings {
    /// `term_report_interval`, real s (clipped to [0, 10]; default 0.5).
    pub term_report_interval: Option<f64>,
    /// `deprecated_ok`: silence classic uSimMarine's deprecation warnings.
    pub deprecated_ok: bool,
}

impl CastSettings {
    /// Read from a block's (key lower-cased, value) lines, as
    /// `preOnStartUp` / `OnStartUpDirectives` do; returns the warnings the
    /// framework gives for bad values.
    pub fn from_block(lines: &[(String, String)]) -> (CastSettings, Vec<String>) {
        let mut s = CastSettings::default();
        let mut warnings = Vec::new();
        for (k, v) in lines {
            match k.as_str() {
                "term_report_interval" => match v.parse::<f64>() {
                    Ok(x) if x.is_finite() => s.term_report_interval = Some(x.clamp(0.0, 10.0)),
                    _ => warnings.push(format!("Invalid TERM_REPORT_INTERVAL: {v}")),
                },
                "deprecated_ok" => match v.to_ascii_lowercase().as_str() {
                    "true" => s.deprecated_ok = true,
                    "false" => s.deprecated_ok = false,
                    _ => warnings.push(format!("Invalid DEPRECATED_OK: {v}")),
                },
                _ => {}
            }
        }
        (s, warnings)
    }
}

impl AppCaster {
    /// An app `proc_name` in community `node`, under `time_warp`, with its
    /// configuration warnings; a classic uSimMarine adds its deprecation
    /// run warnings unless `deprecated_ok` (AppCastingMOOSApp::preOnStartUp).
    pub fn new(
        proc_name: &str,
        node: &str,
        time_warp: f64,
        variant: ModelVariant,
        settings: &CastSettings,
        config_warnings: &[String],
    ) -> AppCaster {
        let mut c = AppCaster {
            cast: AppCast {
                proc_name: clean(proc_name),
                node_name: clean(node),
                ..AppCast::default()
            },
            requests: HashMap::new(),
            term_report_interval: settings.term_report_interval.unwrap_or(0.5),
            time_warp: if time_warp > 0.0 && time_warp.is_finite() {
                time_warp
            } else {
                1.0
            },
            last_appcast: 0.0,
            new_cfg_warning: false,
            new_run_warning: false,
            posted: false,
        };
        for w in config_warnings {
            c.cfg_warning(w);
        }
        if variant == ModelVariant::Classic && !settings.deprecated_ok {
            c.run_warning(&format!("{proc_name} is deprecated."));
            c.run_warning("Set deprecated_ok = true to silence deprecation warning.");
            c.run_warning("The supported alternative is: uSimMarineV22");
        }
        c
    }

    /// Report a configuration warning (it forces the next appcast).
    pub fn cfg_warning(&mut self, s: &str) {
        if !s.is_empty() {
            self.new_cfg_warning = true;
            self.cast.cfg_warning(s);
        }
    }

    /// Report a run warning.
    pub fn run_warning(&mut self, s: &str) {
        if !s.is_empty() {
            self.new_run_warning = true;
            self.cast.run_warning(s);
        }
    }

    /// The variables the framework registers for that usim handles.
    pub const REGISTERS: &'static [&'static str] = &["APPCAST_REQ", "TERM_REPORT_INTERVAL"];

    /// Mail for the framework (`true`: handled, not for the simulator):
    /// `APPCAST_REQ` (a string) and `TERM_REPORT_INTERVAL` (a double, at
    /// least 0.4 s), at MOOS time `now`.
    pub fn on_mail(&mut self, key: &str, sval: &str, dval: f64, now: f64) -> bool {
        match key {
            "APPCAST_REQ" => {
                self.request(sval, now);
                true
            }
            "TERM_REPORT_INTERVAL" => {
                if dval.is_finite() {
                    self.term_report_interval = dval.clamp(0.4, 1e9);
                }
                true
            }
            _ => false,
        }
    }

    /// `handleMailAppCastRequest`: `node=N,app=A,duration=S,key=K,thresh=T`;
    /// node and app must be ours or `all`, the key must be given.
    fn request(&mut self, text: &str, now: f64) {
        if text.len() > MAX_REQUEST_LEN {
            return;
        }
        let (mut key, mut duration, mut thresh) = (String::new(), 0.0, "any".to_string());
        for pair in text.split(',') {
            let (p, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = v.trim();
            match p.trim().to_ascii_uppercase().as_str() {
                "NODE" if v != self.cast.node_name && v != "all" => return,
                "APP" if v != self.cast.proc_name && v != "all" => return,
                "DURATION" => duration = atof(v),
                "THRESH" => thresh = v.to_string(),
                "KEY" => key = v.to_string(),
                _ => {}
            }
        }
        if key.is_empty() {
            return;
        }
        if !self.requests.contains_key(&key) && self.requests.len() >= MAX_REQUESTS {
            // Forget the oldest requester: the table stays bounded.
            if let Some(old) = self
                .requests
                .iter()
                .min_by(|a, b| a.1.start.total_cmp(&b.1.start))
                .map(|(k, _)| k.clone())
            {
                self.requests.remove(&old);
            }
        }
        self.requests.insert(
            key,
            Request {
                duration: duration.clamp(0.0, 30.0),
                start: now,
                thresh,
            },
        );
    }

    /// Requesters remembered (at most [`MAX_REQUESTS`]).
    pub fn requests_len(&self) -> usize {
        self.requests.len()
    }

    /// `appcastRequested`: a live request (`any`, or `run_warning` with a
    /// new run warning), or a new configuration warning.
    fn requested(&self, now: f64) -> bool {
        self.new_cfg_warning
            || self.requests.values().any(|r| {
                now - r.start < r.duration
                    && (r.thresh == "any" || (r.thresh == "run_warning" && self.new_run_warning))
            })
    }

    /// `PostReport`, at the end of iteration `iteration` at MOOS time `now`:
    /// the `APPCAST` string when one is due (`body` builds the report only
    /// then). The first one goes at the first iteration, as MOOS's, or at
    /// the first connected one (usim calls this only when connected).
    pub fn post_report(
        &mut self,
        iteration: u64,
        now: f64,
        body: impl FnOnce() -> String,
    ) -> Option<String> {
        self.cast.iteration = iteration;
        let pending = self.requested(now) || iteration < 2 || !self.posted;
        let real_elapsed = (now - self.last_appcast) / self.time_warp;
        if !pending || real_elapsed < self.term_report_interval {
            return None;
        }
        self.cast.messages = body();
        self.new_cfg_warning = false;
        self.new_run_warning = false;
        self.last_appcast = now;
        self.posted = true;
        Some(self.cast.to_wire())
    }
}

/// C's `atof`: the longest number prefix, else 0.
fn atof(s: &str) -> f64 {
    let s = s.trim_start();
    let mut end = 0;
    for (i, _) in s.char_indices().skip(1).chain([(s.len(), ' ')]) {
        if s[..i].parse::<f64>().is_ok() {
            end = i;
        }
    }
    s[..end]
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .unwrap_or(0.0)
}

/// MOOS-IvP's `ACTable` (lib_apputil/ACTable.cpp): cells row by row,
/// `{}` a header line of dashes, columns padded to their widest cell
/// (left-justified, or right), a pad string after each column but the
/// last, trailing blanks removed from each row; rows joined by `\n` (no
/// final newline).
struct Table {
    columns: usize,
    pads: Vec<String>,
    right: Vec<bool>,
    cells: Vec<String>,
}

impl Table {
    fn new(columns: usize, pad: usize) -> Table {
        Table {
            columns,
            pads: vec![" ".repeat(pad); columns],
            right: vec![false; columns],
            cells: Vec::new(),
        }
    }

    /// `actab << "a | b | c"`: cells split at `|`, blanks trimmed.
    fn row(&mut self, s: &str) -> &mut Table {
        self.cells
            .extend(s.split('|').map(|c| c.trim().to_string()));
        self
    }

    fn cell(&mut self, s: impl Into<String>) -> &mut Table {
        self.cells.push(s.into());
        self
    }

    fn header_lines(&mut self) {
        for _ in 0..self.columns {
            self.cells.push("{}".into());
        }
    }

    fn render(&self) -> String {
        let rows: Vec<&[String]> = self.cells.chunks(self.columns).collect();
        let mut width = vec![0usize; self.columns];
        for r in &rows {
            for (j, c) in r.iter().enumerate() {
                width[j] = width[j].max(c.chars().count());
            }
        }
        let mut out = Vec::new();
        for r in rows {
            let mut line = String::new();
            for (j, w) in width.iter().enumerate() {
                let c = r.get(j).map_or("", String::as_str);
                let cell = if c == "{}" {
                    "-".repeat(*w)
                } else if self.right[j] {
                    format!("{c:>w$}", w = *w)
                } else {
                    format!("{c:<w$}", w = *w)
                };
                line.push_str(&cell);
                if j + 1 < self.columns {
                    line.push_str(&self.pads[j]);
                }
            }
            out.push(line.trim_end().to_string());
        }
        out.join("\n")
    }
}

/// A double as C++'s `ostream << double` writes it (6 significant digits).
fn g6(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e6 {
        return format!("{}", v as i64);
    }
    let digits = 5 - v.abs().log10().floor().clamp(-5.0, 5.0) as i32;
    fmt_x(v, digits.max(0) as usize)
}

fn tf(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// The body of the appcast: uSimMarine's (`classic`) or uSimMarineV22's
/// `buildReport` (USM_MOOSApp.cpp), from the configuration (the start) and
/// the vehicle now. Units: m, m/s, degrees.
pub fn report(cfg: &VehicleConfig, v: &Vehicle, enabled: bool) -> String {
    let p = v.params();
    let start = &cfg.params.start;
    let s = v.snapshot();
    let gt = v.ground_truth();
    let v22 = p.variant == ModelVariant::V22;
    let water = p.default_water_depth;
    let alt = |d: f64| (water - d).max(0.0);
    let (lat, lon) = if s.lat.is_finite() && s.lon.is_finite() {
        (s.lat, s.lon)
    } else {
        (0.0, 0.0)
    };
    let datum = match p.origin {
        Some((la, lo)) => format!("{},{}", fmt_x(la, 9), fmt_x(lo, 9)),
        None if v22 => "?,?".into(),
        None => "0,0".into(),
    };
    let mut m = String::new();
    if v22 {
        m.push_str(&format!("Enabled:  {}\n", tf(enabled)));
        m.push_str(&format!("TurnRate: {}\n", fmt_x(p.turn_rate, 2)));
        m.push_str(&format!("TurnRadius: {}\n", fmt_x(p.turn_radius, 2)));
        m.push_str(&format!("Datum: {datum}\n"));
        // WindModel::getModelSpec (ivp/src/lib_polar/WindModel.cpp)
        m.push_str(&format!(
            "Sailing:\n  WindModel: spd={}, dir={}\n  PolarPlot: \n",
            fmt_x(p.sailing.wind.speed, 3),
            fmt_x(p.sailing.wind.dir, 5)
        ));
        m.push_str(&format!("  Enabled:   {}\n", tf(p.sailing.enabled())));
        if let Some(t) = &p.post_des_thrust {
            m.push_str(&format!("  post_des_thrust:   {t}\n"));
        }
        if let Some(r) = &p.post_des_rudder {
            m.push_str(&format!("  post_des_rudder:   {r}\n"));
        }
        m.push_str("\n\n");
    } else {
        m.push_str(&format!("Enabled: {}\n", tf(enabled)));
        m.push_str(&format!("Datum: {datum}\n\n"));
    }
    // Part 1: the pose.
    let mut t = Table::new(6, 1);
    t.row("Start | Pose | Current | Pose (NAV) | Current | Pose (GT)");
    t.header_lines();
    t.pads[1] = "   ".into();
    t.pads[3] = "   ".into();
    t.right[0] = true;
    t.right[2] = true;
    t.right[4] = true;
    let dual = p.dual_state;
    let gt_or = |t: &mut Table, label: &str, value: String| {
        if dual {
            t.cell(label).cell(value);
        } else {
            t.cell(" ").cell("-");
        }
    };
    t.cell("Headng:").cell(fmt_x(start.heading, 1));
    t.cell("Headng:").cell(fmt_x(s.heading, 1));
    if dual {
        t.cell("Headng:").cell(fmt_x(gt.heading, 1));
    } else {
        t.cell("(same)").cell("-");
    }
    t.cell("Speed:").cell(fmt_x(start.speed, 2));
    t.cell("Speed:").cell(fmt_x(s.speed, 2));
    gt_or(&mut t, "Speed:", fmt_x(gt.speed, 2));
    t.cell("Depth:").cell(fmt_x(start.depth, 2));
    t.cell("Depth:").cell(fmt_x(s.depth, 1));
    gt_or(&mut t, "Depth:", fmt_x(gt.depth, 1));
    t.cell("Alt:").cell(fmt_x(alt(start.depth), 2));
    t.cell("Alt:").cell(fmt_x(alt(s.depth), 1));
    gt_or(&mut t, "Alt:", fmt_x(alt(gt.depth), 1));
    t.cell("(X,Y):")
        .cell(format!("{},{}", fmt_x(start.x, 2), fmt_x(start.y, 2)));
    t.cell("(X,Y):")
        .cell(format!("{},{}", fmt_x(s.x, 2), fmt_x(s.y, 2)));
    gt_or(
        &mut t,
        "(X,Y):",
        format!("{},{}", fmt_x(gt.x, 2), fmt_x(gt.y, 2)),
    );
    t.cell("Lat:").cell("0");
    t.cell("Lat:").cell(fmt_x(lat, 8));
    gt_or(&mut t, "Lat:", fmt_x(lat, 8));
    t.cell("Lon:").cell("0");
    t.cell("Lon:").cell(fmt_x(lon, 8));
    gt_or(&mut t, "Lon:", fmt_x(lon, 8));
    m.push_str(&t.render());
    // Part 2: buoyancy.
    m.push_str(if v22 { "\n\n" } else { "\n" });
    m.push_str(&format!(
        "Present Buoyancy rate: {}\n",
        fmt_x(p.buoyancy_rate, 8)
    ));
    m.push_str(&format!(
        "        Starting rate: {}\n",
        fmt_x(cfg.params.buoyancy_rate, 8)
    ));
    if !v22 {
        m.push_str("               Source: initial_config\n");
    }
    // Part 3: external drift.
    m.push('\n');
    let mut t = Table::new(7, 2);
    t.row("Ext Drift | X | Y | Mag | Ang | Rot. |Source(s)");
    t.header_lines();
    t.right[0] = true;
    t.pads[2] = "  |  ".into();
    t.pads[4] = "  |  ".into();
    t.pads[5] = "  |  ".into();
    let (smag, sang) = polar((cfg.params.drift_x, cfg.params.drift_y));
    t.cell("Starting")
        .cell(fmt_x(cfg.params.drift_x, 4))
        .cell(fmt_x(cfg.params.drift_y, 4))
        .cell(fmt_x(smag, 4))
        .cell(fmt_x(if smag == 0.0 { 0.0 } else { sang }, 4))
        .cell(fmt_x(cfg.params.rotate_speed, 4))
        .cell("init_config");
    let (mag, ang) = polar((s.drift_x, s.drift_y));
    let mag_s = fmt_x(mag, 4);
    let ang_s = if mag_s == "0" {
        "0".to_string()
    } else {
        fmt_x(ang, 4)
    };
    t.cell("Present")
        .cell(fmt_x(s.drift_x, 3))
        .cell(fmt_x(s.drift_y, 3))
        .cell(mag_s)
        .cell(ang_s)
        .cell(fmt_x(p.rotate_speed, 4))
        .cell("n/a");
    m.push_str(&t.render());
    m.push_str("\n\n");
    // Part 4: speed and thrust.
    m.push_str("Velocity Information: \n--------------------- \n");
    m.push_str(&format!(
        "     DESIRED_THRUST={} ==> SPEED={}\n",
        fmt_x(s.thrust, 1),
        fmt_x(s.speed, 2)
    ));
    let map = &p.thrust_map;
    let factor = map.positive().is_empty();
    m.push_str(&format!("     Using Thrust_Factor: {}", tf(factor)));
    if factor {
        m.push_str(&format!(" ({})", fmt_x(map.thrust_factor(), 4)));
    }
    m.push('\n');
    if v22 {
        m.push_str(&format!(
            "           Using Sailing: {}\n",
            tf(p.sailing.enabled())
        ));
        m.push_str(&format!("    PID Coupled: {}\n", tf(p.pid.is_some())));
    }
    let pairs = |side: &[(f64, f64)], sep: &str| -> String {
        let v: Vec<String> = side
            .iter()
            .map(|(t, s)| format!("{}{sep}{}", fmt_x(*t, 4), fmt_x(*s, 4)))
            .collect();
        if v.is_empty() {
            "n/a".into()
        } else {
            v.join(", ")
        }
    };
    m.push_str(&format!(
        "     Positive Thrust Map: {}\n",
        pairs(map.positive(), ",")
    ));
    m.push_str(&format!(
        "     Negative Thrust Map: {}\n",
        pairs(map.negative(), ":")
    ));
    m.push_str(&format!(
        "        Max Accereration: {}\n",
        fmt_x(p.max_acceleration, 6)
    ));
    m.push_str(&format!(
        "        Max Decereration: {}\n\n",
        fmt_x(p.max_deceleration, 6)
    ));
    let diff = p.thrust_mode_diff;
    m.push_str(&format!(
        "             Thrust Mode: {}\n",
        if diff { "differential" } else { "normal" }
    ));
    m.push_str(&format!(
        "     Thrust Mode Reverse: {}\n",
        tf(p.thrust_mode_reverse)
    ));
    let lr = |x: f64| {
        if diff {
            fmt_x(x, 2)
        } else {
            "n/a".into()
        }
    };
    m.push_str(&format!("        DESIRED_THRUST_L: {}\n", lr(s.thrust_l)));
    m.push_str(&format!("        DESIRED_THRUST_R: {}\n", lr(s.thrust_r)));
    // Part 5: depth.
    m.push_str("\nDepth Information: \n------------------ \n");
    m.push_str(&format!(
        "           Max Depth Rate: {}\n",
        fmt_x(p.max_depth_rate, 6)
    ));
    m.push_str(&format!(
        "     Max Depth Rate Speed: {}\n",
        fmt_x(p.max_depth_rate_speed, 6)
    ));
    m.push_str(&format!("              Water Depth: {}\n", g6(water)));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caster(warp: f64) -> AppCaster {
        AppCaster::new(
            "uSimMarineV22",
            "alpha",
            warp,
            ModelVariant::V22,
            &CastSettings::default(),
            &[],
        )
    }

    #[test]
    fn wire_string_is_appcast_cpps() {
        let mut c = AppCast {
            proc_name: "uSimMarine".into(),
            node_name: "alpha".into(),
            iteration: 12,
            messages: "a\n\nb c\n".into(),
            ..AppCast::default()
        };
        c.cfg_warning("w1");
        c.cfg_warning("w2");
        c.event("e1", 1.234);
        c.run_warning("r");
        c.run_warning("r");
        assert_eq!(
            c.to_wire(),
            "proc=uSimMarine!@#iter=12!@#node=alpha!@#iter=12!@#messages=a!@!@b c!@!@#\
             config_warnings=w1!@w2!@#events_total=1!@#events=[1.23]: e1!@#\
             run_warning_total=2!@#run_warnings=2:r"
        );
        let empty = AppCast::default().to_wire();
        assert_eq!(
            empty,
            "proc=!@#iter=0!@#iter=0!@#messages=!@#!@#events_total=0!@#!@#run_warning_total=0!@#"
        );
    }

    #[test]
    fn separators_in_text_cannot_split_the_string() {
        let mut c = AppCast::default();
        c.cfg_warning("x!@#y\nz");
        c.cfg_warning("#top");
        assert_eq!(c.config_warnings, ["x! @#y z", " #top"]);
    }

    #[test]
    fn first_iteration_then_only_on_request_throttled_by_real_time() {
        let mut c = caster(10.0);
        let body = || "body".to_string();
        assert!(c.post_report(1, 100.0, body).is_some(), "iteration 1 posts");
        assert!(c.post_report(2, 101.0, body).is_none(), "no request");
        // a request for 5 MOOS s from uMAC
        assert!(c.on_mail(
            "APPCAST_REQ",
            "node=alpha,app=uSimMarineV22,duration=5,key=uMAC_1,thresh=any",
            0.0,
            102.0
        ));
        // 0.5 real s at warp 10 is 5 MOOS s since the last (at 100)
        assert!(c.post_report(3, 104.0, body).is_none(), "throttled");
        assert!(c.post_report(4, 105.0, body).is_some());
        assert!(c.post_report(5, 106.9, body).is_none(), "throttled");
        assert!(c.post_report(6, 107.5, body).is_none(), "expired at 107");
        // another node, another app, no key: ignored
        for r in [
            "node=bravo,app=all,duration=5,key=k",
            "node=all,app=pHelmIvP,duration=5,key=k",
            "node=all,app=all,duration=5",
        ] {
            c.on_mail("APPCAST_REQ", r, 0.0, 110.0);
            assert!(c.post_report(7, 120.0, body).is_none(), "{r}");
        }
        // durations clip to 30 s; a new config warning forces one
        c.on_mail(
            "APPCAST_REQ",
            "node=all,app=all,duration=1000,key=k",
            0.0,
            200.0,
        );
        assert!(c.post_report(8, 229.0, body).is_some());
        assert!(c.post_report(9, 231.0, body).is_none(), "30 s at most");
        c.cfg_warning("late");
        let s = c.post_report(10, 240.0, body).unwrap();
        assert!(s.contains("config_warnings=late"), "{s}");
        assert!(c.post_report(11, 250.0, body).is_none());
    }

    #[test]
    fn run_warning_thresh_needs_a_new_run_warning() {
        let mut c = caster(1.0);
        c.post_report(1, 10.0, String::new);
        c.on_mail(
            "APPCAST_REQ",
            "node=alpha,app=all,duration=10,key=k,thresh=run_warning",
            0.0,
            10.0,
        );
        assert!(c.post_report(2, 11.0, String::new).is_none());
        c.run_warning("oops");
        assert!(c.post_report(3, 12.0, String::new).is_some());
        assert!(c.post_report(4, 13.0, String::new).is_none());
    }

    #[test]
    fn term_report_interval_by_mail_and_a_bounded_request_table() {
        let mut c = caster(1.0);
        c.post_report(1, 10.0, String::new);
        c.on_mail("TERM_REPORT_INTERVAL", "", 0.1, 10.0);
        c.on_mail(
            "APPCAST_REQ",
            "node=all,app=all,duration=30,key=k",
            0.0,
            10.0,
        );
        assert!(
            c.post_report(2, 10.3, String::new).is_none(),
            "0.4 s at least"
        );
        assert!(c.post_report(3, 10.41, String::new).is_some());
        for i in 0..1000 {
            c.on_mail(
                "APPCAST_REQ",
                &format!("node=all,app=all,duration=30,key=k{i}"),
                0.0,
                20.0 + i as f64,
            );
        }
        assert!(c.requests.len() <= MAX_REQUESTS);
        assert!(c.requests.contains_key("k999"));
    }

    #[test]
    fn classic_is_deprecated_unless_deprecated_ok() {
        let c = AppCaster::new(
            "uSimMarine",
            "a",
            1.0,
            ModelVariant::Classic,
            &CastSettings::default(),
            &[],
        );
        assert_eq!(c.cast.run_warning_total, 3);
        let (s, w) = CastSettings::from_block(&[("deprecated_ok".into(), "true".into())]);
        assert!(w.is_empty());
        let c = AppCaster::new("uSimMarine", "a", 1.0, ModelVariant::Classic, &s, &[]);
        assert_eq!(c.cast.run_warning_total, 0);
    }

    #[test]
    fn atof_reads_a_number_prefix() {
        assert_eq!(atof("10"), 10.0);
        assert_eq!(atof("2.5s"), 2.5);
        assert_eq!(atof("x"), 0.0);
        assert_eq!(atof(""), 0.0);
        assert_eq!(atof("1e400"), 0.0);
    }

    #[test]
    fn tables_pad_justify_and_draw_header_lines() {
        let mut t = Table::new(3, 1);
        t.row("A | Bee | C");
        t.header_lines();
        t.right[0] = true;
        t.cell("xyz").cell("1").cell("");
        // `{}` itself counts as a 2-wide cell, as in ACTable
        assert_eq!(t.render(), "  A Bee C\n--- --- --\nxyz 1");
    }
}
