//! `usim moosdb`: the [`Db`] core behind TCP, with threads (one reader per
//! client, one writer per client, one ticker), as the MOOSDB is threaded.
//!
//! Ordering: every packet the core returns is queued to the client's writer
//! thread while the core's lock is held, so a client receives its mail in
//! the order the core produced it. A writer queue that fills (a client that
//! does not read) disconnects that client: memory stays bounded.
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
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
/// How long the handshake may take, s (the MOOSDB waits 5 s for the name).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

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
}

struct Shared {
    db: Mutex<Db>,
    peers: Mutex<HashMap<String, Peer>>,
    warp: f64,
    origin: Instant,
    stop: AtomicBool,
    /// `ClientTimeout`, s (for the log).
    timeout: f64,
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

    /// Queue packets to their clients (call with the db lock held, for order).
    fn dispatch(&self, db: &mut Db, out: Vec<Outgoing>) {
        let mut stuck = Vec::new();
        {
            let peers = self.peers();
            for o in out {
                let Some(p) = peers.get(&o.to) else { continue };
                match p.tx.try_send(encode_packet(&o.msgs)) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => stuck.push(o.to),
                    Err(TrySendError::Disconnected(_)) => stuck.push(o.to),
                }
            }
        }
        for name in stuck {
            warn!(
                "client {} does not read its mail ({WRITER_QUEUE} packets queued): disconnecting it",
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
                let sh = Arc::clone(&shared);
                let spawned = std::thread::Builder::new()
                    .name("moosdb-client".into())
                    .spawn(move || client_thread(s, sh));
                if let Err(e) = spawned {
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

/// Read exactly `buf.len()` bytes or fail.
fn read_full(s: &mut TcpStream, buf: &mut [u8]) -> std::io::Result<()> {
    s.read_exact(buf)
}

fn client_thread(mut stream: TcpStream, shared: Arc<Shared>) {
    let peer = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    // 1. The protocol string (the MOOSDB does one recv of up to 32 bytes;
    //    we insist on all 32, within the handshake timeout).
    let mut proto = [0u8; PROTOCOL_BUFFER];
    if let Err(e) = read_full(&mut stream, &mut proto) {
        if !shared.stop.load(Ordering::SeqCst) {
            warn!("{peer}: no protocol string within the handshake ({e}); closed");
        }
        return;
    }
    if !protocol_ok(&proto) {
        warn!(
            "{peer}: Incompatible wire protocol {:?}; closed",
            log_safe(&String::from_utf8_lossy(&proto), 40)
        );
        return;
    }
    // 2. The name packet.
    let mut reader = FrameReader::new(MAX_CLIENT_PACKET);
    let hello = match read_packet(&mut stream, &mut reader) {
        Ok(m) => m,
        Err(e) => {
            warn!("{peer}: failed to read the client's name: {e}; closed");
            return;
        }
    };
    let Some(first) = hello.into_iter().next() else {
        warn!("{peer}: empty name packet; closed");
        return;
    };
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let (tx, rx) = sync_channel::<Vec<u8>>(WRITER_QUEUE);
    let name;
    {
        let mut db = shared.db();
        match db.handshake(&first, shared.now(), shared.real()) {
            Ok(welcome) => {
                name = first.sval.clone();
                // The MOOSDB pauses 100 ms before welcoming; usim does not.
                if let Err(e) = stream.write_all(&encode_packet(&[welcome])) {
                    warn!("{peer}: cannot send the welcome: {e}");
                    db.disconnect(&name, shared.now());
                    return;
                }
                let Ok(ctl) = stream.try_clone() else {
                    db.disconnect(&name, shared.now());
                    return;
                };
                shared
                    .peers()
                    .insert(name.clone(), Peer { tx, stream: ctl });
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
                let _ = stream.write_all(&encode_packet(&[*poison]));
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
        }
    }
    let wname = name.clone();
    let _ = std::thread::Builder::new()
        .name("moosdb-writer".into())
        .spawn(move || writer_thread(write_half, rx, wname));
    // 3. Packets until the socket closes. The read timeout only wakes the
    //    loop; the tick thread decides about silence.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    loop {
        match read_packet(&mut stream, &mut reader) {
            Ok(msgs) => {
                let mut db = shared.db();
                if !db.has_client(&name) {
                    break;
                }
                let out = db.on_packet(&name, msgs, shared.now(), shared.real());
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

fn writer_thread(mut stream: TcpStream, rx: std::sync::mpsc::Receiver<Vec<u8>>, name: String) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    while let Ok(bytes) = rx.recv() {
        if let Err(e) = stream.write_all(&bytes) {
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
    let mut buf = [0u8; 64 * 1024];
    loop {
        match reader.next_packet() {
            Ok(Some(msgs)) => return Ok(msgs),
            Ok(None) => {}
            Err(e) => return Err(ReadError::Garbage(e)),
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
