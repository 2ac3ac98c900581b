//! `usim moosdb`: the [`Db`] core behind TCP, with threads (one reader per
//! client, one writer per client, one ticker), as the MOOSDB is threaded.
//!
//! Ordering: every packet the core returns is queued to the client's writer
//! thread while the core's lock is held, so a client receives its mail in
//! the order the core produced it. A writer queue that fills (a client that
//! does not read: [`MAX_QUEUED_BYTES`] or [`WRITER_QUEUE`] packets)
//! disconnects that client: memory stays bounded.
//!
//! Handshakes: the whole handshake has [`HANDSHAKE_TIMEOUT`], and at most
//! [`MAX_PENDING_HANDSHAKES`] are unfinished at once: a new connection
//! beyond closes the oldest unfinished one, so slow or silent sockets
//! cannot use up threads or file descriptors and lock MOOS apps out.
//! Wildcard matching of new variables runs outside the core's lock
//! ([`Db::match_plan`]), so other clients' mail keeps flowing meanwhile.
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::codec::{encode_packet, protocol_ok, FrameReader, PROTOCOL_BUFFER};
use super::db::{Db, DbConfig, Event, Outgoing};
use super::{log_safe, unix_now};

/// Largest packet a client may send, bytes.
pub const MAX_CLIENT_PACKET: usize = 16 * 1024 * 1024;
/// Packets queued for one client's writer before it counts as stuck.
pub const WRITER_QUEUE: usize = 4096;
/// Bytes queued for one client's writer before it counts as stuck (one
/// packet larger than this is still sent to a client with nothing queued).
pub const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;
/// How long the whole handshake may take, from the connection to the
/// name, s (the MOOSDB waits 5 s for the name).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Unfinished handshakes at once; a new connection beyond closes the oldest.
pub const MAX_PENDING_HANDSHAKES: usize = 128;
/// Largest name packet (the handshake's), bytes.
pub const MAX_HELLO_PACKET: usize = 64 * 1024;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Where to listen.
    pub bind: SocketAddr,
    /// DB settings.
    pub db: DbConfig,
    /// `MOOSTimeWarp`.
    pub time_warp: f64,
}

struct Peer {
    tx: SyncSender<Vec<u8>>,
    stream: TcpStream,
    /// Bytes in `tx` not yet written (the writer subtracts what it wrote).
    queued: Arc<AtomicUsize>,
}

struct Shared {
    db: Mutex<Db>,
    peers: Mutex<HashMap<String, Peer>>,
    warp: f64,
    origin: Instant,
    stop: AtomicBool,
    /// `ClientTimeout`, s (for the log).
    timeout: f64,
    /// Unfinished handshakes, oldest first: (id, a handle to close it).
    pending: Mutex<VecDeque<(u64, TcpStream)>>,
    next_id: AtomicU64,
    /// Unfinished handshakes closed to admit newer ones.
    shed: AtomicU64,
    /// Handshakes that failed (for a log that a flood cannot fill).
    failed: AtomicU64,
}

impl Shared {
    fn now(&self) -> f64 {
        unix_now() * self.warp
    }
    fn real(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }
    fn db(&self) -> MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn peers(&self) -> MutexGuard<'_, HashMap<String, Peer>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn pending(&self) -> MutexGuard<'_, VecDeque<(u64, TcpStream)>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Note a new unfinished handshake; close the oldest beyond the cap.
    fn admit(&self, id: u64, s: &TcpStream) {
        let Ok(handle) = s.try_clone() else { return };
        let mut shed = Vec::new();
        {
            let mut p = self.pending();
            p.push_back((id, handle));
            while p.len() > MAX_PENDING_HANDSHAKES {
                if let Some(old) = p.pop_front() {
                    shed.push(old.1);
                }
            }
        }
        for s in shed {
            let _ = s.shutdown(Shutdown::Both);
            let n = self.shed.fetch_add(1, Ordering::SeqCst) + 1;
            if n.is_power_of_two() {
                warn!(
                    "over {MAX_PENDING_HANDSHAKES} unfinished handshakes: closed the oldest \
                     ({n} so far)"
                );
            }
        }
    }

    /// The handshake `id` ended; `false` if it had been shed meanwhile.
    fn finished(&self, id: u64) -> bool {
        let mut p = self.pending();
        match p.iter().position(|(i, _)| *i == id) {
            Some(at) => {
                p.remove(at);
                true
            }
            None => false,
        }
    }

    /// Whether to log a failed handshake: the first 16, then every
    /// power of two (with the count), so a flood of sockets makes few lines.
    fn log_failure(&self) -> Option<u64> {
        let n = self.failed.fetch_add(1, Ordering::SeqCst) + 1;
        (n <= 16 || n.is_power_of_two()).then_some(n)
    }

    /// Queue packets to their clients (call with the db lock held, for order).
    fn dispatch(&self, db: &mut Db, out: Vec<Outgoing>) {
        let mut stuck = Vec::new();
        {
            let peers = self.peers();
            for o in out {
                let Some(p) = peers.get(&o.to) else { continue };
                if stuck.iter().any(|(n, _)| *n == o.to) {
                    continue;
                }
                let bytes = encode_packet(&o.msgs);
                let len = bytes.len();
                let queued = p.queued.load(Ordering::SeqCst);
                if queued > 0 && queued + len > MAX_QUEUED_BYTES {
                    stuck.push((o.to, queued));
                    continue;
                }
                p.queued.fetch_add(len, Ordering::SeqCst);
                if p.tx.try_send(bytes).is_err() {
                    p.queued.fetch_sub(len, Ordering::SeqCst);
                    stuck.push((o.to, queued));
                }
            }
        }
        for (name, queued) in stuck {
            warn!(
                "client {} does not read its mail ({queued} bytes queued, at most \
                 {MAX_QUEUED_BYTES} bytes or {WRITER_QUEUE} packets): disconnecting it",
                log_safe(&name, 80)
            );
            self.drop_client(db, &name);
        }
        log_events(db);
    }

    fn drop_client(&self, db: &mut Db, name: &str) {
        if let Some(p) = self.peers().remove(name) {
            let _ = p.stream.shutdown(Shutdown::Both);
        }
        let now = self.now();
        if db.disconnect(name, now) {
            let out = db.push_all_mail();
            self.dispatch(db, out);
        }
    }
}

fn log_events(db: &mut Db) {
    for e in db.take_events() {
        match e {
            Event::TypeMismatch { client, var } => warn!(
                "{} wrote {} with the wrong data type (fixed by its first write): refused",
                log_safe(&client, 80),
                log_safe(&var, 80)
            ),
            Event::BadRequest { client, why } => {
                warn!("{}: {}", log_safe(&client, 80), log_safe(&why, 200))
            }
            Event::Refused { client, why, total } => warn!(
                "{}: {} ({total} refusals so far)",
                log_safe(&client, 80),
                log_safe(&why, 200)
            ),
            Event::MailDropped { client, total } => warn!(
                "{}: held mail full, {total} oldest messages dropped so far",
                log_safe(&client, 80)
            ),
        }
    }
}

/// A running server; dropping it does not stop it (call [`Server::stop`]).
pub struct Server {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl Server {
    /// Bind and start the accept and tick threads.
    pub fn start(opts: ServerOptions) -> std::io::Result<Server> {
        let listener = TcpListener::bind(opts.bind)?;
        let addr = listener.local_addr()?;
        let warp = opts.time_warp;
        let shared = Arc::new(Shared {
            db: Mutex::new(Db::new(opts.db.clone(), unix_now() * warp)),
            peers: Mutex::new(HashMap::new()),
            warp,
            origin: Instant::now(),
            stop: AtomicBool::new(false),
            timeout: opts.db.client_timeout,
            pending: Mutex::new(VecDeque::new()),
            next_id: AtomicU64::new(0),
            shed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        });
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("moosdb-accept".into())
            .spawn(move || accept_loop(listener, s))?;
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("moosdb-tick".into())
            .spawn(move || tick_loop(s))?;
        Ok(Server { shared, addr })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connected client names.
    pub fn clients(&self) -> Vec<String> {
        self.shared.db().clients()
    }

    /// Stop accepting and close every connection.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for (_, p) in self.shared.peers().drain() {
            let _ = p.stream.shutdown(Shutdown::Both);
        }
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        match stream {
            Ok(s) => {
                let id = shared.next_id.fetch_add(1, Ordering::SeqCst);
                shared.admit(id, &s);
                let sh = Arc::clone(&shared);
                let spawned = std::thread::Builder::new()
                    .name("moosdb-client".into())
                    .spawn(move || client_thread(s, sh, id));
                if let Err(e) = spawned {
                    shared.finished(id);
                    warn!("cannot start a client thread: {e}");
                }
            }
            Err(e) => {
                warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn tick_loop(shared: Arc<Shared>) {
    while !shared.stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        let mut db = shared.db();
        let (now, real) = (shared.now(), shared.real());
        let (gone, out) = db.tick(now, real);
        for name in gone {
            info!(
                "disconnecting {} after {} s of silence (ClientTimeout)",
                log_safe(&name, 80),
                shared.timeout
            );
            if let Some(p) = shared.peers().remove(&name) {
                let _ = p.stream.shutdown(Shutdown::Both);
            }
        }
        shared.dispatch(&mut db, out);
    }
}

/// Read exactly `buf.len()` bytes before `deadline`, or fail.
fn read_full_by(s: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> std::io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        s.set_read_timeout(Some(left))?;
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The handshake: the protocol string and the name packet, both within
/// [`HANDSHAKE_TIMEOUT`] of the connection. `Err(why)` to log.
fn read_handshake(
    stream: &mut TcpStream,
    reader: &mut FrameReader,
) -> Result<super::codec::Message, String> {
    let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
    // 1. The protocol string (the MOOSDB does one recv of up to 32 bytes;
    //    we insist on all 32).
    let mut proto = [0u8; PROTOCOL_BUFFER];
    if let Err(e) = read_full_by(stream, &mut proto, deadline) {
        return Err(format!(
            "no protocol string within the {} s handshake ({e})",
            HANDSHAKE_TIMEOUT.as_secs()
        ));
    }
    if !protocol_ok(&proto) {
        return Err(format!(
            "Incompatible wire protocol {:?}",
            log_safe(&String::from_utf8_lossy(&proto), 40)
        ));
    }
    // 2. The name packet.
    let hello = read_packet_by(stream, reader, Some(deadline))
        .map_err(|e| format!("failed to read the client's name: {e}"))?;
    hello
        .into_iter()
        .next()
        .ok_or_else(|| "empty name packet".to_string())
}

fn client_thread(mut stream: TcpStream, shared: Arc<Shared>, id: u64) {
    let peer = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let _ = stream.set_nodelay(true);
    let mut reader = FrameReader::new(MAX_HELLO_PACKET);
    let hello = read_handshake(&mut stream, &mut reader);
    if !shared.finished(id) {
        // Shed for a newer connection (counted in the log).
        let _ = stream.shutdown(Shutdown::Both);
        return;
    }
    let first = match hello {
        Ok(m) => m,
        Err(why) => {
            if !shared.stop.load(Ordering::SeqCst) {
                if let Some(n) = shared.log_failure() {
                    warn!("{peer}: {why}; closed ({n} failed handshakes so far)");
                }
            }
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    };
    reader.set_max_packet(MAX_CLIENT_PACKET);
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let (tx, rx) = sync_channel::<Vec<u8>>(WRITER_QUEUE);
    let queued = Arc::new(AtomicUsize::new(0));
    let name;
    {
        let mut db = shared.db();
        match db.handshake(&first, shared.now(), shared.real()) {
            Ok(welcome) => {
                name = first.sval.clone();
                // The MOOSDB pauses 100 ms before welcoming; usim does not.
                let _ = stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT));
                if let Err(e) = stream.write_all(&encode_packet(&[welcome])) {
                    warn!("{peer}: cannot send the welcome: {e}");
                    db.disconnect(&name, shared.now());
                    return;
                }
                let Ok(ctl) = stream.try_clone() else {
                    db.disconnect(&name, shared.now());
                    return;
                };
                shared.peers().insert(
                    name.clone(),
                    Peer {
                        tx,
                        stream: ctl,
                        queued: Arc::clone(&queued),
                    },
                );
                info!(
                    "client {} connected from {peer} ({})",
                    log_safe(&name, 80),
                    if first.key == "asynchronous" {
                        "asynchronous"
                    } else {
                        "synchronous"
                    }
                );
                let out = db.push_all_mail();
                shared.dispatch(&mut db, out);
            }
            Err(poison) => {
                warn!("{peer}: refused: {}", log_safe(&poison.sval, 200));
                let _ = stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT));
                let _ = stream.write_all(&encode_packet(&[*poison]));
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
        }
    }
    let wname = name.clone();
    let _ = std::thread::Builder::new()
        .name("moosdb-writer".into())
        .spawn(move || writer_thread(write_half, rx, wname, queued));
    // 3. Packets until the socket closes. The read timeout only wakes the
    //    loop; the tick thread decides about silence.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    loop {
        match read_packet(&mut stream, &mut reader) {
            Ok(msgs) => {
                // Wildcard matching for new variables, outside the lock.
                let plan = {
                    let db = shared.db();
                    if !db.has_client(&name) {
                        break;
                    }
                    db.match_plan(&name, &msgs)
                };
                let pre = plan.run();
                let mut db = shared.db();
                if !db.has_client(&name) {
                    break;
                }
                let out = db.on_packet_prematched(&name, msgs, &pre, shared.now(), shared.real());
                shared.dispatch(&mut db, out);
            }
            Err(ReadError::Timeout) => {
                if !shared.db().has_client(&name) {
                    break;
                }
            }
            Err(e) => {
                let mut db = shared.db();
                if db.has_client(&name) {
                    match e {
                        ReadError::Closed => info!("client {} disconnected", log_safe(&name, 80)),
                        e => warn!("client {}: {e}; disconnecting it", log_safe(&name, 80)),
                    }
                    shared.drop_client(&mut db, &name);
                }
                break;
            }
        }
    }
    debug!("reader of {} ends", log_safe(&name, 80));
}

fn writer_thread(
    mut stream: TcpStream,
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
    name: String,
    queued: Arc<AtomicUsize>,
) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    while let Ok(bytes) = rx.recv() {
        let r = stream.write_all(&bytes);
        queued.fetch_sub(bytes.len(), Ordering::SeqCst);
        if let Err(e) = r {
            debug!("write to {} failed: {e}", log_safe(&name, 80));
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// Why reading a packet failed.
#[derive(Debug)]
pub enum ReadError {
    /// The read timeout passed with no whole packet (bytes kept).
    Timeout,
    /// The peer closed the connection.
    Closed,
    /// A socket error.
    Io(std::io::Error),
    /// Bytes that are not a MOOS packet: the stream cannot be trusted.
    Garbage(super::codec::DecodeError),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Timeout => write!(f, "read timeout"),
            ReadError::Closed => write!(f, "connection closed"),
            ReadError::Io(e) => write!(f, "socket error: {e}"),
            ReadError::Garbage(e) => write!(f, "not a MOOS packet ({e})"),
        }
    }
}

/// Read from `stream` into `reader` until a whole packet is framed.
pub fn read_packet(
    stream: &mut TcpStream,
    reader: &mut FrameReader,
) -> Result<Vec<super::codec::Message>, ReadError> {
    read_packet_by(stream, reader, None)
}

/// [`read_packet`], giving up with [`ReadError::Timeout`] at `deadline`
/// however the bytes trickle in (else each read has the socket's timeout).
pub fn read_packet_by(
    stream: &mut TcpStream,
    reader: &mut FrameReader,
    deadline: Option<Instant>,
) -> Result<Vec<super::codec::Message>, ReadError> {
    let mut buf = [0u8; 64 * 1024];
    loop {
        match reader.next_packet() {
            Ok(Some(msgs)) => return Ok(msgs),
            Ok(None) => {}
            Err(e) => return Err(ReadError::Garbage(e)),
        }
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ReadError::Timeout);
            }
            stream.set_read_timeout(Some(left)).map_err(ReadError::Io)?;
        }
        match stream.read(&mut buf) {
            Ok(0) => return Err(ReadError::Closed),
            Ok(n) => reader.push(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(ReadError::Timeout)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
}
