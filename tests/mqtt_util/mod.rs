//! Shared helpers of the MQTT integration tests (`tests/mqtt_*.rs`): real
//! brokers (mosquitto, or the embedded one as a `usim broker` child) on a
//! free loopback port, vehicle processes of the built binary, and a rumqttc
//! watcher. Every child is killed and reaped when its guard drops, so a
//! failing test leaves no process behind; every wait has a timeout.
//!
//! The scenarios themselves are in [`scenarios`], run by both test files.
//!
//! Rules for live tests (CI runs ~600 tests in parallel threads on two
//! cores, beside other jobs):
//! * ports: where we own the listener, bind port 0 and read the port back
//!   (`usim broker|up --bind 127.0.0.1:0` and `usim moosdb --moos_port=0`
//!   log `listening on ADDR`: [`Proc::wait_listen_port`]); where a peer
//!   must be told its port, start it through [`on_fresh_port`]; a port
//!   that must refuse connections is a [`RefusingPort`];
//! * readiness: the peer itself holds its port ([`Proc::wait_listening`],
//!   not a connection, which another test's listener could answer); a
//!   retained message is stored once the watcher got it back;
//! * "a while" of a vehicle is its clock ([`Watcher::wait_clock`]), not a
//!   sleep; deadlines are generous and returned from as soon as met.
#![allow(dead_code)]

pub mod scenarios;

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};

/// Topic root used by the tests (not the default, to show it is honoured).
pub const ROOT: &str = "usimtest";

/// The `usim` binary under test.
pub fn usim() -> &'static str {
    env!("CARGO_BIN_EXE_usim")
}

/// A child process that is killed (SIGKILL) and reaped on drop; its stderr
/// goes to a log file that is printed if the test is failing.
pub struct Proc {
    pub name: String,
    child: Option<Child>,
    log: PathBuf,
}

impl Proc {
    /// Spawn `cmd` with stdout/stderr into `log`.
    pub fn spawn(name: &str, mut cmd: Command, log: PathBuf) -> Proc {
        let out = File::create(&log).expect("create log file");
        let err = out.try_clone().expect("clone log file");
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG");
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Proc {
            name: name.to_string(),
            child: Some(child),
            log,
        }
    }

    /// Process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// The log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Wait until the log contains `needle`.
    pub fn wait_log(&self, needle: &str, timeout: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if self.log().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// Wait until this process holds the TCP listener on `port` (see
    /// [`holds_port`]); `Err(why)` as soon as it exits or logs that the
    /// address is in use, or after `timeout`.
    pub fn wait_listening(&mut self, port: u16, timeout: Duration) -> Result<(), String> {
        self.wait_holding(Proto::Tcp, port, timeout)
    }

    /// [`Self::wait_listening`] for a socket of `proto`.
    pub fn wait_holding(
        &mut self,
        proto: Proto,
        port: u16,
        timeout: Duration,
    ) -> Result<(), String> {
        let t0 = Instant::now();
        loop {
            if holds_port(self.pid(), proto, port) {
                return Ok(());
            }
            self.check_alive(port)?;
            if t0.elapsed() > timeout {
                return Err(format!(
                    "{} not holding {proto:?} port {port} after {timeout:?}:\n{}",
                    self.name,
                    self.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Wait for a `listening on ADDR` line (see [`listen_port_in`]) and
    /// return ADDR's port; `Err(why)` as soon as the process exits or logs
    /// that the address is in use, or after `timeout`.
    pub fn wait_listen_port(&mut self, timeout: Duration) -> Result<u16, String> {
        let t0 = Instant::now();
        loop {
            if let Some(p) = listen_port_in(&self.log()) {
                return Ok(p);
            }
            self.check_alive(0)?;
            if t0.elapsed() > timeout {
                return Err(format!(
                    "{} printed no \"listening on\" after {timeout:?}:\n{}",
                    self.name,
                    self.log()
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// `Err(why)` if the process exited or logged that an address is in use.
    fn check_alive(&mut self, port: u16) -> Result<(), String> {
        let log = self.log();
        if log.to_lowercase().contains("address already in use") {
            return Err(format!(
                "{}: address in use (port {port}):\n{log}",
                self.name
            ));
        }
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => Ok(()),
            Some(Ok(Some(status))) => {
                self.child = None;
                Err(format!("{} exited ({status}):\n{}", self.name, self.log()))
            }
            _ => Err(format!("{} is not running:\n{log}", self.name)),
        }
    }

    /// Send `sig`.
    pub fn signal(&self, sig: libc::c_int) {
        if let Some(c) = &self.child {
            // SAFETY: kill(2) on our own child's pid.
            unsafe {
                libc::kill(c.id() as libc::pid_t, sig);
            }
        }
    }

    /// Wait for the exit for up to `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let t0 = Instant::now();
        let child = self.child.as_mut()?;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return Some(status);
            }
            if t0.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then wait up to `timeout` for the exit.
    pub fn terminate(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.signal(libc::SIGTERM);
        self.wait_exit(timeout)
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let running = self.child.is_some();
        self.kill();
        if std::thread::panicking() {
            eprintln!(
                "----- log of {} ({}) -----\n{}\n----- end of log -----",
                self.name,
                if running { "killed" } else { "exited" },
                self.log()
            );
        }
    }
}

/// How long a peer may take to start listening: generous, for a loaded
/// 2-core CI machine running many tests at once.
pub const START: Duration = Duration::from_secs(60);

/// A TCP port on 127.0.0.1 that was free a moment ago (bound and
/// released). Another test may bind it before whoever is told about it
/// does: where we own the listener, bind port 0 and read the port back
/// instead; where a peer must be told its port, start it through
/// [`on_fresh_port`], which retries on another port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port")
}

/// A TCP port on 127.0.0.1 where connections are refused, for as long as
/// this value lives: a socket bound there that does not listen, without
/// SO_REUSEADDR, so that no other test can bind the port meanwhile (a
/// released [`free_port`] could be taken by another test's broker).
pub struct RefusingPort {
    _socket: tokio::net::TcpSocket,
    pub port: u16,
}

/// See [`RefusingPort`].
pub fn refusing_port() -> RefusingPort {
    let socket = tokio::net::TcpSocket::new_v4().expect("TCP socket");
    socket
        .bind(([127, 0, 0, 1], 0).into())
        .expect("bind 127.0.0.1:0");
    let port = socket.local_addr().expect("local address").port();
    RefusingPort {
        _socket: socket,
        port,
    }
}

/// How many ports [`on_fresh_port`] tries before giving up.
pub const PORT_ATTEMPTS: usize = 8;

/// Start something that must be told its port in advance (mosquitto,
/// gpsd, a `usim` command whose port is written in a config) on a port of
/// [`free_port`]: `start(port)` returns `Err(why)` when the port was lost
/// (the peer could not bind it, or exited while starting), and is then
/// called again with a fresh port, at most [`PORT_ATTEMPTS`] times. CI met
/// such losses (AddrInUse) with many tests starting peers at once.
pub fn on_fresh_port<T>(what: &str, mut start: impl FnMut(u16) -> Result<T, String>) -> T {
    let mut tried = Vec::new();
    for _ in 0..PORT_ATTEMPTS {
        let port = free_port();
        match start(port) {
            Ok(t) => return t,
            Err(why) => {
                eprintln!("{what}: port {port} lost ({why}); trying another port");
                tried.push(format!("port {port}: {why}"));
            }
        }
    }
    panic!(
        "{what} did not start on any of {PORT_ATTEMPTS} ports:\n{}",
        tried.join("\n")
    );
}

/// A socket protocol for [`holds_port`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// A listening TCP socket.
    Tcp,
    /// A bound UDP socket.
    Udp,
}

/// Whether process `pid` holds a socket on local port `port` (a listening
/// one for TCP), from Linux's /proc: the inodes of the matching sockets in
/// /proc/net/{tcp,tcp6,udp,udp6}, looked up among /proc/PID/fd. Unlike a
/// connection attempt, this cannot be fooled by another process (another
/// test's broker) that took the port our peer failed to bind.
pub fn holds_port(pid: u32, proto: Proto, port: u16) -> bool {
    let tables: &[&str] = match proto {
        Proto::Tcp => &["/proc/net/tcp", "/proc/net/tcp6"],
        Proto::Udp => &["/proc/net/udp", "/proc/net/udp6"],
    };
    let mut inodes = Vec::new();
    for t in tables {
        let text = std::fs::read_to_string(t).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let p = local
                .rsplit(':')
                .next()
                .and_then(|h| u16::from_str_radix(h, 16).ok());
            // 0A: TCP_LISTEN.
            if p == Some(port) && (proto == Proto::Udp || *state == "0A") {
                inodes.push(format!("socket:[{inode}]"));
            }
        }
    }
    if inodes.is_empty() {
        return false;
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .map(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str()))
            .unwrap_or(false)
    })
}

/// The port of the first `listening on ADDR` in `log` (ADDR as
/// `HOST:PORT` or `mqtt://HOST:PORT`): how `usim broker`, `usim up` and
/// `usim moosdb` report the port they bound (with port 0, the one chosen).
pub fn listen_port_in(log: &str) -> Option<u16> {
    log.split("listening on ").skip(1).find_map(|rest| {
        let addr = rest.split_whitespace().next()?;
        let addr = addr.trim_start_matches("mqtt://").trim_end_matches(':');
        addr.parse::<std::net::SocketAddr>().ok().map(|a| a.port())
    })
}

/// The mosquitto binary, if installed (`/usr/sbin` is often not on PATH).
/// `MOSQUITTO=/path/to/mosquitto` chooses one (a path that does not exist
/// makes the mosquitto tests skip, to check that path).
pub fn mosquitto_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MOSQUITTO") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.push("/usr/sbin".into());
    dirs.push("/usr/local/sbin".into());
    dirs.into_iter()
        .map(|d| d.join("mosquitto"))
        .find(|p| p.is_file())
}

/// Which broker a scenario runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerKind {
    /// A real mosquitto started by the test.
    Mosquitto,
    /// The embedded broker, as a `usim broker` child process.
    Embedded,
}

/// A broker child process on a free loopback port.
pub struct Broker {
    pub kind: BrokerKind,
    pub port: u16,
    pub dir: tempfile::TempDir,
    proc: Option<Proc>,
    starts: u32,
    /// Lines appended to mosquitto's config (e.g. an `acl_file`).
    extra_conf: String,
}

impl Broker {
    /// Start a broker, or `None` (after saying so) when mosquitto is missing;
    /// with `USIM_REQUIRE_MOSQUITTO` set (CI), a missing mosquitto fails.
    pub fn start(kind: BrokerKind) -> Option<Broker> {
        Broker::start_with(kind, "")
    }

    /// [`Broker::start`] with `extra_conf` appended to mosquitto's config
    /// (ignored by the embedded broker).
    pub fn start_with(kind: BrokerKind, extra_conf: &str) -> Option<Broker> {
        if kind == BrokerKind::Mosquitto && mosquitto_path().is_none() {
            assert!(
                std::env::var_os("USIM_REQUIRE_MOSQUITTO").is_none(),
                "USIM_REQUIRE_MOSQUITTO is set but mosquitto is not installed"
            );
            // Straight to stderr, past libtest's capture, so it shows.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: mosquitto is not installed (apt-get install -y mosquitto); \
                 this mosquitto test passes without running"
            );
            return None;
        }
        let mut b = Broker {
            kind,
            port: 0,
            dir: tempfile::tempdir().expect("tempdir"),
            proc: None,
            starts: 0,
            extra_conf: extra_conf.to_string(),
        };
        match kind {
            // mosquitto must be told its port: a fresh one per attempt.
            BrokerKind::Mosquitto => on_fresh_port("mosquitto", |port| {
                b.port = port;
                b.try_start()
            }),
            // `usim broker --bind 127.0.0.1:0` binds a port itself and
            // logs it; only a failure of its private rumqttd port (see
            // src/mqtt/broker.rs) would make it exit, then start it again.
            BrokerKind::Embedded => {
                let mut tried = Vec::new();
                while b.proc.is_none() && tried.len() < PORT_ATTEMPTS {
                    b.port = 0;
                    if let Err(e) = b.try_start() {
                        tried.push(e);
                    }
                }
                assert!(
                    b.proc.is_some(),
                    "no embedded broker:\n{}",
                    tried.join("\n")
                );
            }
        }
        Some(b)
    }

    /// (Re)start on the same port (which another test may have taken
    /// meanwhile: that fails the test, with the broker's log).
    pub fn restart(&mut self) {
        if let Err(e) = self.try_start() {
            panic!(
                "{:?} broker did not restart on port {}: {e}",
                self.kind, self.port
            );
        }
    }

    /// Start on `self.port` (0 for the embedded broker: it chooses, and
    /// `self.port` becomes its choice) and wait until the broker itself
    /// listens there; `Err(why)` if it did not.
    fn try_start(&mut self) -> Result<(), String> {
        self.stop();
        self.starts += 1;
        let log = self.dir.path().join(format!("broker{}.log", self.starts));
        let cmd = match self.kind {
            BrokerKind::Mosquitto => {
                let conf = self.dir.path().join("mosquitto.conf");
                std::fs::write(
                    &conf,
                    format!(
                        "listener {} 127.0.0.1\nallow_anonymous true\npersistence false\n{}\n",
                        self.port, self.extra_conf
                    ),
                )
                .expect("write mosquitto.conf");
                let mut c = Command::new(mosquitto_path().expect("mosquitto"));
                c.arg("-c").arg(conf);
                c
            }
            BrokerKind::Embedded => {
                let mut c = Command::new(usim());
                c.args(["broker", "--bind", &format!("127.0.0.1:{}", self.port)]);
                c
            }
        };
        let mut p = Proc::spawn(&format!("{:?} broker", self.kind), cmd, log);
        if self.port == 0 {
            self.port = p.wait_listen_port(START)?;
        }
        // Our own broker's listener, not just any on that port.
        p.wait_listening(self.port, START)?;
        self.proc = Some(p);
        Ok(())
    }

    /// Stop (SIGKILL): clients see the connection drop.
    pub fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.kill();
        }
    }

    /// The broker process's id (0 when stopped).
    pub fn pid(&self) -> u32 {
        self.proc.as_ref().map(Proc::pid).unwrap_or(0)
    }

    /// `mqtt://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Write a vehicle config `NAME.toml` into `dir`; `extra` is appended to
/// the top-level keys.
pub fn write_config(dir: &Path, name: &str, broker_url: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "name = \"{name}\"\n\
         prefix = \"NAV\"\n\
         start_pos = \"x=0, y=0, heading=0, speed=0, depth=0\"\n\
         app_tick = 20\n\
         {extra}\n\
         [mqtt]\n\
         broker = \"{broker_url}\"\n\
         topic_root = \"{ROOT}\"\n"
    );
    std::fs::write(&path, text).expect("write config");
    path
}

/// Start `usim run CONFIG` with `args`, its log in the config's directory.
pub fn spawn_vehicle(config: &Path, args: &[&str]) -> Proc {
    let name = config
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("vehicle")
        .to_string();
    let mut cmd = Command::new(usim());
    cmd.arg("run").arg(config).args(args);
    let log = config.with_extension("log");
    Proc::spawn(&name, cmd, log)
}

/// One message seen by a [`Watcher`].
#[derive(Debug, Clone)]
pub struct Msg {
    pub topic: String,
    pub payload: String,
    pub at: Instant,
}

/// A rumqttc client in a thread that records every message on its filters
/// (re-subscribing after reconnections) and can publish.
pub struct Watcher {
    client: Client,
    log: Arc<Mutex<Vec<Msg>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Connect to 127.0.0.1:`port`, subscribe to `filters`, wait for the SubAck.
    pub fn new(port: u16, filters: &[String]) -> Watcher {
        // Unique per process and watcher: a broker drops the older of two
        // clients with one id (a random port here could repeat).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let id = format!("test-watch-{}-{n}", std::process::id());
        let mut opts = MqttOptions::new(id, "127.0.0.1", port);
        // 30 s: a watcher starved of CPU for a few seconds on a loaded
        // machine must not be dropped by the broker for a missed ping.
        opts.set_keep_alive(Duration::from_secs(30));
        // Large enough for the oversize-payload tests (issue 13).
        opts.set_max_packet_size(1 << 20, 1 << 20);
        let (client, mut connection) = Client::new(opts, 64);
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = {
            let (client, log, stop, ready) = (
                client.clone(),
                Arc::clone(&log),
                Arc::clone(&stop),
                Arc::clone(&ready),
            );
            let filters: Vec<String> = filters.to_vec();
            std::thread::spawn(move || {
                for ev in connection.iter() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    match ev {
                        Ok(Event::Incoming(Packet::ConnAck(_))) => {
                            for f in &filters {
                                let _ = client.try_subscribe(f.clone(), QoS::AtLeastOnce);
                            }
                        }
                        Ok(Event::Incoming(Packet::SubAck(_))) => {
                            let (m, c) = &*ready;
                            *m.lock().unwrap() = true;
                            c.notify_all();
                        }
                        Ok(Event::Incoming(Packet::Publish(p))) => {
                            log.lock().unwrap().push(Msg {
                                topic: p.topic.clone(),
                                payload: String::from_utf8_lossy(&p.payload).into_owned(),
                                at: Instant::now(),
                            });
                        }
                        Ok(_) => {}
                        Err(_) => std::thread::sleep(Duration::from_millis(100)),
                    }
                }
            })
        };
        let (m, c) = &*ready;
        let guard = m.lock().unwrap();
        let (guard, _) = c.wait_timeout_while(guard, START, |ok| !*ok).unwrap();
        assert!(*guard, "watcher could not subscribe on port {port}");
        drop(guard);
        Watcher {
            client,
            log,
            stop,
            thread: Some(thread),
        }
    }

    /// Watch everything of `vehicle`.
    pub fn vehicle(port: u16, vehicle: &str) -> Watcher {
        Watcher::new(port, &[format!("{ROOT}/{vehicle}/#")])
    }

    /// Number of messages so far (a mark for [`Self::wait_after`]).
    pub fn mark(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// Wait until `vehicle`'s clock (`USM_TIME`) went on by `seconds` after
    /// `mark`, from its first `USM_TIME` after `mark`; the mark just after
    /// the `USM_TIME` that showed it. The measure of "a while" for a
    /// vehicle: a loaded machine may give it less in wall-clock time.
    pub fn wait_clock(&self, vehicle: &str, mark: usize, seconds: f64) -> usize {
        let clock = topic(vehicle, "USM_TIME");
        let timeout = START + Duration::from_secs_f64(seconds * 4.0);
        let t = self
            .wait_num(mark, &clock, timeout, |_| true)
            .unwrap_or_else(|| panic!("{vehicle}: no USM_TIME"));
        self.wait_mark_after(mark, &clock, timeout, |x| {
            x.trim().parse::<f64>().is_ok_and(|x| x >= t + seconds)
        })
        .unwrap_or_else(|| panic!("{vehicle}: USM_TIME stopped before {t} + {seconds} s"))
    }

    /// How many messages on `topic` lie between marks `from` and `to`.
    pub fn count_between(&self, from: usize, to: usize, topic: &str) -> usize {
        let log = self.log.lock().unwrap();
        log.iter()
            .take(to)
            .skip(from)
            .filter(|m| m.topic == topic)
            .count()
    }

    /// Messages on `topic` after `mark`.
    pub fn since(&self, mark: usize, topic: &str) -> Vec<Msg> {
        let log = self.log.lock().unwrap();
        log.iter()
            .skip(mark)
            .filter(|m| m.topic == topic)
            .cloned()
            .collect()
    }

    /// Wait for the first message on `topic` after `mark` whose payload
    /// satisfies `pred`.
    pub fn wait_after(
        &self,
        mark: usize,
        topic: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> Option<Msg> {
        let t0 = Instant::now();
        loop {
            {
                let log = self.log.lock().unwrap();
                if let Some(m) = log
                    .iter()
                    .skip(mark)
                    .find(|m| m.topic == topic && pred(&m.payload))
                {
                    return Some(m.clone());
                }
            }
            if t0.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// [`Self::wait_after`], returning the mark just after the message
    /// found: what follows it was published later (one publisher's
    /// messages arrive in order).
    pub fn wait_mark_after(
        &self,
        mark: usize,
        topic: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> Option<usize> {
        let t0 = Instant::now();
        loop {
            {
                let log = self.log.lock().unwrap();
                if let Some(i) = log
                    .iter()
                    .skip(mark)
                    .position(|m| m.topic == topic && pred(&m.payload))
                {
                    return Some(mark + i + 1);
                }
            }
            if t0.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Wait for a numeric payload on `topic` after `mark` satisfying `pred`.
    pub fn wait_num(
        &self,
        mark: usize,
        topic: &str,
        timeout: Duration,
        pred: impl Fn(f64) -> bool,
    ) -> Option<f64> {
        self.wait_after(mark, topic, timeout, |p| {
            p.trim().parse::<f64>().map(&pred).unwrap_or(false)
        })
        .and_then(|m| m.payload.trim().parse().ok())
    }

    /// The latest payload on `topic`.
    pub fn latest(&self, topic: &str) -> Option<String> {
        let log = self.log.lock().unwrap();
        log.iter()
            .rev()
            .find(|m| m.topic == topic)
            .map(|m| m.payload.clone())
    }

    /// The latest numeric payload on `topic`.
    pub fn latest_num(&self, topic: &str) -> Option<f64> {
        self.latest(topic).and_then(|p| p.trim().parse().ok())
    }

    /// Publish (QoS 1, not retained).
    pub fn publish(&self, topic: &str, payload: impl Into<Vec<u8>>) {
        self.client
            .publish(topic, QoS::AtLeastOnce, false, payload)
            .expect("queue publish");
    }

    /// Publish (QoS 1, retained).
    pub fn publish_retained(&self, topic: &str, payload: impl Into<Vec<u8>>) {
        self.client
            .publish(topic, QoS::AtLeastOnce, true, payload)
            .expect("queue publish");
    }

    /// Publish to a vehicle's variable.
    pub fn post(&self, vehicle: &str, var: &str, payload: impl Into<Vec<u8>>) {
        self.publish(&format!("{ROOT}/{vehicle}/{var}"), payload);
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.client.try_disconnect();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `{ROOT}/{vehicle}/{var}`.
pub fn topic(vehicle: &str, var: &str) -> String {
    format!("{ROOT}/{vehicle}/{var}")
}

/// Parse a NODE_REPORT payload.
pub fn node_report(payload: &str) -> serde_json::Value {
    serde_json::from_str(payload).unwrap_or_else(|e| panic!("bad NODE_REPORT {payload:?}: {e}"))
}

/// gpsd and gpspipe on PATH (or /usr/sbin), or SKIPPED (USIM_REQUIRE_GPSD=1: fail).
pub fn gpsd_paths() -> Option<(PathBuf, PathBuf)> {
    let find = |name: &str| {
        ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join(name))
            .find(|p| p.exists())
    };
    match (find("gpsd"), find("gpspipe")) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => {
            assert!(
                std::env::var_os("USIM_REQUIRE_GPSD").is_none_or(|v| v != "1"),
                "USIM_REQUIRE_GPSD=1 but gpsd/gpspipe are not installed (apt-get install gpsd gpsd-clients)"
            );
            eprintln!(
                "SKIPPED: gpsd or gpspipe missing (apt-get install gpsd gpsd-clients); this test passes without running"
            );
            None
        }
    }
}

/// A gpsd reading NMEA on a UDP port: `(gpsd, its UDP port, its client
/// TCP port)`, on fresh ports (gpsd exits when its UDP port is taken and
/// runs on without listening when its TCP port is: both are checked).
pub fn start_gpsd(gpsd: &Path, dir: &Path) -> (Proc, u16, u16) {
    on_fresh_port("gpsd", |gpsd_port| {
        let udp_port = free_port();
        let mut g = Command::new(gpsd);
        g.args([
            "-N",
            "-n",
            "-S",
            &gpsd_port.to_string(),
            &format!("udp://127.0.0.1:{udp_port}"),
        ]);
        let mut p = Proc::spawn("gpsd", g, dir.join(format!("gpsd-{gpsd_port}.log")));
        p.wait_listening(gpsd_port, START)?;
        p.wait_holding(Proto::Udp, udp_port, START)?;
        Ok((p, udp_port, gpsd_port))
    })
}
