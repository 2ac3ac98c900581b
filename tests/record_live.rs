//! `usim record` against real brokers (mosquitto started by the test, and
//! the embedded one) while two live vehicles run and `usim post` sends them
//! commands: a CSV recorder (two vehicles, --duration) and an MCAP recorder
//! (--all, stopped with SIGINT) run side by side. The recorded rows are
//! consecutive in k per vehicle, the commands are in the MCAP, their
//! effects in the CSV, and the per-vehicle counts printed match the files.
mod mqtt_util;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mqtt_util::*;

/// Deadline for anything that should take a tick or two (returned from as
/// soon as it happens): generous, as CI runs many tests on two cores.
const WAIT: Duration = Duration::from_secs(30);

fn record_proc(broker: &Broker, name: &str, args: &[&str], out: &Path) -> Proc {
    let mut cmd = Command::new(usim());
    cmd.arg("record").args(args).arg("-o").arg(out).args([
        "--broker",
        &broker.url(),
        "--topic-root",
        ROOT,
    ]);
    Proc::spawn(name, cmd, broker.dir.path().join(format!("{name}.log")))
}

fn post(broker: &Broker, vehicle: &str, var: &str, value: &str) {
    let o = Command::new(usim())
        .args(["post", vehicle, var, value])
        .args(["--broker", &broker.url(), "--topic-root", ROOT])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "post: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `vehicle -> [(k, row)]` from a recorded CSV with a vehicle column.
fn csv_rows(path: &Path) -> BTreeMap<String, Vec<BTreeMap<String, f64>>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "vehicle");
    assert_eq!(
        header[1..].join(","),
        usim::replay::csv::HEADER,
        "replay's columns"
    );
    let mut out: BTreeMap<String, Vec<BTreeMap<String, f64>>> = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), header.len(), "{l}");
        let row = header[1..]
            .iter()
            .zip(&f[1..])
            .map(|(h, v)| (h.to_string(), v.parse::<f64>().unwrap()))
            .collect();
        out.entry(f[0].to_string()).or_default().push(row);
    }
    out
}

fn assert_consecutive(what: &str, ks: &[u64]) {
    assert!(ks.len() >= 20, "{what}: only {} rows", ks.len());
    for w in ks.windows(2) {
        assert_eq!(w[1], w[0] + 1, "{what}: gap in k: {} -> {}", w[0], w[1]);
    }
}

fn scenario(kind: BrokerKind) {
    let Some(broker) = Broker::start(kind) else {
        return;
    };
    let dir = broker.dir.path().to_path_buf();
    let _a = spawn_vehicle(&write_config(&dir, "alpha", &broker.url(), ""), &[]);
    let _b = spawn_vehicle(&write_config(&dir, "bravo", &broker.url(), ""), &[]);
    let w = Watcher::new(broker.port, &[format!("{ROOT}/+/USM_TIME")]);
    for v in ["alpha", "bravo"] {
        w.wait_num(0, &topic(v, "USM_TIME"), WAIT, |_| true)
            .unwrap_or_else(|| panic!("{v} is not running"));
    }

    let csv = dir.join("rec.csv");
    let mcap = dir.join("rec.mcap");
    let mut rc = record_proc(
        &broker,
        "csv-recorder",
        // Long enough for the four `usim post` processes below and their
        // effects on a loaded machine.
        &["--vehicles", "alpha,bravo", "--duration", "10"],
        &csv,
    );
    let mut rm = record_proc(&broker, "mcap-recorder", &["--all"], &mcap);
    assert!(
        rc.wait_log("recording", WAIT),
        "csv recorder not ready:\n{}",
        rc.log()
    );
    assert!(
        rm.wait_log("recording", WAIT),
        "mcap recorder not ready:\n{}",
        rm.log()
    );

    std::thread::sleep(Duration::from_millis(500));
    post(&broker, "alpha", "DESIRED_THRUST", "60");
    post(&broker, "bravo", "DESIRED_RUDDER", "15");
    std::thread::sleep(Duration::from_millis(500));
    post(
        &broker,
        "alpha",
        "USM_RESET",
        "x=10, y=5, speed=0, heading=90",
    );
    post(&broker, "bravo", "DESIRED_THRUST", "40");

    let st = rc
        .wait_exit(WAIT)
        .expect("csv recorder stops after --duration");
    assert!(st.success(), "{}", rc.log());
    rm.signal(libc::SIGINT);
    let st = rm.wait_exit(WAIT).expect("mcap recorder stops on SIGINT");
    assert!(st.success(), "{}", rm.log());

    // CSV: both vehicles, consecutive k, the commands' effects.
    let rows = csv_rows(&csv);
    assert_eq!(rows.keys().collect::<Vec<_>>(), ["alpha", "bravo"]);
    for (v, r) in &rows {
        let ks: Vec<u64> = r.iter().map(|row| row["k"] as u64).collect();
        assert_consecutive(&format!("csv {v}"), &ks);
        let reported = format!("{v}: {} reports", r.len());
        assert!(
            rc.log().contains(&reported),
            "{reported} not in {}",
            rc.log()
        );
    }
    assert!(
        rows["alpha"].iter().any(|r| r["thrust"] == 60.0),
        "alpha thrust 60"
    );
    // After the reset alpha heads east from (10, 5) with thrust still on.
    assert!(
        rows["alpha"].iter().any(|r| (10.0..12.0).contains(&r["x"])
            && (r["y"] - 5.0).abs() < 1e-6
            && r["heading"] == 90.0),
        "alpha reset"
    );
    assert!(
        rows["bravo"].iter().any(|r| r["rudder"] == 15.0),
        "bravo rudder 15"
    );

    // MCAP: states consecutive per vehicle, every command on its channel.
    let bytes = std::fs::read(&mcap).unwrap();
    let mut states: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut cmds: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&m.data).unwrap();
        let topic = &m.channel.topic;
        if let Some(name) = topic.strip_suffix("/state") {
            states
                .entry(name.trim_start_matches('/').to_string())
                .or_default()
                .push(v["k"].as_u64().unwrap());
        } else if topic.contains("/cmd/") {
            cmds.entry(topic.clone()).or_default().push(v);
        }
    }
    assert_eq!(states.keys().collect::<Vec<_>>(), ["alpha", "bravo"]);
    for (v, ks) in &states {
        assert_consecutive(&format!("mcap {v}"), ks);
        let reported = format!("{v}: {} reports", ks.len());
        assert!(
            rm.log().contains(&reported),
            "{reported} not in {}",
            rm.log()
        );
    }
    let value = |t: &str| cmds.get(t).map(|v| v[0]["value"].clone());
    let number = |t: &str| value(t).and_then(|v| v.as_f64());
    assert_eq!(number("/alpha/cmd/DESIRED_THRUST"), Some(60.0));
    assert_eq!(number("/bravo/cmd/DESIRED_RUDDER"), Some(15.0));
    assert_eq!(number("/bravo/cmd/DESIRED_THRUST"), Some(40.0));
    assert_eq!(
        value("/alpha/cmd/USM_RESET"),
        Some(serde_json::json!("x=10, y=5, speed=0, heading=90"))
    );
    assert_eq!(cmds.len(), 4, "{cmds:?}");
    assert!(
        rm.log().contains("alpha: ") && rm.log().contains("2 commands"),
        "{}",
        rm.log()
    );
    // Nothing but the finished files (no temporaries).
    assert!(!std::fs::read_dir(&dir).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));
}

#[test]
fn record_on_mosquitto() {
    scenario(BrokerKind::Mosquitto);
}

#[test]
fn record_on_embedded_broker() {
    scenario(BrokerKind::Embedded);
}
