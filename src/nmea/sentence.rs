//! NMEA 0183 own-ship sentences (`GGA`, `RMC`, `VTG`, `HDT`, `ZDA`, `DPT`,
//! `XDR`),
//! their checksum and the UTC date/time of a Unix clock. Sans-IO: each
//! function appends one sentence, `\r\n` included, to a byte buffer.
//!
//! A number the vehicle does not have (NaN) is written as an empty field,
//! never as `NaN`; a position outside ±90°/±180° counts as no fix.
use std::io::Write;

/// Metres per second to knots (1 kn = 1852 m / 3600 s).
pub const MS_TO_KN: f64 = 3600.0 / 1852.0;
/// Metres per second to km/h.
pub const MS_TO_KMH: f64 = 3.6;

/// XOR of the bytes between the leading `$`/`!` and the `*` (exclusive).
pub fn checksum(body: &[u8]) -> u8 {
    body.iter().fold(0u8, |a, b| a ^ b)
}

/// Append `start` (`$` or `!`), `body`, `*HH` and `\r\n` to `out`.
pub fn finish(out: &mut Vec<u8>, start: u8, body: &[u8]) {
    out.push(start);
    out.extend_from_slice(body);
    let _ = write!(out, "*{:02X}\r\n", checksum(body));
}

/// A UTC instant broken down: date and time of day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Utc {
    /// Year (1970..=9999).
    pub year: i64,
    /// Month 1..=12.
    pub month: u32,
    /// Day of month 1..=31.
    pub day: u32,
    /// Hour 0..=23.
    pub hour: u32,
    /// Minute 0..=59.
    pub minute: u32,
    /// Seconds of the minute, 0 ≤ s < 60 (hundredths kept).
    pub second: f64,
}

/// Latest clock [`utc`] accepts: 9999-12-31T23:59:59 UTC, Unix s.
pub const MAX_CLOCK_S: f64 = 253_402_300_799.0;

/// The UTC date and time of Unix clock `clock_s` (s); `None` before 1970 or
/// after year 9999 or when not finite (the time fields are left empty).
/// Seconds are rounded to hundredths first, so `hhmmss.ss` never shows 60.
pub fn utc(clock_s: f64) -> Option<Utc> {
    if !(clock_s.is_finite() && (0.0..=MAX_CLOCK_S).contains(&clock_s)) {
        return None;
    }
    let centis = (clock_s * 100.0).round() as i64;
    let days = centis.div_euclid(8_640_000);
    let rem = centis.rem_euclid(8_640_000);
    // Civil date of a day count since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Some(Utc {
        year,
        month,
        day,
        hour: (rem / 360_000) as u32,
        minute: (rem / 6000 % 60) as u32,
        second: (rem % 6000) as f64 / 100.0,
    })
}

fn push_time(b: &mut Vec<u8>, u: Option<&Utc>) {
    if let Some(u) = u {
        let _ = write!(b, "{:02}{:02}{:05.2}", u.hour, u.minute, u.second);
    }
}

/// `ddmm.mmmmm,N` / `dddmm.mmmmm,E` (minutes to 1e-5, about 2 cm), or two
/// empty fields. `lat`/`lon` in degrees, already checked in range.
fn push_pos(b: &mut Vec<u8>, pos: Option<(f64, f64)>) {
    let Some((lat, lon)) = pos else {
        b.extend_from_slice(b",,,");
        return;
    };
    let split = |v: f64| {
        // Round to the last written digit first so 59.999995' never prints as 60'.
        let m = (v.abs() * 60.0 * 1e5).round() as u64;
        (m / 6_000_000, (m % 6_000_000) as f64 / 1e5)
    };
    let (d, m) = split(lat);
    let _ = write!(b, "{d:02}{m:08.5},{}", if lat < 0.0 { 'S' } else { 'N' });
    let (d, m) = split(lon);
    let _ = write!(b, ",{d:03}{m:08.5},{}", if lon < 0.0 { 'W' } else { 'E' });
}

/// Largest |value| written into a numeric field (depth, speed, ...): beyond
/// it the field is left empty, so no sentence outgrows 82 characters.
pub const MAX_FIELD: f64 = 1e6;

fn push_num(b: &mut Vec<u8>, v: f64, decimals: usize) {
    if v.abs() < MAX_FIELD {
        let _ = write!(b, "{v:.decimals$}");
    }
}

/// Largest |angle| taken as an angle, degrees: beyond it the value is
/// garbage (its remainder by 360 means nothing) and is "not available".
pub const MAX_ANGLE_DEG: f64 = 1e9;

/// Degrees into [0, 360); NaN for NaN, infinities and |d| > [`MAX_ANGLE_DEG`].
pub fn wrap360(d: f64) -> f64 {
    if d.is_nan() || d.abs() > MAX_ANGLE_DEG {
        return f64::NAN;
    }
    let w = d.rem_euclid(360.0);
    // rem_euclid of a tiny negative number can round to 360.0.
    if w >= 360.0 {
        0.0
    } else {
        w
    }
}

/// A position in range: latitude within ±90°, longitude wrapped into
/// [−180, 180); `None` when either is NaN or the latitude is out of range.
pub fn valid_pos(lat: f64, lon: f64) -> Option<(f64, f64)> {
    if !(lat.is_finite() && lon.is_finite() && lat.abs() <= 90.0) {
        return None;
    }
    let lon = (lon + 180.0).rem_euclid(360.0) - 180.0;
    Some((lat, if lon >= 180.0 { -180.0 } else { lon }))
}

/// A simulated GNSS receiver's state (from the vehicle's `[sensors]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpsStatus {
    /// GGA fix quality: 0 no fix, 1 GPS, 2 DGPS, 4 RTK, 5 float RTK,
    /// 6 estimated, 7 manual, 8 simulation.
    pub quality: u8,
    /// Satellites in use (0..=99).
    pub satellites: u8,
    /// Horizontal dilution of precision (NaN: empty field).
    pub hdop: f64,
}

impl GpsStatus {
    /// The NMEA 2.3 mode indicator of RMC and VTG for this fix quality:
    /// `N` no fix, `A` autonomous, `D` differential, `R` RTK, `F` float
    /// RTK, `E` estimated, `M` manual, `S` simulator.
    pub fn mode(&self) -> u8 {
        match self.quality {
            0 => b'N',
            2 => b'D',
            4 => b'R',
            5 => b'F',
            6 => b'E',
            7 => b'M',
            8 => b'S',
            _ => b'A',
        }
    }
}

/// The own-ship values the sentences carry.
#[derive(Debug, Clone, Copy)]
pub struct Fix {
    /// UTC of the vehicle clock (empty fields when `None`).
    pub utc: Option<Utc>,
    /// Latitude, longitude in degrees (`None`: no fix).
    pub pos: Option<(f64, f64)>,
    /// Speed over ground, m/s (NaN: empty).
    pub sog_ms: f64,
    /// Course over ground, degrees true (NaN: empty).
    pub cog_deg: f64,
    /// Heading, degrees true (NaN: empty).
    pub heading_deg: f64,
    /// Depth below the surface, m (GGA altitude is −depth).
    pub depth_m: f64,
    /// Water below the vehicle (altitude above the bottom), m (NaN: unknown).
    pub altitude_m: f64,
    /// The receiver's state with `[sensors]`; `None`: the placeholders of
    /// a perfect simulated receiver (quality 8, 12 satellites, HDOP 1.0,
    /// mode `S`).
    pub gps: Option<GpsStatus>,
    /// The hull's attitude and heave in a sea (`None`: no `[sea]`, no `XDR`).
    pub attitude: Option<Attitude>,
}

/// The hull's attitude in a sea (docs/nmea.md, "Sea state"): degrees and m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attitude {
    /// Pitch, degrees, bow up positive: the model's depth pitch plus the
    /// waves' (as `NAV_PITCH`, which is in radians).
    pub pitch_deg: f64,
    /// Roll, degrees, starboard down (port up) positive.
    pub roll_deg: f64,
    /// Heave, m, up positive.
    pub heave_m: f64,
}

impl Fix {
    /// Whether the position fields are filled: a position and, with a
    /// receiver state, a fix quality above 0.
    fn has_fix(&self) -> bool {
        self.pos.is_some() && self.gps.is_none_or(|g| g.quality > 0)
    }

    /// The RMC/VTG mode indicator: `S` without a receiver state.
    fn mode(&self) -> u8 {
        match self.gps {
            None => b'S',
            Some(g) if self.pos.is_none() => GpsStatus { quality: 0, ..g }.mode(),
            Some(g) => g.mode(),
        }
    }
}

/// `$ttGGA,hhmmss.ss,lat,N,lon,E,q,ss,h.h,alt,M,0.0,M,,*hh`: fix quality,
/// satellites and HDOP of the receiver state ([`Fix::gps`]; without one
/// quality 8 (simulation), 12 satellites and HDOP 1.0 as placeholders),
/// altitude above mean sea level = −depth (m, 0.01). Without a fix:
/// quality 0, `00` satellites, empty position, HDOP and altitude.
pub fn gga(out: &mut Vec<u8>, talker: &str, f: &Fix) {
    let mut b = Vec::with_capacity(80);
    let _ = write!(b, "{talker}GGA,");
    push_time(&mut b, f.utc.as_ref());
    b.push(b',');
    if f.has_fix() {
        push_pos(&mut b, f.pos);
        match f.gps {
            None => b.extend_from_slice(b",8,12,1.0,"),
            Some(g) => {
                let _ = write!(b, ",{},{:02},", g.quality.min(9), g.satellites.min(99));
                if g.hdop > 0.0 {
                    push_num(&mut b, g.hdop.min(99.9), 1);
                }
                b.push(b',');
            }
        }
        push_num(
            &mut b,
            if f.depth_m.is_finite() {
                -f.depth_m
            } else {
                0.0
            } + 0.0,
            2,
        );
        b.extend_from_slice(b",M,0.0,M,,");
    } else {
        push_pos(&mut b, None);
        b.extend_from_slice(b",0,00,,,M,,M,,");
    }
    finish(out, b'$', &b);
}

/// `$ttRMC,hhmmss.ss,A,lat,N,lon,E,sog,cog,ddmmyy,,,S*hh`: status `A` with a
/// fix (`V` and an empty position without), SOG in knots (0.01), COG in
/// degrees true (0.1), mode indicator `S` (simulator; with a receiver
/// state, [`GpsStatus::mode`]: `N` without a fix).
pub fn rmc(out: &mut Vec<u8>, talker: &str, f: &Fix) {
    let mut b = Vec::with_capacity(80);
    let _ = write!(b, "{talker}RMC,");
    push_time(&mut b, f.utc.as_ref());
    let fix = f.has_fix();
    b.extend_from_slice(if fix { b",A," } else { b",V," });
    push_pos(&mut b, f.pos.filter(|_| fix));
    b.push(b',');
    push_num(&mut b, f.sog_ms * MS_TO_KN, 2);
    b.push(b',');
    push_num(&mut b, wrap360(f.cog_deg), 1);
    b.push(b',');
    if let Some(u) = &f.utc {
        let _ = write!(b, "{:02}{:02}{:02}", u.day, u.month, u.year % 100);
    }
    b.extend_from_slice(b",,,");
    b.push(f.mode());
    finish(out, b'$', &b);
}

/// `$ttVTG,cog,T,,M,sog,N,sog,K,S*hh`: COG degrees true (0.1), SOG in knots
/// and km/h (0.01), mode `S` (with a receiver state, [`GpsStatus::mode`]).
pub fn vtg(out: &mut Vec<u8>, talker: &str, f: &Fix) {
    let mut b = Vec::with_capacity(64);
    let _ = write!(b, "{talker}VTG,");
    push_num(&mut b, wrap360(f.cog_deg), 1);
    b.extend_from_slice(b",T,,M,");
    push_num(&mut b, f.sog_ms * MS_TO_KN, 2);
    b.extend_from_slice(b",N,");
    push_num(&mut b, f.sog_ms * MS_TO_KMH, 2);
    b.extend_from_slice(b",K,");
    b.push(f.mode());
    finish(out, b'$', &b);
}

/// `$ttHDT,hdg,T*hh`: heading, degrees true (0.1).
pub fn hdt(out: &mut Vec<u8>, talker: &str, f: &Fix) {
    let mut b = Vec::with_capacity(24);
    let _ = write!(b, "{talker}HDT,");
    push_num(&mut b, wrap360(f.heading_deg), 1);
    b.extend_from_slice(b",T");
    finish(out, b'$', &b);
}

/// `$ttZDA,hhmmss.ss,dd,mm,yyyy,00,00*hh`: UTC date and time, local zone 0.
pub fn zda(out: &mut Vec<u8>, talker: &str, f: &Fix) {
    let mut b = Vec::with_capacity(40);
    let _ = write!(b, "{talker}ZDA,");
    push_time(&mut b, f.utc.as_ref());
    match &f.utc {
        Some(u) => {
            let _ = write!(b, ",{:02},{:02},{:04},00,00", u.day, u.month, u.year);
        }
        None => b.extend_from_slice(b",,,,,"),
    }
    finish(out, b'$', &b);
}

/// `$ttDPT,water,offset*hh`: water below the vehicle (its altitude above the
/// bottom, m, 0.01; empty when unknown) and the transducer offset = the
/// vehicle's depth (m, 0.01; positive: transducer to waterline, so water
/// depth = water + offset).
pub fn dpt(out: &mut Vec<u8>, talker: &str, f: &Fix) {
    let mut b = Vec::with_capacity(32);
    let _ = write!(b, "{talker}DPT,");
    push_num(&mut b, f.altitude_m, 2);
    b.push(b',');
    push_num(
        &mut b,
        if f.depth_m.is_finite() {
            f.depth_m
        } else {
            0.0
        },
        2,
    );
    finish(out, b'$', &b);
}

/// `$ttXDR,A,pitch,D,PTCH,A,roll,D,ROLL,D,heave,M,HEAVE*hh`: three
/// transducers of NMEA 0183's `XDR` (type `A` angular displacement in
/// degrees, 0.01; type `D` linear displacement in metres, 0.001) with the
/// IDs `PTCH`, `ROLL` and `HEAVE`. Only with an attitude; a NaN value is
/// an empty field.
pub fn xdr(out: &mut Vec<u8>, talker: &str, f: &Fix) {
    let Some(a) = f.attitude else {
        return;
    };
    let mut b = Vec::with_capacity(64);
    let _ = write!(b, "{talker}XDR,A,");
    push_num(&mut b, a.pitch_deg, 2);
    b.extend_from_slice(b",D,PTCH,A,");
    push_num(&mut b, a.roll_deg, 2);
    b.extend_from_slice(b",D,ROLL,D,");
    push_num(&mut b, a.heave_m, 3);
    b.extend_from_slice(b",M,HEAVE");
    finish(out, b'$', &b);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_a_textbook_sentence() {
        // The GGA example of the NMEA 0183 literature (gpsd's "NMEA revealed").
        let body = b"GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,";
        assert_eq!(checksum(body), 0x47);
    }

    #[test]
    fn utc_of_known_instants() {
        let u = utc(0.0).unwrap();
        assert_eq!((u.year, u.month, u.day, u.hour), (1970, 1, 1, 0));
        // 2000-02-29T12:34:56.78Z (`date -u -d 2000-02-29T12:34:56 +%s` = 951827696)
        let u = utc(951_827_696.78).unwrap();
        assert_eq!((u.year, u.month, u.day), (2000, 2, 29));
        assert_eq!((u.hour, u.minute), (12, 34));
        assert!((u.second - 56.78).abs() < 1e-9);
        // 59.999 s rounds to the next minute, never to "60.00".
        let u = utc(59.999).unwrap();
        assert_eq!((u.minute, u.second), (1, 0.0));
        assert!(utc(-1.0).is_none() && utc(f64::NAN).is_none() && utc(1e300).is_none());
    }

    #[test]
    fn no_position_no_nan() {
        let f = Fix {
            utc: None,
            pos: None,
            sog_ms: f64::NAN,
            cog_deg: f64::NAN,
            heading_deg: f64::NAN,
            depth_m: f64::NAN,
            altitude_m: f64::NAN,
            gps: None,
            attitude: None,
        };
        let mut out = Vec::new();
        for s in [gga, rmc, vtg, hdt, zda, dpt] {
            s(&mut out, "GP", &f);
        }
        let text = String::from_utf8(out).unwrap();
        assert!(!text.to_lowercase().contains("nan"), "{text}");
        assert!(text.contains(",V,"), "{text}");
        assert!(valid_pos(91.0, 0.0).is_none());
        assert_eq!(valid_pos(10.0, 190.0), Some((10.0, -170.0)));
    }
}
