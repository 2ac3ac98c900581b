//! Live regression tests of issue 13 against a real mosquitto started by
//! each test on a free loopback port (SKIPPED without mosquitto; CI has it).
//! Each failed before its fix; the doc comment says what it caught.
mod mqtt_util;

use std::process::Command;
use std::time::{Duration, Instant};

use mqtt_util::*;

/// Deadline for anything that should take a tick or two (returned from as
/// soon as it happens): generous, as CI runs many tests on two cores.
const WAIT: Duration = Duration::from_secs(30);

fn wait_online(w: &Watcher, vehicle: &str) {
    w.wait_after(0, &topic(vehicle, "status"), WAIT, |p| p == "online")
        .unwrap_or_else(|| panic!("{vehicle}: no retained status online"));
    w.wait_num(0, &topic(vehicle, "USM_TIME"), WAIT, |_| true)
        .unwrap_or_else(|| panic!("{vehicle}: no USM_TIME"));
}

/// Caught: a payload over 32 KiB disconnected the vehicle; a *retained*
/// oversize message on a command topic then came back on every
/// reconnection (0 of 50 USM_TIME in 5 s, ~65 offline flips). Now it is
/// dropped with one log line and the connection stays up.
#[test]
fn oversize_payloads_are_dropped_without_disconnecting() {
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let w = Watcher::vehicle(broker.port, "alpha");
    // Retained before the vehicle starts, so it arrives on subscription.
    w.publish_retained(&topic("alpha", "DESIRED_RUDDER"), vec![b'7'; 100_000]);
    // The broker has it once it comes back to the watcher.
    w.wait_after(0, &topic("alpha", "DESIRED_RUDDER"), WAIT, |_| true)
        .expect("retained message stored");
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let stats = broker.dir.path().join("stats.json");
    let mut v = spawn_vehicle(&cfg, &["--stats", stats.to_str().unwrap()]);
    wait_online(&w, "alpha");
    w.post("alpha", "DESIRED_THRUST", vec![b'1'; 200_000]);
    std::thread::sleep(Duration::from_millis(300));
    let m = w.mark();
    // 2 s of the vehicle's clock (not of wall-clock time, which a loaded
    // machine may not give it).
    let end = w.wait_clock("alpha", m, 2.0);
    let ticks = w.count_between(m, end, &topic("alpha", "USM_TIME"));
    assert!(
        ticks >= 20,
        "only {ticks} USM_TIME in 2 s at 20 Hz:\n{}",
        v.log()
    );
    let offline = w
        .since(0, &topic("alpha", "status"))
        .iter()
        .filter(|m| m.payload == "offline")
        .count();
    assert_eq!(offline, 0, "status flipped offline:\n{}", v.log());
    // Still obeys commands.
    let m = w.mark();
    w.post("alpha", "DESIRED_THRUST", "100");
    w.wait_num(m, &topic("alpha", "NAV_SPEED"), WAIT, |s| s > 0.0)
        .unwrap_or_else(|| panic!("no speed after the oversize payloads:\n{}", v.log()));
    v.terminate(WAIT).expect("exits on SIGTERM");
    let log = v.log();
    assert_eq!(
        log.matches("max_payload").count(),
        2,
        "one log line per oversize message:\n{log}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(s["connections"], 1, "reconnected: {s}");
}

/// Caught: two vehicles with one name fought for the client id forever
/// (~100 offline flips in 8 s, logs said only "connection closed by
/// peer"). Now the second refuses to start with a clear error and the
/// first keeps its connection.
#[test]
fn a_second_vehicle_with_the_same_name_refuses_to_start() {
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let stats = broker.dir.path().join("stats.json");
    let w = Watcher::vehicle(broker.port, "alpha");
    let mut first = spawn_vehicle(&cfg, &["--stats", stats.to_str().unwrap()]);
    wait_online(&w, "alpha");
    let other = broker.dir.path().join("second");
    std::fs::create_dir_all(&other).unwrap();
    let cfg2 = write_config(&other, "alpha", &broker.url(), "");
    let mut second = spawn_vehicle(&cfg2, &[]);
    let status = second.wait_exit(WAIT).expect("the second vehicle exits");
    assert!(!status.success());
    let log = second.log();
    assert!(log.contains("already running"), "{log}");
    let m = w.mark();
    let end = w.wait_clock("alpha", m, 0.5);
    assert!(w.count_between(m, end, &topic("alpha", "USM_TIME")) >= 5);
    first.terminate(WAIT).expect("exits");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(s["connections"], 1, "the first lost its connection: {s}");
}

/// Caught: `--name "a b"` (spaces, tabs, control characters) was accepted
/// on the command line but refused in a config. One rule for both now.
#[test]
fn names_follow_one_rule_on_the_command_line_and_in_configs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "alpha", "mqtt://127.0.0.1:1", "");
    for bad in ["a b", "a\tb", "a\u{1b}[31m", ""] {
        let out = Command::new(usim())
            .args(["run", cfg.to_str().unwrap(), "--name", bad])
            .output()
            .unwrap();
        assert!(!out.status.success(), "--name {bad:?} accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("vehicle name"), "{bad:?}: {err}");
        let text = format!("name = {}\n", toml::Value::String(bad.to_string()));
        let e = usim::config::parse_vehicle(std::path::Path::new("v.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("vehicle name"), "{bad:?}: {e}");
    }
}

/// Caught: a broker that accepts the connection but drops the vehicle's
/// publications (an ACL that does not match its name) went unnoticed. The
/// vehicle checks that its own retained status comes back, and says so.
#[test]
fn an_acl_that_drops_the_vehicles_messages_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let acl = dir.path().join("acl");
    // Anonymous clients may read everything but write only under "other".
    std::fs::write(&acl, format!("topic read #\ntopic write {ROOT}/other/#\n")).unwrap();
    let Some(broker) = Broker::start_with(
        BrokerKind::Mosquitto,
        &format!("acl_file {}", acl.display()),
    ) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let mut v = spawn_vehicle(&cfg, &[]);
    assert!(
        v.wait_log("did not deliver this vehicle's own retained status", WAIT),
        "{}",
        v.log()
    );
    v.terminate(WAIT);
}

/// Caught: a broker refusing the connection (here: no anonymous clients)
/// was reported as "is a broker running?".
#[test]
fn a_refused_connection_is_reported_as_refused() {
    let Some(broker) = Broker::start_with(
        BrokerKind::Mosquitto,
        "allow_anonymous false\npassword_file /dev/null",
    ) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let mut v = spawn_vehicle(&cfg, &[]);
    assert!(v.wait_log("refused the connection", WAIT), "{}", v.log());
    assert!(!v.log().contains("Is a broker running"), "{}", v.log());
    v.terminate(WAIT);
}

/// Caught: `usim watch` printed payloads raw, so ANSI/OSC escape sequences
/// in a payload rewrote the user's terminal.
#[test]
fn watch_escapes_control_characters() {
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let w = Watcher::vehicle(broker.port, "alpha");
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{9b}31mred";
    w.publish_retained(&topic("alpha", "NAV_X"), evil);
    // The broker has it once it comes back to the watcher.
    w.wait_after(0, &topic("alpha", "NAV_X"), WAIT, |_| true)
        .expect("retained message stored");
    let t0 = Instant::now();
    let out = Command::new(usim())
        .args([
            "watch",
            "alpha",
            "NAV_X",
            "--once",
            "--timeout",
            "30",
            "--broker",
            &broker.url(),
            "--topic-root",
            ROOT,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // No hang past the timeout (30 s: a deadline a loaded machine meets).
    assert!(t0.elapsed() < Duration::from_secs(40));
    assert!(text.contains("pwned"), "payload not shown: {text:?}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{9b}'),
        "control characters printed raw: {text:?}"
    );
    assert!(text.contains("\\u{1b}]0;pwned"), "{text:?}");
}
