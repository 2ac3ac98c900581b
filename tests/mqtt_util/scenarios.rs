//! The live scenarios, run against mosquitto (`tests/mqtt_mosquitto.rs`)
//! and against the embedded broker (`tests/mqtt_embedded.rs`).
use std::time::{Duration, Instant};

use super::*;

/// Generous bound for anything that should take a tick or two: CI shares
/// two cores between several jobs (returned from as soon as it happens).
const WAIT: Duration = Duration::from_secs(30);

/// Wait until `vehicle` is online and publishing; returns its first USM_TIME.
fn wait_online(w: &Watcher, vehicle: &str) -> f64 {
    w.wait_after(0, &topic(vehicle, "status"), WAIT, |p| p == "online")
        .unwrap_or_else(|| panic!("{vehicle}: no retained status online"));
    w.wait_num(0, &topic(vehicle, "USM_TIME"), WAIT, |_| true)
        .unwrap_or_else(|| panic!("{vehicle}: no USM_TIME"))
}

/// Thrust makes the published speed rise; USM_RESET moves the vehicle; a
/// DRIFT_VECTOR_ADD ramp moves it sideways and back to rest; bad payloads
/// are logged and dropped while the vehicle keeps publishing; SIGTERM
/// publishes `offline` and exits cleanly.
pub fn single_vehicle(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let cfg = write_config(
        broker.dir.path(),
        "alpha",
        &broker.url(),
        "max_acceleration = 0.5\nmax_deceleration = 0",
    );
    let w = Watcher::vehicle(broker.port, "alpha");
    let mut v = spawn_vehicle(&cfg, &[]);
    wait_online(&w, "alpha");
    let speed = topic("alpha", "NAV_SPEED");
    let (x, y) = (topic("alpha", "NAV_X"), topic("alpha", "NAV_Y"));
    assert_eq!(w.latest_num(&speed), Some(0.0), "starts at rest");

    // 1. Thrust: the speed rises (acceleration-limited), step by step.
    let m = w.mark();
    w.post("alpha", "DESIRED_THRUST", "100");
    w.wait_num(m, &speed, WAIT, |s| s >= 0.5)
        .expect("NAV_SPEED did not rise to 0.5 m/s after DESIRED_THRUST 100");
    let speeds: Vec<f64> = w
        .since(m, &speed)
        .iter()
        .filter_map(|m| m.payload.parse().ok())
        .collect();
    assert!(
        speeds.windows(2).all(|p| p[1] >= p[0]),
        "speed not monotonic: {speeds:?}"
    );
    assert!(
        speeds.iter().filter(|s| **s > 0.0 && **s < 0.5).count() >= 3,
        "speed should ramp up over several iterations: {speeds:?}"
    );

    // 2. USM_RESET moves the vehicle (heading 90: now it runs east).
    let m = w.mark();
    w.post(
        "alpha",
        "USM_RESET",
        "x=500, y=-300, speed=0, heading=90, depth=0",
    );
    w.wait_num(m, &x, WAIT, |v| (499.0..530.0).contains(&v))
        .expect("USM_RESET did not move NAV_X to 500");
    let y_after = w
        .wait_num(m, &y, WAIT, |v| (v + 300.0).abs() < 5.0)
        .expect("USM_RESET did not move NAV_Y to -300");
    assert!((y_after + 300.0).abs() < 5.0);

    // 3. Drift ramp: at rest, heading north, drift east moves it sideways.
    w.post("alpha", "DESIRED_THRUST", "0");
    let m = w.mark();
    w.post(
        "alpha",
        "USM_RESET",
        "x=0, y=0, speed=0, heading=0, depth=0",
    );
    w.wait_num(m, &x, WAIT, |v| v.abs() < 0.5)
        .expect("second USM_RESET not applied");
    std::thread::sleep(Duration::from_millis(300));
    let m = w.mark();
    for _ in 0..3 {
        w.post("alpha", "DRIFT_VECTOR_ADD", "90, 0.5");
        std::thread::sleep(Duration::from_millis(150));
    }
    let x_moved = w
        .wait_num(m, &x, WAIT, |v| v > 2.0)
        .expect("DRIFT_VECTOR_ADD ramp did not move the vehicle east");
    assert!(x_moved > 2.0);
    let y_now = w.latest_num(&y).expect("NAV_Y");
    assert!(
        y_now.abs() < 0.5,
        "drift east should not move north: y = {y_now}"
    );
    // Ramp down: back to no drift, the vehicle stops.
    for _ in 0..3 {
        w.post("alpha", "DRIFT_VECTOR_ADD", "270, 0.5");
        std::thread::sleep(Duration::from_millis(150));
    }
    let summary = topic("alpha", "USM_DRIFT_SUMMARY");
    let zero = w
        .wait_mark_after(m, &summary, WAIT, |p| {
            p.contains("mag=0,") || p.contains("mag=0.0")
        })
        .unwrap_or_else(|| panic!("drift did not return to 0: {:?}", w.latest(&summary)));
    // Positions published after the drift was back to 0 (not the latest
    // at some wall-clock moment: on a loaded machine that may still be
    // one from before), from the iteration after the next, half a second
    // of vehicle time apart.
    let next = w.wait_mark_after(zero, &x, WAIT, |_| true).expect("NAV_X");
    let x1 = w.wait_num(next, &x, WAIT, |_| true).expect("NAV_X");
    let t1 = w.latest_num(&topic("alpha", "USM_TIME")).expect("USM_TIME");
    w.wait_num(zero, &topic("alpha", "USM_TIME"), WAIT, |t| t >= t1 + 0.5)
        .expect("USM_TIME goes on");
    let x2 = w.latest_num(&x).expect("NAV_X");
    assert!(
        (x2 - x1).abs() < 0.01,
        "still drifting after ramp down: {x1} -> {x2}"
    );

    // 4. Bad payloads: dropped, logged with topic, payload and reason; the
    //    state is unchanged and the vehicle keeps publishing.
    let m = w.mark();
    w.post("alpha", "DESIRED_THRUST", "sixty");
    w.post("alpha", "DESIRED_THRUST", "NaN");
    w.post("alpha", "DESIRED_RUDDER", "inf");
    w.post("alpha", "SET", "[\"DESIRED_THRUST\", \"Merge\", [[oops");
    w.post("alpha", "DRIFT_VECTOR_ADD", vec![0xff, 0xfe, 0x00]);
    assert!(
        v.wait_log("payload \"sixty\"", WAIT),
        "bad payload not logged:\n{}",
        v.log()
    );
    assert!(v.log().contains(&topic("alpha", "DESIRED_THRUST")));
    assert!(
        v.wait_log("not UTF-8", WAIT),
        "non-UTF-8 payload not logged"
    );
    let t_before = w.latest_num(&topic("alpha", "USM_TIME")).expect("USM_TIME");
    w.wait_num(m, &topic("alpha", "USM_TIME"), WAIT, |t| t > t_before + 0.5)
        .expect("vehicle stopped publishing after bad payloads");
    let after = w.since(m, &speed);
    assert!(!after.is_empty());
    assert!(
        after.iter().all(|m| m.payload == "0"),
        "a bad payload changed the speed: {:?}",
        after.iter().map(|m| &m.payload).collect::<Vec<_>>()
    );
    let x3 = w.latest_num(&x).expect("NAV_X");
    assert!((x3 - x2).abs() < 0.01, "bad payload moved the vehicle");

    // 5. SIGTERM: retained offline, clean exit.
    let m = w.mark();
    let status = v.terminate(WAIT).expect("vehicle did not exit on SIGTERM");
    assert!(status.success(), "exit status {status}");
    w.wait_after(m, &topic("alpha", "status"), WAIT, |p| p == "offline")
        .expect("no offline status after SIGTERM");
}

/// Two vehicles on one broker do not hear each other's commands.
pub fn two_vehicles_are_isolated(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let dir = broker.dir.path();
    let a = spawn_vehicle(&write_config(dir, "alpha", &broker.url(), ""), &[]);
    let b = spawn_vehicle(&write_config(dir, "bravo", &broker.url(), ""), &[]);
    let w = Watcher::new(broker.port, &[format!("{ROOT}/+/#")]);
    wait_online(&w, "alpha");
    wait_online(&w, "bravo");

    let m = w.mark();
    w.post("alpha", "DESIRED_THRUST", "100");
    w.post("bravo", "USM_RESET", "x=100, y=50, speed=0, heading=0");
    w.wait_num(m, &topic("alpha", "NAV_SPEED"), WAIT, |s| s > 1.0)
        .expect("alpha did not speed up");
    w.wait_num(m, &topic("bravo", "NAV_X"), WAIT, |x| x == 100.0)
        .expect("bravo was not reset");
    // Half a second of both vehicles' time after that (rather than of
    // wall-clock time, which a loaded machine may not give them).
    for n in ["alpha", "bravo"] {
        let t = w.latest_num(&topic(n, "USM_TIME")).expect("USM_TIME");
        w.wait_num(m, &topic(n, "USM_TIME"), WAIT, |x| x >= t + 0.5)
            .expect("USM_TIME goes on");
    }
    let bravo_speeds = w.since(m, &topic("bravo", "NAV_SPEED"));
    assert!(!bravo_speeds.is_empty());
    assert!(
        bravo_speeds.iter().all(|m| m.payload == "0"),
        "bravo heard alpha's thrust"
    );
    let alpha_x = w.since(m, &topic("alpha", "NAV_X"));
    assert!(
        alpha_x.iter().all(|m| m.payload == "0"),
        "alpha heard bravo's reset (heading 0: x must stay 0)"
    );
    drop((a, b));
}

/// The broker is stopped for a few seconds and started again: the vehicle
/// reconnects, subscribes again, republishes `online`, and its clock and
/// iteration count went on meanwhile.
pub fn broker_restart(kind: BrokerKind) {
    let Some(mut broker) = Broker::start(kind) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let mut v = spawn_vehicle(&cfg, &[]);
    let (t1, k1, wall1) = {
        let w = Watcher::vehicle(broker.port, "alpha");
        wait_online(&w, "alpha");
        let m = w.mark();
        let rep = w
            .wait_after(m, &topic("alpha", "NODE_REPORT"), WAIT, |_| true)
            .expect("NODE_REPORT");
        let r = node_report(&rep.payload);
        let t = w
            .wait_num(m, &topic("alpha", "USM_TIME"), WAIT, |_| true)
            .expect("USM_TIME");
        (t, r["k"].as_f64().expect("k"), rep.at)
    };

    broker.stop();
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        v.wait_exit(Duration::ZERO).is_none(),
        "the vehicle exited while the broker was down"
    );
    broker.restart();

    let w = Watcher::vehicle(broker.port, "alpha");
    // Within the backoff (at most 2 s) it is back, online again (retained).
    w.wait_after(0, &topic("alpha", "status"), WAIT, |p| p == "online")
        .expect("vehicle did not reconnect and publish online");
    let rep = w
        .wait_after(w.mark(), &topic("alpha", "NODE_REPORT"), WAIT, |_| true)
        .expect("no NODE_REPORT after the restart");
    let r = node_report(&rep.payload);
    let k2 = r["k"].as_f64().expect("k");
    let wall = rep.at.duration_since(wall1).as_secs_f64();
    let t2 = w
        .wait_num(w.mark(), &topic("alpha", "USM_TIME"), WAIT, |_| true)
        .expect("USM_TIME");
    // Clock intact: it advanced with real time (not reset, not frozen).
    assert!(
        (t2 - t1 - wall).abs() < 1.0,
        "clock jumped: USM_TIME {t1} -> {t2} over {wall:.2} s of real time"
    );
    // The simulation kept iterating while disconnected (20 Hz).
    assert!(
        k2 - k1 >= 0.7 * 20.0 * wall,
        "iterations stalled: k {k1} -> {k2} over {wall:.2} s"
    );
    // Subscriptions renewed: a command after the restart is obeyed.
    let m = w.mark();
    w.post("alpha", "USM_RESET", "x=777, y=0, speed=0, heading=0");
    w.wait_num(m, &topic("alpha", "NAV_X"), WAIT, |x| x == 777.0)
        .expect("command after reconnection ignored: not resubscribed?");
    assert!(
        v.wait_log("reconnected to", WAIT),
        "no reconnection log line"
    );
    v.terminate(WAIT).expect("exit");
}

/// A killed vehicle (SIGKILL, no goodbye) gets `offline` from its last will.
pub fn killed_vehicle_goes_offline(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let mut v = spawn_vehicle(&cfg, &[]);
    let w = Watcher::vehicle(broker.port, "alpha");
    wait_online(&w, "alpha");
    let m = w.mark();
    let t0 = Instant::now();
    v.kill();
    w.wait_after(m, &topic("alpha", "status"), WAIT, |p| p == "offline")
        .expect("no last-will offline after SIGKILL");
    eprintln!(
        "offline {:.0} ms after SIGKILL",
        t0.elapsed().as_secs_f64() * 1e3
    );
    // Retained: a newcomer sees offline too.
    let w2 = Watcher::new(broker.port, &[topic("alpha", "status")]);
    w2.wait_after(0, &topic("alpha", "status"), WAIT, |p| p == "offline")
        .expect("offline is not retained");
}

/// Resident memory of a process, KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// A flood of setpoints, accumulating commands and bad payloads does not
/// grow the vehicle's memory without bound; it keeps iterating and
/// publishing, rate-limits its log, and the last setpoint wins.
pub fn flood_is_bounded(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let v = spawn_vehicle(&cfg, &[]);
    let w = Watcher::vehicle(broker.port, "alpha");
    wait_online(&w, "alpha");
    std::thread::sleep(Duration::from_millis(500));
    let rss0 = rss_kib(v.pid());
    let mut rss_max = rss0;
    let t0 = Instant::now();
    for i in 0..20_000u32 {
        w.post("alpha", "DESIRED_RUDDER", format!("{}", i % 50));
        if i % 4 == 0 {
            w.post("alpha", "DRIFT_VECTOR_ADD", "90, 0");
        }
        if i % 10 == 0 {
            w.post("alpha", "DESIRED_THRUST", "not a number");
        }
        if i % 1000 == 0 {
            rss_max = rss_max.max(rss_kib(v.pid()));
        }
    }
    w.post("alpha", "DESIRED_RUDDER", "0");
    w.post("alpha", "DESIRED_THRUST", "40");
    let m = w.mark();
    let flood_s = t0.elapsed().as_secs_f64();
    // The last values won: thrust 40, rudder 0 → speed 2 m/s, heading steady
    // (once the vehicle worked through the flood: a minute on a loaded machine).
    w.wait_num(m, &topic("alpha", "NAV_SPEED"), START, |s| {
        (s - 2.0).abs() < 1e-9
    })
    .unwrap_or_else(|| panic!("last setpoint lost after the flood:\n{}", v.log()));
    for _ in 0..20 {
        rss_max = rss_max.max(rss_kib(v.pid()));
        std::thread::sleep(Duration::from_millis(50));
    }
    let grown = rss_max.saturating_sub(rss0);
    eprintln!(
        "flood of {} messages in {flood_s:.1} s: RSS {rss0} KiB -> max {rss_max} KiB",
        20_000 + 5_000 + 2_000
    );
    assert!(grown < 6 * 1024, "RSS grew by {grown} KiB under a flood");
    assert!(
        v.log().contains("without a log line"),
        "bad-message log not rate-limited:\n{}",
        v.log().lines().take(40).collect::<Vec<_>>().join("\n")
    );
    let t = w.latest_num(&topic("alpha", "USM_TIME")).expect("USM_TIME");
    w.wait_num(w.mark(), &topic("alpha", "USM_TIME"), WAIT, |x| x > t)
        .expect("vehicle stopped publishing after the flood");
}

/// A uSimMarineV22 vehicle with the embedded PID (docs/v22.md §4), live: `DESIRED_HEADING` 90 (and `DESIRED_SPEED` 2) turn
/// it from north to within 2° of east, where it stays; the PID's rudder is
/// published under its `post_des_rudder` name.
pub fn pid_turns_to_desired_heading(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let extra = "model = \"v22\"\n\
                 max_acceleration = 0.5\n\
                 yaw_pid_kp = 1.5\n\
                 yaw_pid_kd = 2.0\n\
                 maxrudder = 60\n\
                 speed_factor = 20\n\
                 depth_control = false\n\
                 simulation = true\n\
                 post_des_rudder = \"PID_RUDDER\"";
    let cfg = write_config(broker.dir.path(), "pidboat", &broker.url(), extra);
    let w = Watcher::vehicle(broker.port, "pidboat");
    let mut v = spawn_vehicle(&cfg, &["--time-warp", "10"]);
    wait_online(&w, "pidboat");
    let hdg = topic("pidboat", "NAV_HEADING");
    let m = w.mark();
    w.post("pidboat", "DESIRED_SPEED", "2");
    w.post("pidboat", "DESIRED_HEADING", "90");
    w.wait_num(m, &hdg, Duration::from_secs(60), |h| {
        (h - 90.0).abs() <= 2.0
    })
    .unwrap_or_else(|| {
        panic!(
            "NAV_HEADING never came within 2° of 90; last {:?}\n{}",
            w.latest_num(&hdg),
            v.log()
        )
    });
    let rudders: Vec<f64> = w
        .since(m, &topic("pidboat", "PID_RUDDER"))
        .iter()
        .filter_map(|m| m.payload.parse().ok())
        .collect();
    assert!(
        rudders.iter().any(|r| *r > 10.0),
        "the PID should have commanded starboard rudder: {rudders:?}"
    );
    // `usim watch` sees the PID's outputs as one JSON object per iteration.
    let out = w
        .latest(&topic("pidboat", "PID_OUTPUT"))
        .expect("PID_OUTPUT published");
    let out: serde_json::Value = serde_json::from_str(&out).expect("PID_OUTPUT is JSON");
    assert_eq!(
        out["thrust"].as_f64(),
        Some(40.0),
        "speed 2 x factor 20: {out}"
    );
    assert!(
        out["rudder"].is_number() && out["elevator"].is_number(),
        "{out}"
    );
    // 20 s of vehicle time later (2 s of wall-clock time at warp 10 on an
    // idle machine) it still holds the heading.
    let clock = topic("pidboat", "USM_TIME");
    let t = w.latest_num(&clock).expect("USM_TIME");
    w.wait_num(w.mark(), &clock, Duration::from_secs(60), |x| x >= t + 20.0)
        .expect("USM_TIME goes on");
    let m2 = w.mark();
    let held = w
        .wait_num(m2, &hdg, WAIT, |_| true)
        .expect("NAV_HEADING keeps coming");
    assert!((held - 90.0).abs() <= 2.0, "heading drifted to {held}");
    let status = v
        .terminate(Duration::from_secs(10))
        .expect("exit on SIGTERM");
    assert!(status.success());
}
