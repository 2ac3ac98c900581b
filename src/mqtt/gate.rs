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
        /// The client id; empty (with clean session) when the gate must
        /// assign one ([`with_client_id`]).
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
    match connect(buf) {
        Ok(c) | Err(c) => c,
    }
}

/// [`check_connect`] with early exits: `Err` carries every verdict but Accept.
fn connect(buf: &[u8]) -> Result<ConnectCheck, ConnectCheck> {
    let (i, len) = fixed_header(buf)?;
    let body = buf.get(i..len).ok_or(ConnectCheck::Incomplete)?;
    let mut c = Cursor { b: body, at: 0 };
    let proto = c.field().ok_or_else(|| malformed("no protocol name"))?;
    let level = c.u8().ok_or_else(|| malformed("no protocol level"))?;
    if proto != b"MQTT" || level != 4 {
        return Err(ConnectCheck::Refuse {
            code: RC_BAD_PROTOCOL,
            why: format!(
                "protocol {:?} level {level} (only MQTT 3.1.1 is served)",
                String::from_utf8_lossy(proto)
            ),
        });
    }
    let flags = c.u8().ok_or_else(|| malformed("no connect flags"))?;
    if flags & 0x01 != 0 {
        return Err(malformed("reserved flag set"));
    }
    c.u16().ok_or_else(|| malformed("no keep-alive"))?;
    let id = c.field().ok_or_else(|| malformed("no client id"))?;
    let id = client_id(id, flags)?;
    will_and_login(&mut c, flags).map_err(malformed)?;
    if c.at != body.len() {
        return Err(malformed("bytes after the payload"));
    }
    Ok(ConnectCheck::Accept {
        len,
        client_id: id.to_string(),
    })
}

fn malformed(why: &str) -> ConnectCheck {
    ConnectCheck::Invalid(format!("malformed CONNECT: {why}"))
}

/// The fixed header: the CONNECT type byte and the remaining length (1 to 4
/// bytes, 7 bits each); returns (header length, whole packet length).
fn fixed_header(buf: &[u8]) -> Result<(usize, usize), ConnectCheck> {
    let &first = buf.first().ok_or(ConnectCheck::Incomplete)?;
    if first != 0x10 {
        return Err(ConnectCheck::Invalid(format!(
            "first packet is not a CONNECT (byte {first:#04x})"
        )));
    }
    let mut rem: usize = 0;
    let mut i = 1;
    loop {
        let &b = buf.get(i).ok_or(ConnectCheck::Incomplete)?;
        rem |= usize::from(b & 0x7f) << (7 * (i - 1));
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
        if i > 4 {
            return Err(ConnectCheck::Invalid(
                "remaining length longer than 4 bytes".into(),
            ));
        }
    }
    match i.checked_add(rem).filter(|l| *l <= MAX_CONNECT_BYTES) {
        Some(len) => Ok((i, len)),
        None => Err(ConnectCheck::Invalid(format!(
            "CONNECT of {rem} bytes (at most {MAX_CONNECT_BYTES})"
        ))),
    }
}

/// The client id, checked: UTF-8, printable, bounded; empty only with clean
/// session (MQTT 3.1.1 §3.1.3.1: a server may take a zero-byte client id,
/// and must then assign one; with clean session 0 it must refuse it;
/// mosquitto_pub and mosquitto_sub send an empty id by default).
fn client_id(id: &[u8], flags: u8) -> Result<&str, ConnectCheck> {
    let refuse = |why: String| ConnectCheck::Refuse {
        code: RC_BAD_CLIENT_ID,
        why,
    };
    let id = std::str::from_utf8(id).map_err(|_| refuse("client id is not UTF-8".into()))?;
    if id.is_empty() && flags & 0x02 == 0 {
        return Err(refuse(
            "empty client id without clean session (MQTT 3.1.1 §3.1.3.1)".into(),
        ));
    }
    if !id.is_empty() {
        if let Some(why) = bad_text(id, "client id", MAX_CLIENT_ID_BYTES) {
            return Err(refuse(why));
        }
    }
    Ok(id)
}

/// The will (topic and message, when its flag is set) and the user name and
/// password fields the flags announce; `Err` says what is wrong.
fn will_and_login(c: &mut Cursor<'_>, flags: u8) -> Result<(), &'static str> {
    if flags & 0x04 != 0 {
        let topic = c.field().ok_or("no will topic")?;
        let topic = std::str::from_utf8(topic).map_err(|_| "will topic is not UTF-8")?;
        if topic.is_empty() || topic.contains(['+', '#']) || topic.chars().any(char::is_control) {
            return Err("will topic empty or with a wildcard or control character");
        }
        c.field().ok_or("no will message")?;
    } else if flags & 0x38 != 0 {
        return Err("will QoS or retain without a will");
    }
    if flags & 0x80 != 0 && c.field().is_none() {
        return Err("no user name");
    }
    if flags & 0x40 != 0 && c.field().is_none() {
        return Err("no password");
    }
    Ok(())
}

/// Byte offset, in a CONNECT body, of the client id's length field: the
/// protocol name "MQTT" (2 + 4), the level, the flags and the keep-alive
/// (MQTT 3.1.1 §3.1.2) come first, always 10 bytes at level 4.
const CLIENT_ID_AT: usize = 10;

/// The CONNECT `packet` (whole, as [`check_connect`] accepted it with an
/// empty client id) with the client id `id` in place of the empty one: how
/// the gate assigns an id where MQTT 3.1.1 §3.1.3.1 lets the server do so
/// (rumqttd refuses an empty id). `None` if `packet` is not such a CONNECT.
pub fn with_client_id(packet: &[u8], id: &str) -> Option<Vec<u8>> {
    let mut i = 1;
    while packet.get(i)? & 0x80 != 0 {
        i += 1;
    }
    let body = packet.get(i + 1..)?;
    if body.get(CLIENT_ID_AT..CLIENT_ID_AT + 2)? != [0, 0] || id.len() > MAX_CLIENT_ID_BYTES {
        return None;
    }
    let mut new_body = Vec::with_capacity(body.len() + id.len());
    new_body.extend_from_slice(&body[..CLIENT_ID_AT]);
    new_body.extend((id.len() as u16).to_be_bytes());
    new_body.extend_from_slice(id.as_bytes());
    new_body.extend_from_slice(&body[CLIENT_ID_AT + 2..]);
    let mut out = vec![0x10];
    let mut n = new_body.len();
    loop {
        let b = (n % 128) as u8;
        n /= 128;
        out.push(if n > 0 { b | 0x80 } else { b });
        if n == 0 {
            break;
        }
    }
    out.extend(new_body);
    Some(out)
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
    /// A packet other than PINGREQ and DISCONNECT has begun (the client
    /// is not idle: [`Admission::active`]).
    pub active: bool,
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
            self.active |= kind != 12 && kind != 14;
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

/// One open connection's number, in the order they were admitted.
pub type ConnId = u64;

/// What [`Admission::admit`] decided for a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admitted {
    /// The new connection's number (give it back to [`Admission::release`]).
    pub id: ConnId,
    /// A connection to close now to make room: the one idle longest (it
    /// has sent nothing but its CONNECT, or not even that, since it was
    /// admitted). Its slot is already free.
    pub shed: Option<ConnId>,
}

/// Open connections and the admission rule (sans-IO): the caps of
/// [`GateLimits`], and at the total cap the shedding of idle connections,
/// longest idle first, so that clients that do nothing cannot keep a
/// vehicle of this host out (issue 37 item 17). "Idle" means nothing but
/// the CONNECT (and keep-alive pings) since admission: every usim
/// vehicle, recorder or tool subscribes or publishes at once.
#[derive(Debug, Default)]
pub struct Admission {
    per_ip: HashMap<IpAddr, usize>,
    /// Every open connection's address.
    open: HashMap<ConnId, IpAddr>,
    /// The idle ones, oldest first (numbers grow with admission time).
    idle: std::collections::BTreeSet<ConnId>,
    next: ConnId,
}

impl Admission {
    /// Admit a new connection from `ip` under `limits` (and count it), or
    /// say why not. When the cap that applies to `ip` is reached exactly
    /// (all connections for this host's clients, all but the reserved ones
    /// for others), the connection idle longest is shed to make room; if
    /// none is idle, the new one is refused.
    pub fn admit(&mut self, ip: IpAddr, limits: &GateLimits) -> Result<Admitted, &'static str> {
        let local = is_local(ip);
        if !local && self.per_ip.get(&ip).copied().unwrap_or(0) >= limits.per_ip {
            return Err("too many connections from this address");
        }
        let cap = if local {
            limits.max_connections
        } else {
            limits.max_connections.saturating_sub(limits.reserved_local)
        };
        let mut shed = None;
        if self.total() >= cap {
            let victim = self.idle.first().copied().filter(|_| self.total() == cap);
            let Some(victim) = victim else {
                return Err(if local {
                    "the broker's connection limit is reached and no connection is idle"
                } else {
                    "only slots reserved for this host's clients are left"
                });
            };
            self.release(victim);
            shed = Some(victim);
        }
        *self.per_ip.entry(ip).or_insert(0) += 1;
        let id = self.next;
        self.next += 1;
        self.open.insert(id, ip);
        self.idle.insert(id);
        Ok(Admitted { id, shed })
    }

    /// Connection `id` sent a packet other than a keep-alive ping: it is
    /// no longer a candidate for shedding.
    pub fn active(&mut self, id: ConnId) {
        self.idle.remove(&id);
    }

    /// Connection `id` closed (or was shed); a second call does nothing.
    pub fn release(&mut self, id: ConnId) {
        let Some(ip) = self.open.remove(&id) else {
            return;
        };
        self.idle.remove(&id);
        if let Some(n) = self.per_ip.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_ip.remove(&ip);
            }
        }
    }

    /// Open connections.
    pub fn total(&self) -> usize {
        self.open.len()
    }
}

/// The admission rule and the way to close a shed connection.
#[derive(Default)]
struct Connections {
    admission: Admission,
    /// Wakes connection `id`'s task to close it.
    close: HashMap<ConnId, Arc<tokio::sync::Notify>>,
}

/// Releases its slot when the connection task ends.
struct Slot {
    id: ConnId,
    conns: Arc<Mutex<Connections>>,
}

impl Slot {
    /// The connection sent a packet other than a ping (see [`Admission::active`]).
    fn active(&self) {
        if let Ok(mut c) = self.conns.lock() {
            c.admission.active(self.id);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut c) = self.conns.lock() {
            c.admission.release(self.id);
            c.close.remove(&self.id);
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
    let conns = Arc::new(Mutex::new(Connections::default()));
    // Client ids the gate assigns: unique in this broker (a process-start
    // stamp and a counter), never of the form usim's own clients use.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut assigned: u64 = 0;
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
        let close = Arc::new(tokio::sync::Notify::new());
        let admitted = conns
            .lock()
            .map_err(|_| "internal error")
            .and_then(|mut c| {
                let a = c.admission.admit(ip, &limits)?;
                if let Some(victim) = a.shed.and_then(|v| c.close.remove(&v)) {
                    victim.notify_one();
                }
                c.close.insert(a.id, Arc::clone(&close));
                Ok(a)
            });
        let a = match admitted {
            Ok(a) => a,
            Err(why) => {
                tracing::warn!("broker: refused a connection from {ip}: {why}");
                drop(sock);
                continue;
            }
        };
        if a.shed.is_some() {
            tracing::info!(
                "broker: at the connection limit: closed the connection idle longest to admit {ip}"
            );
        }
        assigned += 1;
        let auto_id = format!("auto-{stamp:016x}-{assigned}");
        let slot = Slot {
            id: a.id,
            conns: Arc::clone(&conns),
        };
        tokio::spawn(async move {
            tokio::select! {
                _ = handle(sock, peer, upstream, limits.connect_timeout, &slot, &auto_id) => {}
                _ = close.notified() => {
                    tracing::debug!("broker: shed the idle connection from {peer}");
                }
            }
            drop(slot);
        });
    }
}

/// Read and check the CONNECT (assigning `auto_id` to a client that sent
/// an empty id), then forward both ways until either side closes.
async fn handle(
    mut sock: TcpStream,
    peer: SocketAddr,
    upstream: SocketAddr,
    timeout: Duration,
    slot: &Slot,
    auto_id: &str,
) {
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
        Ok(Some(ConnectCheck::Accept { len, client_id })) => {
            let (first, len) = if client_id.is_empty() {
                // MQTT 3.1.1 §3.1.3.1: the server assigns the id.
                let Some(mut packet) = with_client_id(&buf[..len], auto_id) else {
                    return;
                };
                let n = packet.len();
                packet.extend_from_slice(&buf[len..]);
                tracing::debug!("broker: {peer} sent an empty client id: assigned {auto_id}");
                (packet, n)
            } else {
                (buf, len)
            };
            let Ok(up) = TcpStream::connect(upstream).await else {
                tracing::debug!("broker gate: cannot reach the broker core at {upstream}");
                return;
            };
            let _ = up.set_nodelay(true);
            forward(sock, up, first, len, slot).await;
        }
    }
}

/// How long the gate waits for rumqttd's side to end after closing towards it.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Forward `first` (the CONNECT, `connect_len` bytes, and what followed
/// it) and then both directions, until either side closes or the client
/// sends DISCONNECT (not forwarded, see [`Framer`]).
async fn forward(sock: TcpStream, up: TcpStream, first: Vec<u8>, connect_len: usize, slot: &Slot) {
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
    let mut active = false;
    while let Ok(found) = framer.feed(&pending[from..]) {
        if framer.active && !active {
            active = true;
            slot.active();
        }
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
        for id in [&b"x$y"[..], b"a+b", b"a#", b"a/b", b"a\x1bb", b"\xff"] {
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
    fn an_empty_client_id_gets_one_assigned_with_clean_session_only() {
        // mosquitto_pub's CONNECT: empty id, clean session (MQTT 3.1.1 §3.1.3.1).
        let p = connect(b"", Some((b"a/b", b"bye")), 4);
        assert_eq!(
            check_connect(&p),
            ConnectCheck::Accept {
                len: p.len(),
                client_id: String::new()
            }
        );
        let named = with_client_id(&p, "auto-1").expect("rewritten");
        assert_eq!(named, connect(b"auto-1", Some((b"a/b", b"bye")), 4));
        // Across a remaining length of two bytes.
        let long = "a".repeat(200);
        assert_eq!(
            with_client_id(&p, &long).unwrap(),
            connect(long.as_bytes(), Some((b"a/b", b"bye")), 4)
        );
        assert!(with_client_id(&connect(b"x", None, 4), "y").is_none());
        // Without clean session the server must refuse it (identifier rejected).
        let mut persistent = connect(b"", None, 4);
        persistent[9] &= !0x02;
        assert!(matches!(
            check_connect(&persistent),
            ConnectCheck::Refuse {
                code: RC_BAD_CLIENT_ID,
                ..
            }
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
        // Clients that publish or subscribe at once (never shed).
        let admit = |a: &mut Admission, ip| {
            a.admit(ip, &limits).map(|got| {
                assert_eq!(got.shed, None);
                a.active(got.id);
                got.id
            })
        };
        let first = admit(&mut a, other(1)).unwrap();
        for _ in 0..3 {
            admit(&mut a, other(1)).unwrap();
        }
        assert!(admit(&mut a, other(1)).is_err(), "per-address cap");
        for _ in 0..3 {
            admit(&mut a, other(2)).unwrap();
        }
        assert_eq!(a.total(), 7);
        assert!(admit(&mut a, other(3)).is_err(), "reserved slots");
        let mut locals = Vec::new();
        for _ in 0..3 {
            locals.push(admit(&mut a, local).unwrap());
        }
        assert!(admit(&mut a, local).is_err(), "total cap");
        a.release(first);
        a.release(locals[0]);
        a.release(locals[0]);
        assert_eq!(a.total(), 8, "a second release does nothing");
        assert!(admit(&mut a, other(1)).is_err(), "still reserved");
        admit(&mut a, local).unwrap();
        assert!(is_local("::1".parse().unwrap()));
        assert!(is_local("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!is_local("127.0.0.2".parse().unwrap()));
    }

    #[test]
    fn at_the_cap_the_connection_idle_longest_is_shed() {
        let limits = GateLimits {
            max_connections: 6,
            reserved_local: 2,
            per_ip: 10,
            connect_timeout: Duration::from_secs(5),
        };
        let mut a = Admission::default();
        let local: IpAddr = [127, 0, 0, 1].into();
        let remote: IpAddr = [10, 0, 0, 1].into();
        let ids: Vec<ConnId> = (0..6)
            .map(|_| a.admit(local, &limits).unwrap().id)
            .collect();
        // The first two subscribe (active); the other four stay idle.
        a.active(ids[0]);
        a.active(ids[1]);
        // Each newcomer sheds the oldest idle one, never an active one.
        for victim in &ids[2..6] {
            let got = a.admit(local, &limits).unwrap();
            assert_eq!(got.shed, Some(*victim));
            a.active(got.id);
            assert_eq!(a.total(), 6);
        }
        // Nothing idle is left: refused.
        assert!(a.admit(local, &limits).is_err());
        // A remote client sheds only to get under its own cap (6 - 2).
        a.release(ids[0]);
        a.release(ids[1]);
        let idle = a.admit(local, &limits).unwrap().id; // 5 open, 1 idle
        assert!(
            a.admit(remote, &limits).is_err(),
            "5 > 4: shedding one is not enough"
        );
        a.release(a.open.keys().copied().find(|k| *k != idle).unwrap());
        let got = a.admit(remote, &limits).unwrap(); // 4 open = its cap
        assert_eq!(got.shed, Some(idle));
    }
}
