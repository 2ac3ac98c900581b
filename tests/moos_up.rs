//! `usim moos-up`: one MOOSDB and one vehicle per mission file from one
//! command, each vehicle in its own community (as MOOS-IvP multi-vehicle
//! missions run), under MOOSTimeWarp 50. "Keeps up" is measured, not
//! timed: pymoos clients (tests/py/moos_up_check.py) count each
//! community's NAV_X per MOOS second, and the vehicles' own summaries give
//! iterations per MOOS second; both must reach at least 40 % of AppTick
//! (a loaded 2-core machine may take the rest) and the message times must
//! agree with the clients' warped clocks.
mod moos_util;
mod mqtt_util;

use std::process::Command;
use std::time::Duration;

use moos_util::*;
use serde_json::Value;

const BLOCK: &str = "  AppTick = 10\n  start_x = 0\n  start_y = 0\n  start_heading = 0\n  \
    start_speed = 2\n  prefix = NAV\n  thrust_map = 0:0, 100:5\n";

#[test]
fn two_communities_from_one_command_keep_up_at_warp_50() {
    if !have_pymoos("two_communities_from_one_command_keep_up_at_warp_50") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let warp = 50.0;
    let stats = dir.path().join("stats.json");
    // The missions name the MOOSDB ports, so moos-up is told them: fresh
    // ones again if another test took one first.
    let (mut up, pa, pb) = on_fresh_port("moos-up", |pa| {
        let pb = free_port();
        let a = mission(dir.path(), "alpha", pa, warp, "uSimMarine", BLOCK);
        let b = mission(dir.path(), "bravo", pb, warp, "uSimMarine", BLOCK);
        let mut cmd = Command::new(usim());
        cmd.arg("moos-up")
            .arg(&a)
            .arg(&b)
            .arg("--stats")
            .arg(&stats);
        let mut up = Proc::spawn("moos-up", cmd, dir.path().join(format!("up-{pa}-{pb}.log")));
        up.wait_listening(pa, START)?;
        up.wait_listening(pb, START)?;
        Ok((up, pa, pb))
    });
    let connected = |up: &Proc| up.log().matches("connected to the MOOSDB").count() >= 2;
    let t0 = std::time::Instant::now();
    while !connected(&up) && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(connected(&up), "{}", up.log());
    let r = run_py(
        "moos_up_check.py",
        &["50", "4", &pa.to_string(), &pb.to_string()],
        Duration::from_secs(120),
    );
    assert_py(&r, "moos_up_check");
    // The result is the last line: the MOOS client library may print its
    // own lines first (e.g. "ConnectToServer returns early").
    let stdout = String::from_utf8_lossy(&r.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    let res: Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("moos_up_check.py printed no JSON result ({e}):\n{stdout}"));
    for p in [pa, pb] {
        let c = &res[p.to_string()];
        let n = c["count"].as_f64().unwrap();
        let span = c["last"].as_f64().unwrap() - c["first"].as_f64().unwrap();
        let rate = (n - 1.0) / span;
        println!("port {p}: {n} NAV_X over {span:.1} MOOS s = {rate:.2} per MOOS s (AppTick 10)");
        assert!(
            span > 50.0,
            "at warp 50, 4 s of counting span > 50 MOOS s: {c}"
        );
        assert!(
            (4.0..=10.5).contains(&rate),
            "NAV_X per MOOS second {rate}: {c}"
        );
        // Times are warped MOOS time (a helm's ok_skew is 60 s).
        assert!(c["max_clock_diff"].as_f64().unwrap() < 60.0, "{c}");
    }
    up.signal(libc::SIGTERM);
    assert!(
        up.wait_exit(Duration::from_secs(30))
            .is_some_and(|s| s.success()),
        "{}",
        up.log()
    );
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let vs = s.as_array().unwrap();
    assert_eq!(vs.len(), 2);
    for v in vs {
        let per = v["iterations"].as_f64().unwrap() / v["moos_seconds"].as_f64().unwrap();
        println!("vehicle summary {v}: {per:.2} iterations per MOOS s");
        assert!((4.0..=10.5).contains(&per), "{v}");
    }
}
