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
    ("view_geometry", view_geometry),
    ("node_report", node_report),
    ("moos_import", moos_import),
    ("v22_strings", v22_strings),
    ("sweep", sweep),
    ("sweep_part", sweep_part),
    ("mcap_recover", mcap_recover),
    ("mqtt_connect", mqtt_connect),
    ("claim", claim),
    ("moos_packet", moos_packet),
    ("moos_db", moos_db),
    ("nmea_report", nmea_report),
    ("ais_in", ais_in),
    ("nmea_tables", nmea_tables),
    ("nsplug", nsplug),
    ("alog", alog),
    ("moos_appcast", moos_appcast),
    ("ros2_cdr", ros2_cdr),
    ("ros2_command", ros2_command),
    ("moos_bridge", moos_bridge),
    ("moos_wildcard", moos_wildcard),
    ("obstacles", obstacles),
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
        if !r.sensed_x.is_empty() {
            assert!(r.has_sensed() && r.sensed_y.len() == n, "sensed columns");
            let mut sensed = r.sensed_x.iter().chain(&r.sensed_y);
            assert!(sensed.all(|v| !v.is_infinite()), "an infinite fix");
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
        Ok(ClientMessage::Button { index, .. }) => {
            assert!(index < crate::view::buttons::MAX_BUTTONS, "button {index}");
        }
        Err(r) => assert!(!r.reason.is_empty(), "a refusal without a reason"),
    }
}

/// A MOOS geometry posting as `usim view` reads it
/// (`view::geometry::parse`; the first byte picks the kind): an accepted
/// shape has finite coordinates within the bound, at most the allowed
/// vertices, a bounded label and colours that are words or `#rrggbb`; the
/// store stays bounded and its JSON parses.
pub fn view_geometry(data: &[u8]) {
    use crate::view::geometry::{
        parse, Posting, Shapes, MAX_COORD, MAX_LABEL, MAX_PER_SOURCE, MAX_POINTS, VIEW_VARS,
    };
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let kind = VIEW_VARS[usize::from(sel) % VIEW_VARS.len()].1;
    let mut store = Shapes::default();
    for (i, line) in rest.split(|b| *b == b'\n').take(32).enumerate() {
        let Ok(p) = parse(kind, "src", line, i as f64) else {
            continue;
        };
        if let Posting::Draw(s) = &p {
            let nums = [s.x, s.y, s.radius, s.angle, s.length];
            assert!(nums
                .iter()
                .flatten()
                .all(|v| v.is_finite() && v.abs() <= MAX_COORD));
            assert!(s.pts.len() <= MAX_POINTS);
            assert!(s
                .pts
                .iter()
                .flatten()
                .all(|v| v.is_finite() && v.abs() <= MAX_COORD));
            assert!(s.label.chars().count() <= MAX_LABEL);
            for c in [&s.edge_color, &s.vertex_color, &s.label_color]
                .into_iter()
                .flatten()
            {
                assert!(
                    c.chars().all(|ch| ch.is_ascii_lowercase())
                        || (c.len() == 7 && c.starts_with('#')),
                    "colour {c:?}"
                );
            }
        }
        store.apply("src", p, i as f64);
        assert!(store.all().count() <= MAX_PER_SOURCE);
        // an OBSTACLE_HIT near the line's first vertex: a hit polygon is
        // within the search distance
        let at = store.all().last().and_then(|s| s.pts.first().copied());
        if let Some([x, y]) = at {
            if let Some(label) = store.mark_hit(x + 1.0, y) {
                assert!(store.all().any(|s| s.hit && s.label == label));
            }
        }
    }
    store.expire(1e6);
    let json = store.take_json();
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
}

/// A `NODE_REPORT` payload as `usim view` reads it
/// (`view::protocol::Report::parse`): every field of an accepted report is
/// finite or absent.
pub fn node_report(data: &[u8]) {
    // The view's fleet model takes it too (an obstacle hit at the
    // reported position included) and its frame is JSON.
    let mut fleet = crate::view::protocol::Fleet::new("u");
    let poly = b"pts={-10,-10:10,-10:10,10:-10,10},label=box,fill_color=white";
    let _ = fleet.on_message("u/a/VIEW_POLYGON", poly, 0.0);
    if fleet.on_message("u/a/NODE_REPORT", data, 1.0).is_ok() {
        let _ = fleet.on_message("u/a/OBSTACLE_HIT", b"true", 1.5);
        let frame = fleet.frame(2.0);
        assert!(
            serde_json::from_str::<serde_json::Value>(&frame).is_ok(),
            "{frame}"
        );
    }
    let Ok(r) = crate::view::protocol::Report::parse(data) else {
        return;
    };
    for v in r.fields().into_iter().flatten() {
        assert!(v.is_finite(), "a non-finite field {v}");
    }
}

/// A `.moos` file for `usim import-moos` (`moos_import::import`), with the
/// default block and with `--process uSimMarineV22`, and for `usim view`'s
/// pMarineViewer buttons. An imported config is
/// TOML; if it loads it builds a vehicle that steps finitely.
pub fn moos_import(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The same file as `usim view MISSION` reads its pMarineViewer
    // buttons from: bounded, every posting a valid MQTT topic level.
    let (buttons, _) = crate::view::buttons::from_mission(text);
    assert!(buttons.len() <= crate::view::buttons::MAX_BUTTONS);
    for b in &buttons {
        assert!(b.posts.len() <= crate::view::buttons::MAX_POSTS);
        for (var, _) in &b.posts {
            assert!(crate::mqtt::topics::check_var(var).is_ok(), "{var:?}");
        }
    }
    let _ = crate::moos_import::block_names(text);
    // the uFldObstacleSim block (`usim moos`, `usim import-moos`): a value or an error
    if let Ok(Some(b)) = crate::moos_import::obstacle_block(text) {
        assert!(b.toml().parse::<toml::Table>().is_ok(), "{}", b.toml());
    }
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

/// A sweep shard part's end line and `usim sweep merge` of parts: the text
/// split at lines `---` is the parts; the first line is also parsed as an
/// end line. An end line that parses must print back to the same fields;
/// a merge that succeeds must give a header and rows numbered 0, 1, 2, ...
pub fn sweep_part(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(end) = crate::sweep::PartEnd::parse(text.lines().next().unwrap_or("")) {
        assert_eq!(crate::sweep::PartEnd::parse(&end.line()), Ok(end));
    }
    let parts: Vec<(String, String)> = text
        .split("\n---\n")
        .enumerate()
        .map(|(i, p)| (format!("part{i}"), p.to_string()))
        .collect();
    if let Ok(merged) = crate::sweep::merge(&parts) {
        for (i, l) in merged.lines().skip(1).enumerate() {
            let run = l.split(',').next().and_then(|r| r.parse::<u64>().ok());
            assert_eq!(run, Some(i as u64), "merged rows in run order");
        }
    }
}

/// `usim record --recover` on arbitrary bytes (a killed, truncated or
/// damaged MCAP): it returns an error or a file the MCAP reader reads
/// whole, with as many messages as it says it kept.
pub fn mcap_recover(data: &[u8]) {
    let out = std::io::Cursor::new(Vec::new());
    let Ok((out, got)) = crate::replay::mcap::recover(data, out) else {
        return;
    };
    let bytes = out.into_inner();
    let mut n = 0u64;
    for m in mcap::MessageStream::new(&bytes).expect("the recovered file opens") {
        m.expect("every recovered message reads");
        n += 1;
    }
    assert_eq!(n, got.messages);
    assert!(mcap::Summary::read(&bytes).expect("a summary").is_some());
}

/// The embedded broker's gate ([`crate::mqtt::gate::check_connect`] and
/// the [`crate::mqtt::gate::Framer`] of what follows): the first bytes a
/// client sends. Fed whole and cut at every prefix of the
/// first 256 bytes: a prefix is never accepted as longer than itself, an
/// accepted client id never holds a character that stops rumqttd, and the
/// verdict on the whole input never depends on where the bytes were cut
/// (a prefix is `Incomplete` or the same verdict).
pub fn mqtt_connect(data: &[u8]) {
    use crate::mqtt::gate::{check_connect, ConnectCheck, MAX_CONNECT_BYTES};
    let whole = check_connect(data);
    if let ConnectCheck::Accept { len, client_id } = &whole {
        assert!(*len <= data.len() && *len <= MAX_CONNECT_BYTES);
        if client_id.is_empty() {
            // The gate assigns an id: the rewritten CONNECT is accepted with it.
            let named = crate::mqtt::gate::with_client_id(&data[..*len], "auto-1")
                .expect("an accepted empty id can be replaced");
            assert_eq!(
                check_connect(&named),
                ConnectCheck::Accept {
                    len: named.len(),
                    client_id: "auto-1".into()
                }
            );
        }
        assert!(!client_id
            .chars()
            .any(|c| c.is_control() || matches!(c, '+' | '$' | '#' | '/')));
    }
    // The packet framer of the forwarded stream: cutting the stream
    // anywhere finds the same DISCONNECT (or the same error); a DISCONNECT
    // whose header the cut splits is reported at the cut.
    let whole_frame = crate::mqtt::gate::Framer::default().feed(data);
    for cut in [data.len() / 3, data.len() / 2, data.len().saturating_sub(1)] {
        let mut f = crate::mqtt::gate::Framer::default();
        let split = match f.feed(&data[..cut]) {
            Ok(Some(start)) => Ok(Some(start)),
            Ok(None) => f.feed(&data[cut..]).map(|e| e.map(|e| e + cut)),
            Err(e) => Err(e),
        };
        match (split, whole_frame) {
            (Ok(Some(a)), Ok(Some(b))) => {
                assert!(
                    a == b || (a == cut && b < cut),
                    "framer cut at {cut}: {a} vs {b}"
                );
                assert!(a <= data.len());
            }
            (a, b) => assert_eq!(a, b, "framer cut at {cut}"),
        }
    }
    for cut in 0..data.len().min(256) {
        match check_connect(&data[..cut]) {
            ConnectCheck::Incomplete => {}
            ConnectCheck::Accept { len, .. } => {
                assert!(len <= cut);
                assert_eq!(whole, check_connect(&data[..cut]));
            }
            other => assert_eq!(other, whole, "cut at {cut}"),
        }
    }
}

/// Claim messages on `{root}/NAME/claim` ([`crate::live::claim`]): a
/// parsed message writes back to the same payload, and judging any payload
/// or answering it as an owner never panics.
pub fn claim(data: &[u8]) {
    use crate::live::claim::{owner_answer, ClaimMsg, Claimant};
    if let Some(m) = ClaimMsg::parse(data) {
        assert_eq!(m.payload().as_bytes(), data);
    }
    let me = Claimant {
        nonce: "0123456789abcdef".into(),
        rand: 1 << 63,
    };
    let _ = me.judge(data);
    let _ = owner_answer(&me.nonce, data);
}

/// MOOS bytes from a socket (`usim moosdb`, `usim moos`, the bridge). The
/// first byte sets the chunk size the stream arrives in (1..=64 bytes);
/// the rest goes through the [`crate::moos::codec::FrameReader`] (a
/// framing error ends the stream, as the runtimes close the socket). Every
/// decoded packet must re-encode to bytes that decode to the same bytes
/// again; string payloads also go through the node-report converter and
/// the wildcard parser and matcher.
pub fn moos_packet(data: &[u8]) {
    use crate::moos::codec::{decode_packet, encode_packet, FrameReader};
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(sel % 64) + 1;
    let mut r = FrameReader::new(1 << 16);
    'outer: for piece in rest.chunks(chunk) {
        r.push(piece);
        loop {
            match r.next_packet() {
                Ok(Some(msgs)) => {
                    let bytes = encode_packet(&msgs);
                    let again = decode_packet(&bytes).expect("our own packet decodes");
                    assert_eq!(encode_packet(&again), bytes, "re-encoding is stable");
                    for m in &msgs {
                        let _ = crate::moos::bridge::node_report_json(&m.sval);
                        if let Some(f) = crate::moos::wildcard::Filter::parse(&m.sval) {
                            let _ = f.matches(&m.source, &m.key);
                        }
                        let _ = crate::moos::wildcard::wild_match(&m.key, &m.sval);
                    }
                }
                Ok(None) => break,
                Err(_) => break 'outer,
            }
        }
        assert!(r.buffered() <= (1 << 16) + chunk);
    }
}

/// The MOOSDB core fed by hostile clients. The input is records separated
/// by `0xff 0xfe`: the first byte of a record picks one of four clients
/// (low 2 bits) and an action (next 2 bits: handshake with the record as
/// name, a packet, a disconnect, a tick of `byte` seconds); a packet record
/// is decoded as a MOOS packet and, if it is one, processed. Invariants:
/// held mail stays within bounds, every outgoing packet goes to a connected
/// client, and times stay finite.
pub fn moos_db(data: &[u8]) {
    use crate::moos::codec::{decode_packet, DataType, Message, MsgType};
    use crate::moos::db::{Db, DbConfig};
    let mut db = Db::new(
        DbConfig {
            community: "fuzz".into(),
            host: "h".into(),
            client_timeout: 5.0,
        },
        1000.0,
    );
    let (mut now, mut real) = (1000.0f64, 0.0f64);
    let names = ["a", "b", "c", "d"];
    let mut records = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + 1 < data.len() {
        if data[i] == 0xff && data[i + 1] == 0xfe {
            records.push(&data[start..i]);
            start = i + 2;
            i += 2;
        } else {
            i += 1;
        }
    }
    records.push(&data[start.min(data.len())..]);
    for rec in records.into_iter().take(256) {
        let Some((&sel, body)) = rec.split_first() else {
            continue;
        };
        let who = names[usize::from(sel & 3)];
        let outs = match (sel >> 2) & 3 {
            0 => {
                let hello = Message {
                    msg_type: MsgType::Data,
                    data_type: DataType::String,
                    key: if sel & 16 != 0 {
                        "asynchronous".into()
                    } else {
                        String::new()
                    },
                    sval: if body.is_empty() {
                        who.to_string()
                    } else {
                        String::from_utf8_lossy(body).into_owned()
                    },
                    time: now,
                    ..Message::default()
                };
                let _ = db.handshake(&hello, now, real);
                Vec::new()
            }
            1 => match decode_packet(body) {
                Ok(msgs) => db.on_packet(who, msgs, now, real),
                Err(_) => Vec::new(),
            },
            2 => {
                db.disconnect(who, now);
                Vec::new()
            }
            _ => {
                let dt = f64::from(body.first().copied().unwrap_or(1));
                now += dt;
                real += dt;
                db.tick(now, real).1
            }
        };
        for o in outs {
            assert!(
                db.has_client(&o.to),
                "mail for a client that is not connected"
            );
        }
        let _ = db.take_events();
    }
}

/// `NODE_REPORT` payloads (one per line) into the NMEA/AIS engine
/// (`nmea::parse_node_report`, `nmea::Engine::update`). The first byte
/// picks the vehicle name (plain, lower-case, unencodable, empty-after-
/// mapping), own ship or AIS target, fixed or class A intervals, and a
/// clock offset (ordinary, before 1970, past year 9999). Every line written
/// must be ASCII, at most 82 characters, `$`/`!`-framed with a right
/// checksum, free of `NaN`/`inf`, and every AIS payload must decode with
/// the vehicle's MMSI.
pub fn nmea_report(data: &[u8]) {
    use crate::nmea::{ais, parse_node_report, sentence, Engine, Identity, Options};
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let name = [
        "alpha",
        "Ålesund{~}",
        "ü",
        "a-very-long-vehicle-name-beyond-twenty",
    ][usize::from(sel & 3)];
    let own = sel & 4 != 0;
    let opts = Options {
        ais_interval_s: (sel & 8 != 0).then_some(0.0001),
        ..Options::default()
    };
    let offset = [1.7e9, -1e12, 3e11, f64::NAN][usize::from((sel >> 4) & 3)];
    let mut e = Engine::new(opts, own.then(|| name.to_string()));
    e.set_identity(Identity::named(name));
    let mmsi = crate::nmea::default_mmsi(name);
    let mut out = Vec::new();
    for line in rest.split(|&b| b == b'\n') {
        let Ok(mut s) = parse_node_report(line) else {
            continue;
        };
        s.clock = offset + s.t;
        out.clear();
        let _ = e.update(name, &s, &mut out);
        let text = std::str::from_utf8(&out).expect("ASCII output");
        let mut frags = String::new();
        for l in text.split_terminator("\r\n") {
            assert!(l.len() <= 82 && l.is_ascii(), "bad line {l:?}");
            let (body, ck) = l[1..].split_once('*').expect("a checksum");
            // Field 5 of an AIS line is six-bit armoured text, which may
            // spell "NaN" or "inf" by chance; the other fields may not.
            let mut fields: Vec<&str> = body.split(',').collect();
            if l.starts_with('!') && fields.len() > 5 {
                fields.remove(5);
            }
            let lower = fields.join(",").to_ascii_lowercase();
            assert!(!lower.contains("nan") && !lower.contains("inf"), "{l}");
            assert!(l.starts_with('$') || l.starts_with('!'), "{l}");
            assert_eq!(
                ck,
                format!("{:02X}", sentence::checksum(body.as_bytes())),
                "{l}"
            );
            if l.starts_with('!') {
                let f: Vec<&str> = body.split(',').collect();
                frags.push_str(f[5]);
                if f[1] == f[2] {
                    let d = ais::decode(frags.as_bytes()).expect("our AIS decodes");
                    assert_eq!(d.mmsi, mmsi);
                    frags.clear();
                }
            }
        }
    }
}

/// AIS input lines (`usim nmea --ais-in`, `nmea::input::AisInput`): every
/// target returned has an in-range position or none, finite numbers, and
/// serialises to JSON.
pub fn ais_in(data: &[u8]) {
    // An even length: the full table; odd: 3 targets, so the corpus
    // reaches the forgetting path.
    let cap = if data.len() % 2 == 0 {
        crate::nmea::input::MAX_TARGETS
    } else {
        3
    };
    let mut a = crate::nmea::input::AisInput::with_capacity(cap);
    for line in data.split(|&b| b == b'\n') {
        if let Ok(Some(t)) = a.line(line) {
            if let Some(lat) = t.lat {
                assert!(lat.abs() <= 90.0);
            }
            if let Some(lon) = t.lon {
                assert!(lon.abs() <= 180.0);
            }
            for v in [t.sog_kn, t.cog_deg].into_iter().flatten() {
                assert!(v.is_finite() && v >= 0.0);
            }
            serde_json::to_vec(t).expect("a target serialises");
        }
    }
    assert!(a.targets() <= cap);
}

/// The tables `usim nmea` keeps (`nmea::recent::Recent`, `nmea::slots::Slots`,
/// the engine's tracks) under any order of events. Each byte is one event:
/// the top two bits pick the kind, the low bits a key or address. The
/// table is checked against a plain list kept in least-recently-heard
/// order; the slots against their caps and eviction rule; the engine
/// never paces more than its capacity.
pub fn nmea_tables(data: &[u8]) {
    use crate::nmea::recent::Recent;
    use crate::nmea::slots::Slots;
    use crate::nmea::{Engine, Options, ShipState};
    const CAP: usize = 5;
    let mut t: Recent<u8, u32> = Recent::new(CAP);
    let mut model: Vec<(u8, u32)> = Vec::new(); // oldest first
    let mut slots = Slots::new(6, 2);
    let mut held: Vec<(u64, u8)> = Vec::new(); // (slot, address), oldest first
    let mut engine = Engine::with_capacity(Options::default(), Some("k0".into()), 3);
    for (i, &b) in data.iter().enumerate() {
        let key = b & 0x0f;
        let i = i as u32;
        match b >> 6 {
            0 => {
                let (v, gone) = t.heard(&key, || i);
                let got = *v;
                let want_gone = if let Some(p) = model.iter().position(|(k, _)| *k == key) {
                    let e = model.remove(p);
                    model.push(e);
                    None
                } else {
                    let gone = (model.len() >= CAP).then(|| model.remove(0));
                    model.push((key, i));
                    gone
                };
                assert_eq!(gone, want_gone, "forgotten entry");
                assert_eq!(Some(&got), model.last().map(|(_, v)| v));
            }
            1 => {
                let want = model
                    .iter()
                    .position(|(k, _)| *k == key)
                    .map(|p| model.remove(p).1);
                assert_eq!(t.remove(&key), want);
            }
            2 => {
                let addr = key & 3;
                let ip = std::net::IpAddr::from([10, 0, 0, addr]);
                let (id, evicted) = slots.admit(ip);
                if let Some(e) = evicted {
                    let p = held
                        .iter()
                        .position(|(s, _)| *s == e)
                        .expect("evicts a held slot");
                    let (_, ea) = held.remove(p);
                    let mine = held.iter().filter(|(_, a)| *a == addr).count();
                    if ea != addr {
                        assert_eq!(held.len(), 5, "evicts another address only when full");
                        let count = |x: u8| held.iter().filter(|(_, a)| *a == x).count();
                        assert!(
                            (0..4).all(|x| count(x) <= count(ea) + 1),
                            "most represented"
                        );
                        assert!(mine < 2);
                    }
                }
                held.push((id, addr));
                assert!(held.len() <= 6 && slots.len() == held.len());
                assert!(held.iter().filter(|(_, a)| *a == addr).count() <= 2);
            }
            _ => {
                if key < 4 {
                    if let Some(&(id, _)) = held.get(usize::from(key)) {
                        slots.release(id);
                        held.remove(usize::from(key));
                    }
                }
                let s = ShipState {
                    t: f64::from(i),
                    clock: 1.7e9 + f64::from(i),
                    lat: 43.8,
                    lon: -70.3,
                    sog: 1.0,
                    cog: 0.0,
                    heading: 0.0,
                    depth: 0.0,
                    altitude: f64::NAN,
                    sensed: None,
                    attitude: None,
                };
                let mut out = Vec::new();
                let name = format!("k{}", key & 7);
                let _ = engine.update(&name, &s, &mut out);
                assert!(engine.is_tracked(&name) && engine.len() <= 3);
                out.clear();
                let n = engine.static_reports(&mut out);
                assert_eq!(n, 2 * engine.len());
                assert_eq!(out.iter().filter(|&&c| c == b'\n').count(), n);
            }
        }
        assert_eq!(t.len(), model.len());
    }
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
            // a sensed track (TRUE_* differing from NAV_*) has a fix per row
            assert!(r.sensed_x.is_empty() || (r.sensed_x.len() == n && r.sensed_y.len() == n));
        }
    }
}

/// Mail for an appcasting app (`moos::appcast`): lines `R text`
/// (`APPCAST_REQ`), `I number` (`TERM_REPORT_INTERVAL`), `W text` (a
/// configuration warning), `E text` (a run warning), `P` (an iteration
/// ends), one MOOS second apart. The request table stays bounded and every
/// APPCAST splits, at `!@#`, into exactly AppCast.cpp's ten fields in order (with a node).
pub fn moos_appcast(data: &[u8]) {
    use crate::moos::appcast::{AppCaster, CastSettings, MAX_REQUESTS};
    let text = String::from_utf8_lossy(data);
    let mut c = AppCaster::new(
        "uSimMarineV22",
        "alpha",
        10.0,
        crate::model::ModelVariant::V22,
        &CastSettings::default(),
        &[],
    );
    let mut k = 0u64;
    for (i, line) in text.lines().take(256).enumerate() {
        let now = i as f64;
        let (op, arg) = line.split_at(line.len().min(1));
        let arg = arg.trim_start();
        match op {
            "R" => {
                c.on_mail("APPCAST_REQ", arg, 0.0, now);
            }
            "I" => {
                c.on_mail(
                    "TERM_REPORT_INTERVAL",
                    "",
                    arg.parse().unwrap_or(f64::NAN),
                    now,
                );
            }
            "W" => c.cfg_warning(arg),
            "E" => c.run_warning(arg),
            _ => {
                k += 1;
                if let Some(s) = c.post_report(k, now, || arg.replace('|', "\n")) {
                    let names: Vec<&str> = s
                        .split("!@#")
                        .map(|f| f.split_once('=').map_or(f, |(n, _)| n))
                        .collect();
                    let expected = |n: &&str| {
                        [
                            "proc",
                            "iter",
                            "node",
                            "messages",
                            "config_warnings",
                            "events_total",
                            "events",
                            "run_warning_total",
                            "run_warnings",
                            "",
                        ]
                        .contains(n)
                    };
                    assert!(names.iter().all(expected), "{names:?}\n{s}");
                    assert_eq!(names.len(), 10, "{names:?}\n{s}");
                }
            }
        }
        assert!(c.requests_len() <= MAX_REQUESTS);
    }
}

/// ROS 2 CDR into every decoder of [`crate::ros2::msg`]. Byte 0 picks the
/// type (its value mod 10) and the path: bit 4 clear, a whole message
/// (encapsulation header first); set, a DDS sample's body, little-endian
/// unless bit 5 is set. A message that decodes must re-encode to bytes
/// that decode and re-encode to the same bytes (floats compared by bits).
pub fn ros2_cdr(data: &[u8]) {
    use crate::ros2::msg::*;
    fn round<M: Message>(rest: &[u8], body: bool, little: bool) {
        let m = if body {
            M::from_body(rest, little)
        } else {
            M::from_cdr(rest)
        };
        if let Ok(m) = m {
            let b = m.to_cdr();
            let again = M::from_cdr(&b).expect("a re-encoded message decodes");
            assert_eq!(again.to_cdr(), b, "{} re-encodes differently", M::NAME);
        }
    }
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let (body, little) = (sel & 0x10 != 0, sel & 0x20 == 0);
    match sel % 10 {
        0 => round::<Float64>(rest, body, little),
        1 => round::<StringMsg>(rest, body, little),
        2 => round::<Odometry>(rest, body, little),
        3 => round::<NavSatFix>(rest, body, little),
        4 => round::<PoseStamped>(rest, body, little),
        5 => round::<TransformStamped>(rest, body, little),
        6 => round::<TfMessage>(rest, body, little),
        7 => round::<Clock>(rest, body, little),
        8 => round::<Time>(rest, body, little),
        _ => {
            // Every decoder on the same bytes.
            round::<Float64>(rest, body, little);
            round::<StringMsg>(rest, body, little);
            round::<Odometry>(rest, body, little);
            round::<TfMessage>(rest, body, little);
            round::<ParticipantEntitiesInfo>(rest, body, little);
            round::<TriggerRequest>(rest, body, little);
            round::<TriggerResponse>(rest, body, little);
        }
    }
}

/// Commands arriving as CDR on a vehicle's ROS 2 topics
/// ([`crate::ros2::convert::command_from_cdr`]), into a running vehicle.
/// The input is records `[sel][len][len bytes]`: `sel` picks the variable
/// (an index into [`crate::command::SUBSCRIPTIONS`], past its end an
/// unknown topic) and, with bit 7, big-endian; the bytes are the sample's
/// body. An accepted command is handled and the vehicle steps 0.25 s;
/// after each record the state and publications must be finite.
pub fn ros2_command(data: &[u8]) {
    use crate::command::SUBSCRIPTIONS;
    use crate::ros2::convert::command_from_cdr;
    let p = Params {
        origin: Some((43.825, -70.33)),
        ..Params::default()
    };
    let mut v = Vehicle::from_params(p, 1000.0);
    let mut t = 1000.0;
    let mut rest = data;
    for _ in 0..32 {
        let [sel, len, tail @ ..] = rest else {
            break;
        };
        let n = usize::from(*len).min(tail.len());
        let (body, next) = tail.split_at(n);
        rest = next;
        let i = usize::from(sel & 0x7f);
        let token = SUBSCRIPTIONS.get(i).map_or_else(
            || "no_such_var".to_string(),
            |(var, _, _)| var.to_ascii_lowercase(),
        );
        match command_from_cdr(&token, body, sel & 0x80 == 0) {
            Ok(cmd) => {
                let _ = v.handle_command(cmd, t);
            }
            Err(e) => {
                assert!(!e.reason.is_empty());
                assert!(e.payload.len() <= 1000, "an error echoes a bounded payload");
            }
        }
        t += 0.25;
        v.step(t);
        check_vehicle(&v);
    }
}

/// The MOOS ⇄ MQTT bridge's mapping ([`crate::moos::bridge::Mirror`]) fed
/// hostile traffic from both sides. Records are separated by `0xff 0xfe`;
/// a record's first byte picks what it is (low 2 bits: a MOOS string, a
/// MOOS double (8 bytes little-endian after the key), an MQTT message, a
/// clock tick of the second byte's seconds) and its source (bit 2: the
/// bridge itself, bit 3: marked as a posting from MQTT); the rest is
/// `KEY 0x00 VALUE`. Invariants: every publication has a valid topic and
/// fits the MQTT packet limit; every NODE_REPORT is JSON with every CSV
/// column and only finite numbers; nothing marked as from MQTT, and
/// nothing of the bridge's own, is mirrored; postings into the MOOSDB are
/// `--to-moos` variables with finite doubles and bounded strings.
pub fn moos_bridge(data: &[u8]) {
    use crate::moos::bridge::{
        topic_level_problem, Mirror, MoosPost, FROM_MQTT_AUX, MAX_MQTT_OUT, MAX_TO_MOOS_PAYLOAD,
    };
    use crate::moos::codec::Message;
    let to_moos = [
        "DEPLOY".to_string(),
        "NAV_X".to_string(),
        "A\u{1b}".to_string(),
    ];
    let mut m = Mirror::new("usim", "alpha", "bridge", &["*".to_string()], &to_moos);
    m.set_community("alpha");
    let mut now = 1000.0;
    let check_out = |o: &crate::moos::bridge::MqttOut| {
        assert!(o.topic.len() + o.payload.len() + 7 <= MAX_MQTT_OUT);
        for level in o.topic.split('/') {
            if let Some(why) = topic_level_problem(level) {
                // Levels inside a MOOS name with '/' may be anything valid.
                assert!(why == "is empty", "{:?} {why}", o.topic);
            }
        }
        assert!(!o.topic.contains(['+', '#', '\0']));
        if o.topic.ends_with("/NODE_REPORT") && o.topic.split('/').count() == 3 {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&o.payload) {
                if v.is_object() {
                    for col in crate::replay::csv::HEADER.split(',') {
                        let x = &v[col];
                        assert!(
                            x.is_null() || x.as_f64().is_some_and(f64::is_finite),
                            "{col}"
                        );
                    }
                }
            }
        }
    };
    for rec in data.split(|b| *b == 0xff).take(256) {
        let rec = rec.strip_prefix(&[0xfe]).unwrap_or(rec);
        let Some((&sel, rest)) = rec.split_first() else {
            continue;
        };
        let (key, value) = match rest.iter().position(|b| *b == 0) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        let key = String::from_utf8_lossy(key).into_owned();
        let mut msg = match sel & 3 {
            0 => Message::notify_string(&key, &String::from_utf8_lossy(value), now),
            1 => {
                let mut b = [0u8; 8];
                let n = value.len().min(8);
                b[..n].copy_from_slice(&value[..n]);
                Message::notify_double(&key, f64::from_le_bytes(b), now)
            }
            2 => {
                let topic = format!("usim/alpha/{key}");
                match m.from_mqtt(&topic, value, now) {
                    Some(MoosPost::Double(var, v)) => {
                        assert!(v.is_finite() && to_moos.contains(&var));
                    }
                    Some(MoosPost::Text(var, s)) => {
                        assert!(s.len() <= MAX_TO_MOOS_PAYLOAD && to_moos.contains(&var));
                    }
                    None => {}
                }
                continue;
            }
            _ => {
                now += f64::from(rest.first().copied().unwrap_or(1));
                for o in m.expire(now) {
                    check_out(&o);
                }
                continue;
            }
        };
        msg.source = if sel & 4 != 0 { "bridge" } else { "other" }.into();
        if sel & 8 != 0 {
            msg.source_aux = FROM_MQTT_AUX.into();
        }
        let out = m.from_moos(&msg, now);
        if sel & 12 != 0 {
            assert!(out.is_empty(), "own or from-MQTT mail mirrored: {out:?}");
        }
        for o in &out {
            check_out(o);
        }
        let _ = m.take_warnings();
    }
    for o in m.shutdown() {
        assert!(o.payload.is_empty() && o.retain);
    }
}

/// MOOS glob matching (`moos::wildcard::wild_match`, the linear
/// bit-parallel matcher) against a plain dynamic-programming reference, and
/// wildcard registrations (`Filter::parse`). The first byte picks the
/// alphabet: bit 0 maps every byte onto `a b * ? é` (so that patterns and
/// names are dense in matches), otherwise the bytes are UTF-8 (lossy). The
/// rest is `PATTERN 0x00 TEXT`, the pattern cut to 300 characters and the
/// text to 2,000. Invariants: both matchers agree; a parsed filter has a
/// finite interval >= 0.
pub fn moos_wildcard(data: &[u8]) {
    use crate::moos::wildcard::{wild_match, Filter};
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let (p, t) = match rest.iter().position(|b| *b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let text = |b: &[u8], max: usize| -> String {
        if sel & 1 != 0 {
            b.iter()
                .take(max)
                .map(|x| ['a', 'b', '*', '?', '\u{e9}'][usize::from(x % 5)])
                .collect()
        } else {
            String::from_utf8_lossy(b).chars().take(max).collect()
        }
    };
    let (pattern, name) = (text(p, 300), text(t, 2000));
    // Reference: m[j] = "the pattern so far matches name[..j]".
    let pc: Vec<char> = pattern.chars().collect();
    let nc: Vec<char> = name.chars().collect();
    let mut m = vec![false; nc.len() + 1];
    m[0] = true;
    for &c in &pc {
        let mut next = vec![false; nc.len() + 1];
        if c == '*' {
            let mut seen = false;
            for j in 0..=nc.len() {
                seen |= m[j];
                next[j] = seen;
            }
        } else {
            for j in 0..nc.len() {
                next[j + 1] = m[j] && (c == '?' || c == nc[j]);
            }
        }
        m = next;
    }
    assert_eq!(
        wild_match(&pattern, &name),
        m[nc.len()],
        "{pattern:?} vs {name:?}"
    );
    if let Some(f) = Filter::parse(&String::from_utf8_lossy(rest)) {
        assert!(f.interval.is_finite() && f.interval >= 0.0);
    }
}

/// An obstacle file (uFldObstacleSim's format, `obstacle::parse`): a file
/// that parses has at most the bounded number of convex polygons of
/// bounded size with unique labels; distances from any point are finite
/// and ≥ 0; a tracker walking across the field counts at most one hit per
/// obstacle per approach; the postings name each obstacle's label.
pub fn obstacles(data: &[u8]) {
    use crate::obstacle::{file, postings, Setup, Tracker};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(field) = crate::obstacle::parse(text) else {
        return;
    };
    assert!(field.obstacles.len() <= file::MAX_OBSTACLES);
    let mut labels = std::collections::HashSet::new();
    for o in &field.obstacles {
        assert!(o.poly.is_convex(), "{}: not convex", o.label);
        assert!(o.poly.pts.len() <= file::MAX_POINTS);
        assert!(labels.insert(o.label.clone()), "{}: label twice", o.label);
        for (x, y) in [(0.0, 0.0), (1e7, -1e7), (-3.5, 100.0)] {
            let d = o.poly.distance(x, y);
            assert!(d.is_finite() && d >= 0.0, "distance {d}");
        }
        assert!(postings::known_obstacle(o).ends_with(&format!(",label={}", o.label)));
        assert!(postings::view_polygon(o).contains(&format!(",label={},", o.label)));
    }
    let n = field.obstacles.len() as u64;
    let mut t = Tracker::new(std::sync::Arc::new(Setup {
        field,
        settings: crate::obstacle::Settings {
            post_points: true,
            ..Default::default()
        },
    }));
    let _ = t.start_postings();
    for i in 0..8 {
        let x = -1e3 + 250.0 * f64::from(i);
        let hits = t.observe(x, x / 3.0);
        assert!(hits.len() as u64 <= n);
        for (fx, fy, _) in t.features(x, x / 3.0) {
            assert!(fx.is_finite() && fy.is_finite());
        }
    }
    assert!(t.hits() <= 8 * n);
}
