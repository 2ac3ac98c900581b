//! `usim nmea`: live vehicles' `NODE_REPORT`s (MQTT) → NMEA 0183 and AIS
//! over UDP and a TCP server (docs/nmea.md). The sentences come from the
//! sans-IO [`crate::nmea::Engine`]; this is the thin shell around it.
//!
//! Bounded everywhere: at most [`MAX_VEHICLES`] vehicles (a new one makes
//! it forget the one heard least recently), [`MAX_CLIENTS`] TCP clients and
//! [`MAX_PER_ADDRESS`] from one address (a new connection always gets in:
//! [`crate::nmea::slots`] picks who makes room), each with a queue of
//! [`CLIENT_QUEUE`] batches (a client that falls that far behind is dropped,
//! not buffered for), a token bucket on the sentences per second, and AIS
//! input bounded by [`crate::nmea::input`]. A new TCP client gets every
//! vehicle's AIS static data at once.
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rumqttc::{Event, Outgoing, Packet, QoS};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, UdpSocket};
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};

use super::bridge::{run_for, shutdown_signal};
use super::endpoint::connection_failure;
use super::tools::ToolConnection;
use super::topics::{vehicle_filters, vehicle_var, NODE_REPORT, USM_TIME};
use super::BridgeError;
use crate::nmea::input::AisInput;
use crate::nmea::recent::Recent;
use crate::nmea::slots::{SlotId, Slots};
pub use crate::nmea::slots::{MAX_CLIENTS, MAX_PER_ADDRESS};
use crate::nmea::{parse_node_report, Engine, Identity, Options, ShipState};

/// Most vehicles one bridge serves at once (a new name beyond makes it
/// forget the vehicle heard least recently).
pub const MAX_VEHICLES: usize = crate::nmea::MAX_TRACKS;
/// Batches (one per report) queued for one TCP client before it is dropped.
pub const CLIENT_QUEUE: usize = 1024;

/// What `usim nmea` does.
#[derive(Debug, Clone)]
pub struct NmeaOptions {
    /// Broker and topic root.
    pub conn: ToolConnection,
    /// Vehicles served; `None`: every vehicle under the topic root.
    pub vehicles: Option<Vec<String>>,
    /// The own ship (NMEA sentences, `!AIVDO`); the others are AIS targets.
    pub own: Option<String>,
    /// Identities from vehicle configs (MMSI, length, beam, ship type).
    pub identities: Vec<Identity>,
    /// Sentences and pacing.
    pub engine: Options,
    /// UDP destinations.
    pub udp: Vec<SocketAddr>,
    /// Allow sending to broadcast addresses.
    pub broadcast: bool,
    /// TCP server address (port 0: any free port, printed).
    pub tcp: Option<SocketAddr>,
    /// AIS input: UDP address to listen on.
    pub ais_in: Option<SocketAddr>,
    /// Most sentences per second sent (beyond: dropped and counted).
    pub max_rate: f64,
    /// Stop after this long (else on SIGINT/SIGTERM).
    pub duration: Option<Duration>,
}

/// Counters of a bridge run.
#[derive(Debug, Clone, Default)]
pub struct NmeaSummary {
    /// Reports turned into sentences (or found nothing due).
    pub reports: u64,
    /// Lines sent (each to every destination).
    pub lines: u64,
    /// Lines dropped by the rate limit.
    pub rate_dropped: u64,
    /// UDP sends that failed.
    pub udp_errors: u64,
    /// TCP clients dropped as too slow.
    pub slow_clients: u64,
    /// TCP clients closed to make room for a new one.
    pub displaced_clients: u64,
    /// Vehicles refused (no origin).
    pub refused: u64,
    /// Vehicles forgotten to make room for new ones ([`MAX_VEHICLES`]).
    pub forgotten: u64,
    /// AIS input messages published.
    pub ais_published: u64,
    /// AIS input lines refused.
    pub ais_bad: u64,
    /// AIS target updates never published: queued while the MQTT client's
    /// queue was full and forgotten before it had room (a flood).
    pub ais_unpublished: u64,
    /// AIS input targets forgotten to make room ([`crate::nmea::input::MAX_TARGETS`]).
    pub ais_forgotten: u64,
    /// Stopped by a signal.
    pub interrupted: bool,
}

/// Tokens for `rate` sentences per second, a second's worth of burst.
struct Bucket {
    rate: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn take(&mut self, n: usize) -> bool {
        let now = Instant::now();
        self.tokens = (self.tokens + now.duration_since(self.at).as_secs_f64() * self.rate)
            .min(self.rate.max(1.0));
        self.at = now;
        if self.tokens >= n as f64 {
            self.tokens -= n as f64;
            true
        } else {
            false
        }
    }
}

struct Udp {
    sock: UdpSocket,
    dest: SocketAddr,
    failing: bool,
}

/// Run the bridge until a signal or the duration; `ready(tcp)` is called once
/// the subscriptions are acknowledged, with the TCP server's address.
pub async fn run(
    o: &NmeaOptions,
    ready: impl FnOnce(Option<SocketAddr>),
) -> Result<NmeaSummary, BridgeError> {
    let root = o.conn.topic_root.clone();
    let vars = [(NODE_REPORT, QoS::AtMostOnce), (USM_TIME, QoS::AtMostOnce)];
    let filters = vehicle_filters(&root, o.vehicles.as_deref(), &vars)?;
    let udp = open_udp(o).await?;
    let (listener, ais_sock) = listen(o).await?;
    let mut out = Out::new(o, udp);
    let mut ais = AisIn::new();
    let mut clock = ReportClock::new();
    let (client, mut eventloop) = o.conn.spec("nmea").client(64)?;
    let shutdown = shutdown_signal()?;
    tokio::pin!(shutdown);
    let deadline = run_for(o.duration);
    tokio::pin!(deadline);
    let prefix = format!("{root}/");
    let mut connected_once = false;
    let mut ready = Some(ready);
    let mut dgram = vec![0u8; 65_536];
    loop {
        ais.drain_backlog(&client, &root, &mut out.summary);
        let accept = async {
            match &listener {
                Some(l) => l.accept().await,
                None => std::future::pending().await,
            }
        };
        let ais_recv = async {
            match &ais_sock {
                Some(s) => s.recv(&mut dgram).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = &mut shutdown => { out.summary.interrupted = true; break; }
            _ = &mut deadline => break,
            acc = accept => match acc {
                Ok((stream, peer)) => out.accept(stream, peer),
                Err(e) => warn!("TCP accept failed: {e}"),
            },
            n = ais_recv => match n {
                Ok(n) => ais.datagram(&dgram[..n], &client, &root, &mut out.summary),
                Err(e) => warn!("AIS input: {e}"),
            },
            ev = eventloop.poll() => match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    connected_once = true;
                    client
                        .try_subscribe_many(filters.clone())
                        .map_err(|e| o.conn.connect_error(e))?;
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    if let Some(f) = ready.take() {
                        f(listener.as_ref().and_then(|l| l.local_addr().ok()));
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    match vehicle_var(&prefix, &p.topic) {
                        Some((vehicle, USM_TIME)) => clock.usm_time(vehicle, &p.payload, &mut out),
                        Some((vehicle, NODE_REPORT)) => clock.report(vehicle, &p.topic, &p.payload, &mut out),
                        _ => {}
                    }
                }
                Ok(Event::Outgoing(Outgoing::Disconnect)) => break,
                Ok(_) => {}
                Err(e) if !connected_once => return Err(connection_failure(&o.conn.url, &e)),
                Err(e) => {
                    warn!("connection lost: {e}; reconnecting");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
    let _ = client.try_disconnect();
    out.summary.ais_forgotten = ais.input.forgotten();
    Ok(out.summary)
}

/// One connected UDP socket per `--udp` destination (broadcast with `--broadcast`).
async fn open_udp(o: &NmeaOptions) -> Result<Vec<Udp>, BridgeError> {
    let mut udp = Vec::new();
    for dest in &o.udp {
        let bind = if dest.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        let bind: SocketAddr = bind
            .parse()
            .map_err(|_| BridgeError::BadOption("bind".into()))?;
        let sock = UdpSocket::bind(bind).await?;
        sock.set_broadcast(o.broadcast)?;
        if let Err(e) = sock.connect(dest).await {
            let hint = if o.broadcast {
                ""
            } else {
                " (a broadcast address needs --broadcast)"
            };
            return Err(BridgeError::BadOption(format!("--udp {dest}: {e}{hint}")));
        }
        udp.push(Udp {
            sock,
            dest: *dest,
            failing: false,
        });
    }
    Ok(udp)
}

/// The `--tcp` listener and the `--ais-in` socket, when asked for.
async fn listen(o: &NmeaOptions) -> Result<(Option<TcpListener>, Option<UdpSocket>), BridgeError> {
    let listener = match o.tcp {
        Some(a) => Some(
            TcpListener::bind(a)
                .await
                .map_err(|e| BridgeError::BadOption(format!("--tcp {a}: cannot listen: {e}")))?,
        ),
        None => None,
    };
    let ais_sock =
        match o.ais_in {
            Some(a) => Some(UdpSocket::bind(a).await.map_err(|e| {
                BridgeError::BadOption(format!("--ais-in {a}: cannot listen: {e}"))
            })?),
            None => None,
        };
    Ok((listener, ais_sock))
}

/// AIS in (`--ais-in`): the decoder's target table and the targets updated
/// while the MQTT client's queue was full, oldest first.
struct AisIn {
    input: AisInput,
    backlog: Recent<u32, ()>,
}

impl AisIn {
    fn new() -> AisIn {
        AisIn {
            input: AisInput::new(),
            backlog: Recent::new(crate::nmea::input::MAX_TARGETS),
        }
    }

    /// Publish the queued targets while the client takes them.
    fn drain_backlog(&mut self, client: &rumqttc::AsyncClient, root: &str, sum: &mut NmeaSummary) {
        while let Some((mmsi, ())) = self.backlog.pop_oldest() {
            match self.input.target(mmsi) {
                Some(t) if !publish_target(client, root, t) => {
                    self.backlog.heard(&mmsi, || ());
                    break;
                }
                Some(_) => sum.ais_published += 1,
                None => sum.ais_unpublished += 1,
            }
        }
    }

    /// One datagram of AIVDM lines: each completed target published (queued
    /// when the client's queue is full, a burst, and sent with its latest
    /// state soon); refused lines counted, logged at powers of two.
    fn datagram(
        &mut self,
        data: &[u8],
        client: &rumqttc::AsyncClient,
        root: &str,
        sum: &mut NmeaSummary,
    ) {
        for line in data.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            match self.input.line(line) {
                Ok(Some(t)) => {
                    let mmsi = t.mmsi;
                    if self.backlog.is_empty() && publish_target(client, root, t) {
                        sum.ais_published += 1;
                    } else if self.backlog.heard(&mmsi, || ()).1.is_some() {
                        sum.ais_unpublished += 1;
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    sum.ais_bad += 1;
                    if sum.ais_bad.is_power_of_two() {
                        let shown = String::from_utf8_lossy(&line[..line.len().min(100)]);
                        warn!(
                            "AIS input: line {:?} refused: {e} ({} refused so far)",
                            super::escape_control(&shown),
                            sum.ais_bad
                        );
                    }
                }
            }
        }
    }
}

/// Per vehicle: the clock offset (USM_TIME − t, NaN until known) and the
/// report waiting for its USM_TIME. A report is held for the USM_TIME the
/// vehicle posts right after it (its exact clock); a report still held when
/// the next one comes (no USM_TIME) goes out with the estimate, or the
/// bridge's clock before any USM_TIME.
struct ReportClock {
    vehicles: Recent<String, (f64, Option<ShipState>)>,
}

impl ReportClock {
    fn new() -> ReportClock {
        ReportClock {
            vehicles: Recent::new(MAX_VEHICLES),
        }
    }

    /// A vehicle's USM_TIME: its held report goes out at that clock.
    fn usm_time(&mut self, vehicle: &str, payload: &[u8], out: &mut Out) {
        let usm = std::str::from_utf8(payload)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok());
        let Some(usm) = usm.filter(|u| u.is_finite()) else {
            return;
        };
        if let Some(c) = self.vehicles.get_mut(vehicle) {
            if let Some(mut held) = c.1.take() {
                held.clock = usm;
                c.0 = usm - held.t;
                out.emit(vehicle, &held);
            }
        }
    }

    /// A vehicle's NODE_REPORT: held; the one it replaces goes out.
    fn report(&mut self, vehicle: &str, topic: &str, payload: &[u8], out: &mut Out) {
        let mut s = match parse_node_report(payload) {
            Ok(s) => s,
            Err(e) => {
                warn!("{}: dropped: {e}", super::escape_control(topic));
                return;
            }
        };
        let (entry, gone) = self.vehicles.heard(vehicle, || (f64::NAN, None));
        if let Some((name, _)) = gone {
            out.forget(&name);
        }
        s.clock = f64::NAN;
        if let Some(mut old) = entry.1.replace(s) {
            old.clock = if entry.0.is_finite() {
                entry.0 + old.t
            } else {
                unix_now()
            };
            out.emit(vehicle, &old);
        }
    }
}

/// One TCP client: its slot, its queue, and the handle whose drop closes it.
struct Client {
    slot: SlotId,
    tx: mpsc::Sender<Bytes>,
    _close: oneshot::Sender<()>,
}

/// Publish an AIS input target on `{root}/ais/{MMSI}`; false if the MQTT
/// client's queue is full.
fn publish_target(
    client: &rumqttc::AsyncClient,
    root: &str,
    t: &crate::nmea::input::Target,
) -> bool {
    match serde_json::to_vec(t) {
        Ok(json) => client
            .try_publish(
                format!("{root}/ais/{}", t.mmsi),
                QoS::AtMostOnce,
                false,
                json,
            )
            .is_ok(),
        Err(e) => {
            warn!("AIS target not serialised: {e}");
            true
        }
    }
}

/// The sending half: the engine and every destination.
struct Out {
    engine: Engine,
    slots: Slots,
    bucket: Bucket,
    udp: Vec<Udp>,
    clients: Vec<Client>,
    /// Vehicles whose refusal was logged.
    refused: Recent<String, ()>,
    summary: NmeaSummary,
    last_drop_log: Instant,
    unlogged_drops: u64,
    buf: Vec<u8>,
}

impl Out {
    /// The sending half of `o`, over the UDP destinations `udp`.
    fn new(o: &NmeaOptions, udp: Vec<Udp>) -> Out {
        let mut engine = Engine::new(o.engine.clone(), o.own.clone());
        for id in &o.identities {
            engine.set_identity(id.clone());
        }
        Out {
            engine,
            slots: Slots::default(),
            bucket: Bucket {
                rate: o.max_rate,
                tokens: o.max_rate.max(1.0),
                at: Instant::now(),
            },
            udp,
            clients: Vec::new(),
            refused: Recent::new(MAX_VEHICLES),
            summary: NmeaSummary::default(),
            last_drop_log: Instant::now() - Duration::from_secs(10),
            unlogged_drops: 0,
            buf: Vec::with_capacity(4096),
        }
    }

    /// A TCP client connected: give it a slot (closing the client that must
    /// make room, [`Slots::admit`]), then every vehicle's static data.
    fn accept(&mut self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        let slots = &mut self.slots;
        self.clients.retain(|c| {
            let open = !c.tx.is_closed();
            if !open {
                slots.release(c.slot);
            }
            open
        });
        let (slot, evict) = self.slots.admit(peer.ip());
        if let Some(e) = evict {
            self.clients.retain(|c| c.slot != e);
            self.summary.displaced_clients += 1;
            if self.summary.displaced_clients.is_power_of_two() {
                warn!(
                    "TCP client {peer}: closed the longest-connected client of the busiest \
                     address to make room (at most {MAX_CLIENTS} clients, {MAX_PER_ADDRESS} \
                     per address; {} closed so far)",
                    self.summary.displaced_clients
                );
            }
        }
        info!("TCP client {peer} connected");
        let (tx, rx) = mpsc::channel::<Bytes>(CLIENT_QUEUE);
        let (close, closed) = oneshot::channel();
        self.buf.clear();
        if self.engine.static_reports(&mut self.buf) > 0 {
            let _ = tx.try_send(Bytes::copy_from_slice(&self.buf));
        }
        self.clients.push(Client {
            slot,
            tx,
            _close: close,
        });
        tokio::spawn(serve_client(stream, peer, rx, closed));
    }

    /// `vehicle` was forgotten to make room for a new one.
    fn forget(&mut self, vehicle: &str) {
        self.engine.remove(vehicle);
        self.summary.forgotten += 1;
        if self.summary.forgotten.is_power_of_two() {
            warn!(
                "{MAX_VEHICLES} vehicles served: forgot {}, heard least recently ({} forgotten so far)",
                super::escape_control(vehicle),
                self.summary.forgotten
            );
        }
    }

    /// One state of `vehicle` (its clock set) through the engine to UDP and TCP.
    fn emit(&mut self, vehicle: &str, s: &ShipState) {
        let engine = &mut self.engine;
        let new = !engine.is_tracked(vehicle);
        self.buf.clear();
        let summary = &mut self.summary;
        let r = engine.update(vehicle, s, &mut self.buf);
        if new && r.is_ok() {
            if let Some(other) = engine.mmsi_clash(vehicle) {
                warn!(
                    "{} and {} have the same MMSI {}: give one an `mmsi` in its config",
                    super::escape_control(vehicle),
                    super::escape_control(other),
                    engine.identity(vehicle).map_or(0, |i| i.mmsi)
                );
            }
        }
        match r {
            Ok(0) => summary.reports += 1,
            Ok(n) => {
                summary.reports += 1;
                if !self.bucket.take(n) {
                    summary.rate_dropped += n as u64;
                    self.unlogged_drops += n as u64;
                    if self.last_drop_log.elapsed() >= Duration::from_secs(5) {
                        self.last_drop_log = Instant::now();
                        warn!(
                            "{} sentences dropped by --max-rate {} /s",
                            std::mem::take(&mut self.unlogged_drops),
                            self.bucket.rate
                        );
                    }
                    return;
                }
                summary.lines += n as u64;
                send(&mut self.udp, &self.buf, summary);
                if !self.clients.is_empty() {
                    let batch = Bytes::copy_from_slice(&self.buf);
                    let slots = &mut self.slots;
                    self.clients.retain(|c| {
                        let keep = match c.tx.try_send(batch.clone()) {
                            Ok(()) => true,
                            Err(mpsc::error::TrySendError::Full(_)) => {
                                summary.slow_clients += 1;
                                warn!("a TCP client fell {CLIENT_QUEUE} reports behind: dropped");
                                false
                            }
                            Err(mpsc::error::TrySendError::Closed(_)) => false,
                        };
                        if !keep {
                            slots.release(c.slot);
                        }
                        keep
                    });
                }
            }
            Err(e) => {
                if !self.refused.contains(vehicle) {
                    self.refused.heard(vehicle, || ());
                    summary.refused += 1;
                    warn!("{}: no NMEA/AIS: {e}", super::escape_control(vehicle));
                }
            }
        }
    }
}

/// Each line of `buf` as one datagram to every destination. A refusal
/// (nothing listening: ICMP port unreachable) is logged once per
/// destination; later errors are counted in the summary.
fn send(udp: &mut [Udp], buf: &[u8], summary: &mut NmeaSummary) {
    for u in udp.iter_mut() {
        for line in buf.split_inclusive(|&b| b == b'\n') {
            if let Err(e) = u.sock.try_send(line) {
                summary.udp_errors += 1;
                if !u.failing {
                    u.failing = true;
                    warn!(
                        "UDP {}: {e} (logged once; sentences keep being sent, errors counted)",
                        u.dest
                    );
                }
            }
        }
    }
}

/// Write batches to one TCP client until it closes, the bridge drops its
/// queue, or `closed` fires (its slot was given to a newer client).
async fn serve_client(
    mut stream: tokio::net::TcpStream,
    peer: SocketAddr,
    mut rx: mpsc::Receiver<Bytes>,
    mut closed: oneshot::Receiver<()>,
) {
    let _ = stream.set_nodelay(true);
    loop {
        let b = tokio::select! {
            _ = &mut closed => {
                info!("TCP client {peer}: closed to make room for a newer client");
                return;
            }
            b = rx.recv() => match b {
                Some(b) => b,
                None => break,
            },
        };
        // A write that cannot finish in 10 s: the reader is gone or stuck.
        let write = tokio::time::timeout(Duration::from_secs(10), stream.write_all(&b));
        tokio::select! {
            _ = &mut closed => {
                info!("TCP client {peer}: closed to make room for a newer client");
                return;
            }
            w = write => match w {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    info!("TCP client {peer}: {e}; closed");
                    return;
                }
                Err(_) => {
                    warn!("TCP client {peer}: not reading; closed");
                    return;
                }
            },
        }
    }
    info!("TCP client {peer} dropped");
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
