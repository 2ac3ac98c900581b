//! Every command that reads a file from outside refuses a FIFO (which
//! would block forever) and `/dev/zero` (which never ends) at once, with a
//! clear error, instead of hanging, running out of memory or aborting
//! (issue 20, item 22): `import-moos`, `sweep merge`, `plot`, `interp`,
//! `profile --batch`, `run` (a config), `replay` (a mission), `sweep` (a
//! sweep file) and `record --recover`. Each command runs under a 20 s
//! timeout; a hang fails the test.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn usim() -> &'static str {
    env!("CARGO_BIN_EXE_usim")
}

/// Run with a timeout; `(exit code, stderr)`, or panic on a hang.
fn run(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let err = dir.join("stderr.txt");
    let mut child = Command::new(usim())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st.code(), std::fs::read_to_string(&err).unwrap());
        }
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("usim {args:?} hung (killed after 20 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    p
}

#[test]
fn fifos_and_dev_zero_are_refused_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good_csv = d.join("ok.csv");
    std::fs::write(&good_csv, "k,t,x\n").unwrap();
    for (i, bad) in [fifo(d, "a.fifo"), PathBuf::from("/dev/zero")]
        .iter()
        .enumerate()
    {
        let b = bad.to_str().unwrap();
        let png = d.join(format!("p{i}.svg"));
        let cases: Vec<Vec<&str>> = vec![
            vec!["import-moos", b],
            vec!["sweep", "merge", b],
            vec!["plot", b, "-o", png.to_str().unwrap()],
            vec!["interp", "--cycle", "0.1", "--until", "1", b],
            vec!["profile", "--batch", b],
            vec!["run", b],
            vec!["replay", b],
            vec!["sweep", b],
            vec!["record", "--recover", b],
        ];
        for args in cases {
            let (code, err) = run(&args, d);
            assert_ne!(code, Some(0), "usim {args:?} succeeded: {err}");
            assert!(
                code.is_some() && code != Some(134),
                "usim {args:?} crashed ({code:?}): {err}"
            );
            assert!(
                err.contains("not a regular file"),
                "usim {args:?}: no clear error: {err}"
            );
            assert!(
                err.contains(b),
                "usim {args:?}: the file is not named: {err}"
            );
        }
    }
}
