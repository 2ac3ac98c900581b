//! `usim run`: one vehicle on an MQTT broker, the way uSimMarine runs on
//! the MOOSDB.
//!
//! Two tasks share a current-thread tokio runtime (one OS thread, small
//! memory):
//!
//! 1. the *connection task* polls rumqttc's `EventLoop` continuously (it must
//!    be, see rumqttc's `client.rs`): on every `ConnAck` it subscribes to the
//!    vehicle's own command topics and publishes the retained `online`
//!    status; each incoming `Publish` is parsed ([`crate::command::parse_text`])
//!    and put in the bounded [`Mailbox`]; a payload that does not parse is
//!    logged with topic, payload and reason, and dropped. On a connection
//!    error it logs, waits (exponential backoff with jitter, 0.1–2 s) and
//!    polls again, which reconnects; the simulation does not wait for it.
//! 2. the *tick task* wakes on absolute deadlines ([`Schedule`]), hands all
//!    mail received since the last iteration to [`Vehicle::handle_command`]
//!    stamped with this iteration's clock, calls [`Vehicle::step`], and
//!    publishes the iteration's [`Vehicle::publications`], `NODE_REPORT` and
//!    `USM_TIME` (QoS 0) while connected.
//!
//! SIGINT/SIGTERM: the retained status becomes `offline`, the client
//! disconnects cleanly, and the optional `--stats` file is written. If the
//! process dies instead, the broker publishes the last will `offline`.
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rumqttc::{
    AsyncClient, ConnectReturnCode, ConnectionError, Event, EventLoop, Outgoing, Packet, Publish,
    QoS, SubscribeFilter, SubscribeReasonCode,
};
use tracing::{debug, error, info, warn};

use super::endpoint::{BrokerUrl, ConnectSpec};
use super::out::{live_vehicle, MqttOut, Out, VehicleTopics};
use super::topics::{Topics, OFFLINE, ONLINE, USM_TIME};
use super::{no_broker_hint, BridgeError};
use crate::config::{VehicleConfig, MAX_MQTT_PAYLOAD};
use crate::live::clock::unix_time_s;
use crate::live::host::Host;
use crate::live::inbox::{DropLog, Inbox};
use crate::live::nmea_out::NmeaTap;
use crate::live::run::{tick_loop, write_stats};
use crate::live::schedule::Schedule;
use crate::live::stats::{RunStats, TickSummary};

pub use crate::live::inbox::{MAILBOX_BYTES, MAILBOX_ENTRIES};
pub use crate::live::run::{run_for, shutdown_signal};
/// Capacity of rumqttc's request channel (outgoing publications waiting
/// for the connection task); one iteration posts about 20.
pub const REQUEST_CAPACITY: usize = 128;
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(2);
/// How often "still no broker" is repeated at warn level.
const REMIND_EVERY: Duration = Duration::from_secs(30);
/// How long the vehicle waits for its own retained status to come back.
const STATUS_ECHO_WITHIN: Duration = Duration::from_secs(3);
/// A connection closed sooner than this after it was made counts as a
/// quick drop (three in a row: duplicate client id suspected).
const QUICK_DROP: Duration = Duration::from_secs(2);

/// Everything `usim run` needs, resolved from the command line and config.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The vehicle (its `name` already overridden by `--name`).
    pub config: VehicleConfig,
    /// Broker, clock and outputs.
    pub live: LiveOptions,
}

/// What `usim run` and `usim fleet` share, resolved from the command line
/// and the (first) config.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// The broker.
    pub broker: BrokerUrl,
    /// Topic root of every vehicle (from `[mqtt]`, or `--topic-root`).
    pub topic_root: String,
    /// User name and password, if any.
    pub credentials: Option<(String, String)>,
    /// CA bundle for `mqtts://`.
    pub ca_file: Option<PathBuf>,
    /// MOOS-style time warp (> 0): the clock and the iteration rate are scaled.
    pub time_warp: f64,
    /// Clock value at start-up, s; default: Unix time now (as MOOSTime).
    pub start_time_s: Option<f64>,
    /// Where to write tick statistics (JSON) on exit.
    pub stats_path: Option<PathBuf>,
    /// NMEA/AIS of the vehicles, in process (`--nmea-udp`, `--nmea-tcp`).
    pub nmea: Option<crate::live::nmea_out::NmeaOutOptions>,
}

impl LiveOptions {
    /// [`crate::live::check_timing`] of the tick rate `app_tick` (named
    /// `what` in the error), the time warp and the start time.
    pub fn check_timing(&self, what: &str, app_tick: f64) -> Result<(), BridgeError> {
        crate::live::check_timing(what, app_tick, self.time_warp, self.start_time_s)
            .map_err(BridgeError::BadOption)
    }
}

/// What a run did, for the caller and the `--stats` file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    /// Vehicle name.
    pub vehicle: String,
    /// Iterations and their lateness.
    #[serde(flatten)]
    pub ticks: TickSummary,
    /// Messages that did not parse or were refused by the model.
    pub bad_messages: u64,
    /// Messages dropped because the mailbox was full.
    pub mail_dropped: u64,
    /// Plain setpoints superseded before an iteration used them.
    pub mail_coalesced: u64,
    /// Publications dropped because the outgoing queue was full.
    pub publish_dropped: u64,
    /// Connections made (1 + reconnections).
    pub connections: u64,
}

/// Connection state shared by the connection task and the tick task.
#[derive(Debug, Default)]
pub(crate) struct LinkState {
    /// Between a `ConnAck` and the next connection error.
    pub connected: AtomicBool,
    /// Set at SIGINT/SIGTERM: connection errors end the task.
    pub shutting_down: AtomicBool,
    /// Connections made (1 + reconnections).
    pub connections: AtomicU64,
    /// QoS 1 publications the broker acknowledged (`PUBACK`s).
    pub acked: AtomicU64,
}

impl LinkState {
    /// Wait until `n` more `PUBACK`s than `before` arrived, or `within`
    /// passed; true if they did.
    pub async fn wait_acks(&self, before: u64, n: u64, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while self.acked.load(Ordering::SeqCst) < before + n {
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }
}

/// What a live runtime announces at each connection, and says of itself
/// in its log lines.
#[derive(Debug)]
pub(crate) struct Announcement {
    /// Retained `online` on each at every connection; the first is also
    /// subscribed to: its `online` coming back proves that the broker takes
    /// our publications and subscriptions (the echo).
    pub statuses: Vec<String>,
    /// Each vehicle's `{root}/{name}/model` topic and model name (retained).
    pub models: Vec<(String, &'static str)>,
    /// The command subscriptions.
    pub filters: Vec<SubscribeFilter>,
    /// The claim topic (filter) answered while we run.
    pub claim: String,
    /// The topics we use, for the ACL error message (`usim/NAME/#`).
    pub scope: String,
    /// Whose status the echo is ("this vehicle's", "the fleet's"), for logs.
    pub owner: &'static str,
}

/// What the connection task does on behalf of its vehicle(s): `usim run`
/// routes to one vehicle ([`OneVehicle`]), `usim fleet` to many.
pub(crate) trait Router {
    /// The statuses, models, subscriptions and names of this runtime.
    fn announcement(&self) -> &Announcement;
    /// One incoming message (not the echo): parse into a mailbox or drop.
    fn on_publish(&self, p: &Publish, drops: &mut DropLog);
    /// At every `ConnAck`: [`announce`] the [`Router::announcement`].
    fn on_connect(&self, client: &AsyncClient) {
        announce(client, self.announcement());
    }
    /// The echo topic ([`Announcement::statuses`]' first).
    fn echo_topic(&self) -> &str {
        self.announcement()
            .statuses
            .first()
            .map_or("", String::as_str)
    }
}

/// The [`Router`] of `usim run`.
struct OneVehicle {
    topics: Topics,
    announced: Announcement,
    client: AsyncClient,
    inbox: Arc<Inbox>,
}

impl OneVehicle {
    /// The router of `live`, a vehicle of model `variant` on `topics`.
    fn new(
        client: &AsyncClient,
        topics: &Topics,
        variant: crate::model::ModelVariant,
        live: &crate::live::vehicle::LiveVehicle,
    ) -> Self {
        let announced = Announcement {
            statuses: vec![topics.status()],
            claim: topics.var(crate::live::claim::CLAIM),
            models: vec![(
                topics.var(super::topics::MODEL),
                super::topics::model_name(variant),
            )],
            filters: topics
                .command_filters_except(&live.echoes)
                .into_iter()
                .map(|f| SubscribeFilter::new(f, QoS::AtLeastOnce))
                .collect(),
            scope: topics.all(),
            owner: "this vehicle's",
        };
        OneVehicle {
            announced,
            client: client.clone(),
            topics: topics.clone(),
            inbox: Arc::clone(&live.inbox),
        }
    }
}

impl Router for OneVehicle {
    fn announcement(&self) -> &Announcement {
        &self.announced
    }
    fn on_publish(&self, p: &Publish, drops: &mut DropLog) {
        if p.topic == self.announced.claim {
            answer_claim(&self.client, &p.topic, &p.payload);
            return;
        }
        let var = self.topics.var_of(&p.topic);
        self.inbox
            .accept_bytes(&p.topic, var, &p.payload, p.retain, drops);
    }
}

/// At each (re)connection: the retained `online` on every status topic
/// and each vehicle's retained `model`, then the subscriptions (commands,
/// the echo topic, the claim topic) in SUBSCRIBE packets of at most 200
/// filters, well under the 64 KiB outgoing limit. Shared by `usim run`
/// and `usim fleet`; a full outgoing queue is logged, not fatal (the next
/// connection repeats it).
pub(crate) fn announce(client: &AsyncClient, a: &Announcement) {
    let mut failed = 0;
    let retained =
        (a.statuses.iter().map(|t| (t, ONLINE))).chain(a.models.iter().map(|(t, m)| (t, *m)));
    for (topic, payload) in retained {
        if client
            .try_publish(topic.clone(), QoS::AtLeastOnce, true, payload)
            .is_err()
        {
            failed += 1;
        }
    }
    if failed > 0 {
        warn!("cannot queue {failed} online statuses and models (outgoing queue full)");
    }
    let mut filters = a.filters.clone();
    filters.extend(
        a.statuses
            .first()
            .map(|t| SubscribeFilter::new(t.clone(), QoS::AtLeastOnce)),
    );
    filters.push(SubscribeFilter::new(a.claim.clone(), QoS::AtMostOnce));
    for chunk in filters.chunks(200) {
        if let Err(e) = client.try_subscribe_many(chunk.to_vec()) {
            error!("cannot queue the subscriptions: {e}");
        }
    }
}

/// Answer another process's claim probe on `topic` (the owner's side of
/// [`crate::live::claim`]); anything else heard there is ignored.
pub(crate) fn answer_claim(client: &AsyncClient, topic: &str, payload: &[u8]) {
    if let Some(answer) =
        crate::live::claim::owner_answer(crate::live::claim::process_nonce(), payload)
    {
        // QoS 0 and never retained: an answer is only for who asks now.
        let _ = client.try_publish(topic.to_string(), QoS::AtMostOnce, false, answer);
    }
}

/// The connection of one vehicle: its client id, credentials, TLS and the
/// retained `offline` last will on its status topic.
fn vehicle_connect_spec(opts: &RunOptions, topics: &Topics) -> ConnectSpec {
    let id = client_id("run", &opts.live.topic_root, &opts.config.name);
    live_connect_spec(&opts.live, id, topics.status())
}

/// The connection of a live runtime (`usim run`, `usim fleet`) as `o`
/// says: client id `id`, and the retained `offline` last will on `status`.
pub(crate) fn live_connect_spec(o: &LiveOptions, id: String, status: String) -> ConnectSpec {
    let mut spec = ConnectSpec::new(o.broker.clone(), id);
    // rumqttc closes the connection on a packet over its limit, and a
    // retained one would then come back on every reconnection: take any
    // packet MQTT allows and drop payloads over [mqtt] max_payload here.
    // The broker's own limit (mosquitto's message_size_limit) is the first
    // line of defence against the memory a huge packet takes in transit.
    spec.max_incoming_packet = MAX_MQTT_PAYLOAD + 5;
    spec.credentials = o.credentials.clone();
    spec.ca_file = o.ca_file.clone();
    spec.last_will = Some((status, OFFLINE.to_string()));
    spec
}

/// Clean exit: the retained `offline`, then a clean disconnect (at most 2 s
/// for the broker to take it); without a connection, only a warning.
async fn disconnect(
    shared: &LinkState,
    client: &AsyncClient,
    topics: &Topics,
    connection: tokio::task::JoinHandle<()>,
) {
    shared.shutting_down.store(true, Ordering::SeqCst);
    if shared.connected.load(Ordering::SeqCst) {
        let _ = client.try_publish(topics.status(), QoS::AtLeastOnce, true, OFFLINE);
        let _ = client.try_disconnect();
        match tokio::time::timeout(Duration::from_secs(2), connection).await {
            Ok(_) => info!("published status offline and disconnected"),
            Err(_) => warn!("broker did not take the disconnect within 2 s"),
        }
    } else {
        connection.abort();
        warn!("not connected to the broker: could not publish status offline");
    }
}

/// Run one vehicle until SIGINT/SIGTERM. Must be called inside a tokio
/// runtime with time and I/O enabled (a current-thread one is enough).
pub async fn run_vehicle(opts: RunOptions) -> Result<RunSummary, BridgeError> {
    let cfg = &opts.config;
    opts.live.check_timing("app_tick", cfg.app_tick)?;
    let topics = Topics::new(&opts.live.topic_root, &cfg.name)?;
    for w in &cfg.warnings {
        warn!("config: {w}");
    }

    let mut nmea = NmeaTap::open_for(opts.live.nmea.as_ref(), &cfg.name)
        .await
        .map_err(BridgeError::BadOption)?;
    let spec = vehicle_connect_spec(&opts, &topics);
    check_name_is_free(&spec, &topics, &cfg.name).await?;
    let (client, eventloop) = spec.client(REQUEST_CAPACITY)?;

    // The clock and the schedule start together (after the name check).
    let start_time_s = opts.live.start_time_s.unwrap_or_else(unix_time_s);
    let origin = Instant::now();
    let live = live_vehicle(cfg, &topics, start_time_s);
    let router = OneVehicle::new(&client, &topics, cfg.params.variant, &live);
    let mut host = Host::new(vec![live]);
    let mut vehicle_topics = [VehicleTopics::new(topics.clone())];
    let (shared, connection) = spawn_connection(eventloop, &client, router, &opts.live.broker);

    let mut schedule = Schedule::new(origin, start_time_s, cfg.app_tick, opts.live.time_warp);
    info!(
        "vehicle {} running: {} Hz, time warp {}, broker {}, topics {}",
        cfg.name,
        cfg.app_tick,
        opts.live.time_warp,
        opts.live.broker,
        topics.all()
    );
    let mut stats = RunStats::default();
    let why = tick_loop(&mut schedule, &mut stats, shutdown_signal()?, |t_s| {
        let connected = shared.connected.load(Ordering::Relaxed);
        let mut out = MqttOut {
            out: connected.then_some(Out::Client(&client)),
            topics: &mut vehicle_topics,
        };
        let failed = host.iterate(t_s, &mut out);
        nmea.iteration(&host, t_s);
        failed
    })
    .await;
    nmea.log_summary();

    // Clean exit: retained `offline`, then a clean disconnect.
    info!("{why}: stopping vehicle {}", cfg.name);
    disconnect(&shared, &client, &topics, connection).await;

    let mail = host.counters();
    let summary = RunSummary {
        vehicle: cfg.name.clone(),
        ticks: TickSummary::of(&stats, &schedule),
        bad_messages: mail.bad_messages,
        mail_dropped: mail.mail_dropped,
        mail_coalesced: mail.mail_coalesced,
        publish_dropped: stats.publish_dropped,
        connections: shared.connections.load(Ordering::Relaxed),
    };
    if let Some(path) = &opts.live.stats_path {
        write_stats(path, &summary)?;
    }
    Ok(summary)
}

/// Connection bookkeeping for log messages.
enum Link {
    NeverConnected { attempts: u64, last_warn: Instant },
    Connected,
    Lost { since: Instant, last_warn: Instant },
}

/// The connection task: poll rumqttc forever (see the module doc).
/// Start [`drive_connection`] on its own task: the link state it keeps and
/// the task's handle (to await or abort at shutdown).
pub(crate) fn spawn_connection(
    eventloop: EventLoop,
    client: &AsyncClient,
    router: impl Router + Send + 'static,
    url: &BrokerUrl,
) -> (Arc<LinkState>, tokio::task::JoinHandle<()>) {
    let shared = Arc::new(LinkState::default());
    let connection = tokio::spawn(drive_connection(
        eventloop,
        client.clone(),
        Arc::clone(&shared),
        router,
        url.to_string(),
    ));
    (shared, connection)
}

pub(crate) async fn drive_connection(
    mut eventloop: EventLoop,
    client: AsyncClient,
    shared: Arc<LinkState>,
    router: impl Router,
    url: String,
) {
    let mut backoff = BACKOFF_MIN;
    let mut log = LinkLog::new(&url);
    let mut drops = DropLog::new();
    let status_topic = router.echo_topic().to_string();
    // Our own retained `online` must come back on the status subscription:
    // if it does not, the broker drops our publications or subscriptions
    // (an ACL that does not match this vehicle's name).
    let mut echo_deadline: Option<tokio::time::Instant> = None;
    let mut burst = 0u64;
    loop {
        let event = match echo_deadline {
            Some(d) => tokio::select! {
                ev = eventloop.poll() => ev,
                _ = tokio::time::sleep_until(d) => {
                    echo_deadline = None;
                    error!(
                        "the broker at {url} did not deliver {} own retained status \
                         ({status_topic}) back within {} s: it drops our publications or \
                         subscriptions on {} (an ACL that does not match the vehicle name? see \
                         configs/mosquitto.acl)",
                        router.announcement().owner,
                        STATUS_ECHO_WITHIN.as_secs(),
                        router.announcement().scope
                    );
                    continue;
                }
            },
            None => eventloop.poll().await,
        };
        match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                shared.connected.store(true, Ordering::SeqCst);
                shared.connections.fetch_add(1, Ordering::Relaxed);
                router.on_connect(&client);
                echo_deadline = Some(tokio::time::Instant::now() + STATUS_ECHO_WITHIN);
                log.connected();
                backoff = BACKOFF_MIN;
            }
            Ok(Event::Incoming(Packet::Publish(p))) if p.topic == status_topic => {
                if p.payload.as_ref() == ONLINE.as_bytes() {
                    echo_deadline = None;
                }
            }
            Ok(Event::Incoming(Packet::Publish(p))) => {
                router.on_publish(&p, &mut drops);
                // A burst already in the socket buffer (e.g. a flood resent
                // by QoS 1 clients after a broker restart) is parsed without
                // ever waiting: let the tick task run between packets.
                burst += 1;
                if burst % 16 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            Ok(Event::Incoming(Packet::SubAck(ack))) => {
                let refused = ack
                    .return_codes
                    .iter()
                    .filter(|c| matches!(c, SubscribeReasonCode::Failure))
                    .count();
                if refused > 0 {
                    error!(
                        "the broker refused {refused} of {} subscriptions: check its ACL \
                         (see configs/mosquitto.acl)",
                        ack.return_codes.len()
                    );
                }
            }
            Ok(Event::Incoming(Packet::PubAck(_))) => {
                shared.acked.fetch_add(1, Ordering::SeqCst);
            }
            Ok(Event::Outgoing(Outgoing::Disconnect)) => {
                shared.connected.store(false, Ordering::SeqCst);
                return;
            }
            Ok(_) => {}
            Err(e) => {
                shared.connected.store(false, Ordering::SeqCst);
                if shared.shutting_down.load(Ordering::SeqCst) {
                    return;
                }
                echo_deadline = None;
                log.failed(&e);
                tokio::time::sleep(jitter(backoff)).await;
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}

/// The connection's history, for what the log says at each connect and
/// failure: the first failure loudly, reminders every [`REMIND_EVERY`], a
/// client id taken over by another process (closed again and again within
/// [`QUICK_DROP`] of connecting).
struct LinkLog<'a> {
    url: &'a str,
    link: Link,
    connected_at: Instant,
    quick_drops: u32,
}

impl<'a> LinkLog<'a> {
    fn new(url: &'a str) -> LinkLog<'a> {
        LinkLog {
            url,
            link: Link::NeverConnected {
                attempts: 0,
                last_warn: Instant::now(),
            },
            connected_at: Instant::now(),
            quick_drops: 0,
        }
    }

    fn connected(&mut self) {
        let url = self.url;
        self.connected_at = Instant::now();
        match self.link {
            Link::NeverConnected { .. } => info!("connected to {url}"),
            Link::Lost { since, .. } => info!(
                "reconnected to {url} after {:.1} s; subscriptions renewed",
                since.elapsed().as_secs_f64()
            ),
            Link::Connected => {}
        }
        self.link = Link::Connected;
    }

    fn failed(&mut self, e: &ConnectionError) {
        let url = self.url;
        let hint = refusal_hint(e);
        let refused = matches!(e, ConnectionError::ConnectionRefused(_));
        match &mut self.link {
            Link::Connected => {
                if self.connected_at.elapsed() < QUICK_DROP {
                    self.quick_drops += 1;
                } else {
                    self.quick_drops = 0;
                }
                if self.quick_drops >= 3 {
                    error!(
                        "the broker at {url} closed the connection {} times \
                         within {} s of connecting: is another process using this \
                         vehicle's client id (a second vehicle with the same name)?",
                        self.quick_drops,
                        QUICK_DROP.as_secs()
                    );
                }
                warn!(
                    "lost the connection to {url}: {e}; reconnecting \
                     (the simulation keeps running){hint}"
                );
                self.link = Link::Lost {
                    since: Instant::now(),
                    last_warn: Instant::now(),
                };
            }
            Link::NeverConnected {
                attempts,
                last_warn,
            } => {
                if *attempts == 0 && !refused && hint.is_empty() {
                    error!(
                        "cannot reach the MQTT broker at {url}: {e}. {}. \
                         Retrying; the simulation runs meanwhile.",
                        no_broker_hint()
                    );
                } else if *attempts == 0 {
                    error!(
                        "the MQTT broker at {url} refused the connection: {e}{hint}. \
                         Retrying; the simulation runs meanwhile."
                    );
                } else if last_warn.elapsed() >= REMIND_EVERY {
                    *last_warn = Instant::now();
                    warn!("still no MQTT broker at {url} ({e}){hint}");
                } else {
                    debug!("connection attempt to {url} failed: {e}");
                }
                *attempts += 1;
            }
            Link::Lost { since, last_warn } => {
                if last_warn.elapsed() >= REMIND_EVERY {
                    *last_warn = Instant::now();
                    warn!(
                        "still disconnected from {url} after {:.0} s ({e})",
                        since.elapsed().as_secs_f64()
                    );
                } else {
                    debug!("reconnection attempt to {url} failed: {e}");
                }
            }
        }
    }
}

/// Refuse to start a second vehicle with a name that is already running.
///
/// Before its own connection, the vehicle connects with a probe client,
/// subscribes to its name's claim topic and `USM_TIME`, and sends its
/// claim probe a few times within [`CLAIM_WINDOW`] ([`crate::live::claim`]). A
/// running owner answers the probe: [`BridgeError::Duplicate`]; so does a
/// live (not retained) `USM_TIME` of that name. Of two processes claiming
/// at once, the lower random number starts and the other refuses. The
/// retained `status` is not read: anyone can forge it. If the broker
/// cannot be reached, the check is skipped (the run reports it).
async fn check_name_is_free(
    spec: &ConnectSpec,
    topics: &Topics,
    name: &str,
) -> Result<(), BridgeError> {
    check_names_are_free(spec, topics.root(), &[name.to_string()]).await
}

/// How long a claimant listens for owners and rival claimants after its
/// subscriptions are in place.
pub const CLAIM_WINDOW: Duration = Duration::from_millis(1200);
/// How often the claim probe is repeated within [`CLAIM_WINDOW`] (an
/// owner still setting up its connection hears a later one).
const CLAIM_REPEAT: Duration = Duration::from_millis(300);

/// [`check_name_is_free`] for many names on one probe connection (`usim
/// fleet`): one name subscribes to its own two topics, several to
/// `{topic_root}/+/claim` and `{topic_root}/+/USM_TIME`. The first name
/// found taken is reported.
pub(crate) async fn check_names_are_free(
    spec: &ConnectSpec,
    topic_root: &str,
    names: &[String],
) -> Result<(), BridgeError> {
    let (client, mut eventloop) = probe_spec(spec).client(names.len() + 16)?;
    let mut check = NameCheck::new(topic_root, names);
    let filters = check.filters();
    // Our probe (the same bytes each time: this process's nonce).
    let probe_payload = check.me.probe().payload();
    let send_probes = |client: &AsyncClient| {
        let payload = probe_payload.clone();
        for n in names {
            let topic = format!("{topic_root}/{n}/{}", crate::live::claim::CLAIM);
            let _ = client.try_publish(topic, QoS::AtMostOnce, false, payload.clone());
        }
    };
    let url = spec.url.to_string();
    let mut subacks = 0;
    let mut window: Option<(tokio::time::Instant, tokio::time::Instant)> = None;
    let outcome = tokio::time::timeout(Duration::from_secs(8), async {
        loop {
            let ev = match wait_in_window(&mut eventloop, &mut window).await {
                Wake::Event(ev) => ev,
                Wake::End => break Ok(()),
                Wake::Probe => {
                    send_probes(&client);
                    continue;
                }
            };
            match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    for f in &filters {
                        let _ = client.try_subscribe(f.clone(), QoS::AtMostOnce);
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    match check.on_publish(&p.topic, &p.payload, p.retain) {
                        NameStep::Taken { name, race } => {
                            break Err(BridgeError::Duplicate {
                                name,
                                url: url.clone(),
                                race,
                            })
                        }
                        NameStep::Answer => {
                            let payload = probe_payload.clone();
                            let _ = client.try_publish(
                                p.topic.clone(),
                                QoS::AtMostOnce,
                                false,
                                payload,
                            );
                        }
                        NameStep::Nothing => {}
                    }
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    subacks += 1;
                    if subacks == 2 {
                        send_probes(&client);
                        let now = tokio::time::Instant::now();
                        window = Some((now + CLAIM_WINDOW, now + CLAIM_REPEAT));
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    debug!("name check skipped: {e}");
                    break Ok(());
                }
            }
        }
    })
    .await
    .unwrap_or(Ok(()));
    disconnect_cleanly(&client, &mut eventloop).await;
    outcome
}

/// The name check's own connection: `spec` under the client id
/// `<id>-probe`, no will; as the vehicle's own connection it takes any
/// packet MQTT allows (a huge retained message must not end the check and
/// so skip it), and ignores what is not a claim message.
fn probe_spec(spec: &ConnectSpec) -> ConnectSpec {
    let mut probe = spec.clone();
    probe.client_id = format!("{}-probe", spec.client_id);
    probe.last_will = None;
    probe.max_incoming_packet = MAX_MQTT_PAYLOAD + 5;
    probe
}

/// What woke the name check: an event, the time to probe again, the
/// window's end.
enum Wake {
    Event(Result<Event, ConnectionError>),
    Probe,
    End,
}

/// The next event; within the claim window (end, next probe) also the
/// times to probe again and to stop (the next probe moved on by
/// [`CLAIM_REPEAT`]).
async fn wait_in_window(
    eventloop: &mut rumqttc::EventLoop,
    window: &mut Option<(tokio::time::Instant, tokio::time::Instant)>,
) -> Wake {
    let Some((end, next_probe)) = *window else {
        return Wake::Event(eventloop.poll().await);
    };
    match tokio::time::timeout_at(end.min(next_probe), eventloop.poll()).await {
        Ok(ev) => Wake::Event(ev),
        Err(_) if tokio::time::Instant::now() >= end => Wake::End,
        Err(_) => {
            *window = Some((end, next_probe + CLAIM_REPEAT));
            Wake::Probe
        }
    }
}

/// What the name check does after a message on a claim or time topic.
enum NameStep {
    Nothing,
    /// Answer a rival's probe with ours (once per rival and name).
    Answer,
    /// The name is taken (`race`: a rival probing at the same time won).
    Taken {
        name: String,
        race: bool,
    },
}

/// The name check's decisions (sans-IO): which messages prove a name is
/// taken, which probes to answer.
struct NameCheck<'a> {
    me: crate::live::claim::Claimant,
    topic_root: &'a str,
    names: &'a [String],
    ours: std::collections::HashSet<&'a str>,
    /// Probes answered, bounded by [`MAX_ANSWERED`] over the window.
    answered: std::collections::HashSet<String>,
}

/// Most rival probes one name check answers.
const MAX_ANSWERED: usize = 4096;

impl<'a> NameCheck<'a> {
    fn new(topic_root: &'a str, names: &'a [String]) -> NameCheck<'a> {
        NameCheck {
            me: crate::live::claim::Claimant::this_process(),
            topic_root,
            names,
            ours: names.iter().map(String::as_str).collect(),
            answered: Default::default(),
        }
    }

    /// The claim and `USM_TIME` topics of our names (one name: its own
    /// topics; several: the root's wildcards).
    fn filters(&self) -> [String; 2] {
        use crate::live::claim::CLAIM;
        let root = self.topic_root;
        match self.names {
            [one] => [
                format!("{root}/{one}/{CLAIM}"),
                format!("{root}/{one}/{USM_TIME}"),
            ],
            _ => [format!("{root}/+/{CLAIM}"), format!("{root}/+/{USM_TIME}")],
        }
    }

    fn on_publish(&mut self, topic: &str, payload: &[u8], retain: bool) -> NameStep {
        use crate::live::claim::{Verdict, CLAIM};
        let Some((name, var)) = topic
            .strip_prefix(self.topic_root)
            .and_then(|t| t.strip_prefix('/'))
            .and_then(|t| t.split_once('/'))
            .filter(|(name, _)| self.ours.contains(name))
        else {
            return NameStep::Nothing;
        };
        let taken = |race| NameStep::Taken {
            name: name.to_string(),
            race,
        };
        if var == CLAIM {
            match self.me.judge(payload) {
                Verdict::Taken => taken(false),
                Verdict::LostRace => taken(true),
                Verdict::AnswerWithProbe
                    if self.answered.len() < MAX_ANSWERED
                        && self.answered.insert(topic.to_string()) =>
                {
                    NameStep::Answer
                }
                _ => NameStep::Nothing,
            }
        } else if var == USM_TIME && !retain {
            // A live USM_TIME (a stored, retained one proves nothing).
            taken(false)
        } else {
            NameStep::Nothing
        }
    }
}

/// Disconnect and drain the event loop briefly (at most 200 ms): a clean
/// MQTT goodbye, not a broken connection in the broker's log.
pub(super) async fn disconnect_cleanly(client: &AsyncClient, eventloop: &mut rumqttc::EventLoop) {
    let _ = client.try_disconnect();
    let _ = tokio::time::timeout(Duration::from_millis(200), async {
        while let Ok(ev) = eventloop.poll().await {
            if matches!(ev, Event::Outgoing(Outgoing::Disconnect)) {
                break;
            }
        }
    })
    .await;
}

/// A hint for connection refusals that are about credentials or ACLs.
fn refusal_hint(e: &ConnectionError) -> &'static str {
    match e {
        ConnectionError::ConnectionRefused(
            ConnectReturnCode::BadUserNamePassword | ConnectReturnCode::NotAuthorized,
        ) => " (check username/password in [mqtt]; the password may also be given in USIM_MQTT_PASSWORD)",
        ConnectionError::ConnectionRefused(ConnectReturnCode::BadClientId) => {
            " (client id rejected: is another process running this vehicle name?)"
        }
        #[cfg(feature = "tls")]
        ConnectionError::Tls(_) => {
            " (TLS: if the broker's certificate is signed by a private CA, give it with --ca-file)"
        }
        _ => "",
    }
}

/// The MQTT client id of a process of `kind` (`run`, `fleet`, ...) for
/// `name` under `topic_root`: `usim-KIND-ROOT-NAME-NONCE`, where ROOT and
/// NAME keep ASCII letters, digits and `.` and write every other byte as
/// `_XX` (hex), so `-` only ever separates the parts and two different
/// (root, name) pairs never give one id (vehicle `x-y` under `usim` and `y`
/// under `usim-x` collided before, issue 20); NONCE is this process's
/// random [`crate::live::claim::process_nonce`], so two processes never share an
/// id and never take each other's connection.
pub fn client_id(kind: &str, topic_root: &str, name: &str) -> String {
    format!(
        "usim-{kind}-{}-{}-{}",
        escape_id_part(topic_root),
        escape_id_part(name),
        crate::live::claim::process_nonce()
    )
}

/// `s` with every byte other than ASCII letters, digits and `.` as `_XX`.
fn escape_id_part(s: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b == b'.' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "_{b:02X}");
        }
    }
    out
}

/// Between half and all of `d`, so a fleet does not reconnect in lockstep.
fn jitter(d: Duration) -> Duration {
    let r = RandomState::new().build_hasher().finish();
    d.mul_f64(0.5 + (r % 1000) as f64 / 2000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_are_unambiguous_and_safe_for_any_broker() {
        let n = crate::live::claim::process_nonce();
        assert_eq!(
            client_id("run", "usim", "alpha"),
            format!("usim-run-usim-alpha-{n}")
        );
        assert_eq!(
            client_id("run", "a/b", "c"),
            format!("usim-run-a_2Fb-c-{n}")
        );
        // Issue 20: vehicle `x-y` under `usim` and `y` under `usim-x`.
        assert_ne!(
            client_id("run", "usim", "x-y"),
            client_id("run", "usim-x", "y")
        );
        assert_ne!(
            client_id("run", "usim", "fleet"),
            client_id("fleet", "usim", "fleet")
        );
        for id in [
            client_id("run", "a/$+#", "n_a.me"),
            client_id("fleet", "é", "x"),
        ] {
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
                "{id}"
            );
        }
    }

    #[test]
    fn jitter_stays_within_half_and_full() {
        for _ in 0..100 {
            let j = jitter(Duration::from_millis(1000));
            assert!(j >= Duration::from_millis(500) && j <= Duration::from_millis(1000));
        }
    }
}
