//! `usim fleet` (many vehicles, one process, one connection) and `usim up
//! --in-process` on real brokers, mosquitto and the embedded one
//! (docs/fleets.md): a command moves only its vehicle, statuses go online
//! and offline, a malformed message is dropped while the others run, two
//! vehicles with one name are refused, a head-on pair publishes the
//! ENCOUNTER events of the CPA computed by hand, and no vehicle reads its
//! own publications back as commands.
mod mqtt_util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mqtt_util::*;

/// Deadline for anything that should take a tick or two (returned from as
/// soon as it happens): generous, as CI runs many tests on two cores.
const WAIT: Duration = Duration::from_secs(30);

/// A vehicle config with `extra` top-level keys (no `[mqtt]` broker: the
/// fleet gets `--broker`).
fn config(dir: &Path, name: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let text = format!(
        "name = \"{name}\"\nprefix = \"NAV\"\napp_tick = 20\n{extra}\n[mqtt]\ntopic_root = \"{ROOT}\"\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn fleet(broker: &Broker, args: &[&str]) -> Proc {
    let mut cmd = Command::new(usim());
    cmd.arg("fleet")
        .args(args)
        .args(["--broker", &broker.url()]);
    Proc::spawn("usim fleet", cmd, broker.dir.path().join("fleet.log"))
}

fn speed(w: &Watcher, name: &str) -> Option<f64> {
    w.latest(&topic(name, "NODE_REPORT"))
        .and_then(|p| node_report(&p)["speed"].as_f64())
}

fn command_status_and_malformed(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let dir = broker.dir.path();
    let a = config(dir, "fa", "start_pos = \"x=0, y=0\"");
    let b = config(dir, "fb", "start_pos = \"x=100, y=0\"");
    let c = config(dir, "fc", "start_pos = \"x=200, y=0\"");
    let w = Watcher::new(broker.port, &[format!("{ROOT}/#")]);
    let mut f = fleet(
        &broker,
        &[
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            c.to_str().unwrap(),
        ],
    );
    for n in ["fa", "fb", "fc", "fleet"] {
        w.wait_after(0, &topic(n, "status"), WAIT, |p| p == "online")
            .unwrap_or_else(|| panic!("{n} did not go online\n{}", f.log()));
    }
    // Every vehicle reports; all stand still.
    for n in ["fa", "fb", "fc"] {
        w.wait_after(0, &topic(n, "NODE_REPORT"), WAIT, |_| true)
            .expect("NODE_REPORT");
    }
    // A malformed message to fb and one on an unknown variable: dropped.
    let m = w.mark();
    w.post("fb", "DESIRED_THRUST", "full ahead");
    w.post("fb", "NO_SUCH_VAR", "1");
    // The command to fa moves fa only.
    w.post("fa", "DESIRED_THRUST", "100");
    w.wait_after(m, &topic("fa", "NODE_REPORT"), WAIT, |p| {
        node_report(p)["speed"].as_f64().is_some_and(|s| s > 0.5)
    })
    .expect("fa did not speed up");
    assert!(
        f.wait_log("full ahead", WAIT),
        "malformed message not logged"
    );
    // fb and fc still run (new reports after the bad messages) and stand still.
    let m2 = w.mark();
    for n in ["fb", "fc"] {
        w.wait_after(m2, &topic(n, "NODE_REPORT"), WAIT, |_| true)
            .unwrap_or_else(|| panic!("{n} stopped reporting"));
        assert_eq!(speed(&w, n), Some(0.0), "{n} moved");
    }
    // fb still takes commands.
    let m3 = w.mark();
    w.post("fb", "DESIRED_THRUST", "100");
    w.wait_after(m3, &topic("fb", "NODE_REPORT"), WAIT, |p| {
        node_report(p)["speed"].as_f64().is_some_and(|s| s > 0.5)
    })
    .expect("fb did not speed up after the malformed message");
    assert_eq!(speed(&w, "fc"), Some(0.0), "fc moved");
    // prefix = "NAV": the vehicles publish NAV_X, NAV_Y, NAV_HEADING, which
    // are also V22 inputs; the fleet must not read them back as commands.
    assert!(!f.log().contains("NAV_X"), "{}", f.log());
    // SIGTERM: every status offline, the fleet's too, clean exit.
    let m4 = w.mark();
    let status = f.terminate(WAIT).expect("fleet did not stop");
    assert!(status.success(), "{status:?}\n{}", f.log());
    for n in ["fa", "fb", "fc", "fleet"] {
        w.wait_after(m4, &topic(n, "status"), WAIT, |p| p == "offline")
            .unwrap_or_else(|| panic!("{n} did not go offline"));
    }
}

#[test]
fn fleet_on_mosquitto_commands_statuses_and_bad_input() {
    command_status_and_malformed(BrokerKind::Mosquitto);
}

#[test]
fn fleet_on_embedded_broker_commands_statuses_and_bad_input() {
    command_status_and_malformed(BrokerKind::Embedded);
}

/// 300 spawned vehicles with `publish = "report"` (their iterations go out
/// as one buffer per iteration on the fleet's publish-only connection,
/// docs/fleets.md): a distinct command to every one of them reaches it,
/// each vehicle's `NODE_REPORT` shows its own value, and with `prefix =
/// "NAV"` no `NAV_*` variable is subscribed per vehicle (the wildcards
/// suffice: nothing the vehicles publish comes back as a command).
fn every_command_reaches_a_fleet_of_300(kind: BrokerKind) {
    const N: usize = 300;
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let dir = broker.dir.path();
    let base = dir.join("base.toml");
    std::fs::write(
        &base,
        format!(
            "name = \"m\"\nprefix = \"NAV\"\napp_tick = 5\n\
             thrust_map = \"-100:-3.5, 20:2.4, 100:5\"\n\
             [mqtt]\ntopic_root = \"{ROOT}\"\npublish = \"report\"\n"
        ),
    )
    .unwrap();
    let w = Watcher::new(broker.port, &[format!("{ROOT}/+/NODE_REPORT")]);
    let mut f = fleet(
        &broker,
        &[
            "--spawn",
            &N.to_string(),
            "--config",
            base.to_str().unwrap(),
        ],
    );
    let names: Vec<String> = (1..=N).map(|i| format!("m-{i:04}")).collect();
    for n in &names {
        w.wait_after(0, &topic(n, "NODE_REPORT"), WAIT, |_| true)
            .unwrap_or_else(|| panic!("{n} does not report\n{}", f.log()));
    }
    // Vehicle i gets thrust 21 + i % 79: neighbours differ, so a command
    // delivered to the wrong vehicle shows.
    let want = |i: usize| 21.0 + (i % 79) as f64;
    let m = w.mark();
    for (i, n) in names.iter().enumerate() {
        w.post(n, "DESIRED_THRUST", format!("{}", want(i)));
    }
    let t0 = Instant::now();
    let mut missing: Vec<usize> = (0..N).collect();
    while !missing.is_empty() && t0.elapsed() < WAIT {
        missing.retain(|&i| {
            !w.since(m, &topic(&names[i], "NODE_REPORT"))
                .iter()
                .any(|msg| node_report(&msg.payload)["thrust"].as_f64() == Some(want(i)))
        });
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        missing.is_empty(),
        "{} of {N} vehicles never showed their command, e.g. {:?}\n{}",
        missing.len(),
        missing
            .iter()
            .take(5)
            .map(|&i| &names[i])
            .collect::<Vec<_>>(),
        f.log()
    );
    // Nothing was read back as a bad command or dropped.
    assert!(!f.log().contains("dropped message"), "{}", f.log());
    let status = f.terminate(WAIT).expect("fleet did not stop");
    assert!(status.success(), "{status:?}\n{}", f.log());
}

#[test]
fn every_command_reaches_a_fleet_of_300_on_the_embedded_broker() {
    every_command_reaches_a_fleet_of_300(BrokerKind::Embedded);
}

#[test]
fn every_command_reaches_a_fleet_of_300_on_mosquitto() {
    every_command_reaches_a_fleet_of_300(BrokerKind::Mosquitto);
}

#[test]
fn two_vehicles_with_one_name_are_refused_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let a = config(dir.path(), "same", "");
    let b = dir.path().join("other.toml");
    std::fs::copy(&a, &b).unwrap();
    // No broker listens on this port: the names are checked first.
    let closed = refusing_port();
    let port = closed.port;
    let o = Command::new(usim())
        .arg("fleet")
        .arg(&a)
        .arg(&b)
        .args(["--broker", &format!("mqtt://127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("vehicles 1 and 2 are both named \"same\""),
        "{err}"
    );
    assert!(!err.contains("cannot reach"), "{err}");
}

/// Two vehicles head-on at 10 m/s on parallel lines `L` = 6 m apart:
/// `west` from (0, 0) heading east, `east` from (100, 6) heading west.
/// Relative position r = (100 − 20t, 6), relative velocity (−20, 0): the
/// CPA is at t = 5 s with range 6 m, `east` due north of `west` (bearing
/// 0°). At any instant the CPA predicted from the motion has range 6 and
/// time gap/20, gap = sqrt(range² − 6²).
fn head_on_encounter(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let dir = broker.dir.path();
    // A deceleration limit of 1e-9 m/s² keeps the start speed (0 would
    // drop it at once with no thrust).
    let keep = "max_deceleration = 1e-9";
    let w_cfg = config(
        dir,
        "west",
        &format!("start_pos = \"x=0, y=0, heading=90, speed=10\"\n{keep}"),
    );
    let e_cfg = config(
        dir,
        "east",
        &format!("start_pos = \"x=100, y=6, heading=270, speed=10\"\n{keep}"),
    );
    let w = Watcher::new(broker.port, &[format!("{ROOT}/#")]);
    let t0 = Instant::now();
    let mut f = fleet(
        &broker,
        &[
            w_cfg.to_str().unwrap(),
            e_cfg.to_str().unwrap(),
            "--near-miss",
            "30",
            "--collision",
            "7",
            "--time-warp",
            "2",
        ],
    );
    let enc_topic = topic("fleet", "ENCOUNTER");
    let clear = w
        .wait_after(0, &enc_topic, WAIT, |p| p.contains("\"clear\""))
        .unwrap_or_else(|| panic!("no clear event\n{}", f.log()));
    assert!(t0.elapsed() < Duration::from_secs(12));
    let events: Vec<serde_json::Value> = w
        .since(0, &enc_topic)
        .iter()
        .map(|m| serde_json::from_str(&m.payload).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["near_miss", "collision", "clear"], "{events:?}");
    let l = 6.0;
    for e in &events {
        assert_eq!(e["a"], "west");
        assert_eq!(e["b"], "east");
        let (t, range) = (e["t"].as_f64().unwrap(), e["range"].as_f64().unwrap());
        let (ct, cr, cb) = (
            e["cpa_time"].as_f64().unwrap(),
            e["cpa_range"].as_f64().unwrap(),
            e["cpa_bearing"].as_f64().unwrap(),
        );
        if ct > 0.0 {
            // Closing: the predicted CPA has range L, due north.
            assert!((cr - l).abs() < 1e-6, "{e}");
            assert!(cb.abs() < 1e-6 || (cb - 360.0).abs() < 1e-6, "{e}");
        } else {
            // Already separating at that tick: the CPA is now.
            assert!((cr - range).abs() < 1e-9, "{e}");
        }
        if e["event"] != "clear" {
            // Time to CPA = along-track gap / closing speed (20 m/s).
            assert!(ct > 0.0, "{e}");
            let gap = (range * range - l * l).sqrt();
            assert!((ct - gap / 20.0).abs() < 1e-6, "{e}");
            // And the CPA instant is t = 5 s (one 20 Hz tick of tolerance:
            // the fleet's mission time starts at its first tick).
            assert!((t + ct - 5.0).abs() <= 0.05 + 1e-9, "{e}");
        }
    }
    // The fleet steps by the time that passed (times the warp): 0.05 s of
    // mission time per tick at 20 Hz, longer when a loaded machine delays
    // a tick. The longest step around the CPA, from west's reports.
    let mut ts: Vec<f64> = w
        .since(0, &topic("west", "NODE_REPORT"))
        .iter()
        .filter_map(|m| node_report(&m.payload)["t"].as_f64())
        .collect();
    ts.sort_by(f64::total_cmp);
    let step_near = |t: f64| {
        ts.windows(2)
            .filter(|p| p[1] >= t - 0.5 && p[0] <= t + 0.5)
            .map(|p| p[1] - p[0])
            .fold(0.05f64, f64::max)
    };
    let (t_near, step) = (events[0]["t"].as_f64().unwrap(), step_near(5.0));
    // Thresholds: the near miss at the first tick within 30 m, the
    // collision within 7 m, the clear with the least range seen:
    // 6 m ≤ range ≤ sqrt(6² + (step × 20 m/s / 2)²) (the gap closes 20 m/s,
    // 1 m per 0.05 s tick), within a step of t = 5 s.
    let r = |i: usize| events[i]["range"].as_f64().unwrap();
    assert!(
        r(0) <= 30.0 && r(0) > 30.0 - 20.0 * step_near(t_near),
        "{events:?}"
    );
    assert!(r(1) <= 7.0 && r(1) > 6.0, "{events:?}");
    let half = 10.0 * step;
    assert!(
        r(2) >= l - 1e-9 && r(2) <= (l * l + half * half).sqrt() + 1e-9,
        "step {step}: {events:?}"
    );
    assert!(
        (events[2]["t"].as_f64().unwrap() - 5.0).abs() <= step + 1e-9,
        "step {step}: {events:?}"
    );
    drop(clear);
    let status = f.terminate(WAIT).expect("fleet did not stop");
    assert!(status.success());
}

#[test]
fn head_on_encounter_on_mosquitto() {
    head_on_encounter(BrokerKind::Mosquitto);
}

#[test]
fn head_on_encounter_on_embedded_broker() {
    head_on_encounter(BrokerKind::Embedded);
}

#[test]
fn up_in_process_runs_two_vehicles_on_its_embedded_broker() {
    let dir = tempfile::tempdir().unwrap();
    let a = config(dir.path(), "ua", "");
    let b = config(dir.path(), "ub", "");
    let mut cmd = Command::new(usim());
    cmd.arg("up")
        .arg("--in-process")
        .arg(&a)
        .arg(&b)
        .args(["--bind", "127.0.0.1:0"]);
    let mut up = Proc::spawn("usim up --in-process", cmd, dir.path().join("up.log"));
    // The port it bound, from its log (no other test can take it first).
    let port = up
        .wait_listen_port(START)
        .unwrap_or_else(|e| panic!("no embedded broker: {e}"));
    let w = Watcher::new(port, &[format!("{ROOT}/#")]);
    for n in ["ua", "ub"] {
        w.wait_after(0, &topic(n, "NODE_REPORT"), WAIT, |_| true)
            .unwrap_or_else(|| panic!("{n} does not report\n{}", up.log()));
    }
    let m = w.mark();
    w.post("ub", "DESIRED_THRUST", "100");
    w.wait_after(m, &topic("ub", "NODE_REPORT"), WAIT, |p| {
        node_report(p)["speed"].as_f64().is_some_and(|s| s > 0.5)
    })
    .expect("ub did not speed up");
    assert_eq!(speed(&w, "ua"), Some(0.0));
    // One process: no `usim run` children.
    let children =
        std::fs::read_to_string(format!("/proc/{}/task/{}/children", up.pid(), up.pid()))
            .unwrap_or_default();
    assert!(children.trim().is_empty(), "children: {children}");
    let m = w.mark();
    let status = up.terminate(WAIT).expect("up did not stop");
    assert!(status.success(), "{}", up.log());
    for n in ["ua", "ub"] {
        w.wait_after(m, &topic(n, "status"), WAIT, |p| p == "offline")
            .unwrap_or_else(|| panic!("{n} did not go offline"));
    }
}

/// Caught: with `prefix = "NAV"` a vehicle subscribed to NAV_X, NAV_Y and
/// NAV_HEADING (uSimMarineV22 inputs) and got its own publications back,
/// each logged as a refused command, every iteration.
#[test]
fn run_does_not_read_its_own_publications_back() {
    let Some(broker) = Broker::start(BrokerKind::Embedded) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "echo", &broker.url(), "");
    let w = Watcher::vehicle(broker.port, "echo");
    let mut v = spawn_vehicle(&cfg, &[]);
    w.wait_after(0, &topic("echo", "status"), WAIT, |p| p == "online")
        .expect("online");
    // A second of iterations (20 Hz), each publishing NAV_X: a second of
    // the vehicle's clock (a loaded machine may give it less in one second
    // of wall-clock time).
    let m = w.mark();
    let end = w.wait_clock("echo", m, 1.0);
    let n = w.count_between(m, end, &topic("echo", "NAV_X"));
    assert!(n >= 10, "{n} NAV_X in a second of iterations");
    v.terminate(WAIT).expect("stop");
    let log = v.log();
    assert!(!log.contains("dropped message"), "{log}");
}
