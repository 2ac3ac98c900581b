//! Shared helpers of the MOOS tests (`tests/moos_*.rs`): the real peer is
//! pymoos 2022.1 (the C++ MOOS client library) run by `USIM_PYTHON`; a
//! missing pymoos makes a test print SKIPPED, unless `USIM_REQUIRE_PYMOOS`
//! is set (CI), which makes it fail. `usim moosdb` and `usim moos` run as
//! child processes of the built binary ([`Proc`] kills them on drop).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

#[allow(unused_imports)] // each test file uses some of them
pub use crate::mqtt_util::{free_port, on_fresh_port, usim, Proc, START};

/// The Python interpreter of the peers.
pub fn python() -> String {
    std::env::var("USIM_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether pymoos imports; `false` means the caller prints SKIPPED and
/// returns (a failure under `USIM_REQUIRE_PYMOOS`).
pub fn have_pymoos(test: &str) -> bool {
    let ok = Command::new(python())
        .args(["-c", "import pymoos"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var_os("USIM_REQUIRE_PYMOOS").is_none(),
            "USIM_REQUIRE_PYMOOS is set but {} cannot import pymoos",
            python()
        );
        eprintln!("SKIPPED {test}: pymoos is not installed for {}", python());
    }
    ok
}

/// A test script under tests/py.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}

/// Run a Python peer script with a timeout; returns its output.
pub fn run_py(name: &str, args: &[&str], timeout: Duration) -> Output {
    let mut child = Command::new(python())
        .arg(script(name))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start python");
    let t0 = std::time::Instant::now();
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if t0.elapsed() > timeout {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("python output")
}

/// Assert a peer script passed, printing what it said either way.
pub fn assert_py(out: &Output, what: &str) {
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    println!("--- {what} stdout ---\n{so}");
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{so}\n--- stderr ---\n{se}",
        out.status
    );
}

/// Start `usim moosdb` with extra arguments on a port it chooses itself
/// (`--moos_port=0`, read back from its `listening on ADDR` line: no other
/// test can take the port between choosing and binding); waits for it.
pub fn moosdb(dir: &Path, tag: &str, extra: &[&str]) -> (Proc, u16) {
    let mut cmd = Command::new(usim());
    cmd.arg("moosdb").arg("--moos_port=0").args(extra);
    let mut p = Proc::spawn(
        &format!("moosdb {tag}"),
        cmd,
        dir.join(format!("moosdb_{tag}.log")),
    );
    let port = p
        .wait_listen_port(START)
        .unwrap_or_else(|e| panic!("moosdb did not start: {e}"));
    (p, port)
}

/// A mission file with one uSimMarine (or uSimMarineV22) block.
pub fn mission(
    dir: &Path,
    name: &str,
    port: u16,
    warp: f64,
    process: &str,
    block: &str,
) -> PathBuf {
    let text = format!(
        "ServerHost = localhost\nServerPort = {port}\nCommunity = {name}\nMOOSTimeWarp = {warp}\n\
         LatOrigin = 43.825300\nLongOrigin = -70.330400\n\n\
         ProcessConfig = ANTLER\n{{\n  MSBetweenLaunches = 100\n  Run = MOOSDB @ NewConsole = false\n  \
         Run = usim @ NewConsole = false ~ {process}\n}}\n\n\
         ProcessConfig = {process}\n{{\n{block}}}\n"
    );
    let p = dir.join(format!("{name}.moos"));
    std::fs::write(&p, text).expect("write mission");
    p
}
