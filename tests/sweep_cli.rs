//! `usim sweep` as a user runs it (docs/sweeps.md): the same seed gives a
//! byte-identical summary, shards merged equal the unsharded summary, and
//! bad sweep files are refused with file, line and key before any run.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// The shipped crossing sweep, cut to 2 × 4 runs and 40 s so the test is fast.
fn small_sweep(dir: &Path, seed: u64) -> PathBuf {
    let text = std::fs::read_to_string(root().join("missions/sweeps/crossing.toml")).unwrap();
    let mission = std::fs::read_to_string(root().join("missions/two_boats_crossing.toml"))
        .unwrap()
        .replace("duration = 150.0", "duration = 40.0");
    std::fs::write(dir.join("crossing.toml"), mission).unwrap();
    let text = text
        .replace("\"../two_boats_crossing.toml\"", "\"crossing.toml\"")
        .replace("runs = 50", "runs = 4")
        .replace("seed = 2026", &format!("seed = {seed}"));
    let p = dir.join(format!("sweep{seed}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn same_seed_same_summary_and_shards_merge_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_sweep(dir.path(), 11);
    let s = sweep.to_str().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    ok(&usim(&["sweep", s, "-q", "-o", &out("a.csv")]));
    ok(&usim(&[
        "sweep",
        s,
        "-q",
        "--threads",
        "1",
        "-o",
        &out("b.csv"),
    ]));
    let a = std::fs::read(out("a.csv")).unwrap();
    assert_eq!(
        a,
        std::fs::read(out("b.csv")).unwrap(),
        "same seed, 2 vs 1 threads"
    );
    let text = String::from_utf8(a.clone()).unwrap();
    assert_eq!(
        text.lines().count(),
        1 + 8,
        "header + 2 grid values × 4 runs"
    );
    // Every row's drawn values lie in their ranges; the grid is run-major.
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    for (i, row) in r.records().map(Result::unwrap).enumerate() {
        let f = |name: &str| row[col(name)].parse::<f64>().unwrap();
        assert_eq!(f("run"), i as f64);
        assert_eq!(f("south_thrust"), if i < 4 { 60.0 } else { 80.0 });
        assert!((60.0..90.0).contains(&f("west_thrust")));
        let (x, y) = (f("south_start_x"), f("south_start_y"));
        assert!((-10.0..=10.0).contains(&x) && (-170.0..=-150.0).contains(&y));
        // The run started where the draw says: south heads north from
        // there (with a small cross current), 40 s at most 2 m/s.
        assert!((f("south_y") - y) > 0.0 && (f("south_y") - y) < 80.0 + 1e-9);
        assert!(f("west_distance") > 0.0 && f("west_distance") < 80.0 + 1e-9);
    }
    // Shards: 3 uneven slices, merged (in any order) = the whole.
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
    ok(&usim(&[
        "sweep",
        "merge",
        &out("p2.csv"),
        &out("p0.csv"),
        &out("p1.csv"),
        "-o",
        &out("m.csv"),
    ]));
    assert_eq!(std::fs::read(out("m.csv")).unwrap(), a);
    // A missing shard is an error, not a short summary.
    let o = usim(&["sweep", "merge", &out("p0.csv"), &out("p2.csv")]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing"));
    // Another seed, other draws.
    let other = small_sweep(dir.path(), 12);
    let o = usim(&["sweep", other.to_str().unwrap(), "-q"]);
    ok(&o);
    assert_ne!(o.stdout, a);
}

#[test]
fn bad_sweeps_are_refused_with_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(small_sweep(dir.path(), 1)).unwrap();
    let cases = [
        (
            "min = 60.0\nmax = 90.0",
            "min = 60.0\nmax = 60.0",
            "var.max",
            "empty range",
        ),
        (
            "points = [[-10.0, -170.0], [10.0, -170.0], [10.0, -150.0], [-10.0, -150.0]]",
            "points = [[-10.0, -170.0], [10.0, -170.0]]",
            "var.points",
            "at least 3 points",
        ),
        (
            "target = \"south.start\"",
            "target = \"north.start\"",
            "var.target",
            "no vehicle called `north`",
        ),
        (
            "target = \"post.3.t\"",
            "target = \"post.9.t\"",
            "var.target",
            "post 9 does not exist",
        ),
    ];
    for (from, to, key, says) in cases {
        assert!(good.contains(from), "{from}");
        let text = good.replacen(from, to, 1);
        let p = dir.path().join("bad.toml");
        std::fs::write(&p, &text).unwrap();
        // The error points at the line of the changed key (the last line
        // of the replacement).
        let last = to.lines().last().unwrap();
        let line = text.lines().position(|l| l == last).unwrap() + 1;
        let o = usim(&["sweep", p.to_str().unwrap(), "-q"]);
        assert!(!o.status.success());
        assert!(o.stdout.is_empty(), "nothing ran");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains(&format!("bad.toml:{line}")),
            "{key}: line {line}: {e}"
        );
        assert!(e.contains(key) && e.contains(says), "{e}");
    }
}

/// `scripts/sweep_shard.sh` as Slurm (SLURM_ARRAY_TASK_ID/COUNT) and a
/// Kubernetes indexed Job (JOB_COMPLETION_INDEX, SHARDS) run it: the
/// parts merge into the unsharded summary.
#[test]
fn job_array_script_shards_merge_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_sweep(dir.path(), 5);
    let s = sweep.to_str().unwrap();
    let whole = usim(&["sweep", s, "-q"]);
    ok(&whole);
    let bin = env!("CARGO_BIN_EXE_usim");
    for (style, vars) in [
        (
            "slurm",
            [
                ("SLURM_ARRAY_TASK_ID", "I"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
        ),
        ("k8s", [("JOB_COMPLETION_INDEX", "I"), ("SHARDS", "3")]),
    ] {
        let out = dir.path().join(style);
        for i in 0..3 {
            let mut c = Command::new("bash");
            c.arg(root().join("scripts/sweep_shard.sh"))
                .arg(s)
                .arg(&out)
                .env("USIM", bin)
                .env_remove("SLURM_ARRAY_TASK_ID")
                .env_remove("JOB_COMPLETION_INDEX")
                .env_remove("SLURM_CPUS_PER_TASK");
            for (k, v) in vars {
                c.env(
                    k,
                    if v == "I" {
                        i.to_string()
                    } else {
                        v.to_string()
                    },
                );
            }
            let o = c.output().unwrap();
            ok(&o);
        }
        let parts: Vec<String> = (0..3)
            .map(|i| out.join(format!("part-{i}-of-3.csv")).display().to_string())
            .collect();
        let mut args = vec!["sweep", "merge"];
        args.extend(parts.iter().map(String::as_str));
        let merged = usim(&args);
        ok(&merged);
        assert_eq!(merged.stdout, whole.stdout, "{style}");
    }
    // The Slurm and Kubernetes files call that script with 8 shards.
    let sbatch = std::fs::read_to_string(root().join("scripts/sweep_slurm.sbatch")).unwrap();
    assert!(sbatch.contains("#SBATCH --array=0-7") && sbatch.contains("scripts/sweep_shard.sh"));
    let job = std::fs::read_to_string(root().join("scripts/sweep_k8s_job.yaml")).unwrap();
    assert!(job.contains("completionMode: Indexed") && job.contains("completions: 8"));
    assert!(job.contains("value: \"8\"") && job.contains("scripts/sweep_shard.sh"));
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `--runs-dir`: every run's CSV, the summary unchanged; each file is the
/// replay of that run's drawn mission, its last rows are the summary's
/// final poses and its first row the drawn start; a shard writes exactly
/// its runs' files, the same bytes.
#[test]
fn runs_dir_writes_every_runs_replay() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = small_sweep(dir.path(), 7);
    let s = sweep.to_str().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    ok(&usim(&["sweep", s, "-q", "-o", &out("plain.csv")]));
    ok(&usim(&[
        "sweep",
        s,
        "-q",
        "-o",
        &out("with.csv"),
        "--runs-dir",
        &out("runs"),
    ]));
    let summary = std::fs::read(out("with.csv")).unwrap();
    assert_eq!(
        summary,
        std::fs::read(out("plain.csv")).unwrap(),
        "the summary does not change with --runs-dir"
    );
    let runs = dir.path().join("runs");
    let want: Vec<String> = (0..8).map(|r| format!("run-{r:06}.csv")).collect();
    assert_eq!(files_in(&runs), want, "one file per run, no temporary left");

    // Each file is the replay of the run's drawn mission.
    let sw = usim::sweep::load(&sweep).unwrap();
    for run in [0u64, 5] {
        let (m, _) = sw.mission_for(run);
        let mut replayed = std::io::Cursor::new(Vec::new());
        usim::replay::run_into(
            &m,
            usim::replay::Format::Csv,
            &mut replayed,
            None,
            |_, _| {},
            |_, _, _| {},
        )
        .unwrap();
        assert_eq!(
            std::fs::read(runs.join(&want[run as usize])).unwrap(),
            replayed.into_inner(),
            "run {run}"
        );
    }

    // The files agree with the summary: the drawn start of "south" is its
    // first row; each vehicle's last row is its final pose in the summary.
    let text = String::from_utf8(summary).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().unwrap().clone();
    for row in r.records().map(Result::unwrap) {
        let get = |name: &str| &row[h.iter().position(|c| c == name).unwrap()];
        let run: usize = get("run").parse().unwrap();
        let mut f = csv::Reader::from_path(runs.join(&want[run])).unwrap();
        let fh = f.headers().unwrap().clone();
        assert_eq!(&fh[0], "vehicle");
        let fcol = |name: &str| fh.iter().position(|c| c == name).unwrap();
        let rows: Vec<csv::StringRecord> = f.records().map(Result::unwrap).collect();
        let first_south = rows.iter().find(|r| &r[0] == "south").unwrap();
        assert_eq!(&first_south[fcol("k")], "0");
        assert_eq!(&first_south[fcol("x")], get("south_start_x"), "run {run}");
        assert_eq!(&first_south[fcol("y")], get("south_start_y"), "run {run}");
        for v in ["west", "south"] {
            let last = rows.iter().rev().find(|r| &r[0] == v).unwrap();
            assert_eq!(&last[fcol("t")], "40", "run {run}");
            for c in ["x", "y", "heading"] {
                assert_eq!(
                    &last[fcol(c)],
                    get(&format!("{v}_{c}")),
                    "run {run} {v} {c}"
                );
            }
        }
    }

    // A shard writes its own runs only, the same bytes.
    ok(&usim(&[
        "sweep",
        s,
        "-q",
        "--shard",
        "1/2",
        "-o",
        &out("part1.csv"),
        "--runs-dir",
        &out("runs1"),
    ]));
    let runs1 = dir.path().join("runs1");
    assert_eq!(files_in(&runs1), want[4..].to_vec());
    for name in &want[4..] {
        assert_eq!(
            std::fs::read(runs1.join(name)).unwrap(),
            std::fs::read(runs.join(name)).unwrap(),
            "{name}"
        );
    }
    // --runs-format without --runs-dir is refused.
    let o = usim(&["sweep", s, "-q", "--runs-format", "mcap"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--runs-dir"));
}

/// A sweep whose one variable is a grid over [the base value, another]:
/// run 0 is the base mission, so its file equals `usim replay` of the
/// mission file, byte for byte, as CSV and as MCAP; run 1 differs.
#[test]
fn run_of_the_base_values_equals_usim_replay_of_the_mission() {
    let dir = tempfile::tempdir().unwrap();
    let mission = std::fs::read_to_string(root().join("missions/two_boats_crossing.toml"))
        .unwrap()
        .replace("duration = 150.0", "duration = 30.0");
    std::fs::write(dir.path().join("crossing.toml"), mission).unwrap();
    let sweep = dir.path().join("grid.toml");
    std::fs::write(
        &sweep,
        "[sweep]\nmission = \"crossing.toml\"\n\n[[var]]\nname = \"south_thrust\"\n\
         kind = \"grid\"\ntarget = \"post.2.value\"\nvalues = [80.0, 50.0]\n",
    )
    .unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for (format, ext) in [("csv", "csv"), ("mcap", "mcap")] {
        ok(&usim(&[
            "replay",
            &p("crossing.toml"),
            "-q",
            "-o",
            &p(&format!("base.{ext}")),
        ]));
        let runs = p(&format!("runs-{ext}"));
        ok(&usim(&[
            "sweep",
            &p("grid.toml"),
            "-q",
            "--runs-dir",
            &runs,
            "--runs-format",
            format,
        ]));
        let base = std::fs::read(p(&format!("base.{ext}"))).unwrap();
        let run0 = std::fs::read(Path::new(&runs).join(format!("run-000000.{ext}"))).unwrap();
        let run1 = std::fs::read(Path::new(&runs).join(format!("run-000001.{ext}"))).unwrap();
        assert!(base.len() > 1000, "{ext}: {} bytes", base.len());
        assert!(run0 == base, "{ext}: run 0 is the base mission's replay");
        assert!(run1 != base, "{ext}: run 1 has another thrust");
    }
}

/// `--runs-format mcap`: each run's MCAP, read back by the Python `mcap`
/// package (tests/py/check_mcap.py), holds the same states as the run's
/// CSV from `--runs-dir` in CSV, and the mission's commands.
#[test]
fn runs_dir_mcap_is_read_by_python_mcap() {
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
    let kayak = root().join("configs/kayak.toml");
    let mission = std::fs::read_to_string(root().join("missions/harbour_turns.toml"))
        .unwrap()
        .replace(
            "vehicle = \"../configs/kayak.toml\"",
            &format!("vehicle = {:?}", kayak.to_str().unwrap()),
        )
        .replace("duration = 300.0", "duration = 70.0");
    let mission_path = dir.path().join("turns.toml");
    std::fs::write(&mission_path, mission).unwrap();
    let sweep = dir.path().join("turns_sweep.toml");
    std::fs::write(
        &sweep,
        "[sweep]\nmission = \"turns.toml\"\nseed = 3\nruns = 2\n\n\
         [[var]]\nname = \"thrust\"\nkind = \"uniform\"\ntarget = \"post.1.value\"\nmin = 40.0\nmax = 90.0\n\n\
         [[var]]\nname = \"rudder\"\nkind = \"grid\"\ntarget = \"post.2.value\"\nvalues = [30.0, -15.0]\n",
    )
    .unwrap();
    let s = sweep.to_str().unwrap();
    let csv_dir = dir.path().join("csv");
    let mcap_dir = dir.path().join("mcap");
    for (d, f) in [(&csv_dir, "csv"), (&mcap_dir, "mcap")] {
        ok(&usim(&[
            "sweep",
            s,
            "-q",
            "--runs-dir",
            d.to_str().unwrap(),
            "--runs-format",
            f,
        ]));
    }
    let names = files_in(&mcap_dir);
    assert_eq!(
        names,
        (0..4)
            .map(|r| format!("run-{r:06}.mcap"))
            .collect::<Vec<_>>()
    );
    let script = root().join("tests/py/check_mcap.py");
    for name in names {
        let csv_path = csv_dir.join(name.replace(".mcap", ".csv"));
        let o = Command::new("python3")
            .arg(&script)
            .arg(mcap_dir.join(&name))
            .arg(&csv_path)
            .arg(&mission_path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("OK 701 states"),
            "{name}"
        );
    }
}
