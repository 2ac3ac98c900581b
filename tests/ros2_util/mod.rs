//! Shared helpers of the ROS 2 tests (`tests/ros2_*.rs`). The real peer is
//! ROS 2's own Python client library from PyPI (`ros-rclpy` with Fast DDS,
//! the `ros-*-msgs` packages, plus rosbags and mcap-ros2-support), in a
//! venv of its own (`scripts/ros2_env.sh`), run by `USIM_ROS2_PYTHON`. A
//! missing rclpy makes a test print SKIPPED, unless `USIM_REQUIRE_ROS2` is
//! set (CI), which makes it fail.
//!
//! DDS tests run inside a network namespace with only loopback
//! ([`in_netns_thread`]: `unshare(CLONE_NEWNET)`, root), so that discovery
//! multicast never leaves the machine and tests running at once do not see
//! each other; Fast DDS's shared-memory transport is off in the peers
//! ([`spawn_py`]), so everything goes through that loopback.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The Python interpreter of the ROS 2 venv.
pub fn ros_python() -> String {
    std::env::var("USIM_ROS2_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn required() -> bool {
    std::env::var_os("USIM_REQUIRE_ROS2").is_some()
}

fn skip(test: &str, why: &str) -> bool {
    assert!(!required(), "USIM_REQUIRE_ROS2 is set but {why}");
    eprintln!("SKIPPED {test}: {why}");
    false
}

/// Whether `USIM_ROS2_PYTHON` imports `modules` (comma-separated, e.g.
/// `rclpy,nav_msgs.msg`); `false` means the caller prints nothing more and
/// returns (a failure under `USIM_REQUIRE_ROS2`).
pub fn have_python(test: &str, modules: &str) -> bool {
    let ok = Command::new(ros_python())
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok || skip(
        test,
        &format!("{} cannot import {modules} (run scripts/ros2_env.sh DIR and set USIM_ROS2_PYTHON=DIR/bin/python)", ros_python()),
    )
}

/// Whether a loopback-only network namespace can be made here (`unshare
/// -n` needs root or user namespaces).
pub fn have_netns(test: &str) -> bool {
    let ok = Command::new("unshare")
        .args(["-n", "ip", "link", "set", "lo", "up"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok || skip(
        test,
        "`unshare -n` cannot make a network namespace (run as root)",
    )
}

/// rclpy and a network namespace: what every DDS test needs.
pub fn have_ros2_dds(test: &str) -> bool {
    have_python(test, "rclpy,std_msgs.msg,nav_msgs.msg") && have_netns(test)
}

/// A test script under tests/py.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}

/// Run `cmd` to its end or `timeout` (then it is killed); its output.
pub fn run(mut cmd: Command, timeout: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    let t0 = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if t0.elapsed() > timeout {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("command output")
}

/// Run a ROS 2 peer script (tests/py) with `USIM_ROS2_PYTHON`.
pub fn run_py(name: &str, args: &[&str], timeout: Duration) -> Output {
    let mut cmd = Command::new(ros_python());
    cmd.arg(script(name)).args(args);
    run(cmd, timeout)
}

/// Assert a command passed, printing what it said either way.
pub fn assert_ok(out: &Output, what: &str) -> String {
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    let se = String::from_utf8_lossy(&out.stderr);
    println!("--- {what} stdout ---\n{so}\n--- {what} stderr ---\n{se}");
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{so}\n--- stderr ---\n{se}",
        out.status
    );
    so
}

/// Run `f` on a thread of its own in a fresh network namespace that has
/// only loopback (`unshare(CLONE_NEWNET)` applies to the calling thread:
/// the DDS threads it starts and the processes it spawns live in the
/// namespace too). Needs root ([`have_netns`]).
pub fn in_netns_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let h = std::thread::spawn(move || {
        // SAFETY: unshare only changes this thread's namespaces.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        assert_eq!(
            rc,
            0,
            "unshare(CLONE_NEWNET): {}",
            std::io::Error::last_os_error()
        );
        for args in [
            &["link", "set", "lo", "up"][..],
            &["link", "set", "lo", "multicast", "on"],
            &["route", "add", "224.0.0.0/4", "dev", "lo"],
        ] {
            let ok = Command::new("ip")
                .args(args)
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(ok, "ip {args:?} failed in the new namespace");
        }
        f()
    });
    h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Start a ROS 2 peer script (tests/py) in the background (in the calling
/// thread's network namespace), its output piped.
pub fn spawn_py(name: &str, args: &[&str]) -> std::process::Child {
    Command::new(ros_python())
        .arg(script(name))
        .args(args)
        .env("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")
        .env("ROS_DOMAIN_ID", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the ROS 2 peer")
}

/// Wait for `child` until `deadline`, calling `tick` every 20 ms while it
/// runs (the Rust side publishes from there); kills it at the deadline.
pub fn drive_until_exit(
    mut child: std::process::Child,
    deadline: Duration,
    mut tick: impl FnMut(),
) -> Output {
    let t0 = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if t0.elapsed() > deadline {
            let _ = child.kill();
            break;
        }
        tick();
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("peer output")
}
