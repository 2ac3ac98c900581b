//! The per-vehicle half of the live runtime, shared by `usim run` (one
//! vehicle, one connection) and `usim fleet` (many vehicles, one
//! connection): incoming messages parsed into the vehicle's bounded
//! [`Mailbox`] ([`Inbox::accept`]), and one iteration — mail handed to the
//! model, step, publications, `NODE_REPORT` — ([`VehicleLink::iterate`]).
//!
//! The physics stays in [`crate::model::Vehicle`]; the connection (event
//! loop, reconnection, subscriptions, status) belongs to the caller.
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rumqttc::{AsyncClient, QoS};
use tracing::{debug, warn};

use super::burst::PacketBuf;
use super::clip_for_log;
use super::topics::{Topics, NODE_REPORT, NODE_REPORT_LOCAL, PID_OUTPUT, USM_TIME};
use crate::command::{parse_text, SUBSCRIPTIONS};
use crate::config::{PublishMode, VehicleConfig};
use crate::live::mailbox::{Mail, Mailbox, Pushed};
use crate::live::node_report::{node_report_local, Platform};
use crate::model::{PubValue, Vehicle};

/// Mail kept between two iterations: entries and payload bytes.
pub const MAILBOX_ENTRIES: usize = 256;
/// See [`MAILBOX_ENTRIES`].
pub const MAILBOX_BYTES: usize = 128 * 1024;

/// A vehicle's incoming side, shared by the connection task (which fills
/// it) and the tick task (which drains it).
#[derive(Debug)]
pub struct Inbox {
    mailbox: Mutex<Mailbox>,
    bad_messages: AtomicU64,
    /// `[mqtt] max_payload`, bytes.
    max_payload: usize,
    /// Subscribed variables this vehicle publishes itself ([`echo_vars`]):
    /// a message on one is its own publication coming back, ignored.
    echoes: Vec<&'static str>,
}

impl Inbox {
    /// An empty inbox with the standard bounds; payloads over
    /// `max_payload` bytes are dropped.
    pub fn new(max_payload: usize) -> Inbox {
        Inbox {
            mailbox: Mutex::new(Mailbox::new(MAILBOX_ENTRIES, MAILBOX_BYTES)),
            bad_messages: AtomicU64::new(0),
            max_payload,
            echoes: Vec::new(),
        }
    }

    fn mailbox(&self) -> MutexGuard<'_, Mailbox> {
        // Never poisoned in practice (no panics while held); recover anyway.
        self.mailbox.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Messages that did not parse or were refused by the model so far.
    pub fn bad_messages(&self) -> u64 {
        self.bad_messages.load(Ordering::Relaxed)
    }

    /// Messages waiting for the next iteration.
    pub fn pending(&self) -> usize {
        self.mailbox().len()
    }

    /// Plain setpoints superseded before an iteration used them, so far.
    pub fn coalesced(&self) -> u64 {
        self.mailbox().coalesced_total()
    }

    /// Count one bad message and log it (rate-limited by `drops`).
    pub fn reject(&self, drops: &mut DropLog, topic: &str, payload: &str, reason: &str) {
        self.bad_messages.fetch_add(1, Ordering::Relaxed);
        drops.dropped(topic, payload, reason);
    }

    /// Parse one incoming message for variable `var` (`None`: the topic is
    /// not one of this vehicle's) into the mailbox, or log and drop it.
    pub fn accept(
        &self,
        topic: &str,
        var: Option<&str>,
        payload: &[u8],
        retain: bool,
        drops: &mut DropLog,
    ) {
        let n = payload.len();
        if n > self.max_payload {
            // The head of the payload only (lossy: it may be cut inside a character).
            let head = String::from_utf8_lossy(&payload[..n.min(40)]);
            self.reject(
                drops,
                topic,
                &head,
                &format!(
                    "payload of {n} bytes is over [mqtt] max_payload = {} bytes; dropped, \
                     the connection stays up",
                    self.max_payload
                ),
            );
            return;
        }
        let Some(var) = var else {
            let text = String::from_utf8_lossy(payload);
            self.reject(drops, topic, &text, "not a topic of this vehicle");
            return;
        };
        if self.echoes.contains(&var) {
            // Our own publication (a prefix such as `NAV` makes `NAV_X` both
            // published and a V22 input): never a command.
            return;
        }
        let Ok(text) = std::str::from_utf8(payload) else {
            let text = String::from_utf8_lossy(payload);
            self.reject(drops, topic, &text, "payload is not UTF-8");
            return;
        };
        if retain {
            self.reject(
                drops,
                topic,
                text,
                "retained command ignored (post commands without the retain flag)",
            );
            return;
        }
        match parse_text(var, text) {
            Ok(command) => {
                let pushed = self.mailbox().push(Mail {
                    var: var.to_string(),
                    payload: text.to_string(),
                    command,
                });
                if pushed == Pushed::Dropped {
                    // Counted and reported once per iteration by the tick task.
                    debug!(
                        "mailbox full: dropped {topic} = {:?}",
                        clip_for_log(text, 80)
                    );
                }
            }
            Err(e) => self.reject(drops, topic, text, &e.reason),
        }
    }
}

/// One live vehicle: the model, its topics, its inbox and the state of
/// its publications.
#[derive(Debug)]
pub struct VehicleLink {
    /// The model.
    pub vehicle: Vehicle,
    /// Vehicle name.
    pub name: String,
    /// The vehicle's topics.
    pub topics: Topics,
    /// Shared with the connection task.
    pub inbox: Arc<Inbox>,
    /// Topic of each published variable, made once.
    topic_cache: HashMap<String, String>,
    node_report_topic: String,
    time_topic: String,
    /// `[mqtt] publish = "all"`: every variable on its topic (else only
    /// NODE_REPORT and USM_TIME).
    publish_all: bool,
    /// `Some` when `NODE_REPORT_LOCAL` is published.
    node_report_local: Option<Platform>,
    mail: Vec<Mail>,
    drops: DropLog,
    /// Messages dropped because the mailbox was full, so far.
    pub mail_dropped: u64,
    mail_dropped_unlogged: u64,
    mail_dropped_logged: Instant,
    /// Scratch buffer of the `NODE_REPORT` JSON.
    json: Vec<u8>,
    /// `,"platform_type":..,"platform_length":..}`: the platform fields
    /// appended to each `NODE_REPORT` (for the view's hulls; readers that
    /// do not know them ignore them).
    platform_json: Vec<u8>,
    /// See [`echo_vars`].
    pub echoes: Vec<&'static str>,
}

/// The subscribed variables (of [`SUBSCRIPTIONS`]) that a vehicle of this
/// config publishes itself: with `prefix = "NAV"` it posts `NAV_X`,
/// `NAV_Y`, `NAV_HEADING`, which are also uSimMarineV22's override inputs.
/// MQTT 3.1.1 delivers a client's own publications on its subscriptions,
/// so the vehicle does not subscribe to these (it would read its own
/// state back as commands).
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

impl VehicleLink {
    /// A vehicle from its config (name already final), started at clock
    /// `start_time_s` (s), publishing under `topic_root`.
    pub fn new(
        cfg: &VehicleConfig,
        topic_root: &str,
        start_time_s: f64,
    ) -> Result<VehicleLink, super::BridgeError> {
        let topics = Topics::new(topic_root, &cfg.name)?;
        // With `publish = "report"` nothing but NODE_REPORT and USM_TIME
        // goes out: no subscribed variable comes back, so a fleet keeps
        // one wildcard subscription per variable (not one per vehicle).
        let echoes = match cfg.mqtt.publish {
            PublishMode::All => echo_vars(cfg),
            PublishMode::Report => Vec::new(),
        };
        let mut inbox = Inbox::new(cfg.mqtt.max_payload);
        inbox.echoes = echoes.clone();
        Ok(VehicleLink {
            echoes,
            vehicle: Vehicle::new(cfg, start_time_s),
            name: cfg.name.clone(),
            node_report_topic: topics.var(NODE_REPORT),
            time_topic: topics.var(USM_TIME),
            topics,
            inbox: Arc::new(inbox),
            topic_cache: HashMap::new(),
            publish_all: cfg.mqtt.publish == PublishMode::All,
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
            json: Vec::new(),
            platform_json: format!(
                ",\"platform_type\":{},\"platform_length\":{}}}",
                serde_json::to_string(&cfg.platform_type).unwrap_or_else(|_| "\"unknown\"".into()),
                if cfg.platform_length.is_finite() {
                    cfg.platform_length
                } else {
                    0.0
                }
            )
            .into_bytes(),
        })
    }

    /// One iteration at clock `t_s` (s): the mail received since the last
    /// one, the step, and — when `out` is given (connected) — the
    /// publications but `USM_TIME` ([`VehicleLink::publish_time`] follows).
    /// Returns the number of publications the outgoing queue refused.
    pub fn iterate(&mut self, t_s: f64, out: Option<&mut Out<'_>>) -> u64 {
        let dropped = self.inbox.mailbox().drain_into(&mut self.mail);
        if dropped > 0 {
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
        for mail in self.mail.drain(..) {
            if let Err(e) = self.vehicle.handle_command(mail.command, t_s) {
                self.inbox.reject(
                    &mut self.drops,
                    &self.topics.var(&mail.var),
                    &mail.payload,
                    &e.reason,
                );
            }
        }
        self.vehicle.step(t_s);
        match out {
            Some(out) => self.publish(out, t_s),
            None => 0,
        }
    }

    fn publish(&mut self, out: &mut Out<'_>, t_s: f64) -> u64 {
        let mut failed = 0u64;
        if self.publish_all {
            for p in self.vehicle.publications() {
                let topic = match self.topic_cache.get(&p.var) {
                    Some(t) => t,
                    None => {
                        let t = self.topics.var(&p.var);
                        self.topic_cache.entry(p.var.clone()).or_insert(t)
                    }
                };
                let payload = match p.value {
                    PubValue::Number(v) => format!("{v}"),
                    PubValue::Text(s) => s,
                };
                failed += u64::from(!out.send(topic, payload.as_bytes()));
            }
            // The embedded PID's outputs of this iteration (docs/v22.md §4),
            // for `usim watch`: one JSON object, only when the PID ran.
            if let Some(o) = self.vehicle.pid_output() {
                let json = format!(
                    "{{\"rudder\":{},\"thrust\":{},\"elevator\":{}}}",
                    o.rudder, o.thrust, o.elevator
                );
                failed += u64::from(!out.send(&self.topics.var(PID_OUTPUT), json.as_bytes()));
            }
        }
        let snapshot = self.vehicle.snapshot();
        self.json.clear();
        match serde_json::to_writer(&mut self.json, &snapshot) {
            Ok(()) => {
                if self.json.last() == Some(&b'}') {
                    self.json.pop();
                    self.json.extend_from_slice(&self.platform_json);
                }
                failed += u64::from(!out.send(&self.node_report_topic, &self.json));
            }
            Err(e) => debug!("NODE_REPORT not serialised: {e}"),
        }
        if let Some(platform) = &self.node_report_local {
            let text = node_report_local(platform, &snapshot, t_s);
            failed += u64::from(!out.send(&self.topics.var(NODE_REPORT_LOCAL), text.as_bytes()));
        }
        failed
    }

    /// Publish `USM_TIME` (the clock `t_s`, s) after [`VehicleLink::iterate`]
    /// published the rest of the iteration: a watcher that saw it has seen
    /// the whole iteration. A fleet queues every vehicle's reports first
    /// and the times after them, so the last vehicle's report waits for
    /// half as many writes. Returns 1 if the outgoing queue refused it.
    pub fn publish_time(&self, out: &mut Out<'_>, t_s: f64) -> u64 {
        self.publish_time_text(out, format!("{t_s}").as_bytes())
    }

    /// [`VehicleLink::publish_time`] with the clock already written as
    /// text (`format!("{t_s}")`): a fleet formats it once per iteration
    /// for all its vehicles.
    pub fn publish_time_text(&self, out: &mut Out<'_>, time_text: &[u8]) -> u64 {
        u64::from(!out.send(&self.time_topic, time_text))
    }
}

/// Where a vehicle's publications go: the rumqttc client (`usim run`; one
/// request, topic and payload copied, per message) or the fleet's
/// iteration buffer ([`super::burst`], encoded in place). QoS 0, not
/// retained.
pub enum Out<'a> {
    /// Through rumqttc's request channel.
    Client(&'a AsyncClient),
    /// Into one buffer of `PUBLISH` packets.
    Burst(&'a mut PacketBuf),
}

impl Out<'_> {
    /// Queue one publication; false if refused (queue full, packet too big).
    pub fn send(&mut self, topic: &str, payload: &[u8]) -> bool {
        match self {
            Out::Client(c) => c
                .try_publish(topic, QoS::AtMostOnce, false, payload.to_vec())
                .is_ok(),
            Out::Burst(b) => b.publish(topic, payload),
        }
    }
}

/// Logs dropped messages: every one, up to 20 a second; beyond that a count.
#[derive(Debug)]
pub struct DropLog {
    window: Instant,
    in_window: u32,
    suppressed: u64,
}

impl Default for DropLog {
    fn default() -> Self {
        DropLog::new()
    }
}

impl DropLog {
    const PER_SECOND: u32 = 20;

    /// A fresh log window.
    pub fn new() -> DropLog {
        DropLog {
            window: Instant::now(),
            in_window: 0,
            suppressed: 0,
        }
    }

    /// Log (or count) one dropped message with its topic and the reason.
    pub fn dropped(&mut self, topic: &str, payload: &str, reason: &str) {
        if self.window.elapsed() >= Duration::from_secs(1) {
            if self.suppressed > 0 {
                warn!(
                    "{} more bad messages dropped without a log line (flood)",
                    self.suppressed
                );
            }
            self.window = Instant::now();
            self.in_window = 0;
            self.suppressed = 0;
        }
        if self.in_window < Self::PER_SECOND {
            self.in_window += 1;
            warn!(
                "dropped message on {}: payload {:?}: {reason}",
                super::escape_control(&clip_for_log(topic, 200)),
                clip_for_log(payload, 200)
            );
        } else {
            self.suppressed += 1;
        }
    }
}
