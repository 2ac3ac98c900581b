//! Appcasts (docs/moos.md §1.4): `usim moos` posts `APPCAST` as an
//! AppCasting MOOS app does, and a pymoos client (the C++ MOOS client
//! library) asks for them with `APPCAST_REQ` as uMAC does.
//!
//! Each APPCAST is decoded here as uMAC decodes it (MOOS's `AppCast.cpp`,
//! `string2AppCast`: fields split at `!@#`, `param=value`, lists split at
//! `!@`), with the format written in docs/moos.md, not with usim's code.
//! Checked: the fields (proc, node, iter, the report's pose against the
//! vehicle's NAV_X/NAV_Y, the configuration warnings, classic's deprecation
//! run warnings), and the throttle: an appcast only while a request lives
//! (its `duration` in MOOS seconds), at most one per 0.5 real seconds, none
//! for a request naming another node.
mod moos_util;
mod mqtt_util;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use moos_util::*;
use serde_json::Value;

/// One decoded appcast.
#[derive(Debug)]
struct Cast {
    fields: BTreeMap<String, String>,
    messages: Vec<String>,
    config_warnings: Vec<String>,
    run_warnings: Vec<String>,
}

/// string2AppCast: chomp at each `!@#`; `param=value` with blanks trimmed.
fn decode(s: &str) -> Cast {
    let mut fields = BTreeMap::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (pair, after) = rest.split_once("!@#").unwrap_or((rest, ""));
        rest = after;
        let (p, v) = pair.split_once('=').unwrap_or((pair, ""));
        fields.insert(p.trim().to_string(), v.trim().to_string());
    }
    let list = |k: &str| -> Vec<String> {
        fields
            .get(k)
            .map(|v| v.split("!@").map(str::to_string).collect())
            .unwrap_or_default()
    };
    Cast {
        messages: list("messages"),
        config_warnings: list("config_warnings"),
        run_warnings: list("run_warnings"),
        fields,
    }
}

const V22: &str =
    "  AppTick = 4\n  CommsTick = 4\n  start_pos = x=10, y=-20, heading=90, speed=0\n  \
    prefix = NAV\n  thrust_map = 0:0, 50:1.5, 100:3\n  bogus_key = 3\n";
/// (Its own prefix: two simulators in one community must not read each
/// other's NAV_*.)
const CLASSIC: &str = "  AppTick = 4\n  start_x = 0\n  start_y = 0\n  prefix = CLS\n";

#[test]
fn appcasts_on_request_decoded_as_umac_does_and_throttled() {
    if !have_pymoos("appcasts") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let warp = 4.0;
    let (_db, port) = moosdb(dir.path(), "ac", &[&format!("--moos_time_warp={warp}")]);
    let m = mission(dir.path(), "alpha", port, warp, "uSimMarineV22", V22);
    let text = std::fs::read_to_string(&m).unwrap()
        + &format!("\nProcessConfig = uSimMarine\n{{\n{CLASSIC}}}\n");
    std::fs::write(&m, text).unwrap();
    let mut apps = Vec::new();
    for (alias, tag) in [("uSimMarineV22", "v22"), ("uSimMarine", "classic")] {
        let mut cmd = Command::new(usim());
        cmd.args([m.to_str().unwrap(), alias]);
        apps.push(Proc::spawn(tag, cmd, dir.path().join(format!("{tag}.log"))));
    }
    let out = dir.path().join("rec.json");
    // uMAC's request: node, app, duration (MOOS s), key, thresh. 8 MOOS s
    // are 2 real s at warp 4; then a request for another node.
    let r = run_py(
        "moos_record.py",
        &[
            &port.to_string(),
            out.to_str().unwrap(),
            &warp.to_string(),
            "5.5",
            "--register=APPCAST",
            "--register=NAV_X",
            "--register=NAV_Y",
            "--register=CLS_X",
            "--register=CLS_Y",
            "--wait-for=CLS_X",
            "--post=1.0:APPCAST_REQ=node=alpha,app=all,duration=8,key=uMAC_1,thresh=any",
            "--post=3.5:APPCAST_REQ=node=bravo,app=all,duration=8,key=uMAC_2,thresh=any",
        ],
        Duration::from_secs(90),
    );
    assert_py(&r, "moos_record");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mail = rec["mail"].as_array().unwrap();
    let req_t = rec["posts"][0]["time"].as_f64().unwrap();
    for (source, variant, prefix) in [
        ("uSimMarineV22", "v22", "NAV"),
        ("uSimMarine", "classic", "CLS"),
    ] {
        let casts: Vec<(f64, Cast)> = mail
            .iter()
            .filter(|x| x["key"] == "APPCAST" && x["source"] == source)
            .map(|x| {
                assert_eq!(x["double"], false, "APPCAST is a string");
                (
                    x["time"].as_f64().unwrap(),
                    decode(x["value"].as_str().unwrap()),
                )
            })
            .collect();
        assert!(!casts.is_empty(), "no APPCAST from {source}");
        // Fields.
        let (_, c) = casts.last().unwrap();
        assert_eq!(c.fields["proc"], source, "{c:?}");
        assert_eq!(c.fields["node"], "alpha");
        assert!(c.fields["iter"].parse::<u64>().unwrap() > 1);
        let body = c.messages.join("\n");
        assert!(
            body.contains("Pose (NAV)") && body.contains("Velocity Information:"),
            "{body}"
        );
        assert!(
            body.contains(if variant == "v22" {
                "Enabled:  true"
            } else {
                "Enabled: true"
            }),
            "{body}"
        );
        if variant == "v22" {
            assert!(
                c.config_warnings.iter().any(|w| w.contains("bogus_key")),
                "{:?}",
                c.config_warnings
            );
            assert_eq!(c.fields["run_warning_total"], "0", "{:?}", c.run_warnings);
        } else {
            // uSimMarine is deprecated (AppCastingMOOSApp::preOnStartUp)
            assert_eq!(c.fields["run_warning_total"], "3", "{c:?}");
            assert!(
                c.run_warnings
                    .iter()
                    .any(|w| w == "1:uSimMarine is deprecated."),
                "{c:?}"
            );
        }
        assert!(
            !c.config_warnings
                .iter()
                .any(|w| w.to_lowercase().contains("commstick")),
            "{:?}",
            c.config_warnings
        );
        // The pose in the report is the vehicle's at that iteration.
        for (t, c) in &casts {
            let nav = |k: &str| {
                mail.iter()
                    .find(|x| {
                        x["key"] == k && x["source"] == source && x["time"].as_f64() == Some(*t)
                    })
                    .and_then(|x| x["value"].as_f64())
            };
            if let (Some(x), Some(y)) = (nav(&format!("{prefix}_X")), nav(&format!("{prefix}_Y"))) {
                let line = c
                    .messages
                    .iter()
                    .find(|l| l.contains("(X,Y):"))
                    .unwrap_or_else(|| panic!("{:?}", c.messages));
                let current = line
                    .split("(X,Y):")
                    .nth(2)
                    .unwrap()
                    .split_whitespace()
                    .next()
                    .unwrap();
                let (cx, cy) = current.split_once(',').unwrap();
                assert!(
                    (cx.parse::<f64>().unwrap() - x).abs() < 0.006,
                    "{line} vs {x}"
                );
                assert!(
                    (cy.parse::<f64>().unwrap() - y).abs() < 0.006,
                    "{line} vs {y}"
                );
            }
        }
        // Throttle: while the request lives, at most one per 0.5 real s;
        // none once it expired (8 MOOS s), none for node=bravo.
        let during: Vec<f64> = casts
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| *t >= req_t - 1.0)
            .collect();
        assert!(
            (3..=6).contains(&during.len()),
            "{source}: {} appcasts in the request's 8 MOOS s (2 real s): {during:?}",
            during.len()
        );
        for w in during.windows(2) {
            assert!(
                (w[1] - w[0]) / warp >= 0.5 - 1e-6,
                "{source}: appcasts {} real s apart",
                (w[1] - w[0]) / warp
            );
        }
        assert!(
            during.iter().all(|t| *t <= req_t + 8.0 + 1.0),
            "{source}: an appcast after the request expired: {during:?} (request at {req_t})"
        );
    }
    drop(apps);
}
