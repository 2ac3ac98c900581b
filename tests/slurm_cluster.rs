//! The sweep's scheduler files on real schedulers' own tools
//! (docs/sweeps.md):
//! * a one-node Slurm cluster (slurmctld + slurmd + munge on loopback,
//!   `scripts/slurm_local.sh`) runs `scripts/sweep_slurm.sbatch` as a job
//!   array submitted with `sbatch --wait --array=0-2`; the parts, merged
//!   with `usim sweep merge`, are byte for byte the unsharded summary;
//! * the Kubernetes indexed Job `scripts/sweep_k8s_job.yaml` passes the
//!   Kubernetes API schema (`kubernetes-validate --strict`), and the same
//!   file with a misspelt field fails it.
//!
//! Each test prints SKIPPED when its peer is missing (Slurm: `apt-get
//! install -y slurm-wlm munge` and root; the schema: `pip install
//! kubernetes-validate`), and fails instead with `USIM_REQUIRE_SLURM=1` /
//! `USIM_REQUIRE_K8S_SCHEMA=1` (as in CI).
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ok(what: &str, o: &Output) {
    assert!(
        o.status.success(),
        "{what}: {}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn skipped(why: &str, require: &str) {
    assert!(
        std::env::var_os(require).is_none(),
        "{require} is set but {why}"
    );
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {why}; this test passes without running"
    );
}

fn found(bin: &str) -> bool {
    let in_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        .unwrap_or(false);
    in_path || Path::new("/usr/sbin").join(bin).is_file()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// The shipped crossing sweep cut to 2 × 6 runs of 40 s (as tests/sweep_cli.rs).
fn small_sweep(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("missions/sweeps/crossing.toml")).unwrap();
    let mission = std::fs::read_to_string(root().join("missions/two_boats_crossing.toml"))
        .unwrap()
        .replace("duration = 150.0", "duration = 40.0");
    std::fs::write(dir.join("crossing.toml"), mission).unwrap();
    let text = text
        .replace("\"../two_boats_crossing.toml\"", "\"crossing.toml\"")
        .replace("runs = 50", "runs = 6");
    assert!(text.contains("runs = 6"), "the sweep file changed: {text}");
    let p = dir.join("sweep.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// A running one-node cluster; stopped on drop (and by the script's
/// watchdog if this process dies first).
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    fn start(dir: PathBuf) -> Cluster {
        let o = Command::new("bash")
            .arg(root().join("scripts/slurm_local.sh"))
            .arg("start")
            .arg(&dir)
            .env("SLURM_LOCAL_OWNER", std::process::id().to_string())
            .env("SLURM_LOCAL_TTL", "900")
            .output()
            .expect("bash runs");
        let c = Cluster {
            conf: dir.join("slurm.conf"),
            dir,
        };
        ok("slurm_local.sh start", &o);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("SLURM_CONF="),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        c
    }

    fn tool(&self, bin: &str) -> Command {
        let mut c = Command::new(bin);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn logs(&self) -> String {
        let mut s = String::new();
        for f in ["slurmctld.log", "slurmd.log"] {
            let text = std::fs::read_to_string(self.dir.join("log").join(f)).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            s += &format!("--- {f}\n");
            for l in tail.into_iter().rev() {
                s += l;
                s.push('\n');
            }
        }
        s
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(root().join("scripts/slurm_local.sh"))
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

#[test]
fn slurm_job_array_merges_to_the_unsharded_summary() {
    let missing: Vec<&str> = ["sbatch", "squeue", "slurmctld", "slurmd", "munged"]
        .into_iter()
        .filter(|b| !found(b))
        .collect();
    if !missing.is_empty() {
        return skipped(
            &format!(
                "Slurm is not installed (missing {}; apt-get install -y slurm-wlm munge)",
                missing.join(", ")
            ),
            "USIM_REQUIRE_SLURM",
        );
    }
    if !is_root() {
        return skipped(
            "the local Slurm cluster needs root (slurmd starts jobs as their user)",
            "USIM_REQUIRE_SLURM",
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let sweep = small_sweep(tmp.path());
    let bin = env!("CARGO_BIN_EXE_usim");
    let whole = Command::new(bin)
        .args(["sweep", sweep.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    ok("usim sweep", &whole);
    assert_eq!(
        String::from_utf8_lossy(&whole.stdout).lines().count(),
        13,
        "header + 2 grid points × 6 runs"
    );

    let cluster = Cluster::start(tmp.path().join("slurm"));
    let out = tmp.path().join("parts");
    let logs = tmp.path().join("job-logs");
    std::fs::create_dir_all(&logs).unwrap();
    // The array of the sbatch file, cut to 3 tasks on the command line
    // (which overrides its `#SBATCH --array=0-7`); run from the repository
    // root, as the file says, with our binary as `usim`.
    let submitted = Instant::now();
    let o = cluster
        .tool("sbatch")
        .arg("--wait")
        .arg("--array=0-2")
        .arg(format!("--chdir={}", root().display()))
        .arg(format!("--output={}/task-%A_%a.log", logs.display()))
        .arg("--export=ALL")
        .arg("scripts/sweep_slurm.sbatch")
        .arg(&sweep)
        .arg(&out)
        .env("USIM", bin)
        .current_dir(root())
        .output()
        .expect("sbatch runs");
    let mut task_logs = String::new();
    if let Ok(rd) = std::fs::read_dir(&logs) {
        for e in rd.flatten() {
            task_logs += &format!(
                "--- {}\n{}",
                e.file_name().to_string_lossy(),
                std::fs::read_to_string(e.path()).unwrap_or_default()
            );
        }
    }
    assert!(
        o.status.success(),
        "sbatch --wait: {}\n{}{}\n{task_logs}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        cluster.logs()
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let job_id: String = stdout
        .split_whitespace()
        .last()
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    assert!(!job_id.is_empty(), "sbatch said {stdout}");
    // The scheduler's own view: no task of the array is left in the queue.
    let q = cluster
        .tool("squeue")
        .args(["-h", "-j", &job_id, "-o", "%i %T"])
        .output()
        .unwrap();
    let left = String::from_utf8_lossy(&q.stdout);
    assert!(
        left.lines()
            .all(|l| l.contains("COMPLETED") || l.trim().is_empty()),
        "still queued: {left}"
    );
    // Three tasks, each wrote its part and its log.
    let parts: Vec<String> = (0..3)
        .map(|i| out.join(format!("part-{i}-of-3.csv")).display().to_string())
        .collect();
    for p in &parts {
        assert!(Path::new(p).is_file(), "{p} missing\n{task_logs}");
    }
    assert_eq!(
        std::fs::read_dir(&logs).unwrap().count(),
        3,
        "one log per task: {task_logs}"
    );
    let mut args = vec!["sweep", "merge"];
    args.extend(parts.iter().map(String::as_str));
    let merged = Command::new(bin).args(&args).output().unwrap();
    ok("usim sweep merge", &merged);
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout),
        String::from_utf8_lossy(&whole.stdout),
        "merged parts differ from the unsharded summary"
    );
    assert!(submitted.elapsed() < Duration::from_secs(600));
    drop(cluster);
    // Stopped: no daemon's pid file is left.
    for f in ["slurmctld.pid", "slurmd.pid", "munged.pid", "watchdog.pid"] {
        assert!(
            !tmp.path().join("slurm").join(f).exists(),
            "{f} left after stop"
        );
    }
}

fn kubernetes_validate() -> Option<PathBuf> {
    let py = std::env::var("USIM_PYTHON").unwrap_or_else(|_| "python3".into());
    let beside = Path::new(&py).with_file_name("kubernetes-validate");
    if beside.is_file() {
        return Some(beside);
    }
    let in_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("kubernetes-validate"))
            .find(|f| f.is_file())
    });
    in_path
}

fn validate(tool: &Path, file: &Path) -> Output {
    Command::new(tool)
        .args(["--strict", "--no-warn"])
        .arg(file)
        .output()
        .expect("kubernetes-validate runs")
}

#[test]
fn k8s_job_file_passes_the_kubernetes_schema_and_a_typo_fails_it() {
    let Some(tool) = kubernetes_validate() else {
        return skipped(
            "kubernetes-validate is not installed (pip install kubernetes-validate)",
            "USIM_REQUIRE_K8S_SCHEMA",
        );
    };
    let file = root().join("scripts/sweep_k8s_job.yaml");
    let o = validate(&tool, &file);
    ok(
        "kubernetes-validate --strict scripts/sweep_k8s_job.yaml",
        &o,
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // A misspelt field at three depths; each must fail the strict schema.
    for (good, bad) in [
        ("completionMode:", "completionMod:"),
        ("restartPolicy:", "restartpolicy:"),
        ("workingDir:", "workDir:"),
    ] {
        assert!(text.contains(good), "{good} not in the Job file");
        let p = tmp.path().join("job.yaml");
        std::fs::write(&p, text.replacen(good, bad, 1)).unwrap();
        let o = validate(&tool, &p);
        assert!(
            !o.status.success(),
            "{bad} passed the schema: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let said = String::from_utf8_lossy(&o.stdout) + String::from_utf8_lossy(&o.stderr);
        assert!(said.contains(bad.trim_end_matches(':')), "{said}");
    }
}
