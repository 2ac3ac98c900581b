//! OMG CDR as ROS 2 puts it on the wire (XCDR version 1, "plain CDR"),
//! sans-IO: a [`Writer`] that makes the bytes of one message and a
//! [`Reader`] that takes them apart, with bounds on every length read.
//!
//! A serialized message starts with the 4-byte encapsulation header
//! (`00 01 00 00` = CDR little-endian, `00 00 00 00` = big-endian; the last
//! two bytes are options, 0). Every primitive is aligned to its own size
//! (at most 8) counted from the first byte after the header; padding is
//! zero. A string is a `u32` length that counts its closing NUL, the bytes,
//! the NUL; a sequence is a `u32` element count then the elements; a fixed
//! array is its elements only (DDS-XTypes 1.3 §7.4.1; the same layout
//! `rclpy.serialization.serialize_message` writes, which the tests compare
//! against byte for byte).
use std::fmt;

/// The encapsulation header of CDR little-endian (what usim writes).
pub const HEADER_CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
/// The encapsulation header of CDR big-endian (read, never written).
pub const HEADER_CDR_BE: [u8; 4] = [0x00, 0x00, 0x00, 0x00];

/// Longest message [`Reader`] accepts, bytes (usim's messages are < 1 KiB;
/// a command is a few dozen bytes).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Longest string read, bytes without the NUL (a `SET` list or a
/// `USM_RESET` is far shorter; MQTT payloads have the same order of cap).
pub const MAX_STRING_BYTES: usize = 16 * 1024;
/// Most elements of a sequence read (a `TFMessage` carries one transform
/// per frame pair: usim sends two).
pub const MAX_SEQUENCE_LEN: usize = 256;
/// Bytes after the last field a reader tolerates: a sender may pad the
/// payload to a multiple of 4 or 8; more than that is a different type.
pub const MAX_TRAILING_BYTES: usize = 7;

/// Why bytes are not a message of the expected type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdrError {
    /// Byte offset in the message (the header included) where reading stopped.
    pub at: usize,
    /// What was wrong, for a person.
    pub what: String,
}

impl fmt::Display for CdrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed CDR at byte {}: {}", self.at, self.what)
    }
}

impl std::error::Error for CdrError {}

/// Builds one CDR little-endian message, header included.
#[derive(Debug, Clone)]
pub struct Writer {
    buf: Vec<u8>,
    pad: u8,
}

impl Default for Writer {
    fn default() -> Self {
        Writer::new()
    }
}

impl Writer {
    /// A message with its encapsulation header written.
    pub fn new() -> Writer {
        Writer::reuse(Vec::with_capacity(128))
    }

    /// A message written into `buf` (cleared first), so a caller can keep
    /// one buffer for every message.
    pub fn reuse(mut buf: Vec<u8>) -> Writer {
        buf.clear();
        buf.extend_from_slice(&HEADER_CDR_LE);
        Writer { buf, pad: 0 }
    }

    /// A message whose padding bytes are `pad` instead of 0: two writes
    /// with different `pad` differ exactly where the padding lies (the
    /// oracle tests mask it: ROS 2's own serializer leaves it unset).
    pub fn with_padding(pad: u8) -> Writer {
        let mut w = Writer::new();
        w.pad = pad;
        w
    }

    fn align(&mut self, n: usize) {
        let off = self.buf.len() - HEADER_CDR_LE.len();
        let pad = (n - off % n) % n;
        self.buf.resize(self.buf.len() + pad, self.pad);
    }

    /// An `octet`/`uint8`.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// An `int8`.
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }
    /// A `uint16`.
    pub fn u16(&mut self, v: u16) {
        self.align(2);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// An `int32`.
    pub fn i32(&mut self, v: i32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A `uint32`.
    pub fn u32(&mut self, v: u32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A `float64`.
    pub fn f64(&mut self, v: f64) {
        self.align(8);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// A fixed array of `float64` (`float64[N]`).
    pub fn f64s(&mut self, v: &[f64]) {
        for x in v {
            self.f64(*x);
        }
    }
    /// A `string` (UTF-8; the length counts the closing NUL).
    pub fn string(&mut self, s: &str) {
        // Strings usim writes are names and payloads of bounded length.
        self.u32(u32::try_from(s.len() + 1).unwrap_or(u32::MAX));
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }
    /// The element count of a sequence; the elements follow.
    pub fn seq_len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }

    /// The message bytes.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads one CDR message (either byte order).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    /// Offset of the body (after the header) in `data`.
    base: usize,
    pos: usize,
    little: bool,
}

impl<'a> Reader<'a> {
    /// A reader of a whole serialized message: header, then body.
    pub fn new(msg: &'a [u8]) -> Result<Reader<'a>, CdrError> {
        if msg.len() > MAX_MESSAGE_BYTES {
            return Err(CdrError {
                at: 0,
                what: format!(
                    "{} bytes is longer than the {MAX_MESSAGE_BYTES}-byte limit",
                    msg.len()
                ),
            });
        }
        let Some(head) = msg.get(..4) else {
            return Err(CdrError {
                at: msg.len(),
                what: "shorter than the 4-byte encapsulation header".into(),
            });
        };
        let little = match [head[0], head[1]] {
            [0x00, 0x01] => true,
            [0x00, 0x00] => false,
            [a, b] => {
                return Err(CdrError {
                    at: 0,
                    what: format!(
                        "encapsulation {a:02x} {b:02x} is not plain CDR (00 00 or 00 01)"
                    ),
                })
            }
        };
        Ok(Reader {
            data: msg,
            base: 4,
            pos: 4,
            little,
        })
    }

    /// A reader of a body whose header the transport already took off (a
    /// DDS sample: the encapsulation travels beside the data).
    pub fn body(body: &'a [u8], little_endian: bool) -> Result<Reader<'a>, CdrError> {
        if body.len() > MAX_MESSAGE_BYTES {
            return Err(CdrError {
                at: 0,
                what: format!(
                    "{} bytes is longer than the {MAX_MESSAGE_BYTES}-byte limit",
                    body.len()
                ),
            });
        }
        Ok(Reader {
            data: body,
            base: 0,
            pos: 0,
            little: little_endian,
        })
    }

    fn err(&self, what: impl Into<String>) -> CdrError {
        CdrError {
            at: self.pos,
            what: what.into(),
        }
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], CdrError> {
        if N > 1 {
            let off = self.pos - self.base;
            self.pos += (N - off % N) % N;
        }
        let end = self.pos.checked_add(N).filter(|e| *e <= self.data.len());
        let Some(end) = end else {
            let at = self.pos.min(self.data.len());
            return Err(CdrError {
                at,
                what: format!("message ends inside {what}"),
            });
        };
        let mut b = [0u8; N];
        b.copy_from_slice(&self.data[self.pos..end]);
        self.pos = end;
        if !self.little {
            b.reverse();
        }
        Ok(b)
    }

    /// An `octet`/`uint8`.
    pub fn u8(&mut self, what: &str) -> Result<u8, CdrError> {
        Ok(self.take::<1>(what)?[0])
    }
    /// An `int8`.
    pub fn i8(&mut self, what: &str) -> Result<i8, CdrError> {
        Ok(self.take::<1>(what)?[0] as i8)
    }
    /// A `uint16`.
    pub fn u16(&mut self, what: &str) -> Result<u16, CdrError> {
        Ok(u16::from_le_bytes(self.take(what)?))
    }
    /// An `int32`.
    pub fn i32(&mut self, what: &str) -> Result<i32, CdrError> {
        Ok(i32::from_le_bytes(self.take(what)?))
    }
    /// A `uint32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, CdrError> {
        Ok(u32::from_le_bytes(self.take(what)?))
    }
    /// A `float64` (any bit pattern: the caller judges NaN and infinities).
    pub fn f64(&mut self, what: &str) -> Result<f64, CdrError> {
        Ok(f64::from_le_bytes(self.take(what)?))
    }
    /// A fixed array of `N` `float64`s.
    pub fn f64s<const N: usize>(&mut self, what: &str) -> Result<[f64; N], CdrError> {
        let mut a = [0.0; N];
        for x in &mut a {
            *x = self.f64(what)?;
        }
        Ok(a)
    }

    /// A `string`: valid UTF-8, NUL-terminated, no NUL inside, at most
    /// [`MAX_STRING_BYTES`] bytes.
    pub fn string(&mut self, what: &str) -> Result<String, CdrError> {
        let n = self.u32(what)? as usize;
        if n == 0 {
            // Some writers send 0 for "": no bytes, no NUL.
            return Ok(String::new());
        }
        if n - 1 > MAX_STRING_BYTES {
            return Err(self.err(format!(
                "{what} is {} bytes, over the {MAX_STRING_BYTES}-byte limit",
                n - 1
            )));
        }
        let Some(bytes) = self.data.get(self.pos..self.pos + n) else {
            return Err(self.err(format!("message ends inside {what} ({n} bytes announced)")));
        };
        let (text, nul) = bytes.split_at(n - 1);
        if nul != [0] {
            return Err(self.err(format!("{what} does not end with NUL")));
        }
        if text.contains(&0) {
            return Err(self.err(format!("{what} holds a NUL byte")));
        }
        let s = std::str::from_utf8(text)
            .map_err(|_| self.err(format!("{what} is not UTF-8")))?
            .to_string();
        self.pos += n;
        Ok(s)
    }

    /// The element count of a sequence, at most `max` (and at most
    /// [`MAX_SEQUENCE_LEN`]); each element takes at least `min_elem` bytes,
    /// so a count the rest of the message cannot hold is refused at once.
    pub fn seq_len(&mut self, what: &str, min_elem: usize) -> Result<usize, CdrError> {
        let n = self.u32(what)? as usize;
        let room = (self.data.len() - self.pos) / min_elem.max(1);
        if n > MAX_SEQUENCE_LEN || n > room {
            return Err(self.err(format!(
                "{what} announces {n} elements (at most {MAX_SEQUENCE_LEN}, and the message holds at most {room})"
            )));
        }
        Ok(n)
    }

    /// The end of the message: at most [`MAX_TRAILING_BYTES`] bytes of
    /// padding may follow the last field.
    pub fn end(&self) -> Result<(), CdrError> {
        let rest = self.data.len() - self.pos;
        if rest > MAX_TRAILING_BYTES {
            return Err(self.err(format!(
                "{rest} bytes follow the message (a different type on this topic?)"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_are_aligned_from_the_body_start() {
        let mut w = Writer::new();
        w.u8(7);
        w.f64(1.5);
        w.u16(3);
        w.string("ab");
        let b = w.finish();
        assert_eq!(&b[..4], &HEADER_CDR_LE);
        // u8 at 0, pad to 8, f64 at 8..16, u16 at 16, pad to 20, len at 20.
        assert_eq!(b.len(), 4 + 24 + 3);
        assert_eq!(&b[4 + 8..4 + 16], &1.5f64.to_le_bytes());
        assert_eq!(&b[4 + 20..], &[3, 0, 0, 0, b'a', b'b', 0]);
        let mut r = Reader::new(&b).unwrap();
        assert_eq!(r.u8("a").unwrap(), 7);
        assert_eq!(r.f64("b").unwrap(), 1.5);
        assert_eq!(r.u16("c").unwrap(), 3);
        assert_eq!(r.string("d").unwrap(), "ab");
        r.end().unwrap();
    }

    #[test]
    fn big_endian_reads_too() {
        let mut b = HEADER_CDR_BE.to_vec();
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&2.25f64.to_be_bytes());
        let mut r = Reader::new(&b).unwrap();
        assert_eq!(r.u32("x").unwrap(), 0);
        assert_eq!(r.f64("y").unwrap(), 2.25);
    }

    #[test]
    fn hostile_lengths_are_refused_before_any_allocation() {
        let mut b = HEADER_CDR_LE.to_vec();
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = Reader::new(&b).unwrap().string("data").unwrap_err();
        assert!(e.what.contains("limit"), "{e}");
        let e = Reader::new(&b)
            .unwrap()
            .seq_len("transforms", 8)
            .unwrap_err();
        assert!(e.what.contains("announces"), "{e}");
        // A length the rest cannot hold.
        let mut b = HEADER_CDR_LE.to_vec();
        b.extend_from_slice(&9u32.to_le_bytes());
        b.extend_from_slice(b"abc\0");
        assert!(Reader::new(&b).unwrap().string("s").is_err());
        // No NUL, NUL inside, not UTF-8.
        for body in [&b"ab"[..], b"a\0\0", b"\xff\xfe\0"] {
            let mut b = HEADER_CDR_LE.to_vec();
            b.extend_from_slice(&(body.len() as u32 + u32::from(body == b"ab")).to_le_bytes());
            b.extend_from_slice(body);
            assert!(Reader::new(&b).unwrap().string("s").is_err(), "{body:?}");
        }
    }

    #[test]
    fn bad_headers_and_sizes_are_errors() {
        assert!(Reader::new(&[0, 1]).is_err());
        assert!(Reader::new(&[0, 7, 0, 0]).is_err());
        assert!(Reader::new(&vec![0; MAX_MESSAGE_BYTES + 1]).is_err());
        let mut r = Reader::new(&[0, 1, 0, 0, 1, 2, 3]).unwrap();
        // The error points at the field that does not fit.
        let e = r.f64("data").unwrap_err();
        assert_eq!(e.at, 4);
        assert!(e.to_string().contains("inside data"), "{e}");
        let mut b = HEADER_CDR_LE.to_vec();
        b.extend_from_slice(&[0; 16]);
        let mut r = Reader::new(&b).unwrap();
        r.f64("x").unwrap();
        assert!(r.end().is_err());
    }
}
