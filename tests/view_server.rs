//! `usim view` without a browser: access rules over plain HTTP, bad input
//! on the WebSocket (refused with a reason, the server keeps running), and
//! pages that disconnect (no task left behind). Against a real `usim up
//! --view` with the embedded broker. The browser test is view_browser.rs.
mod mqtt_util;
mod view_util;

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use mqtt_util::{topic, Watcher};
use view_util::TOKEN;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn open(addr: &str) -> Ws {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws?token={TOKEN}"))
        .await
        .expect("WebSocket handshake");
    ws
}

/// The next JSON message of `type` `kind`, within 30 s (a deadline for a
/// loaded machine; frames come several times a second).
async fn next_of(ws: &mut Ws, kind: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = tokio::time::timeout(left, ws.next())
            .await
            .unwrap_or_else(|_| panic!("no {kind} message within 30 s"))
            .expect("socket open")
            .expect("socket ok");
        if let Message::Text(t) = msg {
            let v: serde_json::Value = serde_json::from_str(&t).expect("server sends JSON");
            if v["type"] == kind {
                return v;
            }
        }
    }
}

/// Wait for a frame in which every one of `names` has a report.
async fn frame_with(ws: &mut Ws, names: &[&str]) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let f = next_of(ws, "frame").await;
        let vs = f["vehicles"].as_array().cloned().unwrap_or_default();
        if names.iter().all(|n| {
            vs.iter()
                .any(|v| v["name"] == *n && v["report"]["x"].is_number())
        }) {
            return f;
        }
    }
    panic!("no frame with {names:?}");
}

async fn command(ws: &mut Ws, text: &str) -> serde_json::Value {
    ws.send(Message::Text(text.to_string()))
        .await
        .expect("send");
    next_of(ws, "reply").await
}

#[test]
fn token_host_and_origin_are_checked() {
    let fleet = view_util::start(&[("alpha", 0.0, 0.0, 0.0)]);
    let (code, _) = fleet.get("/", "");
    assert_eq!(code, 401, "page without the token");
    let (code, _) = fleet.get("/?token=wrong", "");
    assert_eq!(code, 401, "page with a wrong token");
    let (code, body) = fleet.get(&format!("/?token={TOKEN}"), "");
    assert_eq!(code, 200);
    assert!(body.contains("window.usimView"), "not the page");
    let (code, _) = fleet.get(&format!("/?token={TOKEN}"), "Host: evil.example:80\r\n");
    assert_eq!(code, 403, "DNS-rebinding host name");
    let (code, _) = fleet.get("/status.json", "");
    assert_eq!(code, 401);

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let addr = &fleet.http_addr;
        let e = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
            .await
            .expect_err("socket without a token");
        assert!(e.to_string().contains("401"), "{e}");
        let mut req = format!("ws://{addr}/ws?token={TOKEN}")
            .into_client_request()
            .unwrap();
        req.headers_mut()
            .insert("Origin", "http://evil.example".parse().unwrap());
        let e = tokio_tungstenite::connect_async(req)
            .await
            .expect_err("socket from another site's page");
        assert!(e.to_string().contains("403"), "{e}");
        let mut req = format!("ws://{addr}/ws?token={TOKEN}")
            .into_client_request()
            .unwrap();
        req.headers_mut()
            .insert("Origin", format!("http://{addr}").parse().unwrap());
        tokio_tungstenite::connect_async(req)
            .await
            .expect("same-origin socket");
    });
}

#[test]
fn bad_page_messages_are_refused_and_good_ones_reach_only_their_vehicle() {
    let fleet = view_util::start(&[("alpha", 0.0, 0.0, 0.0), ("bravo", 20.0, 5.0, 90.0)]);
    let watch = Watcher::new(
        fleet.broker_port,
        &[topic("alpha", "NODE_REPORT"), topic("bravo", "#")],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut ws = open(&fleet.http_addr).await;
        frame_with(&mut ws, &["alpha", "bravo"]).await;
        for (text, why) in [
            ("not json", "not JSON"),
            (r#"{"type":"command","id":2,"vehicle":"zulu","var":"DESIRED_THRUST","value":"60"}"#, "unknown vehicle"),
            (r#"{"type":"command","id":3,"vehicle":"alpha","var":"DESIRED_THRUST","value":"fast"}"#, "not a number"),
            (r#"{"type":"command","id":4,"vehicle":"alpha","var":"NAV_X","value":"1"}"#, "cannot be posted"),
            (r#"{"type":"command","id":5,"vehicle":"alpha","var":"DRIFT_VECTOR_ADD","value":"bad"}"#, "DRIFT_VECTOR_ADD"),
            (r##"{"type":"subscribe","id":6,"topic":"#"}"##, "unknown message type"),
        ] {
            let r = command(&mut ws, text).await;
            assert_eq!(r["ok"], false, "{text} was accepted: {r}");
            assert!(r["reason"].as_str().unwrap().contains(why), "{text}: {r}");
        }
        ws.send(Message::Binary(vec![0xff; 8])).await.unwrap();
        let r = next_of(&mut ws, "reply").await;
        assert_eq!(r["ok"], false);

        // Still serving: a good command on the same socket is sent.
        let mark = watch.mark();
        let r = command(
            &mut ws,
            r#"{"type":"command","id":9,"vehicle":"alpha","var":"DESIRED_THRUST","value":60}"#,
        )
        .await;
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["id"], 9);
        let seen = watch.wait_after(mark, &topic("alpha", "NODE_REPORT"), Duration::from_secs(20), |p| {
            serde_json::from_str::<serde_json::Value>(p).is_ok_and(|v| v["thrust"] == 60.0)
        });
        assert!(seen.is_some(), "alpha never showed thrust 60");
        assert!(
            watch.since(mark, &topic("bravo", "DESIRED_THRUST")).is_empty(),
            "the command leaked to bravo"
        );
        assert_eq!(
            watch.latest(&topic("bravo", "NODE_REPORT")).map(|p| mqtt_util::node_report(&p)["thrust"].clone()),
            Some(serde_json::json!(0.0))
        );

        // A message larger than the server's limit ends that socket only.
        let _ = ws.send(Message::Text("x".repeat(64 * 1024))).await;
        let mut ws2 = open(&fleet.http_addr).await;
        frame_with(&mut ws2, &["alpha"]).await;
    });
    let status = fleet.status();
    assert!(status["refused"].as_u64().unwrap() >= 7, "{status}");
    assert_eq!(status["commands"], 1, "{status}");
}

#[test]
fn disconnected_pages_leave_no_task_behind() {
    let fleet = view_util::start(&[("alpha", 0.0, 0.0, 0.0)]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut sockets = Vec::new();
        for _ in 0..20 {
            let mut ws = open(&fleet.http_addr).await;
            next_of(&mut ws, "frame").await;
            sockets.push(ws);
        }
        assert!(
            fleet.wait_clients(20, Duration::from_secs(20)),
            "{}",
            fleet.status()
        );
        // Half close properly, half just vanish (TCP closed, no close frame).
        for (i, mut ws) in sockets.into_iter().enumerate() {
            if i % 2 == 0 {
                let _ = ws.close(None).await;
            }
            drop(ws);
        }
    });
    assert!(
        fleet.wait_clients(0, Duration::from_secs(20)),
        "page tasks left after their pages went: {}",
        fleet.status()
    );
}

/// `usim view` on its own: `--bind 0.0.0.0` warns, a bad `--fps` or token
/// is refused with the reason, and SIGTERM stops it cleanly.
#[test]
fn standalone_view_warns_when_open_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let broker =
        mqtt_util::Broker::start(mqtt_util::BrokerKind::Embedded).expect("embedded broker");
    let view = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(mqtt_util::usim());
        cmd.args([
            "view",
            "--broker",
            &broker.url(),
            "--topic-root",
            mqtt_util::ROOT,
        ])
        .args(extra);
        cmd
    };
    let out = view(&["--fps", "0"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--fps"),
        "{out:?}"
    );
    let out = view(&["--token", "a b"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--token"),
        "{out:?}"
    );

    // Two vehicles at 20 Hz: 40 reports a second, coalesced to --fps 5.
    let _vehicles: Vec<mqtt_util::Proc> = ["alpha", "bravo"]
        .iter()
        .map(|n| {
            let cfg = mqtt_util::write_config(dir.path(), n, &broker.url(), "");
            mqtt_util::spawn_vehicle(&cfg, &[])
        })
        .collect();
    let mut p = mqtt_util::Proc::spawn(
        "usim view",
        view(&["--bind", "0.0.0.0:0", "--token", TOKEN, "--fps", "5"]),
        dir.path().join("view.log"),
    );
    assert!(
        p.wait_log("usim view: open http://127.0.0.1:", Duration::from_secs(30)),
        "{}",
        p.log()
    );
    assert!(
        p.log().contains("anyone who can reach it"),
        "no warning:\n{}",
        p.log()
    );
    let addr = p
        .log()
        .lines()
        .find_map(|l| l.strip_prefix("usim view: open http://"))
        .and_then(|rest| rest.split('/').next())
        .expect("view address")
        .to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let frames = rt.block_on(async {
        let mut ws = open(&addr).await;
        frame_with(&mut ws, &["alpha", "bravo"]).await;
        let t0 = Instant::now();
        let mut frames = 0;
        while t0.elapsed() < Duration::from_secs(2) {
            let left = Duration::from_secs(2).saturating_sub(t0.elapsed());
            match tokio::time::timeout(left, ws.next()).await {
                Ok(Some(Ok(Message::Text(_)))) => frames += 1,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        frames
    });
    // 5 frames/s for 2 s (one more if a frame falls on each edge), though
    // 80 reports came in that time.
    // (The lower bound only shows that frames flow: a loaded machine may delay some.)
    assert!(
        (4..=11).contains(&frames),
        "{frames} frames in 2 s at --fps 5"
    );
    let status = p
        .terminate(Duration::from_secs(5))
        .expect("exit on SIGTERM");
    assert!(status.success(), "{status:?}\n{}", p.log());
}

// ---- issue 20: the view under hostile input ------------------------------

/// A NODE_REPORT at `(x, y)`.
fn report(x: f64, y: f64) -> String {
    format!(r#"{{"k":1,"t":1,"x":{x},"y":{y},"speed":0,"heading":0,"depth":0}}"#)
}

/// The names in the latest frame a fresh socket gets.
fn frame_names(addr: &str, token: &str) -> Vec<String> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws?token={token}"))
            .await
            .expect("WebSocket handshake");
        let f = next_of(&mut ws, "frame").await;
        f["vehicles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap().to_string())
            .collect()
    })
}

/// `usim view` and `usim up --view` make a random token and print it in the
/// URL; `--no-token` is refused off loopback; without a token the Host
/// check still holds.
#[test]
fn a_random_token_by_default_and_no_token_only_on_loopback() {
    let v = view_util::standalone(&[]);
    assert_eq!(v.token.len(), 32, "no random token in {}", v.url);
    assert!(v.token.bytes().all(|b| b.is_ascii_hexdigit()), "{}", v.url);
    assert_eq!(view_util::http_get(&v.http_addr, "/", "").0, 401);
    assert_eq!(
        view_util::http_get(&v.http_addr, &format!("/?token={}", v.token), "").0,
        200
    );
    let other = view_util::standalone(&[]);
    assert_ne!(v.token, other.token, "the token is not random");

    let out = std::process::Command::new(mqtt_util::usim())
        .args([
            "view",
            "--broker",
            &v.broker.url(),
            "--bind",
            "0.0.0.0:0",
            "--no-token",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--no-token") && err.contains("loopback"),
        "{err}"
    );

    let open = view_util::standalone(&["--no-token"]);
    assert!(open.token.is_empty(), "{}", open.url);
    assert_eq!(view_util::http_get(&open.http_addr, "/", "").0, 200);
    assert_eq!(
        view_util::http_get(&open.http_addr, "/", "Host: rebind.example:80\r\n").0,
        403,
        "DNS rebinding without a token"
    );

    // `usim up --view` too.
    let dir = tempfile::tempdir().unwrap();
    let port = mqtt_util::free_port();
    let cfg = view_util::vehicle_config(dir.path(), "alpha", port, 0.0, 0.0, 0.0);
    let mut cmd = std::process::Command::new(mqtt_util::usim());
    cmd.arg("up").arg(&cfg).args([
        "--bind",
        &format!("127.0.0.1:{port}"),
        "--view",
        "--view-bind",
        "127.0.0.1:0",
    ]);
    let up = mqtt_util::Proc::spawn("usim up --view", cmd, dir.path().join("up.log"));
    assert!(
        up.wait_log("usim view: open http://", Duration::from_secs(20)),
        "{}",
        up.log()
    );
    let line = up
        .log()
        .lines()
        .find(|l| l.starts_with("usim view: open "))
        .unwrap()
        .to_string();
    let token = line
        .split_once("?token=")
        .map(|(_, t)| t.trim().to_string());
    assert!(token.is_some_and(|t| t.len() == 32), "{line}");
}

/// A retained status over 256 KiB is ignored; the view stays connected and
/// keeps showing vehicles. On mosquitto (the embedded broker refuses
/// payloads over 32 KiB itself).
#[test]
fn an_oversize_retained_message_is_ignored_without_reconnecting() {
    let Some(v) = view_util::standalone_on(mqtt_util::BrokerKind::Mosquitto, &[]) else {
        return;
    };
    let publisher = v.publisher();
    publisher.publish(&topic("huge", "status"), vec![b'x'; 300 * 1024], true);
    publisher.publish(
        &topic("huge2", "NODE_REPORT"),
        vec![b' '; 1024 * 1024],
        true,
    );
    assert!(
        v.wait_status(Duration::from_secs(15), |s| s["oversize"].as_u64()
            >= Some(2)),
        "the oversize messages were not counted: {}",
        v.status()
    );
    // Live reports still arrive, several seconds later (no reconnect loop).
    for i in 0..30 {
        publisher.publish(
            &topic("alpha", "NODE_REPORT"),
            report(f64::from(i), 0.0),
            false,
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let names = frame_names(&v.http_addr, &v.token);
    assert_eq!(names, vec!["alpha".to_string()]);
    let s = v.status();
    assert!(
        s["oversize"].as_u64() <= Some(3),
        "re-read after reconnecting: {s}"
    );
    assert!(!v.view.log().contains("retrying"), "{}", v.view.log());
}

/// Slowloris: partial headers hold at most `--max-connections` sockets,
/// each only until the header timeout; then the view answers again.
#[test]
fn slow_and_idle_connections_are_capped_and_timed_out() {
    use std::io::{Read, Write};
    let v = view_util::standalone(&[
        "--max-connections",
        "20",
        "--header-timeout",
        "2",
        "--idle-timeout",
        "3",
    ]);
    let base_fds = v.fds();
    let mut slow = Vec::new();
    for _ in 0..150 {
        let mut s = std::net::TcpStream::connect(&v.http_addr).expect("connect");
        let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
        slow.push(s);
    }
    // Those over the cap are closed at once: once the server has got to
    // them (a loaded machine may take longer than a fixed pause).
    let t0 = Instant::now();
    let mut fds = v.fds();
    while fds > base_fds + 25 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
        fds = v.fds();
    }
    assert!(
        fds <= base_fds + 25,
        "150 slow sockets took {} descriptors (cap 20)",
        fds - base_fds
    );
    // Every slow socket is closed by the server: at once over the cap,
    // after the header timeout under it.
    let t0 = Instant::now();
    for s in &mut slow {
        s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        let mut buf = [0u8; 256];
        let n = s.read(&mut buf).unwrap_or(0);
        // EOF, or a 408 response then EOF.
        assert!(
            n == 0 || buf.starts_with(b"HTTP/1.1 408"),
            "{:?}",
            &buf[..n]
        );
    }
    assert!(t0.elapsed() < Duration::from_secs(12), "{:?}", t0.elapsed());
    drop(slow);
    // A connection that sends nothing at all goes after the idle timeout.
    let mut silent = std::net::TcpStream::connect(&v.http_addr).expect("connect");
    silent
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let t0 = Instant::now();
    let mut buf = [0u8; 64];
    let _ = silent.read(&mut buf);
    assert!(
        t0.elapsed() < Duration::from_secs(12),
        "silent socket kept {:?}",
        t0.elapsed()
    );
    let s = v.status();
    assert!(s["rejected_connections"].as_u64() >= Some(100), "{s}");
    assert_eq!(
        view_util::http_get(&v.http_addr, &format!("/?token={}", v.token), "").0,
        200
    );
}

/// Vehicles not heard from expire; a full table takes a new vehicle by
/// pushing out the one silent longest.
#[test]
fn names_expire_and_a_full_table_still_takes_new_vehicles() {
    let v = view_util::standalone(&["--expire", "3", "--max-vehicles", "10"]);
    let publisher = v.publisher();
    for i in 0..40 {
        publisher.publish(
            &topic(&format!("fake{i:02}"), "NODE_REPORT"),
            report(1.0, 1.0),
            true,
        );
    }
    assert!(
        v.wait_status(Duration::from_secs(30), |s| s["evicted"].as_u64()
            >= Some(30)),
        "{}",
        v.status()
    );
    std::thread::sleep(Duration::from_millis(300));
    publisher.publish(&topic("real", "NODE_REPORT"), report(5.0, 5.0), false);
    let t0 = Instant::now();
    loop {
        let names = frame_names(&v.http_addr, &v.token);
        assert!(names.len() <= 10, "{names:?}");
        if names.contains(&"real".to_string()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the new vehicle never appeared: {names:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Keep `real` alive; the fakes fall silent and expire.
    let t0 = Instant::now();
    loop {
        publisher.publish(&topic("real", "NODE_REPORT"), report(5.0, 5.0), false);
        let names = frame_names(&v.http_addr, &v.token);
        if names == vec!["real".to_string()] {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "silent names did not expire: {names:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(v.status()["expired"].as_u64() >= Some(9));
}

/// WebSocket clients that never read: memory stays bounded and they are
/// dropped once their sockets stop taking frames.
#[test]
fn stalled_websocket_clients_are_dropped_with_memory_bounded() {
    use std::io::Write;
    let v = view_util::standalone(&[]);
    let publisher = v.publisher();
    // 300 vehicles with long names: frames of ~60 KB, 20 a second.
    let name = |i: usize| format!("{}{i:03}", "n".repeat(100));
    let rss0 = v.rss_kib();
    let mut stalled = Vec::new();
    for _ in 0..200 {
        let mut s = std::net::TcpStream::connect(&v.http_addr).expect("connect");
        write!(
            s,
            "GET /ws?token={} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            v.token, v.http_addr
        )
        .unwrap();
        stalled.push(s);
    }
    assert!(
        v.wait_status(Duration::from_secs(30), |s| s["clients"].as_u64()
            >= Some(150)),
        "{}",
        v.status()
    );
    let t0 = Instant::now();
    let mut peak = 0;
    while t0.elapsed() < Duration::from_secs(40) {
        for i in 0..300 {
            publisher.publish(
                &topic(&name(i), "NODE_REPORT"),
                report(i as f64, t0.elapsed().as_secs_f64()),
                false,
            );
        }
        peak = peak.max(v.rss_kib());
        if v.status()["dropped_clients"].as_u64() >= Some(150) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let s = v.status();
    eprintln!("RSS {rss0} KiB -> peak {peak} KiB; {s}");
    assert!(
        s["dropped_clients"].as_u64() >= Some(150),
        "stalled clients not dropped: {s}"
    );
    assert!(
        peak < 100 * 1024,
        "peak RSS {peak} KiB with 200 stalled clients"
    );
    // A live page still gets frames.
    assert!(!frame_names(&v.http_addr, &v.token).is_empty());
    drop(stalled);
}
