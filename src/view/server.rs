//! The shell of `usim view`: an axum server (the page at `/`, the
//! WebSocket at `/ws`, counters at `/status.json`) and one MQTT client.
//!
//! Three kinds of task:
//! * the MQTT poller forwards `status` and `NODE_REPORT` messages to the hub;
//! * the hub owns the [`Fleet`], coalesces changes into frames (at most
//!   `fps` a second, latest-wins through a `watch` channel, so a slow page
//!   skips frames and memory stays bounded) and publishes the pages'
//!   commands after [`Fleet::check_command`];
//! * one task per open page: sends frames, takes commands. It ends when the
//!   page closes, its socket breaks, or a send stalls for [`SEND_TIMEOUT`].
//!
//! Connections come through our own accept loop (not `axum::serve`): at
//! most `max_connections` at once (more are closed at once), request
//! headers within `header_timeout`, and a connection that moves no byte
//! either way for `idle_timeout` before it becomes a WebSocket is closed.
//! Frames waiting to be written to all pages together hold at most
//! [`SEND_BUDGET`] bytes: a page that cannot keep up skips frames, and is
//! dropped after [`SEND_TIMEOUT`] without progress.
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rumqttc::{AsyncClient, Event, Packet, QoS, SubscribeFilter};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, oneshot, watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::protocol::{
    check_access, parse_client_message, reply_json, ClientMessage, Denied, Fleet, FrameClock,
    MAX_CLIENT_MESSAGE, MAX_PAYLOAD,
};
use crate::mqtt::endpoint::{connection_failure, BrokerUrl, ConnectSpec};
use crate::mqtt::tools::ToolConnection;
use crate::mqtt::BridgeError;

/// The default listen address: loopback only.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// The default frame rate limit, frames/s.
pub const DEFAULT_FPS: f64 = 20.0;
/// A page whose socket takes longer than this to accept one message (or
/// that skipped frames for this long) is dropped: it is gone or hopelessly
/// slow.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);
/// A ping this often finds pages that vanished without closing.
pub const PING_EVERY: Duration = Duration::from_secs(15);
/// Default cap on open connections (`--max-connections`), pages included.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Default time a client has to send its request headers, s.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time an HTTP connection may move no byte before it is closed.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of frames being written to all pages together; beyond it a page
/// skips frames (its socket is not taking them).
pub const SEND_BUDGET: usize = 8 * 1024 * 1024;
/// Largest MQTT packet the client reads whole (MQTT's own maximum): larger
/// than [`MAX_PAYLOAD`] is ignored after reading, never a disconnect (a
/// disconnect would loop on a retained message).
const MQTT_READ_LIMIT: usize = 268_435_460;

/// What `usim view` serves.
#[derive(Debug, Clone)]
pub struct ViewOptions {
    /// Broker and topic root.
    pub conn: ToolConnection,
    /// HTTP listen address (port 0: any free port).
    pub bind: SocketAddr,
    /// If set, required as `?token=` by the page and the WebSocket.
    pub token: Option<String>,
    /// At most this many frames per second to each page.
    pub fps: f64,
    /// Open connections at most (pages, page loads, status requests).
    pub max_connections: usize,
    /// Vehicles kept at most (the longest silent goes first).
    pub max_vehicles: usize,
    /// A vehicle not heard from for this long leaves the table, s.
    pub expire_s: f64,
    /// Time allowed for the request headers.
    pub header_timeout: Duration,
    /// An HTTP connection moving no byte for this long is closed.
    pub idle_timeout: Duration,
    /// The mission's pMarineViewer buttons and the community they post to.
    pub buttons: Option<(String, Vec<super::buttons::Button>)>,
}

impl ViewOptions {
    /// Options with the defaults for everything but broker, address and token.
    pub fn new(conn: ToolConnection, bind: SocketAddr, token: Option<String>) -> ViewOptions {
        ViewOptions {
            conn,
            bind,
            token,
            fps: DEFAULT_FPS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_vehicles: super::protocol::MAX_VEHICLES,
            expire_s: super::protocol::DEFAULT_EXPIRE_S,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            buttons: None,
        }
    }
}

/// A random token for the page URL: 128 bits from the OS, 32 hex digits.
pub fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Counters shown at `/status.json` (for tests and monitoring).
#[derive(Debug, Default)]
struct Counters {
    clients: AtomicUsize,
    connections: AtomicUsize,
    frames: AtomicU64,
    commands: AtomicU64,
    refused: AtomicU64,
    /// Connections closed at once because `max_connections` were open.
    rejected_connections: AtomicU64,
    /// MQTT messages over [`MAX_PAYLOAD`], ignored.
    oversize: AtomicU64,
    /// Frames a page skipped because its socket was not taking them.
    skipped_frames: AtomicU64,
    /// Pages dropped for not keeping up.
    dropped_clients: AtomicU64,
    /// Bytes of frames being written now, all pages together.
    sending: AtomicUsize,
    vehicles: AtomicUsize,
    expired: AtomicU64,
    evicted: AtomicU64,
}

type CommandRequest = (ClientMessage, oneshot::Sender<String>);

#[derive(Clone)]
struct AppState {
    frames: watch::Receiver<Arc<str>>,
    trails: watch::Receiver<Arc<str>>,
    geometry: watch::Receiver<Arc<str>>,
    /// The buttons message, sent once to each page.
    buttons: Arc<str>,
    commands: mpsc::Sender<CommandRequest>,
    token: Option<Arc<str>>,
    loopback: bool,
    counters: Arc<Counters>,
}

/// A bound, not yet running view server.
pub struct ViewServer {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    opts: ViewOptions,
}

impl ViewServer {
    /// Check the options and bind the listen address.
    pub async fn bind(opts: ViewOptions) -> Result<ViewServer, BridgeError> {
        if !(opts.fps.is_finite() && opts.fps > 0.0 && opts.fps <= 1000.0) {
            return Err(BridgeError::BadOption(format!(
                "--fps must be in (0, 1000], got {}",
                opts.fps
            )));
        }
        if !(1..=65_536).contains(&opts.max_connections) {
            return Err(BridgeError::BadOption(format!(
                "--max-connections must be in [1, 65536], got {}",
                opts.max_connections
            )));
        }
        if !(1..=super::protocol::MAX_VEHICLES_LIMIT).contains(&opts.max_vehicles) {
            return Err(BridgeError::BadOption(format!(
                "--max-vehicles must be in [1, {}], got {}",
                super::protocol::MAX_VEHICLES_LIMIT,
                opts.max_vehicles
            )));
        }
        if !(opts.expire_s.is_finite() && opts.expire_s >= 1.0 && opts.expire_s <= 1e7) {
            return Err(BridgeError::BadOption(format!(
                "--expire must be in [1, 1e7] s, got {}",
                opts.expire_s
            )));
        }
        if let Some(t) = &opts.token {
            if t.is_empty()
                || !t
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
            {
                return Err(BridgeError::BadOption(
                    "--token must be non-empty and use only letters, digits and -_.~ \
                     (it goes into the page's URL)"
                        .into(),
                ));
            }
        }
        crate::mqtt::topics::Topics::new(&opts.conn.topic_root, "x")?;
        let listener = tokio::net::TcpListener::bind(opts.bind)
            .await
            .map_err(|e| {
                BridgeError::Io(std::io::Error::new(
                    e.kind(),
                    format!("cannot listen on {}: {e}", opts.bind),
                ))
            })?;
        let addr = listener.local_addr()?;
        Ok(ViewServer {
            listener,
            addr,
            opts,
        })
    }

    /// The address actually bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether it listens on loopback only.
    pub fn is_loopback(&self) -> bool {
        self.addr.ip().is_loopback()
    }

    /// The page's URL, with the token if one is required.
    pub fn url(&self) -> String {
        let host = if self.addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else if self.addr.is_ipv6() {
            format!("[{}]", self.addr.ip())
        } else {
            self.addr.ip().to_string()
        };
        match &self.opts.token {
            Some(t) => format!("http://{host}:{}/?token={t}", self.addr.port()),
            None => format!("http://{host}:{}/", self.addr.port()),
        }
    }

    /// Serve until `shutdown` resolves.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), BridgeError> {
        raise_fd_limit(self.opts.max_connections);
        return_frames_to_the_os();
        let mut fleet = Fleet::with_limits(
            &self.opts.conn.topic_root,
            self.opts.max_vehicles,
            self.opts.expire_s,
        );
        if let Some((community, buttons)) = self.opts.buttons.clone() {
            fleet.set_buttons(&community, buttons);
        }
        let buttons: Arc<str> = Arc::from(fleet.buttons_json());
        let filters: Vec<SubscribeFilter> = fleet
            .filters()
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let q = if i == 0 {
                    QoS::AtLeastOnce
                } else {
                    QoS::AtMostOnce
                };
                SubscribeFilter::new(f, q)
            })
            .collect();
        let conn = &self.opts.conn;
        let mut spec = ConnectSpec::new(conn.url.clone(), client_id());
        spec.credentials = conn.credentials.clone();
        spec.ca_file = conn.ca_file.clone();
        spec.max_incoming_packet = MQTT_READ_LIMIT;
        let (client, eventloop) = spec.client(256)?;

        let (mqtt_tx, mqtt_rx) = mpsc::channel(4096);
        let (cmd_tx, cmd_rx) = mpsc::channel(256);
        let (frames_tx, frames_rx) =
            watch::channel::<Arc<str>>(Arc::from(r#"{"type":"frame","vehicles":[]}"#));
        let (trails_tx, trails_rx) =
            watch::channel::<Arc<str>>(Arc::from(r#"{"type":"trails","trails":[]}"#));
        let (geometry_tx, geometry_rx) =
            watch::channel::<Arc<str>>(Arc::from(r#"{"type":"geometry","shapes":[]}"#));
        let counters = Arc::new(Counters::default());
        let poller = tokio::spawn(mqtt_poller(
            eventloop,
            client.clone(),
            filters,
            mqtt_tx,
            conn.url.clone(),
            Arc::clone(&counters),
        ));
        let hub = tokio::spawn(hub(
            fleet,
            mqtt_rx,
            cmd_rx,
            client.clone(),
            (frames_tx, trails_tx, geometry_tx),
            self.opts.fps,
            Arc::clone(&counters),
        ));
        let state = AppState {
            frames: frames_rx,
            trails: trails_rx,
            geometry: geometry_rx,
            buttons,
            commands: cmd_tx,
            token: self.opts.token.as_deref().map(Arc::from),
            loopback: self.is_loopback(),
            counters: Arc::clone(&counters),
        };
        let app = Router::new()
            .route("/", get(page))
            .route("/ws", get(socket))
            .route("/status.json", get(status))
            .with_state(state);
        let limits = ConnLimits {
            slots: Arc::new(Semaphore::new(self.opts.max_connections)),
            header_timeout: self.opts.header_timeout,
            idle_timeout: self.opts.idle_timeout,
        };
        accept_loop(self.listener, app, limits, counters, shutdown).await;
        poller.abort();
        hub.abort();
        let _ = client.try_disconnect();
        Ok(())
    }
}

/// Raise the soft open-file limit toward the hard one so that
/// `max_connections` sockets fit (best effort: the cap holds either way).
fn raise_fd_limit(max_connections: usize) {
    let want = (max_connections as u64).saturating_add(256);
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < want {
            r.rlim_cur = want.min(r.rlim_max);
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Frames are copied once per page: with glibc's default dynamic mmap
/// threshold these copies come from the heap arenas, which keep freed
/// memory; a fixed threshold of 64 KiB gives larger blocks back to the OS
/// when freed, so memory follows the pages that are open (best effort).
fn return_frames_to_the_os() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 * 1024);
        libc::mallopt(libc::M_ARENA_MAX, 4);
    }
}

#[derive(Clone)]
struct ConnLimits {
    slots: Arc<Semaphore>,
    header_timeout: Duration,
    idle_timeout: Duration,
}

/// Accept connections until `shutdown`; each gets a slot or is closed.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ConnLimits,
    counters: Arc<Counters>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    tokio::pin!(shutdown);
    let mut warned_full = false;
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => return,
            a = listener.accept() => a,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // EMFILE and the like: wait for sockets to close.
                debug!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&limits.slots).try_acquire_owned() else {
            counters
                .rejected_connections
                .fetch_add(1, Ordering::Relaxed);
            if !warned_full {
                warn!("connection limit reached (--max-connections): new connections are closed");
                warned_full = true;
            }
            drop(tcp);
            continue;
        };
        warned_full = false;
        let _ = tcp.set_nodelay(true);
        let io = TrackedIo::new(tcp, permit, Arc::clone(&counters));
        let last = Arc::clone(&io.last);
        let io_start = io.start;
        let app = app.clone();
        let limits = limits.clone();
        tokio::spawn(async move {
            let svc = hyper_util::service::TowerToHyperService::new(app);
            let mut b = hyper::server::conn::http1::Builder::new();
            b.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(64 * 1024);
            let conn = b
                .serve_connection(hyper_util::rt::TokioIo::new(io), svc)
                .with_upgrades();
            let idle = async {
                loop {
                    tokio::time::sleep(limits.idle_timeout / 4).await;
                    let now_ms = io_start.elapsed().as_millis() as u64;
                    let quiet = now_ms.saturating_sub(last.load(Ordering::Relaxed));
                    if quiet >= limits.idle_timeout.as_millis() as u64 {
                        return;
                    }
                }
            };
            tokio::select! {
                r = conn => if let Err(e) = r { debug!("HTTP connection: {e}") },
                _ = idle => debug!("idle HTTP connection closed"),
            }
        });
    }
}

/// A TCP stream that holds a connection slot while it lives (the slot goes
/// with it into a WebSocket) and notes when a byte last moved.
struct TrackedIo {
    tcp: tokio::net::TcpStream,
    _permit: OwnedSemaphorePermit,
    counters: Arc<Counters>,
    start: std::time::Instant,
    /// Milliseconds since `start` of the last read or write.
    last: Arc<AtomicU64>,
}

impl TrackedIo {
    fn new(
        tcp: tokio::net::TcpStream,
        permit: OwnedSemaphorePermit,
        c: Arc<Counters>,
    ) -> TrackedIo {
        c.connections.fetch_add(1, Ordering::Relaxed);
        TrackedIo {
            tcp,
            _permit: permit,
            counters: c,
            start: std::time::Instant::now(),
            last: Arc::new(AtomicU64::new(0)),
        }
    }

    fn touch(&self) {
        self.last
            .store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
}

impl Drop for TrackedIo {
    fn drop(&mut self) {
        self.counters.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

impl AsyncRead for TrackedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        r
    }
}

impl AsyncWrite for TrackedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.tcp).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

fn client_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("usim-view-{}-{nanos}", std::process::id())
}

/// Keep the MQTT connection, (re)subscribe on every ConnAck, forward messages.
async fn mqtt_poller(
    mut eventloop: rumqttc::EventLoop,
    client: AsyncClient,
    filters: Vec<SubscribeFilter>,
    tx: mpsc::Sender<(String, bytes::Bytes)>,
    url: BrokerUrl,
    counters: Arc<Counters>,
) {
    let mut failures = 0u32;
    loop {
        match eventloop.poll().await {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                if failures >= 4 {
                    info!("connected to the MQTT broker at {url}");
                }
                failures = 0;
                let _ = client.try_subscribe_many(filters.clone());
            }
            Ok(Event::Incoming(Packet::Publish(p))) => {
                if p.payload.len() > MAX_PAYLOAD {
                    let n = counters.oversize.fetch_add(1, Ordering::Relaxed);
                    if n.is_power_of_two() || n == 0 {
                        warn!(
                            "ignored {} MQTT message(s) over {MAX_PAYLOAD} bytes (latest on {})",
                            n + 1,
                            crate::text::escape_control(&crate::mqtt::clip_for_log(&p.topic, 80))
                        );
                    }
                    continue;
                }
                if tx.send((p.topic, p.payload)).await.is_err() {
                    return;
                }
            }
            Ok(_) => {}
            Err(e) => {
                // The broker may be starting with us (`usim up --view`):
                // say so only after 2 s of retries.
                if failures == 4 {
                    warn!("{}; retrying", connection_failure(&url, &e));
                } else {
                    debug!("MQTT: {e}");
                }
                failures = failures.saturating_add(1);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
}

/// The hub's outputs to the pages: frames, trails, geometry.
type Outputs = (
    watch::Sender<Arc<str>>,
    watch::Sender<Arc<str>>,
    watch::Sender<Arc<str>>,
);

/// Own the fleet model: take messages, publish frames, check and send commands.
async fn hub(
    mut fleet: Fleet,
    mut mqtt_rx: mpsc::Receiver<(String, bytes::Bytes)>,
    mut cmd_rx: mpsc::Receiver<CommandRequest>,
    client: AsyncClient,
    (frames, trails, geometry): Outputs,
    fps: f64,
    counters: Arc<Counters>,
) {
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let mut clock = FrameClock::new(fps);
    let mut housekeeping = tokio::time::interval(Duration::from_secs(1));
    let mut trails_dirty = false;
    loop {
        let deadline = fleet
            .is_dirty()
            .then(|| clock.next_allowed())
            .flatten()
            .map(|t| start + Duration::from_secs_f64(t));
        let wait = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            m = mqtt_rx.recv() => {
                let Some((topic, payload)) = m else { return };
                if let Err(e) = fleet.on_message(&topic, &payload, now()) {
                    debug!("dropped: {e}");
                }
            }
            c = cmd_rx.recv() => {
                let Some((msg, reply)) = c else { return };
                let checked = match &msg {
                    ClientMessage::Button { id, index } => fleet.check_button(*id, *index),
                    _ => fleet.check_command(&msg).map(|p| vec![p]),
                };
                let answer = match checked {
                    Ok(ps) => {
                        let id = match &msg {
                            ClientMessage::Button { id, .. } | ClientMessage::Command { id, .. } => *id,
                        };
                        let mut sent = Vec::new();
                        let mut failed = None;
                        for p in &ps {
                            match client.try_publish(p.topic.clone(), QoS::AtLeastOnce, false, p.payload.clone()) {
                                Ok(()) => {
                                    counters.commands.fetch_add(1, Ordering::Relaxed);
                                    info!(
                                        "page posted {} = {}",
                                        crate::text::escape_control(&p.topic),
                                        crate::text::escape_control(&p.payload)
                                    );
                                    sent.push(format!("{} = {}", p.topic, p.payload));
                                }
                                Err(e) => {
                                    failed = Some(e);
                                    break;
                                }
                            }
                        }
                        match failed {
                            None => reply_json(id, Ok(&format!("sent {}", sent.join(", ")))),
                            Some(e) => {
                                counters.refused.fetch_add(1, Ordering::Relaxed);
                                reply_json(id, Err(&format!("not sent: MQTT client busy or disconnected ({e})")))
                            }
                        }
                    }
                    Err(r) => {
                        counters.refused.fetch_add(1, Ordering::Relaxed);
                        info!("page command refused: {}", crate::text::escape_control(&r.reason));
                        reply_json(r.id, Err(&r.reason))
                    }
                };
                let _ = reply.send(answer);
            }
            _ = housekeeping.tick() => {
                fleet.expire(now());
                counters.vehicles.store(fleet.vehicles().len(), Ordering::Relaxed);
                counters.expired.store(fleet.expired, Ordering::Relaxed);
                counters.evicted.store(fleet.evicted, Ordering::Relaxed);
                fleet.shapes.expire(now());
                if fleet.shapes.is_dirty() {
                    geometry.send_replace(Arc::from(fleet.shapes.take_json()));
                }
                if trails_dirty {
                    trails.send_replace(Arc::from(fleet.trails_json()));
                    trails_dirty = false;
                }
            }
            _ = wait => {}
        }
        if fleet.is_dirty() {
            trails_dirty = true;
        }
        if fleet.is_dirty() && clock.may_send(now()) {
            let t = now();
            frames.send_replace(Arc::from(fleet.frame(t)));
            clock.sent(t);
            counters.frames.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn denied(d: Denied) -> Response {
    let (code, text) = match d {
        Denied::Token => (
            StatusCode::UNAUTHORIZED,
            "token missing or wrong: open the URL that `usim view` printed (…/?token=…)\n",
        ),
        Denied::Origin => (
            StatusCode::FORBIDDEN,
            "WebSocket from another origin refused\n",
        ),
        Denied::Host => (
            StatusCode::FORBIDDEN,
            "this server answers to loopback host names only (127.0.0.1, localhost, [::1])\n",
        ),
    };
    (code, text).into_response()
}

fn access(s: &AppState, q: &HashMap<String, String>, h: &HeaderMap) -> Result<(), Denied> {
    let header = |name: header::HeaderName| h.get(name).and_then(|v| v.to_str().ok());
    check_access(
        s.token.as_deref(),
        q.get("token").map(String::as_str),
        header(header::HOST),
        header(header::ORIGIN),
        s.loopback,
    )
}

async fn page(
    State(s): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
) -> Response {
    if let Err(d) = access(&s, &q, &h) {
        return denied(d);
    }
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; img-src data:; frame-ancestors 'none'",
            ),
        ],
        super::PAGE,
    )
        .into_response()
}

async fn status(
    State(s): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
) -> Response {
    if let Err(d) = access(&s, &q, &h) {
        return denied(d);
    }
    let c = &s.counters;
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::json!({
            "clients": c.clients.load(Ordering::Relaxed),
            "connections": c.connections.load(Ordering::Relaxed),
            "rejected_connections": c.rejected_connections.load(Ordering::Relaxed),
            "oversize": c.oversize.load(Ordering::Relaxed),
            "skipped_frames": c.skipped_frames.load(Ordering::Relaxed),
            "dropped_clients": c.dropped_clients.load(Ordering::Relaxed),
            "sending_bytes": c.sending.load(Ordering::Relaxed),
            "vehicles": c.vehicles.load(Ordering::Relaxed),
            "expired": c.expired.load(Ordering::Relaxed),
            "evicted": c.evicted.load(Ordering::Relaxed),
            "frames": c.frames.load(Ordering::Relaxed),
            "commands": c.commands.load(Ordering::Relaxed),
            "refused": c.refused.load(Ordering::Relaxed),
        })
        .to_string(),
    )
        .into_response()
}

async fn socket(
    State(s): State<AppState>,
    Query(q): Query<HashMap<String, String>>,
    h: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if let Err(d) = access(&s, &q, &h) {
        return denied(d);
    }
    ws.max_message_size(MAX_CLIENT_MESSAGE * 4)
        .max_frame_size(MAX_CLIENT_MESSAGE * 4)
        .write_buffer_size(0)
        .max_write_buffer_size(8 * 1024 * 1024)
        .on_upgrade(move |socket| page_session(socket, s))
}

/// Counts an open page while it lives.
struct ClientGuard(Arc<Counters>);

impl ClientGuard {
    fn new(c: &Arc<Counters>) -> ClientGuard {
        c.clients.fetch_add(1, Ordering::Relaxed);
        ClientGuard(Arc::clone(c))
    }
}

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.0.clients.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn send(socket: &mut WebSocket, m: Message) -> bool {
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, socket.send(m)).await,
        Ok(Ok(()))
    )
}

/// Send a frame within the shared [`SEND_BUDGET`]: `None` if it had to be
/// skipped (the budget is spent), else whether the send worked.
async fn send_frame(socket: &mut WebSocket, s: &AppState, text: String) -> Option<bool> {
    let n = text.len();
    let before = s.counters.sending.fetch_add(n, Ordering::Relaxed);
    if before + n > SEND_BUDGET && before > 0 {
        s.counters.sending.fetch_sub(n, Ordering::Relaxed);
        s.counters.skipped_frames.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    let ok = send(socket, Message::Text(text)).await;
    s.counters.sending.fetch_sub(n, Ordering::Relaxed);
    Some(ok)
}

/// One page: the trails, then frames out, commands in, until the page goes.
async fn page_session(mut socket: WebSocket, s: AppState) {
    let _guard = ClientGuard::new(&s.counters);
    debug!("page connected");
    let mut frames = s.frames.clone();
    let mut geometry = s.geometry.clone();
    let buttons = s.buttons.to_string();
    if send_frame(&mut socket, &s, buttons).await != Some(true) {
        s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let trails = s.trails.borrow().to_string();
    if send_frame(&mut socket, &s, trails).await != Some(true) {
        s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let shapes = geometry.borrow_and_update().to_string();
    if send_frame(&mut socket, &s, shapes).await == Some(false) {
        s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let first = frames.borrow_and_update().to_string();
    if send_frame(&mut socket, &s, first).await == Some(false) {
        s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let mut ping = tokio::time::interval_at(Instant::now() + PING_EVERY, PING_EVERY);
    // Since when frames were skipped without one getting through.
    let mut skipping_since: Option<Instant> = None;
    loop {
        let out = tokio::select! {
            changed = frames.changed() => {
                if changed.is_err() {
                    break;
                }
                let text = frames.borrow_and_update().to_string();
                match send_frame(&mut socket, &s, text).await {
                    Some(true) => { skipping_since = None; continue }
                    Some(false) => {
                        s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    None => {
                        let since = *skipping_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= SEND_TIMEOUT {
                            s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                        continue;
                    }
                }
            }
            changed = geometry.changed() => {
                if changed.is_err() {
                    break;
                }
                let text = geometry.borrow_and_update().to_string();
                if send_frame(&mut socket, &s, text).await == Some(false) {
                    s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                continue;
            }
            _ = ping.tick() => Message::Ping(Vec::new()),
            msg = socket.recv() => match msg {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => break,
                Some(Ok(Message::Text(t))) => Message::Text(command(&s, &t).await),
                Some(Ok(Message::Binary(_))) => {
                    s.counters.refused.fetch_add(1, Ordering::Relaxed);
                    Message::Text(reply_json(0, Err("binary messages are not accepted: send JSON text")))
                }
                Some(Ok(_)) => continue,
            },
        };
        if !send(&mut socket, out).await {
            s.counters.dropped_clients.fetch_add(1, Ordering::Relaxed);
            break;
        }
    }
    debug!("page disconnected");
}

async fn command(s: &AppState, text: &str) -> String {
    let msg = match parse_client_message(text) {
        Ok(m) => m,
        Err(r) => {
            s.counters.refused.fetch_add(1, Ordering::Relaxed);
            info!(
                "page message refused: {}",
                crate::text::escape_control(&r.reason)
            );
            return reply_json(r.id, Err(&r.reason));
        }
    };
    let (tx, rx) = oneshot::channel();
    if s.commands.send((msg, tx)).await.is_err() {
        return reply_json(0, Err("the server is stopping"));
    }
    rx.await
        .unwrap_or_else(|_| reply_json(0, Err("the server is stopping")))
}

/// Warn about a non-loopback address (the view's own rule, used by
/// `usim view` and `usim up --view`).
pub fn warn_if_open(bind: &SocketAddr, token: Option<&str>) {
    if !bind.ip().is_loopback() {
        tracing::warn!(
            "the view listens on {bind}: anyone who can reach it can see and drive the vehicles{}",
            if token.is_some() {
                " if they have the token"
            } else {
                " (no token!)"
            }
        );
    }
}

/// The token a view uses: the one given, none (`--no-token`, loopback
/// only), or a random one.
pub fn choose_token(
    bind: &SocketAddr,
    token: Option<String>,
    no_token: bool,
    flag: &str,
) -> anyhow::Result<Option<String>> {
    if no_token {
        if !bind.ip().is_loopback() {
            anyhow::bail!(
                "{flag} is allowed only with a loopback address (127.0.0.1, [::1]);                  {bind} is reachable from the network: keep the token"
            );
        }
        return Ok(None);
    }
    match token {
        Some(t) => Ok(Some(t)),
        None => Ok(Some(random_token().map_err(|e| {
            anyhow::anyhow!("cannot make a random token ({e}): give --token")
        })?)),
    }
}
