//! MCAP output of a run (replay or live recording), one file that opens as
//! it is in Foxglove, Rerun and PlotJuggler (docs/viewing.md).
//!
//! Every message is JSON with a JSON-schema. Per vehicle `V`:
//!
//! | topic             | schema                   | what                                   |
//! |-------------------|--------------------------|----------------------------------------|
//! | `/V/state`        | `usim.State`             | the CSV row: every [`Snapshot`] field  |
//! | `/V/pose`         | `foxglove.PoseInFrame`   | x east, y north, z = −depth, heading   |
//! | `/V/location`     | `foxglove.LocationFix`   | lat/lon, only when the vehicle has them|
//! | `/tf`             | `foxglove.FrameTransform`| frame `world` → frame `V`              |
//! | `/V/cmd/VAR`      | `usim.Command`           | each message posted to the vehicle     |
//!
//! The pose rotation turns the marine heading (degrees, 0 = north,
//! clockwise) into an ENU yaw about +z: `yaw = 90° − heading`, so a vehicle
//! heading east (90°) has the identity rotation and faces +x. Pitch is left
//! out of the rotation (it is in the state message).
//!
//! Chunks are uncompressed (no zstd/lz4: they need C builds).
use std::collections::HashMap;
use std::io::{self, Seek, Write};

use super::csv::HEADER;
use crate::command::Command;
use crate::model::Snapshot;

/// Topic of the frame transforms of all vehicles.
pub const TF_TOPIC: &str = "/tf";
/// The fixed frame poses and transforms are given in (x east, y north, z up), m.
pub const WORLD_FRAME: &str = "world";
/// Schema name of the per-step state message.
pub const STATE_SCHEMA: &str = "usim.State";
/// Schema name of a posted command.
pub const COMMAND_SCHEMA: &str = "usim.Command";

/// Topic of vehicle `v`'s state messages.
pub fn state_topic(v: &str) -> String {
    format!("/{v}/state")
}
/// Topic of vehicle `v`'s `foxglove.PoseInFrame`.
pub fn pose_topic(v: &str) -> String {
    format!("/{v}/pose")
}
/// Topic of vehicle `v`'s `foxglove.LocationFix`.
pub fn location_topic(v: &str) -> String {
    format!("/{v}/location")
}
/// Topic of the commands `var` posted to vehicle `v`.
pub fn command_topic(v: &str, var: &str) -> String {
    format!("/{v}/cmd/{var}")
}

const TIME_SCHEMA: &str = r#"{"type":"object","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}}"#;
const VEC3_SCHEMA: &str = r#"{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}}"#;
const QUAT_SCHEMA: &str = r#"{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"},"w":{"type":"number"}}}"#;

fn location_schema() -> String {
    format!(
        r#"{{"title":"foxglove.LocationFix","type":"object","properties":{{"timestamp":{TIME_SCHEMA},"frame_id":{{"type":"string"}},"latitude":{{"type":"number"}},"longitude":{{"type":"number"}},"altitude":{{"type":"number"}},"position_covariance":{{"type":"array","items":{{"type":"number"}},"minItems":9,"maxItems":9}},"position_covariance_type":{{"type":"integer"}}}}}}"#
    )
}

fn frame_transform_schema() -> String {
    format!(
        r#"{{"title":"foxglove.FrameTransform","type":"object","properties":{{"timestamp":{TIME_SCHEMA},"parent_frame_id":{{"type":"string"}},"child_frame_id":{{"type":"string"}},"translation":{VEC3_SCHEMA},"rotation":{QUAT_SCHEMA}}}}}"#
    )
}

fn pose_in_frame_schema() -> String {
    format!(
        r#"{{"title":"foxglove.PoseInFrame","type":"object","properties":{{"timestamp":{TIME_SCHEMA},"frame_id":{{"type":"string"}},"pose":{{"type":"object","properties":{{"position":{VEC3_SCHEMA},"orientation":{QUAT_SCHEMA}}}}}}}}}"#
    )
}

/// JSON schema of the state message: one property per CSV column (numbers,
/// `null` for NaN = not set), so new columns appear with the CSV's.
fn state_schema() -> String {
    let mut s = String::from(
        r#"{"title":"usim.State","description":"One simulation step: the CSV columns (m, m/s, degrees; pitch and yaw in radians; null = not set)","type":"object","properties":{"#,
    );
    for (i, col) in HEADER.split(',').enumerate() {
        if i > 0 {
            s.push(',');
        }
        let ty = if col == "k" {
            r#""integer""#
        } else {
            r#"["number","null"]"#
        };
        s.push_str(&format!(r#""{col}":{{"type":{ty}}}"#));
    }
    s.push_str("}}");
    s
}

const COMMAND_SCHEMA_JSON: &str = r#"{"title":"usim.Command","description":"A message posted to the vehicle: its variable and value, t = mission time (s) when handled, or the recorder's clock","type":"object","properties":{"t":{"type":"number"},"var":{"type":"string"},"value":{"type":["number","string"]}}}"#;

/// The position and heading a pose, transform and fix are made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Depth, m (positive down).
    pub depth: f64,
    /// Marine heading, degrees (0 = north, clockwise).
    pub heading: f64,
    /// Latitude, degrees (NaN without an origin).
    pub lat: f64,
    /// Longitude, degrees (NaN without an origin).
    pub lon: f64,
}

impl From<&Snapshot> for Pose {
    fn from(s: &Snapshot) -> Pose {
        Pose {
            x: s.x,
            y: s.y,
            depth: s.depth,
            heading: s.heading,
            lat: s.lat,
            lon: s.lon,
        }
    }
}

/// The ENU quaternion `(x, y, z, w)` of a marine heading in degrees
/// (0 = north, clockwise): a rotation by `90° − heading` about +z.
pub fn heading_quaternion(heading_deg: f64) -> [f64; 4] {
    let yaw = (90.0 - heading_deg).to_radians();
    let (s, c) = (yaw / 2.0).sin_cos();
    [0.0, 0.0, s, c]
}

/// A value posted to a vehicle, as the command message carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandValue<'a> {
    /// A numeric command.
    Number(f64),
    /// A string command (as posted).
    Text(&'a str),
}

/// The value a parsed command carries.
pub fn command_value(c: &Command) -> CommandValue<'_> {
    use Command as C;
    if let Some(v) = c.number() {
        return CommandValue::Number(v);
    }
    match c {
        C::ThrustModeDifferential(s)
        | C::ThrustModeReverse(s)
        | C::SimPaused(s)
        | C::DriftVector(s)
        | C::DriftVectorAdd(s)
        | C::Reset(s)
        | C::Enabled(s)
        | C::Set(s) => CommandValue::Text(s),
        C::ObstacleHit(crate::command::Payload::Text(s)) => CommandValue::Text(s),
        C::ObstacleHit(crate::command::Payload::Number(v)) => CommandValue::Number(*v),
        _ => CommandValue::Text(""),
    }
}

struct VehicleChannels {
    name: String,
    /// `name` as a JSON string (quoted, escaped), written once.
    json_name: Vec<u8>,
    state: u16,
    pose: u16,
    location: Option<u16>,
    commands: HashMap<String, u16>,
}

struct SchemaIds {
    state: u16,
    pose: u16,
    location: u16,
    tf: u16,
    command: u16,
}

/// Writes runs as MCAP. Vehicles and command channels are added as they
/// first appear; [`McapLog::finish`] writes the summary and must be called.
pub struct McapLog<W: Write + Seek> {
    w: mcap::Writer<W>,
    schemas: SchemaIds,
    tf: u16,
    vehicles: Vec<VehicleChannels>,
    by_name: HashMap<String, usize>,
    /// Index of the vehicle written last (a replay has one).
    last: usize,
    buf: Vec<u8>,
    /// Fragments shared by the messages of one step.
    frag: Vec<u8>,
    seq: u32,
    states: u64,
}

fn mcap_err(e: mcap::McapError) -> io::Error {
    match e {
        mcap::McapError::Io(e) => e,
        other => io::Error::other(other),
    }
}

impl<W: Write + Seek> McapLog<W> {
    /// Start a file on `out` (the `usim` profile, uncompressed chunks).
    pub fn new(out: W) -> io::Result<Self> {
        let opts = mcap::WriteOptions::new()
            .compression(None)
            .calculate_chunk_crcs(false)
            // No data-section CRC either: the spec's 0 = "not computed"
            // (readers skip the check); it cost a copy and a CRC pass of
            // every byte.
            .calculate_data_section_crc(false)
            .profile("")
            .library(concat!("usim ", env!("CARGO_PKG_VERSION")));
        let mut w = opts.create(out).map_err(mcap_err)?;
        let js = "jsonschema";
        let schemas = SchemaIds {
            state: w
                .add_schema(STATE_SCHEMA, js, state_schema().as_bytes())
                .map_err(mcap_err)?,
            pose: w
                .add_schema(
                    "foxglove.PoseInFrame",
                    js,
                    pose_in_frame_schema().as_bytes(),
                )
                .map_err(mcap_err)?,
            location: w
                .add_schema("foxglove.LocationFix", js, location_schema().as_bytes())
                .map_err(mcap_err)?,
            tf: w
                .add_schema(
                    "foxglove.FrameTransform",
                    js,
                    frame_transform_schema().as_bytes(),
                )
                .map_err(mcap_err)?,
            command: w
                .add_schema(COMMAND_SCHEMA, js, COMMAND_SCHEMA_JSON.as_bytes())
                .map_err(mcap_err)?,
        };
        let tf = w
            .add_channel(schemas.tf, TF_TOPIC, "json", &Default::default())
            .map_err(mcap_err)?;
        Ok(McapLog {
            w,
            schemas,
            tf,
            vehicles: Vec::new(),
            by_name: HashMap::new(),
            last: 0,
            buf: Vec::with_capacity(1024),
            frag: Vec::with_capacity(256),
            seq: 0,
            states: 0,
        })
    }

    /// State messages written so far.
    pub fn states(&self) -> u64 {
        self.states
    }

    fn vehicle(&mut self, v: &str) -> io::Result<&mut VehicleChannels> {
        if self.vehicles.get(self.last).is_some_and(|c| c.name == v) {
            return Ok(&mut self.vehicles[self.last]);
        }
        let i = match self.by_name.get(v) {
            Some(&i) => i,
            None => {
                let meta = Default::default();
                let state = self
                    .w
                    .add_channel(self.schemas.state, &state_topic(v), "json", &meta)
                    .map_err(mcap_err)?;
                let pose = self
                    .w
                    .add_channel(self.schemas.pose, &pose_topic(v), "json", &meta)
                    .map_err(mcap_err)?;
                self.vehicles.push(VehicleChannels {
                    name: v.to_string(),
                    json_name: {
                        let mut j = Vec::new();
                        push_json_str(&mut j, v);
                        j
                    },
                    state,
                    pose,
                    location: None,
                    commands: HashMap::new(),
                });
                self.by_name.insert(v.to_string(), self.vehicles.len() - 1);
                self.vehicles.len() - 1
            }
        };
        self.last = i;
        Ok(&mut self.vehicles[i])
    }

    /// Write `self.buf` as one message on `channel_id` at vehicle clock `clock`, s.
    fn put(&mut self, channel_id: u16, clock: f64) -> io::Result<()> {
        let t = log_time_ns(clock);
        self.seq = self.seq.wrapping_add(1);
        let header = mcap::records::MessageHeader {
            channel_id,
            sequence: self.seq,
            log_time: t,
            publish_time: t,
        };
        self.w
            .write_to_known_channel(&header, &self.buf)
            .map_err(mcap_err)
    }

    /// One step of vehicle `v` from a [`Snapshot`] at vehicle clock `clock`
    /// (s): the state, pose, transform and (with lat/lon) location fix.
    pub fn snapshot(&mut self, v: &str, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.buf.clear();
        push_state_json(&mut self.buf, s);
        let ch = self.vehicle(v)?.state;
        self.put(ch, clock)?;
        self.states += 1;
        self.pose(v, &Pose::from(s), clock)
    }

    /// One step of vehicle `v` whose state is already JSON (a live
    /// `NODE_REPORT`, the same serialized [`Snapshot`]), with its pose.
    pub fn state_json(&mut self, v: &str, json: &[u8], pose: &Pose, clock: f64) -> io::Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(json);
        let ch = self.vehicle(v)?.state;
        self.put(ch, clock)?;
        self.states += 1;
        self.pose(v, pose, clock)
    }

    fn pose(&mut self, v: &str, p: &Pose, clock: f64) -> io::Result<()> {
        // The numbers shared by the pose, the transform and the fix are
        // formatted once per step: `{"sec":..,"nsec":..}`, `{"x":..,"y":..,"z":..}`
        // and the quaternion (x and y are always 0: a rotation about z).
        let q = heading_quaternion(p.heading);
        let (sec, nsec) = split_time(clock);
        let z = -p.depth;
        let mut f = std::mem::take(&mut self.frag);
        f.clear();
        f.extend_from_slice(br#"{"sec":"#);
        push_u64(&mut f, sec);
        f.extend_from_slice(br#","nsec":"#);
        push_u64(&mut f, nsec);
        f.push(b'}');
        let time_end = f.len();
        push_vec(&mut f, &[("x", p.x), ("y", p.y), ("z", z)]);
        let pos_end = f.len();
        f.extend_from_slice(br#"{"x":0,"y":0,"z":"#);
        push_json_f64(&mut f, q[2]);
        f.extend_from_slice(br#","w":"#);
        push_json_f64(&mut f, q[3]);
        f.push(b'}');
        let (time, pos, rot) = (&f[..time_end], &f[time_end..pos_end], &f[pos_end..]);

        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(br#"{"timestamp":"#);
        b.extend_from_slice(time);
        b.extend_from_slice(br#","frame_id":""#);
        b.extend_from_slice(WORLD_FRAME.as_bytes());
        b.extend_from_slice(br#"","pose":{"position":"#);
        b.extend_from_slice(pos);
        b.extend_from_slice(br#","orientation":"#);
        b.extend_from_slice(rot);
        b.extend_from_slice(b"}}");
        let ch = self.vehicle(v)?.pose;
        self.put(ch, clock)?;

        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(br#"{"timestamp":"#);
        b.extend_from_slice(time);
        b.extend_from_slice(br#","parent_frame_id":""#);
        b.extend_from_slice(WORLD_FRAME.as_bytes());
        b.extend_from_slice(br#"","child_frame_id":"#);
        // `self.last` is `v`: `self.vehicle(v)` was called just before.
        b.extend_from_slice(&self.vehicles[self.last].json_name);
        b.extend_from_slice(br#","translation":"#);
        b.extend_from_slice(pos);
        b.extend_from_slice(br#","rotation":"#);
        b.extend_from_slice(rot);
        b.push(b'}');
        self.put(self.tf, clock)?;

        if p.lat.is_finite() && p.lon.is_finite() {
            let ch = match self.vehicle(v)?.location {
                Some(ch) => ch,
                None => {
                    let ch = self
                        .w
                        .add_channel(
                            self.schemas.location,
                            &location_topic(v),
                            "json",
                            &Default::default(),
                        )
                        .map_err(mcap_err)?;
                    self.vehicle(v)?.location = Some(ch);
                    ch
                }
            };
            let b = &mut self.buf;
            b.clear();
            b.extend_from_slice(br#"{"timestamp":"#);
            b.extend_from_slice(time);
            b.extend_from_slice(br#","frame_id":"#);
            // `self.last` is `v`: `self.vehicle(v)` was called just before.
            b.extend_from_slice(&self.vehicles[self.last].json_name);
            b.extend_from_slice(br#","latitude":"#);
            push_json_f64(b, p.lat);
            b.extend_from_slice(br#","longitude":"#);
            push_json_f64(b, p.lon);
            b.extend_from_slice(br#","altitude":"#);
            push_json_f64(b, z);
            b.extend_from_slice(
                br#","position_covariance":[0,0,0,0,0,0,0,0,0],"position_covariance_type":0}"#,
            );
            self.put(ch, clock)?;
        }
        self.frag = f;
        Ok(())
    }

    /// A message posted to vehicle `v` (variable `var`), handled at vehicle
    /// clock `clock` (s); `t` is the time shown in the message (mission
    /// time in a replay), s.
    pub fn command(
        &mut self,
        v: &str,
        var: &str,
        value: &CommandValue<'_>,
        t: f64,
        clock: f64,
    ) -> io::Result<()> {
        let ch = match self.vehicle(v)?.commands.get(var) {
            Some(&ch) => ch,
            None => {
                let ch = self
                    .w
                    .add_channel(
                        self.schemas.command,
                        &command_topic(v, var),
                        "json",
                        &Default::default(),
                    )
                    .map_err(mcap_err)?;
                self.vehicle(v)?.commands.insert(var.to_string(), ch);
                ch
            }
        };
        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(br#"{"t":"#);
        push_json_f64(b, t);
        b.extend_from_slice(br#","var":"#);
        push_json_str(b, var);
        b.extend_from_slice(br#","value":"#);
        match value {
            CommandValue::Number(x) => push_json_f64(b, *x),
            CommandValue::Text(s) => push_json_str(b, s),
        }
        b.push(b'}');
        self.put(ch, clock)
    }

    /// Close the current chunk and flush the writer: everything written so
    /// far is in the file as whole chunks ([`recover`] keeps them).
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush().map_err(mcap_err)
    }

    /// Write the summary and footer; returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.finish().map_err(mcap_err)?;
        Ok(self.w.into_inner())
    }
}

/// Largest record `recover` reads, bytes (a chunk is ~768 KiB; an
/// unfinished chunk's length is a placeholder of 2^64 − 1).
pub const MAX_RECOVER_RECORD: u64 = 256 * 1024 * 1024;

/// What [`recover`] kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Messages written to the recovered file.
    pub messages: u64,
    /// Complete chunks read.
    pub chunks: u64,
    /// The input ended with its data-end record or footer (it was whole).
    pub whole: bool,
    /// Bytes of the input not kept: an unfinished last chunk, a torn record.
    pub dropped_bytes: u64,
}

/// Rewrite an MCAP cut short (a recorder killed with SIGKILL: no summary,
/// no footer, a last chunk half written) as a whole file on `out`: every
/// complete record and chunk before the first torn or damaged one is kept,
/// with its schemas, channels (same ids) and messages; the summary and
/// footer are written new. Reads `input` once, front to back; memory is
/// bounded by the largest record ([`MAX_RECOVER_RECORD`]).
pub fn recover<R: io::Read, W: Write + Seek>(mut input: R, out: W) -> io::Result<(W, Recovered)> {
    use mcap::records::{op, Record};
    let mut magic = [0u8; 8];
    let n = read_full(&mut input, &mut magic)?;
    // Killed before its first bytes reached the disk: an empty recording.
    let empty = n < magic.len() && mcap::MAGIC.starts_with(&magic[..n]);
    if !empty && magic != mcap::MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not an MCAP file (no MCAP magic at the start)",
        ));
    }
    let mut w = mcap::WriteOptions::new()
        .compression(None)
        .calculate_chunk_crcs(false)
        .calculate_data_section_crc(false)
        .profile("")
        .library(concat!("usim ", env!("CARGO_PKG_VERSION"), " (recovered)"))
        .create(out)
        .map_err(mcap_err)?;
    let mut got = Recovered::default();
    let mut body = Vec::new();
    // Apply one record; false = damaged (stop here).
    let apply = |w: &mut mcap::Writer<W>, r: Record<'_>, got: &mut Recovered| -> bool {
        match r {
            Record::Schema { header, data } => w
                .add_schema_with_id(header.id, &header.name, &header.encoding, &data)
                .is_ok(),
            Record::Channel(c) => w
                .add_channel_with_id(
                    c.id,
                    c.schema_id,
                    &c.topic,
                    &c.message_encoding,
                    &c.metadata,
                )
                .is_ok(),
            Record::Message { header, data } => {
                let ok = w.write_to_known_channel(&header, &data).is_ok();
                got.messages += ok as u64;
                ok
            }
            _ => true,
        }
    };
    loop {
        if empty {
            break;
        }
        let mut head = [0u8; 9];
        let n = read_full(&mut input, &mut head)?;
        if n == 0 {
            break;
        }
        if n < head.len() {
            got.dropped_bytes += n as u64;
            break;
        }
        let opcode = head[0];
        let len = u64::from_le_bytes([
            head[1], head[2], head[3], head[4], head[5], head[6], head[7], head[8],
        ]);
        if len > MAX_RECOVER_RECORD {
            // An unfinished chunk (placeholder length) or garbage.
            got.dropped_bytes += 9 + drain(&mut input)?;
            break;
        }
        body.clear();
        let n = io::Read::read_to_end(&mut io::Read::take(&mut input, len), &mut body)? as u64;
        if n < len {
            got.dropped_bytes += 9 + n;
            break;
        }
        if opcode == op::DATA_END || opcode == op::FOOTER {
            got.whole = true;
            break;
        }
        if !matches!(opcode, op::SCHEMA | op::CHANNEL | op::MESSAGE | op::CHUNK) {
            continue;
        }
        let Ok(record) = mcap::parse_record(opcode, &body) else {
            got.dropped_bytes += 9 + len + drain(&mut input)?;
            break;
        };
        let ok = match record {
            Record::Chunk { header, data } => {
                // The whole chunk or none of it. Its record lengths are
                // checked first: the mcap crate's chunk reader panics on
                // a length near 2^64 instead of failing.
                let fits = header.compressed_size == data.len() as u64 && chunk_records_fit(&data);
                let records: Option<Vec<Record<'_>>> = fits
                    .then(|| mcap::read::ChunkReader::new(header, &data).ok())
                    .flatten()
                    .and_then(|c| c.collect::<Result<Vec<_>, _>>().ok());
                match records {
                    Some(rs) => {
                        got.chunks += 1;
                        rs.into_iter().all(|r| apply(&mut w, r, &mut got))
                    }
                    None => false,
                }
            }
            other => apply(&mut w, other, &mut got),
        };
        if !ok {
            got.dropped_bytes += drain(&mut input)?;
            break;
        }
    }
    w.finish().map_err(mcap_err)?;
    Ok((w.into_inner(), got))
}

/// Whether the data of a chunk is a sequence of whole records, each an
/// opcode, a little-endian u64 length and that many bytes, ending exactly at
/// its end. A compressed chunk's data fails this or is refused by the reader
/// (usim writes none; the crate is built without decompressors).
fn chunk_records_fit(mut data: &[u8]) -> bool {
    while !data.is_empty() {
        let Some((head, rest)) = data.split_first_chunk::<9>() else {
            return false;
        };
        let mut len = [0u8; 8];
        len.copy_from_slice(&head[1..]);
        let len = u64::from_le_bytes(len);
        if len > rest.len() as u64 {
            return false;
        }
        data = &rest[len as usize..];
    }
    true
}

/// Read until `buf` is full or the input ends; the bytes read.
fn read_full(r: &mut impl io::Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Count the rest of the input (not kept).
fn drain(r: &mut impl io::Read) -> io::Result<u64> {
    io::copy(r, &mut io::sink())
}

/// Log time of vehicle clock `clock` (s), ns; negative or NaN clocks are 0.
pub fn log_time_ns(clock: f64) -> u64 {
    if clock > 0.0 {
        (clock * 1e9).round() as u64
    } else {
        0
    }
}

fn split_time(clock: f64) -> (u64, u64) {
    let ns = log_time_ns(clock);
    (ns / 1_000_000_000, ns % 1_000_000_000)
}

fn push_u64(b: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    b.extend_from_slice(&digits[i..]);
}

/// A finite number as JSON (shortest round trip, `42` for `42.0`), `null`
/// otherwise. `zmij` (serde_json's formatter) is about twice as fast as Ryū here.
fn push_json_f64(b: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let mut r = zmij::Buffer::new();
        let text = r.format_finite(v);
        let text = text.strip_suffix(".0").unwrap_or(text);
        b.extend_from_slice(text.as_bytes());
    } else {
        b.extend_from_slice(b"null");
    }
}

/// The JSON keys of the state message after `k`, each with its leading
/// comma, in [`Snapshot`]'s field order (= the CSV columns).
const STATE_KEYS: [&[u8]; 26] = [
    b",\"t\":",
    b",\"x\":",
    b",\"y\":",
    b",\"speed\":",
    b",\"heading\":",
    b",\"depth\":",
    b",\"altitude\":",
    b",\"pitch\":",
    b",\"yaw\":",
    b",\"sog\":",
    b",\"hog\":",
    b",\"nav_speed\":",
    b",\"nav_heading\":",
    b",\"lat\":",
    b",\"lon\":",
    b",\"drift_x\":",
    b",\"drift_y\":",
    b",\"rudder\":",
    b",\"thrust\":",
    b",\"elevator\":",
    b",\"gt_x\":",
    b",\"gt_y\":",
    b",\"thrust_l\":",
    b",\"thrust_r\":",
    b",\"current_x\":",
    b",\"current_y\":",
];

/// `s` as the state message: the same bytes as `serde_json` writes for a
/// [`Snapshot`] (fields in order, numbers by the same shortest round-trip
/// formatter, `zmij`: `42.0`, `2.5e+20`; `null` for NaN and ±inf), without
/// its per-field serializer machinery.
fn push_state_json(b: &mut Vec<u8>, s: &Snapshot) {
    let values = s.values();
    // 27 numbers of at most 24 characters plus the keys: one reservation.
    b.reserve(27 * 24 + 200);
    b.extend_from_slice(br#"{"k":"#);
    push_u64(b, s.k);
    let mut r = zmij::Buffer::new();
    for (key, v) in STATE_KEYS.iter().zip(values) {
        b.extend_from_slice(key);
        if v.is_finite() {
            b.extend_from_slice(r.format_finite(v).as_bytes());
        } else {
            b.extend_from_slice(b"null");
        }
    }
    b.push(b'}');
}

fn push_vec(b: &mut Vec<u8>, fields: &[(&str, f64)]) {
    b.push(b'{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        b.push(b'"');
        b.extend_from_slice(k.as_bytes());
        b.extend_from_slice(b"\":");
        push_json_f64(b, *v);
    }
    b.push(b'}');
}

fn push_json_str(b: &mut Vec<u8>, s: &str) {
    // serde_json escapes quotes, backslashes and control characters.
    let _ = serde_json::to_writer(&mut *b, s);
}

/// The replay writes MCAP through this (one vehicle: the mission's).
pub struct ReplayMcap<W: Write + Seek> {
    /// The log.
    pub log: McapLog<W>,
    /// The vehicle's name (topics, frame).
    pub vehicle: String,
    /// Every vehicle's name in mission order, for a multi-vehicle mission
    /// (empty: only `vehicle`).
    pub fleet: Vec<String>,
    /// Mission start time, s (log time = start + mission time).
    pub start_time: f64,
}

impl<W: Write + Seek> super::Output for ReplayMcap<W> {
    fn row(&mut self, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.log.snapshot(&self.vehicle, s, clock)
    }

    fn vehicle_row(&mut self, vehicle: usize, s: &Snapshot, clock: f64) -> io::Result<()> {
        let name = self.fleet.get(vehicle).unwrap_or(&self.vehicle);
        self.log.snapshot(name, s, clock)
    }

    fn post(&mut self, post: &crate::mission::Post, clock: f64) -> io::Result<()> {
        let value = command_value(&post.command);
        let name = self.fleet.get(post.vehicle).unwrap_or(&self.vehicle);
        self.log
            .command(name, &post.var, &value, clock - self.start_time, clock)
    }

    fn finish(self) -> io::Result<()> {
        let mut w = self.log.finish()?;
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_to_enu_quaternion() {
        // North (0°) is +y in ENU: yaw +90° about z.
        let q = heading_quaternion(0.0);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!(
            (q[2] - h).abs() < 1e-12 && (q[3] - h).abs() < 1e-12,
            "{q:?}"
        );
        // East (90°) is +x: identity.
        let q = heading_quaternion(90.0);
        assert!(q[2].abs() < 1e-12 && (q[3] - 1.0).abs() < 1e-12, "{q:?}");
        // West (270°) is −x: yaw −180°, i.e. z = −1, w = 0.
        let q = heading_quaternion(270.0);
        assert!((q[2] + 1.0).abs() < 1e-12 && q[3].abs() < 1e-12, "{q:?}");
        // Rotating the body x axis (forward) by q gives the heading's
        // direction: (sin h, cos h) in (east, north).
        for h in [0.0, 30.0, 135.0, 200.0, 359.0] {
            let q = heading_quaternion(h);
            let yaw = 2.0 * q[2].atan2(q[3]);
            let (fx, fy) = (yaw.cos(), yaw.sin());
            let r = f64::to_radians(h);
            assert!(
                (fx - r.sin()).abs() < 1e-12 && (fy - r.cos()).abs() < 1e-12,
                "{h}"
            );
        }
    }

    #[test]
    fn state_schema_is_json_with_every_column() {
        let v: serde_json::Value = serde_json::from_str(&state_schema()).unwrap();
        for col in HEADER.split(',') {
            assert!(v["properties"][col].is_object(), "{col}");
        }
        for s in [
            location_schema(),
            frame_transform_schema(),
            pose_in_frame_schema(),
            COMMAND_SCHEMA_JSON.to_string(),
        ] {
            serde_json::from_str::<serde_json::Value>(&s).unwrap();
        }
    }

    #[test]
    fn integers_and_numbers_as_json() {
        let mut b = Vec::new();
        for v in [0, 7, 10, 1_700_000_000, u64::MAX] {
            b.clear();
            push_u64(&mut b, v);
            assert_eq!(b, v.to_string().as_bytes());
        }
        b.clear();
        push_json_f64(&mut b, f64::NAN);
        b.push(b',');
        push_json_f64(&mut b, 1.5e-7);
        assert_eq!(b, b"null,1.5e-7");
    }

    #[test]
    fn state_keys_are_the_snapshot_value_names() {
        let keys: Vec<String> = STATE_KEYS
            .iter()
            .map(|k| String::from_utf8_lossy(k).to_string())
            .collect();
        let want: Vec<String> = Snapshot::VALUE_NAMES
            .iter()
            .map(|n| format!(",\"{n}\":"))
            .collect();
        assert_eq!(keys, want);
    }

    #[test]
    fn state_json_is_serde_json_byte_for_byte() {
        let mut s = Snapshot {
            k: 36_000,
            t: 0.1 + 0.2,
            x: -0.0,
            y: 42.0,
            speed: 4.008336720018362e-305,
            heading: 1.5e-7,
            depth: 2.5e20,
            altitude: f64::NAN,
            pitch: f64::INFINITY,
            yaw: f64::NEG_INFINITY,
            sog: 1e-5,
            hog: 123.456,
            nav_speed: f64::MAX,
            nav_heading: f64::MIN_POSITIVE,
            lat: 43.825300000000006,
            lon: -70.3303,
            drift_x: 1e16,
            drift_y: -1e-16,
            rudder: 5e-324,
            thrust: 100.0,
            elevator: -3.0,
            gt_x: 0.0,
            gt_y: 7.25,
            thrust_l: -100.0,
            thrust_r: 1e-300,
            current_x: 0.125,
            current_y: -2.5e-8,
            sensed: None,
            wave: None,
        };
        let mut b = Vec::new();
        for k in [0, 1, 9, 10, u64::MAX] {
            s.k = k;
            b.clear();
            push_state_json(&mut b, &s);
            assert_eq!(
                String::from_utf8(b.clone()).unwrap(),
                serde_json::to_string(&s).unwrap()
            );
        }
        // Every key is a CSV column, in the CSV's order.
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let cols: Vec<&str> = HEADER.split(',').collect();
        let mut sorted = cols.clone();
        sorted.sort_unstable();
        let mut got = keys.clone();
        got.sort_unstable();
        assert_eq!(got, sorted);
        let text = String::from_utf8(b).unwrap();
        let mut at = 0;
        for col in cols {
            let i = text[at..].find(&format!("\"{col}\":")).unwrap();
            at += i + 1;
        }
    }

    #[test]
    fn alternating_vehicles_name_their_own_frames() {
        let mut log = McapLog::new(io::Cursor::new(Vec::new())).unwrap();
        let s = Snapshot {
            lat: 43.8,
            lon: -70.3,
            ..Default::default()
        };
        let names = ["a", "b\"q", "a", "c"];
        for (i, v) in names.iter().enumerate() {
            log.snapshot(v, &s, 1.0 + i as f64).unwrap();
        }
        let bytes = log.finish().unwrap().into_inner();
        let (mut tf, mut fix) = (Vec::new(), Vec::new());
        for m in mcap::MessageStream::new(&bytes).unwrap() {
            let m = m.unwrap();
            let j: serde_json::Value = serde_json::from_slice(&m.data).unwrap();
            if m.channel.topic == TF_TOPIC {
                tf.push(j["child_frame_id"].as_str().unwrap().to_string());
            } else if m.channel.topic.ends_with("/location") {
                let frame = j["frame_id"].as_str().unwrap().to_string();
                assert_eq!(m.channel.topic, location_topic(&frame));
                fix.push(frame);
            }
        }
        assert_eq!(tf, names);
        assert_eq!(fix, names);
    }

    #[test]
    fn recover_drops_a_chunk_whose_record_length_is_out_of_bounds() {
        let mut log = McapLog::new(io::Cursor::new(Vec::new())).unwrap();
        for i in 0..3 {
            log.snapshot("a", &Snapshot::default(), 1.0 + i as f64)
                .unwrap();
        }
        let mut bytes = log.finish().unwrap().into_inner();
        let whole = recover(&bytes[..], io::Cursor::new(Vec::new())).unwrap().1;
        assert!(whole.chunks >= 1 && whole.messages >= 3, "{whole:?}");
        // The first chunk: records from after the magic, each an opcode
        // and a u64 length.
        let mut at = 8;
        while bytes[at] != mcap::records::op::CHUNK {
            at += 9 + u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        }
        // Its body: start and end times, uncompressed size and CRC, the
        // compression string (empty here), the records' size, the records.
        let body = at + 9;
        let clen = u32::from_le_bytes(bytes[body + 28..body + 32].try_into().unwrap()) as usize;
        assert_eq!(clen, 0, "usim writes uncompressed chunks");
        let first = body + 32 + 8;
        // Its first record's length near 2^64: 9 + length wraps.
        bytes[first + 1..first + 9].copy_from_slice(&(u64::MAX - 4).to_le_bytes());
        let (out, got) = recover(&bytes[..], io::Cursor::new(Vec::new())).unwrap();
        assert_eq!((got.chunks, got.messages), (0, 0), "{got:?}");
        assert!(got.dropped_bytes > 0);
        let out = out.into_inner();
        assert_eq!(mcap::MessageStream::new(&out).unwrap().count(), 0);
        assert!(!chunk_records_fit(&[1, 2, 0, 0, 0, 0, 0, 0, 0, 7]));
        assert!(chunk_records_fit(&[1, 1, 0, 0, 0, 0, 0, 0, 0, 7]));
        assert!(chunk_records_fit(&[]));
        assert!(!chunk_records_fit(&[1, 0, 0]));
    }

    #[test]
    fn log_time_rounds_to_ns() {
        assert_eq!(log_time_ns(0.1), 100_000_000);
        assert_eq!(log_time_ns(-1.0), 0);
        assert_eq!(log_time_ns(f64::NAN), 0);
        assert_eq!(split_time(12.5), (12, 500_000_000));
    }
}
