//! `usim record` on MQTT: subscribe to live vehicles' `NODE_REPORT` (one
//! JSON object per iteration: the CSV columns) and to every command posted
//! to them, and hand each message to a [`Recorder`] (the file formats and
//! limits, crate::recording). Stops on SIGINT/SIGTERM or after a duration;
//! flushes every [`FLUSH_EVERY`].
use std::path::PathBuf;
use std::time::Duration;

use rumqttc::{Event, Outgoing, Packet, QoS};

use super::bridge::{run_for, shutdown_signal};
use super::endpoint::connection_failure;
use super::tools::ToolConnection;
use super::topics::{vehicle_filters, vehicle_var, NODE_REPORT};
use super::BridgeError;
pub use crate::recording::{
    recorded_commands, RecordFormat, RecordSummary, Recorder, VehicleCount, FLUSH_EVERY,
    MAX_RECORDED_PAYLOAD, MAX_VEHICLES, NOT_RECORDED,
};

/// Largest MQTT packet the recorder reads (MQTT's own maximum, 256 MiB), so
/// that a larger message, even a retained one the broker sends again on
/// every subscription, is read, counted and skipped instead of breaking
/// the connection in a reconnect loop.
pub const MAX_MQTT_PACKET: usize = 268_435_455 + 5;

/// What `usim record` records.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Broker and topic root.
    pub conn: ToolConnection,
    /// Vehicles to record; `None`: every vehicle under the topic root.
    pub vehicles: Option<Vec<String>>,
    /// Output file.
    pub output: PathBuf,
    /// Its format.
    pub format: RecordFormat,
    /// Stop after this long (else on SIGINT/SIGTERM only).
    pub duration: Option<Duration>,
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Record until a signal or the duration; `ready` is called once the
/// subscriptions are acknowledged (messages from then on are recorded).
pub async fn record(o: &RecordOptions, ready: impl FnOnce()) -> Result<RecordSummary, BridgeError> {
    let root = o.conn.topic_root.clone();
    let mut vars = vec![(NODE_REPORT, QoS::AtMostOnce)];
    vars.extend(recorded_commands().map(|c| (c, QoS::AtLeastOnce)));
    let filters = vehicle_filters(&root, o.vehicles.as_deref(), &vars)?;
    let vehicle_column = o.vehicles.as_ref().is_none_or(|v| v.len() > 1);
    let mut rec = Recorder::create(&o.output, o.format, vehicle_column, unix_now())?;
    let mut spec = o.conn.spec("record");
    spec.max_incoming_packet = MAX_MQTT_PACKET;
    let (client, mut eventloop) = spec.client(64)?;
    let mut flush = tokio::time::interval(FLUSH_EVERY);
    flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let shutdown = shutdown_signal()?;
    tokio::pin!(shutdown);
    let deadline = run_for(o.duration);
    tokio::pin!(deadline);
    let prefix = format!("{root}/");
    let mut interrupted = false;
    let mut connected_once = false;
    let mut ready = Some(ready);
    let io = BridgeError::Io;
    loop {
        tokio::select! {
            biased;
            _ = &mut shutdown => { interrupted = true; break; }
            _ = &mut deadline => break,
            _ = flush.tick() => rec.flush().map_err(io)?,
            ev = eventloop.poll() => match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    connected_once = true;
                    client
                        .try_subscribe_many(filters.clone())
                        .map_err(|e| o.conn.connect_error(e))?;
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    if let Some(f) = ready.take() {
                        f();
                    }
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let Some(names) = vehicle_var(&prefix, &p.topic) else {
                        continue;
                    };
                    rec.message(&p.topic, names, &p.payload, p.retain, unix_now())
                        .map_err(io)?;
                }
                Ok(Event::Outgoing(Outgoing::Disconnect)) => break,
                Ok(_) => {}
                Err(e) if !connected_once => return Err(connection_failure(&o.conn.url, &e)),
                Err(e) => {
                    tracing::warn!("connection lost: {e}; reconnecting");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
    super::bridge::disconnect_cleanly(&client, &mut eventloop).await;
    let mut summary = rec.finish().map_err(io)?;
    summary.interrupted = interrupted;
    Ok(summary)
}
