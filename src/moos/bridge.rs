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
use super::log_safe;
use super::wildcard::{wild_match, Filter};
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
/// Own MQTT payloads remembered per topic for echo suppression.
const ECHO_MEMORY: usize = 64;

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

/// One MOOS posting to make.
#[derive(Debug, Clone, PartialEq)]
pub enum MoosPost {
    /// A double.
    Double(String, f64),
    /// A string.
    Text(String, String),
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
    recent: HashMap<String, VecDeque<Vec<u8>>>,
    online: HashSet<String>,
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
            online: HashSet::new(),
        }
    }

    /// The community (it may become known only at the welcome).
    pub fn set_community(&mut self, c: &str) {
        self.community = c.to_string();
    }

    /// The MQTT topic of a MOOS variable.
    pub fn topic(&self, var: &str) -> String {
        format!("{}/{}/{}", self.root, self.community, var)
    }

    /// MQTT subscriptions for the `--to-moos` variables.
    pub fn subscriptions(&self) -> Vec<String> {
        let mut v: Vec<String> = self.to_moos.iter().map(|var| self.topic(var)).collect();
        v.sort();
        v
    }

    fn remember(&mut self, topic: &str, payload: &[u8]) {
        let q = self.recent.entry(topic.to_string()).or_default();
        q.push_back(payload.to_vec());
        if q.len() > ECHO_MEMORY {
            q.pop_front();
        }
    }

    /// A MOOS mail message: what to publish on MQTT.
    pub fn from_moos(&mut self, m: &Message) -> Vec<MqttOut> {
        if m.data_type != DataType::NotSet {
            self.types.entry(m.key.clone()).or_insert(m.data_type);
        }
        if m.source == self.own_name {
            return Vec::new();
        }
        if !self.patterns.iter().any(|p| wild_match(p, &m.key)) {
            return Vec::new();
        }
        let mut out = Vec::new();
        if (m.key == "NODE_REPORT" || m.key == "NODE_REPORT_LOCAL")
            && m.data_type == DataType::String
        {
            if let Some((name, json)) = node_report_json(&m.sval) {
                if crate::mqtt::topics::Topics::new(&self.root, &name).is_ok() {
                    if self.online.insert(name.clone()) {
                        out.push(MqttOut {
                            topic: format!("{}/{}/status", self.root, name),
                            payload: b"online".to_vec(),
                            retain: true,
                        });
                        out.push(MqttOut {
                            topic: format!("{}/{}/{}", self.root, name, crate::mqtt::topics::MODEL),
                            payload: MOOS_MODEL.as_bytes().to_vec(),
                            retain: true,
                        });
                    }
                    out.push(MqttOut {
                        topic: format!("{}/{}/NODE_REPORT", self.root, name),
                        payload: json.into_bytes(),
                        retain: false,
                    });
                }
            }
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
        let topic = self.topic(&m.key);
        if self.to_moos.contains(&m.key) {
            self.remember(&topic, &payload);
        }
        out.push(MqttOut {
            topic,
            payload,
            retain: false,
        });
        out
    }

    /// An MQTT message: what to post into the MOOSDB (`None`: not ours,
    /// our own echo, or not UTF-8).
    pub fn from_mqtt(&mut self, topic: &str, payload: &[u8]) -> Option<MoosPost> {
        let prefix = format!("{}/{}/", self.root, self.community);
        let var = topic.strip_prefix(&prefix)?;
        if !self.to_moos.contains(var) {
            return None;
        }
        if let Some(q) = self.recent.get_mut(topic) {
            if let Some(i) = q.iter().position(|p| p == payload) {
                q.remove(i);
                return None;
            }
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

/// A MOOS node report (`NAME=..,X=..,Y=..,SPD=..,HDG=..,DEP=..,LAT=..,
/// LON=..,TIME=..,...`) as usim's `NODE_REPORT` JSON (x, y m; speed m/s;
/// heading deg; depth m; lat/lon deg; t = the report's TIME, MOOS s).
/// `None` without a usable NAME or X/Y; fields that are not finite
/// numbers are left out.
pub fn node_report_json(report: &str) -> Option<(String, String)> {
    let mut name = None;
    let mut fields: Vec<(&str, f64)> = Vec::new();
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
            _ => continue,
        };
        if let Some(x) = v.parse::<f64>().ok().filter(|x| x.is_finite()) {
            if !fields.iter().any(|(f, _)| *f == key) {
                fields.push((key, x));
            }
        }
    }
    let name = name.filter(|n| !n.is_empty())?;
    if !(fields.iter().any(|(k, _)| *k == "x") && fields.iter().any(|(k, _)| *k == "y")) {
        return None;
    }
    let mut obj = serde_json::Map::new();
    for (k, v) in fields {
        obj.insert(k.to_string(), serde_json::Value::from(v));
    }
    Some((name, serde_json::Value::Object(obj).to_string()))
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
    let spec = ConnectSpec::new(
        opts.broker.clone(),
        format!("usim-moos-bridge-{}-{}", opts.moos_name, std::process::id()),
    );
    let (client, mut eventloop) = spec.client(4096)?;
    // MOOS events on a thread of their own; they publish straight on MQTT.
    let (ready_tx, mut ready_rx) = tokio::sync::watch::channel(Vec::<String>::new());
    let (m2, c2, s2) = (Arc::clone(&mirror), client.clone(), Arc::clone(&stop));
    let moos_thread = std::thread::spawn(move || {
        let mut dropped = 0u64;
        while !s2.load(Ordering::SeqCst) {
            let Some(ev) = conn.recv_timeout(Duration::from_millis(200)) else {
                continue;
            };
            match ev {
                Incoming::Connected(w) => {
                    let mut m = m2.lock().unwrap_or_else(|e| e.into_inner());
                    m.set_community(&w.community);
                    let _ = ready_tx.send(m.subscriptions());
                    info!(
                        "mirroring community {} onto MQTT",
                        log_safe(&w.community, 80)
                    );
                }
                Incoming::Mail(msg) => {
                    let outs = m2.lock().unwrap_or_else(|e| e.into_inner()).from_moos(&msg);
                    for o in outs {
                        if c2
                            .try_publish(o.topic, QoS::AtMostOnce, o.retain, o.payload)
                            .is_err()
                        {
                            dropped += 1;
                            if dropped.is_power_of_two() {
                                warn!("MQTT outgoing queue full: {dropped} publications dropped so far");
                            }
                        }
                    }
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
                    let post = mirror.lock().unwrap_or_else(|e| e.into_inner()).from_mqtt(&p.topic, &p.payload);
                    match post {
                        Some(MoosPost::Double(var, v)) => poster.notify_double(&var, v),
                        Some(MoosPost::Text(var, s)) => poster.notify_string(&var, &s),
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
    let _ = client.try_disconnect();
    let _ = moos_thread.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(crate::view::protocol::Report::parse(j.as_bytes()).is_ok());
        assert!(node_report_json("NAME=a,X=nan,Y=1").is_none());
        assert!(node_report_json("X=1,Y=1").is_none());
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
        let mut s = Message::notify_string("DEPLOY", "true", 1.0);
        s.source = "pHelm".into();
        let out = m.from_moos(&s);
        assert_eq!(out[0].topic, "usim/alpha/DEPLOY");
        // Our own publication comes back once: not posted.
        assert_eq!(m.from_mqtt("usim/alpha/DEPLOY", b"true"), None);
        // A string variable stays a string even when it looks like a number.
        assert_eq!(
            m.from_mqtt("usim/alpha/DEPLOY", b"1"),
            Some(MoosPost::Text("DEPLOY".into(), "1".into()))
        );
        assert_eq!(
            m.from_mqtt("usim/alpha/SPEED", b"2.5"),
            Some(MoosPost::Double("SPEED".into(), 2.5))
        );
        // Mail the bridge wrote is not mirrored back.
        let mut own = Message::notify_double("SPEED", 2.5, 1.0);
        own.source = "bridge".into();
        assert!(m.from_moos(&own).is_empty());
        assert_eq!(m.from_mqtt("usim/beta/SPEED", b"1"), None);
    }
}
