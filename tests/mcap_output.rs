//! `usim replay MISSION -o run.mcap`, read back by the `mcap` crate (and by
//! the Python `mcap` package through tests/py/check_mcap.py): channels,
//! schemas and message counts are what the mission implies, and the JSON
//! state of step k equals CSV row k field by field.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn usim() -> &'static str {
    env!("CARGO_BIN_EXE_usim")
}

fn missions() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/missions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 5, "missions found: {v:?}");
    v
}

fn replay(mission: &Path, out: &Path, extra: &[&str]) {
    let o = Command::new(usim())
        .arg("replay")
        .arg(mission)
        .arg("-o")
        .arg(out)
        .arg("-q")
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "replay {}: {}",
        mission.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// CSV rows as maps column name -> text.
fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
}

/// `[[post]]` entries of the mission file as (t, var), straight from the TOML.
fn posts_of(mission: &Path) -> Vec<(f64, String)> {
    let doc: toml::Table = std::fs::read_to_string(mission).unwrap().parse().unwrap();
    let Some(posts) = doc.get("post").and_then(|p| p.as_array()) else {
        return Vec::new();
    };
    posts
        .iter()
        .map(|p| {
            let t = p["t"]
                .as_float()
                .or(p["t"].as_integer().map(|i| i as f64))
                .unwrap();
            (t, p["var"].as_str().unwrap().trim().to_string())
        })
        .collect()
}

struct Mcap {
    /// topic -> (schema name, schema encoding, message encoding)
    channels: BTreeMap<String, (String, String, String)>,
    /// topic -> messages (log time, JSON)
    messages: BTreeMap<String, Vec<(u64, serde_json::Value)>>,
}

fn read_mcap(path: &Path) -> Mcap {
    let bytes = std::fs::read(path).unwrap();
    let summary = mcap::read::Summary::read(&bytes)
        .expect("summary parses")
        .expect("file has a summary");
    let mut channels = BTreeMap::new();
    for ch in summary.channels.values() {
        let s = ch.schema.as_ref().expect("every channel has a schema");
        // The schema itself is valid JSON.
        serde_json::from_slice::<serde_json::Value>(&s.data)
            .unwrap_or_else(|e| panic!("schema {} is not JSON: {e}", s.name));
        channels.insert(
            ch.topic.clone(),
            (
                s.name.clone(),
                s.encoding.clone(),
                ch.message_encoding.clone(),
            ),
        );
    }
    let mut messages: BTreeMap<String, Vec<(u64, serde_json::Value)>> = BTreeMap::new();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.expect("message parses");
        let v: serde_json::Value = serde_json::from_slice(&m.data)
            .unwrap_or_else(|e| panic!("{}: message is not JSON: {e}", m.channel.topic));
        messages
            .entry(m.channel.topic.clone())
            .or_default()
            .push((m.log_time, v));
    }
    // The statistics agree with what was read.
    let stats = summary.stats.expect("statistics");
    let total: usize = messages.values().map(Vec::len).sum();
    assert_eq!(stats.message_count, total as u64);
    Mcap { channels, messages }
}

#[test]
fn every_mission_as_mcap_matches_its_csv() {
    let dir = tempfile::tempdir().unwrap();
    for mission in missions() {
        let stem = mission.file_stem().unwrap().to_string_lossy().to_string();
        let csv_path = dir.path().join(format!("{stem}.csv"));
        let mcap_path = dir.path().join(format!("{stem}.mcap"));
        replay(&mission, &csv_path, &[]);
        replay(&mission, &mcap_path, &[]);
        let m = usim::mission::load(&mission).unwrap();
        if m.vehicle_count() > 1 {
            check_fleet(&m, &csv_path, &mcap_path);
            continue;
        }
        check(&mission, &csv_path, &mcap_path);
    }
}

/// A multi-vehicle mission (docs/fleets.md): each vehicle has its own
/// state, pose and command channels, with as many states as the CSV has
/// rows for it and one command message per post for it.
fn check_fleet(m: &usim::mission::Mission, csv_path: &Path, mcap_path: &Path) {
    let text = std::fs::read_to_string(csv_path).unwrap();
    let file = read_mcap(mcap_path);
    let count = |t: &str| file.messages.get(t).map_or(0, Vec::len);
    for i in 0..m.vehicle_count() {
        let v = &m.vehicle_at(i).name;
        let rows = text
            .lines()
            .filter(|l| l.starts_with(&format!("{v},")))
            .count();
        assert!(rows > 0);
        assert_eq!(count(&format!("/{v}/state")), rows, "{v}");
        assert_eq!(count(&format!("/{v}/pose")), rows, "{v}");
        for p in m.posts.iter().filter(|p| p.vehicle == i) {
            let n = m
                .posts
                .iter()
                .filter(|q| q.vehicle == i && q.var == p.var)
                .count();
            assert_eq!(count(&format!("/{v}/cmd/{}", p.var)), n, "{v} {}", p.var);
        }
    }
}

fn check(mission: &Path, csv_path: &Path, mcap_path: &Path) {
    let m = usim::mission::load(mission).unwrap();
    let v = &m.vehicle.name;
    let rows = read_csv(csv_path);
    let file = read_mcap(mcap_path);
    let name = mission.display();

    // Channels and schemas.
    let state = format!("/{v}/state");
    let pose = format!("/{v}/pose");
    let loc = format!("/{v}/location");
    let with_fix: Vec<&BTreeMap<String, String>> =
        rows.iter().filter(|r| num(&r["lat"]).is_finite()).collect();
    let last_t = num(&rows.last().unwrap()["t"]);
    let posts: Vec<(f64, String)> = posts_of(mission)
        .into_iter()
        .filter(|(t, _)| *t <= last_t + 1e-9)
        .collect();
    let mut expected: BTreeMap<String, (&str, usize)> = BTreeMap::new();
    expected.insert("/tf".into(), ("foxglove.FrameTransform", rows.len()));
    expected.insert(state.clone(), ("usim.State", rows.len()));
    expected.insert(pose.clone(), ("foxglove.PoseInFrame", rows.len()));
    if !with_fix.is_empty() {
        expected.insert(loc.clone(), ("foxglove.LocationFix", with_fix.len()));
    }
    let vars: BTreeSet<&str> = posts.iter().map(|(_, var)| var.as_str()).collect();
    for var in &vars {
        let n = posts.iter().filter(|(_, x)| x == var).count();
        expected.insert(format!("/{v}/cmd/{var}"), ("usim.Command", n));
    }
    let got: BTreeMap<String, (&str, usize)> = file
        .channels
        .iter()
        .map(|(t, (schema, enc, msg_enc))| {
            assert_eq!(enc, "jsonschema", "{name}: {t}");
            assert_eq!(msg_enc, "json", "{name}: {t}");
            let n = file.messages.get(t).map_or(0, Vec::len);
            (t.clone(), (schema.as_str(), n))
        })
        .collect();
    assert_eq!(got, expected, "{name}: channels, schemas, counts");

    // State k == CSV row k, field by field (by column name; null = nan).
    let states = &file.messages[&state];
    for (row, (log_time, json)) in rows.iter().zip(states) {
        let obj = json.as_object().unwrap();
        for (col, text) in row {
            let jv = obj
                .get(col)
                .unwrap_or_else(|| panic!("{name}: state lacks column {col}"));
            let want = num(text);
            let got = jv.as_f64().unwrap_or(f64::NAN);
            assert!(
                jv.is_null() == want.is_nan(),
                "{name}: k={} {col}: json {jv} csv {text}",
                row["k"]
            );
            if !want.is_nan() {
                // `t` may be rounded to the microsecond in the CSV.
                let tol = if col == "t" { 5e-7 } else { 0.0 };
                assert!(
                    (got - want).abs() <= tol,
                    "{name}: k={} {col}: json {jv} csv {text}",
                    row["k"]
                );
            }
        }
        // Log time = vehicle clock.
        let clock = m.start_time + num(&row["t"]);
        let want_ns = (clock * 1e9).round();
        assert!(
            (*log_time as f64 - want_ns).abs() <= 1000.0,
            "{name}: log time {log_time} vs clock {clock}"
        );
    }

    // Pose: x east, y north, z = -depth; the rotation turns body +x (bow)
    // to (sin h, cos h) in (east, north).
    for (row, (_, p)) in rows.iter().zip(&file.messages[&pose]).step_by(97) {
        let pos = &p["pose"]["position"];
        assert_eq!(pos["x"].as_f64().unwrap(), num(&row["x"]), "{name}");
        assert_eq!(pos["y"].as_f64().unwrap(), num(&row["y"]), "{name}");
        assert_eq!(pos["z"].as_f64().unwrap(), -num(&row["depth"]), "{name}");
        let q = &p["pose"]["orientation"];
        let (qx, qy, qz, qw) = (
            q["x"].as_f64().unwrap(),
            q["y"].as_f64().unwrap(),
            q["z"].as_f64().unwrap(),
            q["w"].as_f64().unwrap(),
        );
        // Rotate (1,0,0) by the quaternion.
        let fx = 1.0 - 2.0 * (qy * qy + qz * qz);
        let fy = 2.0 * (qx * qy + qz * qw);
        let h = num(&row["heading"]).to_radians();
        assert!(
            (fx - h.sin()).abs() < 1e-9 && (fy - h.cos()).abs() < 1e-9,
            "{name}: heading {h}"
        );
        assert_eq!(p["frame_id"], "world");
    }
    if let Some(fixes) = file.messages.get(&loc) {
        for (row, (_, f)) in with_fix.iter().zip(fixes) {
            assert_eq!(f["latitude"].as_f64().unwrap(), num(&row["lat"]), "{name}");
            assert_eq!(f["longitude"].as_f64().unwrap(), num(&row["lon"]), "{name}");
        }
    }
    // Commands: in time order, each at the first step at or after its time.
    for var in &vars {
        let msgs = &file.messages[&format!("/{v}/cmd/{var}")];
        let mut want: Vec<f64> = posts
            .iter()
            .filter(|(_, x)| x == var)
            .map(|(t, _)| *t)
            .collect();
        want.sort_by(f64::total_cmp);
        for ((_, msg), t_post) in msgs.iter().zip(want) {
            assert_eq!(msg["var"], *var);
            let t = msg["t"].as_f64().unwrap();
            assert!(
                t >= t_post - 1e-9 && t < t_post + 1.0,
                "{name}: {var} at {t} posted {t_post}"
            );
            assert!(msg["value"].is_number() || msg["value"].is_string());
        }
    }
}

#[test]
fn python_mcap_reads_the_file() {
    let py = Command::new("python3")
        .args(["-c", "import mcap.reader"])
        .output();
    if !py.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("USIM_REQUIRE_PYMCAP").is_none_or(|v| v != "1"),
            "USIM_REQUIRE_PYMCAP=1 but python3 cannot import mcap (pip install mcap)"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the Python mcap package is missing (pip install mcap); this test passes without running"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/py/check_mcap.py");
    for stem in ["harbour_turns", "dive", "zigzag_timed"] {
        let mission = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/missions"))
            .join(format!("{stem}.toml"));
        let csv_path = dir.path().join(format!("{stem}.csv"));
        let mcap_path = dir.path().join(format!("{stem}.mcap"));
        replay(&mission, &csv_path, &[]);
        replay(&mission, &mcap_path, &[]);
        let o = Command::new("python3")
            .arg(script)
            .arg(&mcap_path)
            .arg(&csv_path)
            .arg(&mission)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{stem}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains("OK"));
    }
}

#[test]
fn format_flag_overrides_the_extension_and_no_half_file_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let mission = concat!(env!("CARGO_MANIFEST_DIR"), "/missions/dive.toml");
    let out = dir.path().join("run.dat");
    replay(Path::new(mission), &out, &["--format", "mcap"]);
    let bytes = std::fs::read(&out).unwrap();
    assert!(bytes.starts_with(b"\x89MCAP0\r\n"), "MCAP magic");
    // An unwritable path: a clear error, nothing written.
    let bad = dir.path().join("no/such/dir/run.mcap");
    let o = Command::new(usim())
        .args(["replay", mission, "-o"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot create") && err.contains("run.mcap"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only run.dat: {left:?}");
}
