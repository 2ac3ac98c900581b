//! Scenario tests of the sans-IO vehicle on a virtual clock (docs/model.md §5,
//! §11, §13–§17, §22). Expected numbers come from the spec's formulas.
use usim::command::{parse_text, Command};
use usim::config::parse_vehicle;
use usim::model::{PubValue, Vehicle};

fn vehicle(toml: &str) -> Vehicle {
    let cfg = parse_vehicle(std::path::Path::new("t.toml"), toml).expect("config parses");
    Vehicle::new(&cfg, 0.0)
}

fn send(v: &mut Vehicle, var: &str, text: &str, t: f64) {
    let cmd = parse_text(var, text).expect("parses");
    v.handle_command(cmd, t).expect("accepted");
}

fn published(v: &Vehicle, var: &str) -> Option<PubValue> {
    v.publications()
        .iter()
        .find(|p| p.var == var)
        .map(|p| p.value.clone())
}

fn num(v: &Vehicle, var: &str) -> f64 {
    match published(v, var) {
        Some(PubValue::Number(x)) => x,
        other => panic!("{var}: {other:?}"),
    }
}

#[test]
fn drift_only_moves_by_drift_times_time() {
    let mut v = vehicle("drift_x = 0.5\ndrift_y = -0.25\n");
    for k in 1..=10 {
        v.step(k as f64 * 0.1);
    }
    let n = v.nav();
    assert!((n.x - 0.5).abs() < 1e-12 && (n.y + 0.25).abs() < 1e-12);
    assert_eq!(n.speed, 0.0);
    assert!((n.sog - 0.5f64.hypot(0.25)).abs() < 1e-12);
}

#[test]
fn reset_sets_both_records_and_keeps_the_rest() {
    let mut v = vehicle("drift_x = 1\ndual_state = true\n");
    v.step(1.0);
    send(
        &mut v,
        "USM_RESET",
        "x=200, y=250, speed=0.4, heading=400, depth=10",
        1.0,
    );
    assert_eq!(v.nav().x, 200.0);
    assert_eq!(v.ground_truth().y, 250.0);
    assert_eq!(
        v.nav().heading,
        400.0,
        "stored verbatim until the next step"
    );
    assert_eq!(v.drift(), (1.0, 0.0), "drift is not reset");
    v.step(2.0);
    assert!(v.nav().heading < 360.0 && (v.nav().heading - 40.0).abs() < 1e-9);
    assert_eq!(num(&v, "USM_RESET_COUNT"), 1.0);
}

#[test]
fn bad_reset_is_dropped_and_changes_nothing() {
    let mut v = vehicle("start_pos = \"x=1, y=2\"\n");
    for bad in ["x=5, foo=3", "x=abc", "x=nan", "1,2,3,4,5,6"] {
        let cmd = parse_text("USM_RESET", bad).unwrap();
        let err = v.handle_command(cmd, 0.5).unwrap_err();
        assert_eq!(err.var, "USM_RESET");
        assert_eq!((v.nav().x, v.nav().y), (1.0, 2.0), "{bad}");
    }
}

#[test]
fn dual_state_nav_without_drift_gt_with_drift() {
    let mut v = vehicle("dual_state = true\ndrift_vector = \"90, 1\"\nstart_speed = 1\nmax_deceleration = 0\nthrust_factor = 20\n");
    send(&mut v, "DESIRED_THRUST", "20", 0.0); // 1 m/s north
    for k in 1..=10 {
        v.step(k as f64 * 0.1);
    }
    assert!(v.nav().x.abs() < 1e-12, "NAV has no drift");
    assert!(
        (v.ground_truth().x - 1.0).abs() < 1e-9,
        "GT drifts east 1 m/s"
    );
    assert!((v.nav().y - v.ground_truth().y).abs() < 1e-12);
    assert!(published(&v, "USM_GT_X").is_some());
}

#[test]
fn without_dual_state_gt_keeps_the_start_pose() {
    let mut v = vehicle("start_x = 3\ndrift_x = 1\n");
    v.step(1.0);
    assert_eq!(v.ground_truth().x, 3.0);
    assert!((v.nav().x - 4.0).abs() < 1e-12);
}

#[test]
fn whole_second_pause_is_one_ordinary_step() {
    // docs/model.md §5: the first step after resuming covers (T - W) - stamp.
    let mut v = vehicle("drift_x = 1\n");
    v.step(1.0);
    send(&mut v, "USM_SIM_PAUSED", "true", 1.0);
    v.step(2.0);
    v.step(3.0);
    assert_eq!(v.nav().x, 1.0, "paused: nothing moves");
    send(&mut v, "USM_SIM_PAUSED", "false", 3.0); // paused 2 s
    v.step(4.0);
    assert!((v.nav().x - 2.0).abs() < 1e-12, "one ordinary 1 s step");
}

#[test]
fn fractional_pause_leaks_into_one_longer_step() {
    let mut v = vehicle("drift_x = 1\n");
    v.step(1.0);
    send(&mut v, "USM_SIM_PAUSED", "true", 1.0);
    send(&mut v, "USM_SIM_PAUSED", "false", 3.5); // 2.5 s: W = 2 whole seconds
    v.step(4.0);
    // dt = (4 - 2) - 1 = 1 s
    assert!((v.nav().x - 2.0).abs() < 1e-12);
    send(&mut v, "USM_SIM_PAUSED", "true", 4.0);
    send(&mut v, "USM_SIM_PAUSED", "false", 4.7); // total 3.2 s: W = 3
    v.step(5.0);
    // dt = (5 - 3) - 2 = 0 → no motion this step
    assert!((v.nav().x - 2.0).abs() < 1e-12);
}

#[test]
fn sim_pause_config_starts_paused() {
    let mut v = vehicle("sim_pause = true\ndrift_x = 1\n");
    v.step(1.0);
    assert!(v.is_paused());
    assert_eq!(v.nav().x, 0.0);
}

#[test]
fn rudder_rate_limit_per_message() {
    // docs/model.md §15.1: Δmax = (t - t_last)·ρ, t_last starts at 0 (the epoch)
    let mut v = vehicle("max_rudder_degs_per_sec = 10\n");
    send(&mut v, "DESIRED_RUDDER", "50", 2.0); // Δmax = 20
    assert_eq!(v.snapshot().rudder, 20.0);
    send(&mut v, "DESIRED_RUDDER", "50", 2.5); // Δmax = 5
    assert_eq!(v.snapshot().rudder, 25.0);
    v.step(10.0); // no message: the rudder stays
    assert_eq!(v.snapshot().rudder, 25.0);
    send(&mut v, "DESIRED_RUDDER", "-10", 12.5); // Δmax = 100
    assert_eq!(v.snapshot().rudder, -10.0);
}

#[test]
fn rudder_without_limit_moves_at_most_100_per_message() {
    // golden 02: rudder 100 then -50 gives 0 (the internal 100 cap)
    let mut v = vehicle("");
    send(&mut v, "DESIRED_RUDDER", "100", 5.0);
    send(&mut v, "DESIRED_RUDDER", "-50", 15.0);
    assert_eq!(v.snapshot().rudder, 0.0);
}

#[test]
fn altitude_keeps_a_stale_value_when_water_depth_is_unknown() {
    let mut v = vehicle("default_water_depth = 30\nstart_depth = 5\nbuoyancy_rate = 0\n");
    v.step(0.1);
    assert_eq!(v.nav().altitude, Some(25.0));
    send(&mut v, "WATER_DEPTH", "0", 0.1);
    send(&mut v, "USM_RESET", "depth=10", 0.1);
    v.step(0.2);
    assert_eq!(v.nav().altitude, Some(25.0), "stale, docs/model.md §11");
    let neg = parse_text("WATER_DEPTH", "-3").unwrap();
    assert!(v.handle_command(neg, 0.2).is_err());
    send(&mut v, "WATER_DEPTH", "12", 0.2);
    v.step(0.3);
    assert_eq!(v.nav().altitude, Some(2.0));
}

#[test]
fn v22_posts_on_even_iterations_and_caps_speed() {
    let mut v = vehicle("model = \"v22\"\nmax_speed = 2\nstart_speed = 3\nmax_deceleration = 0\nthrust_factor = 20\n");
    send(&mut v, "DESIRED_THRUST", "60", 0.0); // 3 m/s
    v.step(0.1);
    // iteration 1 is odd: no pose group, only the first drift summary,
    // which V22 posts on any iteration (docs/v22.md §1; reference run 01)
    let vars: Vec<String> = v.publications().into_iter().map(|p| p.var).collect();
    assert_eq!(vars, ["USM_DRIFT_SUMMARY"], "iteration 1 is odd");
    v.step(0.2);
    assert_eq!(num(&v, "USM_SPEED"), 2.0, "capped at max_speed");
    assert!((v.nav().speed - 3.0).abs() < 1e-12);
}

#[test]
fn classic_reverse_publishes_heading_rotated() {
    let mut v = vehicle("start_heading = 10\nthrust_reflect = true\n");
    send(&mut v, "THRUST_MODE_REVERSE", "true", 0.0);
    send(&mut v, "DESIRED_THRUST", "40", 0.0);
    v.step(0.1);
    assert!(v.nav().speed < 0.0, "positive thrust goes astern");
    assert!((num(&v, "USM_HEADING") - 190.0).abs() < 1e-9);
    assert!(
        (v.nav().heading - 10.0).abs() < 1e-9,
        "stored heading unchanged"
    );
}

#[test]
fn drift_summary_when_fresh() {
    let mut v = vehicle("drift_vector = \"90, 0.5\"\n");
    v.step(0.1);
    assert_eq!(
        published(&v, "USM_DRIFT_SUMMARY"),
        Some(PubValue::Text("ang=90, mag=0.5, xmag=0.5, ymag=0".into()))
    );
    v.step(0.2);
    assert_eq!(published(&v, "USM_DRIFT_SUMMARY"), None);
    send(&mut v, "DRIFT_VECTOR_MULT", "2", 0.2);
    v.step(0.3);
    assert_eq!(
        published(&v, "USM_DRIFT_SUMMARY"),
        Some(PubValue::Text("ang=90, mag=1, xmag=1, ymag=0".into()))
    );
}

#[test]
fn malformed_drift_vector_is_dropped() {
    let mut v = vehicle("drift_x = 0.3\n");
    for bad in ["bad,1", "10, 2e-1", "45"] {
        let cmd = parse_text("DRIFT_VECTOR_ADD", bad).unwrap();
        assert!(v.handle_command(cmd, 0.0).is_err(), "{bad}");
    }
    assert_eq!(v.drift(), (0.3, 0.0));
}

#[test]
fn classic_obstacle_hit_freezes() {
    let mut v = vehicle("drift_x = 1\n");
    v.step(1.0);
    v.handle_command(
        Command::ObstacleHit(usim::command::Payload::Text("false".into())),
        1.0,
    )
    .unwrap(); // a string message reads -1 in classic: a hit
    v.step(2.0);
    v.step(3.0);
    assert_eq!(v.nav().x, 1.0);
}

#[test]
fn differential_mode_ignores_thrust_and_turns_by_difference() {
    let mut v = vehicle("thrust_map = \"100:3\"\n");
    send(&mut v, "THRUST_MODE_DIFFERENTIAL", "true", 0.0);
    send(&mut v, "DESIRED_THRUST", "80", 0.0);
    assert_eq!(v.snapshot().thrust, 0.0, "ignored in differential mode");
    send(&mut v, "DESIRED_THRUST_L", "150", 0.0);
    send(&mut v, "DESIRED_THRUST_R", "50", 0.0);
    v.step(1.0);
    // L clipped to 100: δ = 36·(100-50)/200 = 9 deg in 1 s
    assert!((v.nav().heading - 9.0).abs() < 1e-9);
}

#[test]
fn huge_inputs_never_put_non_finite_numbers_in_the_state() {
    let mut v = vehicle("thrust_factor = 0.000001\nmax_deceleration = 0\n");
    // Beyond the physical bounds: refused at the message (issue 13).
    for (var, text) in [("DESIRED_THRUST", "1e300"), ("ROTATE_SPEED", "1e308")] {
        let cmd = parse_text(var, text).expect("parses");
        assert!(v.handle_command(cmd, 0.0).is_err(), "{var} = {text}");
    }
    // At the bounds, over huge steps: still finite.
    send(&mut v, "DESIRED_THRUST", "1e4", 0.0);
    send(&mut v, "ROTATE_SPEED", "3600", 0.0);
    for k in 1..=20 {
        v.step(k as f64 * 1e10);
        let s = v.snapshot();
        for (name, x) in [
            ("x", s.x),
            ("y", s.y),
            ("speed", s.speed),
            ("heading", s.heading),
        ] {
            assert!(x.is_finite(), "{name} = {x} at step {k}");
        }
    }
}

#[test]
fn v22_turns_not_astern_classic_does() {
    for (model, turns) in [("classic", true), ("v22", false)] {
        let mut v = vehicle(&format!(
            "model = \"{model}\"\nthrust_reflect = true\nmax_deceleration = 0\nstart_speed = -1\n"
        ));
        send(&mut v, "DESIRED_THRUST", "-20", 0.0);
        send(&mut v, "DESIRED_RUDDER", "30", 0.0);
        v.step(1.0);
        assert_eq!(v.nav().heading != 0.0, turns, "{model}");
    }
}

#[test]
fn set_list_ramps_the_rudder_each_iteration() {
    // A SET received at t=1 with (30, t=2): the DCM ramp from the start-up
    // cycle reaches 15 at t=1.5 and 30 exactly at t=2.
    let mut v = vehicle("");
    send(
        &mut v,
        "SET",
        r#"["DESIRED_RUDDER", "ClearAll", [[30, 2.0]]]"#,
        1.0,
    );
    v.step(1.0);
    let r1 = v.snapshot().rudder;
    assert!((r1 - 15.0).abs() < 1e-9, "halfway from t=0: {r1}");
    v.step(1.5);
    let r15 = v.snapshot().rudder;
    assert!((r15 - 22.5).abs() < 1e-9, "{r15}");
    v.step(2.0);
    assert_eq!(v.snapshot().rudder, 30.0);
    v.step(3.0);
    assert_eq!(v.snapshot().rudder, 30.0);
}

#[test]
fn set_with_relative_times_and_alias() {
    let mut v = vehicle("[aliases]\nTHRUSTERS = [\"DESIRED_THRUST_L\", \"DESIRED_THRUST_R\"]\n");
    send(&mut v, "THRUST_MODE_DIFFERENTIAL", "true", 0.0);
    send(
        &mut v,
        "SET",
        r#"["THRUSTERS", "ClearAll", [[60, "+1"]]]"#,
        10.0,
    );
    v.step(10.0);
    v.step(11.0);
    // both thrusters at 60: straight ahead, no turn
    v.step(12.0);
    assert!(v.nav().speed > 0.0);
    assert_eq!(v.nav().heading, 0.0);
}

#[test]
fn bad_set_is_dropped_and_leaves_the_buffer() {
    let mut v = vehicle("");
    send(
        &mut v,
        "SET",
        r#"["DESIRED_RUDDER", "ClearAll", [[30, 5.0]]]"#,
        0.0,
    );
    for bad in [
        r#"["DESIRED_RUDDER", "Merge", [[30, 5.0]"#,
        r#"["DESIRED_RUDDER", "Replace", [[30, 5.0]]]"#,
        r#"["DESIRED_RUDDR", "Merge", [[30, 5.0]]]"#,
        r#"["DESIRED_RUDDER", "ClearAll", [[1e400, 5.0]]]"#,
    ] {
        let cmd = parse_text("SET", bad).unwrap();
        assert!(v.handle_command(cmd, 0.0).is_err(), "{bad}");
    }
    v.step(5.0);
    assert_eq!(v.snapshot().rudder, 30.0, "the earlier list still runs");
}

#[test]
fn jerk_smoothing_limits_the_rudder_rate() {
    let mut v = vehicle(
        "[actuators.DESIRED_RUDDER]\ninterpolation = \"jerk\"\nmax_rate = 20\nmax_accel = 40\nmax_jerk = 200\n",
    );
    send(&mut v, "DESIRED_RUDDER", "30", 0.0);
    assert_eq!(
        v.snapshot().rudder,
        0.0,
        "delivered by the follower, not at once"
    );
    let mut prev = 0.0;
    let mut reached = None;
    for k in 1..=40 {
        let t = k as f64 * 0.1;
        v.step(t);
        let r = v.snapshot().rudder;
        assert!(
            (r - prev) / 0.1 <= 20.0 + 1e-9,
            "rate limit at t={t}: {prev} -> {r}"
        );
        assert!(r <= 30.0 + 1e-9);
        if reached.is_none() && (r - 30.0).abs() < 1e-9 {
            reached = Some(t);
        }
        prev = r;
    }
    // 30 degrees at 20 deg/s needs at least 1.5 s, plus the ramps
    let t = reached.expect("reaches the target");
    assert!((1.5..=2.5).contains(&t), "{t}");
}

#[test]
fn interpolation_none_steps_at_command_times() {
    let mut v = vehicle("[actuators.DESIRED_RUDDER]\ninterpolation = \"none\"\n");
    send(
        &mut v,
        "SET",
        r#"["DESIRED_RUDDER", "ClearAll", [[10, 1.0], [20, 2.0]]]"#,
        0.0,
    );
    v.step(0.5);
    assert_eq!(v.snapshot().rudder, 0.0);
    v.step(1.0);
    assert_eq!(v.snapshot().rudder, 10.0);
    v.step(1.5);
    assert_eq!(v.snapshot().rudder, 10.0);
    v.step(2.0);
    assert_eq!(v.snapshot().rudder, 20.0);
}

#[test]
fn current_field_adds_the_local_force_to_the_drift() {
    // One vector at the origin, 0.5 m/s towards east, radius 20: at the
    // origin the weight is (1 - 0/20)^2 = 1, averaged over the one vector.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("f.cfd"),
        "fieldname: test\nradius: 20\nx=0, y=0, mag=0.5, ang=90\n",
    )
    .unwrap();
    let cfg_path = dir.path().join("v.toml");
    std::fs::write(&cfg_path, "current_field = \"f.cfd\"\ndrift_y = 0.1\n").unwrap();
    let cfg = usim::config::load_vehicle(&cfg_path).unwrap();
    let mut v = Vehicle::new(&cfg, 0.0);
    v.step(0.1);
    let n = v.nav();
    assert!((n.x - 0.05).abs() < 1e-12, "current east: {}", n.x);
    assert!((n.y - 0.01).abs() < 1e-12, "plus the general drift north");
    assert_eq!(
        v.drift(),
        (0.0, 0.1),
        "DRIFT_* state is separate from the field"
    );
    // at x = 10 the weight is (1 - 10/20)^2 = 0.25
    send(&mut v, "USM_RESET", "x=10, y=0", 0.1);
    v.step(0.2);
    assert!((v.nav().x - (10.0 + 0.25 * 0.5 * 0.1)).abs() < 1e-12);
    // outside the radius: only the general drift
    send(&mut v, "USM_RESET", "x=100, y=0", 0.2);
    v.step(0.3);
    assert!((v.nav().x - 100.0).abs() < 1e-12);
}

#[test]
fn inactive_or_missing_current_field() {
    let dir = tempfile::tempdir().unwrap();
    let cfg_path = dir.path().join("v.toml");
    std::fs::write(&cfg_path, "current_field = \"missing.cfd\"\n").unwrap();
    let e = usim::config::load_vehicle(&cfg_path).unwrap_err();
    assert!(e.to_string().contains("missing.cfd"), "{e}");
    std::fs::write(
        &cfg_path,
        "current_field = \"missing.cfd\"\ncurrent_field_active = false\n",
    )
    .unwrap();
    assert!(usim::config::load_vehicle(&cfg_path)
        .unwrap()
        .params
        .current_field
        .is_none());
}

#[test]
fn v22_config_can_start_in_differential_mode() {
    let mut v =
        vehicle("model = \"v22\"\nthrust_mode_diff = \"differential\"\nthrust_map = \"100:2\"\n");
    send(&mut v, "DESIRED_THRUST", "100", 0.0);
    v.step(0.1);
    v.step(0.2);
    assert_eq!(
        v.nav().speed,
        0.0,
        "DESIRED_THRUST is ignored in differential mode"
    );
    send(&mut v, "DESIRED_THRUST_L", "50", 0.2);
    send(&mut v, "DESIRED_THRUST_R", "50", 0.2);
    v.step(0.3);
    assert!(v.nav().speed > 0.0);
}

#[test]
fn hand_built_non_finite_commands_are_refused() {
    let mut v = vehicle("");
    for cmd in [
        Command::BuoyancyRate(f64::NAN),
        Command::DriftX(f64::INFINITY),
        Command::DesiredThrust(f64::NAN),
        Command::RotateSpeed(f64::NEG_INFINITY),
    ] {
        assert!(v.handle_command(cmd, 0.0).is_err());
    }
    assert!(v.handle_command(Command::DriftX(1.0), f64::NAN).is_err());
    v.step(1.0);
    let s = v.snapshot();
    assert!(s.x == 0.0 && s.depth == 0.0 && s.heading == 0.0);
}
