//! `usim replay`, `usim example`, `usim interface` as a user runs them, and
//! every shipped mission replays without dropped messages.
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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn replay_to_stdout_has_the_contract_header() {
    let o = usim(&["replay", "missions/gusts.toml", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(usim::replay::csv::HEADER));
    // 180 s at 0.1 s: rows k = 0..=1800
    assert_eq!(lines.count(), 1801);
}

#[test]
fn replay_to_file_is_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    for out in [&a, &b] {
        let o = usim(&["replay", "missions/dive.toml", "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("wrote 4001 rows"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn every_shipped_mission_replays_cleanly() {
    let mut n = 0;
    for entry in std::fs::read_dir(root().join("missions")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let mission = usim::mission::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            mission.vehicle.warnings.is_empty(),
            "{}: {:?}",
            path.display(),
            mission.vehicle.warnings
        );
        let summary = usim::replay::run(&mission, std::io::sink(), |_, _| {}).unwrap();
        assert!(
            summary.dropped.is_empty(),
            "{}: {:?}",
            path.display(),
            summary.dropped
        );
        let every = mission.output_every;
        let expected = 1
            + (1..=mission.steps)
                .filter(|k| k % every == 0 || *k == mission.steps)
                .count();
        let expected = expected * mission.vehicle_count();
        assert_eq!(summary.rows, expected as u64, "{}", path.display());
        n += 1;
    }
    assert!(n >= 5, "at least five missions ship, found {n}");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn config_typo_is_a_clear_error_with_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "boat.toml",
        "name = \"b\"\nthrust_mpa = \"100:2\"\n",
    );
    let m = write(
        dir.path(),
        "m.toml",
        "[mission]\nvehicle = \"boat.toml\"\nsteps = 10\n",
    );
    let o = usim(&["replay", m.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("boat.toml:2"), "{e}");
    assert!(e.contains("thrust_mpa") && e.contains("thrust_map"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn mission_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    for (text, needle) in [
        ("[mission]\nsteps = 5\n[vehicle]\n[[post]]\nt = -2\nvar = \"DESIRED_THRUST\"\nvalue = 1\n", ":5"),
        ("[mission]\nsteps = 5\n[vehicle]\n[[post]]\nt = 1\nvar = \"DESIRED_THRUSTER\"\nvalue = 1\n", "DESIRED_THRUST"),
        ("[mission]\nsteps = 5\n[vehicle]\n[[post]]\nt = 1\nvar = \"DRIFT_X\"\nvalue = \"east\"\n", "not a number"),
        ("[mission]\nsteps = 5\n[vehicle]\ndrift_x = nan\n", "finite"),
        ("[mission]\nsteps = 5\n[vehicle]\n[[post]]\nt = 1\nvar = \"SET\"\nvalue = '[\"DESIRED_RUDDER\", \"Sometimes\", []]'\n", "Sometimes"),
        ("[mission\nsteps = 5\n", "m.toml:1"),
    ] {
        let m = write(dir.path(), "m.toml", text);
        let o = usim(&["replay", m.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        let e = stderr(&o);
        assert!(e.contains(needle), "expected {needle:?} in {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn rejected_string_values_are_warnings_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.toml",
        "[mission]\nsteps = 20\n[vehicle]\nthrust_map = \"-120:-5, 50:2\"\n[[post]]\nt = 1\nvar = \"DRIFT_VECTOR\"\nvalue = \"10, 2e-1\"\n",
    );
    let o = usim(&[
        "replay",
        m.to_str().unwrap(),
        "-o",
        dir.path().join("o.csv").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("warning") && e.contains("thrust_map"), "{e}");
    assert!(e.contains("DRIFT_VECTOR") && e.contains("m.toml:8"), "{e}");
}

#[test]
fn example_config_and_interface() {
    let o = usim(&["example"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("max_deceleration = 0.5"));
    let o = usim(&["interface", "--prefix", "NAV"]);
    let text = String::from_utf8(o.stdout).unwrap();
    for needle in [
        "DESIRED_THRUST",
        "DRIFT_VECTOR_ADD",
        "USM_RESET",
        "NAV_SPEED",
        "m/s",
        "NAV_YAW",
    ] {
        assert!(text.contains(needle), "{needle}");
    }
}

#[test]
fn missing_mission_file_is_a_clear_error() {
    let o = usim(&["replay", "missions/nope.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missions/nope.toml"), "{}", stderr(&o));
}

/// `usim replay MISSION -o run.csv --posts posts.csv`: the posts log has
/// the contract header and, for the V22 lawn-mower survey, the PID's
/// `post_des_*` postings every iteration and the pose group on even ones.
#[test]
fn replay_writes_the_posts_log() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let posts = dir.path().join("posts.csv");
    let o = usim(&[
        "replay",
        "missions/lawnmower_pid.toml",
        "-o",
        csv.to_str().unwrap(),
        "--posts",
        posts.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&posts).unwrap();
    assert_eq!(text.lines().next(), Some("k,t,var,type,value"));
    let mut r = csv::Reader::from_path(&posts).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let count = |var: &str| rows.iter().filter(|r| &r[2] == var).count();
    // 330 s at 0.1 s: 3300 iterations, the PID runs in each
    assert_eq!(count("PID_THRUST"), 3300);
    assert_eq!(count("PID_RUDDER"), 3300);
    assert_eq!(count("NAV_X"), 1650, "even iterations only");
    let drift = rows.iter().find(|r| &r[2] == "USM_DRIFT_SUMMARY").unwrap();
    assert_eq!((&drift[0], &drift[3]), ("1", "s"));
    assert_eq!(&drift[4], "ang=0, mag=0, xmag=0, ymag=0");
    // the last thrust posting is 2 m/s x speed factor 20
    let last = rows.iter().rev().find(|r| &r[2] == "PID_THRUST").unwrap();
    assert_eq!(&last[3], "d");
    assert_eq!(last[4].parse::<f64>().unwrap(), 40.0);
}

/// A file that takes `left` bytes, then fails every write with "disk full
/// (test)" (an output's I/O error in the middle of a replay).
struct FailAfter {
    data: std::io::Cursor<Vec<u8>>,
    left: usize,
}

impl std::io::Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("disk full (test)"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        self.data.write(&buf[..n])
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for FailAfter {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.data.seek(pos)
    }
}

/// An output error on the second thread (`usim replay -o FILE` formats and
/// writes there) ends the replay with that same error, as on one thread,
/// wherever it happens: in a row's write, or in the final flush.
#[test]
fn an_output_error_on_the_second_thread_is_the_replays_error() {
    use usim::replay::{run_into_on, Format, Threads};
    let m = usim::mission::load(&root().join("missions/dive.toml")).unwrap();
    let mut whole = Vec::new();
    usim::replay::run(&m, &mut whole, |_, _| {}).unwrap();
    let total = whole.len();
    assert!(total > 500_000, "{total} bytes");
    // in the first batch, in the middle, in the last 64 KiB (the flush of
    // `finish`), one byte short
    for left in [1_000, total / 2, total - 1_000, total - 1] {
        let mut outcomes = Vec::new();
        for threads in [Threads::One, Threads::Two] {
            let mut w = FailAfter {
                data: std::io::Cursor::new(Vec::new()),
                left,
            };
            let r = run_into_on(
                threads,
                &m,
                Format::Csv,
                &mut w,
                None,
                |_, _| {},
                |_, _, _| {},
            );
            let e = r.expect_err("the output fails");
            assert_eq!(e.to_string(), "disk full (test)", "{threads:?} at {left}");
            assert_eq!(e.kind(), std::io::ErrorKind::Other);
            assert_eq!(w.data.get_ref()[..], whole[..left], "{threads:?} at {left}");
            outcomes.push(e.to_string());
        }
        assert_eq!(outcomes[0], outcomes[1]);
    }
    // and all of it fits: no error
    let mut w = FailAfter {
        data: std::io::Cursor::new(Vec::new()),
        left: total,
    };
    run_into_on(
        Threads::Two,
        &m,
        Format::Csv,
        &mut w,
        None,
        |_, _| {},
        |_, _, _| {},
    )
    .unwrap();
    assert!(w.data.get_ref()[..] == whole[..]);
}

/// The posts log is written on the calling thread: its error, too, is the
/// replay's error with two threads.
#[test]
fn a_posts_log_error_with_two_threads_is_the_replays_error() {
    use usim::replay::{run_into_on, Format, Threads};
    let m = usim::mission::load(&root().join("missions/lawnmower_pid.toml")).unwrap();
    let mut posts = FailAfter {
        data: std::io::Cursor::new(Vec::new()),
        left: 10_000,
    };
    let mut out = std::io::Cursor::new(Vec::new());
    let e = run_into_on(
        Threads::Two,
        &m,
        Format::Csv,
        &mut out,
        Some(&mut posts),
        |_, _| {},
        |_, _, _| {},
    )
    .expect_err("the posts log fails");
    assert_eq!(e.to_string(), "disk full (test)");
    assert_eq!(posts.data.get_ref().len(), 10_000);
}

/// An output that notes on which thread and in which order its rows come.
struct Where<'a> {
    seen: &'a std::sync::Mutex<Vec<(Option<String>, u64)>>,
}

impl usim::replay::Output for Where<'_> {
    fn row(&mut self, s: &usim::model::Snapshot, _clock: f64) -> std::io::Result<()> {
        let name = std::thread::current().name().map(str::to_string);
        self.seen.lock().unwrap().push((name, s.k));
        Ok(())
    }

    fn finish(self) -> std::io::Result<()> {
        Ok(())
    }
}

/// With two threads the rows are made on the second one (named
/// `usim-output`), every one of them, in the order of the replay loop.
#[test]
fn two_threads_make_the_rows_on_the_second_in_order() {
    let m = usim::mission::load(&root().join("missions/dive.toml")).unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    let s =
        usim::replay::threaded::run_fleet(&m, Where { seen: &seen }, None, |_, _| {}, |_, _, _| {})
            .unwrap();
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len() as u64, s.rows);
    assert_eq!(s.rows, 4001);
    assert!(seen
        .iter()
        .all(|(name, _)| name.as_deref() == Some("usim-output")));
    let ks: Vec<u64> = seen.iter().map(|(_, k)| *k).collect();
    assert_eq!(ks, (0..=4000).collect::<Vec<u64>>());
}

/// `usim replay -o FILE` (two threads, the disk writes started early)
/// writes the bytes `usim replay` prints on stdout (one thread), for one
/// vehicle and for a fleet.
#[test]
fn replay_to_a_file_writes_what_stdout_gets() {
    let dir = tempfile::tempdir().unwrap();
    // rows: dive 40 s at 0.1 s, long_survey 36,000 steps, two boats 151 each
    for (mission, rows) in [
        ("missions/dive.toml", 4001),
        ("missions/long_survey.toml", 36_001),
        ("missions/two_boats_crossing.toml", 302),
    ] {
        let out = dir.path().join("out.csv");
        let o = usim(&["replay", mission, "-q", "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let printed = usim(&["replay", mission, "-q"]);
        assert!(printed.status.success(), "{}", stderr(&printed));
        let file = std::fs::read(&out).unwrap();
        let lines = file.iter().filter(|&&b| b == b'\n').count();
        assert_eq!(lines, 1 + rows, "{mission}: header and rows");
        assert!(file == printed.stdout, "{mission}: file and stdout differ");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
