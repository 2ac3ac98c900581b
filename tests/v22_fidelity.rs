//! USM_RESET_COUNT follows each model's rule (docs/v22.md, publications):
//! uSimMarineV22 keeps its counter in the model's pose reset, which every
//! `start_pos` config line calls too, so after a config with `start_pos`
//! the first `USM_RESET` posts 2; classic counts `USM_RESET` mail only and
//! posts 1; `USM_RESET_NAV` never counts. The missions are in
//! tests/data/reset_count/ (two `USM_RESET`s around one `USM_RESET_NAV`).
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/reset_count")
        .join(name)
}

/// `usim replay MISSION --posts P`: the values posted as USM_RESET_COUNT,
/// in order, and the replay's standard error.
fn reset_counts(mission: &str, extra: &[&str]) -> (Vec<f64>, String) {
    let dir = tempfile::tempdir().unwrap();
    let posts = dir.path().join("posts.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_usim"))
        .arg("replay")
        .arg(data(mission))
        .arg("-o")
        .arg(dir.path().join("run.csv"))
        .arg("--posts")
        .arg(&posts)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{mission}: {stderr}");
    let text = std::fs::read_to_string(&posts).unwrap();
    let counts = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(5, ',').collect();
            (f.get(2) == Some(&"USM_RESET_COUNT")).then(|| f[4].parse::<f64>().unwrap())
        })
        .collect();
    (counts, stderr)
}

#[test]
fn v22_counts_the_start_pos_line() {
    assert_eq!(reset_counts("v22_start_pos.toml", &[]).0, vec![2.0, 3.0]);
}

#[test]
fn classic_counts_reset_mail_only() {
    assert_eq!(
        reset_counts("classic_start_pos.toml", &[]).0,
        vec![1.0, 2.0]
    );
}

#[test]
fn v22_without_start_pos_starts_at_zero() {
    assert_eq!(reset_counts("v22_start_xy.toml", &[]).0, vec![1.0, 2.0]);
}

#[test]
fn fast_v22_posts_print_one_note_pointing_to_libm() {
    let (_, stderr) = reset_counts("v22_start_pos.toml", &[]);
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("math = \"libm\""))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].contains("NAV_SPEED"), "{stderr}");
    // Classic vehicles and libm vehicles get no note.
    let (_, stderr) = reset_counts("classic_start_pos.toml", &[]);
    assert!(!stderr.contains("math = \"libm\""), "{stderr}");
}

#[test]
fn libm_v22_posts_print_no_note_and_keep_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data("v22_start_pos.toml"))
        .unwrap()
        .replace("model = \"v22\"", "model = \"v22\"\nmath = \"libm\"");
    let path = dir.path().join("libm.toml");
    std::fs::write(&path, text).unwrap();
    let posts = dir.path().join("posts.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(["replay"])
        .arg(&path)
        .arg("-o")
        .arg(dir.path().join("run.csv"))
        .arg("--posts")
        .arg(&posts)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("math = \"libm\""), "{stderr}");
    let counts: Vec<String> = std::fs::read_to_string(&posts)
        .unwrap()
        .lines()
        .filter(|l| l.contains(",USM_RESET_COUNT,"))
        .map(|l| l.rsplit(',').next().unwrap().to_string())
        .collect();
    assert_eq!(counts, ["2", "3"]);
}
