//! `usim moos-bridge`: a MOOS community mirrored onto MQTT, and chosen
//! variables back.
//!
//! * MOOS → MQTT: every variable matching the mirror patterns is published
//!   on `{root}/{community}/{VAR}` (QoS 0, payload the value as text: a
//!   double as Rust's shortest round-trip form, a string as is). A MOOS
//!   `NODE_REPORT`/`NODE_REPORT_LOCAL` string (`NAME=..,X=..,Y=..,...`)
//!   becomes usim's `NODE_REPORT` JSON on `{root}/{NAME}/NODE_REPORT` and a
//!   retained `{root}/{NAME}/status` `online`, so `usim view` and
//!   `usim record` show MOOS vehicles.
//! * MQTT → MOOS: the variables given with `--to-moos` are subscribed on
//!   `{root}/{community}/{VAR}` and posted into the MOOSDB, as a double if
//!   the variable is a double in the community (or, not yet seen, if the
//!   payload is a finite number), else as a string.
//! * No loops: mail the bridge itself wrote is never mirrored back to
//!   MQTT, and an MQTT message equal to one the bridge just published on
//!   that topic is its own echo and is not posted into the MOOSDB.
//!
//! [`Mirror`] is the sans-IO core; [`run_bridge`] the thin runtime.
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rumqttc::{Event, Packet, QoS, SubscribeFilter};
use tracing::{info, warn};

use super::codec::{DataType, Message};
use super::conn::{Conn, ConnOptions, Incoming};
use super::wildcard::{wild_match, Filter};
use super::{log_safe, unix_now};
use crate::mqtt::endpoint::{BrokerUrl, ConnectSpec};

/// Default mirror patterns: what `usim view` (the helm's `VIEW_*`
/// geometry included, as pMarineViewer shows it) and `usim record` need.
pub const DEFAULT_MIRROR: &[&str] = &[
    "NODE_REPORT*",
    "NAV_*",
    "DESIRED_*",
    "USM_*",
    "DB_*",
    "VIEW_*",
];
pub use crate::mqtt::topics::MOOS_MODEL;

/// The MOOS auxiliary source (`SrcAux`, which the MOOSDB forwards with the
/// mail) of every posting a bridge makes from MQTT: no bridge mirrors such
/// mail back onto MQTT, so no configuration of bridges can loop.
pub const FROM_MQTT_AUX: &str = "usim_bridge:mqtt";
/// Values the community posted on a `--to-moos` variable remembered per
/// topic for echo suppression.
const ECHO_MEMORY: usize = 64;
/// How long after the community posted a value an equal MQTT message on
/// that variable's topic counts as a mirror's echo, real s.
pub const ECHO_WINDOW: f64 = 2.0;
/// Largest MQTT packet the bridge publishes, bytes (the client's outgoing
/// limit, [`crate::mqtt::endpoint::MAX_OUTGOING_PACKET`]): a larger mirrored
/// value is dropped and logged, never sent (which would drop the
/// connection).
pub const MAX_MQTT_OUT: usize = crate::mqtt::endpoint::MAX_OUTGOING_PACKET;
/// Largest MQTT payload posted into the MOOSDB, bytes; larger messages on a
/// `--to-moos` topic are dropped and logged.
pub const MAX_TO_MOOS_PAYLOAD: usize = 64 * 1024;
/// A vehicle whose NODE_REPORT has not come for this long, real s, is gone:
/// the retained `status` and `model` the bridge set for it are cleared.
pub const VEHICLE_TIMEOUT: f64 = 10.0;
/// Most vehicles the bridge announces at once (retained `status`/`model`);
/// reports of further names are still mirrored, without a status.
pub const MAX_VEHICLES: usize = 4096;
/// Distinct names (bad topics, oversize values) logged one line each;
/// beyond, only counts.
const MAX_LOGGED_NAMES: usize = 1024;
/// MOOS variables whose latest value completes the community's own
/// vehicle's NODE_REPORT where the MOOS report lacks a field.
const NAV_FILL: &[(&str, &str)] = &[
    ("NAV_SPEED", "speed"),
    ("NAV_HEADING", "heading"),
    ("NAV_DEPTH", "depth"),
    ("NAV_LAT", "lat"),
    ("NAV_LONG", "lon"),
    ("NAV_SPEED_OVER_GROUND", "sog"),
    ("NAV_HEADING_OVER_GROUND", "hog"),
    ("NAV_PITCH", "pitch"),
    ("NAV_YAW", "yaw"),
    ("NAV_ALTITUDE", "altitude"),
];

/// One MQTT publication to make.
#[derive(Debug, Clone, PartialEq)]
pub struct MqttOut {
    /// Topic.
    pub topic: String,
    /// Payload.
    pub payload: Vec<u8>,
    /// Retained.
    pub retain: bool,
}

/// One MOOS posting to make (with [`FROM_MQTT_AUX`]).
#[derive(Debug, Clone, PartialEq)]
pub enum MoosPost {
    /// A double.
    Double(String, f64),
    /// A string.
    Text(String, String),
}

/// A vehicle seen in NODE_REPORTs.
#[derive(Debug, Clone)]
struct Seen {
    /// Reports mirrored (the JSON's `k`).
    k: u64,
    /// Real time of the last report, s.
    last: f64,
    /// Whether the bridge set its retained status and model.
    announced: bool,
}

/// The bridge's decisions.
#[derive(Debug)]
pub struct Mirror {
    root: String,
    community: String,
    own_name: String,
    patterns: Vec<String>,
    to_moos: HashSet<String>,
    types: HashMap<String, DataType>,
    /// Per `--to-moos` topic: (payload as mirrored, real time seen).
    recent: HashMap<String, VecDeque<(Vec<u8>, f64)>>,
    vehicles: HashMap<String, Seen>,
    announced: usize,
    /// Latest values of [`NAV_FILL`] in the community.
    nav: HashMap<&'static str, f64>,
    logged: HashSet<u64>,
    warnings: Vec<String>,
    /// MOOS values not mirrored: not a valid topic.
    pub bad_topics: u64,
    /// Values dropped as too large (either way).
    pub oversize: u64,
}

/// Why a topic level (a MOOS variable or community name) cannot be part of
/// an MQTT topic: empty, an MQTT wildcard or NUL, a control character (C0,
/// DEL, C1: brokers refuse them), a Unicode noncharacter (U+FFFE, U+FDD0…),
/// or longer than a topic may be (65,535 bytes).
pub fn topic_level_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        return Some("is empty");
    }
    if s.len() > 65_000 {
        return Some("is longer than an MQTT topic may be");
    }
    for c in s.chars() {
        if matches!(c, '+' | '#') {
            return Some("has an MQTT wildcard (+ or #)");
        }
        if c.is_control() {
            return Some("has a control character");
        }
        let u = c as u32;
        if (0xFDD0..=0xFDEF).contains(&u) || u & 0xFFFE == 0xFFFE {
            return Some("has a Unicode noncharacter");
        }
    }
    None
}

fn name_hash(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

impl Mirror {
    /// A mirror of `community` under `root`, as MOOS client `own_name`.
    pub fn new(
        root: &str,
        community: &str,
        own_name: &str,
        patterns: &[String],
        to_moos: &[String],
    ) -> Mirror {
        Mirror {
            root: root.to_string(),
            community: community.to_string(),
            own_name: own_name.to_string(),
            patterns: patterns.to_vec(),
            to_moos: to_moos.iter().cloned().collect(),
            types: HashMap::new(),
            recent: HashMap::new(),
            vehicles: HashMap::new(),
            announced: 0,
            nav: HashMap::new(),
            logged: HashSet::new(),
            warnings: Vec::new(),
            bad_topics: 0,
            oversize: 0,
        }
    }

    /// The community (it may become known only at the welcome).
    pub fn set_community(&mut self, c: &str) {
        self.community = c.to_string();
        if let Some(why) = topic_level_problem(c) {
            self.warnings.push(format!(
                "community {} {why}: nothing of it can be mirrored onto MQTT",
                log_safe(c, 80)
            ));
        }
    }

    /// The MQTT topic of a MOOS variable.
    pub fn topic(&self, var: &str) -> String {
        format!("{}/{}/{}", self.root, self.community, var)
    }

    /// MQTT subscriptions for the `--to-moos` variables (those that make a
    /// valid topic).
    pub fn subscriptions(&self) -> Vec<String> {
        if topic_level_problem(&self.community).is_some() {
            return Vec::new();
        }
        let mut v: Vec<String> = self
            .to_moos
            .iter()
            .filter(|var| topic_level_problem(var).is_none())
            .map(|var| self.topic(var))
            .collect();
        v.sort();
        v
    }

    /// Log lines the last calls produced (the runtime writes them).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Log `line` if `name` was not logged before (bounded).
    fn warn_once(&mut self, name: &str, line: impl FnOnce() -> String) {
        if self.logged.len() < MAX_LOGGED_NAMES {
            if self.logged.insert(name_hash(name)) {
                self.warnings.push(line());
            }
        } else if self.logged.len() == MAX_LOGGED_NAMES {
            self.logged.insert(u64::MAX);
            self.warnings.push(format!(
                "{MAX_LOGGED_NAMES} names logged: further skipped or dropped values are only counted"
            ));
        }
    }

    fn remember(&mut self, topic: &str, payload: &[u8], now: f64) {
        let q = self.recent.entry(topic.to_string()).or_default();
        while q.front().is_some_and(|(_, t)| now - t > ECHO_WINDOW) {
            q.pop_front();
        }
        q.push_back((payload.to_vec(), now));
        if q.len() > ECHO_MEMORY {
            q.pop_front();
        }
    }

    /// `out` unless the packet would be over [`MAX_MQTT_OUT`] (then logged).
    fn push_checked(&mut self, out: &mut Vec<MqttOut>, o: MqttOut, var: &str) {
        // Fixed header (≤ 5 bytes) + topic length (2) + topic + payload.
        if o.topic.len() + o.payload.len() + 7 > MAX_MQTT_OUT {
            self.oversize += 1;
            let n = o.payload.len();
            self.warn_once(var, || {
                format!(
                    "MOOS {} of {n} bytes not mirrored: over the {MAX_MQTT_OUT}-byte MQTT packet limit \
                     (further oversize values of it are dropped silently)",
                    log_safe(var, 80)
                )
            });
            return;
        }
        out.push(o);
    }

    /// A MOOS mail message at real time `now` (s): what to publish on MQTT.
    pub fn from_moos(&mut self, m: &Message, now: f64) -> Vec<MqttOut> {
        if m.data_type != DataType::NotSet {
            self.types.entry(m.key.clone()).or_insert(m.data_type);
        }
        // Our own postings, and every bridge's postings from MQTT.
        if m.source == self.own_name || m.source_aux == FROM_MQTT_AUX {
            return Vec::new();
        }
        if m.data_type == DataType::Double && m.dval.is_finite() {
            if let Some((var, _)) = NAV_FILL.iter().find(|(v, _)| *v == m.key) {
                self.nav.insert(var, m.dval);
            }
        }
        if !self.patterns.iter().any(|p| wild_match(p, &m.key)) {
            return Vec::new();
        }
        let mut out = Vec::new();
        if (m.key == "NODE_REPORT" || m.key == "NODE_REPORT_LOCAL")
            && m.data_type == DataType::String
        {
            self.node_report(m, now, &mut out);
            // The raw string keeps its own topic unless the JSON took it.
            if name_of(&m.sval).as_deref() == Some(self.community.as_str())
                && m.key == "NODE_REPORT"
            {
                return out;
            }
        }
        let payload = match m.data_type {
            DataType::Double => {
                if !m.dval.is_finite() {
                    return out;
                }
                format!("{}", m.dval).into_bytes()
            }
            DataType::String => m.sval.clone().into_bytes(),
            DataType::Binary => m.bytes.clone(),
            DataType::NotSet => return out,
        };
        let problem = topic_level_problem(&m.key).or(topic_level_problem(&self.community));
        if let Some(why) = problem {
            self.bad_topics += 1;
            let key = m.key.clone();
            self.warn_once(&key, || {
                format!(
                    "MOOS variable {} {why}: not a valid MQTT topic, not mirrored (logged once)",
                    log_safe(&key, 80)
                )
            });
            return out;
        }
        let topic = self.topic(&m.key);
        if self.to_moos.contains(&m.key) {
            self.remember(&topic, &payload, now);
        }
        let o = MqttOut {
            topic,
            payload,
            retain: false,
        };
        self.push_checked(&mut out, o, &m.key);
        out
    }

    /// A MOOS node report: usim's NODE_REPORT JSON of its vehicle, and the
    /// retained status and model when the vehicle is new.
    fn node_report(&mut self, m: &Message, now: f64, out: &mut Vec<MqttOut>) {
        let Some(mut r) = NodeReport::parse(&m.sval) else {
            return;
        };
        if crate::mqtt::topics::Topics::new(&self.root, &r.name).is_err() {
            return;
        }
        if r.name == self.community {
            // The community's own vehicle: what the report lacks, from its NAV_*.
            for (var, field) in NAV_FILL {
                if let Some(v) = self.nav.get(var) {
                    r.fill(field, *v);
                }
            }
        }
        let new = !self.vehicles.contains_key(&r.name);
        let announce = new && self.announced < MAX_VEHICLES;
        if new && !announce {
            let name = r.name.clone();
            self.warn_once(&name, || {
                format!(
                    "{MAX_VEHICLES} vehicles announced: {} is mirrored without a retained status",
                    log_safe(&name, 80)
                )
            });
        }
        if new && self.vehicles.len() >= 2 * MAX_VEHICLES {
            return;
        }
        let seen = self.vehicles.entry(r.name.clone()).or_insert(Seen {
            k: 0,
            last: now,
            announced: false,
        });
        seen.k += 1;
        seen.last = now;
        if announce {
            seen.announced = true;
            self.announced += 1;
            out.push(MqttOut {
                topic: format!("{}/{}/status", self.root, r.name),
                payload: b"online".to_vec(),
                retain: true,
            });
            out.push(MqttOut {
                topic: format!("{}/{}/{}", self.root, r.name, crate::mqtt::topics::MODEL),
                payload: MOOS_MODEL.as_bytes().to_vec(),
                retain: true,
            });
        }
        let json = r.to_json(seen.k, m.time);
        out.push(MqttOut {
            topic: format!("{}/{}/NODE_REPORT", self.root, r.name),
            payload: json.into_bytes(),
            retain: false,
        });
    }

    fn clear(&self, name: &str) -> [MqttOut; 2] {
        [
            MqttOut {
                topic: format!("{}/{}/status", self.root, name),
                payload: Vec::new(),
                retain: true,
            },
            MqttOut {
                topic: format!("{}/{}/{}", self.root, name, crate::mqtt::topics::MODEL),
                payload: Vec::new(),
                retain: true,
            },
        ]
    }

    /// At real time `now` (s): the retained status and model of every
    /// vehicle silent for [`VEHICLE_TIMEOUT`] cleared (empty retained
    /// payloads), and the vehicle forgotten.
    pub fn expire(&mut self, now: f64) -> Vec<MqttOut> {
        let gone: Vec<String> = self
            .vehicles
            .iter()
            .filter(|(_, s)| !(now - s.last <= VEHICLE_TIMEOUT))
            .map(|(n, _)| n.clone())
            .collect();
        let mut out = Vec::new();
        for n in gone {
            if let Some(s) = self.vehicles.remove(&n) {
                if s.announced {
                    self.announced -= 1;
                    out.extend(self.clear(&n));
                    self.warnings.push(format!(
                        "vehicle {n}: no NODE_REPORT for {VEHICLE_TIMEOUT} s: its retained status cleared"
                    ));
                }
            }
        }
        out
    }

    /// The bridge stops: every retained status and model it set, cleared.
    pub fn shutdown(&mut self) -> Vec<MqttOut> {
        let mut names: Vec<String> = self
            .vehicles
            .drain()
            .filter(|(_, s)| s.announced)
            .map(|(n, _)| n)
            .collect();
        names.sort();
        self.announced = 0;
        names.iter().flat_map(|n| self.clear(n)).collect()
    }

    /// An MQTT message at real time `now` (s): what to post into the
    /// MOOSDB (`None`: not ours, a mirror's echo of a value the community
    /// just posted, oversize, or not UTF-8).
    pub fn from_mqtt(&mut self, topic: &str, payload: &[u8], now: f64) -> Option<MoosPost> {
        let prefix = format!("{}/{}/", self.root, self.community);
        let var = topic.strip_prefix(&prefix)?;
        if !self.to_moos.contains(var) {
            return None;
        }
        if let Some(q) = self.recent.get(topic) {
            if q.iter()
                .any(|(p, t)| p.as_slice() == payload && now - t <= ECHO_WINDOW)
            {
                return None;
            }
        }
        if payload.len() > MAX_TO_MOOS_PAYLOAD {
            self.oversize += 1;
            let (var, n) = (var.to_string(), payload.len());
            self.warn_once(topic, || {
                format!(
                    "MQTT {} of {n} bytes not posted into the MOOSDB: over {MAX_TO_MOOS_PAYLOAD} bytes \
                     (further oversize messages there are dropped silently)",
                    log_safe(&prefix, 80) + &log_safe(&var, 80)
                )
            });
            return None;
        }
        let text = std::str::from_utf8(payload).ok()?;
        let number = text.trim().parse::<f64>().ok().filter(|v| v.is_finite());
        let post = match (self.types.get(var), number) {
            (Some(DataType::Double), Some(v)) => MoosPost::Double(var.to_string(), v),
            (Some(DataType::Double), None) => return None,
            (Some(_), _) => MoosPost::Text(var.to_string(), text.to_string()),
            (None, Some(v)) => MoosPost::Double(var.to_string(), v),
            (None, None) => MoosPost::Text(var.to_string(), text.to_string()),
        };
        Some(post)
    }
}

fn name_of(report: &str) -> Option<String> {
    report
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("NAME"))
        .map(|(_, v)| v.trim().to_string())
}

/// The fields of usim's NODE_REPORT JSON a MOOS report can fill, in the
/// CSV's column order; every other column is `null` (not known on the MOOS
/// side).
const REPORT_FIELDS: &[&str] = &[
    "t", "x", "y", "speed", "heading", "depth", "altitude", "pitch", "yaw", "sog", "hog", "lat",
    "lon",
];

/// A MOOS node report, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeReport {
    /// `NAME`.
    pub name: String,
    /// Known fields (keys of [`REPORT_FIELDS`]), finite.
    fields: Vec<(&'static str, f64)>,
}

impl NodeReport {
    /// A MOOS node report (`NAME=..,X=..,Y=..,SPD=..,HDG=..,DEP=..,LAT=..,
    /// LON=..,TIME=..,...`, pNodeReporter's form). `None` without a usable
    /// NAME or X/Y; fields that are not finite numbers are left out.
    pub fn parse(report: &str) -> Option<NodeReport> {
        let mut name = None;
        let mut r = NodeReport {
            name: String::new(),
            fields: Vec::new(),
        };
        for kv in report.split(',').take(64) {
            let Some((k, v)) = kv.split_once('=') else {
                continue;
            };
            let k = k.trim().to_ascii_uppercase();
            let v = v.trim();
            if k == "NAME" {
                name = Some(v.to_string());
                continue;
            }
            let key = match k.as_str() {
                "X" => "x",
                "Y" => "y",
                "SPD" => "speed",
                "HDG" => "heading",
                "DEP" => "depth",
                "LAT" => "lat",
                "LON" => "lon",
                "TIME" => "t",
                "YAW" => "yaw",
                _ => continue,
            };
            if let Some(x) = v.parse::<f64>().ok().filter(|x| x.is_finite()) {
                r.fill(key, x);
            }
        }
        r.name = name.filter(|n| !n.is_empty())?;
        (r.get("x").is_some() && r.get("y").is_some()).then_some(r)
    }

    /// A field's value.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// Set `key` (of [`REPORT_FIELDS`]) unless it is known already.
    fn fill(&mut self, key: &str, v: f64) {
        if !v.is_finite() || self.get(key).is_some() {
            return;
        }
        if let Some(k) = REPORT_FIELDS.iter().find(|f| **f == key) {
            self.fields.push((k, v));
        }
    }

    /// usim's NODE_REPORT JSON: every column of the replay's CSV (`k` the
    /// report's index, `t` its TIME else `mail_time`, `sog`/`hog` the
    /// speed/heading over ground else the speed and heading, `nav_speed`/
    /// `nav_heading` the speed and heading; unknown columns `null`).
    pub fn to_json(&self, k: u64, mail_time: f64) -> String {
        let mut obj = serde_json::Map::new();
        let num = |v: Option<f64>| v.map_or(serde_json::Value::Null, serde_json::Value::from);
        let speed = self.get("speed");
        let heading = self.get("heading");
        for col in crate::replay::csv::HEADER.split(',') {
            let v = match col {
                "k" => Some(k as f64),
                "t" => self.get("t").or(Some(mail_time).filter(|t| t.is_finite())),
                "sog" => self.get("sog").or(speed),
                "hog" => self.get("hog").or(heading),
                "nav_speed" => speed,
                "nav_heading" => heading,
                c => self.get(c),
            };
            obj.insert(col.to_string(), num(v));
        }
        serde_json::Value::Object(obj).to_string()
    }
}

/// A MOOS node report as usim's `NODE_REPORT` JSON ([`NodeReport::to_json`]
/// with `k` 0): its vehicle's name and the JSON. `None` without a usable
/// NAME or X/Y.
pub fn node_report_json(report: &str) -> Option<(String, String)> {
    let r = NodeReport::parse(report)?;
    let j = r.to_json(0, f64::NAN);
    Some((r.name, j))
}

/// Bridge settings.
#[derive(Debug, Clone)]
pub struct BridgeOptions {
    /// MOOSDB host.
    pub host: String,
    /// MOOSDB port.
    pub port: u16,
    /// Our MOOS name.
    pub moos_name: String,
    /// `MOOSTimeWarp`.
    pub time_warp: f64,
    /// The MQTT broker.
    pub broker: BrokerUrl,
    /// Topic root.
    pub root: String,
    /// Globs of MOOS variables to mirror.
    pub mirror: Vec<String>,
    /// Variables taken back from MQTT into the MOOSDB.
    pub to_moos: Vec<String>,
}

/// Run until `stop` is set.
pub fn run_bridge(opts: BridgeOptions, stop: Arc<AtomicBool>) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(bridge_async(opts, stop))
}

fn publish_all(client: &rumqttc::AsyncClient, outs: Vec<MqttOut>, dropped: &mut u64) {
    for o in outs {
        if client
            .try_publish(o.topic, QoS::AtMostOnce, o.retain, o.payload)
            .is_err()
        {
            *dropped += 1;
            if dropped.is_power_of_two() {
                warn!("MQTT outgoing queue full: {dropped} publications dropped so far");
            }
        }
    }
}

fn log_warnings(m: &mut Mirror) {
    for w in m.take_warnings() {
        warn!("{w}");
    }
}

async fn bridge_async(opts: BridgeOptions, stop: Arc<AtomicBool>) -> anyhow::Result<()> {
    let conn = Conn::start(ConnOptions {
        host: opts.host.clone(),
        port: opts.port,
        name: opts.moos_name.clone(),
        time_warp: opts.time_warp,
    });
    for p in &opts.mirror {
        conn.register_wildcard(Filter {
            app: "*".into(),
            var: p.clone(),
            interval: 0.0,
        });
    }
    for v in &opts.to_moos {
        // Learn the variable's type in the community.
        conn.register(v, 0.0);
    }
    let poster = conn.poster();
    let mirror = Arc::new(std::sync::Mutex::new(Mirror::new(
        &opts.root,
        "",
        &opts.moos_name,
        &opts.mirror,
        &opts.to_moos,
    )));
    let mut spec = ConnectSpec::new(
        opts.broker.clone(),
        format!("usim-moos-bridge-{}-{}", opts.moos_name, std::process::id()),
    );
    // Any packet the broker may send is read (and an oversize one dropped
    // by the mirror): a retained message over a smaller limit would break
    // the connection again at every resubscription.
    spec.max_incoming_packet = crate::mqtt::record::MAX_MQTT_PACKET;
    let (client, mut eventloop) = spec.client(4096)?;
    // MOOS events on a thread of their own; they publish straight on MQTT.
    let (ready_tx, mut ready_rx) = tokio::sync::watch::channel(Vec::<String>::new());
    let (m2, c2, s2) = (Arc::clone(&mirror), client.clone(), Arc::clone(&stop));
    let moos_thread = std::thread::spawn(move || {
        let mut dropped = 0u64;
        let mut last_expiry = unix_now();
        while !s2.load(Ordering::SeqCst) {
            let ev = conn.recv_timeout(Duration::from_millis(200));
            let now = unix_now();
            if now - last_expiry >= 1.0 {
                last_expiry = now;
                let mut m = m2.lock().unwrap_or_else(|e| e.into_inner());
                let outs = m.expire(now);
                log_warnings(&mut m);
                drop(m);
                publish_all(&c2, outs, &mut dropped);
            }
            let Some(ev) = ev else {
                continue;
            };
            match ev {
                Incoming::Connected(w) => {
                    let mut m = m2.lock().unwrap_or_else(|e| e.into_inner());
                    m.set_community(&w.community);
                    log_warnings(&mut m);
                    let _ = ready_tx.send(m.subscriptions());
                    info!(
                        "mirroring community {} onto MQTT",
                        log_safe(&w.community, 80)
                    );
                }
                Incoming::Mail(msg) => {
                    let mut m = m2.lock().unwrap_or_else(|e| e.into_inner());
                    let outs = m.from_moos(&msg, now);
                    log_warnings(&mut m);
                    drop(m);
                    publish_all(&c2, outs, &mut dropped);
                }
                Incoming::Disconnected(_) => {}
            }
        }
    });
    let mut subs: Vec<String> = Vec::new();
    let mut connected = false;
    let mut last_err = String::new();
    while !stop.load(Ordering::SeqCst) {
        tokio::select! {
            _ = ready_rx.changed() => {
                subs = ready_rx.borrow().clone();
                if connected && !subs.is_empty() {
                    let f: Vec<_> = subs.iter().map(|t| SubscribeFilter::new(t.clone(), QoS::AtMostOnce)).collect();
                    let _ = client.try_subscribe_many(f);
                }
            }
            ev = eventloop.poll() => match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    connected = true;
                    info!("connected to the MQTT broker {}", opts.broker);
                    if !subs.is_empty() {
                        let f: Vec<_> = subs.iter().map(|t| SubscribeFilter::new(t.clone(), QoS::AtMostOnce)).collect();
                        let _ = client.try_subscribe_many(f);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let mut m = mirror.lock().unwrap_or_else(|e| e.into_inner());
                    let post = m.from_mqtt(&p.topic, &p.payload, unix_now());
                    log_warnings(&mut m);
                    drop(m);
                    match post {
                        Some(MoosPost::Double(var, v)) => poster.notify_aux(&var, Ok(v), FROM_MQTT_AUX),
                        Some(MoosPost::Text(var, s)) => poster.notify_aux(&var, Err(&s), FROM_MQTT_AUX),
                        None => {}
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    connected = false;
                    let msg = e.to_string();
                    if msg != last_err {
                        warn!("MQTT broker {}: {msg}; reconnecting", opts.broker);
                        last_err = msg;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            },
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    let _ = moos_thread.join();
    // Clear the retained statuses set, then disconnect (at most 3 s).
    let clears = mirror.lock().unwrap_or_else(|e| e.into_inner()).shutdown();
    let n = clears.len() / 2;
    if connected {
        let mut dropped = 0;
        publish_all(&client, clears, &mut dropped);
        let _ = client.try_disconnect();
        let flushed = tokio::time::timeout(Duration::from_secs(3), async {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect)) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await;
        if n > 0 {
            if flushed.is_ok() && dropped == 0 {
                info!("cleared the retained status of {n} MOOS vehicles");
            } else {
                warn!("the retained status of some of {n} MOOS vehicles may not be cleared");
            }
        }
    } else if n > 0 {
        warn!("not connected to the broker: the retained status of {n} MOOS vehicles stays");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(m: Message, source: &str) -> Message {
        Message {
            source: source.into(),
            ..m
        }
    }

    #[test]
    fn node_reports_become_json() {
        let (n, j) = node_report_json(
            "NAME=henry,X=12.5,Y=-3,SPD=1.2,HDG=90,DEP=0,LAT=43.8,LON=-70.3,TYPE=kayak,TIME=1700000000.5",
        )
        .unwrap();
        assert_eq!(n, "henry");
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["x"], 12.5);
        assert_eq!(v["heading"], 90.0);
        // Over ground: the report's speed and heading; every CSV column.
        assert_eq!(
            (v["sog"].as_f64(), v["hog"].as_f64()),
            (Some(1.2), Some(90.0))
        );
        assert_eq!(v["t"], 1700000000.5);
        for col in crate::replay::csv::HEADER.split(',') {
            assert!(v.get(col).is_some(), "{col} in {j}");
        }
        assert!(v["thrust"].is_null());
        assert!(crate::view::protocol::Report::parse(j.as_bytes()).is_ok());
        assert!(node_report_json("NAME=a,X=nan,Y=1").is_none());
        assert!(node_report_json("X=1,Y=1").is_none());
    }

    #[test]
    fn the_community_vehicle_is_completed_from_its_nav() {
        let mut m = Mirror::new("usim", "alpha", "bridge", &["*".into()], &[]);
        for (var, v) in [
            ("NAV_SPEED", 2.0),
            ("NAV_HEADING", 45.0),
            ("NAV_SPEED_OVER_GROUND", 2.5),
        ] {
            m.from_moos(&mail(Message::notify_double(var, v, 5.0), "sim"), 1.0);
        }
        let r = mail(
            Message::notify_string("NODE_REPORT_LOCAL", "NAME=alpha,X=1,Y=2", 7.0),
            "nr",
        );
        let out = m.from_moos(&r, 1.0);
        let j: serde_json::Value = serde_json::from_slice(
            &out.iter()
                .find(|o| o.topic == "usim/alpha/NODE_REPORT")
                .unwrap()
                .payload,
        )
        .unwrap();
        assert_eq!(j["k"], 1.0);
        assert_eq!(j["t"], 7.0);
        assert_eq!(
            (j["speed"].as_f64(), j["heading"].as_f64()),
            (Some(2.0), Some(45.0))
        );
        assert_eq!(
            (j["sog"].as_f64(), j["hog"].as_f64()),
            (Some(2.5), Some(45.0))
        );
        let out = m.from_moos(&r, 2.0);
        assert_eq!(out.len(), 2, "no second status: {out:?}");
        // Another vehicle's report is not completed from alpha's NAV_*.
        let b = mail(
            Message::notify_string("NODE_REPORT", "NAME=bravo,X=1,Y=2", 7.0),
            "nr",
        );
        let out = m.from_moos(&b, 2.0);
        let j: serde_json::Value = serde_json::from_slice(
            &out.iter()
                .find(|o| o.topic == "usim/bravo/NODE_REPORT")
                .unwrap()
                .payload,
        )
        .unwrap();
        assert!(j["sog"].is_null() && j["speed"].is_null());
    }

    #[test]
    fn statuses_are_cleared_when_a_vehicle_goes_and_at_shutdown() {
        let mut m = Mirror::new("usim", "c", "bridge", &["NODE_REPORT*".into()], &[]);
        let r = |n: &str| {
            mail(
                Message::notify_string("NODE_REPORT", &format!("NAME={n},X=1,Y=2"), 1.0),
                "nr",
            )
        };
        let out = m.from_moos(&r("a"), 0.0);
        assert!(out
            .iter()
            .any(|o| o.topic == "usim/a/status" && o.retain && o.payload == b"online"));
        m.from_moos(&r("b"), 5.0);
        assert!(m.expire(9.0).is_empty());
        let out = m.expire(10.5);
        let topics: Vec<&str> = out.iter().map(|o| o.topic.as_str()).collect();
        assert_eq!(topics, ["usim/a/status", "usim/a/model"]);
        assert!(out.iter().all(|o| o.retain && o.payload.is_empty()));
        // a comes back: announced again.
        let out = m.from_moos(&r("a"), 11.0);
        assert!(out.iter().any(|o| o.topic == "usim/a/status"));
        let out = m.shutdown();
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|o| o.retain && o.payload.is_empty()));
    }

    #[test]
    fn no_echo_and_types_kept() {
        let mut m = Mirror::new(
            "usim",
            "alpha",
            "bridge",
            &["*".into()],
            &["DEPLOY".into(), "SPEED".into()],
        );
        let s = mail(Message::notify_string("DEPLOY", "true", 1.0), "pHelm");
        let out = m.from_moos(&s, 100.0);
        assert_eq!(out[0].topic, "usim/alpha/DEPLOY");
        // The mirror coming back (ours or another bridge's): not posted.
        assert_eq!(m.from_mqtt("usim/alpha/DEPLOY", b"true", 100.1), None);
        assert_eq!(m.from_mqtt("usim/alpha/DEPLOY", b"true", 100.2), None);
        // The same value from MQTT later is a command again.
        assert_eq!(
            m.from_mqtt("usim/alpha/DEPLOY", b"true", 103.0),
            Some(MoosPost::Text("DEPLOY".into(), "true".into()))
        );
        // A string variable stays a string even when it looks like a number.
        assert_eq!(
            m.from_mqtt("usim/alpha/DEPLOY", b"1", 100.3),
            Some(MoosPost::Text("DEPLOY".into(), "1".into()))
        );
        assert_eq!(
            m.from_mqtt("usim/alpha/SPEED", b"2.5", 100.3),
            Some(MoosPost::Double("SPEED".into(), 2.5))
        );
        // Mail the bridge wrote is not mirrored back, nor any bridge's
        // posting from MQTT (another bridge of the community).
        let own = mail(Message::notify_double("SPEED", 2.5, 1.0), "bridge");
        assert!(m.from_moos(&own, 100.4).is_empty());
        let mut other = mail(Message::notify_double("SPEED", 2.5, 1.0), "bridge2");
        other.source_aux = FROM_MQTT_AUX.into();
        assert!(m.from_moos(&other, 100.4).is_empty());
        assert_eq!(m.from_mqtt("usim/beta/SPEED", b"1", 100.5), None);
    }

    #[test]
    fn oversize_and_bad_names_are_dropped_and_logged_once() {
        let mut m = Mirror::new("usim", "alpha", "bridge", &["*".into()], &["CMD".into()]);
        let big = "x".repeat(70_000);
        for _ in 0..3 {
            let out = m.from_moos(&mail(Message::notify_string("BIG", &big, 1.0), "a"), 1.0);
            assert!(out.is_empty());
        }
        assert_eq!(m.oversize, 3);
        assert_eq!(m.take_warnings().len(), 1);
        // Just under the packet limit is sent.
        let fits = "x".repeat(MAX_MQTT_OUT - 7 - "usim/alpha/BIG".len());
        assert_eq!(
            m.from_moos(&mail(Message::notify_string("BIG", &fits, 1.0), "a"), 1.0)
                .len(),
            1
        );
        for name in [
            "A\u{1b}B",
            "A\0",
            "A\u{7f}",
            "A\u{85}",
            "A\u{fffe}",
            "A+",
            "A#",
            "",
        ] {
            for _ in 0..2 {
                let out = m.from_moos(&mail(Message::notify_double(name, 1.0, 1.0), "a"), 1.0);
                assert!(out.is_empty(), "{name:?}");
            }
        }
        assert_eq!(m.take_warnings().len(), 8);
        assert_eq!(m.bad_topics, 16);
        assert_eq!(m.from_mqtt("usim/alpha/CMD", big.as_bytes(), 1.0), None);
        assert_eq!(m.oversize, 4);
        assert_eq!(m.take_warnings().len(), 1);
        assert!(topic_level_problem("NAV_X").is_none());
        assert!(topic_level_problem("héllo/ok").is_none());
    }
}
