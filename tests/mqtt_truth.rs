//! What the MQTT tools say is true, against real brokers (mosquitto and the
//! embedded one, each started on a free loopback port):
//! * `usim post` to a vehicle with no retained `online` status warns and
//!   names the vehicles that are online; `--no-check` skips the check;
//! * a live publish with the retain flag is applied by a running vehicle,
//!   and only the stored copy handed over at (re)subscription is ignored;
//! * `usim watch VEHICLE USM_RESET_COUNT --once` waits past the 10 s
//!   default for a variable posted only on change;
//! * `NODE_REPORT` carries the mission time `t` and the new columns,
//!   `USM_TIME` the Unix clock, `NODE_REPORT_LOCAL` MOOS's string form.
mod mqtt_util;

use std::process::Command;
use std::time::{Duration, Instant};

use mqtt_util::*;

/// Deadline for anything that should take a tick or two (returned from as
/// soon as it happens): generous, as CI runs many tests on two cores.
const WAIT: Duration = Duration::from_secs(30);

fn tool(port: u16, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(usim())
        .args(args)
        .args([
            "--broker",
            &format!("mqtt://127.0.0.1:{port}"),
            "--topic-root",
            ROOT,
        ])
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .output()
        .expect("run usim tool");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn online(w: &Watcher, vehicle: &str) {
    w.wait_after(0, &topic(vehicle, "status"), WAIT, |p| p == "online")
        .unwrap_or_else(|| panic!("{vehicle} not online"));
    w.wait_num(0, &topic(vehicle, "USM_TIME"), WAIT, |_| true)
        .unwrap_or_else(|| panic!("{vehicle}: no USM_TIME"));
}

fn post_checks_and_retain(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let dir = broker.dir.path();
    let kayak = write_config(dir, "kayak", &broker.url(), "max_acceleration = 0\nmax_deceleration = 0\nnode_report_local = true\nplatform_type = \"kayak\"\nplatform_length = 3.5\nlat_origin = 42.358456\nlon_origin = -71.087589");
    let uuv = write_config(dir, "uuv", &broker.url(), "");
    let w = Watcher::new(broker.port, &[format!("{ROOT}/+/#")]);
    let mut v1 = spawn_vehicle(&kayak, &[]);
    let _v2 = spawn_vehicle(&uuv, &[]);
    online(&w, "kayak");
    online(&w, "uuv");

    // A typo in the vehicle name: a warning naming who is online.
    let (ok, _, err) = tool(broker.port, &["post", "kayk", "DESIRED_THRUST", "60"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("no vehicle `kayk` is online on this broker (online: kayak, uuv)"),
        "{err}"
    );
    // --no-check: no look-up, no warning.
    let (ok, _, err) = tool(
        broker.port,
        &["post", "kayk", "DESIRED_THRUST", "60", "--no-check"],
    );
    assert!(ok && !err.contains("warning"), "{err}");
    // The right name: no warning.
    let (ok, _, err) = tool(broker.port, &["post", "uuv", "DESIRED_THRUST", "0"]);
    assert!(ok && !err.contains("warning"), "{err}");

    // NODE_REPORT: mission time t (small), USM_TIME the Unix clock.
    let m = w.mark();
    let nr = w
        .wait_after(m, &topic("kayak", "NODE_REPORT"), WAIT, |_| true)
        .expect("NODE_REPORT");
    let json = node_report(&nr.payload);
    let t = json["t"].as_f64().expect("t");
    assert!(
        (0.0..600.0).contains(&t),
        "NODE_REPORT t is mission time: {t}"
    );
    for key in ["thrust_l", "thrust_r", "current_x", "current_y"] {
        assert!(json.get(key).is_some(), "NODE_REPORT lacks {key}: {json}");
    }
    let clock = w
        .wait_num(m, &topic("kayak", "USM_TIME"), WAIT, |_| true)
        .expect("USM_TIME");
    assert!(clock > 1.6e9, "USM_TIME is the Unix clock: {clock}");
    // NODE_REPORT_LOCAL: MOOS's string, TIME = the vehicle clock
    let local = w
        .wait_after(m, &topic("kayak", "NODE_REPORT_LOCAL"), WAIT, |_| true)
        .expect("NODE_REPORT_LOCAL")
        .payload;
    let fields: Vec<(&str, &str)> = local.split(',').filter_map(|f| f.split_once('=')).collect();
    let names: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        names,
        ["NAME", "X", "Y", "SPD", "HDG", "DEP", "LAT", "LON", "TIME", "TYPE", "LENGTH"],
        "{local}"
    );
    let get = |k: &str| fields.iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!(get("NAME"), "kayak");
    assert_eq!(get("TYPE"), "kayak");
    assert_eq!(get("LENGTH"), "3.5");
    let time: f64 = get("TIME").parse().unwrap();
    assert!(
        (time - clock).abs() < 5.0,
        "TIME {time} vs USM_TIME {clock}"
    );
    assert!(
        (get("LAT").parse::<f64>().unwrap() - 42.358456).abs() < 1e-3,
        "{local}"
    );
    // the uuv does not post it (not configured)
    assert!(w.since(0, &topic("uuv", "NODE_REPORT_LOCAL")).is_empty());

    // A live publish with the retain flag is applied by the running vehicle.
    let speed = topic("kayak", "NAV_SPEED");
    let m = w.mark();
    let (ok, _, err) = tool(
        broker.port,
        &["post", "kayak", "DESIRED_THRUST", "100", "--retain"],
    );
    assert!(ok, "{err}");
    w.wait_num(m, &speed, WAIT, |s| s > 1.0)
        .expect("a live retained DESIRED_THRUST was not applied");

    // The stored copy handed over at the next subscription is ignored.
    v1.kill();
    let m = w.mark();
    let v1 = spawn_vehicle(&kayak, &[]);
    w.wait_after(m, &topic("kayak", "status"), WAIT, |p| p == "online")
        .expect("kayak back online");
    assert!(
        v1.wait_log("retained command ignored", WAIT),
        "the vehicle did not report the stored retained command:\n{}",
        v1.log()
    );
    let m2 = w.mark();
    // 1.5 s of the vehicle's clock (a loaded machine may give it less in
    // 1.5 s of wall-clock time).
    w.wait_clock("kayak", m2, 1.5);
    let speeds: Vec<f64> = w
        .since(m2, &speed)
        .iter()
        .filter_map(|m| m.payload.parse().ok())
        .collect();
    assert!(speeds.len() > 5, "{speeds:?}");
    assert!(
        speeds.iter().all(|s| *s == 0.0),
        "stored retained thrust applied: {speeds:?}"
    );
}

#[test]
fn post_warns_about_offline_vehicles_and_retain_is_described_truly_mosquitto() {
    post_checks_and_retain(BrokerKind::Mosquitto);
}

#[test]
fn post_warns_about_offline_vehicles_and_retain_is_described_truly_embedded() {
    post_checks_and_retain(BrokerKind::Embedded);
}

/// `--once` on a variable posted only on change waits past 10 s for it.
#[test]
fn watch_once_waits_for_an_event_only_variable() {
    let Some(broker) = Broker::start(BrokerKind::Embedded) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let w = Watcher::vehicle(broker.port, "alpha");
    let _v = spawn_vehicle(&cfg, &[]);
    online(&w, "alpha");
    let t0 = Instant::now();
    let mut cmd = Command::new(usim());
    cmd.args(["watch", "alpha", "USM_RESET_COUNT", "--once"])
        .args(["--broker", &broker.url(), "--topic-root", ROOT]);
    let mut watch = Proc::spawn("watch", cmd, broker.dir.path().join("watch.log"));
    assert!(
        watch.wait_log("posted only when it changes", WAIT),
        "{}",
        watch.log()
    );
    // past the old 10 s limit, still waiting
    std::thread::sleep(Duration::from_secs(11).saturating_sub(t0.elapsed()));
    assert!(
        watch.wait_exit(Duration::from_millis(10)).is_none(),
        "{}",
        watch.log()
    );
    w.post("alpha", "USM_RESET", "x=1, y=2, heading=0, speed=0");
    let status = watch.wait_exit(WAIT).expect("watch did not exit");
    assert!(status.success(), "{}", watch.log());
    assert!(watch.log().contains("USM_RESET_COUNT 1"), "{}", watch.log());
}
