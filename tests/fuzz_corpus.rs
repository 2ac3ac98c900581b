//! Replays the fuzz corpus and every crash ever found through the fuzz
//! target bodies (`usim::fuzz_entry`), so CI checks them without
//! cargo-fuzz: every file of `fuzz/corpus/<target>/` and
//! `fuzz/artifacts/<target>/` must run without a panic.
use std::path::Path;

fn replay(target: &str) {
    let f = usim::fuzz_entry::target(target).expect("known target");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut n = 0;
    for dir in ["corpus", "artifacts"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for path in files.into_iter().filter(|p| p.is_file()) {
            let data = std::fs::read(&path).expect("readable corpus file");
            let r = std::panic::catch_unwind(|| f(&data));
            assert!(r.is_ok(), "{target}: {} panicked", path.display());
            n += 1;
        }
    }
    assert!(
        n >= 10,
        "{target}: only {n} corpus files (a seed corpus is expected)"
    );
}

#[test]
fn every_target_has_a_corpus_directory() {
    for (name, _) in usim::fuzz_entry::TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/corpus")
            .join(name);
        assert!(dir.is_dir(), "missing {}", dir.display());
        let fuzz_toml =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/Cargo.toml"))
                .expect("fuzz/Cargo.toml");
        assert!(
            fuzz_toml.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] for {name}"
        );
    }
}

#[test]
fn message() {
    replay("message");
}

#[test]
fn set() {
    replay("set");
}

#[test]
fn config() {
    replay("config");
}

#[test]
fn mission() {
    replay("mission");
}

#[test]
fn current_field() {
    replay("current_field");
}

#[test]
fn profile_csv() {
    replay("profile_csv");
}

#[test]
fn sweep() {
    replay("sweep");
}

#[test]
fn run_csv() {
    replay("run_csv");
}

#[test]
fn view_client() {
    replay("view_client");
}

#[test]
fn view_geometry() {
    replay("view_geometry");
}

#[test]
fn node_report() {
    replay("node_report");
}

#[test]
fn moos_import() {
    replay("moos_import");
}

#[test]
fn v22_strings() {
    replay("v22_strings");
}

#[test]
fn sweep_part() {
    replay("sweep_part");
}

#[test]
fn mcap_recover() {
    replay("mcap_recover");
}

#[test]
fn mqtt_connect() {
    replay("mqtt_connect");
}

#[test]
fn claim() {
    replay("claim");
}

#[test]
fn moos_packet() {
    replay("moos_packet");
}

#[test]
fn moos_db() {
    replay("moos_db");
}

#[test]
fn moos_wildcard() {
    replay("moos_wildcard");
}

#[test]
fn nmea_report() {
    replay("nmea_report");
}

#[test]
fn ais_in() {
    replay("ais_in");
}

#[test]
fn nmea_tables() {
    replay("nmea_tables");
}

#[test]
fn nsplug() {
    replay("nsplug");
}

#[test]
fn alog() {
    replay("alog");
}

#[test]
fn moos_appcast() {
    replay("moos_appcast");
}

#[test]
fn ros2_cdr() {
    replay("ros2_cdr");
}

#[test]
fn ros2_command() {
    replay("ros2_command");
}

#[test]
fn moos_bridge() {
    replay("moos_bridge");
}

#[test]
fn obstacles() {
    replay("obstacles");
}
