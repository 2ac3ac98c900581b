//! `usim sweep` under a careless user or a hostile file (issue 20, items
//! 16–18): `merge` refuses parts that are truncated, edited, of another
//! sweep or seed, or repeated, and names the shards that are missing;
//! Ctrl-C keeps the finished rows in `SUMMARY.csv.partial` and `--resume`
//! finishes the same bytes an uninterrupted run writes (and refuses a
//! partial of another sweep); an unwritable `-o` is refused before the
//! first run; ranges whose draws are not finite are refused with the key.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn usim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("usim runs")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn fails_with(o: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "succeeded: {err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
}

/// The shipped crossing sweep, cut to 2 × `runs` runs of `secs` s.
fn sweep_file(dir: &Path, seed: u64, runs: u64, secs: u32, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join("missions/sweeps/crossing.toml")).unwrap();
    let mission = std::fs::read_to_string(root().join("missions/two_boats_crossing.toml"))
        .unwrap()
        .replace("duration = 150.0", &format!("duration = {secs}.0"));
    let mname = format!("{name}-mission.toml");
    std::fs::write(dir.join(&mname), mission).unwrap();
    let text = text
        .replace("\"../two_boats_crossing.toml\"", &format!("\"{mname}\""))
        .replace("runs = 50", &format!("runs = {runs}"))
        .replace("seed = 2026", &format!("seed = {seed}"));
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn merge_checks_parts_are_one_whole_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = sweep_file(d, 11, 3, 20, "a");
    let s = s.to_str().unwrap();
    let out = |n: &str| d.join(n).to_str().unwrap().to_string();
    ok(&usim(&["sweep", s, "-q", "-o", &out("whole.csv")]));
    for i in 0..3 {
        ok(&usim(&[
            "sweep",
            s,
            "-q",
            "--shard",
            &format!("{i}/3"),
            "-o",
            &out(&format!("p{i}.csv")),
        ]));
    }
    // The whole: the unsharded summary, byte for byte.
    let m = usim(&[
        "sweep",
        "merge",
        &out("p1.csv"),
        &out("p0.csv"),
        &out("p2.csv"),
    ]);
    ok(&m);
    assert_eq!(m.stdout, std::fs::read(out("whole.csv")).unwrap());

    // Missing: named with its runs (3 shards of 6 runs: 2 each).
    let o = usim(&["sweep", "merge", &out("p0.csv"), &out("p2.csv")]);
    fails_with(&o, &["1 of 3 shards missing", "1/3 (runs 2..4)"]);
    // Repeated.
    let o = usim(&[
        "sweep",
        "merge",
        &out("p0.csv"),
        &out("p0.csv"),
        &out("p1.csv"),
    ]);
    fails_with(&o, &["appears twice"]);
    // Truncated: the end line cut off, or the last row cut in half.
    let p1 = std::fs::read_to_string(out("p1.csv")).unwrap();
    let body = &p1[..p1.trim_end().rfind('\n').unwrap() + 1];
    std::fs::write(out("cut.csv"), body).unwrap();
    let o = usim(&[
        "sweep",
        "merge",
        &out("p0.csv"),
        &out("cut.csv"),
        &out("p2.csv"),
    ]);
    fails_with(&o, &["cut.csv", "no end line", "truncated"]);
    std::fs::write(out("half.csv"), &body[..body.len() - 10]).unwrap();
    let o = usim(&[
        "sweep",
        "merge",
        &out("p0.csv"),
        &out("half.csv"),
        &out("p2.csv"),
    ]);
    fails_with(&o, &["half.csv", "no end line"]);
    // A row dropped but the end line kept: the checksum.
    let mut lines: Vec<&str> = p1.lines().collect();
    lines.remove(1);
    std::fs::write(out("drop.csv"), lines.join("\n") + "\n").unwrap();
    let o = usim(&[
        "sweep",
        "merge",
        &out("p0.csv"),
        &out("drop.csv"),
        &out("p2.csv"),
    ]);
    fails_with(&o, &["drop.csv", "checksum"]);
    // Edited: one digit of a row.
    let mut lines: Vec<String> = p1.lines().map(String::from).collect();
    lines[1] = lines[1].replacen(',', ",9", 1);
    std::fs::write(out("edit.csv"), lines.join("\n") + "\n").unwrap();
    let o = usim(&[
        "sweep",
        "merge",
        &out("p0.csv"),
        &out("edit.csv"),
        &out("p2.csv"),
    ]);
    fails_with(&o, &["edit.csv", "checksum"]);
    // Another seed: same header, other draws.
    let s2 = sweep_file(d, 12, 3, 20, "b");
    ok(&usim(&[
        "sweep",
        s2.to_str().unwrap(),
        "-q",
        "--shard",
        "1/3",
        "-o",
        &out("seed12.csv"),
    ]));
    let o = usim(&[
        "sweep",
        "merge",
        &out("p0.csv"),
        &out("seed12.csv"),
        &out("p2.csv"),
    ]);
    fails_with(&o, &["seed12.csv", "seed 12 but", "seed 11"]);
    // Another sweep: the mission differs (same seed, same header).
    let s3 = sweep_file(d, 11, 3, 21, "c");
    ok(&usim(&[
        "sweep",
        s3.to_str().unwrap(),
        "-q",
        "--shard",
        "1/3",
        "-o",
        &out("other.csv"),
    ]));
    let o = usim(&[
        "sweep",
        "merge",
        &out("p0.csv"),
        &out("other.csv"),
        &out("p2.csv"),
    ]);
    fails_with(&o, &["other.csv", "another sweep"]);
    // Another shard count.
    ok(&usim(&[
        "sweep",
        s,
        "-q",
        "--shard",
        "1/2",
        "-o",
        &out("half2.csv"),
    ]));
    let o = usim(&["sweep", "merge", &out("p0.csv"), &out("half2.csv")]);
    fails_with(&o, &["half2.csv", "1/2"]);
    // An unsharded summary is not a part.
    let o = usim(&["sweep", "merge", &out("whole.csv")]);
    fails_with(&o, &["no end line"]);
}

#[test]
fn ctrl_c_keeps_rows_and_resume_finishes_the_same_summary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = sweep_file(d, 5, 60, 60, "long");
    let s = s.to_str().unwrap();
    let out = |n: &str| d.join(n).to_str().unwrap().to_string();
    // The reference, uninterrupted.
    ok(&usim(&["sweep", s, "-q", "-o", &out("ref.csv")]));
    let reference = std::fs::read(out("ref.csv")).unwrap();
    assert_eq!(reference.iter().filter(|&&b| b == b'\n').count(), 1 + 120);

    // Interrupted once rows have reached the partial file (streamed).
    let partial = d.join("sum.csv.partial");
    let mut child = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(["sweep", s, "--threads", "1", "-o", &out("sum.csv")])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        let rows = std::fs::read(&partial)
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0);
        if rows > 20 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep finished before it could be interrupted"
        );
        assert!(t0.elapsed() < Duration::from_secs(120), "no rows streamed");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("--resume") && err.contains("sum.csv.partial"),
        "{err}"
    );
    assert!(!d.join("sum.csv").exists(), "no summary before the end");
    let kept = std::fs::read(&partial).unwrap();
    assert!(kept.len() < reference.len(), "interrupted before the end");
    assert_eq!(kept, reference[..kept.len()], "finished rows, in order");

    // A cut last line (a kill in the middle of a write) is dropped.
    let mut cut = kept.clone();
    cut.extend_from_slice(b"999,1.5");
    std::fs::write(&partial, &cut).unwrap();
    // Another seed's sweep may not resume it.
    let other = sweep_file(d, 6, 60, 60, "other");
    let o = usim(&[
        "sweep",
        other.to_str().unwrap(),
        "-q",
        "--resume",
        "-o",
        &out("sum.csv"),
    ]);
    fails_with(&o, &["not the partial summary of this sweep"]);
    let o = usim(&["sweep", s, "--resume", "-o", &out("sum.csv")]);
    ok(&o);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("resuming"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(out("sum.csv")).unwrap(), reference);
    assert!(!partial.exists());
}

#[test]
fn unwritable_output_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = sweep_file(d, 1, 2, 20, "w");
    let runs = d.join("runs");
    let o = usim(&[
        "sweep",
        s.to_str().unwrap(),
        "-o",
        "/nonexistent-usim-dir/sum.csv",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    fails_with(&o, &["/nonexistent-usim-dir/sum.csv", "cannot write"]);
    assert!(
        !runs.exists(),
        "a run was made before the output was checked"
    );
    let o = usim(&["sweep", s.to_str().unwrap(), "-o", d.to_str().unwrap()]);
    fails_with(&o, &["is a directory"]);
}

#[test]
fn ranges_with_non_finite_draws_are_refused_with_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = std::fs::read_to_string(sweep_file(d, 1, 2, 20, "g")).unwrap();
    let cases = [
        (
            "min = 60.0\nmax = 90.0",
            "min = -1.7e308\nmax = 1.7e308",
            "var.min",
        ),
        (
            "min = 60.0\nmax = 90.0",
            "min = 0.0\nmax = 1.7e308",
            "var.max",
        ),
        (
            "values = [60.0, 80.0]",
            "values = [60.0, 1e300]",
            "var.values",
        ),
        (
            "points = [[-10.0, -170.0], [10.0, -170.0], [10.0, -150.0], [-10.0, -150.0]]",
            "points = [[-1e200, -1e200], [1e200, -1e200], [1e200, 1e200]]",
            "var.points",
        ),
    ];
    for (from, to, key) in cases {
        assert!(good.contains(from), "{from}");
        let p = d.join("bad.toml");
        std::fs::write(&p, good.replacen(from, to, 1)).unwrap();
        let o = usim(&["sweep", p.to_str().unwrap(), "-q"]);
        fails_with(&o, &[key, "bad.toml", "finite"]);
    }
    // A normal whose tails overflow.
    let p = d.join("bad.toml");
    std::fs::write(
        &p,
        good.replacen(
            "kind = \"uniform\"\ntarget = \"post.1.value\"\nmin = 60.0\nmax = 90.0",
            "kind = \"normal\"\ntarget = \"post.1.value\"\nmean = 0.0\nstd = 1e307",
            1,
        ),
    )
    .unwrap();
    let o = usim(&["sweep", p.to_str().unwrap(), "-q"]);
    fails_with(&o, &["var.std", "finite"]);
}
