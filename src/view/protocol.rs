//! The protocol state of `usim view`, sans IO: the fleet model built from
//! MQTT messages, the frame clock that coalesces updates to at most N
//! frames per second, the parser of the page's WebSocket messages, the
//! command check (the same as `usim post`'s), and the HTTP handshake check.
//!
//! Nothing here reads a clock, a socket or a file: times are arguments
//! (seconds on any monotonic scale), messages are byte slices and strings.
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::mqtt::tools::would_accept;
use crate::mqtt::topics::{NODE_REPORT, OFFLINE, ONLINE, STATUS, USM_TIME};

/// Default for the most vehicles the model keeps (`--max-vehicles`): when
/// the table is full, a new name pushes out the vehicle silent for longest,
/// so a flood of made-up names cannot hide vehicles that come later, nor
/// grow the server's memory without bound.
pub const MAX_VEHICLES: usize = 1024;
/// The largest `--max-vehicles` accepted.
pub const MAX_VEHICLES_LIMIT: usize = 100_000;
/// Default expiry (`--expire`), s: a vehicle not heard from for this long
/// (no status, report or clock message) leaves the table.
pub const DEFAULT_EXPIRE_S: f64 = 60.0;
/// Largest MQTT payload the view reads, bytes: larger messages are counted
/// and ignored (the connection stays up).
pub const MAX_PAYLOAD: usize = 256 * 1024;
/// Points of the trail the server keeps per vehicle (sent to a page that
/// connects, so trails begin before the page opened).
pub const TRAIL_POINTS: usize = 300;
/// A new trail point after the vehicle moved this far, m.
pub const TRAIL_STEP_M: f64 = 0.5;
/// Longest vehicle name kept, bytes.
pub const MAX_NAME_LEN: usize = 128;
/// Longest WebSocket message accepted from the page, bytes.
pub const MAX_CLIENT_MESSAGE: usize = 4096;
/// Longest command value accepted from the page, bytes.
pub const MAX_VALUE_LEN: usize = 512;

/// The variables the page may post, and nothing else (no arbitrary topics).
pub const COMMAND_VARS: &[&str] = &[
    "DESIRED_THRUST",
    "DESIRED_RUDDER",
    "DESIRED_ELEVATOR",
    "USM_RESET",
    "DRIFT_VECTOR_ADD",
    "USM_SIM_PAUSED",
];

/// The part of a `NODE_REPORT` the page draws. Fields the vehicle does not
/// send, sends as `null` (NaN) or this version does not know are ignored:
/// the report may grow new fields without breaking the view.
/// Units: m, m/s, degrees, percent, s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    /// Iteration index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<f64>,
    /// Mission time, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    /// East, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    /// North, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    /// Heading, degrees (0 = north, clockwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heading: Option<f64>,
    /// Speed, m/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// Depth, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<f64>,
    /// Latitude, degrees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat: Option<f64>,
    /// Longitude, degrees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lon: Option<f64>,
    /// Drift east, m/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_x: Option<f64>,
    /// Drift north, m/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_y: Option<f64>,
    /// Thrust, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thrust: Option<f64>,
    /// Rudder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rudder: Option<f64>,
    /// Elevator, percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elevator: Option<f64>,
    /// Water current at the vehicle, east, m/s (when the vehicle has a field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_x: Option<f64>,
    /// Water current at the vehicle, north, m/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_y: Option<f64>,
    /// Wind speed at the vehicle (mean plus gust), m/s (`[wind]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wind_speed: Option<f64>,
    /// Direction the wind comes from, degrees clockwise from north.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wind_direction: Option<f64>,
    /// Significant wave height Hs of the vehicle's sea, m (`[sea]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sea_hs: Option<f64>,
    /// Peak period Tp of the sea, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sea_tp: Option<f64>,
    /// Mean direction the waves come from, degrees clockwise from north.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sea_direction: Option<f64>,
    /// Heave of the hull, m, up (when the report carries it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heave: Option<f64>,
    /// What the sensors published (`[sensors]`): the sensed GPS fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensed: Option<SensedFix>,
}

/// The `sensed` block of a `NODE_REPORT` as the page draws it: the
/// published position (m; `None` in a dropout), the GGA fix quality
/// (0: no fix) and the HDOP. Other fields of the block are ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SensedFix {
    /// Sensed east, m (`null`: no fix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    /// Sensed north, m (`null`: no fix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    /// GGA fix quality (0: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<f64>,
    /// Horizontal dilution of precision (`null` without a fix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdop: Option<f64>,
}

impl Report {
    /// Parse a `NODE_REPORT` payload: a JSON object; every known field a
    /// finite number or `null`.
    pub fn parse(payload: &[u8]) -> Result<Report, String> {
        // serde would also take a JSON array as a struct: insist on an object.
        if payload.trim_ascii_start().first() != Some(&b'{') {
            return Err("not a JSON object".into());
        }
        let r: Report = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        if r.fields().iter().flatten().any(|v| !v.is_finite()) {
            return Err("a number is out of range".into());
        }
        Ok(r)
    }

    /// The report as a frame carries it: lengths and speeds to 1 mm (/s),
    /// angles to 0.01°, times to 1 ms, latitude and longitude to 1e-8°
    /// (about 1 mm): a frame is sent to every page, so its size is what a
    /// page costs.
    pub fn rounded(&self) -> Report {
        let r = |v: Option<f64>, d: f64| {
            v.map(|x| {
                let y = (x * d).round() / d;
                if y.is_finite() {
                    y
                } else {
                    x
                }
            })
        };
        Report {
            k: self.k,
            t: r(self.t, 1e3),
            x: r(self.x, 1e3),
            y: r(self.y, 1e3),
            heading: r(self.heading, 1e2),
            speed: r(self.speed, 1e3),
            depth: r(self.depth, 1e3),
            lat: r(self.lat, 1e8),
            lon: r(self.lon, 1e8),
            drift_x: r(self.drift_x, 1e3),
            drift_y: r(self.drift_y, 1e3),
            thrust: r(self.thrust, 1e3),
            rudder: r(self.rudder, 1e3),
            elevator: r(self.elevator, 1e3),
            current_x: r(self.current_x, 1e3),
            current_y: r(self.current_y, 1e3),
            wind_speed: r(self.wind_speed, 1e3),
            wind_direction: r(self.wind_direction, 1e2),
            sea_hs: r(self.sea_hs, 1e3),
            sea_tp: r(self.sea_tp, 1e3),
            sea_direction: r(self.sea_direction, 1e2),
            heave: r(self.heave, 1e3),
            sensed: self.sensed.map(|f| SensedFix {
                x: r(f.x, 1e3),
                y: r(f.y, 1e3),
                fix: f.fix,
                hdop: r(f.hdop, 1e2),
            }),
        }
    }

    /// Every numeric field (`None` = absent), for checks that hold for all.
    pub fn fields(&self) -> [Option<f64>; 26] {
        let f = self.sensed.unwrap_or_default();
        [
            self.k,
            self.t,
            self.x,
            self.y,
            self.heading,
            self.speed,
            self.depth,
            self.lat,
            self.lon,
            self.drift_x,
            self.drift_y,
            self.thrust,
            self.rudder,
            self.elevator,
            self.current_x,
            self.current_y,
            self.wind_speed,
            self.wind_direction,
            self.sea_hs,
            self.sea_tp,
            self.sea_direction,
            self.heave,
            f.x,
            f.y,
            f.fix,
            f.hdop,
        ]
    }
}

/// The platform fields of a `NODE_REPORT` (sent by vehicles that know
/// them; absent in older reports).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
struct PlatformFields {
    platform_type: Option<String>,
    platform_length: Option<f64>,
}

/// Longest `platform_type` kept, bytes.
pub const MAX_PLATFORM_TYPE: usize = 32;

/// What the view knows of one vehicle.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VehicleView {
    /// Retained `status`: `Some(true)` online, `Some(false)` offline,
    /// `None` not seen yet.
    pub online: Option<bool>,
    /// The latest `NODE_REPORT`.
    pub report: Option<Report>,
    /// When it arrived (caller's clock, s).
    pub report_at: Option<f64>,
    /// When any message of this name last arrived (caller's clock, s).
    pub heard_at: f64,
    /// Platform type from the report (`kayak`, `uuv`, …), lower case.
    pub platform_type: Option<String>,
    /// Platform length from the report, m (finite, > 0).
    pub platform_length: Option<f64>,
    /// The vehicle clock (`USM_TIME`, Unix s) and when it arrived.
    pub clock: Option<(f64, f64)>,
    /// Measured time warp: vehicle-clock seconds per caller second,
    /// smoothed over the `USM_TIME` messages.
    pub warp: Option<f64>,
    /// The bounded trail: positions (m) at least [`TRAIL_STEP_M`] apart,
    /// at most [`TRAIL_POINTS`].
    pub trail: VecDeque<[f64; 2]>,
    /// The last `DESIRED_THRUST` / `DESIRED_RUDDER` seen on the vehicle's
    /// topics (a MOOS community mirrored by the bridge posts them; its
    /// NODE_REPORT does not carry them), percent.
    pub desired: (Option<f64>, Option<f64>),
    /// `report_at` of the report at which the last `OBSTACLE_HIT` was
    /// placed: one search of the polygons per report, however many hits
    /// arrive.
    pub hit_report_at: Option<f64>,
}

impl VehicleView {
    /// Whether the name has sent a `NODE_REPORT`: only such names are
    /// vehicles (a fleet's own `status` is not a vehicle, nor is a name
    /// that only ever sent a status).
    pub fn is_vehicle(&self) -> bool {
        self.report.is_some()
    }

    fn push_trail(&mut self, x: f64, y: f64) {
        if let Some(last) = self.trail.back() {
            if (x - last[0]).hypot(y - last[1]) < TRAIL_STEP_M {
                return;
            }
        }
        if self.trail.len() >= TRAIL_POINTS {
            self.trail.pop_front();
        }
        self.trail.push_back([x, y]);
    }
}

/// Why an MQTT message was not taken into the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped(pub String);

impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The fleet as the MQTT messages under one topic root describe it.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// `{root}/`.
    prefix: String,
    vehicles: BTreeMap<String, VehicleView>,
    dirty: bool,
    max_vehicles: usize,
    expire_s: f64,
    /// Vehicles pushed out of a full table.
    pub evicted: u64,
    /// Vehicles removed after `expire_s` of silence.
    pub expired: u64,
    /// MOOS geometry (`VIEW_*` postings), bounded.
    pub shapes: super::geometry::Shapes,
    /// The mission's pMarineViewer buttons and the community they post to.
    buttons: Option<(String, Vec<super::buttons::Button>)>,
}

/// The MOOS community clock the bridge mirrors (`DB_TIME`, MOOS s): the
/// clock of a MOOS vehicle, as `USM_TIME` is a usim vehicle's.
pub const DB_TIME: &str = "DB_TIME";
/// The setpoints a MOOS community posts (the helm's, through the PID).
const SETPOINTS: [&str; 2] = ["DESIRED_THRUST", "DESIRED_RUDDER"];
/// A vehicle met an obstacle (docs/obstacles.md §4): the view marks the
/// polygon nearest to the vehicle's last report as hit.
pub const OBSTACLE_HIT: &str = "OBSTACLE_HIT";

impl Fleet {
    /// An empty fleet under `topic_root` (e.g. `usim`), with the default
    /// table size and expiry.
    pub fn new(topic_root: &str) -> Fleet {
        Fleet::with_limits(topic_root, MAX_VEHICLES, DEFAULT_EXPIRE_S)
    }

    /// An empty fleet keeping at most `max_vehicles` (≥ 1) names, each
    /// until it has been silent for `expire_s` seconds.
    pub fn with_limits(topic_root: &str, max_vehicles: usize, expire_s: f64) -> Fleet {
        Fleet {
            prefix: format!("{topic_root}/"),
            vehicles: BTreeMap::new(),
            dirty: false,
            max_vehicles: max_vehicles.max(1),
            expire_s,
            evicted: 0,
            expired: 0,
            shapes: super::geometry::Shapes::default(),
            buttons: None,
        }
    }

    /// Show the mission's pMarineViewer buttons, posting to `community`.
    pub fn set_buttons(&mut self, community: &str, buttons: Vec<super::buttons::Button>) {
        self.buttons = Some((community.to_string(), buttons));
    }

    /// The buttons as one JSON message for a page that connects:
    /// `{"type":"buttons","community":"alpha","buttons":[{"label":..,"posts":[[VAR,VALUE],…]}]}`.
    pub fn buttons_json(&self) -> String {
        match &self.buttons {
            Some((c, b)) => {
                serde_json::json!({ "type": "buttons", "community": c, "buttons": b }).to_string()
            }
            None => r#"{"type":"buttons","buttons":[]}"#.into(),
        }
    }

    /// A click on button `index`: every posting of it, in order, to
    /// `{root}/{community}/{VAR}`. A MOOS community takes any variable, so
    /// the values are not checked against uSimMarine's (they come from the
    /// mission file, never from the page).
    pub fn check_button(&self, id: u64, index: usize) -> Result<Vec<Publish>, Refusal> {
        let Some((community, buttons)) = &self.buttons else {
            return Err(Refusal::new(
                id,
                "no buttons: start usim view with the mission file",
            ));
        };
        let b = buttons
            .get(index)
            .ok_or_else(|| Refusal::new(id, format!("no button {index}")))?;
        Ok(b.posts
            .iter()
            .map(|(var, value)| Publish {
                id,
                topic: format!("{}{community}/{var}", self.prefix),
                payload: value.clone(),
            })
            .collect())
    }

    /// The MQTT filters the view subscribes to: status (the first, QoS 1),
    /// report, clock and the MOOS geometry variables.
    pub fn filters(&self) -> Vec<String> {
        [STATUS, NODE_REPORT, USM_TIME, DB_TIME]
            .into_iter()
            .chain(SETPOINTS)
            .chain([OBSTACLE_HIT])
            .chain(super::geometry::VIEW_VARS.iter().map(|(v, _)| *v))
            .map(|v| format!("{}+/{v}", self.prefix))
            .collect()
    }

    /// Remove the vehicles not heard from for `expire_s` at `now`; returns
    /// how many went.
    pub fn expire(&mut self, now: f64) -> usize {
        let before = self.vehicles.len();
        let limit = self.expire_s;
        self.vehicles.retain(|_, v| now - v.heard_at <= limit);
        let gone = before - self.vehicles.len();
        if gone > 0 {
            self.expired += gone as u64;
            self.dirty = true;
        }
        gone
    }

    /// The vehicles by name.
    pub fn vehicles(&self) -> &BTreeMap<String, VehicleView> {
        &self.vehicles
    }

    /// Whether something changed since the last [`Fleet::frame`].
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Take one MQTT message (`now`: arrival time, s). Messages on other
    /// topics, bad status words and malformed reports are dropped with a
    /// reason; the model is then unchanged.
    pub fn on_message(&mut self, topic: &str, payload: &[u8], now: f64) -> Result<(), Dropped> {
        let rest = topic
            .strip_prefix(self.prefix.as_str())
            .ok_or_else(|| Dropped(format!("topic {topic:?} is not under {:?}", self.prefix)))?;
        let (name, var) = rest
            .split_once('/')
            .filter(|(n, v)| !n.is_empty() && !v.contains('/'))
            .ok_or_else(|| Dropped(format!("topic {topic:?} is not ROOT/VEHICLE/VARIABLE")))?;
        if name.len() > MAX_NAME_LEN {
            return Err(Dropped(format!(
                "vehicle name longer than {MAX_NAME_LEN} bytes"
            )));
        }
        if let Some((_, kind)) = super::geometry::VIEW_VARS.iter().find(|(v, _)| *v == var) {
            let p = super::geometry::parse(*kind, name, payload, now)
                .map_err(|e| Dropped(format!("{topic}: {e}")))?;
            self.shapes.apply(name, p, now);
            return Ok(());
        }
        if var == OBSTACLE_HIT {
            self.on_hit(name, payload);
            return Ok(());
        }
        enum Update {
            Status(bool),
            Report(Box<Report>, PlatformFields),
            Clock(f64),
            Setpoint(usize, f64),
        }
        let update = match var {
            STATUS => match payload {
                p if p == ONLINE.as_bytes() => Update::Status(true),
                p if p == OFFLINE.as_bytes() => Update::Status(false),
                _ => {
                    return Err(Dropped(format!(
                        "{topic}: status must be {ONLINE:?} or {OFFLINE:?}"
                    )))
                }
            },
            NODE_REPORT => match Report::parse(payload) {
                Ok(r) => {
                    let p: PlatformFields = serde_json::from_slice(payload).unwrap_or_default();
                    Update::Report(Box::new(r), p)
                }
                Err(e) => return Err(Dropped(format!("{topic}: malformed NODE_REPORT: {e}"))),
            },
            USM_TIME | DB_TIME => match number(payload) {
                Some(t) => Update::Clock(t),
                None => return Err(Dropped(format!("{topic}: {var} is not a finite number"))),
            },
            v if SETPOINTS.contains(&v) => {
                // Only for a known vehicle: a setpoint alone (a command
                // sent to a name) makes no vehicle.
                if !self.vehicles.get(name).is_some_and(VehicleView::is_vehicle) {
                    return Ok(());
                }
                match number(payload) {
                    Some(x) => Update::Setpoint(usize::from(v == "DESIRED_RUDDER"), x),
                    None => return Ok(()), // a command the vehicle drops
                }
            }
            _ => {
                return Err(Dropped(format!(
                    "{topic}: not a status, NODE_REPORT, USM_TIME or DB_TIME"
                )))
            }
        };
        if !self.vehicles.contains_key(name) && self.vehicles.len() >= self.max_vehicles {
            // Full: the name silent for longest goes (ties: the first by name).
            let oldest = self
                .vehicles
                .iter()
                .min_by(|a, b| a.1.heard_at.total_cmp(&b.1.heard_at))
                .map(|(n, _)| n.clone());
            if let Some(n) = oldest {
                self.vehicles.remove(&n);
                self.evicted += 1;
            }
        }
        let v = self.vehicles.entry(name.to_string()).or_default();
        v.heard_at = now;
        match update {
            Update::Status(online) => v.online = Some(online),
            Update::Setpoint(i, x) => {
                if i == 0 {
                    v.desired.0 = Some(x);
                } else {
                    v.desired.1 = Some(x);
                }
            }
            Update::Report(r, p) => {
                if let (Some(x), Some(y)) = (r.x, r.y) {
                    v.push_trail(x, y);
                }
                v.report = Some(*r);
                v.report_at = Some(now);
                v.platform_type = p
                    .platform_type
                    .filter(|t| !t.is_empty() && t.len() <= MAX_PLATFORM_TYPE)
                    .map(|t| t.to_ascii_lowercase());
                v.platform_length = p
                    .platform_length
                    .filter(|l| l.is_finite() && *l > 0.0 && *l < 1e4);
            }
            Update::Clock(t) => {
                if let Some((t0, at0)) = v.clock {
                    let dt = now - at0;
                    if dt > 0.05 && t > t0 {
                        let w = (t - t0) / dt;
                        if w.is_finite() {
                            v.warp = Some(match v.warp {
                                Some(old) => 0.7 * old + 0.3 * w,
                                None => w,
                            });
                        }
                        v.clock = Some((t, now));
                    } else if t < t0 {
                        // The vehicle restarted or its clock jumped back.
                        v.warp = None;
                        v.clock = Some((t, now));
                    }
                } else {
                    v.clock = Some((t, now));
                }
                // A clock alone does not change what is drawn at the
                // frame rate of reports; the next report carries it.
                return Ok(());
            }
        }
        self.dirty = true;
        Ok(())
    }

    /// `OBSTACLE_HIT` from `name`: unless the payload is `false`, the
    /// polygon nearest to the vehicle's last reported position is marked
    /// hit, once per report (a name that sent no report marks nothing).
    fn on_hit(&mut self, name: &str, payload: &[u8]) {
        if payload.trim_ascii().eq_ignore_ascii_case(b"false") {
            return;
        }
        let Some(v) = self.vehicles.get_mut(name) else {
            return;
        };
        let (Some(r), Some(at)) = (v.report, v.report_at) else {
            return;
        };
        if v.hit_report_at == Some(at) {
            return;
        }
        v.hit_report_at = Some(at);
        if let (Some(x), Some(y)) = (r.x, r.y) {
            self.shapes.mark_hit(x, y);
        }
    }

    /// The server-side trails of every vehicle as one JSON message for a
    /// page that connects: `{"type":"trails","trails":[[name,[[x,y],…]],…]}`
    /// (coordinates rounded to cm).
    pub fn trails_json(&self) -> String {
        let trails: Vec<(&str, Vec<[f64; 2]>)> = self
            .vehicles
            .iter()
            .filter(|(_, v)| v.is_vehicle() && !v.trail.is_empty())
            .map(|(n, v)| {
                let pts = v
                    .trail
                    .iter()
                    .map(|p| {
                        [
                            (p[0] * 100.0).round() / 100.0,
                            (p[1] * 100.0).round() / 100.0,
                        ]
                    })
                    .filter(|p| p[0].is_finite() && p[1].is_finite())
                    .collect();
                (n.as_str(), pts)
            })
            .collect();
        serde_json::json!({ "type": "trails", "trails": trails }).to_string()
    }

    /// The whole fleet as one JSON frame for the page, and the dirty flag
    /// cleared. `age` is how long ago (s, at `now`) the last report came.
    pub fn frame(&mut self, now: f64) -> String {
        #[derive(Serialize)]
        struct V<'a> {
            name: &'a str,
            online: Option<bool>,
            age: Option<f64>,
            report: Option<Report>,
            #[serde(skip_serializing_if = "Option::is_none")]
            platform_type: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            platform_length: Option<f64>,
            /// Vehicle clock now (Unix s): the last `USM_TIME` advanced by
            /// the measured warp since it came.
            #[serde(skip_serializing_if = "Option::is_none")]
            clock: Option<f64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            warp: Option<f64>,
        }
        #[derive(Serialize)]
        struct Frame<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            vehicles: Vec<V<'a>>,
        }
        self.dirty = false;
        let frame = Frame {
            kind: "frame",
            vehicles: self
                .vehicles
                .iter()
                .filter(|(_, v)| v.is_vehicle())
                .map(|(name, v)| V {
                    name,
                    online: v.online,
                    age: v
                        .report_at
                        .map(|t| ((now - t).max(0.0) * 1e3).round() / 1e3),
                    report: v.report.as_ref().map(|r| {
                        // A report without setpoints (a MOOS vehicle's)
                        // shows the community's DESIRED_THRUST/RUDDER.
                        let mut r = *r;
                        r.thrust = r.thrust.or(v.desired.0);
                        r.rudder = r.rudder.or(v.desired.1);
                        r.rounded()
                    }),
                    platform_type: v.platform_type.as_deref(),
                    platform_length: v.platform_length,
                    clock: v
                        .clock
                        .map(|(c, at)| c + v.warp.unwrap_or(1.0) * (now - at).clamp(0.0, 5.0))
                        .map(|c| (c * 1e3).round() / 1e3)
                        .filter(|c| c.is_finite()),
                    warp: v
                        .warp
                        .map(|w| (w * 1e3).round() / 1e3)
                        .filter(|w| w.is_finite()),
                })
                .collect(),
        };
        // Only finite numbers and strings: serialisation cannot fail.
        serde_json::to_string(&frame).unwrap_or_else(|_| r#"{"type":"frame","vehicles":[]}"#.into())
    }
}

/// A payload that is a finite number (a MOOS double mirrored as text).
fn number(payload: &[u8]) -> Option<f64> {
    std::str::from_utf8(payload)
        .ok()
        .and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite())
}

/// Coalescing: at most one frame per `1/fps` seconds. A change is sent at
/// once if the last frame is old enough, else at the earliest allowed time,
/// so the added latency is at most one frame interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameClock {
    interval: f64,
    last: Option<f64>,
}

impl FrameClock {
    /// A clock for at most `fps` frames per second (`fps` > 0, finite).
    pub fn new(fps: f64) -> FrameClock {
        FrameClock {
            interval: 1.0 / fps,
            last: None,
        }
    }

    /// The earliest time the next frame may go (s); `None`: at once.
    pub fn next_allowed(&self) -> Option<f64> {
        self.last.map(|t| t + self.interval)
    }

    /// Whether a frame may be sent at `now`.
    pub fn may_send(&self, now: f64) -> bool {
        self.next_allowed().is_none_or(|t| now >= t)
    }

    /// Record that a frame was sent at `now`.
    pub fn sent(&mut self, now: f64) {
        self.last = Some(now);
    }
}

/// A message from the page.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// Post `value` to `var` of `vehicle`.
    Command {
        /// Echoed in the reply, so the page can match it.
        id: u64,
        /// Vehicle name.
        vehicle: String,
        /// One of [`COMMAND_VARS`].
        var: String,
        /// The payload text as `usim post` would send it.
        value: String,
    },
    /// A click on one of the mission's pMarineViewer buttons.
    Button {
        /// Echoed in the reply.
        id: u64,
        /// Which button (0-based, in the page's order).
        index: usize,
    },
}

/// A refusal: the reason is shown on the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The request id if it could be read (0 otherwise).
    pub id: u64,
    /// What was wrong, for a person.
    pub reason: String,
}

impl Refusal {
    fn new(id: u64, reason: impl Into<String>) -> Refusal {
        Refusal {
            id,
            reason: reason.into(),
        }
    }
}

/// Parse one WebSocket text message from the page (outside input: any
/// bytes may come). Expected:
/// `{"type":"command","id":7,"vehicle":"alpha","var":"DESIRED_THRUST","value":60}`
/// where `value` is a JSON number or string.
pub fn parse_client_message(text: &str) -> Result<ClientMessage, Refusal> {
    if text.len() > MAX_CLIENT_MESSAGE {
        return Err(Refusal::new(
            0,
            format!("message longer than {MAX_CLIENT_MESSAGE} bytes"),
        ));
    }
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Refusal::new(0, format!("malformed message (not JSON): {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| Refusal::new(0, "malformed message: not a JSON object"))?;
    let id = match obj.get("id") {
        None => 0,
        Some(i) => i
            .as_u64()
            .ok_or_else(|| Refusal::new(0, "\"id\" must be a non-negative integer"))?,
    };
    let field = |key: &str| -> Result<&str, Refusal> {
        obj.get(key)
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| Refusal::new(id, format!("{key:?} missing or not a string")))
    };
    match field("type")? {
        "command" => {}
        "button" => {
            let index = obj
                .get("index")
                .and_then(serde_json::Value::as_u64)
                .filter(|i| *i < super::buttons::MAX_BUTTONS as u64)
                .ok_or_else(|| Refusal::new(id, "\"index\" must be a button number"))?;
            return Ok(ClientMessage::Button {
                id,
                index: index as usize,
            });
        }
        other => return Err(Refusal::new(id, format!("unknown message type {other:?}"))),
    }
    let vehicle = field("vehicle")?.to_string();
    let var = field("var")?.to_string();
    let value = match obj.get("value") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => match n.as_f64() {
            Some(f) if f.is_finite() => format!("{f}"),
            _ => return Err(Refusal::new(id, "value is not a finite number")),
        },
        _ => {
            return Err(Refusal::new(
                id,
                "\"value\" missing or not a number or string",
            ))
        }
    };
    if value.len() > MAX_VALUE_LEN {
        return Err(Refusal::new(
            id,
            format!("value longer than {MAX_VALUE_LEN} bytes"),
        ));
    }
    Ok(ClientMessage::Command {
        id,
        vehicle,
        var,
        value,
    })
}

/// A command checked and ready to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publish {
    /// Request id, for the reply.
    pub id: u64,
    /// `{root}/{vehicle}/{var}`: always a known vehicle's command topic.
    pub topic: String,
    /// The payload text.
    pub payload: String,
}

impl Fleet {
    /// Check a command from the page: the vehicle is known, the variable is
    /// one of [`COMMAND_VARS`], and the vehicle would take the value (the
    /// check of `usim post`). The topic is built here, never taken from the page.
    pub fn check_command(&self, msg: &ClientMessage) -> Result<Publish, Refusal> {
        let (id, vehicle, var, value) = match msg {
            ClientMessage::Command {
                id,
                vehicle,
                var,
                value,
            } => (id, vehicle, var, value),
            ClientMessage::Button { id, .. } => {
                return Err(Refusal::new(*id, "a button is not a command"))
            }
        };
        let id = *id;
        if !self
            .vehicles
            .get(vehicle)
            .is_some_and(VehicleView::is_vehicle)
        {
            return Err(Refusal::new(
                id,
                format!(
                    "unknown vehicle {:?} (not seen on the broker)",
                    crate::mqtt::clip_for_log(vehicle, 64)
                ),
            ));
        }
        if !COMMAND_VARS.contains(&var.as_str()) {
            return Err(Refusal::new(
                id,
                format!(
                    "{:?} cannot be posted from the page (allowed: {})",
                    crate::mqtt::clip_for_log(var, 64),
                    COMMAND_VARS.join(", ")
                ),
            ));
        }
        would_accept(var, value).map_err(|e| Refusal::new(id, e.to_string()))?;
        Ok(Publish {
            id,
            topic: format!("{}{vehicle}/{var}", self.prefix),
            payload: value.clone(),
        })
    }
}

/// The JSON reply to a command: `{"type":"reply","id":..,"ok":..,"reason":..}`.
pub fn reply_json(id: u64, result: Result<&str, &str>) -> String {
    let (ok, text) = match result {
        Ok(t) => (true, t),
        Err(t) => (false, t),
    };
    serde_json::json!({ "type": "reply", "id": id, "ok": ok, "reason": text }).to_string()
}

/// Why an HTTP request was refused before it reached the page or socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// No token, or a wrong one (401).
    Token,
    /// A WebSocket from another site's page (403): browsers let any page
    /// open a WebSocket to 127.0.0.1, so the Origin must be this server.
    Origin,
    /// A Host other than a loopback name while bound to loopback, or with
    /// no token (403): defeats DNS rebinding.
    Host,
}

/// The access rules of every request. `token`: the one required (if any);
/// `given`: the `token` query parameter; `host`, `origin`: the headers;
/// `loopback`: whether the server is bound to a loopback address.
pub fn check_access(
    token: Option<&str>,
    given: Option<&str>,
    host: Option<&str>,
    origin: Option<&str>,
    loopback: bool,
) -> Result<(), Denied> {
    if let Some(t) = token {
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), t.as_bytes())) {
            return Err(Denied::Token);
        }
    }
    // Without a token the Host check holds wherever the server listens
    // (a DNS-rebinding page would otherwise get the socket).
    if loopback || token.is_none() {
        let h = host.map(host_name).unwrap_or("");
        if !is_loopback_name(h) {
            return Err(Denied::Host);
        }
    }
    if let Some(o) = origin {
        // Origin: scheme://host[:port]; it must name the host we were asked as.
        let o_host = o.split_once("://").map(|(_, h)| h).unwrap_or("");
        if host.is_none_or(|h| !h.eq_ignore_ascii_case(o_host)) {
            return Err(Denied::Origin);
        }
    }
    Ok(())
}

/// `host[:port]` → host (IPv6 in brackets kept with them).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        host.split_once(']')
            .map(|(h, _)| &host[..=h.len()])
            .unwrap_or(host)
    } else {
        host.split(':').next().unwrap_or(host)
    }
}

fn is_loopback_name(h: &str) -> bool {
    h.eq_ignore_ascii_case("localhost")
        || h == "[::1]"
        || h.parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"{"k":12,"t":1.2,"x":10.5,"y":-3.25,"speed":1.5,"heading":90,
        "depth":0,"altitude":null,"lat":null,"lon":null,"thrust":60,"thrust_l":1,
        "current_x":0.1,"current_y":-0.2,"future_field":"text"}"#;

    fn fleet_with_alpha() -> Fleet {
        let mut f = Fleet::new("usim");
        f.on_message("usim/alpha/status", b"online", 0.0).unwrap();
        f.on_message("usim/alpha/NODE_REPORT", br#"{"x":1,"y":2}"#, 0.0)
            .unwrap();
        f
    }

    #[test]
    fn reports_and_status_build_the_model_ignoring_unknown_fields() {
        let mut f = Fleet::new("fleet/usim");
        assert_eq!(
            f.filters()[..8],
            [
                "fleet/usim/+/status".to_string(),
                "fleet/usim/+/NODE_REPORT".into(),
                "fleet/usim/+/USM_TIME".into(),
                "fleet/usim/+/DB_TIME".into(),
                "fleet/usim/+/DESIRED_THRUST".into(),
                "fleet/usim/+/DESIRED_RUDDER".into(),
                "fleet/usim/+/OBSTACLE_HIT".into(),
                "fleet/usim/+/VIEW_POINT".into()
            ]
        );
        f.on_message("fleet/usim/alpha/NODE_REPORT", REPORT.as_bytes(), 5.0)
            .unwrap();
        let v = &f.vehicles()["alpha"];
        let r = v.report.unwrap();
        assert_eq!((r.x, r.y, r.heading), (Some(10.5), Some(-3.25), Some(90.0)));
        assert_eq!(r.lat, None);
        assert_eq!((r.current_x, r.current_y), (Some(0.1), Some(-0.2)));
        assert_eq!(v.online, None);
        f.on_message("fleet/usim/alpha/status", b"offline", 6.0)
            .unwrap();
        assert_eq!(f.vehicles()["alpha"].online, Some(false));
    }

    #[test]
    fn bad_messages_are_dropped_and_change_nothing() {
        let mut f = fleet_with_alpha();
        f.frame(0.0);
        for (topic, payload) in [
            ("usim/alpha/NODE_REPORT", &b"{not json"[..]),
            ("usim/alpha/NODE_REPORT", br#"{"x":"ten"}"#),
            ("usim/alpha/NODE_REPORT", br#"{"x":1e999}"#),
            ("usim/alpha/NODE_REPORT", b"[1,2]"),
            ("usim/alpha/status", b"maybe"),
            ("usim/alpha/NAV_X", b"1"),
            ("other/alpha/status", b"online"),
            ("usim/a/b/status", b"online"),
            ("usim//status", b"online"),
        ] {
            assert!(f.on_message(topic, payload, 1.0).is_err(), "{topic}");
        }
        assert!(!f.is_dirty());
        assert_eq!(f.vehicles().len(), 1);
        assert_eq!(f.vehicles()["alpha"].report.and_then(|r| r.x), Some(1.0));
    }

    /// The environment's fields and the `sensed` block (docs/formats.md §4)
    /// reach the frame rounded; a dropout's `null`s stay absent; a `sensed`
    /// that is not an object drops the report.
    #[test]
    fn wind_sea_and_the_sensed_fix_reach_the_frame() {
        let mut f = Fleet::new("usim");
        let report = br#"{"x":10,"y":20,"wind_speed":8.12345,"wind_direction":60,
            "sea_hs":1,"sea_tp":5,"sea_direction":45,"heave":0.01234,
            "sensed":{"x":11.5,"y":18.25,"lat":null,"lon":null,"speed":1.0,
                      "heading":3,"depth":0,"fix":8,"hdop":1.41421,"satellites":12}}"#;
        f.on_message("usim/alpha/NODE_REPORT", report, 1.0).unwrap();
        let frame: serde_json::Value = serde_json::from_str(&f.frame(1.0)).unwrap();
        let r = &frame["vehicles"][0]["report"];
        assert_eq!(r["wind_speed"], 8.123);
        assert_eq!(r["wind_direction"], 60.0);
        assert_eq!(
            (r["sea_hs"].clone(), r["sea_tp"].clone()),
            (1.0.into(), 5.0.into())
        );
        assert_eq!(r["sea_direction"], 45.0);
        assert_eq!(r["heave"], 0.012);
        assert_eq!(
            r["sensed"],
            serde_json::json!({"x":11.5,"y":18.25,"fix":8.0,"hdop":1.41})
        );
        let dropout = br#"{"x":10,"y":20,"sensed":{"x":null,"y":null,"fix":0,"hdop":null}}"#;
        f.on_message("usim/alpha/NODE_REPORT", dropout, 2.0)
            .unwrap();
        let frame: serde_json::Value = serde_json::from_str(&f.frame(2.0)).unwrap();
        assert_eq!(
            frame["vehicles"][0]["report"]["sensed"],
            serde_json::json!({"fix":0.0})
        );
        assert!(frame["vehicles"][0]["report"].get("wind_speed").is_none());
        for bad in [
            &br#"{"x":1,"sensed":"gps"}"#[..],
            br#"{"x":1,"sensed":{"x":"far"}}"#,
            br#"{"x":1,"wind_speed":"gale"}"#,
        ] {
            assert!(f.on_message("usim/alpha/NODE_REPORT", bad, 3.0).is_err());
        }
        assert_eq!(f.vehicles()["alpha"].report.and_then(|r| r.x), Some(10.0));
    }

    /// `OBSTACLE_HIT` marks the polygon nearest to the vehicle's last
    /// report (0 inside, within 10 m), stays through a repost of the same
    /// label, and costs one search per report; other polygons stay unhit.
    #[test]
    fn an_obstacle_hit_marks_the_nearest_polygon() {
        let mut f = Fleet::new("usim");
        let post = |f: &mut Fleet, label: &str, x0: f64| {
            let spec = format!("pts={{{x0},10:{},10:{},20:{x0},20}},label={label},fill_color=white,fill_transparency=0.15", x0 + 10.0, x0 + 10.0);
            f.on_message("usim/alpha/VIEW_POLYGON", spec.as_bytes(), 0.0)
                .unwrap();
        };
        post(&mut f, "box", -5.0);
        post(&mut f, "far", 100.0);
        // a hit before any report marks nothing
        f.on_message("usim/alpha/OBSTACLE_HIT", b"true", 0.5)
            .unwrap();
        assert!(f.shapes.all().all(|s| !s.hit));
        f.on_message("usim/alpha/NODE_REPORT", br#"{"x":0,"y":9.2}"#, 1.0)
            .unwrap();
        f.on_message("usim/alpha/OBSTACLE_HIT", b"false", 1.1)
            .unwrap();
        assert!(f.shapes.all().all(|s| !s.hit));
        f.on_message("usim/alpha/OBSTACLE_HIT", b"true", 1.2)
            .unwrap();
        let hit: Vec<&str> = f
            .shapes
            .all()
            .filter(|s| s.hit)
            .map(|s| s.label.as_str())
            .collect();
        assert_eq!(hit, ["box"]);
        let box_ = f.shapes.all().find(|s| s.label == "box").unwrap();
        assert_eq!(
            (box_.fill_color.as_deref(), box_.fill_transparency),
            (Some("white"), Some(0.15))
        );
        post(&mut f, "box", -5.0);
        assert!(f.shapes.all().any(|s| s.label == "box" && s.hit));
        let json = f.shapes.take_json();
        assert!(
            json.contains(r#""label":"box","#) && json.matches(r#""hit":true"#).count() == 1,
            "{json}"
        );
        // 30 m from every polygon: nothing more is marked
        f.on_message("usim/alpha/NODE_REPORT", br#"{"x":50,"y":-30}"#, 2.0)
            .unwrap();
        f.on_message("usim/alpha/OBSTACLE_HIT", b"true", 2.1)
            .unwrap();
        assert_eq!(f.shapes.all().filter(|s| s.hit).count(), 1);
        assert!(f.vehicles().get("nobody").is_none());
    }

    #[test]
    fn the_number_of_vehicles_is_bounded_and_the_longest_silent_go_first() {
        let mut f = Fleet::new("usim");
        for i in 0..MAX_VEHICLES + 10 {
            let _ = f.on_message(&format!("usim/v{i}/status"), b"online", i as f64);
        }
        assert_eq!(f.vehicles().len(), MAX_VEHICLES);
        assert_eq!(f.evicted, 10);
        // v0..v9 were silent longest: gone; v10 stays.
        assert!(!f.vehicles().contains_key("v0"));
        assert!(f.vehicles().contains_key("v10"));
        // A vehicle heard from again is kept over a newer silent one.
        f.on_message("usim/v10/status", b"offline", 1e6).unwrap();
        f.on_message("usim/new/NODE_REPORT", b"{}", 1e6).unwrap();
        assert!(f.vehicles().contains_key("v10"));
        assert!(!f.vehicles().contains_key("v11"));
        assert!(f.vehicles().contains_key("new"));
        let long = "n".repeat(MAX_NAME_LEN + 1);
        assert!(Fleet::new("usim")
            .on_message(&format!("usim/{long}/status"), b"online", 0.0)
            .is_err());
    }

    #[test]
    fn frame_carries_positions_status_and_age() {
        let mut f = fleet_with_alpha();
        f.on_message("usim/alpha/NODE_REPORT", REPORT.as_bytes(), 2.0)
            .unwrap();
        f.on_message("usim/bravo/status", b"offline", 2.0).unwrap();
        assert!(f.is_dirty());
        let frame: serde_json::Value = serde_json::from_str(&f.frame(2.5)).unwrap();
        assert!(!f.is_dirty());
        assert_eq!(frame["type"], "frame");
        let vs = frame["vehicles"].as_array().unwrap();
        // bravo only sent a status (as a fleet's own name does): not a vehicle.
        assert_eq!(vs.len(), 1);
        assert_eq!(vs[0]["name"], "alpha");
        assert_eq!(vs[0]["online"], true);
        assert_eq!(vs[0]["age"], 0.5);
        assert_eq!(vs[0]["report"]["x"], 10.5);
        assert_eq!(vs[0]["report"]["y"], -3.25);
        assert!(f
            .check_command(&command("bravo", "DESIRED_THRUST", "1"))
            .is_err());
    }

    #[test]
    fn silent_vehicles_expire() {
        let mut f = Fleet::with_limits("usim", 10, 60.0);
        f.on_message("usim/a/NODE_REPORT", br#"{"x":0,"y":0}"#, 0.0)
            .unwrap();
        f.on_message("usim/b/NODE_REPORT", br#"{"x":0,"y":0}"#, 30.0)
            .unwrap();
        assert_eq!(f.expire(60.0), 0);
        assert_eq!(f.expire(60.5), 1);
        assert!(f.vehicles().contains_key("b"));
        assert_eq!(f.expire(91.0), 1);
        assert!(f.vehicles().is_empty());
        assert_eq!(f.expired, 2);
    }

    #[test]
    fn trails_are_bounded_and_sent_as_json() {
        let mut f = Fleet::new("usim");
        for i in 0..(TRAIL_POINTS + 50) {
            let x = i as f64;
            f.on_message(
                "usim/a/NODE_REPORT",
                format!(r#"{{"x":{x},"y":0}}"#).as_bytes(),
                x,
            )
            .unwrap();
            // Closer than TRAIL_STEP_M: no new point.
            f.on_message(
                "usim/a/NODE_REPORT",
                format!(r#"{{"x":{},"y":0}}"#, x + 0.1).as_bytes(),
                x,
            )
            .unwrap();
        }
        let t = &f.vehicles()["a"].trail;
        assert_eq!(t.len(), TRAIL_POINTS);
        assert_eq!(t.back(), Some(&[(TRAIL_POINTS + 49) as f64, 0.0]));
        let v: serde_json::Value = serde_json::from_str(&f.trails_json()).unwrap();
        assert_eq!(v["type"], "trails");
        assert_eq!(v["trails"][0][0], "a");
        assert_eq!(v["trails"][0][1].as_array().unwrap().len(), TRAIL_POINTS);
    }

    /// A MOOS vehicle through the bridge: its NODE_REPORT has no setpoints
    /// and its clock is the community's DB_TIME.
    #[test]
    fn moos_vehicles_get_clock_and_setpoints_from_the_community() {
        let mut f = Fleet::new("usim");
        // a setpoint for a name that is no vehicle makes none
        f.on_message("usim/ghost/DESIRED_THRUST", b"50", 0.0)
            .unwrap();
        assert!(f.vehicles().get("ghost").is_none());
        f.on_message(
            "usim/alpha/NODE_REPORT",
            br#"{"x":1,"y":2,"speed":1.5}"#,
            0.0,
        )
        .unwrap();
        f.on_message("usim/alpha/DESIRED_THRUST", b"35.5", 0.1)
            .unwrap();
        f.on_message("usim/alpha/DESIRED_RUDDER", b"-12", 0.1)
            .unwrap();
        f.on_message("usim/alpha/DESIRED_RUDDER", b"fast", 0.1)
            .unwrap();
        f.on_message("usim/alpha/DB_TIME", b"1000", 1.0).unwrap();
        f.on_message("usim/alpha/DB_TIME", b"1020", 3.0).unwrap();
        assert!(f.on_message("usim/alpha/DB_TIME", b"nan", 3.0).is_err());
        let frame: serde_json::Value = serde_json::from_str(&f.frame(3.0)).unwrap();
        let v = &frame["vehicles"][0];
        assert_eq!(v["report"]["thrust"], 35.5);
        assert_eq!(v["report"]["rudder"], -12.0);
        assert_eq!(v["warp"], 10.0);
        assert_eq!(v["clock"], 1020.0);
        // a usim vehicle's own report wins over the topic
        f.on_message(
            "usim/alpha/NODE_REPORT",
            br#"{"x":1,"y":2,"thrust":60}"#,
            3.5,
        )
        .unwrap();
        let frame: serde_json::Value = serde_json::from_str(&f.frame(3.5)).unwrap();
        assert_eq!(frame["vehicles"][0]["report"]["thrust"], 60.0);
    }

    #[test]
    fn buttons_post_their_postings_to_the_community_in_order() {
        let mut f = Fleet::new("usim");
        let m = parse_client_message(r#"{"type":"button","id":3,"index":0}"#).unwrap();
        assert_eq!(m, ClientMessage::Button { id: 3, index: 0 });
        assert!(f.check_button(3, 0).is_err(), "no buttons configured");
        let (b, _) = crate::view::buttons::from_mission(
            "ProcessConfig = pMarineViewer\n{\n button_one = DEPLOY # DEPLOY=true # MOOS_MANUAL_OVERRIDE=false\n}\n",
        );
        f.set_buttons("alpha", b);
        let p = f.check_button(3, 0).unwrap();
        let got: Vec<(&str, &str)> = p
            .iter()
            .map(|p| (p.topic.as_str(), p.payload.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("usim/alpha/DEPLOY", "true"),
                ("usim/alpha/MOOS_MANUAL_OVERRIDE", "false")
            ]
        );
        assert!(f.check_button(4, 1).is_err());
        assert!(parse_client_message(r#"{"type":"button","id":3,"index":99}"#).is_err());
        assert!(parse_client_message(r#"{"type":"button","id":3,"index":-1}"#).is_err());
        let j: serde_json::Value = serde_json::from_str(&f.buttons_json()).unwrap();
        assert_eq!(j["buttons"][0]["label"], "DEPLOY");
        assert_eq!(j["community"], "alpha");
    }

    #[test]
    fn clock_platform_and_warp() {
        let mut f = Fleet::new("usim");
        f.on_message(
            "usim/u/NODE_REPORT",
            br#"{"x":0,"y":0,"platform_type":"UUV","platform_length":3.5}"#,
            0.0,
        )
        .unwrap();
        for i in 0..20 {
            let now = f64::from(i) * 0.1;
            f.on_message(
                "usim/u/USM_TIME",
                format!("{}", 1000.0 + 4.0 * now).as_bytes(),
                now,
            )
            .unwrap();
        }
        assert!(f.on_message("usim/u/USM_TIME", b"nan", 2.0).is_err());
        let v = &f.vehicles()["u"];
        assert_eq!(v.platform_type.as_deref(), Some("uuv"));
        assert_eq!(v.platform_length, Some(3.5));
        let w = v.warp.unwrap();
        assert!((w - 4.0).abs() < 1e-6, "{w}");
        let frame: serde_json::Value = serde_json::from_str(&f.frame(1.9)).unwrap();
        assert_eq!(frame["vehicles"][0]["platform_type"], "uuv");
        let c = frame["vehicles"][0]["clock"].as_f64().unwrap();
        assert!((c - 1007.6).abs() < 1e-6, "{c}");
    }

    #[test]
    fn frame_clock_limits_the_rate_and_delays_by_at_most_one_interval() {
        let mut c = FrameClock::new(10.0);
        assert!(c.may_send(0.0));
        c.sent(0.0);
        assert!(!c.may_send(0.05));
        assert_eq!(c.next_allowed(), Some(0.1));
        assert!(c.may_send(0.1));
        // 1000 updates in one second at 10 fps: at most 10 frames.
        let mut c = FrameClock::new(10.0);
        let mut frames = 0;
        for i in 0..1000 {
            let now = f64::from(i) / 1000.0;
            if c.may_send(now) {
                c.sent(now);
                frames += 1;
            }
        }
        assert_eq!(frames, 10);
    }

    #[test]
    fn client_messages_parse_numbers_and_strings() {
        let m = parse_client_message(
            r#"{"type":"command","id":7,"vehicle":"alpha","var":"DESIRED_THRUST","value":60}"#,
        )
        .unwrap();
        assert_eq!(
            m,
            ClientMessage::Command {
                id: 7,
                vehicle: "alpha".into(),
                var: "DESIRED_THRUST".into(),
                value: "60".into()
            }
        );
        let m = parse_client_message(
            r#"{"type":"command","vehicle":"a","var":"USM_RESET","value":"x=1, y=2"}"#,
        )
        .unwrap();
        assert!(
            matches!(m, ClientMessage::Command { id: 0, ref value, .. } if value == "x=1, y=2")
        );
    }

    #[test]
    fn malformed_client_messages_are_refused_with_a_reason() {
        for (text, why) in [
            ("not json", "not JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"type":"command","id":-1}"#, "id"),
            (r#"{"type":"shell","id":3}"#, "unknown message type"),
            (
                r#"{"type":"command","id":3,"var":"X","value":1}"#,
                "vehicle",
            ),
            (
                r#"{"type":"command","vehicle":"a","var":"X","value":[1]}"#,
                "value",
            ),
            (r#"{"type":"command","vehicle":"a","var":"X"}"#, "value"),
        ] {
            let e = parse_client_message(text).unwrap_err();
            assert!(e.reason.contains(why), "{text}: {}", e.reason);
        }
        let e = parse_client_message(r#"{"type":"x","id":3}"#).unwrap_err();
        assert_eq!(e.id, 3);
        let long = format!(r#"{{"type":"command","value":"{}"}}"#, "a".repeat(5000));
        assert!(parse_client_message(&long)
            .unwrap_err()
            .reason
            .contains("longer"));
    }

    fn command(vehicle: &str, var: &str, value: &str) -> ClientMessage {
        ClientMessage::Command {
            id: 1,
            vehicle: vehicle.into(),
            var: var.into(),
            value: value.into(),
        }
    }

    #[test]
    fn commands_go_only_to_known_vehicles_command_topics_with_post_checks() {
        let f = fleet_with_alpha();
        let p = f
            .check_command(&command("alpha", "DESIRED_THRUST", "60"))
            .unwrap();
        assert_eq!(p.topic, "usim/alpha/DESIRED_THRUST");
        assert_eq!(p.payload, "60");
        assert!(f
            .check_command(&command("alpha", "USM_RESET", "x=5, y=-2"))
            .is_ok());
        assert!(f
            .check_command(&command("alpha", "USM_SIM_PAUSED", "true"))
            .is_ok());
        assert!(f
            .check_command(&command("alpha", "DRIFT_VECTOR_ADD", "90, 0.5"))
            .is_ok());
        let refused = |v: &str, var: &str, val: &str| {
            f.check_command(&command(v, var, val)).unwrap_err().reason
        };
        assert!(refused("zulu", "DESIRED_THRUST", "60").contains("unknown vehicle"));
        assert!(refused("alpha", "DESIRED_THRUST", "fast").contains("not a number"));
        assert!(refused("alpha", "DRIFT_VECTOR_ADD", "bad").contains("DRIFT_VECTOR_ADD"));
        assert!(refused("alpha", "NAV_X", "1").contains("cannot be posted"));
        assert!(refused("alpha", "#", "1").contains("cannot be posted"));
        assert!(refused("alpha/+", "DESIRED_THRUST", "1").contains("unknown vehicle"));
    }

    #[test]
    fn replies_are_json() {
        let v: serde_json::Value = serde_json::from_str(&reply_json(4, Err("no \"x\""))).unwrap();
        assert_eq!(v["id"], 4);
        assert_eq!(v["ok"], false);
        assert_eq!(v["reason"], "no \"x\"");
    }

    #[test]
    fn access_needs_the_token_a_loopback_host_and_a_same_origin() {
        let ok = |t, g, h, o, l| check_access(t, g, h, o, l);
        assert_eq!(ok(None, None, Some("127.0.0.1:8080"), None, true), Ok(()));
        assert_eq!(
            ok(
                None,
                None,
                Some("localhost:8080"),
                Some("http://localhost:8080"),
                true
            ),
            Ok(())
        );
        assert_eq!(ok(None, None, Some("[::1]:80"), None, true), Ok(()));
        assert_eq!(
            ok(Some("s3"), Some("s3"), Some("127.0.0.1:1"), None, true),
            Ok(())
        );
        assert_eq!(
            ok(Some("s3"), Some("s4"), Some("127.0.0.1:1"), None, true),
            Err(Denied::Token)
        );
        assert_eq!(
            ok(Some("s3"), None, Some("127.0.0.1:1"), None, true),
            Err(Denied::Token)
        );
        assert_eq!(
            ok(None, None, Some("evil.example:8080"), None, true),
            Err(Denied::Host)
        );
        assert_eq!(ok(None, None, None, None, true), Err(Denied::Host));
        assert_eq!(
            ok(
                None,
                None,
                Some("127.0.0.1:8080"),
                Some("http://evil.example"),
                true
            ),
            Err(Denied::Origin)
        );
        // Bound to the network: any host name, but still same-origin sockets.
        assert_eq!(
            ok(
                Some("s3"),
                Some("s3"),
                Some("sim.lan:8080"),
                Some("http://sim.lan:8080"),
                false
            ),
            Ok(())
        );
        assert_eq!(
            ok(
                Some("s3"),
                Some("s3"),
                Some("sim.lan:8080"),
                Some("http://evil.example"),
                false
            ),
            Err(Denied::Origin)
        );
        // No token: the Host check holds even on the network (DNS rebinding).
        assert_eq!(
            ok(None, None, Some("evil.example:8080"), None, false),
            Err(Denied::Host)
        );
    }

    mod hostile {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any text from the page gives a message or a refusal, never a
            /// panic; an accepted command's value is within the limit.
            #[test]
            fn page_messages_never_panic(text in ".{0,300}") {
                if let Ok(ClientMessage::Command { value, .. }) = parse_client_message(&text) {
                    prop_assert!(value.len() <= MAX_VALUE_LEN);
                }
            }

            /// Command-shaped messages with arbitrary fields: a command that
            /// passes the check always goes to `usim/<known vehicle>/<allowed var>`.
            #[test]
            fn checked_commands_only_reach_allowed_topics(
                vehicle in prop_oneof![Just("alpha".to_string()), ".{0,12}"],
                var in prop_oneof![Just("DESIRED_THRUST".to_string()), Just("USM_RESET".to_string()), ".{0,16}"],
                value in ".{0,40}",
            ) {
                let mut f = Fleet::new("usim");
                f.on_message("usim/alpha/status", b"online", 0.0).unwrap();
                let text = serde_json::json!({"type": "command", "id": 1, "vehicle": vehicle, "var": var, "value": value}).to_string();
                if let Ok(msg) = parse_client_message(&text) {
                    if let Ok(p) = f.check_command(&msg) {
                        prop_assert_eq!(vehicle.as_str(), "alpha");
                        prop_assert!(COMMAND_VARS.contains(&var.as_str()));
                        prop_assert_eq!(p.topic, format!("usim/alpha/{var}"));
                    }
                }
            }

            /// Arbitrary bytes on the report and status topics never panic and
            /// never put a non-finite number into the model.
            #[test]
            fn mqtt_payloads_never_panic(payload in proptest::collection::vec(any::<u8>(), 0..200)) {
                let mut f = Fleet::new("usim");
                let _ = f.on_message("usim/a/NODE_REPORT", &payload, 0.0);
                let _ = f.on_message("usim/a/status", &payload, 0.0);
                if let Some(r) = f.vehicles().get("a").and_then(|v| v.report) {
                    prop_assert!([r.x, r.y, r.heading, r.speed].iter().flatten().all(|v| v.is_finite()));
                }
                let frame = f.frame(1.0);
                prop_assert!(serde_json::from_str::<serde_json::Value>(&frame).is_ok());
            }
        }
    }
}
