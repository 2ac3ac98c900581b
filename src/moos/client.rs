//! A MOOS V10 asynchronous client as a state machine (our MOOS protocol
//! notes §6–§8, §10; docs/moos.md). No sockets, no clock: the runtime
//! passes `unix` (real Unix time, s) in and writes the bytes out.
//!
//! MOOS time = `unix × warp + skew`. Skew is estimated from the timing echo
//! only when the DB is on another host (as MOOS does); on one host it is 0.
use std::collections::BTreeMap;

use super::codec::{encode_packet, protocol_bytes, DataType, Message, MsgType};
use super::wildcard::Filter;

/// How often an async client sends a `T` timing message, real s.
pub const TIMING_PERIOD: f64 = 1.0;
/// Largest number of messages waiting to be sent before the oldest are
/// dropped (a DB that does not read).
pub const MAX_OUTBOX: usize = 50_000;
/// Largest clock skew accepted from a timing echo, real s (× the warp in
/// MOOS s): hosts a day apart are not one community.
pub const MAX_SKEW: f64 = 86_400.0;
/// Longest round trip of a timing echo that is used, real s: the echo must
/// carry the time of a timing message we sent no longer ago than this.
pub const MAX_ECHO_RTT: f64 = 10.0;
/// A measured skew further than this from the estimate, real s (× the
/// warp), is an outlier: ignored unless [`OUTLIER_RUN`] in a row agree.
pub const SKEW_GATE: f64 = 1.0;
/// Consecutive outliers within [`SKEW_GATE`] of each other that move the
/// estimate there at once (the DB host's clock was set).
pub const OUTLIER_RUN: u32 = 5;

/// Where the client is in its life.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Not connected (or the connection was lost).
    Disconnected,
    /// Protocol string and name sent, waiting for `W`/`K`.
    AwaitingWelcome,
    /// Connected to a DB.
    Connected,
}

/// Why the handshake failed.
#[derive(Debug, Clone, PartialEq)]
pub enum HandshakeError {
    /// The DB refused us (`K`): its reason.
    Poisoned(String),
    /// The DB answered with something else.
    Unexpected(String),
}

impl std::fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandshakeError::Poisoned(r) => write!(f, "the MOOSDB refused the client: {r}"),
            HandshakeError::Unexpected(r) => write!(f, "unexpected handshake reply: {r}"),
        }
    }
}

/// What the DB said in its welcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Welcome {
    /// Community name.
    pub community: String,
    /// DB host name.
    pub host: String,
    /// DB time − our time at the handshake, s (includes the DB's 100 ms pause).
    pub skew: f64,
}

/// The client.
#[derive(Debug)]
pub struct Client {
    name: String,
    warp: f64,
    state: State,
    /// Variable → interval, s; re-sent on every (re)connection.
    registrations: BTreeMap<String, f64>,
    wildcards: Vec<Filter>,
    outbox: Vec<Message>,
    next_id: i32,
    last_timing: Option<f64>,
    skew: f64,
    estimate_skew: bool,
    skew_known: bool,
    /// Consecutive outliers: count and the latest.
    outliers: (u32, f64),
    /// Timing echoes not used: not finite, not ours, too slow, or a skew
    /// over [`MAX_SKEW`].
    pub echoes_refused: u64,
    /// Times the estimate moved at once to a run of outliers.
    pub skew_reseats: u64,
    /// What the last welcome said.
    pub welcome: Option<Welcome>,
    /// Outgoing messages dropped because the outbox was full.
    pub dropped: u64,
    own_host: String,
}

impl Client {
    /// A client named `name` under time warp `warp` (> 0), on host `own_host`.
    pub fn new(name: &str, warp: f64, own_host: &str) -> Client {
        Client {
            name: name.to_string(),
            warp: if warp.is_finite() && warp > 0.0 {
                warp
            } else {
                1.0
            },
            state: State::Disconnected,
            registrations: BTreeMap::new(),
            wildcards: Vec::new(),
            outbox: Vec::new(),
            next_id: 0,
            last_timing: None,
            skew: 0.0,
            estimate_skew: false,
            skew_known: false,
            outliers: (0, 0.0),
            echoes_refused: 0,
            skew_reseats: 0,
            welcome: None,
            dropped: 0,
            own_host: own_host.to_string(),
        }
    }

    /// Our MOOS name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// MOOS time at real Unix time `unix`, s.
    pub fn moos_time(&self, unix: f64) -> f64 {
        unix * self.warp + self.skew
    }

    /// The bytes that open a connection: the 32-byte protocol string and
    /// the packet with our name. Moves to [`State::AwaitingWelcome`].
    pub fn hello(&mut self, unix: f64) -> Vec<u8> {
        let mut out = protocol_bytes().to_vec();
        let m = Message {
            msg_type: MsgType::Data,
            data_type: DataType::String,
            key: "asynchronous".into(),
            sval: self.name.clone(),
            time: self.moos_time(unix),
            ..Message::default()
        };
        out.extend_from_slice(&encode_packet(&[m]));
        self.state = State::AwaitingWelcome;
        out
    }

    /// The DB's first packet. On a welcome, the registrations are queued
    /// again (they survive reconnections).
    pub fn on_welcome(&mut self, msgs: &[Message]) -> Result<Welcome, HandshakeError> {
        let Some(m) = msgs.first() else {
            self.state = State::Disconnected;
            return Err(HandshakeError::Unexpected("an empty packet".into()));
        };
        match m.msg_type {
            MsgType::Welcome => {
                let host = m
                    .source_aux
                    .strip_prefix("hostname=")
                    .unwrap_or("")
                    .to_string();
                self.estimate_skew = !host.is_empty() && host != self.own_host;
                let w = Welcome {
                    community: m.community.clone(),
                    host,
                    skew: if m.dval.is_finite() { m.dval } else { 0.0 },
                };
                self.state = State::Connected;
                self.welcome = Some(w.clone());
                self.last_timing = None;
                let regs: Vec<(String, f64)> = self
                    .registrations
                    .iter()
                    .map(|(k, v)| (k.clone(), *v))
                    .collect();
                for (var, interval) in regs {
                    let r = self.register_msg(&var, interval);
                    self.outbox.insert(0, r);
                }
                for f in self.wildcards.clone() {
                    let w = self.wildcard_msg(&f, MsgType::WildcardRegister);
                    self.outbox.insert(0, w);
                }
                Ok(w)
            }
            MsgType::Poison => {
                self.state = State::Disconnected;
                Err(HandshakeError::Poisoned(m.sval.clone()))
            }
            other => {
                self.state = State::Disconnected;
                Err(HandshakeError::Unexpected(format!(
                    "message type {:?}",
                    other.byte() as char
                )))
            }
        }
    }

    /// The connection was lost: unsent notifications are kept (bounded),
    /// registrations are re-sent on the next welcome.
    pub fn on_disconnect(&mut self) {
        self.state = State::Disconnected;
        self.outbox
            .retain(|m| !matches!(m.msg_type, MsgType::Register | MsgType::WildcardRegister));
    }

    fn stamp(&mut self, mut m: Message) -> Message {
        m.source = self.name.clone();
        m.id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        m
    }

    fn push(&mut self, m: Message) {
        let m = self.stamp(m);
        self.outbox.push(m);
        if self.outbox.len() > MAX_OUTBOX {
            let n = self.outbox.len() - MAX_OUTBOX;
            self.outbox.drain(..n);
            self.dropped += n as u64;
        }
    }

    fn register_msg(&mut self, var: &str, interval: f64) -> Message {
        self.stamp(Message {
            msg_type: MsgType::Register,
            data_type: DataType::Double,
            key: var.to_string(),
            dval: interval,
            ..Message::default()
        })
    }

    fn wildcard_msg(&mut self, f: &Filter, t: MsgType) -> Message {
        let key = self.name.clone();
        self.stamp(Message {
            msg_type: t,
            data_type: DataType::String,
            key,
            sval: f.to_sval(),
            ..Message::default()
        })
    }

    /// Register for `var` with a minimum interval (s, MOOS time; 0 = every write).
    pub fn register(&mut self, var: &str, interval: f64) {
        self.registrations.insert(var.to_string(), interval);
        if self.state == State::Connected {
            let m = self.register_msg(var, interval);
            self.outbox.push(m);
        }
    }

    /// Register for every variable matching `filter`.
    pub fn register_wildcard(&mut self, filter: Filter) {
        if !self.wildcards.contains(&filter) {
            self.wildcards.push(filter.clone());
        }
        if self.state == State::Connected {
            let m = self.wildcard_msg(&filter, MsgType::WildcardRegister);
            self.outbox.push(m);
        }
    }

    /// Post a double at real Unix time `unix`.
    pub fn notify_double(&mut self, var: &str, value: f64, unix: f64) {
        let m = Message::notify_double(var, value, self.moos_time(unix));
        self.push(m);
    }

    /// Post a string at real Unix time `unix`.
    pub fn notify_string(&mut self, var: &str, value: &str, unix: f64) {
        let m = Message::notify_string(var, value, self.moos_time(unix));
        self.push(m);
    }

    /// Post a double or a string at real Unix time `unix` with the
    /// auxiliary source `aux` (MOOS's `SrcAux`, forwarded by the DB).
    pub fn notify_aux(&mut self, var: &str, value: Result<f64, &str>, aux: &str, unix: f64) {
        let t = self.moos_time(unix);
        let mut m = match value {
            Ok(v) => Message::notify_double(var, v, t),
            Err(s) => Message::notify_string(var, s, t),
        };
        m.source_aux = aux.to_string();
        self.push(m);
    }

    /// Post a message stamped with MOOS time `moos_time` (s), e.g. a
    /// simulator's iteration time: a double or a string.
    pub fn notify_at(&mut self, var: &str, value: Result<f64, &str>, moos_time: f64) {
        let m = match value {
            Ok(v) => Message::notify_double(var, v, moos_time),
            Err(s) => Message::notify_string(var, s, moos_time),
        };
        self.push(m);
    }

    /// Whether something should be sent now: queued messages, or the
    /// timing heartbeat is due.
    pub fn wants_to_send(&self, unix: f64) -> bool {
        self.state == State::Connected
            && (!self.outbox.is_empty()
                || self.last_timing.is_none_or(|t| unix - t >= TIMING_PERIOD))
    }

    /// The next packet to write (connected only): a leading `T` when one is
    /// due, then everything queued.
    pub fn poll_send(&mut self, unix: f64) -> Option<Vec<u8>> {
        if !self.wants_to_send(unix) {
            return None;
        }
        let mut msgs = Vec::with_capacity(self.outbox.len() + 1);
        if self.last_timing.is_none_or(|t| unix - t >= TIMING_PERIOD) {
            self.last_timing = Some(unix);
            msgs.push(Message {
                msg_type: MsgType::Timing,
                data_type: DataType::Double,
                key: "_async_timing".into(),
                dval: 0.0,
                time: unix * self.warp,
                source: self.name.clone(),
                ..Message::default()
            });
        }
        msgs.append(&mut self.outbox);
        Some(encode_packet(&msgs))
    }

    /// The current skew estimate, MOOS s.
    pub fn skew(&self) -> f64 {
        self.skew
    }

    /// A timing echo at real time `unix`: (sent, DB, received) measure the
    /// skew as the DB's time minus ours at the midpoint. Bounded and
    /// filtered: an echo must carry a send time of ours at most
    /// [`MAX_ECHO_RTT`] old and a skew within [`MAX_SKEW`]; the first
    /// measure sets the estimate and later ones move it by a tenth of the
    /// difference (MOOS's filter, MOOSCommClient.cpp `UpdateMOOSSkew`),
    /// except outliers beyond [`SKEW_GATE`], used only when
    /// [`OUTLIER_RUN`] in a row agree.
    fn on_echo(&mut self, m: &Message, unix: f64) {
        let now = unix * self.warp;
        let rtt = now - m.time;
        let sent_by_us = self
            .last_timing
            .is_some_and(|t| m.time >= (t - MAX_ECHO_RTT) * self.warp - 1e-6);
        let measured = m.dval - (m.time + now) / 2.0;
        let ok = m.dval.is_finite()
            && m.time.is_finite()
            && sent_by_us
            && rtt >= -1e-3 * self.warp
            && rtt <= MAX_ECHO_RTT * self.warp
            && measured.is_finite()
            && measured.abs() <= MAX_SKEW * self.warp;
        if !ok {
            self.echoes_refused += 1;
            return;
        }
        if !self.skew_known {
            self.skew = measured;
            self.skew_known = true;
            return;
        }
        let gate = SKEW_GATE * self.warp;
        if (measured - self.skew).abs() <= gate {
            self.outliers.0 = 0;
            self.skew = 0.9 * self.skew + 0.1 * measured;
            return;
        }
        let (n, last) = self.outliers;
        self.outliers = if n > 0 && (measured - last).abs() <= gate {
            (n + 1, measured)
        } else {
            (1, measured)
        };
        if self.outliers.0 >= OUTLIER_RUN {
            self.skew = measured;
            self.outliers = (0, 0.0);
            self.skew_reseats += 1;
        }
    }

    /// A packet from the DB (after the welcome): returns the mail (`N`
    /// messages), updating the skew from a `T` echo. A `K` here is an
    /// error (the DB poisoned us).
    pub fn on_packet(
        &mut self,
        msgs: Vec<Message>,
        unix: f64,
    ) -> Result<Vec<Message>, HandshakeError> {
        let mut mail = Vec::with_capacity(msgs.len());
        for m in msgs {
            match m.msg_type {
                MsgType::Notify => mail.push(m),
                MsgType::Timing if self.estimate_skew => self.on_echo(&m, unix),
                MsgType::Poison => {
                    self.on_disconnect();
                    return Err(HandshakeError::Poisoned(m.sval));
                }
                _ => {}
            }
        }
        Ok(mail)
    }
}

#[cfg(test)]
mod tests {
    use super::super::codec::{decode_packet, FrameReader, MAX_PACKET};
    use super::super::db::{Db, DbConfig};
    use super::*;

    /// The client and the DB core, wired through bytes.
    #[test]
    fn client_and_db_talk() {
        let mut db = Db::new(
            DbConfig {
                community: "alpha".into(),
                host: "here".into(),
                client_timeout: 5.0,
            },
            1000.0,
        );
        let mut a = Client::new("a", 1.0, "here");
        let mut b = Client::new("b", 1.0, "here");
        b.register("NAV_X", 0.0);
        for c in [&mut a, &mut b] {
            let bytes = c.hello(1000.0);
            assert_eq!(&bytes[..23], b"ELKS CAN'T DANCE 2/8/10");
            let mut r = FrameReader::new(MAX_PACKET);
            r.push(&bytes[32..]);
            let hello = r.next_packet().unwrap().unwrap();
            let w = db.handshake(&hello[0], 1000.1, 0.0).unwrap();
            let welcome = c.on_welcome(&[w]).unwrap();
            assert_eq!(welcome.community, "alpha");
            assert!(!c.estimate_skew);
        }
        let pb = b.poll_send(1000.2).unwrap();
        let out = db.on_packet("b", decode_packet(&pb).unwrap(), 1000.2, 0.2);
        // b's packet started with T: the reply starts with its echo.
        assert_eq!(out[0].to, "b");
        assert_eq!(out[0].msgs[0].msg_type, MsgType::Timing);
        a.notify_double("NAV_X", 3.5, 1000.3);
        let pa = a.poll_send(1000.3).unwrap();
        let out = db.on_packet("a", decode_packet(&pa).unwrap(), 1000.3, 0.3);
        let to_b = out.into_iter().find(|o| o.to == "b").unwrap();
        let mail = b.on_packet(to_b.msgs, 1000.3).unwrap();
        assert_eq!(mail.len(), 1);
        assert_eq!((mail[0].key.as_str(), mail[0].dval), ("NAV_X", 3.5));
        assert_eq!(mail[0].source, "a");
        assert_eq!(mail[0].community, "alpha");
        assert_eq!(mail[0].time, 1000.3);
        // Nothing queued and the timing message was just sent: quiet.
        assert!(b.poll_send(1000.4).is_none());
        assert!(b.poll_send(1001.3).is_some());
    }

    /// A client welcomed by a DB on another host, at `unix`.
    fn remote_client(unix: f64) -> Client {
        let mut c = Client::new("app", 1.0, "here");
        c.hello(unix);
        let w = Message {
            msg_type: MsgType::Welcome,
            data_type: DataType::Double,
            source_aux: "hostname=there".into(),
            community: "c".into(),
            ..Message::default()
        };
        c.on_welcome(&[w]).unwrap();
        c
    }

    /// The echo of our last timing message, the DB at `db` (MOOS s),
    /// received at `unix`.
    fn echo(c: &mut Client, sent: f64, db: f64, unix: f64) {
        let time = match c.poll_send(sent) {
            Some(p) => {
                let t = decode_packet(&p).unwrap().remove(0);
                assert_eq!(t.msg_type, MsgType::Timing);
                t.time
            }
            None => c.last_timing.unwrap() * c.warp,
        };
        let e = Message {
            msg_type: MsgType::Timing,
            data_type: DataType::Double,
            dval: db,
            time,
            ..Message::default()
        };
        c.on_packet(vec![e], unix).unwrap();
    }

    #[test]
    fn the_skew_is_bounded_and_filtered() {
        let mut c = remote_client(1000.0);
        // The first sane echo sets it: DB 3 s ahead.
        echo(&mut c, 1000.0, 1003.05, 1000.1);
        assert!((c.skew() - 3.0).abs() < 1e-9);
        // Absurd ones are refused: 1e300, NaN, a day and more off.
        for db in [1e300, f64::NAN, 1001.0 + 2.0 * MAX_SKEW, -1e300] {
            echo(&mut c, 1001.0, db, 1001.1);
        }
        assert_eq!(c.echoes_refused, 4);
        assert!((c.skew() - 3.0).abs() < 1e-9);
        // An echo of a time we never sent (in the future, or long ago).
        let p = c.poll_send(1002.0).unwrap();
        let t = decode_packet(&p).unwrap().remove(0);
        for time in [5000.0, 900.0] {
            let e = Message {
                dval: 1005.0,
                time,
                ..t.clone()
            };
            c.on_packet(vec![e], 1002.1).unwrap();
        }
        assert_eq!(c.echoes_refused, 6);
        // Within the gate: a tenth of the way, as MOOS filters it.
        echo(&mut c, 1003.0, 1006.55, 1003.1);
        assert!((c.skew() - 3.05).abs() < 1e-9, "{}", c.skew());
        // One outlier (an hour): ignored; five in a row: taken.
        echo(&mut c, 1004.0, 4604.05, 1004.1);
        assert!((c.skew() - 3.05).abs() < 1e-9);
        for i in 0..4 {
            let t = 1005.0 + i as f64;
            echo(&mut c, t, t + 3600.05, t + 0.1);
        }
        assert!((c.skew() - 3600.0).abs() < 1e-9, "{}", c.skew());
        assert_eq!(c.skew_reseats, 1);
        // On one host there is no estimate at all.
        let mut local = Client::new("app", 1.0, "here");
        local.hello(0.0);
        assert_eq!(local.skew(), 0.0);
    }
}
