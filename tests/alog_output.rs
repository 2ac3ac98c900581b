//! alog output (docs/alog.md): `usim replay -o run.alog` read back by an
//! independent strict reader (tests/py/read_alog.py, written from the
//! format notes) and compared with the posts log the same replay writes
//! through its own code path; `usim plot` of an alog; `usim record -o
//! rec.alog` against the embedded broker; unknown `-o` extensions refused.
mod mqtt_util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mqtt_util::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> String {
    std::env::var("USIM_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The strict reader's JSON of `path`.
fn read_alog(path: &Path) -> serde_json::Value {
    let o = Command::new(python())
        .arg(root().join("tests/py/read_alog.py"))
        .arg(path)
        .output()
        .expect("python3 runs (tests/py/read_alog.py needs only the standard library)");
    assert!(
        o.status.success(),
        "read_alog.py: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// MOOS's isNumber (docs/model.md §2.1).
fn moos_number(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits = s.chars().filter(char::is_ascii_digit).count();
    digits > 0 && s.chars().all(|c| c.is_ascii_digit() || c == '.') && s.matches('.').count() <= 1
}

/// Posts log rows `(t, var, type, value)`; the value CSV-unquoted.
fn posts(path: &Path) -> Vec<(f64, String, String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.splitn(5, ',').collect();
        let v = f[4];
        let v = match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(q) => q.replace("\"\"", "\""),
            None => v.to_string(),
        };
        out.push((f[1].parse().unwrap(), f[2].to_string(), f[3].to_string(), v));
    }
    out
}

fn replay(mission: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_usim"))
        .arg("replay")
        .arg(mission)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn replay_alog_holds_the_posts_log() {
    let dir = tempfile::tempdir().unwrap();
    for stem in ["harbour_turns", "lawnmower_pid"] {
        let mission = root().join(format!("missions/{stem}.toml"));
        let alog = dir.path().join(format!("{stem}.alog"));
        let posts_csv = dir.path().join(format!("{stem}.posts.csv"));
        let o = replay(
            &mission,
            &[
                "-o",
                alog.to_str().unwrap(),
                "--posts",
                posts_csv.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let a = read_alog(&alog);
        assert_eq!(
            a["invalid"].as_array().unwrap().len(),
            0,
            "{stem}: invalid rows"
        );
        let header: Vec<&str> = a["header"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap())
            .collect();
        assert!(header[0].chars().all(|c| c == '%') && header[0].len() > 10);
        assert!(header[1].starts_with("%% LOG FILE:"), "{header:?}");
        assert!(header[2].starts_with("%% FILE OPENED ON"), "{header:?}");
        assert!(header[3].starts_with("%% LOGSTART"), "{header:?}");
        // The publications, in order, are the posts log's rows.
        let pubs: Vec<&serde_json::Value> = a["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e[2].as_str().unwrap().starts_with("uSimMarine"))
            .collect();
        let want = posts(&posts_csv);
        assert!(want.len() > 1000, "{stem}: {} posts", want.len());
        assert_eq!(
            pubs.len(),
            want.len(),
            "{stem}: one alog row per publication"
        );
        for (got, (t, var, ty, value)) in pubs.iter().zip(&want) {
            let gt = got[0].as_f64().unwrap();
            assert!((gt - t).abs() < 6e-4, "{stem}: time {gt} vs {t}");
            assert_eq!(got[1].as_str().unwrap(), var);
            if ty == "d" || moos_number(value) {
                assert_eq!(got[3], "d", "{stem}: {var} {value}");
                assert_eq!(
                    got[4].as_f64().unwrap(),
                    value.parse::<f64>().unwrap(),
                    "{var}"
                );
            } else {
                assert_eq!(got[3], "s");
                assert_eq!(
                    got[4].as_str().unwrap(),
                    value.replace('\n', " ").trim(),
                    "{var}"
                );
            }
        }
        // The mission's posts are there too, with source `mission`.
        assert!(
            a["entries"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e[2] == "mission" && e[1].as_str().unwrap().starts_with("DESIRED_")),
            "{stem}: the mission's DESIRED_* posts"
        );
    }
}

#[test]
fn plot_reads_an_alog_and_unknown_extensions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mission = root().join("missions/harbour_turns.toml");
    let alog = dir.path().join("turns.alog");
    assert!(replay(&mission, &["-o", alog.to_str().unwrap()])
        .status
        .success());
    let svg = dir.path().join("turns.svg");
    let o = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(["plot", alog.to_str().unwrap(), "-o", svg.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("plotted 1 run"), "{err}");
    let text = std::fs::read_to_string(&svg).unwrap();
    roxmltree::Document::parse(&text).expect("well-formed SVG");
    // -o x.alog used to write CSV into it; other extensions are refused
    for bad in ["turns.txt", "turns", "turns.csv.gz"] {
        let out = dir.path().join(bad);
        let o = replay(&mission, &["-o", out.to_str().unwrap()]);
        assert!(!o.status.success(), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("cannot tell the output format") && err.contains(".alog"),
            "{err}"
        );
        assert!(!out.exists(), "{bad} not written");
    }
}

#[test]
fn record_alog_from_the_embedded_broker() {
    let Some(broker) = Broker::start(BrokerKind::Embedded) else {
        return;
    };
    let dir = broker.dir.path().to_path_buf();
    let _a = spawn_vehicle(&write_config(&dir, "alpha", &broker.url(), ""), &[]);
    let w = Watcher::new(broker.port, &[format!("{ROOT}/+/USM_TIME")]);
    w.wait_num(
        0,
        &topic("alpha", "USM_TIME"),
        Duration::from_secs(15),
        |_| true,
    )
    .expect("alpha is not running");
    let out = dir.join("rec.alog");
    let mut cmd = Command::new(usim());
    cmd.args(["record", "--vehicles", "alpha", "--duration", "8", "-o"])
        .arg(&out)
        .args(["--broker", &broker.url(), "--topic-root", ROOT]);
    let mut rec = Proc::spawn("recorder", cmd, dir.join("recorder.log"));
    assert!(
        rec.wait_log("recording", Duration::from_secs(15)),
        "{}",
        rec.log()
    );
    std::thread::sleep(Duration::from_millis(500));
    let o = Command::new(usim())
        .args(["post", "alpha", "DESIRED_THRUST", "60"])
        .args(["--broker", &broker.url(), "--topic-root", ROOT])
        .output()
        .unwrap();
    assert!(o.status.success());
    let st = rec
        .wait_exit(Duration::from_secs(20))
        .expect("stops after --duration");
    assert!(st.success(), "{}", rec.log());
    let a = read_alog(&out);
    assert_eq!(a["invalid"].as_array().unwrap().len(), 0);
    let e = a["entries"].as_array().unwrap();
    let reports = e.iter().filter(|r| r[1] == "NODE_REPORT").count();
    assert!(reports > 5, "{reports} reports");
    assert!(
        rec.log().contains(&format!("alpha: {reports} reports")),
        "{}",
        rec.log()
    );
    assert!(e
        .iter()
        .all(|r| r[2] == "uSimMarine:alpha" || r[2] == "mqtt:alpha"));
    assert!(
        e.iter()
            .any(|r| r[1] == "DESIRED_THRUST" && r[2] == "mqtt:alpha" && r[4] == 60.0),
        "the command"
    );
    assert!(e.iter().any(|r| r[1] == "NAV_X" && r[3] == "d"));
    // times are since LOGSTART and never go backwards
    let ts: Vec<f64> = e.iter().map(|r| r[0].as_f64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]) && ts[0] >= 0.0);
}

/// Issue 37 item 15: an alog with many `_X` rows and no pose (no
/// matching `_Y`) used to be scanned again for every `_X` row (100,000
/// rows: 266 s). The prefix search is one pass: refused at once with the
/// "no pose" error, and a pose found after 100,000 such rows is plotted.
#[test]
fn plot_of_an_alog_without_pose_is_linear() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("%%%%\n%% LOG FILE: x\n%% LOGSTART 1000.0\n%%%%\n");
    for i in 0..100_000 {
        text.push_str(&format!("{}.000 V{i}_X uSimMarine {i}\n", i / 10));
    }
    let alog = dir.path().join("nopose.alog");
    std::fs::write(&alog, &text).unwrap();
    let svg = dir.path().join("nopose.svg");
    let plot = |alog: &Path| {
        Command::new(env!("CARGO_BIN_EXE_usim"))
            .args(["plot", alog.to_str().unwrap(), "-o", svg.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let t0 = std::time::Instant::now();
    let o = plot(&alog);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("no pose"), "{err}");
    // A pose (the last prefix of the file) after them is found.
    for i in 0..50 {
        text.push_str(&format!(
            "{}.000 V99999_Y uSimMarine {i}\n{}.000 V99999_X uSimMarine {i}\n",
            10_000 + i,
            10_000 + i
        ));
    }
    let posed = dir.path().join("late_pose.alog");
    std::fs::write(&posed, &text).unwrap();
    let o = plot(&posed);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("plotted 1 run"), "{err}");
    assert!(
        t0.elapsed() < Duration::from_secs(60),
        "not linear: {:?}",
        t0.elapsed()
    );
}
