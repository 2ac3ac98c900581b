//! Regression tests of issue 13 (hardening) that need no broker: each one
//! failed before its fix; its doc comment says what it caught.
use std::path::Path;

use usim::command::{parse_text, Command};
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
    send(&mut v, "SET", r#"["DESIRED_THRUST","Merge",[[30, 0.5]]]"#, 0.45).unwrap();
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
    let e = send(&mut v, "SET", r#"["DESIRED_RUDDER","Merge",[[1, 50000]]]"#, 0.0).unwrap_err();
    assert!(e.contains("limit is 10000"), "{e}");
    assert_eq!(v.pending_timed_commands(), 10_000);
    // replacing an existing time does not grow the list: accepted
    send(&mut v, "SET", r#"["DESIRED_RUDDER","Merge",[[2, 1000]]]"#, 0.0).unwrap();
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
    let _ = Command::DesiredThrust(0.0);
}
