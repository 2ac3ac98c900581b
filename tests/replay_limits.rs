//! `usim replay` estimates its output before it starts (issue 20, item
//! 21): a mission of 10^11 rows is refused at once with the estimate and
//! the override flag (no file, no hidden temporary growing until the disk
//! fills); one larger than the free disk space likewise; and a replay
//! longer than a second shows a progress line (%, rows, rate, ETA) on a
//! terminal — run through `script -qc`, a real pseudo-terminal — and
//! nothing when stderr is not a terminal.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn usim() -> &'static str {
    env!("CARGO_BIN_EXE_usim")
}

fn kayak() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/kayak.toml")
}

fn mission(dir: &Path, name: &str, timing: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!(
            "[mission]\nvehicle = \"{}\"\ndt = 0.1\n{timing}\n\n[[post]]\nt = 1.0\nvar = \"DESIRED_THRUST\"\nvalue = 50.0\n",
            kayak().display()
        ),
    )
    .unwrap();
    p
}

/// Run with a 30 s timeout (a replay that starts instead of refusing is
/// killed, not left to fill the disk).
fn run(args: &[&str], dir: &Path) -> (Output, Duration) {
    let t0 = Instant::now();
    let mut child = Command::new(usim())
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain stdout so a stdout replay cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        while let Ok(n) = std::io::Read::read(&mut out, &mut chunk) {
            if n == 0 {
                break;
            }
            if buf.len() < 1 << 20 {
                buf.extend_from_slice(&chunk[..n]);
            }
        }
        buf
    });
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut o = child.wait_with_output().unwrap();
    o.stdout = reader.join().unwrap();
    (o, t0.elapsed())
}

#[test]
fn a_huge_replay_is_refused_with_the_estimate_and_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 10^10 s at dt 0.1: 10^11 steps, one row each.
    let m = mission(d, "huge.toml", "duration = 1e10");
    let (o, took) = run(&["replay", m.to_str().unwrap(), "-o", "out.csv"], d);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        took < Duration::from_secs(20),
        "refused only after {took:?}"
    );
    assert!(err.contains("100000000002 rows"), "the estimate: {err}");
    assert!(err.contains("--allow-large"), "the flag: {err}");
    assert!(err.contains("100000000 rows"), "the limit: {err}");
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("huge.toml")],
        "no output"
    );
    // To stdout too.
    let (o, _) = run(&["replay", m.to_str().unwrap()], d);
    assert!(!o.status.success());
    assert!(o.stdout.is_empty());
}

#[test]
fn a_replay_larger_than_the_free_disk_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let c = std::ffi::CString::new(d.to_str().unwrap()).unwrap();
    // SAFETY: valid path, zeroed out-struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    // MCAP steps are ~1.3 kB; rows within the row limit, bytes over the disk.
    let steps = free / 1000 + 1;
    if steps > 99_000_000 {
        eprintln!("SKIPPED: {free} bytes free is more than a 10^8-row MCAP; the disk check is not reachable here");
        return;
    }
    let m = mission(d, "big.toml", &format!("steps = {steps}"));
    let (o, took) = run(&["replay", m.to_str().unwrap(), "-o", "big.mcap"], d);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(took < Duration::from_secs(20));
    assert!(
        err.contains("free") && err.contains("--allow-large"),
        "{err}"
    );
    assert!(!d.join("big.mcap").exists());
}

/// Three million steps (a few seconds), five rows.
/// A mission that runs well over the 1 s after which progress shows:
/// 3·10⁶ steps in a debug build, 20 times as many in release (where
/// 3·10⁶ take ~0.2 s). Either way 4 rows: row 0 and every third of it.
fn long_mission(d: &Path) -> PathBuf {
    let steps: u64 = if cfg!(debug_assertions) {
        15_000_000
    } else {
        60_000_000
    };
    let body = format!("steps = {steps}\noutput_every = {}", steps / 3);
    mission(d, "long.toml", &body)
}

#[test]
fn progress_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m = long_mission(d);
    let has_script = Command::new("script").arg("--version").output().is_ok();
    if has_script {
        let cmd = format!("{} replay {} -o out.csv", usim(), m.display());
        let o = Command::new("script")
            .args(["-qc", &cmd, "/dev/null"])
            .current_dir(d)
            .output()
            .unwrap();
        let tty = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{tty}");
        for needle in ["%", "step", "rows", "steps/s", "ETA"] {
            assert!(
                tty.contains(needle),
                "`{needle}` not in the terminal's: {tty}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(d.join("out.csv"))
                .unwrap()
                .lines()
                .count(),
            1 + 4,
            "header, row 0, every third of the steps"
        );
    } else {
        eprintln!("SKIPPED: no `script` (util-linux) for the terminal case");
    }
    // Not a terminal: no progress, only the final line.
    let (o, _) = run(&["replay", m.to_str().unwrap(), "-o", "out2.csv"], d);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("ETA") && !err.contains('\r'), "{err}");
}
