//! Golden tests of the uSimMarineV22 extras: the reference runs of the real
//! C++ V22 app (`tests/golden_v22/`, see its README) replayed by usim; the
//! 23 base CSV columns, the V22 columns (PID outputs, ground truth, turn
//! radius, wormhole transparency, sailing cap) and the posts log, variable
//! by variable per iteration. With `math = "libm"` every number must be
//! bit-identical; with `math = "fast"` within the README's tolerances.
//! Expected files are never regenerated from our own output.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use usim::model::trig::MathMode;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden_v22")
}

struct Table {
    header: Vec<String>,
    rows: Vec<Vec<f64>>,
}

fn read_csv(data: &[u8]) -> Table {
    let mut r = csv::Reader::from_reader(data);
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|rec| {
            rec.unwrap()
                .iter()
                .map(|v| {
                    v.parse::<f64>()
                        .unwrap_or_else(|_| panic!("bad number {v}"))
                })
                .collect()
        })
        .collect();
    Table { header, rows }
}

/// (tolerance, on the circle) of a CSV column (README of the runs).
fn tolerance(col: &str) -> (f64, bool) {
    match col {
        "x" | "y" | "depth" | "gt_x" | "gt_y" | "drift_x" | "drift_y" | "altitude" => (1e-6, false),
        "heading" | "hog" | "nav_heading" | "gt_heading" => (1e-6, true),
        "nav_speed" => (0.01 + 1e-9, false),
        "k" | "t" => (1e-12, false),
        _ => (1e-9, false),
    }
}

/// Tolerance of a posted number, by the column it corresponds to.
fn post_tolerance(var: &str) -> (f64, bool) {
    let suffix = |s: &str| var.ends_with(s);
    if suffix("_HEADING") || suffix("_HEADING_OVER_GROUND") {
        (1e-6, true)
    } else if suffix("_X")
        || suffix("_Y")
        || suffix("_DEPTH")
        || suffix("_Z")
        || suffix("_ALTITUDE")
    {
        (1e-6, false)
    } else if suffix("_SPEED") {
        (0.01 + 1e-9, false)
    } else {
        (1e-9, false)
    }
}

fn close(a: f64, b: f64, tol: f64, circle: bool, exact: bool) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if exact {
        return a == b;
    }
    let mut d = (a - b).abs();
    if circle {
        d = d.min(360.0 - d);
    }
    d <= tol
}

#[derive(Debug, Clone, PartialEq)]
struct Post {
    var: String,
    kind: String,
    value: String,
}

fn read_posts(data: &[u8]) -> BTreeMap<u64, Vec<Post>> {
    let mut r = csv::Reader::from_reader(data);
    let mut out: BTreeMap<u64, Vec<Post>> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        out.entry(rec[0].parse().unwrap()).or_default().push(Post {
            var: rec[2].to_string(),
            kind: rec[3].to_string(),
            value: rec[4].to_string(),
        });
    }
    out
}

/// Replay `case` and compare the first `max_k` iterations; returns the list
/// of differences (empty = pass).
fn check(case: &str, math: MathMode, max_k: u64) -> Vec<String> {
    let exact = math == MathMode::Libm;
    let d = dir();
    let mut mission =
        usim::mission::load(&d.join(format!("{case}.v22.toml"))).expect("mission loads");
    assert!(
        mission.vehicle.warnings.is_empty(),
        "{case}: {:?}",
        mission.vehicle.warnings
    );
    mission.vehicle.params.math = math;
    let mut csv_out = Vec::new();
    let mut posts_out = Vec::new();
    let mut extra: Vec<[f64; 8]> = Vec::new();
    usim::replay::run_with(
        &mission,
        &mut csv_out,
        Some(&mut posts_out),
        |_, _| {},
        |_, _, v| {
            let c = v.v22_columns();
            extra.push([
                c.desired_rudder,
                c.desired_thrust,
                c.desired_elevator,
                c.gt_heading,
                c.gt_speed,
                c.turn_radius,
                c.transp,
                c.sail_cap,
            ]);
        },
    )
    .expect("replay runs");
    let ours = read_csv(&csv_out);
    let theirs = read_csv(&std::fs::read(d.join(format!("{case}.v22.csv"))).unwrap());
    let mut failures = Vec::new();
    assert_eq!(ours.rows.len(), theirs.rows.len(), "{case}: row count");
    let extra_names = [
        "desired_rudder",
        "desired_thrust",
        "desired_elevator",
        "gt_heading",
        "gt_speed",
        "turn_radius",
        "transp",
        "sail_cap",
    ];
    for (i, t) in theirs.rows.iter().enumerate() {
        if i as u64 > max_k {
            break;
        }
        for (j, name) in theirs.header.iter().enumerate() {
            let got = if let Some(c) = ours.header.iter().position(|h| h == name) {
                ours.rows[i][c]
            } else if let Some(e) = extra_names.iter().position(|h| h == name) {
                if i == 0 && e < 3 {
                    continue; // no iteration yet
                }
                extra[i][e]
            } else {
                panic!("{case}: unknown column {name}");
            };
            // the CSV time column may be rounded by the writer
            let (tol, circle) = tolerance(name);
            let ex = exact && name != "t";
            if !close(got, t[j], tol, circle, ex) {
                failures.push(format!(
                    "{case}: row {i}, column {name}: expected {:?}, got {got:?}",
                    t[j]
                ));
            }
        }
        if failures.len() > 10 {
            return failures;
        }
    }
    let ours = read_posts(&posts_out);
    let theirs = read_posts(&std::fs::read(d.join(format!("{case}.v22.posts.csv"))).unwrap());
    let ks: std::collections::BTreeSet<u64> = ours.keys().chain(theirs.keys()).copied().collect();
    for k in ks.into_iter().filter(|k| *k <= max_k) {
        let (o, t) = (
            ours.get(&k).cloned().unwrap_or_default(),
            theirs.get(&k).cloned().unwrap_or_default(),
        );
        let ov: Vec<&str> = o.iter().map(|p| p.var.as_str()).collect();
        let tv: Vec<&str> = t.iter().map(|p| p.var.as_str()).collect();
        if ov != tv {
            failures.push(format!("{case}: k={k}: posted {ov:?}, expected {tv:?}"));
        } else {
            for (a, b) in o.iter().zip(&t) {
                let ok = a.kind == b.kind
                    && if b.kind == "s" {
                        a.value == b.value
                    } else {
                        let (x, y) = (a.value.parse::<f64>(), b.value.parse::<f64>());
                        let (tol, circle) = post_tolerance(&b.var);
                        matches!((x, y), (Ok(x), Ok(y)) if close(x, y, tol, circle, exact))
                    };
                if !ok {
                    failures.push(format!(
                        "{case}: k={k}: {} = {} ({}), expected {} ({})",
                        b.var, a.value, a.kind, b.value, b.kind
                    ));
                }
            }
        }
        if failures.len() > 20 {
            break;
        }
    }
    failures
}

macro_rules! golden_v22 {
    ($($name:ident => $case:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            let f = check($case, MathMode::Libm, u64::MAX);
            assert!(f.is_empty(), "math = libm, bit for bit:\n{}", f.join("\n"));
            // math = "fast": within the README's tolerances over the first
            // 10 s (the PID loops amplify ulp differences later on)
            let f = check($case, MathMode::Fast, 100);
            assert!(f.is_empty(), "math = fast, first 10 s:\n{}", f.join("\n"));
        }
    )*};
}

golden_v22! {
    pid_heading_steps => "01_pid_heading_steps",
    pid_depth_cascade => "03_pid_depth_cascade",
    turn_radius_max_speed => "05_turn_radius_max_speed",
    sailing_polar_wind => "11_sailing_polar_wind",
}

#[test]
fn every_reference_run_has_a_test() {
    let n = std::fs::read_dir(dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".v22.toml")
        })
        .count();
    assert_eq!(n, 4, "add a golden_v22! line for each new reference run");
}

#[test]
fn replay_with_posts_is_byte_identical() {
    let m = usim::mission::load(&dir().join("01_pid_heading_steps.v22.toml")).unwrap();
    let run = || {
        let (mut c, mut p) = (Vec::new(), Vec::new());
        usim::replay::run_with(&m, &mut c, Some(&mut p), |_, _| {}, |_, _, _| {}).unwrap();
        (c, p)
    };
    assert_eq!(run(), run());
}
