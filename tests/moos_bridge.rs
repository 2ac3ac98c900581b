//! `usim moos-bridge` between `usim moosdb` (with a real pymoos client,
//! tests/py/moos_bridge_peer.py) and mosquitto: MOOS → MQTT keeps doubles
//! and strings, a MOOS NODE_REPORT becomes usim's NODE_REPORT JSON, MQTT →
//! MOOS posts the chosen variables with their types, nothing loops back
//! (each value arrives once on each side), and `usim view` serves the
//! vehicle that lives only in the MOOS community to its browser page
//! (the page's WebSocket frames; tests/view_browser.rs checks the page
//! itself in headless Chromium).
mod moos_util;
mod mqtt_util;

use std::process::Command;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use moos_util::*;
use mqtt_util::{Broker, BrokerKind, Watcher};
use serde_json::Value;

const ROOT: &str = "usimtest";
const TOKEN: &str = "moos-bridge-token";

#[test]
fn moos_community_mirrored_onto_mqtt_both_ways_and_into_the_view() {
    if !have_pymoos("moos_community_mirrored_onto_mqtt_both_ways_and_into_the_view") {
        return;
    }
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let mport: u16 = broker.url().rsplit(':').next().unwrap().parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_db, port) = moosdb(dir.path(), "bridge", &["--moos_community=henry"]);
    let w = Watcher::new(mport, &[format!("{ROOT}/#")]);
    let mut cmd = Command::new(usim());
    cmd.args([
        "moos-bridge",
        &format!("--moos_port={port}"),
        "--broker",
        &broker.url(),
    ])
    .args([
        "--topic-root",
        ROOT,
        "--mirror",
        "*",
        "--to-moos",
        "DEPLOY",
        "--to-moos",
        "SPEED_REQ",
    ]);
    let bridge = Proc::spawn("moos-bridge", cmd, dir.path().join("bridge.log"));
    assert!(
        bridge.wait_log("mirroring community henry", Duration::from_secs(30)),
        "{}",
        bridge.log()
    );
    assert!(
        bridge.wait_log("connected to the MQTT broker", Duration::from_secs(30)),
        "{}",
        bridge.log()
    );
    // The view, on the same broker.
    let mut vcmd = Command::new(usim());
    vcmd.args([
        "view",
        "--broker",
        &broker.url(),
        "--topic-root",
        ROOT,
        "--bind",
        "127.0.0.1:0",
        "--token",
        TOKEN,
    ]);
    let view = Proc::spawn("view", vcmd, dir.path().join("view.log"));
    assert!(
        view.wait_log("open http://", Duration::from_secs(30)),
        "{}",
        view.log()
    );
    let addr = view
        .log()
        .lines()
        .find_map(|l| {
            l.split("open http://")
                .nth(1)
                .map(|r| r.split('/').next().unwrap().to_string())
        })
        .unwrap();

    let out = dir.path().join("peer.json");
    let (p, o) = (port.to_string(), out.to_str().unwrap().to_string());
    let peer = std::thread::spawn(move || {
        run_py(
            "moos_bridge_peer.py",
            &[&p, &o, "10"],
            Duration::from_secs(90),
        )
    });
    let mark = 0;
    // MOOS → MQTT: types survive as text that parses back the same.
    let nav = w
        .wait_after(
            mark,
            &format!("{ROOT}/henry/NAV_X"),
            Duration::from_secs(30),
            |_| true,
        )
        .expect("NAV_X mirrored");
    assert_eq!(nav.payload.parse::<f64>().unwrap(), 1.5);
    let dep = w
        .wait_after(
            mark,
            &format!("{ROOT}/henry/DEPLOY"),
            Duration::from_secs(30),
            |_| true,
        )
        .expect("DEPLOY mirrored");
    assert_eq!(dep.payload, "false");
    let rep = w
        .wait_after(
            mark,
            &format!("{ROOT}/alpha/NODE_REPORT"),
            Duration::from_secs(30),
            |_| true,
        )
        .expect("NODE_REPORT as JSON");
    let j: Value = serde_json::from_str(&rep.payload).unwrap();
    assert_eq!(
        (j["x"].as_f64(), j["y"].as_f64(), j["heading"].as_f64()),
        (Some(12.5), Some(-30.0), Some(90.0))
    );
    assert!(w
        .wait_after(
            0,
            &format!("{ROOT}/alpha/status"),
            Duration::from_secs(30),
            |p| p == "online"
        )
        .is_some());
    // MQTT → MOOS.
    w.publish(&format!("{ROOT}/henry/DEPLOY"), "true");
    w.publish(&format!("{ROOT}/henry/SPEED_REQ"), "2.5");
    // The view serves alpha (only in the MOOS community) to its page.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let seen = rt.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws?token={TOKEN}"))
            .await
            .expect("WebSocket");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let Ok(Some(Ok(msg))) = tokio::time::timeout(Duration::from_secs(5), ws.next()).await
            else {
                continue;
            };
            if let Ok(t) = msg.into_text() {
                let v: Value = serde_json::from_str(&t).unwrap_or(Value::Null);
                if v["type"] == "frame"
                    && v["vehicles"].as_array().is_some_and(|vs| {
                        vs.iter().any(|x| {
                            x["name"] == "alpha" && x["report"]["x"].as_f64() == Some(12.5)
                        })
                    })
                {
                    return true;
                }
            }
        }
        false
    });
    assert!(seen, "the view's frames show alpha:\n{}", view.log());
    let r = peer.join().unwrap();
    assert_py(&r, "moos_bridge_peer");
    let mail: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let deploys: Vec<(&str, &str)> = mail
        .iter()
        .filter(|m| m["key"] == "DEPLOY")
        .map(|m| {
            (
                m["value"].as_str().unwrap_or("?"),
                m["source"].as_str().unwrap(),
            )
        })
        .collect();
    // Our own "false" comes back once (we registered), the bridge's "true"
    // once; the mirror of "false" coming back from MQTT is not re-posted.
    assert_eq!(
        deploys,
        vec![("false", "peer"), ("true", "usim_bridge")],
        "{mail:?}"
    );
    let speeds: Vec<&Value> = mail.iter().filter(|m| m["key"] == "SPEED_REQ").collect();
    assert_eq!(speeds.len(), 1, "{mail:?}");
    assert_eq!(speeds[0]["double"], true);
    assert_eq!(speeds[0]["value"], 2.5);
    // The bridge's own MOOS posts are not mirrored back onto MQTT.
    let trues = w.since(0, &format!("{ROOT}/henry/DEPLOY"));
    let payloads: Vec<&str> = trues.iter().map(|m| m.payload.as_str()).collect();
    assert_eq!(
        payloads,
        vec!["false", "true"],
        "only our MQTT post and the MOOS one: {payloads:?}"
    );
    drop(bridge);
}

/// `usim moosdb --mqtt URL` mirrors its own community (the bridge inside
/// the DB process): a pymoos posting shows on MQTT with its value.
#[test]
fn moosdb_with_mqtt_mirrors_its_community() {
    if !have_pymoos("moosdb_with_mqtt_mirrors_its_community") {
        return;
    }
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let mport: u16 = broker.url().rsplit(':').next().unwrap().parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let w = Watcher::new(mport, &[format!("{ROOT}/#")]);
    let url = broker.url();
    let (db, port) = moosdb(
        dir.path(),
        "mirror",
        &[
            "--moos_community=charlie",
            "--mqtt",
            &url,
            "--topic-root",
            ROOT,
        ],
    );
    assert!(
        db.wait_log("mirroring community charlie", Duration::from_secs(30)),
        "{}",
        db.log()
    );
    let script = format!(
        "import pymoos, time\nc = pymoos.comms()\nc.set_quiet(True)\nc.run('localhost', {port}, 'poster')\n\
         assert c.wait_until_connected(10000)\ntime.sleep(0.5)\n\
         for _ in range(10):\n    c.notify('NAV_X', 2.25, -1)\n    time.sleep(0.3)\nc.close(True)\n"
    );
    let out = Command::new(python())
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = w
        .wait_after(
            0,
            &format!("{ROOT}/charlie/NAV_X"),
            Duration::from_secs(30),
            |_| true,
        )
        .unwrap_or_else(|| panic!("NAV_X mirrored:\n{}", db.log()));
    assert_eq!(m.payload.parse::<f64>().unwrap(), 2.25);
}
