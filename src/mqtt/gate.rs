//! The connection gate in front of the embedded broker (issue 20): every
//! client connects to the gate, which reads and checks the MQTT CONNECT
//! packet before anything reaches rumqttd, then forwards the connection
//! byte for byte to rumqttd on a private loopback port.
//!
//! Why: rumqttd 0.20 takes a client id with `+`, `$`, `#` or `/` (e.g. a
//! vehicle named `x$y`) into a state that panics its router, after which it
//! refuses every client; and it panics when its connection slots are full.
//! The gate refuses such client ids with a CONNACK "identifier rejected",
//! closes connections that send no complete CONNECT within
//! [`GateLimits::connect_timeout`], caps connections per source address,
//! and keeps the total under rumqttd's slots with the last
//! [`GateLimits::reserved_local`] of them for this host's own clients
//! (127.0.0.1, ::1), so vehicles on the machine still connect when others
//! fill the rest.
//!
//! [`check_connect`] is the sans-IO parser (fuzzed: `fuzz/fuzz_targets/mqtt_connect.rs`);
//! [`spawn_gate`] is the thin tokio shell.
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Largest CONNECT packet read (client id, will, user name and password), bytes.
pub const MAX_CONNECT_BYTES: usize = 64 * 1024;
/// Longest client id accepted, bytes.
pub const MAX_CLIENT_ID_BYTES: usize = 256;

/// CONNACK return code 0x01: unacceptable protocol version.
pub const RC_BAD_PROTOCOL: u8 = 1;
/// CONNACK return code 0x02: identifier rejected.
pub const RC_BAD_CLIENT_ID: u8 = 2;

/// What a (possibly partial) CONNECT packet at the start of `buf` gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectCheck {
    /// More bytes are needed (never more than [`MAX_CONNECT_BYTES`] in all).
    Incomplete,
    /// A CONNECT the broker can take: forward it.
    Accept {
        /// Length of the CONNECT packet in `buf`, bytes.
        len: usize,
        /// The client id.
        client_id: String,
    },
    /// A well-formed CONNECT we refuse with CONNACK return code `code`.
    Refuse {
        /// CONNACK return code.
        code: u8,
        /// Why, for the log.
        why: String,
    },
    /// Not an MQTT 3.1.1 CONNECT: close without an answer.
    Invalid(String),
}

/// Why a client id or topic may not go to rumqttd, or `None`.
fn bad_text(s: &str, what: &str, max: usize) -> Option<String> {
    if s.is_empty() {
        return Some(format!("empty {what}"));
    }
    if s.len() > max {
        return Some(format!("{what} of {} bytes (at most {max})", s.len()));
    }
    s.chars()
        .find(|c| c.is_control() || matches!(c, '+' | '$' | '#' | '/'))
        .map(|c| format!("{what} contains {}", c.escape_default()))
}

/// A reader over the CONNECT body.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        self.bytes(1).map(|s| s[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.bytes(2).map(|s| u16::from_be_bytes([s[0], s[1]]))
    }
    fn field(&mut self) -> Option<&'a [u8]> {
        let n = usize::from(self.u16()?);
        self.bytes(n)
    }
}

/// Check the CONNECT packet at the start of `buf` (see [`ConnectCheck`]).
/// Only MQTT 3.1.1 (protocol level 4, what rumqttd's listener speaks) is
/// forwarded.
pub fn check_connect(buf: &[u8]) -> ConnectCheck {
    let Some(&first) = buf.first() else {
        return ConnectCheck::Incomplete;
    };
    if first != 0x10 {
        return ConnectCheck::Invalid(format!("first packet is not a CONNECT (byte {first:#04x})"));
    }
    // Remaining length: 1 to 4 bytes, 7 bits each.
    let mut rem: usize = 0;
    let mut i = 1;
    loop {
        let Some(&b) = buf.get(i) else {
            return ConnectCheck::Incomplete;
        };
        rem |= usize::from(b & 0x7f) << (7 * (i - 1));
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
        if i > 4 {
            return ConnectCheck::Invalid("remaining length longer than 4 bytes".into());
        }
    }
    let Some(len) = i.checked_add(rem).filter(|l| *l <= MAX_CONNECT_BYTES) else {
        return ConnectCheck::Invalid(format!(
            "CONNECT of {rem} bytes (at most {MAX_CONNECT_BYTES})"
        ));
    };
    let Some(body) = buf.get(i..len) else {
        return ConnectCheck::Incomplete;
    };
    let mut c = Cursor { b: body, at: 0 };
    let bad = |why: &str| ConnectCheck::Invalid(format!("malformed CONNECT: {why}"));
    let Some(proto) = c.field() else {
        return bad("no protocol name");
    };
    let Some(level) = c.u8() else {
        return bad("no protocol level");
    };
    if proto != b"MQTT" || level != 4 {
        return ConnectCheck::Refuse {
            code: RC_BAD_PROTOCOL,
            why: format!(
                "protocol {:?} level {level} (only MQTT 3.1.1 is served)",
                String::from_utf8_lossy(proto)
            ),
        };
    }
    let Some(flags) = c.u8() else {
        return bad("no connect flags");
    };
    if flags & 0x01 != 0 {
        return bad("reserved flag set");
    }
    if c.u16().is_none() {
        return bad("no keep-alive");
    }
    let Some(id) = c.field() else {
        return bad("no client id");
    };
    let Ok(id) = std::str::from_utf8(id) else {
        return ConnectCheck::Refuse {
            code: RC_BAD_CLIENT_ID,
            why: "client id is not UTF-8".into(),
        };
    };
    if let Some(why) = bad_text(id, "client id", MAX_CLIENT_ID_BYTES) {
        return ConnectCheck::Refuse {
            code: RC_BAD_CLIENT_ID,
            why,
        };
    }
    if flags & 0x04 != 0 {
        let Some(topic) = c.field() else {
            return bad("no will topic");
        };
        let Ok(topic) = std::str::from_utf8(topic) else {
            return bad("will topic is not UTF-8");
        };
        if topic.is_empty() || topic.contains(['+', '#']) || topic.chars().any(char::is_control) {
            return bad("will topic empty or with a wildcard or control character");
        }
        if c.field().is_none() {
            return bad("no will message");
        }
    } else if flags & 0x38 != 0 {
        return bad("will QoS or retain without a will");
    }
    if flags & 0x80 != 0 && c.field().is_none() {
        return bad("no user name");
    }
    if flags & 0x40 != 0 && c.field().is_none() {
        return bad("no password");
    }
    if c.at != body.len() {
        return bad("bytes after the payload");
    }
    ConnectCheck::Accept {
        len,
        client_id: id.to_string(),
    }
}

/// Follows the packets a client sends after its CONNECT (sans-IO), to
/// find a DISCONNECT. rumqttd 0.20 handles a DISCONNECT and then the
/// closed socket as two disconnections of one connection id (it does not
/// close the socket itself); if a new client got that id in between, the
/// second one closed the new client (seen as a vehicle's connection
/// dropped right after it was made). The gate does not forward the
/// DISCONNECT: it closes the connection to rumqttd, one disconnection.
/// The price: rumqttd then publishes the client's last will, as after a
/// lost connection (a usim vehicle's will, `offline`, is what it has just
/// published itself).
#[derive(Debug, Default, Clone)]
pub struct Framer {
    /// Body bytes of the current packet still to pass.
    skip: usize,
    /// The fixed header read so far (type byte and length bytes).
    header: Vec<u8>,
}

impl Framer {
    /// Pass `data`; `Ok(Some(start))` if a DISCONNECT starts at `start` in
    /// `data` (0 if it started in an earlier piece), `Ok(None)` if none
    /// does, `Err` for a malformed length.
    pub fn feed(&mut self, data: &[u8]) -> Result<Option<usize>, &'static str> {
        let mut i = 0;
        while i < data.len() {
            if self.skip > 0 {
                let n = self.skip.min(data.len() - i);
                self.skip -= n;
                i += n;
                continue;
            }
            self.header.push(data[i]);
            i += 1;
            if self.header.len() == 1 {
                continue;
            }
            let last = self.header[self.header.len() - 1];
            if last & 0x80 != 0 {
                if self.header.len() >= 5 {
                    return Err("remaining length longer than 4 bytes");
                }
                continue;
            }
            let mut len = 0usize;
            for (k, b) in self.header[1..].iter().enumerate() {
                len |= usize::from(b & 0x7f) << (7 * k);
            }
            let kind = self.header[0] >> 4;
            let header_len = self.header.len();
            self.header.clear();
            self.skip = len;
            if kind == 14 {
                return Ok(Some(i.saturating_sub(header_len)));
            }
        }
        Ok(None)
    }
}

/// The gate's limits (defaults: [`GateLimits::default`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateLimits {
    /// Open connections at most (all addresses; below rumqttd's slots).
    pub max_connections: usize,
    /// The last this many of `max_connections` only for 127.0.0.1 and ::1.
    pub reserved_local: usize,
    /// Open connections per other source address at most.
    pub per_ip: usize,
    /// Time a client has to send its whole CONNECT.
    pub connect_timeout: Duration,
}

impl Default for GateLimits {
    fn default() -> Self {
        GateLimits {
            max_connections: 1000,
            reserved_local: 100,
            per_ip: 64,
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// Connections from this host's own loopback address (what `usim run`
/// and `usim up` use): the reserved slots are theirs.
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4 == std::net::Ipv4Addr::LOCALHOST,
        IpAddr::V6(v6) => {
            v6 == std::net::Ipv6Addr::LOCALHOST
                || v6.to_ipv4_mapped() == Some(std::net::Ipv4Addr::LOCALHOST)
        }
    }
}

/// Counts of open connections (sans-IO admission rule).
#[derive(Debug, Default)]
pub struct Admission {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

impl Admission {
    /// Admit a new connection from `ip` under `limits` (and count it), or
    /// say why not.
    pub fn admit(&mut self, ip: IpAddr, limits: &GateLimits) -> Result<(), &'static str> {
        let local = is_local(ip);
        if self.total >= limits.max_connections {
            return Err("the broker's connection limit is reached");
        }
        if !local && self.total + limits.reserved_local >= limits.max_connections {
            return Err("only slots reserved for this host's clients are left");
        }
        let n = self.per_ip.entry(ip).or_insert(0);
        if !local && *n >= limits.per_ip {
            return Err("too many connections from this address");
        }
        *n += 1;
        self.total += 1;
        Ok(())
    }

    /// A connection from `ip` closed.
    pub fn release(&mut self, ip: IpAddr) {
        self.total = self.total.saturating_sub(1);
        if let Some(n) = self.per_ip.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_ip.remove(&ip);
            }
        }
    }

    /// Open connections.
    pub fn total(&self) -> usize {
        self.total
    }
}

/// Releases its slot when the connection task ends.
struct Slot {
    ip: IpAddr,
    admission: Arc<Mutex<Admission>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut a) = self.admission.lock() {
            a.release(self.ip);
        }
    }
}

/// Raise this process's open-file limit to its hard limit (at most
/// 65,536), so that the gate's limits, not file descriptors, decide.
pub fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit on a local struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            let want = r.rlim_max.min(65_536);
            if r.rlim_cur < want {
                r.rlim_cur = want;
                let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &r);
            }
        }
    }
}

/// Serve the gate on `listener` (already bound), forwarding admitted
/// connections to rumqttd at `upstream`, in a thread of its own.
pub fn spawn_gate(
    listener: std::net::TcpListener,
    upstream: SocketAddr,
    limits: GateLimits,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    listener.set_nonblocking(true)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("broker-gate".into())
        .spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = TcpListener::from_std(listener) else {
                    tracing::error!("broker gate: cannot use the listening socket");
                    return;
                };
                serve(listener, upstream, limits).await;
            })
        })
}

async fn serve(listener: TcpListener, upstream: SocketAddr, limits: GateLimits) {
    let admission = Arc::new(Mutex::new(Admission::default()));
    loop {
        let (sock, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                // EMFILE and the like: wait for connections to close.
                tracing::warn!("broker gate: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let ip = peer.ip();
        let admitted = admission
            .lock()
            .map_err(|_| "internal error")
            .and_then(|mut a| a.admit(ip, &limits));
        if let Err(why) = admitted {
            tracing::warn!("broker: refused a connection from {ip}: {why}");
            drop(sock);
            continue;
        }
        let slot = Slot {
            ip,
            admission: Arc::clone(&admission),
        };
        tokio::spawn(async move {
            let _slot = slot;
            handle(sock, peer, upstream, limits.connect_timeout).await;
        });
    }
}

/// Read and check the CONNECT, then forward both ways until either side closes.
async fn handle(mut sock: TcpStream, peer: SocketAddr, upstream: SocketAddr, timeout: Duration) {
    let _ = sock.set_nodelay(true);
    let mut buf = Vec::with_capacity(256);
    let first = tokio::time::timeout(timeout, async {
        let mut chunk = [0u8; 4096];
        loop {
            match check_connect(&buf) {
                ConnectCheck::Incomplete => {}
                other => return Some(other),
            }
            let n = sock.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            // check_connect refuses a CONNECT over the cap before this grows past it.
            buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    match first {
        Err(_) => {
            tracing::debug!("broker: {peer} sent no CONNECT within {timeout:?}: closed");
        }
        Ok(None) => {}
        Ok(Some(ConnectCheck::Invalid(why))) => {
            tracing::warn!("broker: closed the connection from {peer}: {why}");
        }
        Ok(Some(ConnectCheck::Refuse { code, why })) => {
            tracing::warn!(
                "broker: refused the connection from {peer}: {}",
                super::escape_control(&why)
            );
            let _ = sock.write_all(&[0x20, 2, 0, code]).await;
            let _ = sock.shutdown().await;
        }
        Ok(Some(ConnectCheck::Incomplete)) => {}
        Ok(Some(ConnectCheck::Accept { len, .. })) => {
            let Ok(up) = TcpStream::connect(upstream).await else {
                tracing::debug!("broker gate: cannot reach the broker core at {upstream}");
                return;
            };
            let _ = up.set_nodelay(true);
            forward(sock, up, buf, len).await;
        }
    }
}

/// How long the gate waits for rumqttd's side to end after closing towards it.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Forward `first` (the CONNECT, `connect_len` bytes, and what followed
/// it) and then both directions, until either side closes or the client
/// sends DISCONNECT (not forwarded, see [`Framer`]).
async fn forward(sock: TcpStream, up: TcpStream, first: Vec<u8>, connect_len: usize) {
    let (mut cr, mut cw) = sock.into_split();
    let (mut ur, mut uw) = up.into_split();
    let mut down = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut ur, &mut cw).await;
        let _ = cw.shutdown().await;
    });
    let mut framer = Framer::default();
    let mut chunk = vec![0u8; 16 * 1024];
    let mut pending: Vec<u8> = first;
    let mut from = connect_len;
    // `pending[..from]` was checked already (the CONNECT); a malformed
    // length ends the forwarding.
    while let Ok(found) = framer.feed(&pending[from..]) {
        // Up to a DISCONNECT (not included), or everything.
        let end = found.map_or(pending.len(), |start| from + start);
        if uw.write_all(&pending[..end]).await.is_err() || found.is_some() {
            break;
        }
        let n = tokio::select! {
            r = cr.read(&mut chunk) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            _ = &mut down => return,
        };
        pending.clear();
        pending.extend_from_slice(&chunk[..n]);
        from = 0;
    }
    // Close towards rumqttd: one disconnection (see [`Framer`]).
    let _ = uw.shutdown().await;
    drop(uw);
    let _ = tokio::time::timeout(CLOSE_WAIT, &mut down).await;
    down.abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CONNECT built by hand from the MQTT 3.1.1 spec (§3.1).
    fn connect(id: &[u8], will: Option<(&[u8], &[u8])>, level: u8) -> Vec<u8> {
        let mut body = vec![0, 4, b'M', b'Q', b'T', b'T', level];
        body.push(if will.is_some() { 0x06 } else { 0x02 });
        body.extend([0, 30]);
        let field = |b: &mut Vec<u8>, s: &[u8]| {
            b.extend((s.len() as u16).to_be_bytes());
            b.extend(s);
        };
        field(&mut body, id);
        if let Some((t, m)) = will {
            field(&mut body, t);
            field(&mut body, m);
        }
        let mut p = vec![0x10];
        let mut n = body.len();
        loop {
            let mut b = (n % 128) as u8;
            n /= 128;
            if n > 0 {
                b |= 0x80;
            }
            p.push(b);
            if n == 0 {
                break;
            }
        }
        p.extend(body);
        p
    }

    #[test]
    fn good_connects_pass_whole_and_in_pieces() {
        let p = connect(
            b"usim-run-usim-alpha-0123",
            Some((b"usim/alpha/status", b"offline")),
            4,
        );
        for cut in 0..p.len() {
            assert_eq!(
                check_connect(&p[..cut]),
                ConnectCheck::Incomplete,
                "cut {cut}"
            );
        }
        let mut with_more = p.clone();
        with_more.extend([0xC0, 0]); // a PINGREQ right behind
        for b in [&p, &with_more] {
            assert_eq!(
                check_connect(b),
                ConnectCheck::Accept {
                    len: p.len(),
                    client_id: "usim-run-usim-alpha-0123".into()
                }
            );
        }
    }

    #[test]
    fn client_ids_that_stop_rumqttd_are_refused() {
        for id in [&b"x$y"[..], b"a+b", b"a#", b"a/b", b"a\x1bb", b"", b"\xff"] {
            match check_connect(&connect(id, None, 4)) {
                ConnectCheck::Refuse { code, .. } => assert_eq!(code, RC_BAD_CLIENT_ID),
                other => panic!("{id:?}: {other:?}"),
            }
        }
        assert!(matches!(
            check_connect(&connect(&[b'a'; 300], None, 4)),
            ConnectCheck::Refuse { code: 2, .. }
        ));
        assert!(matches!(
            check_connect(&connect(b"ok", None, 5)),
            ConnectCheck::Refuse { code: 1, .. }
        ));
        assert!(matches!(
            check_connect(&connect(b"ok", Some((b"a/#", b"x")), 4)),
            ConnectCheck::Invalid(_)
        ));
    }

    #[test]
    fn junk_and_oversize_are_invalid() {
        assert!(matches!(
            check_connect(b"GET / HTTP/1.1\r\n"),
            ConnectCheck::Invalid(_)
        ));
        assert!(matches!(
            check_connect(&[0x10, 0xff, 0xff, 0xff, 0x7f]),
            ConnectCheck::Invalid(_)
        ));
        assert!(matches!(
            check_connect(&[0x10, 0xff, 0xff, 0xff, 0xff, 0x01]),
            ConnectCheck::Invalid(_)
        ));
        assert!(matches!(
            check_connect(&[0x10, 0x00]),
            ConnectCheck::Invalid(_)
        ));
    }

    #[test]
    fn the_framer_finds_a_disconnect_behind_other_packets_in_any_cut() {
        // PUBLISH "a/b" "hi" (remaining length 7), PINGREQ, DISCONNECT, junk.
        let stream = [
            0x30, 7, 0, 3, b'a', b'/', b'b', b'h', b'i', 0xC0, 0, 0xE0, 0, 0x30,
        ];
        for cut in 0..stream.len() {
            let mut f = Framer::default();
            let a = f.feed(&stream[..cut]).unwrap();
            let b = f.feed(&stream[cut..]).unwrap();
            let start = a.or(b.map(|e| e + cut));
            // Starts at 11; a cut inside the DISCONNECT says 0 in the second piece.
            let want = if cut == 12 { 12 } else { 11 };
            assert_eq!(start, Some(want), "cut {cut}");
        }
        // A large PUBLISH whose body holds 0xE0 0x00 is not a DISCONNECT.
        let mut big = vec![0x30, 0x80, 0x01]; // 128 bytes
        big.extend(std::iter::repeat_n(0xE0, 128));
        assert_eq!(Framer::default().feed(&big), Ok(None));
        assert!(Framer::default()
            .feed(&[0x30, 0xff, 0xff, 0xff, 0xff, 0x01])
            .is_err());
    }

    #[test]
    fn admission_keeps_the_reserved_slots_for_this_host() {
        let limits = GateLimits {
            max_connections: 10,
            reserved_local: 3,
            per_ip: 4,
            connect_timeout: Duration::from_secs(5),
        };
        let mut a = Admission::default();
        let other = |i: u8| IpAddr::from([10, 0, 0, i]);
        let local: IpAddr = [127, 0, 0, 1].into();
        for _ in 0..4 {
            a.admit(other(1), &limits).unwrap();
        }
        assert!(a.admit(other(1), &limits).is_err(), "per-address cap");
        for _ in 0..3 {
            a.admit(other(2), &limits).unwrap();
        }
        assert_eq!(a.total(), 7);
        assert!(a.admit(other(3), &limits).is_err(), "reserved slots");
        for _ in 0..3 {
            a.admit(local, &limits).unwrap();
        }
        assert!(a.admit(local, &limits).is_err(), "total cap");
        a.release(other(1));
        a.release(local);
        assert!(a.admit(other(1), &limits).is_err(), "still reserved");
        a.admit(local, &limits).unwrap();
        assert!(is_local("::1".parse().unwrap()));
        assert!(is_local("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!is_local("127.0.0.2".parse().unwrap()));
    }
}
