//! Scripting tools in the MOOS spirit: [`post`] (like uPokeDB) sends one
//! value to one vehicle variable; [`watch`] (like uXMS) shows a vehicle's
//! published variables, as a live table on a terminal or as plain lines.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rumqttc::{Event, Outgoing, Packet, QoS, SubscribeFilter};
use tokio::sync::mpsc;

use super::bridge::shutdown_signal;
use super::endpoint::{connection_failure, BrokerUrl, ConnectSpec};
use super::topics::{check_var, model_name, Topics, MODEL, ONLINE, STATUS, USM_TIME};
use super::BridgeError;
use crate::command::parse_text;

/// Where and as whom a tool connects.
#[derive(Debug, Clone)]
pub struct ToolConnection {
    /// The broker.
    pub url: BrokerUrl,
    /// Topic root (`usim` by default).
    pub topic_root: String,
    /// User name and password, if any.
    pub credentials: Option<(String, String)>,
    /// CA bundle for `mqtts://`.
    pub ca_file: Option<PathBuf>,
}

impl ToolConnection {
    pub(super) fn spec(&self, tool: &str) -> ConnectSpec {
        let mut spec = ConnectSpec::new(self.url.clone(), tool_client_id(tool));
        spec.credentials = self.credentials.clone();
        spec.ca_file = self.ca_file.clone();
        spec.max_incoming_packet = 256 * 1024;
        spec
    }

    pub(super) fn connect_error(&self, reason: impl std::fmt::Display) -> BridgeError {
        BridgeError::Connect {
            url: self.url.to_string(),
            reason: reason.to_string(),
        }
    }
}

/// What `usim post` sends.
#[derive(Debug, Clone)]
pub struct PostOptions {
    /// Broker and topic root.
    pub conn: ToolConnection,
    /// Vehicle name.
    pub vehicle: String,
    /// MOOS variable, e.g. `DESIRED_THRUST`.
    pub var: String,
    /// Payload text, e.g. `60` or `x=0, y=0`.
    pub value: String,
    /// Check the variable and payload as the vehicle will before sending,
    /// and that the vehicle is online (its retained `status`).
    pub check: bool,
    /// Set the retain flag: the broker stores the message for later
    /// subscribers. A running vehicle applies it like any message; only a
    /// stored copy handed over when the vehicle (re)subscribes is ignored.
    pub retain: bool,
    /// Give up after this long.
    pub timeout: Duration,
}

/// Whether a vehicle would take `value` for `var`: it parses, and a scratch
/// vehicle of either model (classic, V22; V22 also with the embedded PID,
/// and disabled for the NAV overrides) accepts it (so `"bad"` for
/// `DRIFT_VECTOR_ADD` or `x=abc` for `USM_RESET` are caught before sending).
pub fn would_accept(var: &str, value: &str) -> Result<(), crate::command::MessageError> {
    use crate::model::ModelVariant;
    match accepted_by(var, value, ModelVariant::Classic) {
        Ok(()) => Ok(()),
        Err(e) => accepted_by(var, value, ModelVariant::V22).map_err(|_| e),
    }
}

/// Whether a vehicle of model `variant` would take `value` for `var` (a
/// V22 vehicle with or without the embedded PID, enabled or not).
pub fn accepted_by(
    var: &str,
    value: &str,
    variant: crate::model::ModelVariant,
) -> Result<(), crate::command::MessageError> {
    use crate::command::Command;
    use crate::model::{pid::PidSettings, ModelVariant, Params, Vehicle};
    let cmd = parse_text(var, value)?;
    let setups: &[(bool, bool)] = match variant {
        ModelVariant::Classic => &[(false, false)],
        ModelVariant::V22 => &[(false, false), (true, false), (true, true)],
    };
    let mut first_err = None;
    for &(pid, disabled) in setups {
        let params = Params {
            variant,
            pid: pid.then(PidSettings::default),
            ..Params::default()
        };
        let mut v = Vehicle::from_params(params, 0.0);
        if disabled {
            v.handle_command(Command::Enabled("false".into()), 0.0)?;
        }
        match v.handle_command(cmd.clone(), 0.0) {
            Ok(()) => return Ok(()),
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The warning `post` gives when the vehicle runs `model` (its retained
/// [`MODEL`] payload) and that model does not read `var` while the other
/// one does, or `None`.
pub fn model_warning(vehicle: &str, model: &str, var: &str, value: &str) -> Option<String> {
    use crate::model::ModelVariant;
    let (runs, other) = match model {
        "classic" => (ModelVariant::Classic, ModelVariant::V22),
        "v22" => (ModelVariant::V22, ModelVariant::Classic),
        _ => return None,
    };
    if accepted_by(var, value, runs).is_ok() || accepted_by(var, value, other).is_err() {
        return None;
    }
    let other = model_name(other);
    Some(format!(
        "vehicle `{}` runs the {model} model, which does not read {var}: only the {other} \
         model reads it (model = \"{other}\" in the vehicle's config); the message was sent \
         anyway and the vehicle will drop it",
        super::escape_control(vehicle)
    ))
}

/// Largest retained `status` payload `post` reads, bytes: a usim status is
/// `online` or `offline`; anything longer is reported as oversize.
pub const MAX_STATUS_BYTES: usize = 64 * 1024;

/// How long `post` listens for the retained `status` of the vehicles
/// after its subscription is acknowledged (the broker sends the stored
/// messages right away; the wait ends early when the target is seen).
const STATUS_WAIT: Duration = Duration::from_millis(300);

/// What `post` does next, decided by [`PostCheck`] from the broker's events.
#[derive(Debug, PartialEq, Eq)]
enum PostStep {
    /// Nothing yet.
    Wait,
    /// Subscribe to the vehicles' retained `status` and the target's `model`.
    Subscribe,
    /// Subscribed: listen for the retained messages for [`STATUS_WAIT`].
    Listen,
    /// Publish the value now.
    Send,
    /// The broker acknowledged the value: disconnect.
    Disconnect,
    /// Disconnected: done.
    Finished,
}

/// The decisions of `post` (sans-IO): when to subscribe, when to send, what
/// to warn about, from the events the loop in [`post`] feeds it.
struct PostCheck<'a> {
    o: &'a PostOptions,
    /// Why the checks refuse the variable unless the vehicle is bridged to MOOS.
    unknown_var: Option<String>,
    /// Vehicle name → its last retained status (bounded, escaped when shown).
    statuses: BTreeMap<String, String>,
    /// The target's retained model name, once seen.
    model: Option<String>,
    model_topic: String,
    sent: bool,
    subscribed: bool,
    /// A retained status over the packet limit ended the connection: the
    /// reconnect sends without the check.
    oversize: Option<usize>,
    warning: Option<String>,
}

impl<'a> PostCheck<'a> {
    /// The checks of `o.var`/`o.value` that need no broker; a variable usim
    /// does not read (a helm variable such as DEPLOY) may still be right for
    /// a vehicle in a MOOS community (bridged: its retained model is `moos`),
    /// which takes any variable: decided once its model is known.
    fn new(o: &'a PostOptions, model_topic: String) -> Result<Self, BridgeError> {
        let mut unknown_var = None;
        if o.check {
            if let Err(e) = would_accept(&o.var, &o.value) {
                let known = crate::command::SUBSCRIPTIONS
                    .iter()
                    .any(|(v, _, _)| *v == o.var)
                    || o.var == "SET";
                if known {
                    return Err(refusal(&e));
                }
                unknown_var = Some(e.to_string());
            }
        }
        Ok(PostCheck {
            o,
            unknown_var,
            statuses: BTreeMap::new(),
            model: None,
            model_topic,
            sent: false,
            subscribed: false,
            oversize: None,
            warning: None,
        })
    }

    /// Send now: refuse a variable usim does not read unless the vehicle is
    /// bridged to MOOS; with `warn`, note what the check found.
    fn send(&mut self, warn: bool) -> Result<PostStep, BridgeError> {
        if let Some(e) = &self.unknown_var {
            if self.model.as_deref() != Some(super::topics::MOOS_MODEL) {
                return Err(refusal(e));
            }
        }
        if warn {
            let model_note = self
                .model
                .as_deref()
                .and_then(|m| model_warning(&self.o.vehicle, m, &self.o.var, &self.o.value));
            self.warning = match (offline_warning(&self.o.vehicle, &self.statuses), model_note) {
                (Some(a), Some(b)) => Some(format!("{a}\nusim: warning: {b}")),
                (a, b) => a.or(b),
            };
        }
        self.sent = true;
        Ok(PostStep::Send)
    }

    fn target_online(&self) -> bool {
        self.statuses.get(&self.o.vehicle).map(String::as_str) == Some(ONLINE)
    }

    /// Note a retained `status` (bounded: one entry per name, 64 KiB each).
    fn note_status(&mut self, topic: &str, payload: &[u8]) {
        let root = &self.o.conn.topic_root;
        let Some(name) = topic
            .strip_prefix(&format!("{root}/"))
            .and_then(|rest| rest.strip_suffix(&format!("/{STATUS}")))
            .filter(|n| !n.contains('/'))
        else {
            return;
        };
        let text = if payload.len() > MAX_STATUS_BYTES {
            format!("an oversize payload of {} bytes", payload.len())
        } else {
            String::from_utf8_lossy(payload).into_owned()
        };
        if self.statuses.len() < 65_536 || self.statuses.contains_key(name) {
            self.statuses.insert(name.to_string(), text);
        }
    }

    /// What to do after one event of the connection.
    fn on_event(&mut self, event: &Event) -> Result<PostStep, BridgeError> {
        let sent = self.sent;
        match event {
            Event::Incoming(Packet::ConnAck(_)) if !sent && self.oversize.is_some() => {
                self.send(false)
            }
            Event::Incoming(Packet::ConnAck(_)) if !sent && !self.subscribed => {
                if self.o.check {
                    self.subscribed = true;
                    Ok(PostStep::Subscribe)
                } else {
                    self.send(false)
                }
            }
            Event::Incoming(Packet::SubAck(_)) if !sent => Ok(PostStep::Listen),
            Event::Incoming(Packet::Publish(p)) if !sent && p.topic == self.model_topic => {
                if p.payload.len() <= 16 {
                    self.model = Some(String::from_utf8_lossy(&p.payload).into_owned());
                }
                if self.target_online() {
                    return self.send(true);
                }
                Ok(PostStep::Wait)
            }
            Event::Incoming(Packet::Publish(p)) if !sent => {
                self.note_status(&p.topic, &p.payload);
                // Online and its model known: no need to wait longer.
                if self.target_online() && self.model.is_some() {
                    return self.send(true);
                }
                Ok(PostStep::Wait)
            }
            Event::Incoming(Packet::PubAck(_)) => Ok(PostStep::Disconnect),
            Event::Outgoing(Outgoing::Disconnect) => Ok(PostStep::Finished),
            _ => Ok(PostStep::Wait),
        }
    }

    /// A retained message of `n` bytes on a status topic was over the packet
    /// limit: the next poll reconnects (clean session) and sends unchecked.
    fn skip_check(&mut self, n: usize, status_filter: &str) {
        self.oversize = Some(n);
        self.warning = Some(format!(
            "a retained message of {n} bytes on {status_filter} is over the \
             {} KiB this check reads: not a usim status (those are `online` or \
             `offline`; someone published it there). The online check was \
             skipped and the message sent anyway",
            self.o.conn.spec("post").max_incoming_packet / 1024
        ));
    }
}

/// The refusal of a value the vehicle would drop.
fn refusal(e: &dyn std::fmt::Display) -> BridgeError {
    BridgeError::BadOption(format!(
        "{e} (the vehicle would drop it; use --no-check to send it anyway)"
    ))
}

/// Publish one value (QoS 1) and wait for the broker's acknowledgement.
/// With `check`, first read the retained `status` of every vehicle under
/// the topic root: the result is a warning when `vehicle` is not online
/// (e.g. a typo in its name); the message is sent either way.
pub async fn post(o: &PostOptions) -> Result<Option<String>, BridgeError> {
    let topics = Topics::new(&o.conn.topic_root, &o.vehicle)?;
    check_var(&o.var)?;
    let mut check = PostCheck::new(o, topics.var(MODEL))?;
    let topic = topics.var(&o.var);
    let status_filter = format!("{}/+/{STATUS}", o.conn.topic_root);
    let (client, mut eventloop) = o.conn.spec("post").client(8)?;
    let exchange = async {
        let mut listen_until: Option<tokio::time::Instant> = None;
        loop {
            let sent = check.sent;
            let listening = async move {
                match listen_until {
                    Some(d) if !sent => tokio::time::sleep_until(d).await,
                    _ => std::future::pending().await,
                }
            };
            let step = tokio::select! {
                ev = eventloop.poll() => match ev {
                    Ok(ev) => check.on_event(&ev)?,
                    Err(e) if !check.sent && check.oversize.is_none() => match oversize_packet(&e) {
                        Some(n) => {
                            check.skip_check(n, &status_filter);
                            PostStep::Wait
                        }
                        None => return Err(connection_failure(&o.conn.url, &e)),
                    },
                    Err(e) => return Err(connection_failure(&o.conn.url, &e)),
                },
                _ = listening => check.send(true)?,
            };
            match step {
                PostStep::Wait => {}
                PostStep::Subscribe => client
                    .try_subscribe_many([
                        SubscribeFilter::new(status_filter.clone(), QoS::AtMostOnce),
                        SubscribeFilter::new(check.model_topic.clone(), QoS::AtMostOnce),
                    ])
                    .map_err(|e| o.conn.connect_error(e))?,
                PostStep::Listen => {
                    listen_until = Some(tokio::time::Instant::now() + STATUS_WAIT);
                }
                PostStep::Send => client
                    .try_publish(
                        topic.clone(),
                        QoS::AtLeastOnce,
                        o.retain,
                        o.value.clone().into_bytes(),
                    )
                    .map_err(|e| o.conn.connect_error(e))?,
                PostStep::Disconnect => {
                    let _ = client.try_disconnect();
                }
                PostStep::Finished => return Ok(check.warning.take()),
            }
        }
    };
    match tokio::time::timeout(o.timeout, exchange).await {
        Ok(r) => r,
        Err(_) => Err(o.conn.connect_error(format!(
            "no acknowledgement within {:.1} s",
            o.timeout.as_secs_f64()
        ))),
    }
}

/// The size of an incoming packet rumqttc refused as over its limit.
fn oversize_packet(e: &rumqttc::ConnectionError) -> Option<usize> {
    match e {
        rumqttc::ConnectionError::MqttState(rumqttc::StateError::Deserialization(
            rumqttc::Error::PayloadSizeLimitExceeded(n),
        )) => Some(*n),
        _ => None,
    }
}

/// The warning `post` gives when `vehicle` has no retained `online`
/// status among `statuses` (vehicle name → last status), or `None`.
pub fn offline_warning(vehicle: &str, statuses: &BTreeMap<String, String>) -> Option<String> {
    let online: Vec<&str> = statuses
        .iter()
        .filter(|(_, s)| s.as_str() == ONLINE)
        .map(|(n, _)| n.as_str())
        .collect();
    if online.contains(&vehicle) {
        return None;
    }
    // Names and statuses come from the network: escaped, and clipped.
    let list = if online.is_empty() {
        "none".to_string()
    } else {
        let shown: Vec<String> = online
            .iter()
            .take(20)
            .map(|n| super::escape_control(n).into_owned())
            .collect();
        let more = online.len().saturating_sub(shown.len());
        if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    };
    let last = match statuses.get(vehicle) {
        Some(s) if s.starts_with("an oversize payload") => format!(
            " (its retained status is {s}: not a usim status, which is `online` or `offline`)"
        ),
        Some(s) => format!(
            " (its last status: {})",
            super::escape_control(&super::clip_for_log(s, 80))
        ),
        None => String::new(),
    };
    Some(format!(
        "no vehicle `{}` is online on this broker{last} (online: {list}); the message was sent anyway (--no-check skips this check)",
        super::escape_control(vehicle)
    ))
}

/// How `usim watch` shows what it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// Redraw a table (variable, value, age) on the terminal, 4 times a second.
    Table,
    /// One line `VAR value` per message, as it arrives.
    Lines,
    /// Wait until every requested variable was seen (or, with none
    /// requested, two whole iterations), print `VAR value` lines sorted by
    /// name, and exit.
    Once,
}

/// What `usim watch` shows.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Broker and topic root.
    pub conn: ToolConnection,
    /// Vehicle name.
    pub vehicle: String,
    /// Variables to show; empty: all of the vehicle's topics.
    pub vars: Vec<String>,
    /// Output mode.
    pub mode: WatchMode,
    /// Exit after this many messages (any mode).
    pub count: Option<u64>,
    /// Give up (exit status 1) if not done after this long.
    pub timeout: Option<Duration>,
}

/// How a watch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEnd {
    /// The count was reached, or `Once` saw what it waited for.
    Done,
    /// Stopped by SIGINT/SIGTERM.
    Interrupted,
    /// The timeout expired first.
    TimedOut {
        /// Messages received before it did.
        received: u64,
        /// Requested variables never seen.
        missing: Vec<String>,
    },
}

struct Row {
    value: String,
    at: Instant,
}

/// What `watch` has seen (sans-IO): the latest value per variable, counts.
struct Seen {
    rows: BTreeMap<String, Row>,
    received: u64,
    /// `USM_TIME` messages: whole iterations seen, for `Once` with no variables.
    times_seen: u32,
}

impl Seen {
    /// Note one message; true when the watch is done (`--count` reached, or
    /// `Once` saw what it waits for).
    fn take(&mut self, o: &WatchOptions, var: String, value: String, at: Instant) -> bool {
        self.received += 1;
        if var == USM_TIME {
            self.times_seen += 1;
        }
        self.rows.insert(var, Row { value, at });
        if o.count.is_some_and(|n| self.received >= n) {
            return true;
        }
        o.mode == WatchMode::Once
            && if o.vars.is_empty() {
                self.times_seen >= 3
            } else {
                o.vars.iter().all(|v| self.rows.contains_key(v))
            }
    }

    /// The requested variables never seen.
    fn missing(&self, o: &WatchOptions) -> Vec<String> {
        let unseen = |v: &&String| !self.rows.contains_key(*v);
        o.vars.iter().filter(unseen).cloned().collect()
    }
}

/// A received message, escaped, or why the connection ended.
type Incoming = Result<(String, String), BridgeError>;

/// Run the event loop in its own task (it must be polled continuously),
/// subscribed to `filters` on every connection; messages come back through
/// a bounded channel, escaped: a payload with ANSI/OSC sequences must not
/// rewrite the terminal.
fn spawn_poller(
    client: rumqttc::AsyncClient,
    mut eventloop: rumqttc::EventLoop,
    filters: Vec<SubscribeFilter>,
    url: BrokerUrl,
) -> (tokio::task::JoinHandle<()>, mpsc::Receiver<Incoming>) {
    let (tx, rx) = mpsc::channel::<Incoming>(1024);
    let poller = tokio::spawn(async move {
        let mut connected_once = false;
        loop {
            match eventloop.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    connected_once = true;
                    let _ = client.try_subscribe_many(filters.clone());
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let payload =
                        super::escape_control(&String::from_utf8_lossy(&p.payload)).into_owned();
                    let topic = super::escape_control(&p.topic).into_owned();
                    if tx.send(Ok((topic, payload))).await.is_err() {
                        return;
                    }
                }
                Ok(Event::Outgoing(Outgoing::Disconnect)) => return,
                Ok(_) => {}
                Err(e) if !connected_once => {
                    let _ = tx.send(Err(connection_failure(&url, &e))).await;
                    return;
                }
                Err(e) => {
                    tracing::warn!("connection lost: {e}; reconnecting");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    });
    (poller, rx)
}

/// The subscriptions of `watch`: the named variables, or all of the vehicle's topics.
fn watch_filters(topics: &Topics, vars: &[String]) -> Vec<SubscribeFilter> {
    if vars.is_empty() {
        return vec![SubscribeFilter::new(topics.all(), QoS::AtMostOnce)];
    }
    let filter = |v: &String| SubscribeFilter::new(topics.var(v), QoS::AtMostOnce);
    vars.iter().map(filter).collect()
}

/// A clean MQTT disconnect (the broker would log a broken connection),
/// waiting at most 300 ms for the event loop's task to end.
async fn disconnect(
    mut rx: mpsc::Receiver<Incoming>,
    client: rumqttc::AsyncClient,
    poller: tokio::task::JoinHandle<()>,
) {
    rx.close();
    let _ = client.try_disconnect();
    if tokio::time::timeout(Duration::from_millis(300), poller)
        .await
        .is_err()
    {
        tracing::debug!("no clean disconnect within 300 ms");
    }
}

/// Watch a vehicle; writes to `out` (stdout in the binary).
pub async fn watch(o: &WatchOptions, out: &mut dyn Write) -> Result<WatchEnd, BridgeError> {
    let topics = Topics::new(&o.conn.topic_root, &o.vehicle)?;
    for v in &o.vars {
        check_var(v)?;
    }
    let filters = watch_filters(&topics, &o.vars);
    let (client, eventloop) = o.conn.spec("watch").client(8)?;
    let closer = client.clone();
    let (poller, mut rx) = spawn_poller(client, eventloop, filters, o.conn.url.clone());

    let shutdown = shutdown_signal()?;
    tokio::pin!(shutdown);
    let deadline = o.timeout.map(|t| tokio::time::Instant::now() + t);
    let mut redraw = tokio::time::interval(Duration::from_millis(250));
    redraw.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut seen = Seen {
        rows: BTreeMap::new(),
        received: 0,
        times_seen: 0,
    };
    let started = Instant::now();
    let io = |e: std::io::Error| BridgeError::Io(e);
    let table = |out: &mut dyn Write, seen: &Seen| {
        draw_table(
            out,
            &o.vehicle,
            &o.conn.url,
            &seen.rows,
            seen.received,
            started,
        )
        .map_err(io)
    };

    let end = loop {
        let timeout = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = &mut shutdown => break WatchEnd::Interrupted,
            _ = timeout => break WatchEnd::TimedOut {
                received: seen.received,
                missing: seen.missing(o),
            },
            _ = redraw.tick(), if o.mode == WatchMode::Table => table(out, &seen)?,
            msg = rx.recv() => {
                let (topic, payload) = match msg {
                    Some(Ok(m)) => m,
                    Some(Err(e)) => return Err(e),
                    None => return Err(o.conn.connect_error("connection task ended")),
                };
                let var = topics.var_of(&topic).map(str::to_string).unwrap_or(topic);
                if o.mode == WatchMode::Lines {
                    writeln!(out, "{var} {payload}").map_err(io)?;
                    out.flush().map_err(io)?;
                }
                if seen.take(o, var, payload, Instant::now()) {
                    break WatchEnd::Done;
                }
            }
        }
    };
    disconnect(rx, closer, poller).await;
    match o.mode {
        WatchMode::Once if end == WatchEnd::Done => {
            for (var, row) in &seen.rows {
                if o.vars.is_empty() || o.vars.contains(var) {
                    writeln!(out, "{var} {}", row.value).map_err(io)?;
                }
            }
        }
        WatchMode::Table => table(out, &seen)?,
        _ => {}
    }
    out.flush().map_err(io)?;
    Ok(end)
}

fn draw_table(
    out: &mut dyn Write,
    vehicle: &str,
    url: &BrokerUrl,
    rows: &BTreeMap<String, Row>,
    received: u64,
    started: Instant,
) -> std::io::Result<()> {
    let width = terminal_width().unwrap_or(100).max(40);
    let name_w = rows.keys().map(|k| k.len()).max().unwrap_or(8).clamp(8, 32);
    let value_w = width.saturating_sub(name_w + 10).max(10);
    let status = rows.get(STATUS).map(|r| r.value.as_str()).unwrap_or("?");
    let mut s = String::new();
    // Home + clear screen, then the table.
    s.push_str("\x1b[H\x1b[2J");
    s.push_str(&format!(
        "usim watch {vehicle} @ {url}  status: {status}  {received} msgs in {:.0} s  (Ctrl-C quits)\n",
        started.elapsed().as_secs_f64()
    ));
    s.push_str(&format!(
        "{:<name_w$}  {:<value_w$}  {:>6}\n",
        "VARIABLE", "VALUE", "AGE s"
    ));
    for (var, row) in rows {
        let mut value: String = row.value.chars().take(value_w).collect();
        if row.value.chars().count() > value_w && value_w > 1 {
            value.pop();
            value.push('…');
        }
        s.push_str(&format!(
            "{var:<name_w$}  {value:<value_w$}  {:>6.1}\n",
            row.at.elapsed().as_secs_f64()
        ));
    }
    out.write_all(s.as_bytes())?;
    out.flush()
}

/// Terminal width of stdout, if it is a terminal.
fn terminal_width() -> Option<usize> {
    // SAFETY: TIOCGWINSZ writes one winsize struct to the pointer given.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
}

/// A client id unique to this tool process.
fn tool_client_id(tool: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("usim-{tool}-{}-{nanos}", std::process::id())
}

#[cfg(test)]
mod would_accept_tests {
    use super::{offline_warning, would_accept};

    #[test]
    fn offline_warning_lists_the_vehicles_online() {
        let mut st = std::collections::BTreeMap::new();
        st.insert("kayak".to_string(), "online".to_string());
        st.insert("uuv".to_string(), "online".to_string());
        st.insert("old".to_string(), "offline".to_string());
        assert_eq!(offline_warning("kayak", &st), None);
        let w = offline_warning("kayk", &st).unwrap();
        assert!(
            w.starts_with("no vehicle `kayk` is online on this broker (online: kayak, uuv)"),
            "{w}"
        );
        let w = offline_warning("old", &st).unwrap();
        assert!(w.contains("(its last status: offline)"), "{w}");
        assert!(offline_warning("x", &Default::default())
            .unwrap()
            .contains("(online: none)"));
    }

    #[test]
    fn catches_what_the_vehicle_would_drop() {
        assert!(would_accept("DESIRED_THRUST", "60").is_ok());
        assert!(would_accept("DRIFT_VECTOR_ADD", "137, 0.25").is_ok());
        assert!(would_accept("THRUST_MODE_DIFFERENTIAL", "differential").is_ok()); // V22 word
        assert!(would_accept("DRIFT_VECTOR_ADD", "bad").is_err());
        assert!(would_accept("USM_RESET", "x=abc").is_err());
        assert!(would_accept("DESIRED_THRUST", "fast").is_err());
        assert!(would_accept("SET", r#"["DESIRED_RUDDER", "Mix", []]"#).is_err());
    }
}
