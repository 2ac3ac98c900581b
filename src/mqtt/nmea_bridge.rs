//! `usim nmea`: live vehicles' `NODE_REPORT`s (MQTT) → NMEA 0183 and AIS
//! over UDP and a TCP server (docs/nmea.md). The sentences and sockets are
//! [`crate::live::nmea_out`]'s (shared with `usim run --nmea-udp`); this is
//! the MQTT side: subscriptions, each report held for its `USM_TIME`, and
//! AIS input (`--ais-in`, bounded by [`crate::nmea::input`]) published per
//! MMSI.
use std::net::SocketAddr;
use std::time::Duration;

use rumqttc::{Event, Outgoing, Packet, QoS};
use tokio::net::{TcpListener, UdpSocket};
use tracing::warn;

use super::bridge::{run_for, shutdown_signal};
use super::endpoint::connection_failure;
use super::tools::ToolConnection;
use super::topics::{vehicle_filters, vehicle_var, NODE_REPORT, USM_TIME};
use super::BridgeError;
use crate::live::nmea_out::{listen_tcp, open_udp, NmeaOut, NmeaOutOptions};
pub use crate::live::nmea_out::{
    NmeaSummary, CLIENT_QUEUE, MAX_CLIENTS, MAX_PER_ADDRESS, MAX_VEHICLES,
};
use crate::nmea::input::AisInput;
use crate::nmea::recent::Recent;
use crate::nmea::{parse_node_report, ShipState};

/// What `usim nmea` does.
#[derive(Debug, Clone)]
pub struct NmeaOptions {
    /// Broker and topic root.
    pub conn: ToolConnection,
    /// Vehicles served; `None`: every vehicle under the topic root.
    pub vehicles: Option<Vec<String>>,
    /// The sentences and where they go.
    pub out: NmeaOutOptions,
    /// AIS input: UDP address to listen on.
    pub ais_in: Option<SocketAddr>,
    /// Stop after this long (else on SIGINT/SIGTERM).
    pub duration: Option<Duration>,
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
    let udp = open_udp(&o.out).await.map_err(BridgeError::BadOption)?;
    let (listener, ais_sock) = listen(o).await?;
    let mut out = NmeaOut::new(&o.out, udp);
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

/// The `--tcp` listener and the `--ais-in` socket, when asked for.
async fn listen(o: &NmeaOptions) -> Result<(Option<TcpListener>, Option<UdpSocket>), BridgeError> {
    let listener = listen_tcp(&o.out).await.map_err(BridgeError::BadOption)?;
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
    fn usm_time(&mut self, vehicle: &str, payload: &[u8], out: &mut NmeaOut) {
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
    fn report(&mut self, vehicle: &str, topic: &str, payload: &[u8], out: &mut NmeaOut) {
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
                crate::live::clock::unix_time_s()
            };
            out.emit(vehicle, &old);
        }
    }
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
