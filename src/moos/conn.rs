//! A MOOS client connection with reconnection: the [`Client`] state
//! machine behind TCP. One manager thread connects (retrying every second,
//! as MOOS clients do), handshakes and writes; one reader thread per
//! connection frames packets and hands mail to the owner through a bounded
//! channel. A poison, a garbage packet or a lost socket is logged in one
//! clear line and followed by a reconnection; nothing grows without bound.
use std::io::Write;
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::client::{Client, State, Welcome};
use super::codec::{FrameReader, Message};
use super::server::{read_packet, ReadError};
use super::wildcard::Filter;
use super::{host_name, log_safe, unix_now};

/// Largest packet a client accepts from a DB, bytes.
pub const MAX_DB_PACKET: usize = 64 * 1024 * 1024;
/// Mail waiting for the owner before the reader blocks (back-pressure).
pub const MAIL_QUEUE: usize = 65_536;
/// How long to wait between connection attempts.
pub const RETRY: Duration = Duration::from_secs(1);
/// How long the DB may take to answer the handshake.
pub const WELCOME_TIMEOUT: Duration = Duration::from_secs(5);

/// Where to connect and as whom.
#[derive(Debug, Clone)]
pub struct ConnOptions {
    /// DB host (`ServerHost`).
    pub host: String,
    /// DB port (`ServerPort`).
    pub port: u16,
    /// Our MOOS name.
    pub name: String,
    /// `MOOSTimeWarp`.
    pub time_warp: f64,
}

/// What the connection tells its owner.
#[derive(Debug, Clone)]
pub enum Incoming {
    /// Welcomed by a DB.
    Connected(Welcome),
    /// One mail message (`N`).
    Mail(Message),
    /// The connection was lost (why); a reconnection follows.
    Disconnected(String),
}

struct Inner {
    client: Mutex<Client>,
    wake: Condvar,
    stop: AtomicBool,
    socket: Mutex<Option<TcpStream>>,
}

impl Inner {
    fn client(&self) -> MutexGuard<'_, Client> {
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A connection (handle). Dropping it stops the threads.
pub struct Conn {
    inner: Arc<Inner>,
    rx: Receiver<Incoming>,
}

impl Conn {
    /// Start connecting in the background.
    pub fn start(opts: ConnOptions) -> Conn {
        let inner = Arc::new(Inner {
            client: Mutex::new(Client::new(&opts.name, opts.time_warp, &host_name())),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
            socket: Mutex::new(None),
        });
        let (tx, rx) = sync_channel(MAIL_QUEUE);
        let i = Arc::clone(&inner);
        let spawned = std::thread::Builder::new()
            .name("moos-conn".into())
            .spawn(move || manager(opts, i, tx));
        if let Err(e) = spawned {
            warn!("cannot start the MOOS connection thread: {e}");
        }
        Conn { inner, rx }
    }

    /// MOOS time now, s.
    pub fn moos_time(&self) -> f64 {
        self.inner.client().moos_time(unix_now())
    }

    /// Whether welcomed by a DB right now.
    pub fn is_connected(&self) -> bool {
        *self.inner.client().state() == State::Connected
    }

    /// Register for `var` (kept across reconnections).
    pub fn register(&self, var: &str, interval: f64) {
        self.inner.client().register(var, interval);
        self.inner.wake.notify_all();
    }

    /// Register for every variable matching `filter`.
    pub fn register_wildcard(&self, filter: Filter) {
        self.inner.client().register_wildcard(filter);
        self.inner.wake.notify_all();
    }

    /// Post a double now.
    pub fn notify_double(&self, var: &str, v: f64) {
        self.inner.client().notify_double(var, v, unix_now());
        self.inner.wake.notify_all();
    }

    /// Post a string now.
    pub fn notify_string(&self, var: &str, v: &str) {
        self.inner.client().notify_string(var, v, unix_now());
        self.inner.wake.notify_all();
    }

    /// Post many at once under one lock (one packet), all stamped with
    /// MOOS time `moos_time` (s): `(var, double or string)`.
    pub fn notify_many<'a>(
        &self,
        posts: impl IntoIterator<Item = (&'a str, Result<f64, &'a str>)>,
        moos_time: f64,
    ) {
        {
            let mut c = self.inner.client();
            for (var, v) in posts {
                c.notify_at(var, v, moos_time);
            }
        }
        self.inner.wake.notify_all();
    }

    /// A handle that posts on this connection from another thread.
    pub fn poster(&self) -> Poster {
        Poster {
            inner: Arc::clone(&self.inner),
        }
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Incoming> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// The next event if one is waiting.
    pub fn try_recv(&self) -> Option<Incoming> {
        self.rx.try_recv().ok()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::SeqCst);
        if let Some(s) = self
            .inner
            .socket
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = s.shutdown(Shutdown::Both);
        }
        self.inner.wake.notify_all();
    }
}

/// Posts on a [`Conn`] from any thread.
#[derive(Clone)]
pub struct Poster {
    inner: Arc<Inner>,
}

impl Poster {
    /// Post a double now (queued while disconnected, bounded).
    pub fn notify_double(&self, var: &str, v: f64) {
        self.inner.client().notify_double(var, v, unix_now());
        self.inner.wake.notify_all();
    }

    /// Post a string now.
    pub fn notify_string(&self, var: &str, v: &str) {
        self.inner.client().notify_string(var, v, unix_now());
        self.inner.wake.notify_all();
    }

    /// Post a double or a string now with the auxiliary source `aux`.
    pub fn notify_aux(&self, var: &str, v: Result<f64, &str>, aux: &str) {
        self.inner.client().notify_aux(var, v, aux, unix_now());
        self.inner.wake.notify_all();
    }
}

fn connect(host: &str, port: u16) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("no address");
    for a in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, Duration::from_secs(2)) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn manager(opts: ConnOptions, inner: Arc<Inner>, tx: SyncSender<Incoming>) {
    let target = format!("{}:{}", opts.host, opts.port);
    let mut failures = 0u64;
    let mut last_complaint: Option<Instant> = None;
    // One line at once, then at most one every 30 s while it lasts.
    fn complain(last: &mut Option<Instant>, what: String) {
        if last.is_none_or(|t| t.elapsed() >= Duration::from_secs(30)) {
            warn!("{what}; retrying every {} s", RETRY.as_secs());
            *last = Some(Instant::now());
        }
    }
    while !inner.stop.load(Ordering::SeqCst) {
        let mut stream = match connect(&opts.host, opts.port) {
            Ok(s) => s,
            Err(e) => {
                failures += 1;
                complain(&mut last_complaint, format!("no MOOSDB at {target}: {e}"));
                std::thread::sleep(RETRY);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let hello = inner.client().hello(unix_now());
        if let Err(e) = stream.write_all(&hello) {
            complain(
                &mut last_complaint,
                format!("MOOSDB at {target} closed during the handshake: {e}"),
            );
            std::thread::sleep(RETRY);
            continue;
        }
        let _ = stream.set_read_timeout(Some(WELCOME_TIMEOUT));
        let mut reader = FrameReader::new(MAX_DB_PACKET);
        let welcome = match read_packet(&mut stream, &mut reader) {
            Ok(msgs) => inner.client().on_welcome(&msgs),
            Err(e) => {
                inner.client().on_disconnect();
                complain(
                    &mut last_complaint,
                    format!("no welcome from the MOOSDB at {target}: {e}"),
                );
                std::thread::sleep(RETRY);
                continue;
            }
        };
        let welcome = match welcome {
            Ok(w) => w,
            Err(e) => {
                complain(&mut last_complaint, format!("{e} (at {target})"));
                std::thread::sleep(RETRY);
                continue;
            }
        };
        info!(
            "{} connected to the MOOSDB at {target}, community {}{}",
            log_safe(&opts.name, 80),
            log_safe(&welcome.community, 80),
            if failures > 0 {
                format!(" after {failures} failed attempts")
            } else {
                String::new()
            }
        );
        failures = 0;
        last_complaint = None;
        if tx.send(Incoming::Connected(welcome)).is_err() {
            return;
        }
        let Ok(read_half) = stream.try_clone() else {
            continue;
        };
        if let Ok(ctl) = stream.try_clone() {
            *inner.socket.lock().unwrap_or_else(|e| e.into_inner()) = Some(ctl);
        }
        let alive = Arc::new(AtomicBool::new(true));
        let (i2, a2, tx2) = (Arc::clone(&inner), Arc::clone(&alive), tx.clone());
        let reader_thread = std::thread::Builder::new()
            .name("moos-reader".into())
            .spawn(move || reader_loop(read_half, reader, i2, a2, tx2));
        if reader_thread.is_err() {
            warn!("cannot start the MOOS reader thread");
            return;
        }
        let why = writer_loop(&mut stream, &inner, &alive);
        alive.store(false, Ordering::SeqCst);
        let _ = stream.shutdown(Shutdown::Both);
        if let Ok(h) = reader_thread {
            let _ = h.join();
        }
        inner.client().on_disconnect();
        if inner.stop.load(Ordering::SeqCst) {
            return;
        }
        warn!("lost the MOOSDB at {target}: {why}; reconnecting");
        if tx.send(Incoming::Disconnected(why)).is_err() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn writer_loop(stream: &mut TcpStream, inner: &Inner, alive: &AtomicBool) -> String {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    loop {
        let bytes = {
            let mut c = inner.client();
            loop {
                if inner.stop.load(Ordering::SeqCst) {
                    return "stopped".into();
                }
                if !alive.load(Ordering::SeqCst) {
                    return "the connection closed".into();
                }
                if *c.state() != State::Connected {
                    return "the MOOSDB poisoned the client".into();
                }
                if let Some(b) = c.poll_send(unix_now()) {
                    break b;
                }
                c = inner
                    .wake
                    .wait_timeout(c, Duration::from_millis(100))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
        };
        if let Err(e) = stream.write_all(&bytes) {
            return format!("write failed: {e}");
        }
    }
}

fn reader_loop(
    mut stream: TcpStream,
    mut reader: FrameReader,
    inner: Arc<Inner>,
    alive: Arc<AtomicBool>,
    tx: SyncSender<Incoming>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let why = loop {
        if inner.stop.load(Ordering::SeqCst) || !alive.load(Ordering::SeqCst) {
            break None;
        }
        match read_packet(&mut stream, &mut reader) {
            Ok(msgs) => {
                let r = {
                    let mut c = inner.client();
                    let (refused, reseats) = (c.echoes_refused, c.skew_reseats);
                    let r = c.on_packet(msgs, unix_now());
                    if c.echoes_refused > refused && c.echoes_refused.is_power_of_two() {
                        warn!(
                            "MOOS timing echo refused (not finite, not ours, over {} s of round trip \
                             or a skew over {} s): {} so far",
                            super::client::MAX_ECHO_RTT,
                            super::client::MAX_SKEW,
                            c.echoes_refused
                        );
                    }
                    if c.skew_reseats > reseats {
                        warn!(
                            "the MOOSDB's clock moved: clock skew now {:.3} s (the vehicle's clock \
                             catches up without a jump)",
                            c.skew()
                        );
                    }
                    r
                };
                match r {
                    Ok(mail) => {
                        for m in mail {
                            if tx.send(Incoming::Mail(m)).is_err() {
                                break;
                            }
                        }
                    }
                    Err(e) => break Some(format!("{e}")),
                }
            }
            Err(ReadError::Timeout) => {}
            Err(ReadError::Closed) => break Some("the MOOSDB closed the connection".to_string()),
            Err(e) => break Some(format!("{e}")),
        }
    };
    if let Some(why) = why {
        warn!("MOOS connection: {why}");
    }
    alive.store(false, Ordering::SeqCst);
    inner.wake.notify_all();
}
