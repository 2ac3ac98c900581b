//! `usim moos` with obstacles from the `.moos` file (docs/obstacles.md):
//! the uFldObstacleSim block's `obstacle_file`, `refresh_interval`, and
//! uFldCollObDetect's `collision_dist` as the hit range. A real pymoos
//! client (tests/py/moos_obstacles_check.py) sees the start-up postings,
//! drives the vehicle north into the square and sees `OBSTACLE_HIT`, after
//! which the classic vehicle stands still short of the square.
mod moos_util;
mod mqtt_util;

use std::process::Command;
use std::time::Duration;

use moos_util::*;
use serde_json::Value;

const BLOCK: &str = "  AppTick = 10\n  start_x = 0\n  start_y = 0\n  start_heading = 0\n  \
    start_speed = 0\n  prefix = NAV\n";

#[test]
fn moos_app_posts_obstacles_and_the_hit_to_pymoos() {
    if !have_pymoos("moos_obstacles") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_db, port) = moosdb(dir.path(), "obstacles", &[]);
    let mission = mission(dir.path(), "obs", port, 1.0, "uSimMarine", BLOCK);
    std::fs::write(
        dir.path().join("obstacles.txt"),
        "// a square 10 m north\nregion = pts={-50,-50:50,-50:50,50:-50,50}\n\
         poly = pts={-5,10:5,10:5,20:-5,20},label=box\n",
    )
    .unwrap();
    let mut text = std::fs::read_to_string(&mission).unwrap();
    text.push_str(
        "\nProcessConfig = uFldObstacleSim\n{\n  obstacle_file = obstacles.txt\n  \
         refresh_interval = 1\n}\n\nProcessConfig = uFldCollObDetect\n{\n  collision_dist = 2\n}\n",
    );
    std::fs::write(&mission, text).unwrap();
    let mut cmd = Command::new(usim());
    cmd.arg("moos").arg(&mission).arg("uSimMarine");
    let app = Proc::spawn("app obstacles", cmd, dir.path().join("app.log"));
    assert!(
        app.wait_log("connected to the MOOSDB", Duration::from_secs(60)),
        "the app did not connect:\n{}",
        app.log()
    );
    let out = dir.path().join("mail.json");
    let r = run_py(
        "moos_obstacles_check.py",
        &[&port.to_string(), out.to_str().unwrap()],
        Duration::from_secs(150),
    );
    assert_py(&r, "moos_obstacles_check");
    let mail: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let of = |key: &str| -> Vec<String> {
        mail.iter()
            .filter(|m| m["key"] == key)
            .map(|m| {
                m["value"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| m["value"].to_string())
            })
            .collect()
    };
    let known = of("KNOWN_OBSTACLE");
    assert!(
        known
            .iter()
            .any(|k| k == "pts={-5,10:5,10:5,20:-5,20},label=box"),
        "{known:?}"
    );
    assert!(of("GIVEN_OBSTACLE")
        .iter()
        .any(|k| k == "pts={-5,10:5,10:5,20:-5,20},label=box"));
    let views = of("VIEW_POLYGON");
    assert!(
        views.iter().any(|v| v.contains("label=obs_region")),
        "{views:?}"
    );
    assert!(views
        .iter()
        .any(|v| v.starts_with("pts={-5,10:5,10:5,20:-5,20},label=box,")));
    assert_eq!(of("OBSTACLE_HIT"), ["true"], "one hit, a string");
    // collision_dist 2: hit once north of y = 8, then stopped for good
    let ys: Vec<f64> = mail
        .iter()
        .filter(|m| m["key"] == "NAV_Y")
        .filter_map(|m| m["value"].as_f64())
        .collect();
    let last = *ys.last().expect("NAV_Y");
    assert!(
        last > 8.0 && last < 10.0,
        "NAV_Y {last}: should stop within 2 m of y = 10"
    );
    drop(app);
}
