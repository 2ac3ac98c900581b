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

/// The retained message on `topic` (what a new subscriber gets first).
fn retained(port: u16, topic: &str) -> Option<String> {
    let w = Watcher::new(port, &[topic.to_string()]);
    std::thread::sleep(Duration::from_millis(700));
    w.latest(topic)
}

/// Start `usim moos-bridge` on the DB at `port` and the broker at `url`,
/// waiting until it mirrors the community and is on the broker.
fn spawn_bridge(dir: &std::path::Path, tag: &str, port: u16, url: &str, extra: &[&str]) -> Proc {
    let mut cmd = Command::new(usim());
    cmd.args([
        "moos-bridge",
        &format!("--moos_port={port}"),
        "--broker",
        url,
        "--topic-root",
        ROOT,
    ])
    .args(extra);
    let p = Proc::spawn(tag, cmd, dir.join(format!("{tag}.log")));
    for needle in ["mirroring community", "connected to the MQTT broker"] {
        assert!(p.wait_log(needle, Duration::from_secs(30)), "{}", p.log());
    }
    p
}

/// A pymoos client (inline script) that registers for `var`, posts
/// `first` on it after 1 s, and records every mail of `var` for
/// `seconds`: printed as JSON `[[value, source], ...]`.
fn var_recorder(
    port: u16,
    var: &str,
    first: f64,
    seconds: f64,
) -> std::thread::JoinHandle<Vec<(f64, String)>> {
    let script = format!(
        "import pymoos, time, json\nc = pymoos.comms()\nc.set_quiet(True)\n\
         def oc():\n    c.register('{var}', 0)\n    return True\n\
         c.set_on_connect_callback(oc)\nc.run('localhost', {port}, 'recorder')\n\
         assert c.wait_until_connected(10000)\ntime.sleep(1.0)\nc.notify('{var}', {first}, -1)\n\
         mail = []\nend = time.time() + {seconds}\n\
         while time.time() < end:\n    mail += [[m.double() if m.is_double() else m.string(), m.source()] for m in c.fetch() if m.key() == '{var}']\n    time.sleep(0.02)\n\
         c.close(True)\nprint('MAIL', json.dumps(mail))\n"
    );
    std::thread::spawn(move || {
        let out = Command::new(python())
            .args(["-c", &script])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let so = String::from_utf8_lossy(&out.stdout);
        let line = so
            .lines()
            .find_map(|l| l.strip_prefix("MAIL "))
            .unwrap_or_else(|| panic!("{so}"));
        let v: Vec<(Value, String)> = serde_json::from_str(line).unwrap();
        v.into_iter()
            .map(|(x, s)| {
                (
                    x.as_f64().unwrap_or(f64::NAN),
                    format!(
                        "{s}{}",
                        x.as_str()
                            .map(|t| format!(" (string of {} bytes)", t.len()))
                            .unwrap_or_default()
                    ),
                )
            })
            .collect()
    })
}

/// Issue 37 item 6: `usim moosdb --mqtt` plus two `usim moos-bridge
/// --to-moos DESIRED_THRUST` on one community (the mirrors all mirror
/// DESIRED_*): a command from MQTT reaches the MOOSDB once per bridge and
/// never comes back onto MQTT; a MOOS posting is mirrored once per mirror
/// and never comes back into the MOOSDB. Before, one command looped for ever.
#[test]
fn no_configuration_of_bridges_loops() {
    if !have_pymoos("no_configuration_of_bridges_loops") {
        return;
    }
    for kind in [BrokerKind::Embedded, BrokerKind::Mosquitto] {
        let Some(broker) = Broker::start(kind) else {
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        let url = broker.url();
        let (db, port) = moosdb(
            dir.path(),
            "loop",
            &[
                "--moos_community=loop",
                "--mqtt",
                &url,
                "--topic-root",
                ROOT,
            ],
        );
        assert!(
            db.wait_log("connected to the MQTT broker", Duration::from_secs(30)),
            "{}",
            db.log()
        );
        let topic = format!("{ROOT}/loop/DESIRED_THRUST");
        let w = Watcher::new(broker.port, std::slice::from_ref(&topic));
        let _b1 = spawn_bridge(
            dir.path(),
            "b1",
            port,
            &url,
            &["--to-moos", "DESIRED_THRUST"],
        );
        let _b2 = spawn_bridge(
            dir.path(),
            "b2",
            port,
            &url,
            &["--to-moos", "DESIRED_THRUST", "--moos_name", "bridge_two"],
        );
        let rec = var_recorder(port, "DESIRED_THRUST", 30.0, 6.0);
        assert!(
            w.wait_after(0, &topic, Duration::from_secs(30), |p| p == "30")
                .is_some(),
            "the MOOS posting mirrored"
        );
        w.publish(&topic, "40");
        let mail = rec.join().unwrap();
        let on_mqtt = |v: &str| w.since(0, &topic).iter().filter(|m| m.payload == v).count();
        assert_eq!(
            on_mqtt("40"),
            1,
            "{kind:?}: only our own MQTT command: {:?}",
            w.since(0, &topic).len()
        );
        let n30 = on_mqtt("30");
        assert!(
            (1..=3).contains(&n30),
            "{kind:?}: once per mirror, got {n30}"
        );
        let mut forty: Vec<&str> = mail
            .iter()
            .filter(|m| m.0 == 40.0)
            .map(|m| m.1.as_str())
            .collect();
        forty.sort();
        assert_eq!(
            forty,
            ["bridge_two", "usim_bridge"],
            "{kind:?}: once per bridge: {mail:?}"
        );
        let thirty: Vec<&(f64, String)> = mail.iter().filter(|m| m.0 == 30.0).collect();
        assert_eq!(thirty.len(), 1, "{kind:?}: the MOOS posting only: {mail:?}");
        assert_eq!(mail.len(), 3, "{kind:?}: {mail:?}");
    }
}

/// Issue 37 items 7–9 against mosquitto (which disconnects a client that
/// publishes a topic with a control character): a 70 KiB MOOS value, names
/// that are not topics, and a 100 KiB retained command waiting on a
/// `--to-moos` topic are each dropped with one log line; the bridge stays
/// on the broker (one connection), mirrors every NAV_X, and forwards the
/// next small command.
#[test]
fn oversize_values_bad_names_and_big_retained_commands_keep_the_bridge_up() {
    if !have_pymoos("oversize_values_bad_names_and_big_retained_commands_keep_the_bridge_up") {
        return;
    }
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let (_db, port) = moosdb(dir.path(), "hostile", &["--moos_community=hostile"]);
    let cmd = format!("{ROOT}/hostile/CMD");
    let w = Watcher::new(broker.port, &[format!("{ROOT}/hostile/NAV_X")]);
    w.publish_retained(&cmd, vec![b'7'; 100 * 1024]);
    std::thread::sleep(Duration::from_millis(300));
    let bridge = spawn_bridge(
        dir.path(),
        "bridge",
        port,
        &url,
        &["--mirror", "*", "--to-moos", "CMD"],
    );
    let rec = var_recorder(port, "CMD", 1.0, 7.0);
    let script = format!(
        "import pymoos, time\nc = pymoos.comms()\nc.set_quiet(True)\nc.run('localhost', {port}, 'hostile')\n\
         assert c.wait_until_connected(10000)\ntime.sleep(0.5)\n\
         for i in range(20):\n    c.notify('BIG', 'x' * 70000, -1)\n\
         \x20   for n in ['BAD\\x1bX', 'BAD\\x7f', 'BAD\\u0085', 'BAD\\ufffe']:\n        c.notify(n, 1.0, -1)\n\
         \x20   c.notify('NAV_X', float(i), -1)\n    time.sleep(0.1)\n\
         time.sleep(0.5)\nc.close(True)\n"
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
    let last = w.wait_after(
        0,
        &format!("{ROOT}/hostile/NAV_X"),
        Duration::from_secs(10),
        |p| p == "19",
    );
    assert!(last.is_some(), "NAV_X 19 mirrored:\n{}", bridge.log());
    let navs = w.since(0, &format!("{ROOT}/hostile/NAV_X")).len();
    assert_eq!(navs, 20, "every NAV_X:\n{}", bridge.log());
    w.publish(&cmd, "2");
    let mail = rec.join().unwrap();
    let log = bridge.log();
    assert!(
        mail.iter().any(|m| m.0 == 2.0 && m.1 == "usim_bridge"),
        "the small command reached the MOOSDB: {mail:?}\n{log}"
    );
    assert!(!mail.iter().any(|m| m.0 == 7.0 || m.0 > 1e30), "{mail:?}");
    assert_eq!(
        log.matches("connected to the MQTT broker").count(),
        1,
        "{log}"
    );
    assert!(!log.contains("reconnecting"), "{log}");
    assert_eq!(
        log.matches("MOOS BIG of 70000 bytes not mirrored").count(),
        1,
        "{log}"
    );
    assert_eq!(log.matches("not a valid MQTT topic").count(), 4, "{log}");
    assert_eq!(
        log.matches("not posted into the MOOSDB").count(),
        1,
        "{log}"
    );
    assert!(log.contains(r"BAD\u{1b}X"), "escaped in the log: {log}");
}

/// Issue 36 item 5 and issue 37 item 20: a vehicle that lives only in a
/// MOOS community (pymoos posting NAV_* and pNodeReporter's
/// NODE_REPORT_LOCAL) is recorded by `usim record --all` (MCAP, read by the
/// `mcap` package, and alog, read by tests/py/read_alog.py) with its speed
/// and course over ground, and served by `usim nmea` to a real gpsd whose
/// fixes carry that speed and course; when the bridge stops, the retained
/// status it set is cleared.
#[test]
fn a_moos_only_vehicle_is_recorded_and_served_to_gpsd() {
    if !have_pymoos("a_moos_only_vehicle_is_recorded_and_served_to_gpsd") {
        return;
    }
    let Some((gpsd, gpspipe)) = mqtt_util::gpsd_paths() else {
        return;
    };
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let (speed, heading) = (2.0, 60.0);
    let dir = tempfile::tempdir().unwrap();
    let url = broker.url();
    let (_db, port) = moosdb(dir.path(), "alpha", &["--moos_community=alpha"]);
    let mut bridge = spawn_bridge(dir.path(), "bridge", port, &url, &[]);
    let (_gpsd, udp_port, gpsd_port) = mqtt_util::start_gpsd(&gpsd, dir.path());
    let mut nmea = Command::new(usim());
    nmea.args(["nmea", "--broker", &url, "--topic-root", ROOT])
        .args([
            "--vehicles",
            "alpha",
            "--own",
            "alpha",
            "--udp",
            &format!("127.0.0.1:{udp_port}"),
        ]);
    let nmea = Proc::spawn("usim nmea", nmea, dir.path().join("nmea.log"));
    let mut recorders = Vec::new();
    for file in ["alpha.mcap", "alpha.alog"] {
        let mut r = Command::new(usim());
        r.args([
            "record",
            "--all",
            "--broker",
            &url,
            "--topic-root",
            ROOT,
            "--duration",
            "14",
            "-o",
        ])
        .arg(dir.path().join(file));
        recorders.push(Proc::spawn(file, r, dir.path().join(format!("{file}.log"))));
    }
    std::thread::sleep(Duration::from_millis(500));
    let posted = dir.path().join("posted.jsonl");
    let (p, o) = (port.to_string(), posted.to_str().unwrap().to_string());
    let peer = std::thread::spawn(move || {
        run_py(
            "moos_vehicle_peer.py",
            &[&p, &o, "10", &speed.to_string(), &heading.to_string()],
            Duration::from_secs(60),
        )
    });
    let g = Command::new("timeout")
        .arg("30")
        .arg(&gpspipe)
        .args(["-w", "-n", "30", &format!("127.0.0.1:{gpsd_port}")])
        .output()
        .unwrap();
    let gps = String::from_utf8_lossy(&g.stdout).into_owned();
    assert_py(&peer.join().unwrap(), "moos_vehicle_peer");
    // gpsd's fixes: the posted speed and course (RMC's knots to 0.01 kn).
    let mut fixes = 0;
    for line in gps.lines().filter(|l| l.contains("\"class\":\"TPV\"")) {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["lat"].as_f64().is_none() {
            continue;
        }
        // (a fix from GGA alone has no speed or track)
        let (Some(s), Some(c)) = (v["speed"].as_f64(), v["track"].as_f64()) else {
            continue;
        };
        assert!((s - speed).abs() < 0.006, "speed {line}");
        assert!((c - heading).abs() < 0.051, "track {line}");
        assert!(
            (v["lat"].as_f64().unwrap() - 43.8253).abs() < 0.001,
            "{line}"
        );
        fixes += 1;
    }
    assert!(
        fixes >= 3,
        "gpsd gave {fixes} fixes:\n{gps}\n{}",
        nmea.log()
    );
    for r in &mut recorders {
        assert!(
            r.wait_exit(Duration::from_secs(30))
                .is_some_and(|s| s.success()),
            "{}",
            r.log()
        );
        assert!(!r.log().contains("dropped"), "{}", r.log());
    }
    // The MCAP's state channel, read by the `mcap` package.
    let check = format!(
        "import json, sys\nfrom mcap.reader import make_reader\n\
         r = make_reader(open(sys.argv[1], 'rb'))\n\
         rows = [json.loads(m.data) for s, c, m in r.iter_messages(topics=['/alpha/state'])]\n\
         print(json.dumps(rows))\n"
    );
    let o = Command::new(python())
        .args(["-c", &check])
        .arg(dir.path().join("alpha.mcap"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert!(rows.len() >= 20, "{} states", rows.len());
    let posted: Vec<Value> = std::fs::read_to_string(&posted)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["sog"].as_f64(), Some(speed), "{r}");
        assert_eq!(r["hog"].as_f64(), Some(heading), "{r}");
        assert_eq!(r["k"].as_f64(), Some(i as f64 + 1.0), "{r}");
        let p = posted
            .iter()
            .find(|p| p["t"].as_f64() == r["t"].as_f64())
            .unwrap_or_else(|| panic!("a posted report at t of {r}"));
        assert!(
            (p["x"].as_f64().unwrap() - r["x"].as_f64().unwrap()).abs() < 0.006,
            "{r} vs {p}"
        );
    }
    // The alog, read by the independent reader.
    let o = Command::new(python())
        .arg(script("read_alog.py"))
        .arg(dir.path().join("alpha.alog"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let alog: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entries = alog["entries"].as_array().unwrap();
    let speeds: Vec<f64> = entries
        .iter()
        .filter(|e| e[1] == "NAV_SPEED" && e[2] == "uSimMarine:alpha")
        .map(|e| e[4].as_f64().unwrap())
        .collect();
    assert!(
        speeds.len() >= 20 && speeds.iter().all(|s| *s == speed),
        "{speeds:?}"
    );
    // The bridge stops: the retained status it set goes with it.
    let status = format!("{ROOT}/alpha/status");
    assert_eq!(retained(broker.port, &status), Some("online".into()));
    bridge.terminate(Duration::from_secs(10));
    assert!(
        bridge
            .log()
            .contains("cleared the retained status of 1 MOOS vehicles"),
        "{}",
        bridge.log()
    );
    assert_eq!(retained(broker.port, &status), None);
}
