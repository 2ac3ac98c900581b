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
