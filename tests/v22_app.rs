//! The uSimMarineV22 app's behaviours around the model (docs/v22.md §7-§13),
//! checked on a vehicle driven message by message: obstacle, disabled,
//! NAV overrides, USM_RESET_NAV, wormholes, handshakes and publications.
use usim::command::Command;
use usim::model::{ModelVariant, Params, PubValue, Publication, Vehicle};

fn v22(params: Params) -> Vehicle {
    Vehicle::from_params(
        Params {
            variant: ModelVariant::V22,
            prefix: "NAV".into(),
            ..params
        },
        100.0,
    )
}

fn vars(p: &[Publication]) -> Vec<&str> {
    p.iter().map(|p| p.var.as_str()).collect()
}

fn num(p: &[Publication], var: &str) -> Option<f64> {
    p.iter().find(|p| p.var == var).and_then(|p| match p.value {
        PubValue::Number(v) => Some(v),
        PubValue::Text(_) => None,
    })
}

fn text(p: &[Publication], var: &str) -> Option<String> {
    p.iter()
        .find(|p| p.var == var)
        .and_then(|p| match &p.value {
            PubValue::Text(s) => Some(s.clone()),
            PubValue::Number(_) => None,
        })
}

#[test]
fn pose_group_on_even_iterations_with_the_depth_group_by_default() {
    let mut v = v22(Params::default());
    v.step(100.1);
    // odd: only the first drift summary
    assert_eq!(vars(&v.publications()), ["USM_DRIFT_SUMMARY"]);
    v.step(100.2);
    assert_eq!(
        vars(&v.publications()),
        [
            "NAV_X",
            "NAV_Y",
            "NAV_HEADING",
            "NAV_SPEED",
            "NAV_DEPTH",
            "SIMULATION_MODE",
            "NAV_Z",
            "NAV_PITCH",
            "NAV_YAW",
            "TRUE_X",
            "TRUE_Y",
            "NAV_HEADING_OVER_GROUND",
            "NAV_SPEED_OVER_GROUND"
        ]
    );
}

#[test]
fn obstacle_posts_the_nav_record_twice_with_speed_zero_and_freezes() {
    let mut v = v22(Params::default());
    v.handle_command(Command::DesiredThrust(100.0), 100.0)
        .unwrap();
    for k in 1..=20 {
        v.step(100.0 + k as f64 * 0.1);
    }
    assert!(v.nav().speed > 0.5);
    let x = v.nav().x;
    v.handle_command(
        Command::ObstacleHit(usim::command::Payload::Text("true".into())),
        102.0,
    )
    .unwrap();
    v.step(102.1); // k = 21, odd: nothing
    assert!(v.publications().is_empty());
    v.step(102.2); // k = 22
    let p = v.publications();
    assert_eq!(vars(&p).iter().filter(|s| **s == "NAV_X").count(), 2);
    assert!(p
        .iter()
        .filter(|p| p.var == "NAV_SPEED")
        .all(|p| p.value == PubValue::Number(0.0)));
    assert!(!vars(&p).iter().any(|s| s.contains("GT")));
    assert_eq!(v.nav().x, x, "no propagation");
    // cleared: one step over the whole blocked time
    v.handle_command(
        Command::ObstacleHit(usim::command::Payload::Text("false".into())),
        103.0,
    )
    .unwrap();
    let stamp = v.nav().stamp;
    v.step(103.1);
    assert_eq!(v.nav().stamp, stamp + (103.1 - stamp));
}

#[test]
fn disabled_vehicle_takes_nav_overrides_in_both_records() {
    let mut v = v22(Params {
        dual_state: true,
        ..Params::default()
    });
    v.handle_command(Command::DesiredRudder(30.0), 100.0)
        .unwrap();
    // enabled: overrides are dropped with a reason
    assert!(v.handle_command(Command::NavX(5.0), 100.0).is_err());
    v.handle_command(Command::Enabled("false".into()), 100.0)
        .unwrap();
    v.step(100.1);
    v.step(100.2);
    assert!(
        v.publications().is_empty(),
        "nothing published while disabled"
    );
    assert_eq!(v.nav().stamp, 100.2);
    assert_eq!(v.ground_truth().stamp, 100.2);
    v.handle_command(Command::NavX(12.0), 100.25).unwrap();
    v.handle_command(Command::NavY(-7.0), 100.25).unwrap();
    v.handle_command(Command::NavHeading(400.0), 100.25)
        .unwrap();
    for r in [v.nav(), v.ground_truth()] {
        assert_eq!((r.x, r.y, r.heading), (12.0, -7.0, 400.0));
    }
    assert_eq!(v.snapshot().rudder, 0.0);
    v.handle_command(Command::Enabled("true".into()), 100.3)
        .unwrap();
    v.step(100.3);
    assert!(v.nav().heading < 360.0, "wrapped by the next heading step");
}

#[test]
fn reset_nav_copies_the_ground_truth_with_its_stamp() {
    let mut v = v22(Params {
        dual_state: true,
        drift_x: 1.0,
        ..Params::default()
    });
    for k in 1..=10 {
        v.step(100.0 + k as f64 * 0.1);
    }
    assert!(v.ground_truth().x > 0.9 && v.nav().x == 0.0);
    v.handle_command(Command::ResetNav(String::new()), 101.05)
        .unwrap();
    assert_eq!(v.nav(), v.ground_truth());
}

#[test]
fn wormhole_jumps_both_records_after_five_seconds() {
    let mut p = Params {
        start: usim::model::StartPose {
            heading: 90.0,
            ..Default::default()
        },
        ..Params::default()
    };
    p.wormholes
        .configure("tag=w, madrid_poly={5,-10:30,-10:30,10:5,10}, weber_poly={105,-10:130,-10:130,10:105,10}, connection=from_madrid")
        .unwrap();
    let mut v = v22(p);
    v.handle_command(Command::DesiredThrust(40.0), 100.0)
        .unwrap(); // 2 m/s
    let mut entered = None;
    let mut jumped = None;
    for k in 1..=200 {
        let t = 100.0 + k as f64 * 0.1;
        let before = v.nav().x;
        v.step(t);
        let a = num(&v.publications(), "NAV_TRANSP").expect("P_TRANSP every iteration");
        if entered.is_none() && a < 1.0 {
            entered = Some(t);
        }
        if v.nav().x > before + 50.0 {
            jumped = Some((t, before, v.nav().x));
            assert_eq!(a, 0.0);
            assert_eq!(v.ground_truth().x, v.nav().x);
            break;
        }
    }
    let (t_jump, _, x_after) = jumped.expect("jumped");
    // entered at the first step inside (transparency 1 then), jumped 5 s later
    assert!(entered.is_some());
    assert!(x_after > 105.0 && x_after < 130.0, "{x_after}");
    assert!(t_jump > 105.0);
}

#[test]
fn trim_request_completes_at_the_maximum_delay() {
    let mut v = v22(Params {
        max_trim_delay: 8.0,
        ..Params::default()
    });
    v.handle_command(Command::TrimControl("TRUE".into()), 100.0)
        .unwrap();
    v.step(100.1);
    assert_eq!(
        text(&v.publications(), "TRIM_REPORT").as_deref(),
        Some("status=1,error=0,progressing,trim_pitch=0.0,trim_roll=0.0")
    );
    let mut done = None;
    for k in 2..=100 {
        let t = 100.0 + k as f64 * 0.1;
        v.step(t);
        if let Some(s) = text(&v.publications(), "TRIM_REPORT") {
            if s.starts_with("status=2") {
                done = Some((t, s));
                break;
            }
        }
    }
    let (t, s) = done.expect("completed");
    // pitch 0 is within the tolerance: complete after 5 s
    assert!((t - 105.0).abs() < 1e-9, "{t}");
    assert_eq!(
        s,
        "status=2,error=0,completed,trim_pitch=0.00000,trim_roll=0.0"
    );
    assert!(v
        .handle_command(Command::TrimControl("maybe".into()), 106.0)
        .is_err());
}

#[test]
fn navpos_summary_and_speed_cap() {
    let mut v = v22(Params {
        post_navpos_summary: true,
        max_speed: 1.0,
        start: usim::model::StartPose {
            x: 1.23456,
            y: -2.0,
            speed: 3.0,
            ..Default::default()
        },
        ..Params::default()
    });
    v.step(100.1);
    v.step(100.2);
    let p = v.publications();
    assert_eq!(num(&p, "NAV_SPEED"), Some(1.0), "capped at max_speed");
    let s = text(&p, "USM_NAVPOS_SUMMARY").unwrap();
    assert!(s.starts_with("x=1.") && s.contains(",y=-"), "{s}");
    assert!(!s.contains("lat="), "no origin: no lat/lon");
}

#[test]
fn classic_vehicles_drop_v22_mail() {
    let mut v = Vehicle::from_params(Params::default(), 0.0);
    let e = v
        .handle_command(Command::DesiredHeading(90.0), 0.0)
        .unwrap_err();
    assert!(e.reason.contains("classic"), "{e}");
    let mut v = v22(Params::default());
    let e = v
        .handle_command(Command::DesiredHeading(90.0), 0.0)
        .unwrap_err();
    assert!(e.reason.contains("no embedded PID"), "{e}");
}

#[test]
fn a_position_beyond_the_projection_publishes_no_nan_latitude() {
    // Found by the `message` fuzz target: a drift over a long step carries
    // the vehicle ~20,000 km east of its datum, where the UTM inverse has
    // no answer (NaN); nothing non-finite may be published.
    let mut v = v22(Params {
        origin: Some((43.825300, -70.330400)),
        post_navpos_summary: true,
        ..Params::default()
    });
    for (var, val) in [("USM_RESET", "x=9900000, y=0"), ("DRIFT_X", "100")] {
        v.handle_command(usim::command::parse_text(var, val).unwrap(), 100.0)
            .unwrap();
    }
    v.step(100.0);
    v.step(100.0 + 1e5);
    let p = v.publications();
    assert!(num(&p, "NAV_X").unwrap() > 1.9e7, "{:?}", vars(&p));
    for pb in &p {
        if let PubValue::Number(x) = pb.value {
            assert!(x.is_finite(), "{} = {x}", pb.var);
        }
    }
    assert_eq!(num(&p, "NAV_LAT"), None);
    let summary = text(&p, "USM_NAVPOS_SUMMARY").unwrap();
    assert!(
        !summary.contains("lat=") && !summary.to_lowercase().contains("nan"),
        "{summary}"
    );
}

#[test]
fn a_posted_pose_is_the_record_as_it_stood_after_the_step() {
    // docs/v22.md §13: the pose group is the record at the end of the
    // iteration; mail handled before the postings are read (here NAV_X and
    // NAV_Y on a disabled vehicle, which move both records) must not show in
    // the postings of the iteration before it
    let mut v = v22(Params {
        dual_state: true,
        drift_x: 1.0,
        ..Params::default()
    });
    v.step(100.1);
    v.step(100.2);
    let posted = v.publications();
    let (x, gt_x) = (num(&posted, "NAV_X"), num(&posted, "NAV_GT_X"));
    assert_eq!(x, Some(v.nav().x));
    assert_eq!(gt_x, Some(v.ground_truth().x));
    v.handle_command(Command::Enabled("false".into()), 100.25)
        .unwrap();
    v.handle_command(Command::NavX(12.0), 100.25).unwrap();
    v.handle_command(Command::NavY(-7.0), 100.25).unwrap();
    assert_eq!((v.nav().x, v.ground_truth().y), (12.0, -7.0));
    assert_eq!(v.publications(), posted);
    // the same for an obstacle iteration's pose (speed 0)
    let mut v = v22(Params {
        drift_x: 1.0,
        ..Params::default()
    });
    v.handle_command(Command::DesiredThrust(40.0), 100.0)
        .unwrap();
    v.step(100.1);
    v.handle_command(
        Command::ObstacleHit(usim::command::Payload::Number(1.0)),
        100.15,
    )
    .unwrap();
    v.step(100.2);
    let posted = v.publications();
    assert_eq!(num(&posted, "NAV_SPEED"), Some(0.0));
    v.handle_command(Command::ResetNav(String::new()), 100.25)
        .unwrap();
    assert_eq!(v.publications(), posted);
}
