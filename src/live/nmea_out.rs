//! NMEA 0183 and AIS out of a live run: the sans-IO
//! [`crate::nmea::Engine`] and the sockets it writes to (UDP destinations,
//! a TCP server), written once for `usim nmea` (vehicle states from MQTT,
//! `crate::mqtt::nmea_bridge`) and for `usim run`/`usim fleet`
//! `--nmea-udp`/`--nmea-tcp` ([`NmeaTap`]: the host's vehicles after each
//! iteration, in process; docs/nmea.md).
//!
//! Bounded everywhere: at most [`MAX_VEHICLES`] vehicles,
//! [`MAX_CLIENTS`] TCP clients and [`MAX_PER_ADDRESS`] from one address
//! (a new connection always gets in: [`crate::nmea::slots`] picks who
//! makes room), each with a queue of [`CLIENT_QUEUE`] batches (a client
//! that falls that far behind is dropped, not buffered for), and a token
//! bucket on the sentences per second. A new TCP client gets every
//! vehicle's AIS static data at once.
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};

use super::host::Host;
use crate::nmea::recent::Recent;
use crate::nmea::slots::{SlotId, Slots};
pub use crate::nmea::slots::{MAX_CLIENTS, MAX_PER_ADDRESS};
use crate::nmea::{Engine, Identity, Options, ShipState};
use crate::text::escape_control;

/// Most vehicles one output serves at once (a new name beyond makes it
/// forget the vehicle heard least recently).
pub const MAX_VEHICLES: usize = crate::nmea::MAX_TRACKS;
/// First repeat of a vehicle's AIS static data, s (then 2×, 4×, … up to
/// the static interval): a listener started after the output learns the
/// names soon.
pub const STATIC_WARMUP_S: f64 = 30.0;
/// Most sentences per second by default (more are dropped and counted).
pub const DEFAULT_MAX_RATE: f64 = 10_000.0;
/// Batches (one per report) queued for one TCP client before it is dropped.
pub const CLIENT_QUEUE: usize = 1024;

/// What an NMEA output sends, and where.
#[derive(Debug, Clone)]
pub struct NmeaOutOptions {
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
    /// TCP server address (port 0: any free port).
    pub tcp: Option<SocketAddr>,
    /// Most sentences per second sent (beyond: dropped and counted).
    pub max_rate: f64,
    /// How the flags are spelt in errors: `""` (`usim nmea --udp`) or
    /// `"nmea-"` (`usim run --nmea-udp`).
    pub flag_prefix: &'static str,
}

/// Counters of an NMEA output (`usim nmea`, or `--nmea-udp` of a live run).
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
    /// AIS input messages published (`usim nmea --ais-in`).
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

/// One UDP destination: a connected socket.
pub struct Udp {
    sock: UdpSocket,
    dest: SocketAddr,
    failing: bool,
}

/// One TCP client: its slot, its queue, and the handle whose drop closes it.
struct Client {
    slot: SlotId,
    tx: mpsc::Sender<Bytes>,
    _close: oneshot::Sender<()>,
}

/// The sending half: the engine and every destination (UDP, TCP clients).
pub struct NmeaOut {
    engine: Engine,
    slots: Slots,
    bucket: Bucket,
    udp: Vec<Udp>,
    clients: Vec<Client>,
    /// Vehicles whose refusal was logged.
    refused: Recent<String, ()>,
    /// What was sent and dropped so far.
    pub summary: NmeaSummary,
    last_drop_log: Instant,
    unlogged_drops: u64,
    buf: Vec<u8>,
}

impl NmeaOut {
    /// The sending half of `o`, over the UDP destinations `udp`.
    pub fn new(o: &NmeaOutOptions, udp: Vec<Udp>) -> NmeaOut {
        let mut engine = Engine::new(o.engine.clone(), o.own.clone());
        for id in &o.identities {
            engine.set_identity(id.clone());
        }
        NmeaOut {
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
    pub fn accept(&mut self, stream: tokio::net::TcpStream, peer: SocketAddr) {
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
    pub fn forget(&mut self, vehicle: &str) {
        self.engine.remove(vehicle);
        self.summary.forgotten += 1;
        if self.summary.forgotten.is_power_of_two() {
            warn!(
                "{MAX_VEHICLES} vehicles served: forgot {}, heard least recently ({} forgotten so far)",
                escape_control(vehicle),
                self.summary.forgotten
            );
        }
    }

    /// One state of `vehicle` (its clock set) through the engine to UDP and TCP.
    pub fn emit(&mut self, vehicle: &str, s: &ShipState) {
        let engine = &mut self.engine;
        let new = !engine.is_tracked(vehicle);
        self.buf.clear();
        let summary = &mut self.summary;
        let r = engine.update(vehicle, s, &mut self.buf);
        if new && r.is_ok() {
            if let Some(other) = engine.mmsi_clash(vehicle) {
                warn!(
                    "{} and {} have the same MMSI {}: give one an `mmsi` in its config",
                    escape_control(vehicle),
                    escape_control(other),
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
                    warn!("{}: no NMEA/AIS: {e}", escape_control(vehicle));
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

/// One connected UDP socket per destination of `o` (broadcast only when
/// allowed); an error names the flag and the address.
pub async fn open_udp(o: &NmeaOutOptions) -> Result<Vec<Udp>, String> {
    let p = o.flag_prefix;
    let mut udp = Vec::new();
    for dest in &o.udp {
        let bind = if dest.is_ipv4() {
            SocketAddr::from(([0, 0, 0, 0], 0))
        } else {
            SocketAddr::from(([0u16; 8], 0))
        };
        let sock = UdpSocket::bind(bind)
            .await
            .map_err(|e| format!("--{p}udp {dest}: cannot open a socket: {e}"))?;
        sock.set_broadcast(o.broadcast)
            .map_err(|e| format!("--{p}udp {dest}: {e}"))?;
        if let Err(e) = sock.connect(dest).await {
            let hint = if o.broadcast {
                String::new()
            } else {
                format!(" (a broadcast address needs --{p}broadcast)")
            };
            return Err(format!("--{p}udp {dest}: {e}{hint}"));
        }
        udp.push(Udp {
            sock,
            dest: *dest,
            failing: false,
        });
    }
    Ok(udp)
}

/// The TCP listener of `o`, when asked for; an error names the flag.
pub async fn listen_tcp(o: &NmeaOutOptions) -> Result<Option<TcpListener>, String> {
    match o.tcp {
        Some(a) => TcpListener::bind(a)
            .await
            .map(Some)
            .map_err(|e| format!("--{}tcp {a}: cannot listen: {e}", o.flag_prefix)),
        None => Ok(None),
    }
}

/// NMEA/AIS of a live host's vehicles, in process (`usim run --nmea-udp`,
/// `usim fleet --nmea-tcp`), or nothing when not asked for: a runtime
/// calls [`NmeaTap::iteration`] after each iteration either way.
pub struct NmeaTap(Option<Tap>);

impl NmeaTap {
    /// Open the tap of a live run when `o` asks for one, and log where it
    /// sends (`NMEA/AIS of WHAT to udp://… and tcp://…`, the TCP port
    /// found when asked for port 0); an error names the flag and address.
    pub async fn open_for(o: Option<&NmeaOutOptions>, what: &str) -> Result<NmeaTap, String> {
        let Some(o) = o else {
            return Ok(NmeaTap(None));
        };
        let tap = Tap::open(o).await?;
        let mut to: Vec<String> = o.udp.iter().map(|a| format!("udp://{a}")).collect();
        to.extend(tap.tcp_addr().map(|t| format!("tcp://{t}")));
        info!("NMEA/AIS of {what} to {}", to.join(" and "));
        Ok(NmeaTap(Some(tap)))
    }

    /// After an iteration at vehicle clock `t_s` (Unix s): [`Tap::iteration`].
    pub fn iteration(&mut self, host: &Host, t_s: f64) {
        if let Some(t) = &mut self.0 {
            t.iteration(host, t_s);
        }
    }

    /// The open tap, if any.
    pub fn tap(&self) -> Option<&Tap> {
        self.0.as_ref()
    }

    /// Log the counters at the end of a run (nothing without a tap).
    pub fn log_summary(&self) {
        if let Some(t) = &self.0 {
            let s = t.summary();
            info!(
                "NMEA/AIS: {} reports, {} lines sent, {} dropped by the rate limit, {} UDP \
                 errors, {} slow TCP clients dropped, {} vehicles refused",
                s.reports, s.lines, s.rate_dropped, s.udp_errors, s.slow_clients, s.refused
            );
        }
    }
}

/// One open tap (see [`NmeaTap`]): after each iteration every vehicle's state
/// (its snapshot at the vehicle clock) goes through the engine, which
/// sends what is due (own ship at most `own_interval_s`, AIS at the
/// class A intervals). No MQTT on the way: the sentences carry the state
/// the iteration computed, whatever the broker does.
pub struct Tap {
    out: NmeaOut,
    accepted: mpsc::Receiver<(TcpStream, SocketAddr)>,
    tcp_addr: Option<SocketAddr>,
    acceptor: Option<tokio::task::JoinHandle<()>>,
}

impl Tap {
    /// Open the sockets of `o` (inside a tokio runtime); an error names
    /// the flag and the address.
    pub async fn open(o: &NmeaOutOptions) -> Result<Tap, String> {
        let udp = open_udp(o).await?;
        let listener = listen_tcp(o).await?;
        let tcp_addr = listener.as_ref().and_then(|l| l.local_addr().ok());
        let (tx, accepted) = mpsc::channel(MAX_CLIENTS);
        let acceptor = listener.map(|l| tokio::spawn(accept_loop(l, tx)));
        Ok(Tap {
            out: NmeaOut::new(o, udp),
            accepted,
            tcp_addr,
            acceptor,
        })
    }

    /// The TCP server's address (its port when asked for port 0).
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp_addr
    }

    /// After an iteration at vehicle clock `t_s` (Unix s): new TCP clients
    /// admitted, then every vehicle's state through the engine.
    pub fn iteration(&mut self, host: &Host, t_s: f64) {
        while let Ok((stream, peer)) = self.accepted.try_recv() {
            self.out.accept(stream, peer);
        }
        for v in host.vehicles() {
            let s = ShipState::from_snapshot(&v.vehicle.snapshot(), t_s);
            self.out.emit(&v.name, &s);
        }
    }

    /// What was sent and dropped so far.
    pub fn summary(&self) -> &NmeaSummary {
        &self.out.summary
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        if let Some(a) = self.acceptor.take() {
            a.abort();
        }
    }
}

/// Hand each accepted TCP connection to the tap (taken at its next
/// iteration); an accept error (out of file descriptors) is logged and
/// retried after a pause.
async fn accept_loop(l: TcpListener, tx: mpsc::Sender<(TcpStream, SocketAddr)>) {
    loop {
        match l.accept().await {
            Ok(c) => {
                if tx.send(c).await.is_err() {
                    return;
                }
            }
            Err(e) => {
                warn!("TCP accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
