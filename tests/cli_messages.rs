//! The exact texts of issue 24's command-line items: a config with no name
//! says usim calls the vehicle `vehicle` and suggests `--name`; a typo of
//! a MOOS setting gets "did you mean `CommsTick`?" in `usim import-moos`
//! and in usim's own TOML.
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn usim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_usim"))
}

#[test]
fn import_moos_suggests_the_moos_key_and_says_when_there_is_no_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.moos"),
        "ProcessConfig = uSimMarine\n{\n  commstic = 4\n}\n",
    )
    .unwrap();
    let o = usim()
        .current_dir(dir.path())
        .args(["import-moos", "m.moos"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "usim: m.moos:3: key `commstic`: not imported: not a uSimMarine parameter (uSimMarine reports it as unhandled); did you mean `CommsTick`?",
            "usim: m.moos: no `Community` line, so the config has no `name` and usim will call the vehicle `vehicle`; name it with `usim run --name NAME` or add `name = \"NAME\"` to the config",
        ]
    );
}

#[test]
fn toml_typo_of_a_moos_setting_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.toml"),
        "[mission]\ndt = 0.1\nduration = 1.0\n[vehicle]\nmodel = \"classic\"\ncommstic = 4\n",
    )
    .unwrap();
    let o = usim()
        .current_dir(dir.path())
        .args(["replay", "m.toml"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "usim: error: m.toml:6: key `commstic`: unknown key; did you mean `CommsTick`? That is a MOOS app setting usim does not have (its iteration rate is `app_tick`) (`usim example` lists every key, docs/config.md explains them)\n"
    );
}

#[test]
fn run_without_a_name_says_what_it_calls_the_vehicle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("v.toml"), "model = \"classic\"\n").unwrap();
    // No broker at port 1: the vehicle retries; the warning comes first.
    let mut child = usim()
        .current_dir(dir.path())
        .args(["run", "v.toml", "--broker", "mqtt://127.0.0.1:1"])
        .env("NO_COLOR", "1")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let want = "usim: warning: v.toml has no `name`, so usim calls the vehicle `vehicle` (topics {root}/vehicle/...); name it with --name NAME or `name = \"NAME\"` in the config";
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            if l == want {
                break;
            }
            seen.push(l);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.len() < 100 && Instant::now() < deadline,
        "not seen: {seen:?}"
    );
    assert!(seen.is_empty(), "the warning is the first line: {seen:?}");
    // with --name, no warning
    let o = usim()
        .current_dir(dir.path())
        .args([
            "run",
            "v.toml",
            "--name",
            "henry",
            "--broker",
            "mqtt://127.0.0.1:1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let mut o = o;
    let _ = o.kill();
    let out = o.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("has no `name`"));
}
