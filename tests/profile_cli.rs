//! `usim profile` (docs/formats.md §6), run as the built binary.
use std::process::Command;

fn usim(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .output()
        .expect("run usim");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn num(s: &str) -> f64 {
    s.trim().parse().expect("number")
}

#[test]
fn single_motion_prints_the_duration() {
    // d = 2 a^3 / j^2 = 5.0625: four jerk pulses of a/j = 0.75 s.
    let (ok, out, err) = usim(&[
        "profile", "--pf", "5.0625", "--vmax", "10", "--amax", "4.5", "--jmax", "6",
    ]);
    assert!(ok, "{err}");
    assert!((num(&out) - 3.0).abs() < 1e-12, "{out}");
}

#[test]
fn single_motion_with_dt_prints_setpoints() {
    // Rest-to-rest over 2 with v, a, j = 2, 1, 1: no limit reached,
    // tj = (d/2j)^(1/3) = 1, duration 4, symmetric about t = 2.
    let (ok, out, err) = usim(&[
        "profile", "--p0", "-1", "--pf", "1", "--vmax", "2", "--amax", "1", "--jmax", "1", "--dt",
        "1",
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "t,p,v,a,j");
    assert_eq!(lines.len(), 6);
    let row = |k: usize| -> Vec<f64> { lines[k].split(',').map(num).collect() };
    // t = 1: p = -1 + j t^3 / 6, v = t^2 / 2, a = 1.
    let r1 = row(2);
    assert!((r1[1] - (-1.0 + 1.0 / 6.0)).abs() < 1e-12 && (r1[2] - 0.5).abs() < 1e-12);
    // t = 2: the middle, p = 0 and v = j tj^2 = 1.
    let r2 = row(3);
    assert!(r2[1].abs() < 1e-12 && (r2[2] - 1.0).abs() < 1e-12 && r2[3].abs() < 1e-12);
    let end = row(5);
    assert!((end[0] - 4.0).abs() < 1e-12 && (end[1] - 1.0).abs() < 1e-12);
}

#[test]
fn batch_adds_duration_and_states_at_times() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cases.csv");
    std::fs::write(
        &path,
        "p0,v0,a0,pf,vf,af,vmax,amax,jmax\n0,0,0,5.0625,0,0,10,4.5,6\n1,2,0,1,2,0,2,1,1\n",
    )
    .expect("write");
    let (ok, out, err) = usim(&[
        "profile",
        "--batch",
        path.to_str().expect("utf8"),
        "--at",
        "1.50,10",
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "p0,v0,a0,pf,vf,af,vmax,amax,jmax,duration,p@1.50,v@1.50,a@1.50,p@10,v@10,a@10"
    );
    let r: Vec<f64> = lines[1].split(',').map(num).collect();
    assert!((r[9] - 3.0).abs() < 1e-12);
    // Half way: half the distance, peak velocity a^2/j + a*(0) = 4.5*0.75.
    assert!((r[10] - 5.0625 / 2.0).abs() < 1e-12 && (r[11] - 4.5 * 0.75).abs() < 1e-12);
    assert!((r[13] - 5.0625).abs() < 1e-12 && r[14] == 0.0);
    // Already at the target: duration 0, then moving on at v = 2.
    let r: Vec<f64> = lines[2].split(',').map(num).collect();
    assert_eq!(r[9], 0.0);
    assert!((r[13] - 21.0).abs() < 1e-12 && r[14] == 2.0);
}

#[test]
fn batch_errors_name_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.csv");
    std::fs::write(
        &path,
        "p0,v0,a0,pf,vf,af,vmax,amax,jmax\n0,0,0,1,0,0,1,1,1\n0,0,0,1,0,0,1,0,1\n",
    )
    .expect("write");
    let (ok, _, err) = usim(&["profile", "--batch", path.to_str().expect("utf8")]);
    assert!(!ok);
    assert!(err.contains("bad.csv:3:") && err.contains("a_max"), "{err}");
    std::fs::write(&path, "p0,v0,a0,pf,vf,af,vmax,amax\n").expect("write");
    let (ok, _, err) = usim(&["profile", "--batch", path.to_str().expect("utf8")]);
    assert!(!ok && err.contains("missing column 'jmax'"), "{err}");
}

#[test]
fn bad_single_motion_is_a_clear_error() {
    let (ok, _, err) = usim(&[
        "profile", "--pf", "1", "--vf", "3", "--vmax", "2", "--amax", "1", "--jmax", "1",
    ]);
    assert!(!ok && err.contains("vf = 3"), "{err}");
    let (ok, _, err) = usim(&["profile", "--pf", "1", "--vmax", "2", "--amax", "1"]);
    assert!(!ok && err.contains("--jmax"), "{err}");
}
