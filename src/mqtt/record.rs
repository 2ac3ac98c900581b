//! `usim record`: subscribe to live vehicles' `NODE_REPORT` (one JSON
//! object per iteration: the CSV columns) and to every command posted to
//! them, and write the run as CSV (the replay's columns, plus `vehicle`
//! first when several vehicles may appear) or MCAP (the replay's channels,
//! docs/viewing.md). Stops on SIGINT/SIGTERM or after a duration. The
//! file is written in place at its final name and flushed every
//! [`FLUSH_EVERY`] (an MCAP chunk closed each time), so a recorder killed
//! outright (SIGKILL, power loss) leaves a file that loses at most the last
//! flush interval: a CSV whose last line may be cut (dropped by `usim
//! record --recover`), an MCAP without its summary that `usim record
//! --recover` rewrites whole ([`crate::replay::mcap::recover`]).
//!
//! Log times in the MCAP are the recorder's clock at receipt (Unix time,
//! which is the vehicle clock of a vehicle started without `--start-time`
//! and time warp 1); the vehicle's own mission time is the state's `t`.
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use rumqttc::{Event, Outgoing, Packet, QoS, SubscribeFilter};

use super::bridge::{run_for, shutdown_signal};
use super::endpoint::connection_failure;
use super::tools::ToolConnection;
use super::topics::{Topics, NODE_REPORT};
use super::BridgeError;
use crate::command::SUBSCRIPTIONS;
use crate::replay::csv::{push_f64, HEADER};
use crate::replay::mcap::{CommandValue, McapLog, Pose};

/// Most vehicles one recording takes (with `--all`, messages under further
/// names are counted and ignored, so a flood of invented names cannot grow
/// memory or the MCAP channel table without bound).
pub const MAX_VEHICLES: usize = 4096;

/// Largest payload recorded, bytes (256 KiB; a report is ~1 kB): larger
/// messages on a recorded topic are counted and skipped.
pub const MAX_RECORDED_PAYLOAD: usize = 256 * 1024;

/// Largest MQTT packet the recorder reads (MQTT's own maximum, 256 MiB), so
/// that a larger message, even a retained one the broker sends again on
/// every subscription, is read, counted and skipped instead of breaking
/// the connection in a reconnect loop.
pub const MAX_MQTT_PACKET: usize = 268_435_455 + 5;

/// How often the file is flushed to disk: what a killed recorder loses at
/// most.
pub const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// File format of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordFormat {
    /// The replay's CSV columns (commands are not in a CSV).
    Csv,
    /// The replay's MCAP channels, commands included.
    Mcap,
    /// MOOS's alog (docs/alog.md): each report as `NODE_REPORT` (its JSON)
    /// and the `NAV_*` values it carries, source `uSimMarine:VEHICLE`;
    /// each command with source `mqtt:VEHICLE`.
    Alog,
}

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

/// Messages received from one vehicle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VehicleCount {
    /// `NODE_REPORT`s written.
    pub reports: u64,
    /// Commands seen (written in MCAP).
    pub commands: u64,
    /// Reports dropped as malformed (logged with their topic).
    pub bad: u64,
}

/// How a recording ended.
#[derive(Debug, Clone, Default)]
pub struct RecordSummary {
    /// Per vehicle.
    pub vehicles: BTreeMap<String, VehicleCount>,
    /// Stopped by a signal (else by the duration).
    pub interrupted: bool,
    /// Messages ignored because [`MAX_VEHICLES`] vehicles were already recorded.
    pub ignored: u64,
    /// Messages skipped as larger than [`MAX_RECORDED_PAYLOAD`].
    pub oversize: u64,
}

enum Sink {
    Csv {
        out: BufWriter<File>,
        vehicle_column: bool,
        line: Vec<u8>,
    },
    Mcap(Box<McapLog<BufWriter<File>>>),
    Alog(crate::alog::AlogWriter<BufWriter<File>>),
}

/// The `NAV_*` variables of a report in an alog recording, with their column.
const ALOG_NAV: &[(&str, &str)] = &[
    ("NAV_X", "x"),
    ("NAV_Y", "y"),
    ("NAV_SPEED", "speed"),
    ("NAV_HEADING", "heading"),
    ("NAV_DEPTH", "depth"),
    ("NAV_LAT", "lat"),
    ("NAV_LONG", "lon"),
];

/// One report parsed: the columns of [`HEADER`] in order (NaN for null).
#[derive(Debug)]
struct Report {
    values: Vec<f64>,
}

fn parse_report(payload: &[u8]) -> Result<Report, String> {
    let v: serde_json::Value =
        serde_json::from_slice(payload).map_err(|e| format!("not JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let mut values = Vec::with_capacity(HEADER.split(',').count());
    for col in HEADER.split(',') {
        let x = match obj.get(col) {
            Some(serde_json::Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            Some(serde_json::Value::Null) => f64::NAN,
            Some(other) => return Err(format!("{col} is {other}, not a number")),
            None => return Err(format!("no {col}")),
        };
        values.push(x);
    }
    Ok(Report { values })
}

fn column(name: &str) -> usize {
    HEADER
        .split(',')
        .position(|c| c == name)
        .expect("a column of the header")
}

fn push_csv_text(b: &mut Vec<u8>, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        b.push(b'"');
        b.extend_from_slice(s.replace('"', "\"\"").as_bytes());
        b.push(b'"');
    } else {
        b.extend_from_slice(s.as_bytes());
    }
}

impl Sink {
    fn report(
        &mut self,
        vehicle: &str,
        payload: &[u8],
        r: &Report,
        clock: f64,
    ) -> std::io::Result<()> {
        match self {
            Sink::Csv {
                out,
                vehicle_column,
                line,
            } => {
                line.clear();
                if *vehicle_column {
                    push_csv_text(line, vehicle);
                    line.push(b',');
                }
                for (i, v) in r.values.iter().enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    if i == 0 && *v >= 0.0 && *v < 1.8e19 && v.fract() == 0.0 {
                        // k: an integer as received; anything else (a
                        // hostile or broken report) as the number it is,
                        // not clamped by a cast.
                        crate::replay::csv::push_u64(line, *v as u64);
                    } else {
                        push_f64(line, *v);
                    }
                }
                line.push(b'\n');
                out.write_all(line)
            }
            Sink::Mcap(log) => {
                let g = |c: &str| r.values[column(c)];
                let pose = Pose {
                    x: g("x"),
                    y: g("y"),
                    depth: g("depth"),
                    heading: g("heading"),
                    lat: g("lat"),
                    lon: g("lon"),
                };
                log.state_json(vehicle, payload, &pose, clock)
            }
            Sink::Alog(w) => {
                use crate::alog::AlogValue;
                let src = format!("uSimMarine:{vehicle}");
                let json = String::from_utf8_lossy(payload);
                w.write(
                    clock,
                    NODE_REPORT,
                    &src,
                    &AlogValue::Text(json.into_owned()),
                )?;
                for (var, col) in ALOG_NAV {
                    // a NaN (not set) is not written
                    w.write(clock, var, &src, &AlogValue::Number(r.values[column(col)]))?;
                }
                Ok(())
            }
        }
    }

    fn command(
        &mut self,
        vehicle: &str,
        var: &str,
        payload: &[u8],
        t: f64,
        clock: f64,
    ) -> std::io::Result<()> {
        if let Sink::Mcap(log) = self {
            let text = String::from_utf8_lossy(payload);
            let value = match text.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => CommandValue::Number(x),
                _ => CommandValue::Text(&text),
            };
            log.command(vehicle, var, &value, t, clock)?;
        } else if let Sink::Alog(w) = self {
            let text = String::from_utf8_lossy(payload);
            let value = match text.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => crate::alog::AlogValue::Number(x),
                _ => crate::alog::AlogValue::Text(text.into_owned()),
            };
            w.write(clock, var, &format!("mqtt:{vehicle}"), &value)?;
        }
        Ok(())
    }

    /// Push everything received so far to the file (an MCAP closes its
    /// chunk: the data up to here survives a kill).
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Csv { out, .. } => out.flush(),
            Sink::Mcap(log) => log.flush(),
            Sink::Alog(w) => w.flush(),
        }
    }

    fn finish(self) -> std::io::Result<File> {
        let bw = match self {
            Sink::Csv { out, .. } => out,
            Sink::Mcap(log) => log.finish()?,
            Sink::Alog(w) => w.finish()?,
        };
        bw.into_inner().map_err(|e| e.into_error())
    }
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Command variables `usim record` does not subscribe to: V22's NAV
/// overrides share their topics with the `NAV_X`, `NAV_Y` and `NAV_HEADING`
/// a vehicle with prefix `NAV` publishes itself every other iteration, and
/// MQTT 3.1.1 does not say who published a message, so recording them would
/// log the vehicle's own pose as commands. An override's effect is in the
/// recorded state (docs/viewing.md).
pub const NOT_RECORDED: &[&str] = &["NAV_X", "NAV_Y", "NAV_HEADING"];

/// The command variables `usim record` subscribes to.
fn recorded_commands() -> impl Iterator<Item = &'static str> {
    SUBSCRIPTIONS
        .iter()
        .map(|(name, _, _)| *name)
        .filter(|name| !NOT_RECORDED.contains(name))
}

/// Record until a signal or the duration; `ready` is called once the
/// subscriptions are acknowledged (messages from then on are recorded).
pub async fn record(o: &RecordOptions, ready: impl FnOnce()) -> Result<RecordSummary, BridgeError> {
    let root = o.conn.topic_root.clone();
    // Check the names (and the root) before opening anything.
    let filters: Vec<SubscribeFilter> = match &o.vehicles {
        Some(list) => {
            let mut f = Vec::new();
            for v in list {
                let t = Topics::new(&root, v)?;
                f.push(SubscribeFilter::new(t.var(NODE_REPORT), QoS::AtMostOnce));
                for name in recorded_commands() {
                    f.push(SubscribeFilter::new(t.var(name), QoS::AtLeastOnce));
                }
            }
            f
        }
        None => {
            Topics::new(&root, "x")?;
            let mut f = vec![SubscribeFilter::new(
                format!("{root}/+/{NODE_REPORT}"),
                QoS::AtMostOnce,
            )];
            for name in recorded_commands() {
                f.push(SubscribeFilter::new(
                    format!("{root}/+/{name}"),
                    QoS::AtLeastOnce,
                ));
            }
            f
        }
    };
    if o.output.is_dir() {
        return Err(BridgeError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is a directory", o.output.display()),
        )));
    }
    let file = File::create(&o.output).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("cannot create {}: {e}", o.output.display()),
        )
    })?;
    let file = BufWriter::with_capacity(1 << 16, file);
    let mut sink = match o.format {
        RecordFormat::Csv => {
            let vehicle_column = o.vehicles.as_ref().is_none_or(|v| v.len() > 1);
            let mut out = file;
            if vehicle_column {
                out.write_all(b"vehicle,")?;
            }
            out.write_all(HEADER.as_bytes())?;
            out.write_all(b"\n")?;
            Sink::Csv {
                out,
                vehicle_column,
                line: Vec::with_capacity(512),
            }
        }
        RecordFormat::Mcap => Sink::Mcap(Box::new(McapLog::new(file)?)),
        RecordFormat::Alog => Sink::Alog(crate::alog::AlogWriter::new(
            file,
            &o.output.display().to_string(),
            unix_now(),
        )?),
    };

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
    let mut summary = RecordSummary::default();
    let mut last_t: BTreeMap<String, f64> = BTreeMap::new();
    let mut connected_once = false;
    let mut ready = Some(ready);
    let io = BridgeError::Io;
    loop {
        tokio::select! {
            biased;
            _ = &mut shutdown => { summary.interrupted = true; break; }
            _ = &mut deadline => break,
            _ = flush.tick() => sink.flush().map_err(io)?,
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
                    let Some((vehicle, var)) = p
                        .topic
                        .strip_prefix(&prefix)
                        .and_then(|rest| rest.split_once('/'))
                        .filter(|(v, var)| !v.is_empty() && !var.contains('/'))
                    else {
                        continue;
                    };
                    if p.payload.len() > MAX_RECORDED_PAYLOAD {
                        if summary.oversize == 0 {
                            tracing::warn!(
                                "{}: a {} byte message, larger than the {MAX_RECORDED_PAYLOAD} bytes recorded: skipped (further ones are counted)",
                                crate::text::escape_control(&p.topic),
                                p.payload.len()
                            );
                        }
                        summary.oversize += 1;
                        continue;
                    }
                    if p.retain {
                        // Vehicles ignore retained commands; so do we.
                        continue;
                    }
                    let clock = unix_now();
                    if !summary.vehicles.contains_key(vehicle) && summary.vehicles.len() >= MAX_VEHICLES {
                        if summary.ignored == 0 {
                            tracing::warn!("{MAX_VEHICLES} vehicles recorded; ignoring further names ({})", p.topic);
                        }
                        summary.ignored += 1;
                        continue;
                    }
                    let count = summary.vehicles.entry(vehicle.to_string()).or_default();
                    if var == NODE_REPORT {
                        match parse_report(&p.payload) {
                            Ok(r) => {
                                sink.report(vehicle, &p.payload, &r, clock).map_err(io)?;
                                count.reports += 1;
                                last_t.insert(vehicle.to_string(), r.values[column("t")]);
                            }
                            Err(e) => {
                                count.bad += 1;
                                tracing::warn!("{}: dropped: {e}", p.topic);
                            }
                        }
                    } else {
                        let t = last_t.get(vehicle).copied().unwrap_or(f64::NAN);
                        sink.command(vehicle, var, &p.payload, t, clock).map_err(io)?;
                        count.commands += 1;
                    }
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
    let _ = client.try_disconnect();
    // Drain the disconnect briefly (a clean MQTT goodbye).
    let _ = tokio::time::timeout(Duration::from_millis(200), async {
        while let Ok(ev) = eventloop.poll().await {
            if matches!(ev, Event::Outgoing(Outgoing::Disconnect)) {
                break;
            }
        }
    })
    .await;
    let file = sink.finish().map_err(io)?;
    file.sync_all().map_err(io)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_columns_by_name_null_is_nan() {
        let snap = crate::model::Snapshot {
            k: 7,
            t: 0.7,
            x: 1.5,
            altitude: f64::NAN,
            ..Default::default()
        };
        let json = serde_json::to_vec(&snap).unwrap();
        let r = parse_report(&json).unwrap();
        assert_eq!(r.values[column("k")], 7.0);
        assert_eq!(r.values[column("x")], 1.5);
        assert!(r.values[column("altitude")].is_nan());
        assert!(parse_report(b"{\"k\":1}").unwrap_err().contains("no t"));
        assert!(parse_report(b"[1,2]").is_err());
        assert!(parse_report(b"\xff").is_err());
    }

    #[test]
    fn the_vehicles_own_nav_postings_are_not_subscribed_as_commands() {
        let subs: Vec<&str> = recorded_commands().collect();
        for v in ["NAV_X", "NAV_Y", "NAV_HEADING"] {
            assert!(SUBSCRIPTIONS.iter().any(|(n, _, _)| *n == v), "{v}");
            assert!(!subs.contains(&v), "{v}");
        }
        assert!(subs.contains(&"DESIRED_THRUST"));
        assert_eq!(subs.len(), SUBSCRIPTIONS.len() - NOT_RECORDED.len());
    }

    #[test]
    fn vehicle_names_are_quoted_when_needed() {
        let mut b = Vec::new();
        push_csv_text(&mut b, "a,\"b\"");
        assert_eq!(b, b"\"a,\"\"b\"\"\"");
    }
}
