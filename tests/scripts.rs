//! The scripts the README and docs/mqtt.md show, run for real:
//! `scripts/launch_fleet.sh` removes the temporary directory it made, and
//! `scripts/paho_drive.py` uses paho's current callback API (no
//! DeprecationWarning, which `-W error` turns into a failure), and
//! `scripts/time_warp_pid.sh` measures a PID vehicle (a short smoke run
//! with the test's own binary).
mod mqtt_util;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mqtt_util::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn launch_fleet_removes_its_temporary_directory() {
    let Some(broker) = Broker::start(BrokerKind::Embedded) else {
        return;
    };
    let w = Watcher::new(broker.port, &["usim/+/status".to_string()]);
    let log = broker.dir.path().join("fleet.log");
    let out = std::fs::File::create(&log).unwrap();
    let mut child = Command::new("bash")
        .arg(root().join("scripts/launch_fleet.sh"))
        .args(["-b", &broker.url(), "2"])
        .env("USIM", usim())
        .env_remove("FLEET_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(out))
        .process_group(0)
        .spawn()
        .unwrap();
    for v in ["v001", "v002"] {
        w.wait_after(
            0,
            &format!("usim/{v}/status"),
            Duration::from_secs(20),
            |p| p == "online",
        )
        .unwrap_or_else(|| {
            panic!(
                "{v} not online:\n{}",
                std::fs::read_to_string(&log).unwrap()
            )
        });
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let dir = text
        .lines()
        .find_map(|l| l.strip_prefix("fleet of 2 vehicles, configs in "))
        .unwrap_or_else(|| panic!("no directory named:\n{text}"))
        .trim()
        .to_string();
    assert!(PathBuf::from(&dir).join("v001.toml").is_file(), "{dir}");
    // Stop the fleet as Ctrl-C would: a signal to the whole process group.
    unsafe {
        libc::killpg(child.id() as libc::pid_t, libc::SIGINT);
    }
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(20) {
            unsafe {
                libc::killpg(child.id() as libc::pid_t, libc::SIGKILL);
            }
            let _ = child.wait();
            panic!(
                "fleet did not stop:\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "{status}:\n{}",
        std::fs::read_to_string(&log).unwrap()
    );
    assert!(!PathBuf::from(&dir).exists(), "{dir} left behind");
}

fn has_paho() -> bool {
    Command::new("python3")
        .args(["-c", "import paho.mqtt.client"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn paho_drive_uses_the_current_callback_api() {
    if !has_paho() {
        assert!(
            std::env::var_os("USIM_REQUIRE_PAHO").is_none(),
            "USIM_REQUIRE_PAHO is set but paho-mqtt is not installed"
        );
        eprintln!("SKIPPED: paho-mqtt is not installed (pip install paho-mqtt)");
        return;
    }
    let Some(broker) = Broker::start(BrokerKind::Embedded) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "alpha", &broker.url(), "");
    let w = Watcher::vehicle(broker.port, "alpha");
    let _v = spawn_vehicle(&cfg, &[]);
    w.wait_after(0, &topic("alpha", "status"), Duration::from_secs(30), |p| {
        p == "online"
    })
    .expect("online");
    let m = w.mark();
    let out = Command::new("python3")
        .args(["-W", "error::DeprecationWarning"])
        .arg(root().join("scripts/paho_drive.py"))
        .args(["alpha", "--broker", &broker.url(), "--topic-root", ROOT])
        .args(["--laps", "1", "--duration", "2", "--rate", "5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{err}\n{text}");
    assert!(!err.contains("DeprecationWarning"), "{err}");
    assert!(text.contains("driving alpha around"), "{text}");
    // it really drove: thrust and rudder arrived at the vehicle
    let thrust = w.wait_num(
        m,
        &topic("alpha", "NAV_SPEED"),
        Duration::from_secs(30),
        |s| s > 0.0,
    );
    assert!(thrust.is_some(), "the vehicle never moved:\n{text}");
}

/// `scripts/time_warp_pid.sh` end to end, shortened: one warp, one round,
/// 3 wall seconds, the debug binary. The figure itself is the README's
/// (release build); here the script must run, read the `--stats` file and
/// NAV_HEADING, and print its table.
#[test]
fn time_warp_pid_script_runs_and_reports() {
    let has_python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_python {
        eprintln!("python3 missing: time_warp_pid.sh not run");
        return;
    }
    let out = Command::new("bash")
        .arg(root().join("scripts/time_warp_pid.sh"))
        .args(["3", "1000"])
        .env("USIM", usim())
        .env("ROUNDS", "1")
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // warp round ticks p50_ms p99_ms max_ms skipped on_course holds
    let row: Vec<&str> = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("1000"))
        .unwrap_or_else(|| panic!("no row for warp 1000:\n{text}"))
        .split_whitespace()
        .collect();
    assert_eq!(row.len(), 9, "{text}");
    let ticks: u64 = row[2].parse().unwrap();
    assert!(ticks > 100, "the vehicle ran only {ticks} ticks:\n{text}");
    let p99: f64 = row[4].parse().unwrap();
    assert!(p99.is_finite() && p99 >= 0.0, "{text}");
    // two headings were read back (the first second has none to check)
    assert!(row[7].ends_with("/2"), "NAV_HEADING not read: {text}");
    assert!(text.contains("warp 1000: p99 median"), "{text}");
}
