//! Obstacles (docs/obstacles.md): a replay that drives into a square gets
//! its `OBSTACLE_HIT` at the iteration the spec's kinematics predict and
//! stops there (classic and V22); a bad obstacle file is refused with its
//! line and key; a live `usim run` on a real mosquitto posts the start-up
//! set, the sensed points and the hit.
mod mqtt_util;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mqtt_util::{spawn_vehicle, topic, write_config, Broker, BrokerKind, Watcher};

/// The square's west edge, m east of the start, and the hit range, m.
const EDGE_X: f64 = 50.1;
const HIT_RANGE: f64 = 5.0;
/// Start speed and the thrust that holds it (thrust factor 20, docs/model.md §7), Δt.
const SPEED: f64 = 2.0;
const DT: f64 = 0.1;

fn write_mission(dir: &Path, model: &str, obstacles: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("square.txt"), obstacles).unwrap();
    let m = dir.join(format!("{model}.toml"));
    std::fs::write(
        &m,
        format!(
            "[mission]\nname = \"hit\"\ndt = {DT}\nduration = 40.0\n\n\
             [vehicle]\nname = \"a\"\nmodel = \"{model}\"\nstart_x = 0\nstart_y = 0\n\
             start_heading = 90\nstart_speed = {SPEED}\n\n\
             [vehicle.obstacles]\nfile = \"square.txt\"\nhit_range = {HIT_RANGE}\n\n\
             [[post]]\nt = 0.0\nvar = \"DESIRED_THRUST\"\nvalue = {}\n",
            SPEED * 20.0
        ),
    )
    .unwrap();
    m
}

fn square() -> String {
    format!("// one square\npoly = pts={{{EDGE_X},-10:70,-10:70,10:{EDGE_X},10}},label=box\n")
}

/// `usim replay MISSION -o out.csv`: (stderr, rows of (k, t, x)).
fn replay(mission: &Path) -> (String, Vec<(u64, f64, f64)>) {
    let out = mission.with_extension("csv");
    let o = Command::new(env!("CARGO_BIN_EXE_usim"))
        .arg("replay")
        .arg(mission)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let rows = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    (err, rows)
}

/// The hand computation (docs/obstacles.md §6): straight east at `SPEED`,
/// x = SPEED·DT·k after step k (docs/model.md §10); the first k with
/// EDGE_X − x < HIT_RANGE.
fn predicted_hit_k() -> u64 {
    let step = SPEED * DT;
    ((EDGE_X - HIT_RANGE) / step).floor() as u64 + 1
}

fn check_hit_and_halt(model: &str) {
    let d = tempfile::tempdir().unwrap();
    let (err, rows) = replay(&write_mission(d.path(), model, &square()));
    let k = predicted_hit_k();
    assert_eq!(k, 226, "45.1 / 0.2 = 225.5");
    let t = k as f64 * DT;
    assert!(
        err.contains(&format!(
            "obstacle hits: 1 (first: a met box at t = {t} s, iteration {k})"
        )),
        "{model}: {err}"
    );
    let x_at = |k: u64| rows.iter().find(|r| r.0 == k).unwrap().2;
    // still moving up to the hit, 0.2 m a step
    assert!(
        (x_at(k - 1) - 45.0).abs() < 1e-9,
        "{model}: {}",
        x_at(k - 1)
    );
    assert!((x_at(k) - 45.2).abs() < 1e-9, "{model}: {}", x_at(k));
    // OBSTACLE_HIT delivered before step k + 1: it never moves again
    for r in rows.iter().filter(|r| r.0 > k) {
        assert_eq!(r.2, x_at(k), "{model}: moved after the hit at k = {}", r.0);
    }
}

#[test]
fn replay_hits_the_square_when_the_kinematics_say_and_classic_stops() {
    check_hit_and_halt("classic");
}

#[test]
fn replay_hits_the_square_and_v22_holds_still() {
    check_hit_and_halt("v22");
}

#[test]
fn without_obstacles_the_run_is_unchanged_and_says_nothing() {
    let d = tempfile::tempdir().unwrap();
    let m = write_mission(d.path(), "classic", &square());
    let text = std::fs::read_to_string(&m).unwrap();
    let plain = d.path().join("plain.toml");
    let cut = text.find("[vehicle.obstacles]").unwrap();
    let end = text.find("[[post]]").unwrap();
    std::fs::write(&plain, format!("{}{}", &text[..cut], &text[end..])).unwrap();
    let (err, rows) = replay(&plain);
    assert!(!err.contains("obstacle"), "{err}");
    // straight on through where the square would be: 0.2 m a step
    let last = rows.last().unwrap();
    assert!((last.2 - 0.2 * last.0 as f64).abs() < 1e-6, "{last:?}");
}

#[test]
fn a_bad_obstacle_file_is_refused_with_its_line_and_key() {
    let d = tempfile::tempdir().unwrap();
    let bad = "// dented\n\npoly = pts={0,0:10,0:5,5:10,10:0,10},label=dent\n";
    let m = write_mission(d.path(), "classic", bad);
    let o = Command::new(env!("CARGO_BIN_EXE_usim"))
        .arg("replay")
        .arg(&m)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("square.txt:3: key `pts`: not a convex polygon"),
        "{err}"
    );
}

/// `usim run` with `post_points`: the start-up set (VIEW_POLYGON,
/// KNOWN_OBSTACLE), the points within sensor range, then OBSTACLE_HIT when
/// thrust drives it north into the square, after which the classic vehicle
/// stays where it met it.
#[test]
fn live_run_posts_obstacles_points_and_the_hit_on_mosquitto() {
    let Some(broker) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    let wait = Duration::from_secs(30);
    std::fs::write(
        broker.dir.path().join("obs.txt"),
        "poly = pts={-5,10:5,10:5,20:-5,20},label=box\n",
    )
    .unwrap();
    let cfg = write_config(
        broker.dir.path(),
        "alpha",
        &broker.url(),
        "[obstacles]\nfile = \"obs.txt\"\nhit_range = 1\nsensor_range = 30\npost_points = true\n",
    );
    let w = Watcher::vehicle(broker.port, "alpha");
    let _v = spawn_vehicle(&cfg, &[]);
    let view = w
        .wait_after(0, &topic("alpha", "VIEW_POLYGON"), wait, |_| true)
        .expect("no VIEW_POLYGON at start");
    assert!(
        view.payload
            .starts_with("pts={-5,10:5,10:5,20:-5,20},label=box,"),
        "{}",
        view.payload
    );
    let known = w
        .wait_after(0, &topic("alpha", "KNOWN_OBSTACLE"), wait, |_| true)
        .expect("no KNOWN_OBSTACLE at start");
    assert_eq!(known.payload, "pts={-5,10:5,10:5,20:-5,20},label=box");
    // at (0, 0) the nearest boundary point is (0, 10), 10 m off
    w.wait_after(0, &topic("alpha", "TRACKED_FEATURE_ALPHA"), wait, |p| {
        p == "x=0,y=10,key=box"
    })
    .expect("no TRACKED_FEATURE_ALPHA point at (0, 10)");
    assert!(
        w.since(0, &topic("alpha", "GIVEN_OBSTACLE")).is_empty(),
        "post_points: no GIVEN_OBSTACLE"
    );
    assert!(
        w.since(0, &topic("alpha", "OBSTACLE_HIT")).is_empty(),
        "no hit at rest"
    );
    w.post("alpha", "DESIRED_THRUST", "40");
    let hit = w
        .wait_after(
            0,
            &topic("alpha", "OBSTACLE_HIT"),
            Duration::from_secs(60),
            |_| true,
        )
        .expect("no OBSTACLE_HIT on the way north");
    assert_eq!(hit.payload, "true");
    let m = w.mark();
    w.wait_clock("alpha", m, 1.0);
    // inside the hit range (y > 9) and never at the edge: it stopped
    let y = w.latest_num(&topic("alpha", "NAV_Y")).expect("NAV_Y");
    assert!(
        y > 9.0 && y < 10.0,
        "NAV_Y {y}: should have stopped within 1 m of y = 10"
    );
    assert_eq!(
        w.since(0, &topic("alpha", "OBSTACLE_HIT")).len(),
        1,
        "one hit"
    );
}

/// `usim sweep` over the start's y: on the square's line (y = 0) the run
/// hits it once; 30 m north (20 m clear of the square, 15 m more than the
/// hit range) it never does. The summary's `obstacle_hits` column says so.
#[test]
fn a_sweep_counts_hits_per_run() {
    let d = tempfile::tempdir().unwrap();
    write_mission(d.path(), "classic", &square());
    let sweep = d.path().join("sweep.toml");
    std::fs::write(
        &sweep,
        "[sweep]\nmission = \"classic.toml\"\n\n[[var]]\nname = \"y0\"\nkind = \"grid\"\n\
         target = \"a.start_y\"\nvalues = [0.0, 30.0]\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_usim"))
        .arg("sweep")
        .arg(&sweep)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let text = String::from_utf8_lossy(&o.stdout);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "obstacle_hits")
        .expect("obstacle_hits column");
    let hits: Vec<(String, String)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[col].to_string())
        })
        .collect();
    assert_eq!(
        hits,
        [
            ("0".to_string(), "1".to_string()),
            ("30".to_string(), "0".to_string())
        ]
    );
}

/// `usim plot --obstacles`: the square is drawn as one light-grey polygon
/// in the track panel, with equal axes (its 19.9 m by 20 m in pixels in
/// the same ratio); without the flag there is none.
#[test]
fn plot_draws_the_obstacle_polygons() {
    let d = tempfile::tempdir().unwrap();
    let m = write_mission(d.path(), "classic", &square());
    replay(&m);
    let csv = m.with_extension("csv");
    let plot = |extra: &[&str]| {
        let svg = d.path().join("track.svg");
        let o = Command::new(env!("CARGO_BIN_EXE_usim"))
            .arg("plot")
            .arg(&csv)
            .args(["--panels", "track", "-o"])
            .arg(&svg)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(&svg).unwrap()
    };
    let obstacles = d.path().join("square.txt");
    let svg = plot(&["--obstacles", obstacles.to_str().unwrap()]);
    let grey: Vec<&str> = svg
        .split("<polygon")
        .skip(1)
        .filter(|p| p.contains("fill=\"#C8C8C8\""))
        .collect();
    assert_eq!(grey.len(), 1, "one obstacle polygon");
    let pts = grey[0]
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let xy: Vec<(f64, f64)> = pts
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    assert_eq!(xy.len(), 4);
    let (xs, ys): (Vec<f64>, Vec<f64>) = xy.into_iter().unzip();
    let w =
        xs.iter().cloned().fold(f64::MIN, f64::max) - xs.iter().cloned().fold(f64::MAX, f64::min);
    let h =
        ys.iter().cloned().fold(f64::MIN, f64::max) - ys.iter().cloned().fold(f64::MAX, f64::min);
    let want = (70.0 - EDGE_X) / 20.0;
    assert!(
        (w / h - want).abs() < 0.02,
        "{w} x {h} px, want ratio {want}"
    );
    assert!(
        !plot(&[]).contains("#C8C8C8"),
        "no obstacles without the flag"
    );
}
