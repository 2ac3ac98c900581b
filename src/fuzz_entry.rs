//! Fuzz target bodies: one function per parser of outside input, each
//! taking arbitrary bytes. The cargo-fuzz crate in `fuzz/` calls them, and
//! the plain test `tests/fuzz_corpus.rs` replays every file of
//! `fuzz/corpus/<target>/` and `fuzz/artifacts/<target>/` through the same
//! functions, so CI checks the corpus without cargo-fuzz (see
//! `fuzz/README.md`).
//!
//! A function returns normally for any input the program handles (an error
//! is a normal outcome); it panics when an invariant breaks: a non-finite
//! number in the state or in a publication, a published heading outside
//! [0, 360), pending timed commands over their cap.
use std::path::Path;

use crate::command::parse_text;
use crate::interp::timed_commands::{parse_set, ActuatorBank, DEFAULT_MAX_PENDING};
use crate::model::{ModelVariant, Params, PubValue, Vehicle};

/// The body of one fuzz target.
pub type Target = fn(&[u8]);

/// Every target: `(name, function)`; the name is the directory under
/// `fuzz/corpus/` and the cargo-fuzz target name.
pub const TARGETS: &[(&str, Target)] = &[
    ("message", message),
    ("set", set),
    ("config", config),
    ("mission", mission),
    ("current_field", current_field),
    ("profile_csv", profile_csv),
    ("run_csv", run_csv),
    ("view_client", view_client),
    ("node_report", node_report),
    ("moos_import", moos_import),
    ("v22_strings", v22_strings),
    ("sweep", sweep),
    ("nsplug", nsplug),
    ("alog", alog),
];

/// The function of target `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Messages into a running vehicle. The first byte picks the vehicle
/// (classic/V22, with or without a geodetic origin, dual state); the rest
/// is lines `VAR=payload` (`VAR payload` also works). Every line is handled
/// at the current clock; after every line the vehicle steps 0.25 s (a line
/// `STEP=s` steps `s` seconds instead, clamped to 0..1e6). After each step
/// the state and the publications must be finite and the published
/// headings in [0, 360).
pub fn message(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let mut p = Params::default();
    if sel & 1 != 0 {
        p.variant = ModelVariant::V22;
    }
    if sel & 2 != 0 {
        p.origin = Some((43.825, -70.33));
    }
    p.dual_state = sel & 4 != 0;
    let mut v = Vehicle::from_params(p, 1000.0);
    let mut t = 1000.0;
    let text = String::from_utf8_lossy(rest);
    // 64 lines are plenty to reach any state; more only slows the fuzzer.
    for line in text.lines().take(64) {
        let (var, payload) = match line.split_once(['=', ' ']) {
            Some((a, b)) => (a.trim(), b),
            None => (line.trim(), ""),
        };
        let mut dt = 0.25;
        if var == "STEP" {
            dt = payload.trim().parse::<f64>().unwrap_or(0.25);
            if !dt.is_finite() {
                dt = 0.25;
            }
            dt = dt.clamp(0.0, 1e6);
        } else if crate::command::kind_of(var).is_some() {
            // Unknown variables only cost the nearest-name search (unit
            // tested in `command`); skipping them keeps the fuzzer fast.
            if let Ok(cmd) = parse_text(var, payload) {
                let _ = v.handle_command(cmd, t);
            }
        }
        t += dt;
        v.step(t);
        check_vehicle(&v);
    }
}

/// Panics if the vehicle's state or publications hold a non-finite number,
/// a published heading is outside [0, 360), or its timed commands exceed
/// their cap. (The stored heading is wrapped by the next propagation, as in
/// uSimMarine, so a paused or frozen vehicle may hold a reset's 400°.)
pub fn check_vehicle(v: &Vehicle) {
    let s = v.snapshot();
    for (name, x) in [
        ("x", s.x),
        ("y", s.y),
        ("speed", s.speed),
        ("heading", s.heading),
        ("depth", s.depth),
        ("pitch", s.pitch),
        ("yaw", s.yaw),
        ("sog", s.sog),
        ("hog", s.hog),
        ("drift_x", s.drift_x),
        ("drift_y", s.drift_y),
        ("rudder", s.rudder),
        ("thrust", s.thrust),
        ("elevator", s.elevator),
        ("gt_x", s.gt_x),
        ("gt_y", s.gt_y),
    ] {
        assert!(x.is_finite(), "state {name} = {x}");
    }
    for p in v.publications() {
        if let PubValue::Number(x) = p.value {
            assert!(x.is_finite(), "published {} = {x}", p.var);
        }
        if p.var.ends_with("_HEADING") {
            if let PubValue::Number(x) = p.value {
                assert!((0.0..360.0).contains(&x), "published {} = {x}", p.var);
            }
        }
    }
    assert!(
        v.pending_timed_commands() <= 5 * DEFAULT_MAX_PENDING,
        "{} pending timed commands",
        v.pending_timed_commands()
    );
}

/// `SET` payloads into an actuator bank with an alias. Input: lines, each
/// a `SET` JSON payload; the bank cycles 0.1 s after each. Values must stay
/// finite and pending commands within the cap.
pub fn set(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let aliases = vec![(
        "THRUSTERS".to_string(),
        vec![
            "DESIRED_THRUST_L".to_string(),
            "DESIRED_THRUST_R".to_string(),
        ],
    )];
    let Ok(mut bank) = ActuatorBank::new(&aliases) else {
        panic!("a valid alias table was refused");
    };
    bank.start(0.0);
    let mut t = 0.0;
    for line in text.lines().take(64) {
        if let Ok(call) = parse_set(line, t) {
            let _ = bank.apply(&call);
        }
        t += 0.1;
        bank.cycle(t);
        for a in crate::model::Actuator::ALL {
            let v = bank.value(a);
            assert!(v.is_finite(), "{} = {v}", a.name());
            assert!(bank.get(a).pending_len() <= DEFAULT_MAX_PENDING);
        }
    }
    // The whole text as one payload too (multi-line JSON).
    if let Ok(call) = parse_set(&text, t) {
        let _ = bank.apply(&call);
        bank.cycle(t + 1.0);
    }
}

/// A vehicle config file's text; a config that loads must build a vehicle
/// that steps with a finite state.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = crate::config::parse_vehicle(Path::new("fuzz/vehicle.toml"), text) {
        let mut v = Vehicle::new(&cfg, 0.0);
        for k in 1..=8 {
            v.step(k as f64 * 0.25);
            check_vehicle(&v);
        }
    }
}

/// A mission file's text (inline `[vehicle]`; a vehicle file it names is
/// looked up under `fuzz/`). A mission that loads replays its first 200
/// iterations with finite state.
pub fn mission(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mut m) = crate::mission::parse(Path::new("fuzz/mission.toml"), text) {
        m.steps = m.steps.min(200);
        let mut sink = std::io::sink();
        let _ = crate::replay::run(&m, &mut sink, |_, _| {});
    }
}

/// A current-field file's text; a field that parses must give finite
/// forces.
pub fn current_field(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((field, _)) = crate::model::current_field::CurrentField::parse(text) {
        for (x, y) in [(0.0, 0.0), (10.0, -5.0), (1e7, 1e7), (-3.5, 100.0)] {
            let (fx, fy) = field.force_at(x, y);
            assert!(fx.is_finite() && fy.is_finite(), "force at ({x}, {y})");
        }
    }
}

/// A `usim profile --batch` CSV, with sample times `--at 0,0.5,1e9`.
pub fn profile_csv(data: &[u8]) {
    let at = [
        ("0".to_string(), 0.0),
        ("0.5".to_string(), 0.5),
        ("1e9".to_string(), 1e9),
    ];
    let mut out = Vec::new();
    let _ = crate::cli::profile::batch(Path::new("fuzz.csv"), data, &at, &mut out);
}

/// A run CSV for `usim plot` (`plot::run_csv::parse`). Parsed runs must
/// have equal-length columns without ±inf (NaN means "not set").
pub fn run_csv(data: &[u8]) {
    let Ok(runs) = crate::plot::run_csv::parse(data) else {
        return;
    };
    assert!(!runs.is_empty());
    for r in &runs {
        let n = r.len();
        assert!(n > 0);
        for col in [
            &r.k,
            &r.t,
            &r.x,
            &r.y,
            &r.speed,
            &r.heading,
            &r.depth,
            &r.rudder,
            &r.thrust,
            &r.elevator,
        ] {
            assert_eq!(col.len(), n, "columns of unequal length");
            assert!(col.iter().all(|v| !v.is_infinite()), "an infinite value");
        }
    }
}

/// A WebSocket text message from the `usim view` page
/// (`view::protocol::parse_client_message`; the vehicle and variable are
/// checked against the fleet in a second stage). An accepted command's value
/// is within its length cap and, when the page sent a JSON number, finite.
pub fn view_client(data: &[u8]) {
    use crate::view::protocol::{parse_client_message, ClientMessage, MAX_VALUE_LEN};
    let text = String::from_utf8_lossy(data);
    match parse_client_message(&text) {
        Ok(ClientMessage::Command { value, .. }) => {
            assert!(
                value.len() <= MAX_VALUE_LEN,
                "value of {} bytes",
                value.len()
            );
            let lower = value.to_ascii_lowercase();
            let from_number =
                value.parse::<f64>().is_ok() && !text.contains(&format!("\"{value}\""));
            assert!(
                !(from_number && (lower.contains("inf") || lower.contains("nan"))),
                "a non-finite number {value:?}"
            );
        }
        Err(r) => assert!(!r.reason.is_empty(), "a refusal without a reason"),
    }
}

/// A `NODE_REPORT` payload as `usim view` reads it
/// (`view::protocol::Report::parse`): every field of an accepted report is
/// finite or absent.
pub fn node_report(data: &[u8]) {
    let Ok(r) = crate::view::protocol::Report::parse(data) else {
        return;
    };
    for v in r.fields().into_iter().flatten() {
        assert!(v.is_finite(), "a non-finite field {v}");
    }
}

/// A `.moos` file for `usim import-moos` (`moos_import::import`), with the
/// default block and with `--process uSimMarineV22`. An imported config is
/// TOML; if it loads it builds a vehicle that steps finitely.
pub fn moos_import(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for process in [None, Some("uSimMarineV22")] {
        let Ok(imp) = crate::moos_import::import(text, process) else {
            continue;
        };
        let table = imp.toml.parse::<toml::Table>();
        assert!(table.is_ok(), "import wrote invalid TOML:\n{}", imp.toml);
        for u in &imp.unmapped {
            assert!(u.line >= 1 && !u.reason.is_empty());
        }
        if let Ok(cfg) = crate::config::parse_vehicle(Path::new("fuzz/imported.toml"), &imp.toml) {
            let mut v = Vehicle::new(&cfg, 0.0);
            for k in 1..=4 {
                v.step(k as f64 * 0.25);
                check_vehicle(&v);
            }
        }
    }
}

/// uSimMarineV22's config strings, pure parsers of their text: lines
/// `W …` go to the wind (`wind_conditions`, `Wind::apply` via
/// `Sailing::set_wind`), `P …` to the polar plot (`PolarPlot::add_line`),
/// `H …` to the wormholes (`WormholeSet::configure`); any other line to all
/// three. Afterwards the sailing cap at every heading and the wormhole
/// state machine along a path must stay finite.
pub fn v22_strings(data: &[u8]) {
    use crate::model::sailing::Sailing;
    use crate::model::wormhole::WormholeSet;
    let text = String::from_utf8_lossy(data);
    let mut sailing = Sailing::default();
    let mut holes = WormholeSet::default();
    for line in text.lines().take(64) {
        match line.split_at_checked(2) {
            Some(("W ", rest)) => {
                let _ = sailing.set_wind(rest);
            }
            Some(("P ", rest)) => {
                let _ = sailing.plot.add_line(rest);
            }
            Some(("H ", rest)) => {
                let _ = holes.configure(rest);
            }
            _ => {
                let _ = sailing.set_wind(line);
                let _ = sailing.plot.add_line(line);
                let _ = holes.configure(line);
            }
        }
    }
    assert!(sailing.wind.dir.is_finite() && sailing.wind.speed.is_finite());
    for &(a, pct) in sailing.plot.points() {
        assert!(a.is_finite() && pct.is_finite(), "polar point ({a}, {pct})");
    }
    for h in (0..720).map(|i| i as f64 * 0.5).chain([359.6, -1.0, 1e9]) {
        let c = sailing.cap(h);
        assert!(c.is_finite(), "cap {c} at heading {h}");
    }
    for w in &holes.holes {
        for p in [&w.madrid, &w.weber] {
            let (cx, cy) = p.centroid();
            assert!(
                cx.is_finite() && cy.is_finite() || p.pts.is_empty(),
                "centroid"
            );
        }
    }
    // a path through every polygon's centroid and back, 20 s apart
    let mut t = 0.0;
    let stops: Vec<(f64, f64)> = holes
        .holes
        .iter()
        .flat_map(|w| [w.madrid.centroid(), w.weber.centroid()])
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .chain([(0.0, 0.0), (1e6, -1e6)])
        .take(16)
        .collect();
    for &(x, y) in &stops {
        for _ in 0..4 {
            t += 3.0;
            if let Some((jx, jy)) = holes.update(t, x, y) {
                assert!(jx.is_finite() && jy.is_finite(), "jump to ({jx}, {jy})");
            }
            assert!(holes.transparency().is_finite());
        }
    }
}

/// `usim sweep`'s inputs: the text is a sweep file (its base mission is
/// not loaded); its first line is also tried as a `--shard I/N`; and the
/// text split at lines `---` is given to `usim sweep merge` as shard
/// summaries. A shard that parses must give in-range, ordered run ranges
/// that cover every run exactly once.
pub fn sweep(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = crate::sweep::parse(Path::new("fuzz/sweep.toml"), text) {
        let _ = spec.total_runs();
    }
    let first = text.lines().next().unwrap_or("");
    if let Ok(shard) = crate::sweep::Shard::parse(first) {
        for total in [0u64, 1, 7, 1_000_000_000] {
            let r = shard.range(total);
            assert!(
                r.start <= r.end && r.end <= total,
                "{first}: {r:?} of {total}"
            );
        }
        let whole: u64 = (0..shard.count.min(64))
            .map(|i| {
                crate::sweep::Shard {
                    index: i,
                    count: shard.count.min(64),
                }
                .range(1000)
                .count() as u64
            })
            .sum();
        assert_eq!(whole, 1000, "shards of {first} cover every run once");
    }
    let parts: Vec<(String, String)> = text
        .split("\n---\n")
        .enumerate()
        .map(|(i, p)| (format!("part{i}"), p.to_string()))
        .collect();
    let _ = crate::sweep::merge(&parts);
}

/// nsplug on a mission template: the input is the top file, then the
/// files it may include, separated by NUL bytes and named by their index
/// (`#include 0`, `#include 1 <tag>`). Macros `A` and `B` are defined,
/// `B` in terms of `A`; an even-length input keeps undefined macros. The
/// output must have one origin per line, stay within the size bound, and
/// import (or fail to) without a panic.
pub fn nsplug(data: &[u8]) {
    use crate::nsplug::{expand, Options, MAX_OUTPUT};
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\u{0}');
    let top = parts.next().unwrap_or("");
    let files: Vec<&str> = parts.collect();
    let mut load = |_: &str, inc: &str| -> Result<(String, String), String> {
        let i: usize = inc.parse().map_err(|_| "not an index".to_string())?;
        files
            .get(i)
            .map(|t| (inc.to_string(), t.to_string()))
            .ok_or_else(|| "no such file".to_string())
    };
    let opts = Options {
        defines: vec![("A".into(), "x=1".into()), ("B".into(), "$(A),%(A)".into())],
        keep_undefined: data.len() % 2 == 0,
    };
    if let Ok(e) = expand("top", top, &opts, &mut load) {
        assert_eq!(e.origins.len(), e.text.matches('\n').count());
        assert!(e.text.len() <= MAX_OUTPUT);
        for o in &e.origins {
            assert!(o.file < e.files.len() && o.line >= 1);
        }
        let _ = crate::moos_import::import(&e.text, None);
    }
}

/// An alog as `usim plot` reads it: parsed, then turned into runs. Every
/// entry's time and every number must be finite, and every run's columns
/// of equal length.
pub fn alog(data: &[u8]) {
    let Ok(a) = crate::alog::parse(data) else {
        return;
    };
    assert!(a.t0.is_finite());
    for e in &a.entries {
        assert!(e.t.is_finite() && !e.var.is_empty() && !e.source.is_empty());
        if let crate::alog::AlogValue::Number(v) = e.value {
            assert!(v.is_finite());
        }
    }
    if let Ok(runs) = crate::plot::alog_run::runs(&a) {
        for r in runs {
            let n = r.t.len();
            assert!(n > 0 && r.x.len() == n && r.elevator.len() == n && r.k.len() == n);
        }
    }
}
