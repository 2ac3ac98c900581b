//! One live vehicle in the host: the model, its [`Inbox`], the mail
//! handed to the model at each iteration, and its publication set
//! ([`PubSet`]: the model's `NAV_*`/`USM_*` postings, `PID_OUTPUT`,
//! `NODE_REPORT`, `NODE_REPORT_LOCAL`) written to a [`Transport`].
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use super::inbox::{DropLog, Inbox};
use super::mailbox::Mail;
use super::node_report::{node_report_local, Platform};
use crate::command::SUBSCRIPTIONS;
use crate::config::VehicleConfig;
use crate::model::{PubValue, Vehicle};

pub use crate::command::NODE_REPORT;
/// MOOS's string form `NAME=..,X=..,...,TIME=..` (optional, docs/formats.md §4);
/// its `TIME` is the vehicle clock, Unix s.
pub const NODE_REPORT_LOCAL: &str = "NODE_REPORT_LOCAL";
/// The embedded PID's outputs (`{"rudder":…,"thrust":…,"elevator":…}`),
/// posted each iteration the PID of a V22 vehicle ran.
pub const PID_OUTPUT: &str = "PID_OUTPUT";
/// The vehicle clock, Unix seconds (MOOS time), posted each iteration
/// after the iteration's other publications.
pub const USM_TIME: &str = "USM_TIME";

/// One publication's value: a number (MOOS double) or text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// A number (may be NaN before the model has a value: the transport
    /// decides whether to send it).
    Number(f64),
    /// Text (JSON reports, MOOS strings, the clock as text).
    Text(&'a str),
}

/// A transport as the host sees it.
pub trait Transport {
    /// True while publications can go out; the host builds none otherwise.
    fn connected(&self) -> bool;
    /// Queue one publication of the host's vehicle number `vehicle` into
    /// this iteration's batch; false if refused (queue full, too big).
    fn publish(&mut self, vehicle: usize, var: &str, value: Value<'_>) -> bool;
    /// The iteration's batch is complete: send it. Returns publications
    /// refused on the way.
    fn flush(&mut self) -> u64 {
        0
    }
}

/// A command the model refused at an iteration (for an adapter that
/// reports these where its users look, such as MOOS's appcast).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// Vehicle name.
    pub vehicle: String,
    /// The variable.
    pub var: String,
    /// The payload as received.
    pub payload: String,
    /// Why.
    pub reason: String,
}

/// Which publications a vehicle makes each iteration (its transport and
/// config decide).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PubSet {
    /// The model's own postings (`NAV_*`, `USM_*`, …) with their types.
    pub postings: bool,
    /// `PID_OUTPUT` when the embedded PID ran (JSON text).
    pub pid_output: bool,
    /// `NODE_REPORT` (JSON text: the snapshot plus platform type and length).
    pub node_report: bool,
    /// `USM_TIME` after every vehicle's other publications.
    pub usm_time: bool,
}

/// The subscribed variables (of [`SUBSCRIPTIONS`]) that a vehicle of this
/// config publishes itself: with `prefix = "NAV"` it posts `NAV_X`,
/// `NAV_Y`, `NAV_HEADING`, which are also uSimMarineV22's override inputs.
/// MQTT 3.1.1 and the MOOSDB deliver a client's own publications on its
/// subscriptions, so the vehicle does not subscribe to these (it would read
/// its own state back as commands).
pub fn echo_vars(cfg: &VehicleConfig) -> Vec<&'static str> {
    let mut probe = Vehicle::new(cfg, 0.0);
    probe.step(1.0);
    let published: Vec<String> = probe.publications().into_iter().map(|p| p.var).collect();
    SUBSCRIPTIONS
        .iter()
        .map(|(name, _, _)| *name)
        .filter(|name| published.iter().any(|p| p == name))
        .collect()
}

/// The vehicle's true position, m: the GT record in dual state, else the
/// NAV record (sensor noise is applied to the postings, not the record).
fn true_position(v: &Vehicle) -> (f64, f64) {
    let r = if v.params().dual_state {
        v.ground_truth()
    } else {
        v.nav()
    };
    (r.x, r.y)
}

/// The environment's fields of a `NODE_REPORT` (docs/formats.md §4), for
/// the view's wind arrow and sea legend: with `[wind]`,
/// `,"wind_speed":U,"wind_direction":D` (U(t) = mean + gust at the report's
/// mission time `t_s`, m/s; D where it comes from, degrees clockwise from
/// north); with `[sea]`, `,"sea_hs":Hs,"sea_tp":Tp,"sea_direction":D` (m,
/// s, degrees, as configured). Nothing without them, so reports of calm
/// vehicles keep their bytes.
fn env_report_fields(v: &Vehicle, t_s: f64, out: &mut Vec<u8>) {
    use std::io::Write;
    let Some(env) = v.params().env.as_deref() else {
        return;
    };
    let num = |x: f64| if x.is_finite() { x } else { 0.0 };
    if let Some(w) = &env.wind {
        let _ = write!(
            out,
            ",\"wind_speed\":{},\"wind_direction\":{}",
            num(w.speed_at(t_s)),
            num(w.settings.direction_deg)
        );
    }
    if let Some(sea) = &env.sea {
        let s = sea.state();
        let _ = write!(
            out,
            ",\"sea_hs\":{},\"sea_tp\":{},\"sea_direction\":{}",
            num(s.hs_m),
            num(s.tp_s),
            num(s.direction_deg)
        );
    }
}

/// A live vehicle's obstacles (docs/obstacles.md): the tracker, the hits
/// not yet posted, the vehicle's `TRACKED_FEATURE_<V>` variable.
#[derive(Debug)]
struct ObstacleWatch {
    tracker: crate::obstacle::Tracker,
    unposted_hits: Vec<String>,
    feature_var: String,
}

impl ObstacleWatch {
    /// After a step: each new hit is handed to the model as
    /// `OBSTACLE_HIT = "true"` (before its next step) and kept for posting.
    fn after_step(&mut self, vehicle: &mut Vehicle, t_s: f64) {
        use crate::command::{Command, Payload};
        use crate::obstacle::postings::HIT_VALUE;
        let (x, y) = true_position(vehicle);
        for hit in self.tracker.observe(x, y) {
            let hit_cmd = Command::ObstacleHit(Payload::Text(HIT_VALUE.to_string()));
            // a bool word: neither model refuses it
            let _ = vehicle.handle_command(hit_cmd, t_s);
            debug!("obstacle hit: {}", hit.label);
            if self.unposted_hits.len() < 64 {
                self.unposted_hits.push(hit.label);
            }
        }
    }

    /// The obstacle postings of this iteration: the start-up set when due,
    /// the sensed points at `(x, y)`, one `OBSTACLE_HIT` per hit since the
    /// last call. Returns the number refused.
    fn publish(
        &mut self,
        t_s: f64,
        (x, y): (f64, f64),
        send: &mut impl FnMut(&str, Value<'_>) -> u64,
    ) -> u64 {
        use crate::obstacle::postings::{self, HIT_VALUE, OBSTACLE_HIT};
        let mut failed = 0;
        if self.tracker.start_postings_due(t_s) {
            for (var, text) in self.tracker.start_postings() {
                failed += send(var, Value::Text(&text));
            }
        }
        for (fx, fy, label) in self.tracker.features(x, y) {
            let text = postings::tracked_feature(fx, fy, label);
            failed += send(&self.feature_var, Value::Text(&text));
        }
        for _ in self.unposted_hits.drain(..) {
            failed += send(OBSTACLE_HIT, Value::Text(HIT_VALUE));
        }
        failed
    }
}

/// One live vehicle (see the module doc).
#[derive(Debug)]
pub struct LiveVehicle {
    /// The model.
    pub vehicle: Vehicle,
    /// Vehicle name.
    pub name: String,
    /// Shared with the transport's receiving side.
    pub inbox: Arc<Inbox>,
    /// See [`echo_vars`] (empty when the postings are not published).
    pub echoes: Vec<&'static str>,
    /// What it publishes.
    pub set: PubSet,
    /// Prefix of a variable in log lines (a topic's `root/name/`).
    origin: String,
    /// `Some` when `NODE_REPORT_LOCAL` is published.
    node_report_local: Option<Platform>,
    mail: Vec<Mail>,
    drops: DropLog,
    /// Messages dropped because the mailbox was full, so far.
    pub mail_dropped: u64,
    mail_dropped_unlogged: u64,
    mail_dropped_logged: Instant,
    /// The obstacles this vehicle meets and senses (`[obstacles]`).
    obstacles: Option<ObstacleWatch>,
    /// Scratch buffer of the `NODE_REPORT` JSON.
    json: Vec<u8>,
    /// `,"platform_type":..,"platform_length":..}`: the platform fields
    /// appended to each `NODE_REPORT` (for the view's hulls; readers that
    /// do not know them ignore them).
    platform_json: Vec<u8>,
}

impl LiveVehicle {
    /// A vehicle from its config (name already final), started at clock
    /// `start_time_s` (s), publishing `set`; `origin` prefixes a variable
    /// in log lines (`usim/alpha/` for MQTT topics, empty for MOOS).
    pub fn new(cfg: &VehicleConfig, start_time_s: f64, set: PubSet, origin: String) -> Self {
        // Without the postings no subscribed variable comes back, so a
        // fleet keeps one wildcard subscription per variable.
        let echoes = if set.postings {
            echo_vars(cfg)
        } else {
            Vec::new()
        };
        let inbox = Inbox::new(cfg.mqtt.max_payload, echoes.clone());
        let length = if cfg.platform_length.is_finite() {
            cfg.platform_length
        } else {
            0.0
        };
        let kind =
            serde_json::to_string(&cfg.platform_type).unwrap_or_else(|_| "\"unknown\"".into());
        LiveVehicle {
            echoes,
            vehicle: Vehicle::new(cfg, start_time_s),
            name: cfg.name.clone(),
            inbox: Arc::new(inbox),
            set,
            origin,
            node_report_local: cfg.node_report_local.then(|| Platform {
                name: cfg.name.clone(),
                kind: cfg.platform_type.clone(),
                length_m: cfg.platform_length,
            }),
            mail: Vec::new(),
            drops: DropLog::new(),
            mail_dropped: 0,
            mail_dropped_unlogged: 0,
            mail_dropped_logged: Instant::now()
                .checked_sub(Duration::from_secs(10))
                .unwrap_or_else(Instant::now),
            obstacles: cfg.obstacles.as_ref().map(|setup| ObstacleWatch {
                tracker: crate::obstacle::Tracker::new(std::sync::Arc::clone(setup)),
                unposted_hits: Vec::new(),
                feature_var: crate::obstacle::postings::tracked_feature_var(&cfg.name),
            }),
            json: Vec::new(),
            platform_json: format!(",\"platform_type\":{kind},\"platform_length\":{length}}}")
                .into_bytes(),
        }
    }

    /// The mail received since the last iteration handed to the model,
    /// stamped `t_s`, then the step to `t_s` (s). Commands the model
    /// refuses are logged, counted and pushed on `refusals` (at most
    /// `max_refusals` kept).
    pub fn iterate(&mut self, t_s: f64, refusals: &mut Vec<Refusal>, max_refusals: usize) {
        let dropped = self.inbox.mailbox().drain_into(&mut self.mail);
        if dropped > 0 {
            self.note_mail_dropped(dropped);
        }
        for mail in self.mail.drain(..) {
            if let Err(e) = self.vehicle.handle_command(mail.command, t_s) {
                self.inbox.count_refused();
                let origin = format!("{}{}", self.origin, mail.var);
                self.drops.dropped(&origin, &mail.payload, &e.reason);
                if refusals.len() < max_refusals {
                    refusals.push(Refusal {
                        vehicle: self.name.clone(),
                        var: mail.var,
                        payload: mail.payload,
                        reason: e.reason,
                    });
                }
            }
        }
        self.vehicle.step(t_s);
        if let Some(w) = self.obstacles.as_mut() {
            w.after_step(&mut self.vehicle, t_s);
        }
    }

    fn note_mail_dropped(&mut self, dropped: u64) {
        self.mail_dropped += dropped;
        self.mail_dropped_unlogged += dropped;
        // At most one line per 5 s under a sustained flood, with the count.
        if self.mail_dropped_logged.elapsed() >= Duration::from_secs(5) {
            self.mail_dropped_logged = Instant::now();
            warn!(
                "{}: {} messages dropped since the last report: mailbox full (flood?)",
                self.name,
                std::mem::take(&mut self.mail_dropped_unlogged)
            );
        }
    }

    /// This iteration's publications but `USM_TIME` (the host adds it
    /// after every vehicle), as vehicle `index` of `out`, clock `t_s` (s).
    /// Returns the number `out` refused.
    pub fn publish(&mut self, index: usize, t_s: f64, out: &mut impl Transport) -> u64 {
        let mut failed = 0u64;
        let mut send = |var: &str, value: Value<'_>| u64::from(!out.publish(index, var, value));
        if self.set.postings {
            for p in self.vehicle.publications() {
                failed += match &p.value {
                    PubValue::Number(v) => send(&p.var, Value::Number(*v)),
                    PubValue::Text(s) => send(&p.var, Value::Text(s)),
                };
            }
        }
        if self.set.pid_output {
            // The embedded PID's outputs of this iteration (docs/v22.md §4),
            // for `usim watch`: one JSON object, only when the PID ran.
            if let Some(o) = self.vehicle.pid_output() {
                let json = format!(
                    "{{\"rudder\":{},\"thrust\":{},\"elevator\":{}}}",
                    o.rudder, o.thrust, o.elevator
                );
                failed += send(PID_OUTPUT, Value::Text(&json));
            }
        }
        if let Some(w) = self.obstacles.as_mut().filter(|_| self.set.postings) {
            failed += w.publish(t_s, true_position(&self.vehicle), &mut send);
        }
        if !self.set.node_report && self.node_report_local.is_none() {
            return failed;
        }
        let snapshot = self.vehicle.snapshot();
        if self.set.node_report {
            self.json.clear();
            match serde_json::to_writer(&mut self.json, &snapshot) {
                Ok(()) => {
                    if self.json.last() == Some(&b'}') {
                        self.json.pop();
                        env_report_fields(&self.vehicle, snapshot.t, &mut self.json);
                        self.json.extend_from_slice(&self.platform_json);
                    }
                    if let Ok(text) = std::str::from_utf8(&self.json) {
                        failed += send(NODE_REPORT, Value::Text(text));
                    }
                }
                Err(e) => debug!("NODE_REPORT not serialised: {e}"),
            }
        }
        if let Some(platform) = &self.node_report_local {
            let text = node_report_local(platform, &snapshot, t_s);
            failed += send(NODE_REPORT_LOCAL, Value::Text(&text));
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `NODE_REPORT` of one iteration of a vehicle built from `toml`.
    fn report(toml: &str) -> serde_json::Value {
        struct Keep(Vec<(String, String)>);
        impl Transport for Keep {
            fn connected(&self) -> bool {
                true
            }
            fn publish(&mut self, _: usize, var: &str, value: Value<'_>) -> bool {
                if let Value::Text(t) = value {
                    self.0.push((var.to_string(), t.to_string()));
                }
                true
            }
        }
        let cfg = crate::config::parse_vehicle(std::path::Path::new("v.toml"), toml).unwrap();
        let set = PubSet {
            postings: false,
            pid_output: false,
            node_report: true,
            usm_time: false,
        };
        let mut v = LiveVehicle::new(&cfg, 100.0, set, String::new());
        v.iterate(100.1, &mut Vec::new(), 0);
        let mut out = Keep(Vec::new());
        v.publish(0, 100.1, &mut out);
        let text = &out.0.iter().find(|(var, _)| var == NODE_REPORT).unwrap().1;
        serde_json::from_str(text).unwrap()
    }

    /// docs/formats.md §4: a vehicle with `[wind]` (gusts off: the speed is
    /// the mean) and `[sea]` reports them as configured, before the
    /// platform fields; a calm vehicle's report has none of them.
    #[test]
    fn the_report_carries_the_wind_and_sea_only_when_they_are_on() {
        let base = "name = \"alpha\"\nplatform_type = \"kayak\"\nplatform_length = 3\n";
        let calm = report(base);
        for key in [
            "wind_speed",
            "wind_direction",
            "sea_hs",
            "sea_tp",
            "sea_direction",
        ] {
            assert!(calm.get(key).is_none(), "{key} in a calm report");
        }
        assert_eq!(calm["platform_type"], "kayak");
        let env = report(&format!(
            "{base}[wind]\nspeed = 8\ndirection = 60\ngusts = false\n\
             [sea]\nhs = 1.5\ntp = 6\ndirection = 270\ncomponents = 16\n"
        ));
        assert_eq!(env["wind_speed"], 8.0);
        assert_eq!(env["wind_direction"], 60.0);
        assert_eq!(env["sea_hs"], 1.5);
        assert_eq!(env["sea_tp"], 6.0);
        assert_eq!(env["sea_direction"], 270.0);
        assert_eq!(env["platform_type"], "kayak");
        assert_eq!(env["platform_length"], 3.0);
    }
}
