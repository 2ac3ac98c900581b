//! Live runs against the embedded broker (`usim broker`, rumqttd) on a free
//! loopback port, plus the launcher and tools: `usim up`, `usim post`,
//! `usim watch`, and the message given when no broker is running.
mod mqtt_util;

use std::process::Command;
use std::time::Duration;

use mqtt_util::{scenarios, BrokerKind::Embedded, *};

#[test]
fn thrust_reset_drift_bad_payloads_and_clean_exit() {
    scenarios::single_vehicle(Embedded);
}

#[test]
fn two_vehicles_do_not_hear_each_other() {
    scenarios::two_vehicles_are_isolated(Embedded);
}

#[test]
fn broker_restart_reconnects_with_clock_intact() {
    scenarios::broker_restart(Embedded);
}

#[test]
fn killed_vehicle_goes_offline() {
    scenarios::killed_vehicle_goes_offline(Embedded);
}

/// `usim run` with no broker says what to do, and keeps retrying.
#[test]
fn no_broker_is_reported_with_a_remedy() {
    let dir = tempfile::tempdir().unwrap();
    // Refused for the whole test (a released port could become another
    // test's broker).
    let closed = refusing_port();
    let url = format!("mqtt://127.0.0.1:{}", closed.port);
    let cfg = write_config(dir.path(), "alpha", &url, "");
    let mut v = spawn_vehicle(&cfg, &[]);
    assert!(
        v.wait_log("usim broker", START),
        "no hint to start a broker:\n{}",
        v.log()
    );
    assert!(v.log().contains(&url), "the URL tried is not named");
    assert!(
        v.wait_exit(Duration::ZERO).is_none(),
        "it should keep retrying"
    );
    let status = v
        .terminate(Duration::from_secs(10))
        .expect("exit on SIGTERM");
    assert!(status.success());
}

fn tool(port: u16, args: &[&str]) -> std::process::Output {
    let url = format!("mqtt://127.0.0.1:{port}");
    let mut cmd = Command::new(usim());
    cmd.args(args)
        .args(["--broker", &url, "--topic-root", ROOT])
        .env("NO_COLOR", "1");
    let out = cmd.output().expect("run usim tool");
    assert!(
        out.status.success(),
        "usim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `usim up` runs a broker and two vehicles; `usim post` drives one,
/// `usim watch --once/--count` reads them; SIGTERM stops everything and
/// each vehicle says offline.
#[test]
fn up_post_watch_and_clean_stop() {
    let dir = tempfile::tempdir().unwrap();
    // `usim up` binds a port itself and logs it: the configs' broker URL
    // is replaced by the embedded broker's.
    let unused = "mqtt://127.0.0.1:1";
    let a = write_config(dir.path(), "alpha", unused, "");
    let b = write_config(dir.path(), "bravo", unused, "");
    let mut cmd = Command::new(usim());
    cmd.arg("up")
        .arg(&a)
        .arg(&b)
        .args(["--bind", "127.0.0.1:0"]);
    let mut up = Proc::spawn("usim up", cmd, dir.path().join("up.log"));
    let port = up
        .wait_listen_port(START)
        .unwrap_or_else(|e| panic!("no broker from usim up: {e}"));
    let url = format!("mqtt://127.0.0.1:{port}");
    let w = Watcher::new(port, &[format!("{ROOT}/+/status")]);
    for v in ["alpha", "bravo"] {
        w.wait_after(0, &topic(v, "status"), Duration::from_secs(30), |p| {
            p == "online"
        })
        .unwrap_or_else(|| panic!("{v} not online:\n{}", up.log()));
    }
    // Logs are prefixed with the vehicle name.
    assert!(
        up.wait_log("alpha | ", Duration::from_secs(30)),
        "{}",
        up.log()
    );

    let once = tool(
        port,
        &[
            "watch",
            "bravo",
            "NAV_X",
            "NAV_SPEED",
            "--once",
            "--timeout",
            "10",
        ],
    );
    let text = String::from_utf8_lossy(&once.stdout);
    assert!(
        text.contains("NAV_X 0\n") && text.contains("NAV_SPEED 0\n"),
        "{text}"
    );

    tool(port, &["post", "alpha", "DESIRED_THRUST", "80"]);
    let out = tool(
        port,
        &[
            "watch",
            "alpha",
            "NAV_SPEED",
            "--count",
            "40",
            "--timeout",
            "10",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let last: f64 = text
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("NAV_SPEED "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("unexpected watch output {text:?}"));
    assert!(last > 1.0, "alpha did not speed up: {text}");

    // A payload the vehicle would drop is refused by post (exit 2).
    let bad = Command::new(usim())
        .args(["post", "alpha", "DESIRED_THRUST", "fast", "--broker", &url])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--no-check"));
    // A variable usim does not read is refused for a usim vehicle (its
    // retained model is classic/v22; only a bridged MOOS vehicle's `moos`
    // takes any variable, tests/view_browser.rs).
    let bad = Command::new(usim())
        .args(["post", "alpha", "DEPLOY", "true", "--broker", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success(), "{err}");
    assert!(
        err.contains("--no-check") && err.contains("DEPLOY"),
        "{err}"
    );

    let m = w.mark();
    let status = up
        .terminate(Duration::from_secs(15))
        .expect("usim up did not stop");
    assert!(
        status.success(),
        "usim up exit status {status}:\n{}",
        up.log()
    );
    // Both vehicles said goodbye before the broker went away.
    for v in ["alpha", "bravo"] {
        assert!(
            w.since(m, &topic(v, "status"))
                .iter()
                .any(|m| m.payload == "offline"),
            "{v} did not publish offline:\n{}",
            up.log()
        );
    }
}

#[test]
fn flood_is_bounded_and_last_setpoint_wins() {
    scenarios::flood_is_bounded(Embedded);
}

/// DESIRED_HEADING steers a live V22 vehicle through its embedded PID.
#[test]
fn embedded_pid_turns_to_desired_heading() {
    scenarios::pid_turns_to_desired_heading(Embedded);
}
