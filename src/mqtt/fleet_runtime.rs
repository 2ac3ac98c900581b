//! `usim fleet`: many vehicles in one process on one MQTT connection
//! (docs/fleets.md).
//!
//! Each vehicle keeps what it has under `usim run` — its topics
//! `{topic_root}/{name}/…` (so `usim post NAME` and `usim watch NAME` work
//! unchanged), its own bounded mailbox, its retained `status`, its model —
//! through the same live host ([`crate::live::host::Host`]). What is shared:
//!
//! * **one connection** (one client id: that of the fleet name), driven by
//!   the same connection task as `usim run`
//!   ([`super::bridge::drive_connection`]); it subscribes with one wildcard
//!   filter per command variable (`{topic_root}/+/DESIRED_THRUST`, …) and
//!   routes each message by the name in its topic to that vehicle's
//!   mailbox (a flood to one vehicle fills only its mailbox; messages for
//!   names not in this fleet are ignored: they belong to other processes);
//! * **one tick schedule**: at each deadline every vehicle takes its mail,
//!   steps and publishes, in the order given;
//! * **the last will**: one connection has one will, so it is the fleet's
//!   own retained status `{topic_root}/{fleet}/status` (`online` while the
//!   fleet runs, `offline` by the will if the process dies). On a clean
//!   exit (SIGINT/SIGTERM) every vehicle's retained status is set
//!   `offline`, then the fleet's. After a crash the vehicles' statuses
//!   still say `online`: the fleet status is the one to trust.
//! * **encounters**: with ranges given, a [`Tracker`] (spatial grid, O(n)
//!   for sparse fleets) follows every pair each iteration and publishes
//!   each event as one JSON `ENCOUNTER` message on
//!   `{topic_root}/{fleet}/ENCOUNTER` (QoS 1).
use std::collections::HashMap;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nalgebra::Vector2;
use rumqttc::{AsyncClient, Publish, QoS, SubscribeFilter};
use tracing::{debug, info, warn};

use super::bridge::{
    check_names_are_free, client_id, shutdown_signal, spawn_connection, Announcement, LinkState,
    LiveOptions, Router,
};
use super::burst::Burst;
use super::endpoint::ConnectSpec;
use super::out::{live_vehicle, MqttOut, Out, VehicleTopics};
use super::topics::{Topics, OFFLINE};
use super::BridgeError;
use crate::command::SUBSCRIPTIONS;
use crate::config::VehicleConfig;
use crate::encounter::{Event as EncounterEvent, Track, Tracker};
use crate::live::clock::unix_time_s;
use crate::live::host::Host;
use crate::live::inbox::{DropLog, Inbox};
use crate::live::nmea_out::NmeaTap;
use crate::live::run::{tick_loop, write_stats};
use crate::live::schedule::Schedule;
use crate::live::stats::{RunStats, TickSummary};
use crate::live::vehicle::LiveVehicle;
use crate::mission::EncounterRanges;

/// Last topic level of the fleet's encounter events.
pub const ENCOUNTER: &str = "ENCOUNTER";
/// Default fleet name (its status and `ENCOUNTER` topics, its client id).
pub const DEFAULT_FLEET_NAME: &str = "fleet";
/// Outgoing requests per vehicle the request channel holds (one
/// iteration with `publish = "all"` posts about 25).
const REQUESTS_PER_VEHICLE: usize = 32;
/// Same with the publications on the burst connection: the statuses
/// `online` and `offline` and the model (QoS 1), with room to spare.
const REQUESTS_PER_VEHICLE_BURST: usize = 4;

/// Everything `usim fleet` needs.
#[derive(Debug, Clone)]
pub struct FleetRunOptions {
    /// The vehicles, names final and unique.
    pub vehicles: Vec<VehicleConfig>,
    /// Fleet name: `{topic_root}/{fleet}/status` and `/ENCOUNTER`, client id.
    pub fleet_name: String,
    /// Iterations per second of the whole fleet, Hz.
    pub app_tick: f64,
    /// Encounter ranges (m); `None`: no `ENCOUNTER` messages.
    pub encounters: Option<EncounterRanges>,
    /// Broker, clock and outputs.
    pub live: LiveOptions,
}

/// What a fleet run did, for the caller and the `--stats` file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FleetSummary {
    /// Fleet name.
    pub fleet: String,
    /// Number of vehicles.
    pub vehicles: usize,
    /// Iterations run (each steps every vehicle) and their lateness.
    #[serde(flatten)]
    pub ticks: TickSummary,
    /// Time one iteration of the whole fleet took, p50, ms.
    pub work_p50_ms: f64,
    /// Same, p99, ms.
    pub work_p99_ms: f64,
    /// Same, largest, ms.
    pub work_max_ms: f64,
    /// CPU time of the fleet's thread in one iteration, p50, ms: the
    /// iteration's cost without the waits a loaded machine adds to its
    /// wall time (`work_*`).
    pub cpu_p50_ms: f64,
    /// Same, p99, ms.
    pub cpu_p99_ms: f64,
    /// Messages that did not parse or were refused by a model, all vehicles.
    pub bad_messages: u64,
    /// Messages dropped because a mailbox was full, all vehicles.
    pub mail_dropped: u64,
    /// Plain setpoints superseded before an iteration used them.
    pub mail_coalesced: u64,
    /// Publications dropped because the outgoing queue was full.
    pub publish_dropped: u64,
    /// Connections made (1 + reconnections).
    pub connections: u64,
    /// Encounter events published (near misses, collisions, clears).
    pub encounter_events: u64,
}

/// The [`Router`] of a fleet: wildcard subscriptions, mail routed by name.
struct FleetRouter {
    root_prefix: String,
    /// The fleet's status first, then each vehicle's; the claims of every
    /// name under the root (ours are answered).
    announced: Announcement,
    inboxes: HashMap<String, Arc<Inbox>>,
    /// The fleet's own name (its claim is answered too).
    fleet_name: String,
    /// Where claim answers go (`None` in unit tests).
    client: Option<AsyncClient>,
}

impl Router for FleetRouter {
    fn announcement(&self) -> &Announcement {
        &self.announced
    }

    fn on_publish(&self, p: &Publish, drops: &mut DropLog) {
        let Some((name, var)) = p
            .topic
            .strip_prefix(self.root_prefix.as_str())
            .and_then(|rest| rest.split_once('/'))
        else {
            debug!("ignored message on {:?}: not under our topic root", p.topic);
            return;
        };
        if var == crate::live::claim::CLAIM {
            if let Some(client) = &self.client {
                if name == self.fleet_name || self.inboxes.contains_key(name) {
                    super::bridge::answer_claim(client, &p.topic, &p.payload);
                }
            }
            return;
        }
        // A name not in the fleet is another process's vehicle: the
        // wildcard brought its mail here; ignored.
        if let Some(inbox) = self.inboxes.get(name) {
            let var = (!var.is_empty() && !var.contains('/')).then_some(var);
            inbox.accept_bytes(&p.topic, var, &p.payload, p.retain, drops);
        }
    }
}

/// One wildcard filter `{root}/+/{VAR}` per subscribed variable, except
/// for variables some vehicles publish themselves ([`crate::live::vehicle::echo_vars`]):
/// those are subscribed per vehicle, by the vehicles that do not, so the
/// fleet does not hear its own publications.
fn fleet_filters(topic_root: &str, links: &[LiveVehicle]) -> Vec<SubscribeFilter> {
    let mut filters = Vec::new();
    for (var, _, _) in SUBSCRIPTIONS {
        if links.iter().all(|l| !l.echoes.contains(var)) {
            filters.push(format!("{topic_root}/+/{var}"));
        } else {
            filters.extend(
                links
                    .iter()
                    .filter(|l| !l.echoes.contains(var))
                    .map(|l| format!("{topic_root}/{}/{var}", l.name)),
            );
        }
    }
    filters
        .into_iter()
        .map(|f| SubscribeFilter::new(f, QoS::AtLeastOnce))
        .collect()
}

/// Check the names of a fleet before anything connects: each is a valid
/// topic level, none is used twice, none is the fleet's own name.
pub fn check_names(vehicles: &[VehicleConfig], fleet_name: &str) -> Result<(), BridgeError> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut problems = Vec::new();
    Topics::new("x", fleet_name).map_err(|e| BridgeError::BadOption(format!("fleet name: {e}")))?;
    for (i, v) in vehicles.iter().enumerate() {
        if let Err(e) = Topics::new("x", &v.name) {
            problems.push(format!("vehicle {}: {e}", i + 1));
        }
        if v.name == fleet_name {
            problems.push(format!(
                "vehicle {}: name {:?} is the fleet's name (its status and ENCOUNTER topics); \
                 give the fleet another with --fleet-name",
                i + 1,
                v.name
            ));
        }
        if let Some(first) = seen.insert(&v.name, i) {
            problems.push(format!(
                "vehicles {} and {} are both named {:?}: names must be unique on a broker \
                 (their topics and statuses would mix)",
                first + 1,
                i + 1,
                v.name
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(BridgeError::BadOption(problems.join("\n")))
    }
}

/// The JSON payload of one `ENCOUNTER` message: the columns of
/// `encounters.csv` (docs/fleets.md) with vehicle names; `t` is the
/// mission time (s since the fleet started, as `NODE_REPORT`'s `t`).
pub fn encounter_json(e: &EncounterEvent, names: &[&str]) -> String {
    let name = |i: usize| names.get(i).copied().unwrap_or("");
    // Non-finite values cannot occur for finite positions; write null if they do.
    let num = |v: f64| {
        if v.is_finite() {
            format!("{v}")
        } else {
            "null".to_string()
        }
    };
    format!(
        "{{\"t\":{},\"event\":\"{}\",\"a\":{},\"b\":{},\"range\":{},\"cpa_time\":{},\"cpa_range\":{},\"cpa_bearing\":{}}}",
        num(e.t),
        e.kind.name(),
        serde_json::Value::from(name(e.a)),
        serde_json::Value::from(name(e.b)),
        num(e.range),
        num(e.cpa.time),
        num(e.cpa.range),
        num(e.cpa.bearing)
    )
}

/// The options a fleet cannot start with (no vehicle, a bad tick rate or
/// start time, names that clash); logs each vehicle's config warnings.
fn check_fleet(opts: &FleetRunOptions) -> Result<(), BridgeError> {
    if opts.vehicles.is_empty() {
        return Err(BridgeError::BadOption(
            "a fleet needs at least one vehicle".into(),
        ));
    }
    opts.live.check_timing("the tick rate", opts.app_tick)?;
    check_names(&opts.vehicles, &opts.fleet_name)?;
    for cfg in &opts.vehicles {
        for w in &cfg.warnings {
            warn!("{}: config: {w}", cfg.name);
        }
    }
    Ok(())
}

/// The fleet's control connection: client id, credentials, TLS, the
/// retained `offline` last will on the fleet's status topic, 1000 in flight.
fn fleet_connect_spec(opts: &FleetRunOptions, fleet_topics: &Topics) -> ConnectSpec {
    let id = client_id("fleet", &opts.live.topic_root, &opts.fleet_name);
    let mut spec = super::bridge::live_connect_spec(&opts.live, id, fleet_topics.status());
    spec.inflight = 1000;
    spec
}

/// Each vehicle of the fleet, built at `start_time_s` (s since the epoch),
/// with its topics.
fn fleet_vehicles(
    opts: &FleetRunOptions,
    start_time_s: f64,
) -> Result<(Vec<LiveVehicle>, Vec<VehicleTopics>), BridgeError> {
    let mut vehicle_topics = Vec::with_capacity(opts.vehicles.len());
    let mut links = Vec::with_capacity(opts.vehicles.len());
    for cfg in &opts.vehicles {
        let topics = Topics::new(&opts.live.topic_root, &cfg.name)?;
        links.push(live_vehicle(cfg, &topics, start_time_s));
        vehicle_topics.push(VehicleTopics::new(topics));
    }
    Ok((links, vehicle_topics))
}

/// Plain `mqtt://`: the iterations' publications go out on a second,
/// publish-only connection, one buffer per iteration (super::burst);
/// rumqttc's channel then carries only the statuses, models and encounters
/// (about 3 per vehicle). `mqtts://`: every publication through rumqttc.
/// Returns the burst publisher (if any) and the requests per vehicle to
/// size rumqttc's channel for.
fn start_burst(opts: &FleetRunOptions, spec: &ConnectSpec) -> (Option<Burst>, usize) {
    let burst = (!opts.live.broker.tls).then(|| {
        Burst::start(
            &opts.live.broker,
            format!("{}-pub", spec.client_id),
            opts.live.credentials.clone(),
        )
    });
    let per_vehicle = if burst.is_some() {
        REQUESTS_PER_VEHICLE_BURST
    } else {
        REQUESTS_PER_VEHICLE
    };
    (burst, per_vehicle)
}

impl FleetSummary {
    /// The tick and iteration-time figures of a run; the counters at 0.
    fn of(fleet: &str, vehicles: usize, stats: &RunStats, schedule: &Schedule) -> Self {
        FleetSummary {
            fleet: fleet.to_string(),
            vehicles,
            ticks: TickSummary::of(stats, schedule),
            work_p50_ms: stats.work.quantile_ms(0.5),
            work_p99_ms: stats.work.quantile_ms(0.99),
            work_max_ms: stats.work.max_ms(),
            cpu_p50_ms: stats.cpu.quantile_ms(0.5),
            cpu_p99_ms: stats.cpu.quantile_ms(0.99),
            bad_messages: 0,
            mail_dropped: 0,
            mail_coalesced: 0,
            publish_dropped: stats.publish_dropped,
            connections: 0,
            encounter_events: 0,
        }
    }

    /// Add the host's mail counters.
    fn add_mail(&mut self, mail: &crate::live::host::MailCounters) {
        self.bad_messages += mail.bad_messages;
        self.mail_dropped += mail.mail_dropped;
        self.mail_coalesced += mail.mail_coalesced;
    }
}

/// Run the fleet until SIGINT/SIGTERM (see the module doc). Must be called
/// inside a tokio runtime with time and I/O enabled.
pub async fn run_fleet(opts: FleetRunOptions) -> Result<FleetSummary, BridgeError> {
    check_fleet(&opts)?;
    let fleet_topics = Topics::new(&opts.live.topic_root, &opts.fleet_name)?;
    let names: Vec<String> = opts.vehicles.iter().map(|v| v.name.clone()).collect();

    let mut nmea = NmeaTap::open_for(opts.live.nmea.as_ref(), "the fleet")
        .await
        .map_err(BridgeError::BadOption)?;
    let spec = fleet_connect_spec(&opts, &fleet_topics);
    let mut all_names = names.clone();
    all_names.push(opts.fleet_name.clone());
    check_names_are_free(&spec, &opts.live.topic_root, &all_names).await?;
    // The clock and the schedule start together, after the name check
    // (the first deadline is late by the time the vehicles take to build).
    let start_time_s = opts.live.start_time_s.unwrap_or_else(unix_time_s);
    let origin = Instant::now();
    let (links, mut vehicle_topics) = fleet_vehicles(&opts, start_time_s)?;
    let (mut burst, per_vehicle) = start_burst(&opts, &spec);
    let capacity = (links.len() * per_vehicle).max(256);
    let (client, eventloop) = spec.client(capacity)?;
    let router = fleet_router(&opts, &fleet_topics, &links, &vehicle_topics, &client);
    let mut host = Host::new(links);
    let (shared, connection) = spawn_connection(eventloop, &client, router, &opts.live.broker);

    let mut schedule = Schedule::new(origin, start_time_s, opts.app_tick, opts.live.time_warp);
    info!(
        "fleet `{}` running {} vehicles: {} Hz, time warp {}, broker {}, topics {}/NAME/…",
        opts.fleet_name,
        names.len(),
        opts.app_tick,
        opts.live.time_warp,
        opts.live.broker,
        opts.live.topic_root
    );
    let mut encounters = opts
        .encounters
        .map(|r| Encounters::new(r, &fleet_topics, &names));
    let mut stats = RunStats::default();
    let why = tick_loop(&mut schedule, &mut stats, shutdown_signal()?, |t_s| {
        let connected = shared.connected.load(Ordering::Relaxed);
        let client = connected.then_some(&client);
        let mut failed = iterate_fleet(&mut host, &mut vehicle_topics, &mut burst, client, t_s);
        if let Some(e) = &mut encounters {
            failed += e.observe(&host, t_s - start_time_s, client);
        }
        nmea.iteration(&host, t_s);
        failed
    })
    .await;
    nmea.log_summary();

    info!(
        "{why}: stopping fleet `{}` ({} vehicles)",
        opts.fleet_name,
        names.len()
    );
    shared.shutting_down.store(true, Ordering::SeqCst);
    // The publish-only connection sends its DISCONNECT and closes.
    let burst_lost = burst.as_ref().map_or(0, |b| b.lost() + b.superseded());
    drop(burst);
    let mut statuses: Vec<String> = vehicle_topics.iter().map(|t| t.topics.status()).collect();
    statuses.push(fleet_topics.status());
    go_offline(&client, &shared, connection, &statuses).await;

    let mut summary = FleetSummary::of(&opts.fleet_name, names.len(), &stats, &schedule);
    summary.add_mail(&host.counters());
    summary.publish_dropped += burst_lost;
    summary.connections = shared.connections.load(Ordering::Relaxed);
    summary.encounter_events = encounters.map_or(0, |e| e.events);
    if let Some(path) = &opts.live.stats_path {
        write_stats(path, &summary)?;
    }
    Ok(summary)
}

/// The fleet's [`Router`]: statuses, models, filters, inboxes by name.
fn fleet_router(
    opts: &FleetRunOptions,
    fleet_topics: &Topics,
    links: &[LiveVehicle],
    vehicle_topics: &[VehicleTopics],
    client: &AsyncClient,
) -> FleetRouter {
    let root = &opts.live.topic_root;
    let mut statuses = vec![fleet_topics.status()];
    statuses.extend(vehicle_topics.iter().map(|t| t.topics.status()));
    let announced = Announcement {
        statuses,
        models: vehicle_topics
            .iter()
            .zip(&opts.vehicles)
            .map(|(t, c)| {
                (
                    t.topics.var(super::topics::MODEL),
                    super::topics::model_name(c.params.variant),
                )
            })
            .collect(),
        filters: fleet_filters(root, links),
        claim: format!("{root}/+/{}", crate::live::claim::CLAIM),
        scope: format!("{root}/#"),
        owner: "the fleet's",
    };
    FleetRouter {
        root_prefix: format!("{root}/"),
        announced,
        inboxes: links
            .iter()
            .map(|l| (l.name.clone(), Arc::clone(&l.inbox)))
            .collect(),
        fleet_name: opts.fleet_name.clone(),
        client: Some(client.clone()),
    }
}

/// One iteration of the whole fleet: the host steps every vehicle and
/// writes its publications into this iteration's burst buffer (burst
/// connection up), else into rumqttc's channel (no burst connection), else
/// nowhere (`client` is `None` while disconnected). Returns the
/// publications refused.
fn iterate_fleet(
    host: &mut Host,
    topics: &mut [VehicleTopics],
    burst: &mut Option<Burst>,
    client: Option<&AsyncClient>,
    t_s: f64,
) -> u64 {
    let mut buf = match burst {
        Some(b) if client.is_some() => b.take(),
        _ => None,
    };
    let out = match &mut buf {
        Some(b) => Some(Out::Burst(b)),
        None if burst.is_none() => client.map(Out::Client),
        None => None,
    };
    let mut failed = host.iterate(t_s, &mut MqttOut { out, topics });
    if let (Some(b), Some(buf)) = (burst, buf) {
        failed += b.send(buf);
    }
    failed
}

/// A fleet's live encounters: the tracker and where its events go.
struct Encounters {
    tracker: Tracker,
    topic: String,
    names: Vec<String>,
    events: u64,
}

impl Encounters {
    /// Events of pairs within `ranges`, published on the fleet's ENCOUNTER.
    fn new(ranges: EncounterRanges, fleet_topics: &Topics, names: &[String]) -> Self {
        Encounters {
            tracker: Tracker::new(ranges),
            topic: fleet_topics.var(ENCOUNTER),
            names: names.to_vec(),
            events: 0,
        }
    }

    /// Follow every pair at mission time `t_mission` (s); each event is
    /// logged and published (QoS 1) while `client` is given. Returns the
    /// events the outgoing queue refused.
    fn observe(&mut self, host: &Host, t_mission: f64, client: Option<&AsyncClient>) -> u64 {
        let vehicles = host.vehicles();
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let (topic, events) = (&self.topic, &mut self.events);
        let mut failed = 0;
        self.tracker.observe(
            t_mission,
            vehicles.iter().map(|l| {
                let g = l.vehicle.nav();
                Vector2::new(g.x, g.y)
            }),
            |i| {
                let g = vehicles[i].vehicle.nav();
                Track::from_sog_hog(g.x, g.y, g.sog, g.hog())
            },
            |e| {
                *events += 1;
                let json = encounter_json(&e, &names);
                info!("ENCOUNTER {json}");
                if let Some(c) = client {
                    if c.try_publish(topic.clone(), QoS::AtLeastOnce, false, json)
                        .is_err()
                    {
                        failed += 1;
                    }
                }
            },
        );
        failed
    }
}

/// Clean exit: every vehicle's retained `offline`, the fleet's (last in
/// `statuses`), then a clean disconnect (queued after them, so sent after
/// them).
async fn go_offline(
    client: &AsyncClient,
    shared: &LinkState,
    connection: tokio::task::JoinHandle<()>,
    statuses: &[String],
) {
    if !shared.connected.load(Ordering::SeqCst) {
        connection.abort();
        warn!("not connected to the broker: could not publish the statuses offline");
        return;
    }
    let before = shared.acked.load(Ordering::SeqCst);
    let failed = statuses
        .iter()
        .filter(|t| {
            client
                .try_publish(t.to_string(), QoS::AtLeastOnce, true, OFFLINE)
                .is_err()
        })
        .count() as u64;
    if failed > 0 {
        warn!("{failed} offline statuses could not be queued (outgoing queue full)");
    }
    // A DISCONNECT right behind many QoS 1 publications made mosquitto
    // drop the connection before it had taken them all: wait for the
    // broker's acknowledgements first.
    let queued = statuses.len() as u64 - failed;
    if !shared
        .wait_acks(before, queued, Duration::from_secs(5))
        .await
    {
        warn!("the broker did not acknowledge every offline status within 5 s");
    }
    let _ = client.try_disconnect();
    match tokio::time::timeout(Duration::from_secs(5), connection).await {
        Ok(_) => info!("published every status offline and disconnected"),
        Err(_) => warn!("broker did not take the disconnect within 5 s"),
    }
}

/// `--spawn N --config C`: N copies of `base` named `{name}-0001`,
/// `{name}-0002`, … (at least 4 digits), their start positions on a square
/// grid of `spacing` m (⌈√N⌉ columns, east then north) from the config's
/// start position, so that no two start on one point. Heading, speed and
/// depth are the config's.
pub fn spawn(base: &VehicleConfig, n: usize, spacing: f64) -> Vec<VehicleConfig> {
    let cols = (n as f64).sqrt().ceil().max(1.0) as usize;
    let width = n.to_string().len().max(4);
    (0..n)
        .map(|i| {
            let mut v = base.clone();
            v.name = format!("{}-{:0width$}", base.name, i + 1);
            v.params.start.x += (i % cols) as f64 * spacing;
            v.params.start.y += (i / cols) as f64 * spacing;
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encounter::{Cpa, EventKind};

    fn test_vehicle(c: &VehicleConfig, root: &str) -> LiveVehicle {
        live_vehicle(c, &Topics::new(root, &c.name).unwrap(), 0.0)
    }

    #[test]
    fn spawn_names_and_spreads() {
        let mut base = VehicleConfig {
            name: "k".into(),
            ..VehicleConfig::default()
        };
        base.params.start.x = 100.0;
        let v = spawn(&base, 5, 50.0);
        let names: Vec<_> = v.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["k-0001", "k-0002", "k-0003", "k-0004", "k-0005"]);
        // 3 columns: (100,0) (150,0) (200,0) (100,50) (150,50)
        let xy: Vec<_> = v
            .iter()
            .map(|c| (c.params.start.x, c.params.start.y))
            .collect();
        assert_eq!(
            xy,
            [
                (100.0, 0.0),
                (150.0, 0.0),
                (200.0, 0.0),
                (100.0, 50.0),
                (150.0, 50.0)
            ]
        );
        assert_eq!(spawn(&base, 12345, 1.0)[0].name, "k-00001");
        assert!(check_names(&v, DEFAULT_FLEET_NAME).is_ok());
    }

    #[test]
    fn duplicate_and_fleet_names_are_refused() {
        let a = VehicleConfig {
            name: "a".into(),
            ..VehicleConfig::default()
        };
        let e = check_names(&[a.clone(), a.clone()], "fleet").unwrap_err();
        assert!(
            e.to_string()
                .contains("vehicles 1 and 2 are both named \"a\""),
            "{e}"
        );
        let e = check_names(&[a], "a").unwrap_err();
        assert!(e.to_string().contains("fleet's name"), "{e}");
    }

    #[test]
    fn messages_are_routed_by_the_name_in_their_topic() {
        let a = VehicleConfig {
            name: "a".into(),
            ..VehicleConfig::default()
        };
        let mut b = a.clone();
        b.name = "b".into();
        let links: Vec<LiveVehicle> = [&a, &b].iter().map(|c| test_vehicle(c, "usim")).collect();
        let router = FleetRouter {
            root_prefix: "usim/".into(),
            announced: Announcement {
                statuses: vec!["usim/fleet/status".into()],
                models: vec![],
                filters: fleet_filters("usim", &links),
                claim: "usim/+/claim".into(),
                scope: "usim/#".into(),
                owner: "the fleet's",
            },
            inboxes: links
                .iter()
                .map(|l| (l.name.clone(), Arc::clone(&l.inbox)))
                .collect(),
            fleet_name: "fleet".into(),
            client: None,
        };
        let mut drops = DropLog::new();
        let publish = |topic: &str, payload: &str| {
            Publish::new(topic, QoS::AtLeastOnce, payload.as_bytes().to_vec())
        };
        router.on_publish(&publish("usim/a/DESIRED_THRUST", "50"), &mut drops);
        router.on_publish(&publish("usim/b/DESIRED_THRUST", "x"), &mut drops);
        router.on_publish(&publish("usim/b/x/DESIRED_THRUST", "1"), &mut drops);
        router.on_publish(&publish("usim/c/DESIRED_THRUST", "1"), &mut drops);
        router.on_publish(&publish("other/a/DESIRED_THRUST", "1"), &mut drops);
        router.on_publish(&publish("usim/a", "1"), &mut drops);
        assert_eq!(links[0].inbox.pending(), 1);
        assert_eq!(links[0].inbox.bad_messages(), 0);
        assert_eq!(links[1].inbox.pending(), 0);
        // "x" does not parse, and a/b/x/... is not a topic of b's.
        assert_eq!(links[1].inbox.bad_messages(), 2);
        // Default prefix USM: no echoes, one wildcard per variable.
        assert_eq!(router.announced.filters.len(), SUBSCRIPTIONS.len());
        assert!(router
            .announced
            .filters
            .iter()
            .any(|f| f.path == "usim/+/DESIRED_THRUST"));
    }

    #[test]
    fn a_variable_the_vehicle_publishes_is_not_subscribed() {
        let mut nav = VehicleConfig {
            name: "n".into(),
            ..VehicleConfig::default()
        };
        nav.params.prefix = "NAV".into();
        let mut usm = nav.clone();
        usm.name = "u".into();
        usm.params.prefix = "USM".into();
        let links: Vec<LiveVehicle> = [&nav, &usm].iter().map(|c| test_vehicle(c, "r")).collect();
        assert_eq!(links[0].echoes, ["NAV_X", "NAV_Y", "NAV_HEADING"]);
        assert!(links[1].echoes.is_empty());
        let f: Vec<String> = fleet_filters("r", &links)
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert!(f.contains(&"r/u/NAV_X".to_string()), "{f:?}");
        assert!(!f.iter().any(|p| p == "r/n/NAV_X" || p == "r/+/NAV_X"));
        assert!(f.contains(&"r/+/DESIRED_THRUST".to_string()));
    }

    #[test]
    fn publish_report_keeps_one_wildcard_per_variable() {
        // prefix NAV with publish = "report": NAV_X and the rest are not
        // published on MQTT, so they are not echoes and need no
        // per-vehicle filters (10,000 vehicles: 3 instead of 30,000).
        let mut nav = VehicleConfig {
            name: "n".into(),
            ..VehicleConfig::default()
        };
        nav.params.prefix = "NAV".into();
        nav.mqtt.publish = crate::config::PublishMode::Report;
        let links: Vec<LiveVehicle> = (0..3)
            .map(|i| {
                let mut c = nav.clone();
                c.name = format!("n{i}");
                test_vehicle(&c, "r")
            })
            .collect();
        assert!(links[0].echoes.is_empty());
        let f: Vec<String> = fleet_filters("r", &links)
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(f.len(), SUBSCRIPTIONS.len(), "{f:?}");
        assert!(f.contains(&"r/+/NAV_X".to_string()), "{f:?}");
    }

    #[test]
    fn encounter_payload_is_json_with_csv_columns() {
        let e = EncounterEvent {
            t: 12.5,
            a: 0,
            b: 1,
            kind: EventKind::NearMiss,
            range: 40.0,
            cpa: Cpa {
                time: 3.0,
                range: 2.0,
                bearing: 90.0,
            },
        };
        let j = encounter_json(&e, &["al\"pha", "beta"]);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["a"], "al\"pha");
        assert_eq!(v["event"], "near_miss");
        assert_eq!(v["cpa_time"], 3.0);
        assert_eq!(v["cpa_bearing"], 90.0);
        assert_eq!(v["t"], 12.5);
    }
}
