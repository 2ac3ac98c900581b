//! `usim import-moos` on hand-written `.moos` files (tests/data/import/):
//! MOOS's reading rules, every uSimMarine key usim knows, every line it
//! cannot map reported with its line, and the round trip: a mission replayed
//! with the imported config gives byte-identical CSV to the same mission
//! replayed with the hand-written TOML the `.moos` block mirrors.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use usim::moos_import::import;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/import")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// Replay a fixed mission (thrust, rudder, elevator, a drift gust, reverse
/// thrust) with `vehicle` and return the CSV bytes.
fn replay_with(vehicle: &Path) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let mission = dir.path().join("m.toml");
    // a V22 vehicle with the embedded PID also gets its setpoints
    let v22 = std::fs::read_to_string(vehicle)
        .unwrap()
        .contains("model = \"v22\"");
    let pid_posts = if v22 {
        "[[post]]\nt = 2.0\nvar = \"DESIRED_HEADING\"\nvalue = 10\n\
         [[post]]\nt = 2.0\nvar = \"DESIRED_SPEED\"\nvalue = 2\n\
         [[post]]\nt = 20.0\nvar = \"DESIRED_HEADING\"\nvalue = 300\n"
    } else {
        ""
    };
    let text = format!(
        "[mission]\nvehicle = {:?}\ndt = 0.1\nduration = 60.0\n{pid_posts}\
         [[post]]\nt = 1.0\nvar = \"DESIRED_THRUST\"\nvalue = 60\n\
         [[post]]\nt = 5.0\nvar = \"DESIRED_RUDDER\"\nvalue = 25\n\
         [[post]]\nt = 8.0\nvar = \"DESIRED_ELEVATOR\"\nvalue = 30\n\
         [[post]]\nt = 15.0\nvar = \"DRIFT_VECTOR_ADD\"\nvalue = \"137, 0.25\"\n\
         [[post]]\nt = 30.0\nvar = \"DESIRED_THRUST\"\nvalue = -50\n\
         [[post]]\nt = 40.0\nvar = \"DESIRED_RUDDER\"\nvalue = -100\n",
        vehicle.to_str().unwrap()
    );
    std::fs::write(&mission, text).unwrap();
    let m = usim::mission::load(&mission).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.vehicle.warnings.is_empty(), "{:?}", m.vehicle.warnings);
    let mut out = Vec::new();
    usim::replay::run(&m, &mut out, |_, _| {}).unwrap();
    out
}

fn round_trip(moos: &str, toml: &str) -> usim::moos_import::Imported {
    let imported = import(&read(moos), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("imported.toml");
    std::fs::write(&path, &imported.toml).unwrap();
    let ours = replay_with(&path);
    let hand = replay_with(&data(toml));
    assert!(ours.len() > 10_000);
    assert!(
        ours == hand,
        "{moos}: the imported config replays differently from {toml}:\n{}",
        imported.toml
    );
    // and the mirror is not trivially the default vehicle
    let default = dir.path().join("default.toml");
    std::fs::write(&default, "model = \"classic\"\n").unwrap();
    assert!(replay_with(&default) != hand);
    imported
}

fn reported(i: &usim::moos_import::Imported) -> Vec<(usize, String)> {
    i.unmapped.iter().map(|u| (u.line, u.key.clone())).collect()
}

#[test]
fn classic_block_round_trips_and_reports_what_it_cannot_map() {
    let i = round_trip("classic.moos", "classic.toml");
    assert_eq!(i.process, "uSimMarine");
    let r = reported(&i);
    // (line 21, `CommsTick`, is a framework key: silent, as in
    // AppCastingMOOSApp::reportUnhandledConfigWarning)
    let expected: Vec<(usize, String)> = [
        (54, "thrust_mode_reverse"),
        (56, "turn_rate"),
        (57, "turn_spd_loss"),
        (58, "yaw_pid_kp"),
        (59, "max_speed"),
        (60, "bogus_key"),
        (61, "start_depth"),
    ]
    .iter()
    .map(|(l, k)| (*l, k.to_string()))
    .collect();
    assert_eq!(r, expected, "{:#?}", i.unmapped);
    // the reasons say why
    let why = |k: &str| &i.unmapped.iter().find(|u| u.key == k).unwrap().reason;
    assert!(
        why("turn_rate").contains("line 31 wins"),
        "{}",
        why("turn_rate")
    );
    assert!(why("turn_spd_loss").contains("V22"));
    assert!(why("start_depth").contains("not a number"));
}

#[test]
fn v22_block_round_trips_with_the_later_line_winning() {
    let i = round_trip("v22.moos", "v22.toml");
    assert_eq!(i.process, "uSimMarineV22");
    assert!(i.toml.contains("start_x = 7.0\n"), "{}", i.toml);
    assert!(i.toml.contains("sim_pause = false\n"), "{}", i.toml);
    // the PID keys, in file order; of the alias pair the later line
    assert!(
        i.toml.contains("yaw_pid_kp = 0.5\nyaw_pid_kd = 0.1\n"),
        "{}",
        i.toml
    );
    assert!(i.toml.contains("yaw_pid_ki_limit = 7.0\n"), "{}", i.toml);
    assert!(!i.toml.contains("yaw_pid_integral_limit"), "{}", i.toml);
    assert!(i.toml.contains("maxthrust = 95.0\n"), "{}", i.toml);
    assert!(i.toml.contains("heading_debug = false\n"), "{}", i.toml);
    assert!(
        i.toml
            .contains("polar_plot = [\"0,0:45,50:90,100\", \"180,80\"]\n"),
        "{}",
        i.toml
    );
    let keys: Vec<String> = reported(&i).into_iter().map(|(_, k)| k).collect();
    assert_eq!(
        keys,
        ["start_x", "yaw_pid_integral_limit", "maxthrust", "force_x"]
    );
    let why = |k: &str| &i.unmapped.iter().find(|u| u.key == k).unwrap().reason;
    assert!(why("yaw_pid_integral_limit").contains("line 47 wins"));
    assert!(why("maxthrust").contains("not a number"));
    assert_eq!(
        reported(&i)[0].0,
        10,
        "the earlier start_x is the one left out"
    );
}

#[test]
fn v22_pid_limit_alias_round_trips_with_the_later_line_winning() {
    let i = round_trip("v22_pid_alias.moos", "v22_pid_alias.toml");
    assert!(
        i.toml.contains("yaw_pid_integral_limit = 1.5\n"),
        "{}",
        i.toml
    );
    assert!(!i.toml.contains("yaw_pid_ki_limit"), "{}", i.toml);
    assert_eq!(reported(&i), [(7, "yaw_pid_ki_limit".to_string())]);
}

#[test]
fn classic_aliases_round_trip() {
    let i = round_trip("aliases.moos", "aliases.toml");
    assert!(i.unmapped.is_empty(), "{:#?}", i.unmapped);
}

/// usim's own `sensor_*` keys (docs/moos.md "Sensors") make the
/// `[sensors]` table: the import replays as the hand-written table does;
/// a repeated key keeps the first line, an unknown or non-number one is
/// reported with its line; V22 blocks do not import them.
#[test]
fn sensor_keys_round_trip_into_the_sensors_table() {
    let i = round_trip("sensors.moos", "sensors.toml");
    assert_eq!(
        reported(&i),
        [
            (22, "sensor_gps_sigma".to_string()),
            (23, "sensor_gps_sigmaa".to_string()),
            (24, "sensor_seed".to_string())
        ],
        "{:#?}",
        i.unmapped
    );
    assert!(
        i.unmapped[1].reason.contains("sensor_gps_sigma,"),
        "{}",
        i.unmapped[1]
    );
    let cfg: toml::Table = i.toml.parse().unwrap();
    let keys: BTreeSet<&str> = cfg["sensors"]
        .as_table()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let all: BTreeSet<&str> = usim::config::SENSOR_KEYS.iter().copied().collect();
    assert_eq!(keys, all, "sensors.moos sets every [sensors] key");
    let v22 = read("sensors.moos").replace("uSimMarine\n", "uSimMarineV22\n");
    let i = import(&v22, None).unwrap();
    assert!(!i.toml.contains("[sensors]"), "{}", i.toml);
    assert!(i
        .unmapped
        .iter()
        .all(|u| u.key == "start_heading" || u.reason.contains("classic-only")));
}

/// Between them, the files exercise every uSimMarine key usim knows.
#[test]
fn the_test_files_cover_every_importable_key() {
    let mut seen = BTreeSet::new();
    for f in [
        "classic.moos",
        "v22.moos",
        "v22_pid_alias.moos",
        "aliases.moos",
        "sensors.moos",
    ] {
        let i = import(&read(f), None).unwrap();
        let cfg: toml::Table = i.toml.parse().unwrap();
        seen.extend(cfg.keys().cloned());
    }
    // usim's own keys that have no MOOS counterpart
    let own = [
        "geodesy",
        "math",
        "current_field",
        "current_field_active",
        "mqtt",
        "actuators",
        "aliases",
        "node_report_local",
        "platform_type",
        "platform_length",
        "platform_beam",
        "mmsi",
        "ais_ship_type",
        // the environment tables (docs/model.md §24): uSimMarine has none
        "sea",
        "wind",
        "current_tide",
        // obstacles (docs/obstacles.md): uFldObstacleSim's block, not uSimMarine's
        "obstacles",
    ];
    for key in usim::config::VEHICLE_KEYS {
        if !own.contains(key) {
            assert!(seen.contains(*key), "no test .moos file imports `{key}`");
        }
    }
}

#[test]
fn the_command_writes_the_file_and_reports_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("alpha.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args([
            "import-moos",
            data("classic.moos").to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("classic.moos:58: key `yaw_pid_kp`: not imported"),
        "{err}"
    );
    assert!(err.contains("7 line(s) not imported"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        import(&read("classic.moos"), None).unwrap().toml
    );
    // --process picks the block; a missing one is named
    let o = Command::new(env!("CARGO_BIN_EXE_usim"))
        .args([
            "import-moos",
            data("classic.moos").to_str().unwrap(),
            "--process",
            "uSimMarineV22",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("blocks found: ANTLER, uSimMarine, pHelmIvP"),
        "{err}"
    );
}

/// The mission's uFldObstacleSim block (`obstacle_file`, `sensor_range`,
/// `post_points`, `refresh_interval`) and uFldCollObDetect's
/// `collision_dist` become the `[obstacles]` table (docs/formats.md §8):
/// a replay with the imported config is byte-identical to one with the
/// hand-written table, and meets the box the vehicle motors into. Written
/// elsewhere than next to the `.moos`, the table names the obstacle file
/// by its absolute path, so the config still loads.
#[test]
fn the_obstacle_block_round_trips_into_the_obstacles_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("obstacles.txt"),
        "// a box north of the start\npoly = pts={-20,12:20,12:20,40:-20,40},label=box\n",
    )
    .unwrap();
    let moos = "ServerPort = 9000\nCommunity = alpha\n\
        ProcessConfig = uSimMarine\n{\n  AppTick = 10\n  start_x = 0\n  start_y = 0\n  \
        start_heading = 0\n  prefix = NAV\n  thrust_map = 0:0, 50:1.5, 100:3\n}\n\
        ProcessConfig = uFldObstacleSim\n{\n  obstacle_file = obstacles.txt\n  \
        sensor_range = 35\n  post_points = true\n  refresh_interval = 4\n}\n\
        ProcessConfig = uFldCollObDetect\n{\n  collision_dist = 2.5\n}\n";
    let m = d.join("m.moos");
    std::fs::write(&m, moos).unwrap();
    let i = import(moos, None).unwrap();
    let b = i.obstacles.as_ref().expect("the block is read");
    assert_eq!(b.file, "obstacles.txt");
    let cfg: toml::Table = i.toml.parse().unwrap();
    let t = cfg["obstacles"].as_table().unwrap();
    assert_eq!(t["file"].as_str(), Some("obstacles.txt"));
    assert_eq!(t["hit_range"].as_float(), Some(2.5));
    assert_eq!(t["sensor_range"].as_float(), Some(35.0));
    assert_eq!(t["post_points"].as_bool(), Some(true));
    assert_eq!(t["refresh_interval"].as_float(), Some(4.0));
    let imported = d.join("imported.toml");
    std::fs::write(&imported, &i.toml).unwrap();
    let hand = d.join("hand.toml");
    std::fs::write(
        &hand,
        "name = \"alpha\"\nprefix = \"NAV\"\nstart_pos = \"x=0, y=0, heading=0, speed=0\"\n\
         thrust_map = \"0:0, 50:1.5, 100:3\"\napp_tick = 10\n\
         [obstacles]\nfile = \"obstacles.txt\"\nhit_range = 2.5\nsensor_range = 35\n\
         post_points = true\nrefresh_interval = 4\n",
    )
    .unwrap();
    let run = |vehicle: &Path| {
        let text = format!(
            "[mission]\nvehicle = {:?}\ndt = 0.1\nduration = 30.0\n\
             [[post]]\nt = 1.0\nvar = \"DESIRED_THRUST\"\nvalue = 60\n",
            vehicle.to_str().unwrap()
        );
        let mp = d.join("mission.toml");
        std::fs::write(&mp, text).unwrap();
        let m = usim::mission::load(&mp).unwrap_or_else(|e| panic!("{e}"));
        let mut out = Vec::new();
        let s = usim::replay::run(&m, &mut out, |_, _| {}).unwrap();
        (out, s.obstacle_hit_count)
    };
    let (ours, hits) = run(&imported);
    assert_eq!((ours.clone(), hits), run(&hand));
    assert_eq!(hits, 1, "the vehicle motors north into the box");
    // the command: next to the .moos the path stays; elsewhere it is absolute
    let other = tempfile::tempdir().unwrap();
    for (out, want_abs) in [
        (d.join("cli.toml"), false),
        (other.path().join("x.toml"), true),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_usim"))
            .args([
                "import-moos",
                m.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(&out).unwrap();
        let cfg: toml::Table = text.parse().unwrap();
        let file = cfg["obstacles"]["file"].as_str().unwrap().to_string();
        assert_eq!(Path::new(&file).is_absolute(), want_abs, "{text}");
        let v = usim::config::load_vehicle(&out).unwrap_or_else(|e| panic!("{e}"));
        assert!(v.obstacles.is_some());
    }
    // a bad range names the block and the key
    let bad = moos.replace("collision_dist = 2.5", "collision_dist = -1");
    let e = import(&bad, None).unwrap_err().to_string();
    assert!(e.contains("uFldCollObDetect: key `collision_dist`"), "{e}");
}

/// usim's `sea_<key>` lines (docs/moos.md §1.6) become the `[sea]` table:
/// every `[sea]` key, integers as integers, the spectrum as a string; an
/// unknown `sea_` key and a repeated one are reported with their lines,
/// and the result loads with the sea on.
#[test]
fn sea_keys_become_the_sea_table() {
    let moos = "Community = alpha\nProcessConfig = uSimMarine\n{\n  start_x = 0\n\
        sea_active = TRUE\n  sea_spectrum = JONSWAP\n  sea_hs = 1.5\n  sea_tp = 7\n  sea_gamma = 2\n\
        sea_direction = 30\n  sea_spreading = 10\n  sea_components = 120\n  sea_seed = 9\n\
        sea_wave_drift = 0.5\n  sea_height = 2\n  sea_hs = 3\n}\n";
    let i = import(moos, None).unwrap();
    assert_eq!(
        reported(&i),
        [(15, "sea_height".to_string()), (16, "sea_hs".to_string())],
        "{:#?}",
        i.unmapped
    );
    let cfg: toml::Table = i.toml.parse().unwrap();
    let sea = cfg["sea"].as_table().unwrap();
    let keys: BTreeSet<&str> = sea.keys().map(String::as_str).collect();
    let all: BTreeSet<&str> = usim::config::SEA_KEYS.iter().copied().collect();
    assert_eq!(keys, all);
    assert_eq!(sea["spectrum"].as_str(), Some("jonswap"));
    assert_eq!(sea["hs"].as_float(), Some(1.5));
    assert_eq!(sea["components"].as_integer(), Some(120));
    assert_eq!(sea["seed"].as_integer(), Some(9));
    let v =
        usim::config::parse_vehicle(Path::new("i.toml"), &i.toml).unwrap_or_else(|e| panic!("{e}"));
    let sea = v
        .params
        .env
        .as_ref()
        .and_then(|e| e.sea.as_ref())
        .expect("a sea");
    assert_eq!(sea.state().hs_m, 1.5);
}
