//! `usim plot` checked on the rendered SVG (roxmltree), for issue 24's plot
//! items: the heading of a run that circles through north has no jump of
//! more than 180 degrees; a surface run has no depth panel (a dive has
//! one); heading arrows are spaced by distance along the track (a vehicle
//! that waits before it moves does not pile them up); the actuator axis is
//! "percent of full"; `--labels` names the lines.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn usim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .output()
        .unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Replay a kayak mission with these posts `(t, var, value)` and return the CSV path.
fn run(dir: &Path, name: &str, duration: f64, posts: &[(f64, &str, f64)]) -> PathBuf {
    let mut m = format!(
        "[mission]\nvehicle = {:?}\ndt = 0.1\nduration = {duration}\n",
        root().join("configs/kayak.toml").to_str().unwrap()
    );
    for (t, var, v) in posts {
        m.push_str(&format!(
            "[[post]]\nt = {t}\nvar = \"{var}\"\nvalue = {v}\n"
        ));
    }
    let mission = dir.join(format!("{name}.toml"));
    std::fs::write(&mission, m).unwrap();
    let csv = dir.join(format!("{name}.csv"));
    let o = usim(&[
        "replay",
        mission.to_str().unwrap(),
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    csv
}

fn plot(inputs: &[&Path], extra: &[&str], out: &Path) -> (String, String) {
    let mut args: Vec<&str> = vec!["plot"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    args.extend(extra);
    let o = usim(&args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    (std::fs::read_to_string(out).unwrap(), err)
}

fn texts(svg: &str) -> Vec<(String, f64)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            let y = n
                .attribute("y")
                .and_then(|y| y.parse().ok())
                .unwrap_or(f64::NAN);
            (n.text().unwrap_or("").trim().to_string(), y)
        })
        .collect()
}

fn points(attr: &str) -> Vec<(f64, f64)> {
    attr.split_whitespace()
        .filter_map(|p| {
            let (x, y) = p.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

#[test]
fn heading_through_north_has_no_jump() {
    let dir = tempfile::tempdir().unwrap();
    // thrust on, rudder hard over: the kayak circles, crossing north many times
    let csv = run(
        dir.path(),
        "circles",
        240.0,
        &[(1.0, "DESIRED_THRUST", 60.0), (5.0, "DESIRED_RUDDER", 40.0)],
    );
    let raw = std::fs::read_to_string(&csv).unwrap();
    let crossings = raw
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(5).unwrap().parse::<f64>().unwrap())
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| (w[1] - w[0]).abs() > 180.0)
        .count();
    assert!(crossings >= 3, "the run crosses north ({crossings} times)");
    let svg_path = dir.path().join("h.svg");
    let (svg, _) = plot(&[&csv], &["--panels", "heading"], &svg_path);
    // The value axis: tick labels (numbers) at the left, their y pixel.
    let ticks: Vec<(f64, f64)> = texts(&svg)
        .into_iter()
        .filter_map(|(t, y)| Some((t.parse::<f64>().ok()?, y)))
        .filter(|(_, y)| y.is_finite())
        .collect();
    // y ticks are the labels whose value changes with their y position
    let mut ys: Vec<(f64, f64)> = ticks.clone();
    ys.sort_by(|a, b| a.1.total_cmp(&b.1));
    ys.dedup_by(|a, b| a.1 == b.1);
    let (hi, lo) = (ys.first().unwrap(), ys.last().unwrap());
    let per_px = (hi.0 - lo.0) / (lo.1 - hi.1);
    assert!(per_px > 0.0, "value axis: {ys:?}");
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let lines: Vec<Vec<(f64, f64)>> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| points(n.attribute("points").unwrap_or("")))
        .filter(|p| p.len() > 100)
        .collect();
    assert_eq!(lines.len(), 1, "one heading line, not pieces");
    let max_jump = lines[0]
        .windows(2)
        .map(|w| (w[1].1 - w[0].1).abs() * per_px)
        .fold(0.0, f64::max);
    assert!(max_jump < 180.0, "largest step {max_jump} degrees");
}

#[test]
fn surface_run_has_no_depth_panel_and_labels_name_the_lines() {
    let dir = tempfile::tempdir().unwrap();
    let csv = run(
        dir.path(),
        "surface",
        60.0,
        &[(1.0, "DESIRED_THRUST", 50.0)],
    );
    let out = dir.path().join("s.svg");
    let (svg, err) = plot(&[&csv], &["--labels", "henry"], &out);
    assert!(err.contains("no depth panel"), "{err}");
    let t: Vec<String> = texts(&svg).into_iter().map(|(t, _)| t).collect();
    assert!(!t.iter().any(|t| t.starts_with("depth")), "{t:?}");
    assert!(
        t.iter().any(|t| t == "heading (degrees, unwrapped)"),
        "{t:?}"
    );
    assert!(
        t.iter().any(|t| t == "actuators (percent of full)"),
        "{t:?}"
    );
    assert!(t.iter().any(|t| t == "henry"), "the label: {t:?}");
    // a dive keeps it
    let dive = dir.path().join("dive.csv");
    let o = usim(&[
        "replay",
        root().join("missions/dive.toml").to_str().unwrap(),
        "-o",
        dive.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let (svg, _) = plot(&[&dive], &[], &dir.path().join("d.svg"));
    assert!(texts(&svg).iter().any(|(t, _)| t == "depth (m)"));
    // --labels must match the runs
    let o = usim(&[
        "plot",
        csv.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--labels",
        "a,b",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--labels gives 2 names for 1 run"));
}

#[test]
fn heading_arrows_are_spaced_along_the_track() {
    let dir = tempfile::tempdir().unwrap();
    // 200 s waiting at the start, then 60 s of motion
    let csv = run(
        dir.path(),
        "wait",
        260.0,
        &[
            (200.0, "DESIRED_THRUST", 60.0),
            (230.0, "DESIRED_RUDDER", 20.0),
        ],
    );
    let (svg, _) = plot(&[&csv], &["--panels", "track"], &dir.path().join("t.svg"));
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let centres: Vec<(f64, f64)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polygon"))
        .map(|n| {
            let p = points(n.attribute("points").unwrap_or(""));
            let k = p.len().max(1) as f64;
            (
                p.iter().map(|q| q.0).sum::<f64>() / k,
                p.iter().map(|q| q.1).sum::<f64>() / k,
            )
        })
        .collect();
    assert!(centres.len() >= 10, "{} arrows", centres.len());
    let closest = centres
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).hypot(w[1].1 - w[0].1))
        .fold(f64::INFINITY, f64::min);
    // by rows, three quarters of them would sit on the start point
    assert!(closest > 5.0, "arrows {closest} px apart");
}

/// Issue 40 item 6: an alog of a vehicle with `[sensors]` (σ 2 m GPS and a
/// 10 s dropout, `faults = ["gps=off,at=20,for=10"]`) has NAV_X/NAV_Y (the
/// sensed fix) and TRUE_X/TRUE_Y: the plot draws the sensed track in teal
/// next to the true one, in two pieces (the dropout is a gap) holding 60 s
/// less the 10 s dropout at 10 Hz of fixes, each off the true track; with
/// `--env` the legend names the config's wind and sea. An alog without
/// sensors has no sensed track, and no legend without `--env`.
#[test]
fn the_sensed_track_and_the_wind_and_sea_are_in_the_plot() {
    let d = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(root().join("configs/kayak_sea_sensors.toml")).unwrap();
    let cfg = d.path().join("kayak_sensed.toml");
    // [sensors] is the file's last table
    std::fs::write(
        &cfg,
        format!("{base}\nfaults = [\"gps=off,at=20,for=10\"]\n"),
    )
    .unwrap();
    let alog = |name: &str, vehicle: &Path| {
        let mission = d.path().join(format!("{name}.toml"));
        std::fs::write(
            &mission,
            format!(
                "[mission]\nvehicle = {:?}\ndt = 0.1\nduration = 60\n\
                 [[post]]\nt = 0\nvar = \"DESIRED_THRUST\"\nvalue = 60\n\
                 [[post]]\nt = 5\nvar = \"DESIRED_RUDDER\"\nvalue = 15\n",
                vehicle.to_str().unwrap()
            ),
        )
        .unwrap();
        let out = d.path().join(format!("{name}.alog"));
        let o = usim(&[
            "replay",
            mission.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let sensed = alog("sensed", &cfg);
    let svg_path = d.path().join("sensed.svg");
    let (svg, _) = plot(
        &[&sensed],
        &["--panels", "track", "--env", cfg.to_str().unwrap()],
        &svg_path,
    );
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let lines = |teal: bool| -> Vec<Vec<(f64, f64)>> {
        doc.descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .filter(|n| (n.attribute("stroke") == Some("#0B7285")) == teal)
            .map(|n| points(n.attribute("points").unwrap_or("")))
            .collect()
    };
    let pieces = lines(true);
    assert_eq!(pieces.len(), 2, "sensed track in {} pieces", pieces.len());
    let fixes: usize = pieces.iter().map(Vec::len).sum();
    // 601 rows (t = 0 … 60 s) less the 100 of the dropout; the first
    // posting of the fix is at the first step
    assert!((495..=505).contains(&fixes), "{fixes} sensed fixes");
    let truth: Vec<(f64, f64)> = lines(false)
        .into_iter()
        .filter(|l| l.len() > 1)
        .flatten()
        .collect();
    let near = |p: &(f64, f64)| {
        truth
            .iter()
            .map(|q| (p.0 - q.0).hypot(p.1 - q.1))
            .fold(f64::INFINITY, f64::min)
    };
    let off: Vec<f64> = pieces.iter().flatten().map(near).collect();
    let moved = off.iter().filter(|d| **d > 0.5).count();
    assert!(
        moved * 10 > off.len() * 8,
        "only {moved} of {} fixes off the true track",
        off.len()
    );
    let words: Vec<String> = texts(&svg).into_iter().map(|(t, _)| t).collect();
    // configs/kayak_sea_sensors.toml: wind 8 m/s from 60°, sea Hs 1 m, Tp 5 s from 45°
    for want in [
        "wind 8.0 m/s from 060°",
        "sea Hs 1.00 m, Tp 5.0 s from 045°",
        "— true track   --- sensed fix (GPS; gaps: dropouts)",
    ] {
        assert!(words.iter().any(|w| w == want), "no {want:?} in {words:?}");
    }

    let plain = alog("plain", &root().join("configs/kayak.toml"));
    let (svg, _) = plot(
        &[&plain],
        &["--panels", "track"],
        &d.path().join("plain.svg"),
    );
    assert!(!svg.contains("#0B7285"), "a sensed track without sensors");
    assert!(
        !svg.contains("wind ") && !svg.contains("sea Hs"),
        "a legend without --env"
    );
    // --env without [wind] or [sea] is refused, naming the file
    let o = usim(&[
        "plot",
        plain.to_str().unwrap(),
        "-o",
        d.path().join("x.svg").to_str().unwrap(),
        "--env",
        root().join("configs/kayak.toml").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("kayak.toml: no [wind] or [sea] table is on"),
        "{err}"
    );
}
