//! `usim interp` end to end (docs/formats.md §5). Expected numbers come from the
//! seed (`001_…`) or are computed by hand in the comments.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn usim(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start usim");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("wait for usim")
}

fn mission(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("missions/interp")
        .join(name)
}

/// Runs `usim interp` successfully and returns the rows as (t, value).
fn rows(args: &[&str], stdin: Option<&str>) -> Vec<(f64, f64)> {
    let out = usim(args, stdin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "usim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("t,value"));
    lines
        .map(|l| {
            let (t, v) = l.split_once(',').expect("two columns");
            (t.parse().expect("t"), v.parse().expect("value"))
        })
        .collect()
}

fn script(dir: &tempfile::TempDir, text: &str) -> String {
    let p = dir.path().join("script.jsonl");
    std::fs::write(&p, text).expect("write script");
    p.display().to_string()
}

#[test]
fn seed_example_1() {
    let path = mission("seed_example_1.jsonl");
    let out = usim(
        &[
            "interp",
            &path.display().to_string(),
            "--cycle",
            "0.01",
            "--until",
            "0.1",
        ],
        None,
    );
    assert!(out.status.success());
    // Seed: 10 (applied at 10 ms), 10, then 15 20 25 30 35 40, then 40 stays.
    let want = "t,value\n0.01,10\n0.02,10\n0.03,15\n0.04,20\n0.05,25\n\
                0.06,30\n0.07,35\n0.08,40\n0.09,40\n0.1,40\n";
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
}

#[test]
fn seed_example_2() {
    let path = mission("seed_example_2.jsonl");
    let got = rows(
        &[
            "interp",
            &path.display().to_string(),
            "--cycle",
            "0.01",
            "--until",
            "0.08",
        ],
        None,
    );
    // Seed: 6.66 (= 10·10/15 = 20/3), 20, 27.5, 22.5, 15, 5, 0, and 0 after.
    let want = [20.0 / 3.0, 20.0, 27.5, 22.5, 15.0, 5.0, 0.0, 0.0];
    assert_eq!(got.len(), want.len());
    for (k, ((t, v), w)) in got.iter().zip(want).enumerate() {
        assert_eq!(*t, (k + 1) as f64 / 100.0);
        assert_eq!(*v, w, "t = {t}");
    }
}

#[test]
fn seed_example_2_rounded() {
    let path = mission("seed_example_2.jsonl");
    let got = rows(
        &[
            "interp",
            &path.display().to_string(),
            "--cycle",
            "0.01",
            "--until",
            "0.07",
            "--rounded",
        ],
        None,
    );
    // sendCommand: 20/3 → 7, 27.5 → 28, 22.5 → 23 (halves away from zero).
    let values: Vec<f64> = got.iter().map(|r| r.1).collect();
    assert_eq!(values, [7.0, 20.0, 28.0, 23.0, 15.0, 5.0, 0.0]);
}

#[test]
fn stdin_initial_value_and_relative_times() {
    // Initial 10; at 0.2 s a ClearAll to 30 at "+0.2" (= 0.4 s). Cycles every
    // 0.1 s: 0.1 → 10, 0.2 → ramp from (0.1, 10): 20·0.1/0.3 + 10 = 16.66…,
    // 0.3 → (30 − 50/3)·0.1/0.2 + 50/3 = 23.33…, 0.4 → 30, 0.5 → 30.
    let text = r#"{"at": 0.2, "update": "ClearAll", "commands": [[30, "+0.2"]]}"#;
    let got = rows(
        &[
            "interp",
            "-",
            "--cycle",
            "0.1",
            "--until",
            "0.5",
            "--initial",
            "10",
        ],
        Some(text),
    );
    let t: Vec<f64> = got.iter().map(|r| r.0).collect();
    assert_eq!(t, [0.1, 0.2, 0.3, 0.4, 0.5]);
    let v: Vec<f64> = got.iter().map(|r| r.1).collect();
    assert_eq!(v[0], 10.0);
    assert!((v[1] - 50.0 / 3.0).abs() < 1e-12, "{v:?}");
    assert!((v[2] - 70.0 / 3.0).abs() < 1e-12, "{v:?}");
    assert_eq!(&v[3..], [30.0, 30.0]);
}

#[test]
fn negative_initial_value_and_until_between_cycles() {
    // --until 0.1 with --cycle 0.03: cycles at 0.03, 0.06, 0.09 only.
    let got = rows(
        &[
            "interp",
            "-",
            "--cycle",
            "0.03",
            "--until",
            "0.1",
            "--initial",
            "-5",
        ],
        Some(""),
    );
    assert_eq!(got, [(0.03, -5.0), (0.06, -5.0), (0.09, -5.0)]);
}

#[test]
fn calls_are_taken_in_order_of_receipt() {
    // Written out of order; by receipt: at 0.01 a Merge (100 at 0.1 s), at
    // 0.05 a ClearAll (0 at 0.06 s). From (0, 0) the ramp to 100 gives 10, 20,
    // 30, 40 at 0.01..0.04; at 0.05 only (0.06, 0) is pending: from (0.04, 40)
    // 40 − 40·0.01/0.02 = 20; at 0.06 → 0, then 0.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = script(
        &dir,
        "{\"at\": 0.05, \"update\": \"ClearAll\", \"commands\": [[0, 0.06]]}\n\
         {\"at\": 0.01, \"update\": \"Merge\", \"commands\": [[100, 0.1]]}\n",
    );
    let got = rows(
        &["interp", &path, "--cycle", "0.01", "--until", "0.07"],
        None,
    );
    let v: Vec<f64> = got.iter().map(|r| r.1).collect();
    assert_eq!(v, [10.0, 20.0, 30.0, 40.0, 20.0, 0.0, 0.0]);
}

fn failure(args: &[&str], stdin: Option<&str>) -> String {
    let out = usim(args, stdin);
    assert!(!out.status.success(), "usim {args:?} should fail");
    assert!(out.stdout.is_empty(), "no CSV on error");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn script_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (
            "{\"at\": 0, \"update\": \"Merge\", \"commands\": []}\n{\"at\": 0.1, \"update\": \"Mix\", \"commands\": []}\n",
            ":2: unknown update kind \"Mix\"",
        ),
        ("# ok\n{\"at\": 0.1, \"update\": \"Merge\"", ":2: malformed JSON"),
        (
            "{\"at\": 0.1, \"update\": \"Merge\", \"commands\": [[\"NaN\", 1]]}",
            ":1: command 0: value must be a number",
        ),
        (
            "{\"at\": 0.1, \"update\": \"Merge\", \"commands\": [[1, 1e400]]}",
            ":1: malformed JSON: number out of range",
        ),
        (
            "{\"at\": 0.1, \"update\": \"Merge\", \"commands\": [[1, \"+inf\"]]}",
            ":1: command 0: time \"+inf\"",
        ),
    ];
    for (text, want) in cases {
        let path = script(&dir, text);
        let err = failure(&["interp", &path, "--cycle", "0.1", "--until", "1"], None);
        assert!(
            err.contains(&format!("{path}{want}")),
            "got {err:?}, want {want:?}"
        );
    }
}

#[test]
fn bad_arguments_are_reported() {
    let path = mission("seed_example_1.jsonl").display().to_string();
    let err = failure(&["interp", &path, "--cycle", "0", "--until", "1"], None);
    assert!(err.contains("--cycle 0"), "{err}");
    let err = failure(&["interp", &path, "--cycle", "NaN", "--until", "1"], None);
    assert!(err.contains("--cycle NaN"), "{err}");
    let err = failure(&["interp", &path, "--cycle", "0.1", "--until", "inf"], None);
    assert!(err.contains("--until inf"), "{err}");
    let err = failure(
        &[
            "interp",
            "/nonexistent/script.jsonl",
            "--cycle",
            "0.1",
            "--until",
            "1",
        ],
        None,
    );
    assert!(err.contains("/nonexistent/script.jsonl"), "{err}");
}

#[test]
fn help_describes_the_script() {
    let out = usim(&["interp", "--help"], None);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--cycle",
        "--until",
        "--initial",
        "\"at\"",
        "ClearBefore",
        "\"+2.5\"",
    ] {
        assert!(help.contains(needle), "help lacks {needle}: {help}");
    }
}
