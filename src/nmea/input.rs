//! AIS input (`usim nmea --ais-in`): `!AIVDM`/`!AIVDO` lines from outside,
//! checksums verified, fragments joined, payloads decoded
//! ([`super::ais::decode`]) and merged per MMSI into the JSON target
//! published on `{root}/ais/{MMSI}`. Sans-IO and bounded: at most
//! [`MAX_PENDING`] unfinished multi-fragment messages and [`MAX_TARGETS`]
//! targets are held (a new MMSI beyond makes it forget the target heard
//! least recently); lines longer than [`MAX_LINE`] are refused.
use std::collections::HashMap;

use super::ais::{decode, Decoded};
use super::recent::Recent;
use super::sentence::checksum;

/// Longest line accepted, bytes (NMEA says 82; some senders add tag blocks).
pub const MAX_LINE: usize = 512;
/// Most unfinished multi-fragment messages held (oldest dropped).
pub const MAX_PENDING: usize = 64;
/// Most fragments of one message.
pub const MAX_FRAGMENTS: usize = 9;
/// Most targets remembered (beyond: the one heard least recently is forgotten).
pub const MAX_TARGETS: usize = 10_000;

/// One external AIS target as published: the last known value of each field.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Target {
    /// MMSI.
    pub mmsi: u32,
    /// Type of the last message.
    pub last_type: u8,
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
    /// Name.
    pub name: Option<String>,
    /// AIS ship type.
    pub ship_type: Option<u8>,
    /// Length, m.
    pub length_m: Option<u16>,
    /// Beam, m.
    pub beam_m: Option<u16>,
}

impl Target {
    fn merge(&mut self, d: &Decoded) {
        self.last_type = d.msg_type;
        if matches!(d.msg_type, 1..=3 | 18) {
            self.lat = d.lat;
            self.lon = d.lon;
            self.sog_kn = d.sog_kn;
            self.cog_deg = d.cog_deg;
            self.heading_deg = d.heading_deg;
        }
        if d.name.is_some() {
            self.name.clone_from(&d.name);
        }
        if d.ship_type.is_some() {
            self.ship_type = d.ship_type;
        }
        if d.length_m.is_some() {
            self.length_m = d.length_m;
            self.beam_m = d.beam_m;
        }
    }
}

/// Why a line was not used.
#[derive(Debug, Clone, PartialEq)]
pub enum LineError {
    /// Longer than [`MAX_LINE`].
    TooLong,
    /// Not `!xxVDM`/`!xxVDO` with seven fields and `*HH`.
    Malformed(&'static str),
    /// The checksum does not match.
    Checksum,
    /// A payload of a type not decoded, or too short for its type.
    Undecodable,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::TooLong => write!(f, "line longer than {MAX_LINE} bytes"),
            LineError::Malformed(why) => write!(f, "not an AIS sentence: {why}"),
            LineError::Checksum => write!(f, "checksum mismatch"),
            LineError::Undecodable => write!(f, "payload of an unsupported type or too short"),
        }
    }
}

#[derive(Debug)]
struct Pending {
    total: usize,
    parts: Vec<Vec<u8>>,
    age: u64,
}

/// Joins fragments and keeps the targets.
#[derive(Debug)]
pub struct AisInput {
    pending: HashMap<(u8, u8), Pending>,
    targets: Recent<u32, Target>,
    forgotten: u64,
    lines: u64,
}

impl Default for AisInput {
    fn default() -> Self {
        AisInput::with_capacity(MAX_TARGETS)
    }
}

impl AisInput {
    /// An empty input.
    pub fn new() -> AisInput {
        AisInput::default()
    }

    /// An empty input remembering at most `cap` targets.
    pub fn with_capacity(cap: usize) -> AisInput {
        AisInput {
            pending: HashMap::new(),
            targets: Recent::new(cap),
            forgotten: 0,
            lines: 0,
        }
    }

    /// Targets known.
    pub fn targets(&self) -> usize {
        self.targets.len()
    }

    /// The target of `mmsi`, if known.
    pub fn target(&self, mmsi: u32) -> Option<&Target> {
        self.targets.get(&mmsi)
    }

    /// Targets forgotten so far to make room for new ones.
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }

    /// One line (without its line end; a trailing `\r` is ignored). Returns
    /// the target updated by a complete message, `None` while a
    /// multi-fragment message is incomplete.
    pub fn line(&mut self, line: &[u8]) -> Result<Option<&Target>, LineError> {
        self.lines += 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > MAX_LINE {
            return Err(LineError::TooLong);
        }
        // A tag block (`\...\`) may precede the sentence.
        let start = line
            .iter()
            .position(|&b| b == b'!')
            .ok_or(LineError::Malformed("no '!'"))?;
        let s = &line[start + 1..];
        let star = s
            .iter()
            .rposition(|&b| b == b'*')
            .ok_or(LineError::Malformed("no '*'"))?;
        let (body, ck) = (&s[..star], &s[star + 1..]);
        let ck = std::str::from_utf8(ck)
            .ok()
            .filter(|c| c.len() == 2)
            .and_then(|c| u8::from_str_radix(c, 16).ok())
            .ok_or(LineError::Malformed("bad checksum field"))?;
        if ck != checksum(body) {
            return Err(LineError::Checksum);
        }
        let f: Vec<&[u8]> = body.split(|&b| b == b',').collect();
        if f.len() != 7 || f[0].len() != 5 || !(f[0].ends_with(b"VDM") || f[0].ends_with(b"VDO")) {
            return Err(LineError::Malformed("not !xxVDM/!xxVDO with 7 fields"));
        }
        let num =
            |b: &[u8]| -> Option<usize> { std::str::from_utf8(b).ok()?.parse::<usize>().ok() };
        let total = num(f[1]).filter(|n| (1..=MAX_FRAGMENTS).contains(n));
        let index = num(f[2]);
        let (Some(total), Some(index)) = (total, index) else {
            return Err(LineError::Malformed("bad fragment count or number"));
        };
        if index == 0 || index > total {
            return Err(LineError::Malformed("fragment number out of range"));
        }
        let payload = f[5];
        let whole: Vec<u8> = if total == 1 {
            payload.to_vec()
        } else {
            let seq = f[3].first().copied().unwrap_or(b'-');
            let chan = f[4].first().copied().unwrap_or(b'-');
            let key = (seq, chan);
            if index == 1 {
                if self.pending.len() >= MAX_PENDING && !self.pending.contains_key(&key) {
                    // Drop the oldest unfinished message.
                    if let Some(old) = self
                        .pending
                        .iter()
                        .min_by_key(|(_, p)| p.age)
                        .map(|(k, _)| *k)
                    {
                        self.pending.remove(&old);
                    }
                }
                self.pending.insert(
                    key,
                    Pending {
                        total,
                        parts: vec![payload.to_vec()],
                        age: self.lines,
                    },
                );
                return Ok(None);
            }
            let Some(p) = self.pending.get_mut(&key) else {
                return Err(LineError::Malformed("fragment without its first part"));
            };
            if p.total != total || p.parts.len() + 1 != index {
                self.pending.remove(&key);
                return Err(LineError::Malformed("fragment out of order"));
            }
            p.parts.push(payload.to_vec());
            if index < total {
                return Ok(None);
            }
            let Some(p) = self.pending.remove(&key) else {
                return Ok(None);
            };
            p.parts.concat()
        };
        let d = decode(&whole).ok_or(LineError::Undecodable)?;
        let (t, gone) = self.targets.heard(&d.mmsi, || Target {
            mmsi: d.mmsi,
            ..Target::default()
        });
        if gone.is_some() {
            self.forgotten += 1;
        }
        t.merge(&d);
        Ok(Some(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_textbook_type1() {
        // A widely published example (gpsd's AIVDM/AIVDO protocol decoding
        // notes): MMSI 477553000, SOG 0.0, COG 51.0, heading 181.
        let mut a = AisInput::new();
        let t = a
            .line(b"!AIVDM,1,1,,B,177KQJ5000G?tO`K>RA1wUbN0TKH,0*5C")
            .unwrap()
            .unwrap();
        assert_eq!(t.mmsi, 477_553_000);
        assert_eq!(t.heading_deg, Some(181));
        assert_eq!(t.cog_deg, Some(51.0));
        assert_eq!(t.sog_kn, Some(0.0));
        assert!(a
            .line(b"!AIVDM,1,1,,B,177KQJ5000G?tO`K>RA1wUbN0TKH,0*5D")
            .is_err());
        assert!(a
            .line(b"!AIVDM,1,1,,B,177KQJ5000G?tO`K>RA1wUbN0TKH,0")
            .is_err());
        assert!(a.line(b"garbage").is_err());
    }

    #[test]
    fn a_burst_of_one_off_mmsis_does_not_shut_out_a_new_target() {
        let mut a = AisInput::new();
        let line = |mmsi: u32| {
            let p = crate::nmea::ais::Position {
                mmsi,
                lat: 43.8,
                lon: -70.3,
                sog_ms: 1.0,
                cog_deg: 90.0,
                heading_deg: 90.0,
                rot_deg_min: 0.0,
                utc_second: 5,
            };
            let mut out = Vec::new();
            crate::nmea::ais::frame(&mut out, "AI", "VDM", &crate::nmea::ais::type1_bits(&p), 0);
            out.truncate(out.len() - 2);
            out
        };
        a.line(&line(366_000_001)).unwrap();
        for i in 0..MAX_TARGETS as u32 {
            assert!(a.line(&line(200_000_000 + i)).unwrap().is_some());
        }
        assert_eq!(a.targets(), MAX_TARGETS);
        assert_eq!(a.forgotten(), 1, "the first, heard least recently");
        assert!(a.target(366_000_001).is_none());
        // A new MMSI after the burst is taken (the oldest of the burst goes).
        let t = a.line(&line(366_000_002)).unwrap().unwrap();
        assert_eq!(t.mmsi, 366_000_002);
        assert!(a.target(200_000_000).is_none() && a.target(200_000_001).is_some());
        assert_eq!(a.targets(), MAX_TARGETS);
    }

    #[test]
    fn joins_fragments_of_our_type5() {
        let s = crate::nmea::ais::Static {
            mmsi: 200_000_002,
            name: "beta".into(),
            ship_type: 52,
            length_m: 30.0,
            beam_m: 8.0,
        };
        let mut out = Vec::new();
        crate::nmea::ais::frame(&mut out, "AI", "VDM", &crate::nmea::ais::type5_bits(&s), 4);
        let text = String::from_utf8(out).unwrap();
        let mut a = AisInput::new();
        let mut lines = text.lines();
        assert_eq!(a.line(lines.next().unwrap().as_bytes()), Ok(None));
        let t = a.line(lines.next().unwrap().as_bytes()).unwrap().unwrap();
        assert_eq!(t.name.as_deref(), Some("BETA"));
        assert_eq!(
            (t.length_m, t.beam_m, t.ship_type),
            (Some(30), Some(8), Some(52))
        );
    }
}
