//! usim started exactly as pAntler starts apps (docs/moos.md §1.1):
//! `APP MISSION ALIAS [ExtraProcessParams…]` (MOOSEssentials' Antler.cpp),
//! with MISSION the `MISSION.moos++` copy pAntler writes under
//! `--MOOSTimeWarp=` (CMOOSFileReader::MakeOverloadedCopy), as `usim` with
//! an alias and through the `uSimMarineV22` / `MOOSDB` symlinks; the peer
//! is pymoos 2022.1 (the C++ MOOS client library).
//!
//! The mission is s1_alpha's shape: a uSimMarineV22 block without PID keys
//! beside a pMarinePIDV22 block with `depth_control = false`. The real
//! uSimMarineV22 reads only its own block, so usim must not close the loop
//! with pMarinePIDV22's gains (no DESIRED_THRUST/DESIRED_RUDDER of its own)
//! and must post NAV_Z, NAV_PITCH, NAV_YAW, TRUE_X, TRUE_Y and
//! SIMULATION_MODE (docs/moos.md §1.3).
mod moos_util;
mod mqtt_util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use moos_util::*;
use serde_json::Value;

/// The vehicle and PID blocks of ivp/missions/s1_alpha/alpha.moos.
const BLOCKS: &str = "\
ProcessConfig = uSimMarineV22
{
  AppTick  	= 4
  CommsTick	= 4

  start_pos     = x=0, y=-20, heading=180, speed=0
  prefix        = NAV
  turn_rate     = 95
  thrust_map    = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
	turn_spd_loss = 0.4
}

ProcessConfig = pMarinePIDV22
{
  AppTick    = 20
  CommsTick  = 20

  verbose       = true
  depth_control = false

  yaw_pid_kp		 = 0.9
  yaw_pid_kd		 = 0.3
  yaw_pid_ki		 = 0.3
  yaw_pid_integral_limit = 0.07
  speed_pid_kp		 = 1.0
  speed_pid_kd		 = 0.0
  speed_pid_ki		 = 0.0
  speed_pid_integral_limit = 0.07
  maxrudder    = 100
  maxthrust    = 100
  speed_factor = 20
}
";

/// `alpha.moos` with `ServerPort = port` and `MOOSTimeWarp = 1`.
fn mission_text(port: u16) -> String {
    format!(
        "ServerHost   = localhost\nServerPort   = {port}\nCommunity    = alpha\nMOOSTimeWarp = 1\n\n\
         LatOrigin  = 43.825300 \nLongOrigin = -70.330400 \n\n\
         ProcessConfig = ANTLER\n{{\n  MSBetweenLaunches = 200\n  Run = MOOSDB        @ NewConsole = false\n  \
         Run = uSimMarineV22 @ NewConsole = false\n  Run = pMarinePIDV22 @ NewConsole = false\n}}\n\n{BLOCKS}"
    )
}

/// The copy `pAntler alpha.moos --MOOSTimeWarp=W` writes
/// (MakeOverloadedCopy: the line commented out, the overload after it).
fn overloaded_copy(text: &str, warp: u32) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("MOOSTimeWarp") {
            out.push_str(
                "//----  Next Line was commented and replaced with a command line overload ---- //\n",
            );
            out.push_str(&format!("//{line}    (default)\n"));
            out.push_str(&format!("MOOSTimeWarp = {warp}\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Start the DB with pAntler's argv form (`argv0 MISSION MOOSDB
/// --moos_port=0`, the port an ExtraProcessParams switch so the test owns
/// it), then write the mission copy with that port.
fn start_db(dir: &Path, argv0: &Path, warp: u32) -> (Proc, u16, PathBuf) {
    let copy = dir.join("alpha.moos++");
    std::fs::write(dir.join("alpha.moos"), mission_text(9000)).unwrap();
    std::fs::write(&copy, overloaded_copy(&mission_text(9000), warp)).unwrap();
    let mut cmd = Command::new(argv0);
    cmd.args([copy.to_str().unwrap(), "MOOSDB", "--moos_port=0"]);
    let mut db = Proc::spawn("db", cmd, dir.join("db.log"));
    let port = db
        .wait_listen_port(START)
        .unwrap_or_else(|e| panic!("the DB did not start: {e}"));
    assert!(
        db.log().contains(&format!("MOOSTimeWarp {warp}")),
        "the DB reads the overloaded copy's warp:\n{}",
        db.log()
    );
    std::fs::write(dir.join("alpha.moos"), mission_text(port)).unwrap();
    std::fs::write(&copy, overloaded_copy(&mission_text(port), warp)).unwrap();
    (db, port, copy)
}

/// Record the community for `seconds` real s after the vehicle's first
/// NAV_X, posting the helm's DESIRED_HEADING and DESIRED_SPEED.
fn record(dir: &Path, port: u16, warp: u32, seconds: f64) -> Value {
    let out = dir.join("rec.json");
    let r = run_py(
        "moos_record.py",
        &[
            &port.to_string(),
            out.to_str().unwrap(),
            &warp.to_string(),
            &seconds.to_string(),
            "--register=NAV_*",
            "--register=TRUE_*",
            "--register=SIMULATION_MODE",
            "--register=DESIRED_*",
            "--wait-for=NAV_X",
            "--post=0.2:DESIRED_HEADING=90",
            "--post=0.2:DESIRED_SPEED=2",
        ],
        Duration::from_secs(90),
    );
    assert_py(&r, "moos_record");
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

/// What the real uSimMarineV22 posts with no PID of its own, from `source`.
fn check_v22_without_pid(rec: &Value, source: &str, warp: f64) {
    let mail = rec["mail"].as_array().unwrap();
    let from: Vec<&Value> = mail.iter().filter(|m| m["source"] == source).collect();
    for var in [
        "NAV_X",
        "NAV_Y",
        "NAV_Z",
        "NAV_PITCH",
        "NAV_YAW",
        "TRUE_X",
        "TRUE_Y",
        "SIMULATION_MODE",
    ] {
        assert!(
            from.iter().any(|m| m["key"] == var),
            "{source} posts {var} (pMarinePIDV22's depth_control = false is not its setting): {:?}",
            mail.iter()
                .map(|m| m["key"].as_str().unwrap())
                .collect::<std::collections::BTreeSet<_>>()
        );
    }
    for var in ["DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR"] {
        assert!(
            !from.iter().any(|m| m["key"] == var),
            "{source} posts {var}: it took pMarinePIDV22's gains"
        );
    }
    // No controller of its own: DESIRED_SPEED 2 does not move it.
    let speeds: Vec<f64> = from
        .iter()
        .filter(|m| m["key"] == "NAV_SPEED")
        .map(|m| m["value"].as_f64().unwrap())
        .collect();
    assert!(
        speeds.len() > 5 && speeds.iter().all(|s| *s == 0.0),
        "{speeds:?}"
    );
    // The warp of the overloaded copy: MOOS time runs `warp` times real time.
    let xs: Vec<(f64, f64)> = from
        .iter()
        .filter(|m| m["key"] == "NAV_X")
        .map(|m| (m["time"].as_f64().unwrap(), m["recv"].as_f64().unwrap()))
        .collect();
    let (first, last) = (xs[0], xs[xs.len() - 1]);
    let rate = (last.0 - first.0) / (last.1 - first.1);
    assert!(
        (rate - warp).abs() < 0.35 * warp,
        "MOOS seconds per real second {rate}, expected {warp}"
    );
}

#[test]
fn pantler_argv_with_its_moos_plus_plus_copy_runs_db_and_vehicle() {
    if !have_pymoos("pantler_argv") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let usim = Path::new(usim());
    let (_db, port, copy) = start_db(dir.path(), usim, 4);
    // `Run = usim @ NewConsole = false ~ uSimMarineV22`, under
    // `pAntler alpha.moos --MOOSTimeWarp=4`
    let mut cmd = Command::new(usim);
    cmd.args([copy.to_str().unwrap(), "uSimMarineV22"]);
    let app = Proc::spawn("vehicle", cmd, dir.path().join("app.log"));
    let rec = record(dir.path(), port, 4, 3.0);
    check_v22_without_pid(&rec, "uSimMarineV22", 4.0);
    let log = app.log();
    assert!(
        !log.contains("WARN"),
        "no warning for s1_alpha's block (CommsTick included):\n{log}"
    );
}

#[test]
fn symlinks_named_usimmarinev22_and_moosdb_run_as_those_apps() {
    if !have_pymoos("symlinks") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for n in ["MOOSDB", "uSimMarineV22"] {
        std::os::unix::fs::symlink(usim(), bin.join(n)).unwrap();
    }
    let (_db, port, copy) = start_db(dir.path(), &bin.join("MOOSDB"), 2);
    // the unchanged `Run = uSimMarineV22 @ NewConsole = false` line
    let mut cmd = Command::new(bin.join("uSimMarineV22"));
    cmd.args([copy.to_str().unwrap(), "uSimMarineV22"]);
    let _app = Proc::spawn("vehicle", cmd, dir.path().join("app.log"));
    let rec = record(dir.path(), port, 2, 3.0);
    check_v22_without_pid(&rec, "uSimMarineV22", 2.0);
}

/// Whenever usim is started as a MOOS app and cannot run as one, it says
/// so on stderr and exits non-zero (pAntler reports every launch as
/// successful, so nothing else would tell).
#[test]
fn a_moos_app_that_cannot_start_says_so_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("uSimMarineV22");
    std::os::unix::fs::symlink(usim(), &link).unwrap();
    let run = |argv0: &Path, args: &[&str]| {
        let o = Command::new(argv0)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        (o.status, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    // InhibitMOOSParams: no mission file
    let (st, err) = run(&link, &[]);
    assert!(!st.success(), "{err}");
    assert!(
        err.contains("uSimMarineV22 cannot start as a MOOS app: no mission file"),
        "{err}"
    );
    // a mission copy that is not there
    let (st, err) = run(Path::new(usim()), &["gone.moos++", "uSimMarineV22"]);
    assert!(!st.success());
    assert!(err.contains("gone.moos++"), "{err}");
    // a mission without a simulator block
    std::fs::write(
        dir.path().join("helm.moos"),
        "ServerPort = 9150\nProcessConfig = pHelmIvP\n{\n  AppTick = 4\n}\n",
    )
    .unwrap();
    let (st, err) = run(Path::new(usim()), &["helm.moos", "uSimMarine"]);
    assert!(!st.success());
    assert!(
        err.contains("no `ProcessConfig = uSimMarine or uSimMarineV22` block"),
        "{err}"
    );
    // a mission that is not a file name usim knows (pAntler passes the
    // name it was given): read as the mission all the same
    std::fs::write(dir.path().join("mission.txt"), "ProcessConfig = x\n{\n}\n").unwrap();
    let (st, err) = run(Path::new(usim()), &["mission.txt", "uSimMarine"]);
    assert!(!st.success());
    assert!(
        err.contains("mission.txt") && err.contains("blocks found: x"),
        "{err}"
    );
}
