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

/// The next JSON message of `type` `kind`, within 10 s.
async fn next_of(ws: &mut Ws, kind: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = tokio::time::timeout(left, ws.next())
            .await
            .unwrap_or_else(|_| panic!("no {kind} message within 10 s"))
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
    let deadline = Instant::now() + Duration::from_secs(15);
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
        let seen = watch.wait_after(mark, &topic("alpha", "NODE_REPORT"), Duration::from_secs(5), |p| {
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
            fleet.wait_clients(20, Duration::from_secs(5)),
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
        fleet.wait_clients(0, Duration::from_secs(5)),
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
        p.wait_log("usim view: open http://127.0.0.1:", Duration::from_secs(10)),
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
