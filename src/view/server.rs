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
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use rumqttc::{AsyncClient, Event, Packet, QoS, SubscribeFilter};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::protocol::{
    check_access, parse_client_message, reply_json, ClientMessage, Denied, Fleet, FrameClock,
    MAX_CLIENT_MESSAGE,
};
use crate::mqtt::endpoint::{connection_failure, BrokerUrl, ConnectSpec};
use crate::mqtt::tools::ToolConnection;
use crate::mqtt::BridgeError;

/// The default listen address: loopback only.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// The default frame rate limit, frames/s.
pub const DEFAULT_FPS: f64 = 20.0;
/// A page whose socket takes longer than this to accept one message is
/// dropped (it is gone or hopelessly slow).
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// A ping this often finds pages that vanished without closing.
pub const PING_EVERY: Duration = Duration::from_secs(15);

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
}

/// Counters shown at `/status.json` (for tests and monitoring).
#[derive(Debug, Default)]
struct Counters {
    clients: AtomicUsize,
    frames: AtomicU64,
    commands: AtomicU64,
    refused: AtomicU64,
}

type CommandRequest = (ClientMessage, oneshot::Sender<String>);

#[derive(Clone)]
struct AppState {
    frames: watch::Receiver<Arc<str>>,
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
        let fleet = Fleet::new(&self.opts.conn.topic_root);
        let filters: Vec<SubscribeFilter> = fleet
            .filters()
            .into_iter()
            .zip([QoS::AtLeastOnce, QoS::AtMostOnce])
            .map(|(f, q)| SubscribeFilter::new(f, q))
            .collect();
        let conn = &self.opts.conn;
        let mut spec = ConnectSpec::new(conn.url.clone(), client_id());
        spec.credentials = conn.credentials.clone();
        spec.ca_file = conn.ca_file.clone();
        spec.max_incoming_packet = 256 * 1024;
        let (client, eventloop) = spec.client(256)?;

        let (mqtt_tx, mqtt_rx) = mpsc::channel(4096);
        let (cmd_tx, cmd_rx) = mpsc::channel(256);
        let (frames_tx, frames_rx) =
            watch::channel::<Arc<str>>(Arc::from(r#"{"type":"frame","vehicles":[]}"#));
        let counters = Arc::new(Counters::default());
        let poller = tokio::spawn(mqtt_poller(
            eventloop,
            client.clone(),
            filters,
            mqtt_tx,
            conn.url.clone(),
        ));
        let hub = tokio::spawn(hub(
            fleet,
            mqtt_rx,
            cmd_rx,
            client.clone(),
            frames_tx,
            self.opts.fps,
            Arc::clone(&counters),
        ));
        let state = AppState {
            frames: frames_rx,
            commands: cmd_tx,
            token: self.opts.token.as_deref().map(Arc::from),
            loopback: self.is_loopback(),
            counters,
        };
        let app = Router::new()
            .route("/", get(page))
            .route("/ws", get(socket))
            .route("/status.json", get(status))
            .with_state(state);
        let served = axum::serve(self.listener, app)
            .with_graceful_shutdown(shutdown)
            .await;
        poller.abort();
        hub.abort();
        let _ = client.try_disconnect();
        served.map_err(BridgeError::Io)
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

/// Own the fleet model: take messages, publish frames, check and send commands.
async fn hub(
    mut fleet: Fleet,
    mut mqtt_rx: mpsc::Receiver<(String, bytes::Bytes)>,
    mut cmd_rx: mpsc::Receiver<CommandRequest>,
    client: AsyncClient,
    frames: watch::Sender<Arc<str>>,
    fps: f64,
    counters: Arc<Counters>,
) {
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64();
    let mut clock = FrameClock::new(fps);
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
                let answer = match fleet.check_command(&msg) {
                    Ok(p) => match client.try_publish(p.topic.clone(), QoS::AtLeastOnce, false, p.payload.clone()) {
                        Ok(()) => {
                            counters.commands.fetch_add(1, Ordering::Relaxed);
                            info!("page posted {} = {}", p.topic, p.payload);
                            reply_json(p.id, Ok(&format!("sent {} = {}", p.topic, p.payload)))
                        }
                        Err(e) => {
                            counters.refused.fetch_add(1, Ordering::Relaxed);
                            reply_json(p.id, Err(&format!("not sent: MQTT client busy or disconnected ({e})")))
                        }
                    },
                    Err(r) => {
                        counters.refused.fetch_add(1, Ordering::Relaxed);
                        info!("page command refused: {}", r.reason);
                        reply_json(r.id, Err(&r.reason))
                    }
                };
                let _ = reply.send(answer);
            }
            _ = wait => {}
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

/// One page: frames out, commands in, until the page goes.
async fn page_session(mut socket: WebSocket, s: AppState) {
    let _guard = ClientGuard::new(&s.counters);
    debug!("page connected");
    let mut frames = s.frames.clone();
    let first = frames.borrow_and_update().to_string();
    if !send(&mut socket, Message::Text(first)).await {
        return;
    }
    let mut ping = tokio::time::interval_at(Instant::now() + PING_EVERY, PING_EVERY);
    loop {
        let out = tokio::select! {
            changed = frames.changed() => {
                if changed.is_err() {
                    break;
                }
                Message::Text(frames.borrow_and_update().to_string())
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
            info!("page message refused: {}", r.reason);
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
                " (no --token given!)"
            }
        );
    }
}
