//! AIS messages (ITU-R M.1371): the encoder of types 1 (class A position
//! report) and 5 (static and voyage data), the `!AIVDM`/`!AIVDO` framing
//! with six-bit armouring and fill bits, and a decoder of types 1/2/3, 5,
//! 18 and 24 for AIS input. Sans-IO.
//!
//! Six-bit text (names): `@A–Z[\]^_ !"#$%&'()*+,-./0–9:;<=>?`. Lower-case
//! letters are sent as capitals; any other character (accented letters,
//! `` ` ``, `{|}~`, control characters) is dropped; the result is cut to 20
//! characters and padded with `@`.
use std::io::Write;

use super::sentence::{finish, MS_TO_KN};

/// Longest armoured payload of one fragment, characters (keeps every
/// sentence within NMEA's 82 characters).
pub const MAX_FRAGMENT_CHARS: usize = 60;

/// A growing bit string, most significant bit first.
#[derive(Debug, Default, Clone)]
pub struct Bits {
    bits: Vec<bool>,
}

impl Bits {
    /// `n` low bits of `v` (two's complement for negative values).
    pub fn push(&mut self, v: i64, n: u32) {
        for i in (0..n).rev() {
            self.bits.push((v >> i) & 1 == 1);
        }
    }

    /// `text` as `chars` six-bit characters ([`sixbit_text`]), `@`-padded.
    pub fn push_text(&mut self, text: &str, chars: usize) {
        let t = sixbit_text(text, chars);
        for c in t.bytes() {
            self.push(i64::from(sixbit_of(c).unwrap_or(0)), 6);
        }
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// No bits yet.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The armoured payload and the number of fill bits (0..=5).
    pub fn armour(&self) -> (String, u8) {
        let fill = (6 - self.bits.len() % 6) % 6;
        let mut s = String::with_capacity(self.bits.len().div_ceil(6));
        for chunk in self.bits.chunks(6) {
            let mut v = 0u8;
            for (i, b) in chunk.iter().enumerate() {
                v |= u8::from(*b) << (5 - i);
            }
            s.push(armour_char(v));
        }
        (s, fill as u8)
    }
}

/// The payload character of six-bit value `v` (0..=63).
pub fn armour_char(v: u8) -> char {
    let v = v & 63;
    char::from(if v < 40 { v + 48 } else { v + 56 })
}

/// The six-bit value of payload character `c`, if it is one.
pub fn dearmour_char(c: u8) -> Option<u8> {
    match c {
        48..=87 => Some(c - 48),
        96..=119 => Some(c - 56),
        _ => None,
    }
}

/// The six-bit text code of ASCII `c` (`@`=0 … `_`=31, space=32 … `?`=63).
fn sixbit_of(c: u8) -> Option<u8> {
    match c {
        64..=95 => Some(c - 64),
        32..=63 => Some(c),
        _ => None,
    }
}

/// `text` in the six-bit charset (see the module doc): capitals, others
/// dropped, at most `chars` characters, `@`-padded to exactly `chars`.
pub fn sixbit_text(text: &str, chars: usize) -> String {
    let mut s: String = text
        .chars()
        .map(|c| c.to_ascii_uppercase())
        .filter(|c| c.is_ascii() && sixbit_of(*c as u8).is_some())
        .take(chars)
        .collect();
    while s.len() < chars {
        s.push('@');
    }
    s
}

/// One class A position report (type 1) in physical units; out-of-range or
/// NaN values are sent as AIS's "not available".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position {
    /// MMSI (30 bits).
    pub mmsi: u32,
    /// Latitude, degrees (|lat| > 90 or NaN: not available, 91°).
    pub lat: f64,
    /// Longitude, degrees (|lon| > 180 or NaN: not available, 181°).
    pub lon: f64,
    /// Speed over ground, m/s (NaN or < 0: not available; ≥ 102.2 kn: 1022).
    pub sog_ms: f64,
    /// Course over ground, degrees true (NaN: not available).
    pub cog_deg: f64,
    /// True heading, degrees (NaN: not available, 511).
    pub heading_deg: f64,
    /// Rate of turn, degrees per minute (NaN: not available, −128).
    pub rot_deg_min: f64,
    /// UTC second of the report (0..=59; other values: 60, not available).
    pub utc_second: u32,
}

/// SOG field: 0.1 kn, 1023 not available, 1022 for 102.2 kn or more.
pub fn sog_field(sog_ms: f64) -> i64 {
    if !(sog_ms.is_finite() && sog_ms >= 0.0) {
        return 1023;
    }
    ((sog_ms * MS_TO_KN * 10.0).round() as i64).min(1022)
}

/// COG field: 0.1°, 3600 not available (also for |COG| > 1e9°).
pub fn cog_field(cog_deg: f64) -> i64 {
    let c = super::sentence::wrap360(cog_deg);
    if c.is_nan() {
        return 3600;
    }
    ((c * 10.0).round() as i64) % 3600
}

/// True heading field: whole degrees, 511 not available (also for |h| > 1e9°).
pub fn heading_field(h: f64) -> i64 {
    let h = super::sentence::wrap360(h);
    if h.is_nan() {
        return 511;
    }
    (h.round() as i64) % 360
}

/// ROT field: 4.733·√|ROT| signed (ROT in °/min), capped at ±126; −128 not
/// available.
pub fn rot_field(rot: f64) -> i64 {
    if !rot.is_finite() {
        return -128;
    }
    let v = (4.733 * rot.abs().sqrt()).round().min(126.0) as i64;
    if rot < 0.0 {
        -v
    } else {
        v
    }
}

/// Latitude field (1/10000 min), 91° not available.
pub fn lat_field(lat: f64) -> i64 {
    if lat.is_finite() && lat.abs() <= 90.0 {
        (lat * 600_000.0).round() as i64
    } else {
        91 * 600_000
    }
}

/// Longitude field (1/10000 min), 181° not available.
pub fn lon_field(lon: f64) -> i64 {
    if lon.is_finite() && lon.abs() <= 180.0 {
        (lon * 600_000.0).round() as i64
    } else {
        181 * 600_000
    }
}

/// The 168 bits of a type 1 message.
pub fn type1_bits(p: &Position) -> Bits {
    let mut b = Bits::default();
    b.push(1, 6); // message type
    b.push(0, 2); // repeat indicator
    b.push(i64::from(p.mmsi), 30);
    b.push(0, 4); // navigation status: under way using engine
    b.push(rot_field(p.rot_deg_min), 8);
    b.push(sog_field(p.sog_ms), 10);
    b.push(0, 1); // position accuracy: low (> 10 m), the default
    b.push(lon_field(p.lon), 28);
    b.push(lat_field(p.lat), 27);
    b.push(cog_field(p.cog_deg), 12);
    b.push(heading_field(p.heading_deg), 9);
    b.push(i64::from(p.utc_second.min(60)), 6);
    b.push(0, 2); // manoeuvre indicator: not available
    b.push(0, 3); // spare
    b.push(0, 1); // RAIM not in use
    b.push(0, 19); // radio status
    b
}

/// Static and voyage data (type 5).
#[derive(Debug, Clone, PartialEq)]
pub struct Static {
    /// MMSI.
    pub mmsi: u32,
    /// Vessel name (six-bit, 20 characters).
    pub name: String,
    /// AIS ship type 0..=99 (0: not available).
    pub ship_type: u8,
    /// Overall length, m (0: not available).
    pub length_m: f64,
    /// Beam, m (0: not available).
    pub beam_m: f64,
}

/// Dimensions to bow, stern, port, starboard (m) of a vessel of `length_m`
/// × `beam_m` whose reference point is amidships: the length rounded to
/// whole metres (at least 1 when > 0), half of it to the bow (the larger
/// half), capped at the fields' 511/511/63/63.
pub fn dimensions(length_m: f64, beam_m: f64) -> (i64, i64, i64, i64) {
    let whole = |v: f64, cap: f64| -> i64 {
        if v.is_finite() && v > 0.0 {
            v.round().clamp(1.0, cap) as i64
        } else {
            0
        }
    };
    let l = whole(length_m, 1022.0);
    let w = whole(beam_m, 126.0);
    let bow = (l - l / 2).min(511);
    let port = (w - w / 2).min(63);
    (bow, (l / 2).min(511), port, (w / 2).min(63))
}

/// The 424 bits of a type 5 message.
pub fn type5_bits(s: &Static) -> Bits {
    let mut b = Bits::default();
    b.push(5, 6);
    b.push(0, 2);
    b.push(i64::from(s.mmsi), 30);
    b.push(0, 2); // AIS version: ITU-R M.1371-1
    b.push(0, 30); // IMO number: not available
    b.push_text("", 7); // call sign: not available
    b.push_text(&s.name, 20);
    b.push(i64::from(s.ship_type), 8);
    let (bow, stern, port, stbd) = dimensions(s.length_m, s.beam_m);
    b.push(bow, 9);
    b.push(stern, 9);
    b.push(port, 6);
    b.push(stbd, 6);
    b.push(0, 4); // EPFD: undefined
    b.push(0, 4); // ETA month: not available
    b.push(0, 5); // day
    b.push(24, 5); // hour
    b.push(60, 6); // minute
    b.push(0, 8); // draught: not available
    b.push_text("", 20); // destination
    b.push(0, 1); // DTE available
    b.push(0, 1); // spare
    b
}

/// Frame `bits` as `!{talker}{kind}` sentences (`kind` `VDM` for other
/// ships, `VDO` for own ship) on channel A, in as many fragments as needed
/// (each payload ≤ [`MAX_FRAGMENT_CHARS`]); a multi-fragment message gets
/// sequential id `seq` (0..=9). Appends the lines to `out`.
pub fn frame(out: &mut Vec<u8>, talker: &str, kind: &str, bits: &Bits, seq: u8) {
    let (payload, fill) = bits.armour();
    let chunks: Vec<&[u8]> = payload.as_bytes().chunks(MAX_FRAGMENT_CHARS).collect();
    let n = chunks.len().max(1);
    let mut body = Vec::with_capacity(90);
    for (i, chunk) in chunks.iter().enumerate() {
        body.clear();
        let last = i + 1 == n;
        let _ = write!(body, "{talker}{kind},{n},{},", i + 1);
        if n > 1 {
            let _ = write!(body, "{}", seq % 10);
        }
        body.extend_from_slice(b",A,");
        body.extend_from_slice(chunk);
        let _ = write!(body, ",{}", if last { fill } else { 0 });
        finish(out, b'!', &body);
    }
}

/// A decoded AIS message of a type [`decode`] knows, in physical units
/// (`None`: absent or "not available").
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Decoded {
    /// Message type.
    #[serde(rename = "type")]
    pub msg_type: u8,
    /// MMSI.
    pub mmsi: u32,
    /// Latitude, degrees.
    pub lat: Option<f64>,
    /// Longitude, degrees.
    pub lon: Option<f64>,
    /// Speed over ground, knots.
    pub sog_kn: Option<f64>,
    /// Course over ground, degrees true.
    pub cog_deg: Option<f64>,
    /// True heading, degrees.
    pub heading_deg: Option<u16>,
    /// Vessel name (trailing `@` and spaces removed).
    pub name: Option<String>,
    /// Ship type.
    pub ship_type: Option<u8>,
    /// Length (bow + stern), m.
    pub length_m: Option<u16>,
    /// Beam (port + starboard), m.
    pub beam_m: Option<u16>,
}

/// Reads a de-armoured payload.
struct Reader<'a> {
    bits: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn u(&mut self, n: usize) -> Option<u64> {
        let mut v = 0u64;
        for _ in 0..n {
            let byte = *self.bits.get(self.pos / 6)?;
            v = (v << 1) | u64::from((byte >> (5 - self.pos % 6)) & 1);
            self.pos += 1;
        }
        Some(v)
    }

    fn i(&mut self, n: usize) -> Option<i64> {
        let v = self.u(n)? as i64;
        Some(if (v >> (n - 1)) & 1 == 1 {
            v - (1 << n)
        } else {
            v
        })
    }

    fn text(&mut self, chars: usize) -> Option<String> {
        let mut s = String::with_capacity(chars);
        for _ in 0..chars {
            let c = self.u(6)? as u8;
            s.push(char::from(if c < 32 { c + 64 } else { c }));
        }
        let t = s.trim_end_matches(['@', ' ']).to_string();
        Some(t)
    }

    fn skip(&mut self, n: usize) {
        self.pos += n;
    }
}

fn latlon(lat: i64, lon: i64) -> (Option<f64>, Option<f64>) {
    let lat = lat as f64 / 600_000.0;
    let lon = lon as f64 / 600_000.0;
    (
        (lat.abs() <= 90.0).then_some(lat),
        (lon.abs() <= 180.0).then_some(lon),
    )
}

/// Decode one whole armoured payload (fragments joined; fill bits are
/// ignored: every field read must lie within the payload). `None` for a
/// bad character, a type not listed in the module doc, or a payload too
/// short for its type.
pub fn decode(payload: &[u8]) -> Option<Decoded> {
    let six: Vec<u8> = payload
        .iter()
        .map(|&c| dearmour_char(c))
        .collect::<Option<_>>()?;
    let mut r = Reader { bits: &six, pos: 0 };
    let msg_type = r.u(6)? as u8;
    r.skip(2);
    let mmsi = r.u(30)? as u32;
    let mut d = Decoded {
        msg_type,
        mmsi,
        ..Decoded::default()
    };
    let sog = |v: u64| (v != 1023).then_some(v as f64 / 10.0);
    let cog = |v: u64| (v < 3600).then_some(v as f64 / 10.0);
    let hdg = |v: u64| (v < 360).then_some(v as u16);
    match msg_type {
        1..=3 => {
            r.skip(4 + 8);
            d.sog_kn = sog(r.u(10)?);
            r.skip(1);
            let lon = r.i(28)?;
            let lat = r.i(27)?;
            (d.lat, d.lon) = latlon(lat, lon);
            d.cog_deg = cog(r.u(12)?);
            d.heading_deg = hdg(r.u(9)?);
        }
        18 => {
            r.skip(8);
            d.sog_kn = sog(r.u(10)?);
            r.skip(1);
            let lon = r.i(28)?;
            let lat = r.i(27)?;
            (d.lat, d.lon) = latlon(lat, lon);
            d.cog_deg = cog(r.u(12)?);
            d.heading_deg = hdg(r.u(9)?);
        }
        5 => {
            r.skip(2 + 30 + 42);
            d.name = Some(r.text(20)?);
            d.ship_type = Some(r.u(8)? as u8);
            let (bow, stern, port, stbd) = (r.u(9)?, r.u(9)?, r.u(6)?, r.u(6)?);
            d.length_m = Some((bow + stern) as u16);
            d.beam_m = Some((port + stbd) as u16);
        }
        24 => match r.u(2)? {
            0 => d.name = Some(r.text(20)?),
            1 => {
                d.ship_type = Some(r.u(8)? as u8);
                r.skip(18 + 24 + 42);
                let (bow, stern, port, stbd) = (r.u(9)?, r.u(9)?, r.u(6)?, r.u(6)?);
                d.length_m = Some((bow + stern) as u16);
                d.beam_m = Some((port + stbd) as u16);
            }
            _ => return None,
        },
        _ => return None,
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armouring_is_the_standard_table() {
        assert_eq!(armour_char(0), '0');
        assert_eq!(armour_char(39), 'W');
        assert_eq!(armour_char(40), '`');
        assert_eq!(armour_char(63), 'w');
        for v in 0..64u8 {
            assert_eq!(dearmour_char(armour_char(v) as u8), Some(v));
        }
        assert_eq!(dearmour_char(b'X'), None);
    }

    #[test]
    fn names_are_mapped_or_dropped() {
        assert_eq!(sixbit_text("kayak-1", 9), "KAYAK-1@@");
        assert_eq!(sixbit_text("Ålesund{x}", 8), "LESUNDX@");
        assert_eq!(sixbit_text("a_very_long_name_indeed_yes", 20).len(), 20);
    }

    #[test]
    fn type1_is_168_bits_and_round_trips() {
        let p = Position {
            mmsi: 200_123_456,
            lat: 43.825,
            lon: -70.33,
            sog_ms: 2.0,
            cog_deg: 359.96,
            heading_deg: f64::NAN,
            rot_deg_min: f64::NAN,
            utc_second: 7,
        };
        let b = type1_bits(&p);
        assert_eq!(b.len(), 168);
        let (payload, fill) = b.armour();
        assert_eq!((payload.len(), fill), (28, 0));
        let d = decode(payload.as_bytes()).unwrap();
        assert_eq!(d.mmsi, 200_123_456);
        assert!((d.lat.unwrap() - 43.825).abs() < 1e-6);
        assert!((d.lon.unwrap() + 70.33).abs() < 1e-6);
        assert_eq!(d.sog_kn, Some(3.9)); // 2 m/s = 3.888 kn
        assert_eq!(d.cog_deg, Some(0.0)); // 359.96 rounds to 360.0 = 0.0
        assert_eq!(d.heading_deg, None);
    }

    #[test]
    fn not_available_values() {
        assert_eq!(sog_field(f64::NAN), 1023);
        assert_eq!(sog_field(-1.0), 1023);
        assert_eq!(sog_field(1e9), 1022);
        assert_eq!(cog_field(f64::INFINITY), 3600);
        assert_eq!(heading_field(f64::NAN), 511);
        assert_eq!(lat_field(95.0), 91 * 600_000);
        assert_eq!(lon_field(-1e300), 181 * 600_000);
        assert_eq!(rot_field(f64::NAN), -128);
        assert_eq!(rot_field(-1e9), -126);
    }

    #[test]
    fn type5_is_two_fragments_with_two_fill_bits() {
        let s = Static {
            mmsi: 200_000_001,
            name: "alpha".into(),
            ship_type: 37,
            length_m: 4.2,
            beam_m: 1.0,
        };
        let b = type5_bits(&s);
        assert_eq!(b.len(), 424);
        let mut out = Vec::new();
        frame(&mut out, "AI", "VDM", &b, 3);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("!AIVDM,2,1,3,A,"), "{}", lines[0]);
        assert!(lines[1].starts_with("!AIVDM,2,2,3,A,"), "{}", lines[1]);
        assert!(lines[1].contains(",2*"), "{}", lines[1]);
        assert!(lines.iter().all(|l| l.len() <= 82));
        let joined: String = lines.iter().map(|l| l.split(',').nth(5).unwrap()).collect();
        let d = decode(joined.as_bytes()).unwrap();
        assert_eq!(d.name.as_deref(), Some("ALPHA"));
        assert_eq!(
            (d.length_m, d.beam_m, d.ship_type),
            (Some(4), Some(1), Some(37))
        );
    }
}
