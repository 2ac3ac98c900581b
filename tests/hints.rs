//! The hints a newcomer sees: an unknown key's suggestion is never the key
//! itself, a file of the wrong kind is named as such, an unquoted
//! `thrust_map` is told to be quoted, and "`usim example` lists every key"
//! appears only where it is true.
use std::path::Path;
use std::process::Command;

use usim::config::{parse_vehicle, VEHICLE_KEYS};
use usim::mission;

fn usim(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_usim"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("run usim");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn replay_of_a_vehicle_config_says_it_is_a_vehicle_config() {
    let (ok, err) = usim(&["replay", "configs/kayak.toml"]);
    assert!(!ok);
    assert!(
        err.contains("this is a vehicle config, not a mission"),
        "{err}"
    );
    assert!(err.contains("usim run configs/kayak.toml"), "{err}");
    assert!(err.contains("[mission] vehicle ="), "{err}");
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn run_of_a_mission_says_it_is_a_mission() {
    let (ok, err) = usim(&[
        "run",
        "missions/dive.toml",
        "--broker",
        "mqtt://127.0.0.1:1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("this is a mission file, not a vehicle config"),
        "{err}"
    );
    assert!(err.contains("usim replay missions/dive.toml"), "{err}");
    assert!(err.contains("../configs/uuv.toml"), "{err}");
}

/// Every vehicle key, put where a mission does not accept it, and every
/// vehicle key misspelt by one letter: the hint never names the key itself.
#[test]
fn a_suggestion_is_never_the_key_itself() {
    let p = Path::new("m.toml");
    for key in VEHICLE_KEYS {
        for text in [
            format!("{key} = 1\n[mission]\ndt = 0.1\nsteps = 1\n[vehicle]\n"),
            format!("[mission]\ndt = 0.1\nsteps = 1\n{key} = 1\n[vehicle]\n"),
            format!("[mission]\ndt = 0.1\nsteps = 1\n[vehicle]\n[[post]]\nt = 1\nvar = \"X\"\nvalue = 1\n{key} = 1\n"),
        ] {
            let Err(e) = mission::parse(p, &text) else {
                continue; // `name`, `vehicle`: keys of [mission] too
            };
            let m = e.to_string();
            assert!(!m.contains(&format!("did you mean `{key}`")), "{m}");
        }
        // one letter dropped: the real key is suggested
        if key.len() > 5 {
            let typo: String = key.chars().take(3).chain(key.chars().skip(4)).collect();
            let e = parse_vehicle(Path::new("v.toml"), &format!("{typo} = 1\n")).unwrap_err();
            assert!(
                e.to_string().contains(&format!("did you mean `{key}`"))
                    || VEHICLE_KEYS.contains(&typo.as_str()),
                "{typo}: {e}"
            );
        }
    }
    // a vehicle key in [mission] is sent to [vehicle]
    let e = mission::parse(p, "[mission]\ndt = 0.1\nlat_origin = 42\n[vehicle]\n").unwrap_err();
    assert!(e.to_string().contains("goes in the [vehicle] table"), "{e}");
}

#[test]
fn an_unquoted_thrust_map_is_told_to_be_quoted() {
    for (line, value) in [
        ("thrust_map = 0:0", "0:0"),
        ("thrust_map = 20:1, 100:5", "20:1, 100:5"),
    ] {
        let e = parse_vehicle(Path::new("v.toml"), &format!("name = \"a\"\n{line}\n")).unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("v.toml:2: key `thrust_map`"), "{m}");
        assert!(m.contains(&format!("thrust_map = \"{value}\"")), "{m}");
    }
}

#[test]
fn usim_example_is_named_only_for_vehicle_keys() {
    let e = parse_vehicle(Path::new("v.toml"), "trun_rate = 1\n").unwrap_err();
    assert!(e.to_string().contains("did you mean `turn_rate`"), "{e}");
    assert!(
        e.to_string().contains("`usim example` lists every key"),
        "{e}"
    );
    let e = parse_vehicle(Path::new("v.toml"), "[mqtt]\nbrokr = \"x\"\n").unwrap_err();
    assert!(
        e.to_string().contains("`usim example` lists every key"),
        "{e}"
    );
    for text in [
        "[mission]\ndt = 0.1\nstepz = 1\n[vehicle]\n",
        "[mission]\ndt = 0.1\n[vehicle]\n[[post]]\nt = 1\nvar = \"X\"\nvalu = 1\n",
    ] {
        let e = mission::parse(Path::new("m.toml"), text).unwrap_err();
        assert!(e.to_string().contains("did you mean"), "{e}");
        assert!(!e.to_string().contains("usim example"), "{e}");
    }
}
