//! No input makes usim panic or lets a non-finite number into the state:
//! arbitrary text into the config and mission parsers, and arbitrary
//! payloads for every subscribed variable into a running vehicle.
use std::path::Path;

use proptest::prelude::*;
use usim::command::{parse_text, SUBSCRIPTIONS};
use usim::model::{ModelVariant, Params, Vehicle};

fn finite_state(v: &Vehicle) -> bool {
    let s = v.snapshot();
    [
        s.x, s.y, s.speed, s.heading, s.depth, s.pitch, s.yaw, s.sog, s.hog, s.drift_x, s.drift_y,
        s.rudder, s.thrust, s.elevator, s.gt_x, s.gt_y,
    ]
    .iter()
    .all(|x| x.is_finite())
}

/// Payloads that look like what people type, plus junk.
fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| v.to_string()),
        (-1e6f64..1e6).prop_map(|v| v.to_string()),
        "[-+0-9.e, =a-z]{0,24}",
        ("[-0-9.]{1,6}", "[-0-9.]{1,6}").prop_map(|(a, m)| format!("{a},{m}")),
        Just("x=1e308, y=-1e308, speed=1e308".to_string()),
        Just(r#"["DESIRED_RUDDER", "ClearAll", [[1e308, "+1e300"]]]"#.to_string()),
        "\\PC{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn config_parser_never_panics(text in "\\PC{0,200}") {
        let _ = usim::config::parse_vehicle(Path::new("fuzz.toml"), &text);
    }

    #[test]
    fn config_parser_never_panics_on_near_valid_toml(
        key in prop::sample::select(usim::config::VEHICLE_KEYS.to_vec()),
        value in prop_oneof![
            "\"[-+0-9.:, a-z=]{0,30}\"",
            "-?[0-9]{1,5}(\\.[0-9]{1,3})?",
            Just("nan".to_string()),
            Just("-inf".to_string()),
            Just("true".to_string()),
            Just("[\"1:2\", 3]".to_string()),
        ],
    ) {
        let text = format!("{key} = {value}\n");
        let _ = usim::config::parse_vehicle(Path::new("fuzz.toml"), &text);
    }

    #[test]
    fn mission_parser_never_panics(text in "\\PC{0,200}") {
        let _ = usim::mission::parse(Path::new("fuzz.toml"), &text);
    }

    #[test]
    fn any_messages_keep_the_state_finite(
        v22 in any::<bool>(),
        msgs in prop::collection::vec(
            (prop::sample::select(SUBSCRIPTIONS.iter().map(|s| s.0).collect::<Vec<_>>()), payload()),
            1..30,
        ),
    ) {
        let params = Params {
            variant: if v22 { ModelVariant::V22 } else { ModelVariant::Classic },
            ..Params::default()
        };
        let mut v = Vehicle::from_params(params, 0.0);
        for (k, (var, text)) in msgs.iter().enumerate() {
            let t = k as f64 * 0.1;
            if let Ok(cmd) = parse_text(var, text) {
                let _ = v.handle_command(cmd, t);
            }
            v.step(t + 0.05);
            let _ = v.publications();
            prop_assert!(finite_state(&v), "after {var} = {text:?}: {:?}", v.snapshot());
        }
    }
}
