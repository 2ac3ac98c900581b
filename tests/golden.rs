//! Golden tests: the reference runs of the real C++ uSimMarine
//! (`tests/golden/`) replayed by usim and
//! compared column by column with the tolerances of `tests/golden/README.md`.
//! Expected files are never regenerated from our own output.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use usim::model::geodesy::{GeoConverter, Geodesy};
use usim::model::trig::MathMode;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

struct Table {
    header: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Table {
    fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    }
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

fn tolerance(col: &str) -> Option<(f64, bool)> {
    // (tolerance, compared on the circle)
    Some(match col {
        "x" | "y" | "depth" | "gt_x" | "gt_y" | "drift_x" | "drift_y" | "altitude" => (1e-6, false),
        "speed" | "sog" | "pitch" | "yaw" | "rudder" | "thrust" | "elevator" => (1e-9, false),
        "heading" | "hog" | "nav_heading" => (1e-6, true),
        "lat" | "lon" => (1e-9, false),
        "nav_speed" => (0.01 + 1e-9, false),
        "k" => (0.0, false),
        // the CSV prints t rounded to the microsecond (docs/formats.md §3)
        "t" => (1e-6, false),
        _ => return None,
    })
}

fn close(a: f64, b: f64, tol: f64, circle: bool) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    let mut d = (a - b).abs();
    if circle {
        d = d.min(360.0 - d);
    }
    d <= tol
}

/// Replays `case` with the position step's trigonometry `math` and compares
/// it with the C++ run: within the README's tolerances for
/// `MathMode::Fast`, bit for bit for `MathMode::Libm` (uSimMarine's own
/// libm calls; `lat_utm`/`lon_utm` are ours, PROJ's, and keep 1e-8°).
/// Returns the largest difference seen per column.
fn check(case: &str, math: MathMode) -> HashMap<String, f64> {
    let dir = golden_dir();
    let mut mission =
        usim::mission::load(&dir.join(format!("{case}.toml"))).expect("mission loads");
    mission.vehicle.params.math = math;
    let mut out = Vec::new();
    usim::replay::run(&mission, &mut out, |_, _| {}).expect("replay runs");
    let ours = read_csv(&out);
    let theirs = read_csv(&std::fs::read(dir.join(format!("{case}.csv"))).unwrap());
    assert_eq!(ours.rows.len(), theirs.rows.len(), "{case}: row count");
    let (lat0, lon0) = mission
        .vehicle
        .params
        .origin
        .expect("golden missions set an origin");
    let utm = GeoConverter::new(lat0, lon0, Geodesy::Utm).unwrap();
    let mut worst: HashMap<String, f64> = HashMap::new();
    let mut failures = Vec::new();
    for (i, (o, t)) in ours.rows.iter().zip(&theirs.rows).enumerate() {
        for (j, name) in theirs.header.iter().enumerate() {
            let expected = t[j];
            let (got, (tol, circle)) = match name.as_str() {
                "lat_utm" | "lon_utm" => {
                    let (x, y) = (o[ours.col("x")], o[ours.col("y")]);
                    let (la, lo) = utm.to_lat_lon(x, y);
                    (if name == "lat_utm" { la } else { lo }, (1e-8, false))
                }
                "t" => (o[ours.col("t")], (1e-6, false)),
                other => match tolerance(other) {
                    Some(_) if math == MathMode::Libm => (o[ours.col(other)], (0.0, false)),
                    Some(tc) => (o[ours.col(other)], tc),
                    None => continue,
                },
            };
            if !close(got, expected, tol, circle) {
                failures.push(format!(
                    "{case}: row {i} (k={}), column {name}: expected {expected:?}, got {got:?}",
                    t[0]
                ));
            } else if got.is_finite() {
                let e = worst.entry(name.clone()).or_insert(0.0);
                *e = e.max((got - expected).abs());
            }
        }
        if failures.len() > 10 {
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "{math:?}: first differences:\n{}",
        failures.join("\n")
    );
    worst
}

macro_rules! golden {
    ($($name:ident => $case:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            check($case, MathMode::Libm);
            let worst = check($case, MathMode::Fast);
            eprintln!("{} (math = fast), largest differences: {worst:?}", $case);
        }
    )*};
}

golden! {
    straight_accel_decel_classic => "01_straight_accel_decel.classic",
    straight_accel_decel_v22 => "01_straight_accel_decel.v22",
    hard_turns_turn_loss_classic => "02_hard_turns_turn_loss.classic",
    hard_turns_turn_loss_v22 => "02_hard_turns_turn_loss.v22",
    thrust_map_interp_sweep_classic => "04_thrust_map_interp_sweep.classic",
    thrust_map_interp_sweep_v22 => "04_thrust_map_interp_sweep.v22",
    drift_vector_gusts_classic => "10_drift_vector_gusts.classic",
    drift_vector_gusts_v22 => "10_drift_vector_gusts.v22",
    dive_elevator_buoyancy_classic => "12_dive_elevator_buoyancy.classic",
    dive_elevator_buoyancy_v22 => "12_dive_elevator_buoyancy.v22",
    differential_thrust_classic => "19_differential_thrust.classic",
    differential_thrust_v22 => "19_differential_thrust.v22",
}

#[test]
fn every_golden_case_has_a_test() {
    let mut cases: Vec<String> = std::fs::read_dir(golden_dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "toml")
                .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    cases.sort();
    assert_eq!(
        cases.len(),
        12,
        "add a golden! line for each new reference run: {cases:?}"
    );
}

#[test]
fn replay_is_byte_identical() {
    let dir = golden_dir();
    let mission = usim::mission::load(&dir.join("10_drift_vector_gusts.classic.toml")).unwrap();
    let mut a = Vec::new();
    let mut b = Vec::new();
    usim::replay::run(&mission, &mut a, |_, _| {}).unwrap();
    usim::replay::run(&mission, &mut b, |_, _| {}).unwrap();
    assert_eq!(a, b);
}

/// The replay on two threads (`usim replay -o FILE`: rows made and written
/// on a second thread) writes the same bytes as on one, for every golden
/// case in both math modes and every shipped mission (one vehicle and
/// fleets; CSV and MCAP), and returns the same summary.
#[test]
fn two_threads_write_the_same_bytes_as_one() {
    use usim::replay::{Format, Threads};
    let mut missions = Vec::new();
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            for math in [MathMode::Fast, MathMode::Libm] {
                let mut m = usim::mission::load(&p).unwrap();
                m.vehicle.params.math = math;
                missions.push((format!("{} {math:?}", p.display()), m));
            }
        }
    }
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("missions");
    for entry in std::fs::read_dir(shipped).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            missions.push((p.display().to_string(), usim::mission::load(&p).unwrap()));
        }
    }
    assert!(missions.len() >= 30, "{} missions", missions.len());
    let mut fleets = 0;
    for (name, m) in &missions {
        fleets += usize::from(m.vehicle_count() > 1);
        for format in [Format::Csv, Format::Mcap] {
            let (s1, one) = replay_on(Threads::One, m, format);
            let (s2, two) = replay_on(Threads::Two, m, format);
            assert_eq!(s1, s2, "{name} {format:?}: summary");
            assert!(s1.rows > 0, "{name}");
            assert!(
                one == two,
                "{name} {format:?}: {} bytes on one thread, {} on two",
                one.len(),
                two.len()
            );
        }
        if m.vehicle_count() == 1 {
            // and the same bytes as `replay::run` (the stdout path)
            let mut plain = Vec::new();
            usim::replay::run(m, &mut plain, |_, _| {}).unwrap();
            let (_, two) = replay_on(Threads::Two, m, Format::Csv);
            assert!(plain == two, "{name}: run vs two threads");
        }
    }
    assert!(fleets >= 1, "a fleet mission is among them");
}

/// `m` replayed into memory in `format` on `threads`: the summary and bytes.
fn replay_on(
    threads: usim::replay::Threads,
    m: &usim::mission::Mission,
    format: usim::replay::Format,
) -> (usim::replay::Summary, Vec<u8>) {
    let mut buf = std::io::Cursor::new(Vec::new());
    let s = usim::replay::run_into_on(threads, m, format, &mut buf, None, |_, _| {}, |_, _, _| {})
        .unwrap();
    (s, buf.into_inner())
}
