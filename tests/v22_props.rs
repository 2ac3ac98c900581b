//! Property tests of the uSimMarineV22 extras (docs/v22.md): no
//! configuration of the embedded PID, turn limit, sailing and wormholes, and
//! no message sequence, puts NaN or infinity into the vehicle's state, its
//! PID outputs or its publications.
use proptest::prelude::*;
use usim::command::{parse_text, Command};
use usim::model::pid::{Gains, PidSettings};
use usim::model::{ModelVariant, Params, PubValue, Vehicle};

/// Numbers from tame to absurd (all finite: messages reject NaN and inf).
fn num() -> impl Strategy<Value = f64> {
    prop_oneof![
        -200.0f64..400.0,
        Just(0.0),
        Just(-0.0),
        Just(1e308),
        Just(-1e308),
        Just(1e-300),
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
    ]
}

fn gains(n: &[f64]) -> Gains {
    Gains {
        kp: n[0],
        kd: n[1],
        ki: n[2],
        integral_limit: n[3],
        output_limit: n[4],
    }
}

fn params() -> impl Strategy<Value = Params> {
    (prop::collection::vec(num(), 28), prop::collection::vec(any::<bool>(), 5)).prop_map(|(n, b)| {
        let mut params = Params {
            variant: ModelVariant::V22,
            dual_state: b[0],
            turn_radius: n[26].abs().min(50.0),
            turn_limit_max_speed: n[27],
            max_acceleration: 0.5,
            pid: Some(PidSettings {
                yaw: gains(&n[0..5]),
                speed: gains(&n[5..10]),
                depth: gains(&n[10..15]),
                pitch: gains(&n[15..20]),
                max_rudder: n[20],
                max_thrust: n[21],
                max_pitch: n[22],
                max_elevator: n[23],
                speed_factor: n[24],
                depth_control: b[1],
                simulation: b[2],
                tardy_helm: 2.0,
                tardy_nav: 2.0,
                sim_instability: n[25].clamp(0.0, 100.0),
            }),
            ..Params::default()
        };
        if b[3] {
            params.sailing.plot.add_line("0,0: 45,40: 90,100: 180,70").unwrap();
            params.sailing.set_wind("spd=3, dir=45").unwrap();
        }
        if b[4] {
            params
                .wormholes
                .configure("tag=a, madrid_poly={20,-10:40,-10:40,10:20,10}, weber_poly={-60,-10:-40,-10:-40,10:-60,10}")
                .unwrap();
        }
        params
    })
}

/// One message of the V22 vocabulary (plus a few core ones).
fn message() -> impl Strategy<Value = (String, String)> {
    let vars = prop::sample::select(vec![
        "DESIRED_HEADING",
        "DESIRED_SPEED",
        "DESIRED_DEPTH",
        "SPEED_FACTOR",
        "MOOS_MANUAL_OVERRIDE",
        "USM_TURN_RADIUS",
        "USM_RESET_NAV",
        "USM_ENABLED",
        "OBSTACLE_HIT",
        "NAV_X",
        "NAV_Y",
        "NAV_HEADING",
        "WIND_CONDITIONS",
        "BUOYANCY_CONTROL",
        "TRIM_CONTROL",
        "DESIRED_RUDDER",
        "DESIRED_THRUST",
        "DRIFT_X",
        "ROTATE_SPEED",
    ]);
    let payload = prop_oneof![
        num().prop_map(|v| v.to_string()),
        prop::sample::select(vec!["true", "false", "TRUE", "toggle", "x"]).prop_map(str::to_string),
        (num(), num()).prop_map(|(s, d)| format!("spd={s}, dir={d}")),
        "[-+0-9.a-z=, ]{0,20}",
    ];
    (vars, payload).prop_map(|(v, p)| (v.to_string(), p))
}

fn all_finite(v: &Vehicle) -> Result<(), String> {
    let s = v.snapshot();
    let c = v.v22_columns();
    let vals = [
        s.x,
        s.y,
        s.speed,
        s.heading,
        s.depth,
        s.pitch,
        s.yaw,
        s.sog,
        s.hog,
        s.rudder,
        s.thrust,
        s.elevator,
        s.gt_x,
        s.gt_y,
        c.gt_heading,
        c.gt_speed,
    ];
    if let Some(x) = vals.iter().find(|x| !x.is_finite()) {
        return Err(format!("non-finite state value {x}: {s:?}"));
    }
    for x in [
        c.desired_rudder,
        c.desired_thrust,
        c.desired_elevator,
        c.sail_cap,
    ] {
        if x.is_infinite() {
            return Err(format!("infinite V22 column: {c:?}"));
        }
    }
    for p in v.publications() {
        if let PubValue::Number(x) = p.value {
            if !x.is_finite() {
                return Err(format!("{} = {x} published", p.var));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn no_config_or_message_sequence_puts_nan_in_the_state(
        params in params(),
        msgs in prop::collection::vec((0u8..10, message()), 0..60),
        helm in prop::collection::vec((num(), num(), num()), 1..8),
    ) {
        let mut v = Vehicle::from_params(params, 1000.0);
        let mut t = 1000.0;
        let mut it = msgs.into_iter();
        for k in 0..300u32 {
            t += if k % 7 == 0 { 0.37 } else { 0.1 };
            // a few messages before some iterations
            for (gap, (var, payload)) in it.by_ref().take(if k % 5 == 0 { 3 } else { 0 }) {
                let _ = gap;
                if let Ok(cmd) = parse_text(&var, &payload) {
                    let _ = v.handle_command(cmd, t);
                }
            }
            if k % 10 == 1 {
                // a helm: setpoints of every kind, absurd ones included
                let (h, sp, d) = helm[(k as usize / 10) % helm.len()];
                for cmd in [Command::DesiredHeading(h), Command::DesiredSpeed(sp), Command::DesiredDepth(d)] {
                    let _ = v.handle_command(cmd, t);
                }
            }
            v.step(t);
            if let Err(e) = all_finite(&v) {
                return Err(TestCaseError::fail(format!("k={k}: {e}")));
            }
        }
    }

    #[test]
    fn v22_text_parsers_never_panic(s in "\\PC{0,80}") {
        let mut sail = usim::model::sailing::Sailing::default();
        let _ = sail.set_wind(&s);
        let _ = sail.plot.add_line(&s);
        let _ = sail.cap(123.0);
        let mut w = usim::model::wormhole::WormholeSet::default();
        let _ = w.configure(&s);
        let _ = w.update(1.0, 0.0, 0.0);
    }
}

/// A steady helm: the PID drives the speed to the setpoint with the speed
/// loop (no speed factor), a sanity check that the generator's vehicles move.
#[test]
fn speed_loop_reaches_the_setpoint() {
    let params = Params {
        variant: ModelVariant::V22,
        pid: Some(PidSettings {
            yaw: Gains {
                kp: 1.0,
                output_limit: 100.0,
                ..Gains::default()
            },
            speed: Gains {
                kp: 2.0,
                output_limit: 100.0,
                ..Gains::default()
            },
            depth_control: false,
            simulation: true,
            ..PidSettings::default()
        }),
        ..Params::default()
    };
    let mut v = Vehicle::from_params(params, 0.0);
    v.step(0.1);
    v.handle_command(Command::DesiredSpeed(1.5), 0.1).unwrap();
    v.handle_command(Command::DesiredHeading(0.0), 0.1).unwrap();
    for k in 2..600 {
        v.step(k as f64 * 0.1);
    }
    assert!(
        (v.nav().speed - 1.5).abs() < 0.05,
        "speed {}",
        v.nav().speed
    );
}
