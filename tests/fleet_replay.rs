//! Multi-vehicle missions (docs/fleets.md): a fleet replays byte-identically,
//! each vehicle's rows equal that vehicle replayed alone, one-vehicle
//! missions keep the bytes they had before fleets existed, and bad fleets
//! are refused with file, line and key before anything runs.
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

const CROSSING: &str = "missions/two_boats_crossing.toml";

#[test]
fn two_vehicle_mission_replays_byte_identically_twice() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    for out in [&a, &b] {
        let o = usim(&["replay", CROSSING, "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(a, b);
    let text = String::from_utf8(a).unwrap();
    let header = text.lines().next().unwrap();
    assert_eq!(header, format!("vehicle,{}", usim::replay::csv::HEADER));
    // 150 s at 0.1 s, a row every 10 iterations plus row 0: 151 per vehicle.
    assert_eq!(text.lines().count(), 1 + 2 * 151);
    assert_eq!(text.lines().filter(|l| l.starts_with("west,")).count(), 151);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("south,")).count(),
        151
    );
}

fn solo_csv(m: &usim::mission::Mission) -> String {
    let mut out = Vec::new();
    usim::replay::run(m, &mut out, |_, _| {}).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn each_vehicles_rows_equal_it_replayed_alone() {
    let m = usim::mission::load(&root().join(CROSSING)).unwrap();
    assert_eq!(m.vehicle_count(), 2);
    let names: Vec<String> = (0..2).map(|i| m.vehicle_at(i).name.clone()).collect();
    let mut fleet = Vec::new();
    let out = usim::replay::csv::FleetCsvWriter::new(&mut fleet, names.clone()).unwrap();
    usim::replay::run_fleet(&m, out, None, |_, _| {}, |_, _, _| {}).unwrap();
    let fleet = String::from_utf8(fleet).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = usim(&[
        "replay",
        CROSSING,
        "-q",
        "-o",
        &format!("{}/", dir.path().display()),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (i, name) in names.iter().enumerate() {
        let alone = m.only(i);
        assert!(alone.posts.len() >= 2, "{name} has its own posts");
        let solo = solo_csv(&alone);
        let prefix = format!("{name},");
        let mine: Vec<&str> = fleet
            .lines()
            .skip(1)
            .filter_map(|l| l.strip_prefix(prefix.as_str()))
            .collect();
        let solo_rows: Vec<&str> = solo.lines().skip(1).collect();
        assert_eq!(mine, solo_rows, "{name}");
        // -o DIR/: one file per vehicle, the same bytes as the solo replay.
        let file = std::fs::read_to_string(dir.path().join(format!("{name}.csv"))).unwrap();
        assert_eq!(file, solo, "{name}.csv");
    }
    // The two boats really differ (the test could fail).
    assert_ne!(solo_csv(&m.only(0)), solo_csv(&m.only(1)));
}

/// FNV-1a, 64 bits: a fingerprint of a replay's bytes.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `tests/data/one_vehicle_replays.txt` holds, for every one-vehicle
/// mission shipped before fleets existed, the length and FNV-1a of the CSV
/// that the replay wrote then (the integration branch before issue 12).
/// The fleet loop must write the same bytes.
#[test]
fn one_vehicle_missions_keep_their_bytes() {
    let table = std::fs::read_to_string(root().join("tests/data/one_vehicle_replays.txt")).unwrap();
    let mut n = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (mission, len, hash) = (f[0], f[1], f[2]);
        let o = usim(&["replay", mission, "-q"]);
        assert!(o.status.success(), "{mission}");
        assert_eq!(o.stdout.len().to_string(), len, "{mission}: length");
        assert_eq!(
            format!("{:016x}", fnv1a(&o.stdout)),
            hash,
            "{mission}: bytes"
        );
        n += 1;
    }
    assert!(n >= 10, "every shipped one-vehicle mission is listed ({n})");
}

fn parse(text: &str) -> Result<usim::mission::Mission, usim::config::ConfigError> {
    usim::mission::parse(Path::new("fleet.toml"), text)
}

const TWO: &str =
    "[mission]\ndt = 0.1\nsteps = 10\n\n[[vehicle]]\nname = \"a\"\n\n[[vehicle]]\nname = \"b\"\n";

#[test]
fn a_post_for_an_unknown_vehicle_is_refused_with_line_and_key() {
    let e = parse(&format!(
        "{TWO}\n[[post]]\nvehicle = \"c\"\nt = 1\nvar = \"DESIRED_THRUST\"\nvalue = 50\n"
    ))
    .unwrap_err();
    assert_eq!(e.line, Some(12), "{e}");
    assert_eq!(e.key.as_deref(), Some("post.vehicle"));
    let text = e.to_string();
    assert!(
        text.contains("fleet.toml") && text.contains("`c`") && text.contains("a, b"),
        "{text}"
    );
}

#[test]
fn a_post_without_a_vehicle_in_a_fleet_is_refused() {
    let e = parse(&format!(
        "{TWO}\n[[post]]\nt = 1\nvar = \"DESIRED_THRUST\"\nvalue = 50\n"
    ))
    .unwrap_err();
    assert_eq!(e.line, Some(12), "{e}");
    assert_eq!(e.key.as_deref(), Some("post.vehicle"));
}

#[test]
fn two_vehicles_with_one_name_are_refused() {
    let e = parse(
        "[mission]\ndt = 0.1\nsteps = 10\n[[vehicle]]\nname = \"a\"\n[[vehicle]]\nname = \"a\"\n",
    )
    .unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert_eq!(e.key.as_deref(), Some("vehicle.name"));
    assert!(e.to_string().contains("line 5"), "{e}");
    // Unnamed vehicles are all called "vehicle": the same clash.
    let e = parse("[mission]\ndt = 0.1\nsteps = 10\n[[vehicle]]\n[[vehicle]]\n").unwrap_err();
    assert!(e.to_string().contains("`vehicle`"), "{e}");
    // From files: the list entry is named.
    let text = "[mission]\nsteps = 3\nvehicles = [\n  \"../configs/kayak.toml\",\n  \"../configs/kayak.toml\",\n]\n";
    let at = root().join("missions/x.toml");
    let e = usim::mission::parse(&at, text).unwrap_err();
    assert_eq!(e.line, Some(5), "{e}");
    assert_eq!(e.key.as_deref(), Some("mission.vehicles"));
}

#[test]
fn vehicles_from_files_and_single_post_addressing() {
    let at = root().join("missions/x.toml");
    let m = usim::mission::parse(
        &at,
        "[mission]\nsteps = 3\nvehicles = [\"../configs/kayak.toml\", \"../configs/uuv.toml\"]\n\
         [[post]]\nvehicle = \"kayak\"\nt = 0\nvar = \"DESIRED_THRUST\"\nvalue = 10\n",
    )
    .unwrap();
    assert_eq!(m.vehicle_count(), 2);
    assert_eq!(m.vehicle_index("kayak"), Some(0));
    assert_eq!(m.posts[0].vehicle, 0);
    // One vehicle: `vehicle =` on a post is optional and must match.
    let one = "[mission]\nsteps = 3\n[vehicle]\nname = \"k\"\n[[post]]\nt = 0\nvar = \"DESIRED_THRUST\"\nvalue = 10\n";
    assert!(parse(one).is_ok());
    let e = parse(&one.replace("[[post]]\n", "[[post]]\nvehicle = \"x\"\n")).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("post.vehicle"));
}

#[test]
fn encounter_ranges_are_checked() {
    let e = parse(&TWO.replace(
        "steps = 10\n",
        "steps = 10\nnear_miss = 5\ncollision = 10\n",
    ))
    .unwrap_err();
    assert_eq!(e.key.as_deref(), Some("collision"));
    assert_eq!(e.line, Some(5));
    let e = parse(&TWO.replace("steps = 10\n", "steps = 10\nnear_miss = -1\n")).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("near_miss"));
    let m = parse(&TWO.replace(
        "steps = 10\n",
        "steps = 10\nnear_miss = 20\ncollision = 4\n",
    ))
    .unwrap();
    let r = m.encounters.unwrap();
    assert_eq!((r.near_miss, r.collision), (20.0, 4.0));
}

/// `n` vehicles (1,024 and more step and format in parallel when rayon has
/// more than one thread), each with a
/// rudder post at 0.5 s; 50 steps, a row every 5.
fn large_fleet(n: usize) -> usim::mission::Mission {
    use std::fmt::Write as _;
    let mut t = String::from("[mission]\ndt = 0.1\nsteps = 50\noutput_every = 5\n");
    for i in 0..n {
        let _ = write!(
            t,
            "[[vehicle]]\nname = \"v{i}\"\nstart_pos = \"x={}, y=0, heading={}, speed=1\"\n",
            i * 10,
            i * 5
        );
    }
    for i in 0..n {
        let _ = write!(
            t,
            "[[post]]\nvehicle = \"v{i}\"\nt = 0.5\nvar = \"DESIRED_RUDDER\"\nvalue = {}\n",
            i % 30
        );
    }
    parse(&t).unwrap()
}

/// A fleet large enough to step and format in parallel (≥ 1,024 vehicles):
/// the rows come out in mission order and each vehicle's rows still equal
/// its solo replay.
#[test]
fn a_large_fleet_in_parallel_keeps_order_and_solo_rows() {
    let n = 1030;
    let m = large_fleet(n);
    let names: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    let mut fleet = Vec::new();
    let out = usim::replay::csv::FleetCsvWriter::new(&mut fleet, names.clone()).unwrap();
    let s = usim::replay::run_fleet(&m, out, None, |_, _| {}, |_, _, _| {}).unwrap();
    assert_eq!(s.rows, n as u64 * 11);
    let fleet = String::from_utf8(fleet).unwrap();
    let order: Vec<&str> = fleet
        .lines()
        .skip(1)
        .take(n)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(order, names);
    for i in [0, 33, 1029] {
        let prefix = format!("v{i},");
        let mine: Vec<&str> = fleet
            .lines()
            .filter_map(|l| l.strip_prefix(prefix.as_str()))
            .collect();
        let solo = solo_csv(&m.only(i));
        assert_eq!(mine, solo.lines().skip(1).collect::<Vec<_>>(), "v{i}");
    }
}

/// A large fleet replayed on two threads (`usim replay -o FILE`: the rows of
/// each output step handed to a second thread as one batch) writes the same
/// CSV and MCAP bytes as on one thread.
#[test]
fn a_large_fleet_on_two_threads_writes_the_same_bytes() {
    use usim::replay::{Format, Threads};
    let m = large_fleet(1030);
    for format in [Format::Csv, Format::Mcap] {
        let (s1, one) = replay_on(Threads::One, &m, format);
        let (s2, two) = replay_on(Threads::Two, &m, format);
        assert_eq!(s1, s2, "{format:?}");
        assert_eq!(s1.rows, 1030 * 11);
        assert!(one == two, "{format:?}: bytes differ");
    }
}

/// `m` replayed into memory in `format` on `threads`: the summary and bytes.
fn replay_on(
    threads: usim::replay::Threads,
    m: &usim::mission::Mission,
    format: usim::replay::Format,
) -> (usim::replay::Summary, Vec<u8>) {
    let mut buf = std::io::Cursor::new(Vec::new());
    let s = usim::replay::run_into_on(threads, m, format, &mut buf, None, |_, _| {}, |_, _, _| {})
        .unwrap();
    (s, buf.into_inner())
}
