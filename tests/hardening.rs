//! Regression tests of issue 13 (hardening) that need no broker: each one
//! failed before its fix; its doc comment says what it caught.
use std::path::Path;

use usim::command::parse_text;
use usim::model::{Params, Vehicle};

fn vehicle() -> Vehicle {
    Vehicle::from_params(Params::default(), 0.0)
}

fn send(v: &mut Vehicle, var: &str, payload: &str, t: f64) -> Result<(), String> {
    let cmd = parse_text(var, payload).map_err(|e| e.to_string())?;
    v.handle_command(cmd, t).map_err(|e| e.to_string())
}

/// Caught: `DESIRED_THRUST 0` then `SET ["DESIRED_THRUST","ClearAll",[]]` in
/// one iteration brought the thrust back to its earlier value (50): the
/// plain value was only a pending command that the ClearAll removed.
#[test]
fn plain_setpoint_then_clearall_keeps_the_plain_value() {
    let mut v = vehicle();
    send(&mut v, "DESIRED_THRUST", "50", 0.0).unwrap();
    v.step(0.1);
    v.step(0.2);
    assert_eq!(v.snapshot().thrust, 50.0);
    send(&mut v, "DESIRED_THRUST", "0", 0.25).unwrap();
    send(&mut v, "SET", r#"["DESIRED_THRUST","ClearAll",[]]"#, 0.25).unwrap();
    v.step(0.3);
    assert_eq!(v.snapshot().thrust, 0.0);
    v.step(0.4);
    assert_eq!(v.snapshot().thrust, 0.0);
    // And the other way round: a SET list after the plain value is followed.
    send(&mut v, "DESIRED_THRUST", "10", 0.45).unwrap();
    send(
        &mut v,
        "SET",
        r#"["DESIRED_THRUST","Merge",[[30, 0.5]]]"#,
        0.45,
    )
    .unwrap();
    v.step(0.5);
    assert_eq!(v.snapshot().thrust, 30.0);
}

/// Caught: `SET` Merge messages with distinct future times grew the pending
/// list without limit (6 → 182 MB in 60 s). Now the 10,001st pending
/// command is refused with a reason, and ClearAll empties the list.
#[test]
fn pending_timed_commands_are_capped_and_cleared() {
    let mut v = vehicle();
    for i in 0..100 {
        let list: Vec<String> = (0..100)
            .map(|j| format!("[1, {}]", 1000 + i * 100 + j))
            .collect();
        let json = format!(r#"["DESIRED_RUDDER","Merge",[{}]]"#, list.join(","));
        send(&mut v, "SET", &json, 0.0).unwrap();
    }
    assert_eq!(v.pending_timed_commands(), 10_000);
    let e = send(
        &mut v,
        "SET",
        r#"["DESIRED_RUDDER","Merge",[[1, 50000]]]"#,
        0.0,
    )
    .unwrap_err();
    assert!(e.contains("limit is 10000"), "{e}");
    assert!(e.contains("max_pending"), "{e}");
    assert_eq!(v.pending_timed_commands(), 10_000);
    // replacing an existing time does not grow the list: accepted
    send(
        &mut v,
        "SET",
        r#"["DESIRED_RUDDER","Merge",[[2, 1000]]]"#,
        0.0,
    )
    .unwrap();
    send(&mut v, "SET", r#"["DESIRED_RUDDER","ClearAll",[]]"#, 0.0).unwrap();
    assert_eq!(v.pending_timed_commands(), 0);
}

/// The cap is configurable per actuator.
#[test]
fn max_pending_is_a_config_key() {
    let cfg = usim::config::parse_vehicle(
        Path::new("v.toml"),
        "name = \"a\"\n[actuators.DESIRED_THRUST]\nmax_pending = 3\n",
    )
    .unwrap();
    let mut v = Vehicle::new(&cfg, 0.0);
    let four = r#"["DESIRED_THRUST","Merge",[[1,1],[2,2],[3,3],[4,4]]]"#;
    assert!(send(&mut v, "SET", four, 0.0).is_err());
    let three = r#"["DESIRED_THRUST","Merge",[[1,1],[2,2],[3,3]]]"#;
    send(&mut v, "SET", three, 0.0).unwrap();
    let e = usim::config::parse_vehicle(
        Path::new("v.toml"),
        "name = \"a\"\n[actuators.DESIRED_THRUST]\nmax_pending = 0\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("max_pending"), "{e}");
}

fn all_finite(v: &Vehicle) -> bool {
    let s = v.snapshot();
    [
        s.x, s.y, s.speed, s.heading, s.depth, s.pitch, s.yaw, s.sog, s.hog, s.drift_x, s.drift_y,
        s.rudder, s.thrust, s.elevator, s.gt_x, s.gt_y,
    ]
    .iter()
    .all(|x| x.is_finite())
        && v.publications().iter().all(|p| match &p.value {
            usim::model::PubValue::Number(x) => x.is_finite(),
            usim::model::PubValue::Text(_) => true,
        })
}

fn geo_vehicle() -> Vehicle {
    let cfg = usim::config::parse_vehicle(
        Path::new("v.toml"),
        "name = \"a\"\nlat_origin = 43.825\nlon_origin = -70.33\n",
    )
    .unwrap();
    Vehicle::new(&cfg, 0.0)
}

/// Caught: `USM_RESET x=1e10` and `DRIFT_X 1e20` gave NaN lat/lon,
/// `speed=1e308` published inf, `x=1e308,y=1e308` froze the vehicle (the
/// finiteness check overflowed on x+y). Each is now refused at the message
/// with the bound in the reason, and the vehicle keeps moving.
#[test]
fn huge_numbers_are_refused_at_the_message() {
    let cases = [
        ("USM_RESET", "x=1e10", "x=1e10 is outside"),
        ("USM_RESET", "speed=1e308", "speed="),
        ("USM_RESET", "x=1e308,y=1e308", "x="),
        ("USM_RESET", "depth=-1e6", "depth="),
        ("DRIFT_X", "1e20", "outside the accepted range ±100 m/s"),
        ("DRIFT_Y", "-101", "±100 m/s"),
        ("DRIFT_VECTOR", "90,1000", "drift would be"),
        ("DESIRED_THRUST", "1e300", "±10000"),
        ("BUOYANCY_RATE", "1e9", "m/s"),
        ("ROTATE_SPEED", "1e9", "degrees/s"),
        ("WATER_DEPTH", "1e9", "±12000 m"),
    ];
    for (var, payload, want) in cases {
        let mut v = geo_vehicle();
        send(&mut v, "DESIRED_THRUST", "50", 0.0).unwrap();
        let e = send(&mut v, var, payload, 0.0).unwrap_err();
        assert!(e.contains(want), "{var}={payload}: {e}");
        for k in 1..=20 {
            v.step(k as f64 * 0.25);
            assert!(all_finite(&v), "{var}={payload}: non-finite after step {k}");
        }
        assert_eq!(v.skipped_steps(), 0, "{var}={payload}");
        assert!(v.snapshot().y > 1.0, "{var}={payload}: the vehicle froze");
        assert!(v.snapshot().lat.is_finite(), "{var}={payload}");
    }
    // A drift that grows by steps hits the bound too, and keeps the old one.
    let mut v = vehicle();
    send(&mut v, "DRIFT_X", "90", 0.0).unwrap();
    let e = send(&mut v, "DRIFT_VECTOR_MULT", "2", 0.0).unwrap_err();
    assert!(e.contains("drift would be"), "{e}");
    assert_eq!(v.drift().0, 90.0);
    // The bounds themselves are accepted.
    let mut v = geo_vehicle();
    send(
        &mut v,
        "USM_RESET",
        "x=1e7,y=-1e7,speed=100,depth=12000",
        0.0,
    )
    .unwrap();
    v.step(0.25);
    assert!(all_finite(&v));
}

/// Caught: `USM_RESET heading=-1e-14` stored 360 (−1e-14 + 360 rounds to
/// 360), outside [0, 360).
#[test]
fn heading_stays_below_360() {
    let mut v = vehicle();
    send(&mut v, "USM_RESET", "heading=-1e-14", 0.0).unwrap();
    v.step(0.25);
    let h = v.snapshot().heading;
    assert!((0.0..360.0).contains(&h), "{h}");
    assert_eq!(usim::model::angles::angle360(-1e-14), 0.0);
}

/// Caught: mission loading was quadratic in the number of posts (each
/// post's line number counted the newlines from the start: 16,000 posts
/// took 3 s, 32,000 took 16 s). 40,000 posts now load in well under the
/// generous bound (about a second in a debug build).
#[test]
fn many_posts_load_in_linear_time() {
    let mut text = String::from("[mission]\ndt = 0.1\nsteps = 10\n[vehicle]\nname = \"m\"\n");
    for i in 0..40_000 {
        text.push_str(&format!(
            "[[post]]\nt = {}\nvar = \"DESIRED_RUDDER\"\nvalue = {}\n",
            i as f64 * 0.01,
            i % 30
        ));
    }
    let t0 = std::time::Instant::now();
    let m = usim::mission::parse(Path::new("m.toml"), &text).unwrap();
    let took = t0.elapsed();
    assert_eq!(m.posts.len(), 40_000);
    assert_eq!(
        m.posts[39_999].line,
        5 + 39_999 * 4 + 4,
        "line of the last value"
    );
    assert!(took.as_secs_f64() < 20.0, "took {took:?}");
}

/// Caught: `dt_pattern = [0.001]` with `duration = 1e8` looped ~1e11 times
/// to count the steps before writing anything. The count is now computed.
#[test]
fn step_count_of_a_long_pattern_is_computed() {
    let m = usim::mission::parse(
        Path::new("m.toml"),
        "[mission]\ndt_pattern = [0.001]\nduration = 1e8\n[vehicle]\nname = \"m\"\n",
    )
    .unwrap();
    // k · 0.001 >= 1e8 first at k = 1e11
    assert_eq!(m.steps, 100_000_000_000);
    let m = usim::mission::parse(
        Path::new("m.toml"),
        "[mission]\ndt_pattern = [0.1, 0.25]\nduration = 1000\n[vehicle]\nname = \"m\"\n",
    )
    .unwrap();
    // 2857 cycles of 0.35 s = 999.95 s, then one 0.1 s step: 2 * 2857 + 1
    assert_eq!(m.steps, 5715);
    for bad in [
        "[mission]\ndt_pattern = [1e-300]\nduration = 1e300\n[vehicle]\n",
        "[mission]\ndt = 0.1\nsteps = 9223372036854775807\n[vehicle]\n",
    ] {
        assert!(
            usim::mission::parse(Path::new("m.toml"), bad).is_err(),
            "{bad}"
        );
    }
}

/// Caught: a FIFO given as a vehicle file hung, and `/dev/zero` was read
/// until memory ran out. Only regular files are read, up to 64 MiB.
#[test]
fn fifo_and_devices_are_refused_as_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("vehicle.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for path in [fifo.as_path(), Path::new("/dev/zero")] {
        let e = usim::config::load_vehicle(path).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = usim::mission::load(path).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
    // ... also when named inside a config (current field) or a mission.
    let cfg = dir.path().join("v.toml");
    std::fs::write(&cfg, "name = \"v\"\ncurrent_field = \"/dev/zero\"\n").unwrap();
    let e = usim::config::load_vehicle(&cfg).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
    let m = dir.path().join("m.toml");
    std::fs::write(&m, "[mission]\nsteps = 1\nvehicle = \"vehicle.toml\"\n").unwrap();
    let e = usim::mission::load(&m).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

/// Caught: error messages echoed values whole (one printed 100 KB).
#[test]
fn echoed_values_are_clipped() {
    let big = "9".repeat(100_000);
    let text = format!(
        "[mission]\nsteps = 1\n[vehicle]\n[[post]]\nt = 0\nvar = \"DESIRED_THRUST\"\nvalue = \"{big}x\"\n"
    );
    let e = usim::mission::parse(Path::new("m.toml"), &text)
        .unwrap_err()
        .to_string();
    assert!(e.len() < 2_000, "{} bytes", e.len());
    assert!(e.contains("more characters"), "{e}");
    let mut v = vehicle();
    let e = send(&mut v, "USM_RESET", &format!("x=1,{big}=2"), 0.0).unwrap_err();
    assert!(e.len() < 1_500, "{} bytes", e.len());
    let e = send(&mut v, "DESIRED_THRUST", &big, 0.0).unwrap_err();
    assert!(e.len() < 1_500, "{} bytes", e.len());
}

/// A `MakeWriter` that keeps what tracing writes.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Caught: a vehicle whose every step overflowed logged one warning per
/// step (36,000 lines), even under `-q`. Now the 1st, 10th, 100th, …
/// occurrences are logged with the number suppressed.
#[test]
fn skipped_step_warnings_are_rate_limited() {
    let cfg = usim::config::parse_vehicle(
        Path::new("v.toml"),
        // A config is not bounded like a message: a start at the edge of
        // f64 whose every step overflows.
        "name = \"a\"\nstart_x = 1.7976931348623157e308\nstart_speed = 1e300\nstart_heading = 90\n",
    )
    .unwrap();
    let buf = Captured::default();
    let sink = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let mut v = Vehicle::new(&cfg, 0.0);
    tracing::subscriber::with_default(subscriber, || {
        for k in 1..=1000 {
            v.step(k as f64 * 0.25);
        }
    });
    assert!(v.skipped_steps() >= 990, "{} skipped", v.skipped_steps());
    let log = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines = log.lines().filter(|l| l.contains("step skipped")).count();
    assert!((1..=4).contains(&lines), "{lines} lines:\n{log}");
    assert!(log.contains("warnings suppressed"), "{log}");
    assert!(all_finite(&v));
}
