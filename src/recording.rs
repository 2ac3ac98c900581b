//! Recording a live run: what `usim record` writes from the messages it
//! receives (each vehicle's `NODE_REPORT`, the commands posted to it) as
//! CSV (the replay's columns, plus `vehicle` first when several vehicles may
//! appear), MCAP (the replay's channels, docs/viewing.md) or alog. The
//! [`Recorder`] takes messages and the receipt clock as arguments: no
//! network, no clock, so every transport can feed it (`usim record` on MQTT
//! today). The file is written in place at its final name and flushed every
//! [`FLUSH_EVERY`] by the caller (an MCAP chunk closed each time), so a
//! recorder killed outright (SIGKILL, power loss) loses at most the last
//! flush interval: a CSV whose last line may be cut (dropped by `usim
//! record --recover`), an MCAP without its summary that `usim record
//! --recover` rewrites whole ([`crate::replay::mcap::recover`]).
//!
//! Log times in the MCAP are the receipt clock (Unix time, which is the
//! vehicle clock of a vehicle started without `--start-time` and time warp
//! 1); the vehicle's own mission time is the state's `t`.
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use crate::command::{NODE_REPORT, SUBSCRIPTIONS};
use crate::replay::csv::{push_f64, HEADER};
use crate::replay::mcap::{CommandValue, McapLog, Pose};

/// Most vehicles one recording takes (with `--all`, messages under further
/// names are counted and ignored, so a flood of invented names cannot grow
/// memory or the MCAP channel table without bound).
pub const MAX_VEHICLES: usize = 4096;

/// Largest payload recorded, bytes (256 KiB; a report is ~1 kB): larger
/// messages on a recorded topic are counted and skipped.
pub const MAX_RECORDED_PAYLOAD: usize = 256 * 1024;

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

/// Command variables `usim record` does not subscribe to: V22's NAV
/// overrides share their topics with the `NAV_X`, `NAV_Y` and `NAV_HEADING`
/// a vehicle with prefix `NAV` publishes itself every other iteration, and
/// MQTT 3.1.1 does not say who published a message, so recording them would
/// log the vehicle's own pose as commands. An override's effect is in the
/// recorded state (docs/viewing.md).
pub const NOT_RECORDED: &[&str] = &["NAV_X", "NAV_Y", "NAV_HEADING"];

/// The command variables `usim record` subscribes to.
pub fn recorded_commands() -> impl Iterator<Item = &'static str> {
    SUBSCRIPTIONS
        .iter()
        .map(|(name, _, _)| *name)
        .filter(|name| !NOT_RECORDED.contains(name))
}

/// A recording in progress: the file, what was counted, each vehicle's
/// last mission time (the `t` a command is logged at).
pub struct Recorder {
    sink: Sink,
    summary: RecordSummary,
    last_t: BTreeMap<String, f64>,
}

impl Recorder {
    /// Create `output` (refused if it is a directory) and write its header;
    /// `vehicle_column`: a CSV starts with a `vehicle` column;
    /// `unix_now`: the alog's start time.
    pub fn create(
        output: &Path,
        format: RecordFormat,
        vehicle_column: bool,
        unix_now: f64,
    ) -> std::io::Result<Recorder> {
        if output.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is a directory", output.display()),
            ));
        }
        let file = File::create(output).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", output.display()))
        })?;
        let file = BufWriter::with_capacity(1 << 16, file);
        let sink = match format {
            RecordFormat::Csv => {
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
                &output.display().to_string(),
                unix_now,
            )?),
        };
        Ok(Recorder {
            sink,
            summary: RecordSummary::default(),
            last_t: BTreeMap::new(),
        })
    }

    /// One message on `vehicle`'s variable `var` (`topic` names it in the
    /// log), received at `clock` (Unix s): a report is written (or counted
    /// as bad), a command written (MCAP, alog) and counted; oversize and
    /// retained messages and names past [`MAX_VEHICLES`] are counted and skipped.
    pub fn message(
        &mut self,
        topic: &str,
        (vehicle, var): (&str, &str),
        payload: &[u8],
        retain: bool,
        clock: f64,
    ) -> std::io::Result<()> {
        let summary = &mut self.summary;
        if payload.len() > MAX_RECORDED_PAYLOAD {
            if summary.oversize == 0 {
                tracing::warn!(
                    "{}: a {} byte message, larger than the {MAX_RECORDED_PAYLOAD} bytes recorded: skipped (further ones are counted)",
                    crate::text::escape_control(topic),
                    payload.len()
                );
            }
            summary.oversize += 1;
            return Ok(());
        }
        if retain {
            // Vehicles ignore retained commands; so do we.
            return Ok(());
        }
        if !summary.vehicles.contains_key(vehicle) && summary.vehicles.len() >= MAX_VEHICLES {
            if summary.ignored == 0 {
                tracing::warn!(
                    "{MAX_VEHICLES} vehicles recorded; ignoring further names ({})",
                    crate::text::escape_control(topic)
                );
            }
            summary.ignored += 1;
            return Ok(());
        }
        let count = summary.vehicles.entry(vehicle.to_string()).or_default();
        if var == NODE_REPORT {
            match parse_report(payload) {
                Ok(r) => {
                    self.sink.report(vehicle, payload, &r, clock)?;
                    count.reports += 1;
                    self.last_t
                        .insert(vehicle.to_string(), r.values[column("t")]);
                }
                Err(e) => {
                    count.bad += 1;
                    tracing::warn!("{}: dropped: {e}", crate::text::escape_control(topic));
                }
            }
        } else {
            let t = self.last_t.get(vehicle).copied().unwrap_or(f64::NAN);
            self.sink.command(vehicle, var, payload, t, clock)?;
            count.commands += 1;
        }
        Ok(())
    }

    /// Push everything received so far to the file.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.sink.flush()
    }

    /// Close the file (an MCAP's summary, an alog's last line), synced to
    /// disk; what was counted.
    pub fn finish(self) -> std::io::Result<RecordSummary> {
        let file = self.sink.finish()?;
        file.sync_all()?;
        Ok(self.summary)
    }
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
