//! The MOOS V10 wire format: messages, packets and a framing reader
//! (our MOOS protocol notes §2–§5, docs/moos.md). Sans-IO: bytes in, values
//! out; nothing here touches a socket or a clock.
//!
//! All numbers are little-endian: `int32`, IEEE-754 `double`; a string is an
//! `int32` length and that many raw bytes (no NUL). A packet is
//! `int32 total_bytes` (the 9 header bytes included), `int32 message_count`,
//! `u8 compressed` (always 0), then the messages.
use std::fmt;

/// The 32 bytes a client sends first: the protocol string NUL-padded.
pub const PROTOCOL_STRING: &str = "ELKS CAN'T DANCE 2/8/10";
/// Length of the protocol-string buffer, bytes.
pub const PROTOCOL_BUFFER: usize = 32;
/// Bytes of a packet header (total, count, compressed flag).
pub const PACKET_HEADER: usize = 9;
/// Fixed bytes of a serialised message without its five strings' bodies.
pub const MESSAGE_FIXED: usize = 4 + 4 + 1 + 1 + 5 * 4 + 3 * 8;
/// Largest packet usim reads or writes, bytes (64 MiB): a length field
/// above this is garbage or hostile and ends the connection.
pub const MAX_PACKET: usize = 64 * 1024 * 1024;

/// The 32-byte protocol-string buffer a client sends on connecting.
pub fn protocol_bytes() -> [u8; PROTOCOL_BUFFER] {
    let mut b = [0u8; PROTOCOL_BUFFER];
    b[..PROTOCOL_STRING.len()].copy_from_slice(PROTOCOL_STRING.as_bytes());
    b
}

/// Whether a received protocol buffer is the V10 string (compared up to
/// the first NUL, ignoring ASCII case, as the MOOSDB does).
pub fn protocol_ok(buf: &[u8]) -> bool {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf[..end].eq_ignore_ascii_case(PROTOCOL_STRING.as_bytes())
}

/// Message types (`msg_type` byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MsgType {
    /// `N`: publish, and mail delivery.
    Notify,
    /// `R`: register for a variable, dval = minimum interval, s.
    Register,
    /// `U`: unregister.
    Unregister,
    /// `*`: wildcard register, sval `AppPattern=..,VarPattern=..,Interval=..`.
    WildcardRegister,
    /// `/`: wildcard unregister.
    WildcardUnregister,
    /// `i`: the client's name in the handshake.
    Data,
    /// `W`: the DB's welcome.
    Welcome,
    /// `K`: the DB's refusal (poison).
    Poison,
    /// `T`: timing heartbeat / clock exchange.
    Timing,
    /// `.`: null message (sync keep-alive, DB time stamp).
    Null,
    /// `Q`: server request.
    ServerRequest,
    /// `C`: command (ignored by the DB).
    Command,
    /// `^`: terminate connection (client-internal).
    Terminate,
    /// `~`: not set.
    NotSet,
    /// `A`: anonymous.
    Anonymous,
}

impl MsgType {
    /// The wire byte.
    pub fn byte(self) -> u8 {
        match self {
            MsgType::Notify => b'N',
            MsgType::Register => b'R',
            MsgType::Unregister => b'U',
            MsgType::WildcardRegister => b'*',
            MsgType::WildcardUnregister => b'/',
            MsgType::Data => b'i',
            MsgType::Welcome => b'W',
            MsgType::Poison => b'K',
            MsgType::Timing => b'T',
            MsgType::Null => b'.',
            MsgType::ServerRequest => b'Q',
            MsgType::Command => b'C',
            MsgType::Terminate => b'^',
            MsgType::NotSet => b'~',
            MsgType::Anonymous => b'A',
        }
    }

    /// The type of a wire byte, `None` if unknown.
    pub fn from_byte(b: u8) -> Option<MsgType> {
        Some(match b {
            b'N' => MsgType::Notify,
            b'R' => MsgType::Register,
            b'U' => MsgType::Unregister,
            b'*' => MsgType::WildcardRegister,
            b'/' => MsgType::WildcardUnregister,
            b'i' => MsgType::Data,
            b'W' => MsgType::Welcome,
            b'K' => MsgType::Poison,
            b'T' => MsgType::Timing,
            b'.' => MsgType::Null,
            b'Q' => MsgType::ServerRequest,
            b'C' => MsgType::Command,
            b'^' => MsgType::Terminate,
            b'~' => MsgType::NotSet,
            b'A' => MsgType::Anonymous,
            _ => return None,
        })
    }
}

/// Data types (`data_type` byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `D`: the payload is `dval`.
    Double,
    /// `S`: the payload is `sval`.
    String,
    /// `B`: binary payload in `sval`.
    Binary,
    /// `~`: registered, never written.
    NotSet,
}

impl DataType {
    /// The wire byte.
    pub fn byte(self) -> u8 {
        match self {
            DataType::Double => b'D',
            DataType::String => b'S',
            DataType::Binary => b'B',
            DataType::NotSet => b'~',
        }
    }

    /// The type of a wire byte, `None` if unknown.
    pub fn from_byte(b: u8) -> Option<DataType> {
        Some(match b {
            b'D' => DataType::Double,
            b'S' => DataType::String,
            b'B' => DataType::Binary,
            b'~' => DataType::NotSet,
            _ => return None,
        })
    }
}

/// One MOOS message (`CMOOSMsg`). Strings are raw bytes on the wire; usim
/// keeps them as `Vec<u8>`-backed `String`s only when they are UTF-8, and
/// replaces invalid sequences otherwise (binary payloads keep their bytes
/// in [`Message::bytes`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The sender's running counter; −1 by default, −2 for server requests.
    pub id: i32,
    /// Message type.
    pub msg_type: MsgType,
    /// Data type.
    pub data_type: DataType,
    /// Sender's MOOS name.
    pub source: String,
    /// Free text (e.g. `hostname=...` in the welcome).
    pub source_aux: String,
    /// Originating community.
    pub community: String,
    /// Variable name.
    pub key: String,
    /// MOOS time of the event, s (warped Unix time).
    pub time: f64,
    /// Numeric payload.
    pub dval: f64,
    /// Second numeric (timing, write frequency).
    pub dval2: f64,
    /// String payload.
    pub sval: String,
    /// Binary payload (data type `B`), raw bytes; empty otherwise.
    pub bytes: Vec<u8>,
}

impl Default for Message {
    fn default() -> Self {
        Message {
            id: -1,
            msg_type: MsgType::Null,
            data_type: DataType::Double,
            source: String::new(),
            source_aux: String::new(),
            community: String::new(),
            key: String::new(),
            time: -1.0,
            dval: -1.0,
            dval2: -1.0,
            sval: String::new(),
            bytes: Vec::new(),
        }
    }
}

impl Message {
    /// A double notification of `key` at MOOS time `time` (s).
    pub fn notify_double(key: &str, value: f64, time: f64) -> Message {
        Message {
            msg_type: MsgType::Notify,
            data_type: DataType::Double,
            key: key.to_string(),
            dval: value,
            time,
            ..Message::default()
        }
    }

    /// A string notification of `key` at MOOS time `time` (s).
    pub fn notify_string(key: &str, value: &str, time: f64) -> Message {
        Message {
            msg_type: MsgType::Notify,
            data_type: DataType::String,
            key: key.to_string(),
            sval: value.to_string(),
            time,
            ..Message::default()
        }
    }

    /// Bytes this message takes on the wire.
    pub fn wire_len(&self) -> usize {
        MESSAGE_FIXED
            + self.source.len()
            + self.source_aux.len()
            + self.community.len()
            + self.key.len()
            + self.sval_bytes().len()
    }

    fn sval_bytes(&self) -> &[u8] {
        if self.data_type == DataType::Binary {
            &self.bytes
        } else {
            self.sval.as_bytes()
        }
    }

    /// Append the serialised message to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let n = self.wire_len();
        out.reserve(n);
        out.extend_from_slice(&(n as i32).to_le_bytes());
        out.extend_from_slice(&self.id.to_le_bytes());
        out.push(self.msg_type.byte());
        out.push(self.data_type.byte());
        for s in [
            self.source.as_bytes(),
            self.source_aux.as_bytes(),
            self.community.as_bytes(),
            self.key.as_bytes(),
        ] {
            put_str(out, s);
        }
        out.extend_from_slice(&self.time.to_le_bytes());
        out.extend_from_slice(&self.dval.to_le_bytes());
        out.extend_from_slice(&self.dval2.to_le_bytes());
        put_str(out, self.sval_bytes());
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as i32).to_le_bytes());
    out.extend_from_slice(s);
}

/// Why bytes are not a valid packet or message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// A length field that is negative, too small or over [`MAX_PACKET`].
    BadLength(String),
    /// The bytes end before the structure does.
    Truncated(String),
    /// An unknown message or data type byte.
    BadType(String),
    /// The packet's compressed flag is set (never implemented by MOOS).
    Compressed,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::BadLength(s) => write!(f, "bad length: {s}"),
            DecodeError::Truncated(s) => write!(f, "truncated: {s}"),
            DecodeError::BadType(s) => write!(f, "bad type: {s}"),
            DecodeError::Compressed => write!(f, "compressed packets are not supported"),
        }
    }
}

impl std::error::Error for DecodeError {}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| DecodeError::Truncated(format!("{what} needs {n} bytes")))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn i32(&mut self, what: &str) -> Result<i32, DecodeError> {
        let b = self.take(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn f64(&mut self, what: &str) -> Result<f64, DecodeError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
    }
    fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        Ok(self.take(1, what)?[0])
    }
    fn bytes(&mut self, what: &str) -> Result<&'a [u8], DecodeError> {
        let n = self.i32(what)?;
        if n < 0 {
            return Err(DecodeError::BadLength(format!("{what} length {n}")));
        }
        self.take(n as usize, what)
    }
    fn string(&mut self, what: &str) -> Result<String, DecodeError> {
        Ok(String::from_utf8_lossy(self.bytes(what)?).into_owned())
    }
}

/// Decode one message from the start of `buf`; returns it and the bytes used.
pub fn decode_message(buf: &[u8]) -> Result<(Message, usize), DecodeError> {
    let mut c = Cursor { buf, pos: 0 };
    let len = c.i32("message length")?;
    if len < MESSAGE_FIXED as i32 {
        return Err(DecodeError::BadLength(format!(
            "message length {len} < {MESSAGE_FIXED}"
        )));
    }
    let len = len as usize;
    if len > buf.len() {
        return Err(DecodeError::Truncated(format!(
            "message of {len} bytes, {} left in the packet",
            buf.len()
        )));
    }
    let mut c = Cursor {
        buf: &buf[..len],
        pos: 4,
    };
    let id = c.i32("id")?;
    let t = c.u8("message type")?;
    let msg_type = MsgType::from_byte(t)
        .ok_or_else(|| DecodeError::BadType(format!("message type byte 0x{t:02x}")))?;
    let d = c.u8("data type")?;
    let data_type = DataType::from_byte(d)
        .ok_or_else(|| DecodeError::BadType(format!("data type byte 0x{d:02x}")))?;
    let source = c.string("source")?;
    let source_aux = c.string("source_aux")?;
    let community = c.string("community")?;
    let key = c.string("key")?;
    let time = c.f64("time")?;
    let dval = c.f64("dval")?;
    let dval2 = c.f64("dval2")?;
    let raw = c.bytes("sval")?;
    if c.pos != len {
        return Err(DecodeError::BadLength(format!(
            "message length {len} but its fields take {}",
            c.pos
        )));
    }
    let (sval, bytes) = if data_type == DataType::Binary {
        (String::new(), raw.to_vec())
    } else {
        (String::from_utf8_lossy(raw).into_owned(), Vec::new())
    };
    Ok((
        Message {
            id,
            msg_type,
            data_type,
            source,
            source_aux,
            community,
            key,
            time,
            dval,
            dval2,
            sval,
            bytes,
        },
        len,
    ))
}

/// Serialise `msgs` as one packet.
pub fn encode_packet(msgs: &[Message]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(PACKET_HEADER + msgs.iter().map(|m| m.wire_len()).sum::<usize>());
    encode_packet_into(msgs, &mut out);
    out
}

/// Append one packet holding `msgs` to `out`.
pub fn encode_packet_into(msgs: &[Message], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0u8; 8]);
    out.push(0);
    for m in msgs {
        m.encode_into(out);
    }
    let total = (out.len() - start) as i32;
    out[start..start + 4].copy_from_slice(&total.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&(msgs.len() as i32).to_le_bytes());
}

/// Decode one whole packet (exactly `buf`).
pub fn decode_packet(buf: &[u8]) -> Result<Vec<Message>, DecodeError> {
    let mut c = Cursor { buf, pos: 0 };
    let total = c.i32("packet length")?;
    if total < PACKET_HEADER as i32 || total as usize > MAX_PACKET {
        return Err(DecodeError::BadLength(format!("packet length {total}")));
    }
    if total as usize != buf.len() {
        return Err(DecodeError::BadLength(format!(
            "packet length {total} but {} bytes given",
            buf.len()
        )));
    }
    let count = c.i32("message count")?;
    if count < 0 {
        return Err(DecodeError::BadLength(format!("message count {count}")));
    }
    if c.u8("compressed flag")? != 0 {
        return Err(DecodeError::Compressed);
    }
    // Each message takes at least MESSAGE_FIXED bytes: bound the count.
    let room = (buf.len() - PACKET_HEADER) / MESSAGE_FIXED;
    if count as usize > room {
        return Err(DecodeError::BadLength(format!(
            "{count} messages cannot fit in {} bytes",
            buf.len()
        )));
    }
    let mut msgs = Vec::with_capacity(count as usize);
    let mut pos = PACKET_HEADER;
    for _ in 0..count {
        let (m, n) = decode_message(&buf[pos..])?;
        msgs.push(m);
        pos += n;
    }
    if pos != buf.len() {
        return Err(DecodeError::BadLength(format!(
            "{} bytes after the last message",
            buf.len() - pos
        )));
    }
    Ok(msgs)
}

/// Frames packets out of a byte stream: feed whatever the socket gave,
/// take whole packets out. Memory is bounded by the largest packet allowed
/// (`max_packet`); a length field outside `9..=max_packet` is an error
/// after which the stream cannot be resynchronised (close it).
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    max_packet: usize,
}

impl FrameReader {
    /// A reader accepting packets up to `max_packet` bytes.
    pub fn new(max_packet: usize) -> FrameReader {
        FrameReader {
            buf: Vec::new(),
            max_packet: max_packet.min(MAX_PACKET),
        }
    }

    /// Accept packets up to `max_packet` bytes from now on (bytes already
    /// held are kept): the MOOSDB reads the handshake with a small bound.
    pub fn set_max_packet(&mut self, max_packet: usize) {
        self.max_packet = max_packet.min(MAX_PACKET);
    }

    /// Bytes held (an incomplete packet).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Add received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The length the next packet announces, once 4 bytes are in; an
    /// error if it is out of bounds.
    fn announced(&self) -> Result<Option<usize>, DecodeError> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let total = i32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        if total < PACKET_HEADER as i32 || total as usize > self.max_packet {
            return Err(DecodeError::BadLength(format!(
                "packet announces {total} bytes (allowed {PACKET_HEADER}..={})",
                self.max_packet
            )));
        }
        Ok(Some(total as usize))
    }

    /// The next whole packet's messages, `Ok(None)` if more bytes are needed.
    pub fn next_packet(&mut self) -> Result<Option<Vec<Message>>, DecodeError> {
        let Some(total) = self.announced()? else {
            return Ok(None);
        };
        if self.buf.len() < total {
            return Ok(None);
        }
        let result = decode_packet(&self.buf[..total]);
        self.buf.drain(..total);
        result.map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_formula_of_the_spec() {
        // 2*4 + 2*1 + 5*(4+len) + 3*8
        let m = Message {
            source: "ab".into(),
            key: "NAV_X".into(),
            sval: "xyz".into(),
            ..Message::default()
        };
        assert_eq!(m.wire_len(), 8 + 2 + 5 * 4 + 2 + 5 + 3 + 24);
        let mut out = Vec::new();
        m.encode_into(&mut out);
        assert_eq!(out.len(), m.wire_len());
        assert_eq!(&out[..4], &(m.wire_len() as i32).to_le_bytes());
    }

    #[test]
    fn packet_round_trip_and_framing() {
        let msgs = vec![
            Message::notify_double("NAV_X", 1.5, 1e9),
            Message::notify_string("NODE_REPORT", "NAME=a,X=1", 2.0),
            Message {
                msg_type: MsgType::Notify,
                data_type: DataType::Binary,
                key: "BIN".into(),
                bytes: vec![0, 255, 3],
                ..Message::default()
            },
        ];
        let p = encode_packet(&msgs);
        assert_eq!(decode_packet(&p).unwrap(), msgs);
        // Byte-at-a-time framing yields the same, twice.
        let mut r = FrameReader::new(MAX_PACKET);
        let mut got = Vec::new();
        for b in p.iter().chain(p.iter()) {
            r.push(&[*b]);
            while let Some(ms) = r.next_packet().unwrap() {
                got.push(ms);
            }
        }
        assert_eq!(got, vec![msgs.clone(), msgs]);
        assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn hostile_lengths_are_errors_not_allocations() {
        let mut r = FrameReader::new(1024);
        r.push(&i32::MAX.to_le_bytes());
        assert!(r.next_packet().is_err());
        let mut bad = encode_packet(&[Message::default()]);
        bad[4..8].copy_from_slice(&1_000_000i32.to_le_bytes());
        assert!(decode_packet(&bad).is_err());
        let mut bad = encode_packet(&[Message::default()]);
        bad[9 + 9] = b'Z'; // data type
        assert!(matches!(decode_packet(&bad), Err(DecodeError::BadType(_))));
        assert!(protocol_ok(&protocol_bytes()));
        assert!(protocol_ok(b"elks can't dance 2/8/10\0\0\0"));
        assert!(!protocol_ok(b"ELKS CAN'T DANCE 2/8/9\0"));
    }
}
