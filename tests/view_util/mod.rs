//! Helpers of the `usim view` tests: a `usim up --view` fleet on the
//! embedded broker (free loopback ports), plain HTTP requests, and the
//! process id of one vehicle child.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::mqtt_util::{on_fresh_port, usim, Proc, ROOT, START};

/// The token the tests' views require.
pub const TOKEN: &str = "t0k-en_42";

/// A running `usim up … --view`.
pub struct ViewFleet {
    pub up: Proc,
    pub dir: tempfile::TempDir,
    /// Embedded broker port.
    pub broker_port: u16,
    /// `http://127.0.0.1:PORT/?token=…` as `usim up` printed it.
    pub url: String,
    /// `127.0.0.1:PORT` of the view.
    pub http_addr: String,
}

/// Write a vehicle config with its start position.
pub fn vehicle_config(
    dir: &Path,
    name: &str,
    broker_port: u16,
    x: f64,
    y: f64,
    heading: f64,
) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\nprefix = \"NAV\"\n\
             start_pos = \"x={x}, y={y}, heading={heading}, speed=0, depth=0\"\n\
             app_tick = 10\n[mqtt]\nbroker = \"mqtt://127.0.0.1:{broker_port}\"\n\
             topic_root = \"{ROOT}\"\n"
        ),
    )
    .expect("write config");
    path
}

/// `usim up` with `vehicles` (name, x, y, heading) and `--view` on a free port.
pub fn start(vehicles: &[(&str, f64, f64, f64)]) -> ViewFleet {
    let dir = tempfile::tempdir().expect("tempdir");
    // The vehicles' configs name the broker's port, so `usim up` is told
    // it: a fresh port again if another test took it first.
    let (up, broker_port) = on_fresh_port("usim up --view", |broker_port| {
        let configs: Vec<PathBuf> = vehicles
            .iter()
            .map(|(n, x, y, h)| vehicle_config(dir.path(), n, broker_port, *x, *y, *h))
            .collect();
        let mut cmd = Command::new(usim());
        cmd.arg("up")
            .args(&configs)
            .args(["--bind", &format!("127.0.0.1:{broker_port}")])
            .args([
                "--view",
                "--view-bind",
                "127.0.0.1:0",
                "--view-token",
                TOKEN,
            ]);
        let mut up = Proc::spawn(
            "usim up --view",
            cmd,
            dir.path().join(format!("up-{broker_port}.log")),
        );
        up.wait_listening(broker_port, START)?;
        Ok((up, broker_port))
    });
    assert!(
        up.wait_log("usim view: open http://", START),
        "no view URL printed:\n{}",
        up.log()
    );
    let log = up.log();
    let url = log
        .lines()
        .find_map(|l| l.strip_prefix("usim view: open "))
        .expect("URL line")
        .trim()
        .to_string();
    assert!(url.ends_with(&format!("/?token={TOKEN}")), "{url}");
    let http_addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port")
        .to_string();
    ViewFleet {
        up,
        dir,
        broker_port,
        url,
        http_addr,
    }
}

impl ViewFleet {
    /// GET `path` (with headers `extra`), returning (status, body).
    pub fn get(&self, path: &str, extra: &str) -> (u16, String) {
        http_get(&self.http_addr, path, extra)
    }

    /// The server's counters (`/status.json`).
    pub fn status(&self) -> serde_json::Value {
        let (code, body) = self.get(&format!("/status.json?token={TOKEN}"), "");
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).expect("status JSON")
    }

    /// Wait until `/status.json` shows `n` open pages.
    pub fn wait_clients(&self, n: u64, timeout: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if self.status()["clients"] == n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// The pid of the `usim run` child for `name`.
    pub fn vehicle_pid(&self, name: &str) -> u32 {
        let needle = format!("{name}.toml");
        let up = self.up.pid();
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if ppid == Some(up) && String::from_utf8_lossy(&cmdline).contains(&needle) {
                return pid;
            }
        }
        panic!("no child of {up} runs {needle}");
    }
}

/// A minimal HTTP/1.1 GET on `addr` (`host:port`).
pub fn http_get(addr: &str, path: &str, extra_headers: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect to the view");
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let host = if extra_headers.to_ascii_lowercase().contains("host:") {
        String::new()
    } else {
        format!("Host: {addr}\r\n")
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\n{host}{extra_headers}Connection: close\r\n\r\n"
    )
    .expect("send request");
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    let code = resp
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = resp
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

/// A standalone `usim view` on the embedded broker (a `usim broker` child).
pub struct Standalone {
    pub view: Proc,
    pub broker: crate::mqtt_util::Broker,
    pub dir: tempfile::TempDir,
    /// The URL `usim view` printed (with its token, if any).
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub http_addr: String,
    /// The token in the URL (empty with `--no-token`).
    pub token: String,
}

/// `usim view --broker … --topic-root ROOT --bind 127.0.0.1:0 EXTRA…`.
pub fn standalone(extra: &[&str]) -> Standalone {
    standalone_on(crate::mqtt_util::BrokerKind::Embedded, extra).expect("embedded broker")
}

/// [`standalone`] on a broker of `kind`; `None` (SKIPPED said) without mosquitto.
pub fn standalone_on(kind: crate::mqtt_util::BrokerKind, extra: &[&str]) -> Option<Standalone> {
    let broker = crate::mqtt_util::Broker::start(kind)?;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(usim());
    cmd.args([
        "view",
        "--broker",
        &broker.url(),
        "--topic-root",
        ROOT,
        "--bind",
        "127.0.0.1:0",
    ])
    .args(extra);
    let view = Proc::spawn("usim view", cmd, dir.path().join("view.log"));
    assert!(
        view.wait_log("usim view: open http://", START),
        "no view URL printed:\n{}",
        view.log()
    );
    let url = view
        .log()
        .lines()
        .find_map(|l| {
            l.strip_prefix("usim view: open ")
                .map(|u| u.trim().to_string())
        })
        .expect("URL line");
    let http_addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port")
        .to_string();
    let token = url
        .split_once("?token=")
        .map(|(_, t)| t.to_string())
        .unwrap_or_default();
    Some(Standalone {
        view,
        broker,
        dir,
        url,
        http_addr,
        token,
    })
}

impl Standalone {
    /// The server's counters (`/status.json`).
    pub fn status(&self) -> serde_json::Value {
        let (code, body) = http_get(
            &self.http_addr,
            &format!("/status.json?token={}", self.token),
            "",
        );
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).expect("status JSON")
    }

    /// Wait until `f(status)` holds.
    pub fn wait_status(&self, timeout: Duration, f: impl Fn(&serde_json::Value) -> bool) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if f(&self.status()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// The view process's resident memory, KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        proc_status_kib(self.view.pid(), "VmRSS:")
    }

    /// Open file descriptors of the view process.
    pub fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.view.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// A plain MQTT publisher on the embedded broker that may send large
    /// payloads (the test's own client: not usim code).
    pub fn publisher(&self) -> Publisher {
        Publisher::new(self.broker.port)
    }
}

/// A field of `/proc/PID/status` in KiB.
pub fn proc_status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A rumqttc client (large packets allowed) driven by its own thread.
pub struct Publisher {
    client: rumqttc::Client,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Publisher {
    pub fn new(port: u16) -> Publisher {
        // Unique per process and publisher (a broker drops the older of
        // two clients with one id).
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut o = rumqttc::MqttOptions::new(
            format!("view-test-pub-{}-{port}-{n}", std::process::id()),
            "127.0.0.1",
            port,
        );
        o.set_max_packet_size(4 << 20, 4 << 20);
        o.set_keep_alive(Duration::from_secs(30));
        let (client, mut conn) = rumqttc::Client::new(o, 10_000);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            for ev in conn.iter() {
                if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                if ev.is_err() {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
        Publisher {
            client,
            stop,
            thread: Some(thread),
        }
    }

    pub fn publish(&self, topic: &str, payload: impl Into<Vec<u8>>, retain: bool) {
        self.client
            .publish(topic, rumqttc::QoS::AtLeastOnce, retain, payload)
            .expect("queue publish");
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.client.disconnect();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
