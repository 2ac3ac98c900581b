//! The blocked fleet replay (`usim::replay::run_fleet_recorded`: chunks of
//! vehicles stepped through several iterations at a time, the observer run
//! afterwards on recorded poses) against the loop that steps the whole
//! fleet once per iteration (`usim::replay::run_fleet`, whose rows the
//! goldens and tests/fleet_replay.rs pin): every vehicle's whole state
//! after every iteration, the encounter events, the dropped posts and the
//! progress calls are the same, with posts due at iterations that split
//! blocks, an uneven timing pattern, and more vehicles than a chunk.
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::Path;

use usim::encounter::{observe_fleet, observe_poses, observe_split, Event, Motion, Pose, Tracker};
use usim::mission::Mission;
use usim::model::Vehicle;
use usim::replay::NoRows;

/// `n` kayaks in a tight ring (6 m apart: near misses, collisions and
/// clears), on an uneven timing pattern, with posts at awkward times:
/// thrust and rudder at 0.0 s in reverse vehicle order (file order), a
/// rudder change at 0.37 s (between iterations), resets at 1.0 s and
/// 2.2 s of some vehicles, timed thrust (`SET`) for one vehicle, a
/// negative `WATER_DEPTH` (refused: dropped) at 1.0 s, and several posts
/// due at one iteration.
fn mission(n: usize, steps: u64) -> Mission {
    let mut t = format!(
        "[mission]\ndt_pattern = [0.1, 0.25, 0.05, 0.3]\nsteps = {steps}\n\
         near_miss = 12.0\ncollision = 3.0\n"
    );
    let r = 6.0 * n as f64 / std::f64::consts::TAU;
    for i in 0..n {
        let timed = if i == 2 {
            "[vehicle.actuators.DESIRED_THRUST]\ninterpolation = \"timed\"\n"
        } else {
            ""
        };
        let a = i as f64 / n as f64 * std::f64::consts::TAU;
        let _ = write!(
            t,
            "[[vehicle]]\nname = \"v{i}\"\nstart_pos = \"x={}, y={}, heading={}, speed={}\"\n\
             thrust_map = \"-100:-1.2, -50:-0.6, 20:0.5, 50:1.2, 80:1.8, 100:2.0\"\n\
             turn_rate = 60\nmax_acceleration = 0.4\nmax_deceleration = 0.5\n{timed}",
            r * a.cos(),
            r * a.sin(),
            (i * 97) % 360,
            (i % 4) as f64 * 0.5
        );
    }
    for i in (0..n).rev() {
        let _ = write!(
            t,
            "[[post]]\nvehicle = \"v{i}\"\nt = 0.0\nvar = \"DESIRED_THRUST\"\nvalue = {}\n\
             [[post]]\nvehicle = \"v{i}\"\nt = 0.0\nvar = \"DESIRED_RUDDER\"\nvalue = {}\n",
            30 + (i * 7) % 60,
            (i % 31) as f64 - 15.0
        );
    }
    for i in (0..n).step_by(7) {
        let _ = write!(
            t,
            "[[post]]\nvehicle = \"v{i}\"\nt = 0.37\nvar = \"DESIRED_RUDDER\"\nvalue = {}\n",
            20.0 - (i % 41) as f64
        );
    }
    for (i, at) in [(0, 1.0), (n / 2, 1.0), (n - 1, 2.2), (n / 3, 2.2)] {
        let _ = write!(
            t,
            "[[post]]\nvehicle = \"v{i}\"\nt = {at}\nvar = \"USM_RESET\"\n\
             value = \"x=1, y=2, heading=45, speed=1\"\n"
        );
    }
    // A timed thrust plan from 0.37 s (shaping across blocks) and a
    // negative water depth at 1.0 s (refused).
    let _ = write!(
        t,
        "[[post]]\nvehicle = \"v2\"\nt = 0.37\nvar = \"SET\"\n\
         value = '[\"DESIRED_THRUST\", \"ClearAll\", [[90, 2.0], [10, 4.0]]]'\n\
         [[post]]\nvehicle = \"v1\"\nt = 1.0\nvar = \"WATER_DEPTH\"\nvalue = -5.0\n"
    );
    usim::mission::parse(Path::new("blocked.toml"), &t).expect("mission parses")
}

/// A hash of the vehicle's whole state (its `Debug` text).
fn state(v: &Vehicle) -> u64 {
    let mut h = DefaultHasher::new();
    format!("{v:?}").hash(&mut h);
    h.finish()
}

/// What both loops report: per iteration `(k, t, states)`, the encounter
/// events, the summary and the progress calls.
#[derive(Debug, PartialEq)]
struct Seen {
    steps: Vec<(u64, f64, Vec<u64>)>,
    events: Vec<Event>,
    summary: usim::replay::Summary,
    progress: Vec<(u64, u64)>,
}

/// The loop that steps the whole fleet once per iteration.
fn unblocked(m: &Mission) -> Seen {
    let mut tr = Tracker::new(m.encounters.expect("ranges"));
    let (mut steps, mut events, mut progress) = (Vec::new(), Vec::new(), Vec::new());
    let summary = usim::replay::run_fleet(
        m,
        NoRows,
        None,
        |k, n| progress.push((k, n)),
        |k, t, vs| {
            steps.push((k, t, vs.iter().map(state).collect()));
            observe_fleet(&mut tr, t, vs, |e| events.push(e));
        },
    )
    .unwrap();
    Seen {
        steps,
        events,
        summary,
        progress,
    }
}

/// The blocked loop, recording each vehicle's pose and state hash.
fn blocked(m: &Mission) -> Seen {
    let mut tr = Tracker::new(m.encounters.expect("ranges"));
    let (mut steps, mut events, mut progress) = (Vec::new(), Vec::new(), Vec::new());
    let mut poses = Vec::new();
    let summary = usim::replay::run_fleet_recorded(
        m,
        NoRows,
        None,
        |k, n| progress.push((k, n)),
        |v| (Pose::of(v), state(v)),
        |k, t, recs: &[(Pose, u64)]| {
            steps.push((k, t, recs.iter().map(|r| r.1).collect()));
            poses.clear();
            poses.extend(recs.iter().map(|r| r.0));
            observe_poses(&mut tr, t, &poses, |e| events.push(e));
        },
    )
    .unwrap();
    Seen {
        steps,
        events,
        summary,
        progress,
    }
}

/// The blocked loop with the records in two arrays (positions; motions
/// and state hashes), as sweeps and the scaling script run it.
fn blocked_split(m: &Mission) -> Seen {
    let mut tr = Tracker::new(m.encounters.expect("ranges"));
    let (mut steps, mut events, mut progress) = (Vec::new(), Vec::new(), Vec::new());
    let mut motions: Vec<Motion> = Vec::new();
    let summary = usim::replay::run_fleet_split(
        m,
        NoRows,
        None,
        |k, n| progress.push((k, n)),
        |v| {
            let (p, motion) = Pose::split(v);
            (p, (motion, state(v)))
        },
        |k, t, pos, recs: &[(Motion, u64)]| {
            steps.push((k, t, recs.iter().map(|r| r.1).collect()));
            motions.clear();
            motions.extend(recs.iter().map(|r| r.0));
            observe_split(&mut tr, t, pos, &motions, |e| events.push(e));
        },
    )
    .unwrap();
    Seen {
        steps,
        events,
        summary,
        progress,
    }
}

fn assert_same(m: &Mission) {
    let want = unblocked(m);
    assert_matches(&want, &blocked(m), m);
    assert_matches(&want, &blocked_split(m), m);
}

fn assert_matches(want: &Seen, got: &Seen, m: &Mission) {
    assert_eq!(want.steps.len() as u64, m.steps + 1);
    let ks: Vec<u64> = got.steps.iter().map(|s| s.0).collect();
    assert_eq!(ks, (0..=m.steps).collect::<Vec<_>>(), "iterations in order");
    for (w, g) in want.steps.iter().zip(&got.steps) {
        assert_eq!(w.0, g.0);
        assert_eq!(w.1.to_bits(), g.1.to_bits(), "mission time of {}", w.0);
        let first = w.2.iter().zip(&g.2).position(|(a, b)| a != b);
        assert_eq!(
            first, None,
            "first vehicle that differs after iteration {}",
            w.0
        );
    }
    assert_eq!(want.summary, got.summary);
    assert_eq!(want.progress, got.progress);
    assert_eq!(want.events, got.events);
}

/// 300 vehicles (a chunk of 256 and part of another) on one thread and, if
/// rayon has more, 1,030 (the parallel path): the same states, events,
/// dropped posts and progress.
#[test]
fn blocked_fleet_replay_equals_the_step_by_step_loop() {
    let m = mission(300, 60);
    let want = unblocked(&m);
    // The mission exercises what it should: refused posts and every kind
    // of encounter event.
    assert_eq!(want.summary.dropped.len(), 1, "{:?}", want.summary.dropped);
    for kind in ["near_miss", "collision", "clear"] {
        assert!(
            want.events.iter().any(|e| e.kind.name() == kind),
            "no {kind} event"
        );
    }
    assert_same(&m);
    assert_same(&mission(1030, 24));
}

/// A long run of a few vehicles: the progress calls (every 4,096
/// iterations and at the end) and the states are those of the
/// step-by-step loop.
#[test]
fn blocked_progress_and_states_over_a_long_run() {
    assert_same(&mission(5, 9000));
}

/// With rows wanted the recorded loop is the step-by-step loop: the same
/// CSV bytes as `run_fleet`.
#[test]
fn recorded_loop_with_rows_writes_the_same_bytes() {
    let m = mission(20, 40);
    let names: Vec<String> = (0..20).map(|i| format!("v{i}")).collect();
    let mut a = Vec::new();
    let out = usim::replay::csv::FleetCsvWriter::new(&mut a, names.clone()).unwrap();
    let sa = usim::replay::run_fleet(&m, out, None, |_, _| {}, |_, _, _| {}).unwrap();
    let mut b = Vec::new();
    let out = usim::replay::csv::FleetCsvWriter::new(&mut b, names).unwrap();
    let mut seen = 0;
    let sb = usim::replay::run_fleet_recorded(
        &m,
        out,
        None,
        |_, _| {},
        Pose::of,
        |_, _, p: &[Pose]| seen += p.len(),
    )
    .unwrap();
    assert_eq!(sa, sb);
    assert_eq!(seen, 20 * 41);
    assert!(a == b, "bytes differ");
}
