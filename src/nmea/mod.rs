//! NMEA 0183 and AIS output of usim vehicles (docs/nmea.md), sans-IO: the
//! [`Engine`] turns vehicle states into sentences (`\r\n`-terminated lines
//! in a byte buffer) and decides when each is due; `usim nmea` (live, over
//! UDP/TCP) and `usim replay --nmea` (to a file) are its shells.
//!
//! * [`sentence`]: own-ship `GGA`, `RMC`, `VTG`, `HDT`, `ZDA`, `DPT`, and
//!   `XDR` (attitude and heave) in a sea.
//! * [`ais`]: AIS types 1 and 5 out, `!AIVDM`/`!AIVDO` framing, and a
//!   decoder of types 1/2/3/5/18/24 for AIS input ([`input`]).
//!
//! One vehicle is the own ship (NMEA sentences and `!AIVDO`); every other
//! one is an AIS target (`!AIVDM` type 1 at the class A reporting interval,
//! type 5 static data every 6 min).
use std::collections::HashMap;

pub mod ais;
pub mod input;
pub mod recent;
pub mod sentence;
pub mod slots;

use recent::Recent;

use sentence::{valid_pos, Attitude, Fix, GpsStatus};

use crate::model::angles::{angle180, snap_to_step};

/// One vehicle's state as the sentences need it. Units: degrees, m, m/s, s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShipState {
    /// Mission time, s (the report's `t`; paces the outputs).
    pub t: f64,
    /// Vehicle clock, Unix s (UTC of the sentences).
    pub clock: f64,
    /// Latitude, degrees (NaN: no origin).
    pub lat: f64,
    /// Longitude, degrees (NaN: no origin).
    pub lon: f64,
    /// Speed over ground, m/s (the report's `sog`).
    pub sog: f64,
    /// Course over ground, degrees true (the report's `hog`).
    pub cog: f64,
    /// Heading, degrees true (the report's `heading`).
    pub heading: f64,
    /// Depth below the surface, m.
    pub depth: f64,
    /// Altitude above the bottom, m (NaN: unknown).
    pub altitude: f64,
    /// What the vehicle's sensors report (its `[sensors]` table): the
    /// sentences and AIS reports carry these instead of the true values.
    pub sensed: Option<SensedFix>,
    /// The hull's pitch, roll and heave in a sea (`None` without a `[sea]`:
    /// no `XDR`).
    pub attitude: Option<Attitude>,
}

/// The sensed own-ship values (docs/nmea.md, "Sensors"). Units: degrees,
/// m/s, m; NaN: that sensor has no reading now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SensedFix {
    /// Latitude, degrees (NaN: no fix).
    pub lat: f64,
    /// Longitude, degrees (NaN: no fix).
    pub lon: f64,
    /// Speed over ground, m/s: the true one plus the speed sensor's error.
    pub sog: f64,
    /// Course over ground, degrees: the true one plus the heading sensor's error.
    pub cog: f64,
    /// Heading, degrees (as `NAV_HEADING`).
    pub heading: f64,
    /// Depth, m (as `NAV_DEPTH`).
    pub depth: f64,
    /// The receiver's fix quality, satellites and HDOP.
    pub gps: GpsStatus,
}

/// The published-sensed and true values a [`SensedFix`] is made of.
struct SensedParts {
    /// Sensed lat, lon (degrees), published speed (m/s), heading, depth.
    lat: f64,
    lon: f64,
    speed: f64,
    heading: f64,
    depth: f64,
    /// GGA quality, satellites, HDOP.
    gps: GpsStatus,
    /// True stored speed (m/s) and heading (degrees), ground speed and course.
    true_speed: f64,
    true_heading: f64,
    sog: f64,
    cog: f64,
}

impl SensedFix {
    /// Sensed values with the ground velocity: SOG = sog + (ŝ − s) and
    /// COG = cog + (ĥ − h) (ŝ, ĥ the sensed speed and heading, s the true
    /// speed rounded to 0.01 m/s as published, h the true heading; the
    /// difference of headings taken in [−180, 180)). A GPS without a fix
    /// has no velocity either: SOG and COG are NaN then.
    fn of(p: SensedParts) -> SensedFix {
        let fix = p.gps.quality > 0 && p.lat.is_finite() && p.lon.is_finite();
        let nan = f64::NAN;
        let (sog, cog) = if fix {
            (
                p.sog + (p.speed - snap_to_step(p.true_speed, 0.01)),
                p.cog + angle180(p.heading - p.true_heading),
            )
        } else {
            (nan, nan)
        };
        SensedFix {
            lat: if fix { p.lat } else { nan },
            lon: if fix { p.lon } else { nan },
            sog,
            cog,
            heading: p.heading,
            depth: p.depth,
            gps: p.gps,
        }
    }
}

impl ShipState {
    /// From a model snapshot at vehicle clock `clock` (Unix s).
    pub fn from_snapshot(s: &crate::model::Snapshot, clock: f64) -> ShipState {
        let sensed = s.sensed.map(|n| {
            SensedFix::of(SensedParts {
                lat: n.lat,
                lon: n.lon,
                speed: n.speed,
                heading: n.heading,
                depth: n.depth,
                gps: GpsStatus {
                    quality: n.fix,
                    satellites: n.satellites,
                    hdop: n.hdop,
                },
                true_speed: s.speed,
                true_heading: s.heading,
                sog: s.sog,
                cog: s.hog,
            })
        });
        ShipState {
            t: s.t,
            clock,
            lat: s.lat,
            lon: s.lon,
            sog: s.sog,
            cog: s.hog,
            heading: s.heading,
            depth: s.depth,
            altitude: s.altitude,
            sensed,
            attitude: s.wave.map(|w| Attitude {
                pitch_deg: w.pitch + s.pitch.to_degrees(),
                roll_deg: w.roll,
                heave_m: w.heave,
            }),
        }
    }

    /// The values the sentences carry: the sensed ones with sensors, else
    /// the true ones; (lat, lon, sog, cog, heading, depth).
    fn shown(&self) -> (f64, f64, f64, f64, f64, f64) {
        match &self.sensed {
            None => (
                self.lat,
                self.lon,
                self.sog,
                self.cog,
                self.heading,
                self.depth,
            ),
            Some(f) => (f.lat, f.lon, f.sog, f.cog, f.heading, f.depth),
        }
    }
}

/// The fields of a `NODE_REPORT` JSON object (docs/formats.md §3) the
/// sentences use; null or absent numbers are NaN.
#[derive(Debug, Default, serde::Deserialize)]
struct RawReport {
    t: f64,
    #[serde(default)]
    lat: Option<f64>,
    #[serde(default)]
    lon: Option<f64>,
    #[serde(default)]
    sog: Option<f64>,
    #[serde(default)]
    hog: Option<f64>,
    #[serde(default)]
    heading: Option<f64>,
    #[serde(default)]
    depth: Option<f64>,
    #[serde(default)]
    altitude: Option<f64>,
    #[serde(default)]
    speed: Option<f64>,
    #[serde(default)]
    sensed: Option<RawSensed>,
    #[serde(default)]
    pitch: Option<f64>,
    #[serde(default)]
    wave: Option<RawWave>,
}

/// A `NODE_REPORT`'s `wave` block (docs/formats.md §4): degrees and m.
#[derive(Debug, Default, serde::Deserialize)]
struct RawWave {
    #[serde(default)]
    heave: Option<f64>,
    #[serde(default)]
    roll: Option<f64>,
    #[serde(default)]
    pitch: Option<f64>,
}

/// A `NODE_REPORT`'s `sensed` block (docs/formats.md §3); null numbers are NaN.
#[derive(Debug, Default, serde::Deserialize)]
struct RawSensed {
    #[serde(default)]
    lat: Option<f64>,
    #[serde(default)]
    lon: Option<f64>,
    #[serde(default)]
    speed: Option<f64>,
    #[serde(default)]
    heading: Option<f64>,
    #[serde(default)]
    depth: Option<f64>,
    #[serde(default)]
    fix: u8,
    #[serde(default)]
    hdop: Option<f64>,
    #[serde(default)]
    satellites: u8,
}

/// A `NODE_REPORT` payload as a [`ShipState`] (its `clock` set to NaN: the
/// caller knows the vehicle clock). Errors name what is wrong.
pub fn parse_node_report(payload: &[u8]) -> Result<ShipState, String> {
    let r: RawReport =
        serde_json::from_slice(payload).map_err(|e| format!("not a NODE_REPORT: {e}"))?;
    let n = |v: Option<f64>| v.unwrap_or(f64::NAN);
    if !r.t.is_finite() {
        return Err("t is not a finite number".into());
    }
    let sensed = r.sensed.as_ref().map(|x| {
        SensedFix::of(SensedParts {
            lat: n(x.lat),
            lon: n(x.lon),
            speed: n(x.speed),
            heading: n(x.heading),
            depth: n(x.depth),
            gps: GpsStatus {
                quality: x.fix,
                satellites: x.satellites,
                hdop: n(x.hdop),
            },
            true_speed: n(r.speed),
            true_heading: n(r.heading),
            sog: n(r.sog),
            cog: n(r.hog),
        })
    });
    Ok(ShipState {
        t: r.t,
        clock: f64::NAN,
        lat: n(r.lat),
        lon: n(r.lon),
        sog: n(r.sog),
        cog: n(r.hog),
        heading: n(r.heading),
        depth: n(r.depth),
        altitude: n(r.altitude),
        sensed,
        attitude: r.wave.as_ref().map(|w| Attitude {
            pitch_deg: n(w.pitch) + r.pitch.unwrap_or(0.0).to_degrees(),
            roll_deg: n(w.roll),
            heave_m: n(w.heave),
        }),
    })
}

/// First MMSI of the default range: MID 200 is not in the ITU table of
/// Maritime Identification Digits (Europe's start at 201), so `200xxxxxx`
/// is no real ship station.
pub const DEFAULT_MMSI_BASE: u32 = 200_000_000;

/// The default MMSI of a vehicle without `mmsi` in its config:
/// `200000000 + FNV-1a-32(name) mod 1000000` (the same name always gives
/// the same MMSI; two names may collide, which the bridge reports).
pub fn default_mmsi(name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    DEFAULT_MMSI_BASE + h % 1_000_000
}

/// A vehicle's static data: who it is to AIS.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// Vehicle name (the AIS name is its six-bit form, [`ais::sixbit_text`]).
    pub name: String,
    /// MMSI (config `mmsi`, else [`default_mmsi`]).
    pub mmsi: u32,
    /// Overall length, m (`platform_length`; 0: not available).
    pub length_m: f64,
    /// Beam, m (`platform_beam`; 0: not available).
    pub beam_m: f64,
    /// AIS ship type (`ais_ship_type`; 0: not available).
    pub ship_type: u8,
}

impl Identity {
    /// The identity of a vehicle known only by name.
    pub fn named(name: &str) -> Identity {
        Identity {
            name: name.to_string(),
            mmsi: default_mmsi(name),
            length_m: 0.0,
            beam_m: 0.0,
            ship_type: 0,
        }
    }

    /// The identity a vehicle config gives.
    pub fn of_config(c: &crate::config::VehicleConfig) -> Identity {
        Identity {
            name: c.name.clone(),
            mmsi: c.mmsi.unwrap_or_else(|| default_mmsi(&c.name)),
            length_m: c.platform_length,
            beam_m: c.platform_beam,
            ship_type: c.ais_ship_type,
        }
    }
}

/// Which own-ship sentences are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    /// `GGA`.
    pub gga: bool,
    /// `RMC`.
    pub rmc: bool,
    /// `VTG`.
    pub vtg: bool,
    /// `HDT`.
    pub hdt: bool,
    /// `ZDA`.
    pub zda: bool,
    /// `DPT` (only while the vehicle is below the surface or knows its altitude).
    pub dpt: bool,
    /// `!AIVDO` (own ship as AIS).
    pub vdo: bool,
    /// `!AIVDM` for the other vehicles.
    pub vdm: bool,
    /// `XDR` pitch, roll and heave (own ship in a sea only).
    pub xdr: bool,
}

/// Every sentence name [`Selection::parse`] knows.
pub const SENTENCES: &[&str] = &[
    "GGA", "RMC", "VTG", "HDT", "ZDA", "DPT", "VDO", "VDM", "XDR",
];

impl Default for Selection {
    fn default() -> Self {
        Selection {
            gga: true,
            rmc: true,
            vtg: true,
            hdt: true,
            zda: true,
            dpt: true,
            vdo: true,
            vdm: true,
            xdr: true,
        }
    }
}

impl Selection {
    /// From names such as `GGA,RMC,VDM` (any case).
    pub fn parse(list: &[String]) -> Result<Selection, String> {
        let mut s = Selection {
            gga: false,
            rmc: false,
            vtg: false,
            hdt: false,
            zda: false,
            dpt: false,
            vdo: false,
            vdm: false,
            xdr: false,
        };
        for name in list {
            let flag = match name.trim().to_ascii_uppercase().as_str() {
                "GGA" => &mut s.gga,
                "RMC" => &mut s.rmc,
                "VTG" => &mut s.vtg,
                "HDT" => &mut s.hdt,
                "ZDA" => &mut s.zda,
                "DPT" => &mut s.dpt,
                "VDO" => &mut s.vdo,
                "VDM" => &mut s.vdm,
                "XDR" => &mut s.xdr,
                _ => {
                    return Err(format!(
                        "unknown sentence {:?}; known: {}",
                        crate::text::escape_control(name),
                        SENTENCES.join(",")
                    ))
                }
            };
            *flag = true;
        }
        Ok(s)
    }
}

/// What the engine sends and how often.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Talker of `GGA`, `RMC`, `VTG`, `ZDA` (default `GP`).
    pub talker: String,
    /// Talker of `HDT`, `DPT` (default `II`).
    pub instrument_talker: String,
    /// Sentences sent.
    pub sentences: Selection,
    /// Own-ship sentences at most every this many seconds (default 1).
    pub own_interval_s: f64,
    /// AIS position reports every this many seconds; `None`: the class A
    /// intervals by speed and turn ([`class_a_interval`]).
    pub ais_interval_s: Option<f64>,
    /// Static data (type 5) every this many seconds (default 360).
    pub static_interval_s: f64,
    /// First repeat of a vehicle's static data this many seconds after its
    /// first report, each later one twice as long after, until
    /// `static_interval_s` (0: off, the default; `usim nmea` uses 30 s, so a
    /// listener that starts after the bridge learns the names within
    /// seconds to minutes, not 6 minutes).
    pub static_warmup_s: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            talker: "GP".into(),
            instrument_talker: "II".into(),
            sentences: Selection::default(),
            own_interval_s: 1.0,
            ais_interval_s: None,
            static_interval_s: 360.0,
            static_warmup_s: 0.0,
        }
    }
}

/// A talker id: exactly two ASCII capitals or digits.
pub fn check_talker(t: &str) -> Result<(), String> {
    if t.len() == 2
        && t.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    {
        Ok(())
    } else {
        Err(format!(
            "a talker id is two capital letters or digits (GP, GN, II, ...), not {:?}",
            crate::text::escape_control(t)
        ))
    }
}

/// Turn rate above which a ship counts as changing course, °/min (the
/// AIS ROT field's own "more than 5° in 30 s").
pub const TURNING_DEG_MIN: f64 = 10.0;

/// Class A reporting interval (ITU-R M.1371 Table 1, ships under way), s:
/// 10 s up to 14 kn (3⅓ s when changing course), 6 s up to 23 kn (2 s
/// when changing course), 2 s above. Unknown speed counts as slow.
pub fn class_a_interval(sog_ms: f64, rot_deg_min: f64) -> f64 {
    let kn = if sog_ms.is_finite() {
        sog_ms.abs() * sentence::MS_TO_KN
    } else {
        0.0
    };
    let turning = rot_deg_min.is_finite() && rot_deg_min.abs() > TURNING_DEG_MIN;
    match (kn, turning) {
        (k, false) if k <= 14.0 => 10.0,
        (k, true) if k <= 14.0 => 10.0 / 3.0,
        (k, false) if k <= 23.0 => 6.0,
        _ => 2.0,
    }
}

/// Why a vehicle gets no sentences.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// No latitude/longitude: the vehicle has no geodetic origin.
    NoOrigin,
    /// Mission time not finite.
    BadTime,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NoOrigin => write!(
                f,
                "no latitude/longitude (the vehicle has no geodetic origin): give its config \
                 `start_pos` with lat/lon or a `[geodesy]` origin (docs/nmea.md)"
            ),
            Refusal::BadTime => write!(f, "mission time is not a finite number"),
        }
    }
}

/// One own-ship sentence writer of [`sentence`].
type SentenceFn = fn(&mut Vec<u8>, &str, &Fix);

/// Per-vehicle pacing.
#[derive(Debug, Clone)]
struct Track {
    id: Identity,
    /// Mission time of the last position output (own-ship set or type 1).
    last_pos: Option<f64>,
    /// Mission time of the last static data.
    last_static: Option<f64>,
    /// Static data sent so far (paces the warm-up repeats).
    statics: u32,
    /// Last (t, heading) seen, for the rate of turn.
    last_heading: Option<(f64, f64)>,
    /// Rate of turn, °/min (NaN until two reports).
    rot: f64,
}

/// Most vehicles an [`Engine`] paces at once: a new one beyond makes it
/// forget the one heard least recently (its pacing starts afresh if it
/// reports again). Configured identities are kept apart and never forgotten.
pub const MAX_TRACKS: usize = 4096;

/// The sans-IO NMEA/AIS engine: vehicle identities, pacing and the own ship.
#[derive(Debug, Clone)]
pub struct Engine {
    opts: Options,
    own: Option<String>,
    /// Identities given by configs ([`Engine::set_identity`]).
    configured: HashMap<String, Identity>,
    tracks: Recent<String, Track>,
    /// Tracks per MMSI (a clash is looked for only where this is above 1).
    mmsis: HashMap<u32, u32>,
    /// Tracks forgotten to make room.
    forgotten: u64,
    seq: u8,
}

impl Engine {
    /// An engine with `own` as own ship (`None`: every vehicle is AIS).
    pub fn new(opts: Options, own: Option<String>) -> Engine {
        Engine::with_capacity(opts, own, MAX_TRACKS)
    }

    /// An engine pacing at most `cap` vehicles at once.
    pub fn with_capacity(opts: Options, own: Option<String>, cap: usize) -> Engine {
        Engine {
            opts,
            own,
            configured: HashMap::new(),
            tracks: Recent::new(cap),
            mmsis: HashMap::new(),
            forgotten: 0,
            seq: 0,
        }
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Register (or replace) a configured vehicle's identity (kept for the
    /// life of the engine); unknown vehicles get [`Identity::named`] on
    /// their first report.
    pub fn set_identity(&mut self, id: Identity) {
        if let Some(t) = self.tracks.get_mut(&id.name) {
            let old = std::mem::replace(&mut t.id, id.clone());
            uncount(&mut self.mmsis, old.mmsi);
            *self.mmsis.entry(id.mmsi).or_insert(0) += 1;
        }
        self.configured.insert(id.name.clone(), id);
    }

    /// The identity of `name`, if configured or paced now.
    pub fn identity(&self, name: &str) -> Option<&Identity> {
        self.tracks
            .get(name)
            .map(|t| &t.id)
            .or_else(|| self.configured.get(name))
    }

    /// Whether `name` is paced now (has reported and is not forgotten).
    pub fn is_tracked(&self, name: &str) -> bool {
        self.tracks.contains(name)
    }

    /// Number of vehicles paced now.
    pub fn len(&self) -> usize {
        self.tracks.len()
    }

    /// No vehicle paced now.
    pub fn is_empty(&self) -> bool {
        self.tracks.is_empty()
    }

    /// Vehicles forgotten so far to make room for new ones ([`MAX_TRACKS`]).
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }

    /// Another paced vehicle using `name`'s MMSI, if any.
    pub fn mmsi_clash(&self, name: &str) -> Option<&str> {
        let mmsi = self.tracks.get(name)?.id.mmsi;
        if self.mmsis.get(&mmsi).copied().unwrap_or(0) < 2 {
            return None;
        }
        self.tracks
            .iter()
            .find(|(n, t)| n.as_str() != name && t.id.mmsi == mmsi)
            .map(|(n, _)| n.as_str())
    }

    /// Forget a vehicle's pacing (it went offline); a configured identity stays.
    pub fn remove(&mut self, name: &str) {
        if let Some(t) = self.tracks.remove(name) {
            uncount(&mut self.mmsis, t.id.mmsi);
        }
    }

    /// The static data (AIS type 5) of every vehicle paced now, appended
    /// to `out` (for a listener that just connected: it learns every name
    /// at once instead of within [`Options::static_interval_s`]). Returns
    /// the number of lines. The vehicles' own schedules are not touched.
    pub fn static_reports(&mut self, out: &mut Vec<u8>) -> usize {
        let sel = self.opts.sentences;
        let mut lines = 0;
        let mut names: Vec<&String> = self.tracks.iter().map(|(n, _)| n).collect();
        names.sort();
        for name in names {
            let Some(tr) = self.tracks.get(name.as_str()) else {
                continue;
            };
            let own = self.own.as_deref() == Some(name.as_str());
            if tr.last_pos.is_none() || !((own && sel.vdo) || (!own && sel.vdm)) {
                continue;
            }
            self.seq = write_static(out, &tr.id, own, self.seq);
            lines += 2;
        }
        lines
    }

    /// A new state of vehicle `name`: append the sentences due to `out` and
    /// return how many lines were appended (0: nothing due yet). Outputs are
    /// paced by the state's mission time `t`; a time going backwards (the
    /// vehicle restarted) starts the pacing afresh.
    pub fn update(
        &mut self,
        name: &str,
        s: &ShipState,
        out: &mut Vec<u8>,
    ) -> Result<usize, Refusal> {
        if !s.t.is_finite() {
            return Err(Refusal::BadTime);
        }
        if !(s.lat.is_finite() && s.lon.is_finite()) {
            return Err(Refusal::NoOrigin);
        }
        let own = self.own.as_deref() == Some(name);
        // With sensors: what the vehicle senses, true values otherwise.
        let (lat, lon, sog, cog, heading, depth) = s.shown();
        let configured = &self.configured;
        let mut new_mmsi = None;
        let (tr, gone) = self.tracks.heard(name, || {
            let id = configured
                .get(name)
                .cloned()
                .unwrap_or_else(|| Identity::named(name));
            new_mmsi = Some(id.mmsi);
            Track::new(id)
        });
        if let Some(m) = new_mmsi {
            *self.mmsis.entry(m).or_insert(0) += 1;
        }
        if let Some((_, t)) = gone {
            uncount(&mut self.mmsis, t.id.mmsi);
            self.forgotten += 1;
        }
        if tr.last_pos.is_some_and(|t0| s.t < t0) {
            *tr = Track::new(tr.id.clone());
        }
        // Rate of turn from the heading change since the last report.
        if let Some((t0, h0)) = tr.last_heading {
            let dt = s.t - t0;
            if dt > 0.0 && heading.is_finite() && h0.is_finite() {
                let dh = (heading - h0 + 540.0).rem_euclid(360.0) - 180.0;
                tr.rot = dh / dt * 60.0;
            }
        }
        tr.last_heading = Some((s.t, heading));
        let interval = if own {
            self.opts.own_interval_s
        } else {
            self.opts
                .ais_interval_s
                .unwrap_or_else(|| class_a_interval(sog, tr.rot))
        };
        let due = |last: Option<f64>, every: f64| last.is_none_or(|t0| s.t - t0 >= every - 1e-9);
        let pos_due = due(tr.last_pos, interval);
        let warm = self.opts.static_warmup_s;
        let static_every = if warm > 0.0 && tr.statics > 0 {
            (warm * f64::from(1u32 << (tr.statics - 1).min(20))).min(self.opts.static_interval_s)
        } else {
            self.opts.static_interval_s
        };
        let static_due = due(tr.last_static, static_every);
        let before = out.len();
        let sel = self.opts.sentences;
        let utc = sentence::utc(s.clock);
        let pos = valid_pos(lat, lon);
        let mut lines = 0;
        if pos_due {
            tr.last_pos = Some(s.t);
            if own {
                let f = Fix {
                    utc,
                    pos,
                    sog_ms: sog,
                    cog_deg: cog,
                    heading_deg: heading,
                    depth_m: depth,
                    altitude_m: s.altitude,
                    gps: s.sensed.map(|x| x.gps),
                    attitude: s.attitude,
                };
                lines += own_sentences(out, &self.opts, &f);
            }
            if (own && sel.vdo) || (!own && sel.vdm) {
                let p = ais::Position {
                    mmsi: tr.id.mmsi,
                    lat: pos.map_or(f64::NAN, |p| p.0),
                    lon: pos.map_or(f64::NAN, |p| p.1),
                    sog_ms: sog,
                    cog_deg: cog,
                    heading_deg: heading,
                    rot_deg_min: tr.rot,
                    utc_second: utc.map_or(60, |u| u.second as u32),
                };
                ais::frame(
                    out,
                    "AI",
                    if own { "VDO" } else { "VDM" },
                    &ais::type1_bits(&p),
                    0,
                );
                lines += 1;
            }
        }
        if static_due && ((own && sel.vdo) || (!own && sel.vdm)) {
            tr.last_static = Some(s.t);
            tr.statics = tr.statics.saturating_add(1);
            self.seq = write_static(out, &tr.id, own, self.seq);
            lines += 2;
        }
        debug_assert!(out[before..].is_ascii());
        Ok(lines)
    }
}

/// The own-ship sentences of fix `f` the options select, appended to
/// `out`; returns how many. `HDT` only with a heading, `ZDA` with a time,
/// `DPT` below the surface or with a known altitude.
fn own_sentences(out: &mut Vec<u8>, opts: &Options, f: &Fix) -> usize {
    let sel = opts.sentences;
    let (gp, ii) = (&opts.talker, &opts.instrument_talker);
    let table: [(bool, SentenceFn, &str); 7] = [
        (sel.gga, sentence::gga, gp),
        (sel.rmc, sentence::rmc, gp),
        (sel.vtg, sentence::vtg, gp),
        (
            sel.hdt && !sentence::wrap360(f.heading_deg).is_nan(),
            sentence::hdt,
            ii,
        ),
        (sel.zda && f.utc.is_some(), sentence::zda, gp),
        (
            sel.dpt && (f.depth_m > 0.0 || f.altitude_m.is_finite()),
            sentence::dpt,
            ii,
        ),
        (sel.xdr && f.attitude.is_some(), sentence::xdr, ii),
    ];
    let mut lines = 0;
    for (on, write, talker) in table {
        if on {
            write(out, talker, f);
            lines += 1;
        }
    }
    lines
}

/// One vehicle's static data (two `!AIVDM`/`!AIVDO` fragments) with
/// sequential message id `seq`; returns the next id (0–9).
fn write_static(out: &mut Vec<u8>, id: &Identity, own: bool, seq: u8) -> u8 {
    let st = ais::Static {
        mmsi: id.mmsi,
        name: id.name.clone(),
        ship_type: id.ship_type,
        length_m: id.length_m,
        beam_m: id.beam_m,
    };
    ais::frame(
        out,
        "AI",
        if own { "VDO" } else { "VDM" },
        &ais::type5_bits(&st),
        seq,
    );
    (seq + 1) % 10
}

/// One track fewer with MMSI `m`.
fn uncount(mmsis: &mut HashMap<u32, u32>, m: u32) {
    if let Some(c) = mmsis.get_mut(&m) {
        *c -= 1;
        if *c == 0 {
            mmsis.remove(&m);
        }
    }
}

impl Track {
    fn new(id: Identity) -> Track {
        Track {
            id,
            last_pos: None,
            last_static: None,
            statics: 0,
            last_heading: None,
            rot: f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(t: f64) -> ShipState {
        ShipState {
            t,
            clock: 1_700_000_000.0 + t,
            lat: 43.825,
            lon: -70.33,
            sog: 2.0,
            cog: 45.0,
            heading: 45.0,
            depth: 0.0,
            altitude: f64::NAN,
            sensed: None,
            attitude: None,
        }
    }

    #[test]
    fn default_mmsi_is_in_the_unallocated_mid_200() {
        for n in ["alpha", "beta", "", "ü"] {
            let m = default_mmsi(n);
            assert!((200_000_000..201_000_000).contains(&m), "{m}");
        }
        assert_eq!(default_mmsi("alpha"), default_mmsi("alpha"));
        assert_ne!(default_mmsi("alpha"), default_mmsi("beta"));
    }

    #[test]
    fn class_a_intervals() {
        assert_eq!(class_a_interval(0.0, f64::NAN), 10.0);
        assert_eq!(class_a_interval(5.0, 0.0), 10.0); // 9.7 kn
        assert_eq!(class_a_interval(5.0, 30.0), 10.0 / 3.0);
        assert_eq!(class_a_interval(10.0, 0.0), 6.0); // 19.4 kn
        assert_eq!(class_a_interval(10.0, -30.0), 2.0);
        assert_eq!(class_a_interval(15.0, 0.0), 2.0); // 29 kn
    }

    #[test]
    fn pacing_and_refusal() {
        let mut e = Engine::new(Options::default(), Some("own".into()));
        let mut out = Vec::new();
        let mut no_origin = state(0.0);
        no_origin.lat = f64::NAN;
        assert_eq!(e.update("x", &no_origin, &mut out), Err(Refusal::NoOrigin));
        // Own ship: GGA RMC VTG HDT ZDA, VDO type 1, VDO type 5 (2 lines).
        assert_eq!(e.update("own", &state(0.0), &mut out), Ok(8));
        assert_eq!(e.update("own", &state(0.5), &mut out), Ok(0));
        assert_eq!(e.update("own", &state(1.0), &mut out), Ok(6));
        // AIS target at 2 m/s, straight: every 10 s.
        assert_eq!(e.update("b", &state(0.0), &mut out), Ok(3));
        assert_eq!(e.update("b", &state(9.9), &mut out), Ok(0));
        assert_eq!(e.update("b", &state(10.0), &mut out), Ok(1));
        let text = String::from_utf8(out).unwrap();
        for line in text.lines() {
            let (body, ck) = line[1..].split_once('*').unwrap();
            assert_eq!(
                u8::from_str_radix(ck, 16).unwrap(),
                sentence::checksum(body.as_bytes())
            );
            assert!(line.len() <= 82, "{line}");
        }
    }

    /// Count of type 5 messages (2 fragments each) in `out`.
    fn statics(out: &[u8]) -> usize {
        String::from_utf8_lossy(out)
            .lines()
            .filter(|l| l.starts_with("!AIVDM,2,1"))
            .count()
    }

    #[test]
    fn static_data_warms_up_then_every_interval() {
        let opts = Options {
            static_warmup_s: 30.0,
            ..Options::default()
        };
        let mut e = Engine::new(opts, None);
        let mut at = Vec::new();
        for t in 0..=1500 {
            let mut out = Vec::new();
            e.update("b", &state(f64::from(t)), &mut out).unwrap();
            if statics(&out) > 0 {
                at.push(t);
            }
        }
        // First sight, then 30, 60, 120, 240 s apart, then every 360 s.
        assert_eq!(at, [0, 30, 90, 210, 450, 810, 1170]);
        // Without the warm-up: first sight, then every 360 s.
        let mut e = Engine::new(Options::default(), None);
        let mut n = 0;
        for t in 0..=1500 {
            let mut out = Vec::new();
            e.update("b", &state(f64::from(t)), &mut out).unwrap();
            n += statics(&out);
        }
        assert_eq!(n, 5);
    }

    #[test]
    fn one_off_names_are_forgotten_but_configured_identities_stay() {
        let mut e = Engine::with_capacity(Options::default(), None, 3);
        let mut cfg = Identity::named("conf");
        cfg.mmsi = 366_000_001;
        e.set_identity(cfg.clone());
        let mut out = Vec::new();
        e.update("conf", &state(0.0), &mut out).unwrap();
        for i in 0..10 {
            e.update(&format!("x{i}"), &state(1.0), &mut out).unwrap();
            assert!(e.len() <= 3);
        }
        assert_eq!(e.forgotten(), 8);
        assert!(!e.is_tracked("conf") && !e.is_tracked("x0") && e.is_tracked("x9"));
        // Back after being forgotten: its configured MMSI, not the default.
        assert_eq!(e.identity("conf"), Some(&cfg));
        out.clear();
        e.update("conf", &state(2.0), &mut out).unwrap();
        let d = ais::decode(
            String::from_utf8_lossy(&out)
                .lines()
                .next()
                .unwrap()
                .split(',')
                .nth(5)
                .unwrap()
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(d.mmsi, 366_000_001);
        // A listener connecting now gets the static data of the 3 paced.
        out.clear();
        assert_eq!(e.static_reports(&mut out), 6);
        assert_eq!(statics(&out), 3);
        assert!(e.mmsi_clash("conf").is_none());
    }

    /// A `sensed` block drives the own-ship fix; a dropout is quality 0,
    /// `V`/`N`, empty position and HDOP, AIS "not available".
    #[test]
    fn sensed_reports_drive_the_fix_and_a_dropout_has_none() {
        let json = |fix: u8, lat: &str| {
            format!(
                r#"{{"t":1,"lat":43.8,"lon":-70.3,"speed":2.0,"sog":2.0,"hog":45,"heading":45,
                "sensed":{{"lat":{lat},"lon":-70.31,"speed":2.5,"heading":50,"depth":0,
                "fix":{fix},"hdop":1.4,"satellites":12}}}}"#
            )
        };
        let mut e = Engine::new(Options::default(), Some("own".into()));
        let mut s = parse_node_report(json(8, "43.81").as_bytes()).unwrap();
        s.clock = 1.7e9;
        let mut out = Vec::new();
        e.update("own", &s, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // 43.81° N = 4348.60000', HDOP 1.4; SOG 2.0 + 0.5 m/s = 4.86 kn;
        // COG 45 + 5 = 50.0°.
        assert!(
            text.contains(",4348.60000,N,07018.60000,W,8,12,1.4,"),
            "{text}"
        );
        assert!(
            text.contains(",A,4348.60000,N,07018.60000,W,4.86,50.0,"),
            "{text}"
        );
        assert!(text.contains("HDT,50.0,T"), "{text}");
        let mut s = parse_node_report(json(0, "null").as_bytes()).unwrap();
        s.t = 2.0;
        s.clock = 1.7e9 + 1.0;
        let mut out = Vec::new();
        e.update("own", &s, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let line = |p: &str| text.lines().find(|l| l.contains(p)).unwrap().to_string();
        assert!(line("GGA").contains(",,,,,0,00,,,M,,M,,*"), "{text}");
        assert!(line("RMC").contains(",V,,,,,,,"), "{text}");
        assert!(line("RMC").contains(",,,N*"), "{text}");
        assert!(line("VTG").contains(",T,,M,,N,,K,N*"), "{text}");
        let vdo = line("!AIVDO,1,1");
        let d = ais::decode(vdo.split(',').nth(5).unwrap().as_bytes()).unwrap();
        assert_eq!((d.lat, d.lon, d.sog_kn), (None, None, None), "{d:?}");
        assert_eq!(d.heading_deg, Some(50));
    }

    #[test]
    fn node_report_fields() {
        let s =
            parse_node_report(br#"{"t":1.5,"lat":43.0,"lon":null,"sog":1,"hog":2,"heading":3}"#)
                .unwrap();
        assert_eq!(
            (s.t, s.lat, s.sog, s.cog, s.heading),
            (1.5, 43.0, 1.0, 2.0, 3.0)
        );
        assert!(s.lon.is_nan() && s.depth.is_nan());
        assert!(parse_node_report(b"{}").is_err());
        assert!(parse_node_report(b"[").is_err());
        assert!(s.attitude.is_none(), "no wave block: no XDR");
    }

    /// A report's `wave` block (docs/formats.md §4) drives the own ship's
    /// XDR: pitch = the waves' 1.25° plus the depth pitch 0.01 rad
    /// (0.573°) = 1.82°, roll −2.50°, heave 0.180 m; other vehicles and a
    /// calm report have none.
    #[test]
    fn a_wave_block_gives_the_own_ship_an_xdr() {
        let r = br#"{"t":0,"lat":42.35,"lon":-71.08,"sog":1,"hog":0,"heading":0,"pitch":0.01,"wave":{"elevation":0.2,"heave":0.18,"roll":-2.5,"pitch":1.25}}"#;
        let mut s = parse_node_report(r).unwrap();
        s.clock = 1.7e9;
        let mut e = Engine::new(Options::default(), Some("own".into()));
        let mut out = Vec::new();
        e.update("own", &s, &mut out).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        let xdr = text.lines().find(|l| l.contains("XDR")).expect("an XDR");
        assert!(
            xdr.starts_with("$IIXDR,A,1.82,D,PTCH,A,-2.50,D,ROLL,D,0.180,M,HEAVE*"),
            "{xdr}"
        );
        out.clear();
        e.update("other", &s, &mut out).unwrap();
        assert!(!String::from_utf8(out).unwrap().contains("XDR"));
    }
}
