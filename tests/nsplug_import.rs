//! `usim import-moos` on nsplug templates, the way MOOS-IvP missions are
//! written (a `meta_vehicle.moos` with `#include plugs.moos <tag>`,
//! `#ifdef VTYPE …`, `$(VNAME)`, `$(START_POS)`), run as the binary with
//! `-D`/`--define`. The four silent failures of issue 19 each have a test:
//! the expected values are what nsplug + uSimMarine make of the file
//! (docs/model.md §14 for the pose string), never our own output.
use std::path::Path;
use std::process::{Command, Output};

const META: &str = "\
// meta_vehicle.moos, as in MOOS-IvP missions
ServerHost = localhost
ServerPort = $(VPORT=9001)
Community  = $(VNAME)

#include plugs.moos <origin_warp>

ProcessConfig = uSimMarine
{
  AppTick   = 10
  CommsTick = 10
  app_logging = true
  START_POS = $(START_POS), 180, 0
  PREFIX    = NAV
#ifdef VTYPE UUV
  BUOYANCY_RATE = 0.15
  MAX_DEPTH_RATE = 5
#elseifdef VTYPE kayak
  TURN_RATE = 40
#endif
  thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
}

ProcessConfig = pNodeReporter
{
  AppTick = 2
  platform_type   = %(VTYPE=kayak)
  platform_length = 4
}
";

const PLUGS: &str = "\
<tag><origin_warp>
MOOSTimeWarp = $(WARP=1)
LatOrigin  = 43.825300
LongOrigin = -70.330400

<tag><pShare>
ProcessConfig = pShare
{
  AppTick = 2
}
";

fn usim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usim"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn mission(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (n, t) in files {
        std::fs::write(dir.path().join(n), t).unwrap();
    }
    dir
}

fn imported(o: &Output) -> usim::config::VehicleConfig {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let toml = String::from_utf8(o.stdout.clone()).unwrap();
    usim::config::parse_vehicle(Path::new("imported.toml"), &toml)
        .unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

const DEFS: &[&str] = &["-D", "VNAME=henry", "--define", "START_POS=10,-20"];

#[test]
fn start_pos_macro_is_expanded() {
    let dir = mission(&[("meta.moos", META), ("plugs.moos", PLUGS)]);
    let mut args = vec!["import-moos", "meta.moos"];
    args.extend(DEFS);
    let cfg = imported(&usim(dir.path(), &args));
    // "10,-20, 180, 0": x, y, heading, speed positionally (docs/model.md §14)
    let s = cfg.params.start;
    assert_eq!((s.x, s.y, s.heading, s.speed), (10.0, -20.0, 180.0, 0.0));
    // without the macro: an error naming it and its file:line, not (0, 180)
    let o = usim(
        dir.path(),
        &["import-moos", "meta.moos", "-D", "VNAME=henry"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("meta.moos:13: undefined macro `START_POS`"),
        "{err}"
    );
}

#[test]
fn ifdef_vtype_bodies_follow_the_define() {
    let dir = mission(&[("meta.moos", META), ("plugs.moos", PLUGS)]);
    let mut args = vec!["import-moos", "meta.moos"];
    args.extend(DEFS);
    // VTYPE undefined: neither branch
    let cfg = imported(&usim(dir.path(), &args));
    assert_eq!(
        cfg.params.buoyancy_rate, 0.025,
        "docs/model.md §2.2 default"
    );
    assert_eq!(cfg.params.turn_rate, 70.0, "docs/model.md §2.2 default");
    assert_eq!(
        cfg.platform_type, "KAYAK",
        "%(VTYPE=kayak): upper-case default"
    );
    args.extend(["-D", "VTYPE=kayak"]);
    let cfg = imported(&usim(dir.path(), &args));
    assert_eq!(cfg.params.buoyancy_rate, 0.025, "no UUV body in a kayak");
    assert_eq!(cfg.params.max_depth_rate, 0.5);
    assert_eq!(cfg.params.turn_rate, 40.0);
    assert_eq!(cfg.platform_length, 4.0);
    let last = args.len() - 1;
    args[last] = "VTYPE=UUV";
    let cfg = imported(&usim(dir.path(), &args));
    assert_eq!(cfg.params.buoyancy_rate, 0.15);
    assert_eq!(cfg.params.max_depth_rate, 5.0);
    assert_eq!(cfg.params.turn_rate, 70.0);
    assert_eq!(cfg.platform_type, "UUV");
}

#[test]
fn include_with_tag_brings_the_origin() {
    let dir = mission(&[("meta.moos", META), ("plugs.moos", PLUGS)]);
    let mut args = vec!["import-moos", "meta.moos"];
    args.extend(DEFS);
    let cfg = imported(&usim(dir.path(), &args));
    assert_eq!(cfg.params.origin, Some((43.8253, -70.3304)));
    // from another directory, the include is found next to the file
    let cwd = tempfile::tempdir().unwrap();
    let meta = dir.path().join("meta.moos");
    let mut args = vec!["import-moos", meta.to_str().unwrap()];
    args.extend(DEFS);
    let cfg = imported(&usim(cwd.path(), &args));
    assert_eq!(cfg.params.origin, Some((43.8253, -70.3304)));
    // a missing file, a missing tag and a loop are errors with file:line
    let dir = mission(&[("meta.moos", META)]);
    let mut args = vec!["import-moos", "meta.moos"];
    args.extend(DEFS);
    let o = usim(dir.path(), &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("meta.moos:6: #include plugs.moos: not found"),
        "{err}"
    );
    let dir = mission(&[("meta.moos", META), ("plugs.moos", "<tag><other>\nx=1\n")]);
    let o = usim(dir.path(), &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("has no `<tag><origin_warp>` section"), "{err}");
    let dir = mission(&[
        ("a.moos", "#include b.moos\n"),
        ("b.moos", "\n#include a.moos\n"),
    ]);
    let o = usim(dir.path(), &["import-moos", "a.moos"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("b.moos:2: #include loop"), "{err}");
}

#[test]
fn community_macro_names_the_vehicle() {
    let dir = mission(&[("meta.moos", META), ("plugs.moos", PLUGS)]);
    let mut args = vec!["import-moos", "meta.moos"];
    args.extend(DEFS);
    assert_eq!(imported(&usim(dir.path(), &args)).name, "henry");
    let o = usim(
        dir.path(),
        &["import-moos", "meta.moos", "-D", "START_POS=0,0"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("meta.moos:4: undefined macro `VNAME`"),
        "{err}"
    );
    // kept on request, and reported
    let o = usim(
        dir.path(),
        &[
            "import-moos",
            "meta.moos",
            "-D",
            "START_POS=0,0",
            "--keep-undefined",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("meta.moos:4: undefined macro `VNAME` kept as written"),
        "{err}"
    );
}

/// uSimMarineV22 configures its PID only in its own block: another app's
/// block (pMarinePID) is read only with `--pid-from`, which says so.
#[test]
fn pid_block_gains_go_into_the_v22_pid_only_with_pid_from() {
    let text = "\
ProcessConfig = uSimMarineV22
{
  start_x = 1
}
ProcessConfig = pMarinePID
{
  AppTick = 10
  verbose = terse
  yaw_pid_kp = 1.2
  yaw_pid_kd = 0.1
  speed_pid_kp = 1.0
  maxrudder = 40
  maxthrust = 90
  depth_control = false
  deprecated_ok = true
}
";
    let dir = mission(&[("m.moos", text)]);
    // by default: the simulator's block only, and a note naming the option
    let o = usim(dir.path(), &["import-moos", "m.moos"]);
    let cfg = imported(&o);
    assert!(cfg.params.pid.is_none(), "no PID without --pid-from");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("m.moos:7: note: ProcessConfig = pMarinePID is another app's block: its gains are not imported")
            && err.contains("--pid-from pMarinePID"),
        "{err}"
    );
    // with --pid-from: the gains run in the embedded PID, and it says so
    let o = usim(
        dir.path(),
        &["import-moos", "m.moos", "--pid-from", "pMarinePID"],
    );
    let cfg = imported(&o);
    let pid = cfg.params.pid.expect("the V22 PID is embedded");
    assert_eq!(pid.yaw.kp, 1.2);
    assert_eq!(pid.yaw.kd, 0.1);
    assert_eq!(pid.speed.kp, 1.0);
    assert_eq!(pid.max_rudder, 40.0);
    assert_eq!(pid.max_thrust, 90.0);
    assert!(!pid.depth_control);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("come from ProcessConfig = pMarinePID (--pid-from)"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("# The PID settings come from ProcessConfig = pMarinePID (--pid-from)"));
    // a classic block cannot take them, and says so
    let dir = mission(&[("m.moos", &text.replace("uSimMarineV22", "uSimMarine"))]);
    let o = usim(
        dir.path(),
        &["import-moos", "m.moos", "--pid-from", "pMarinePID"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--pid-from pMarinePID: the classic model has no embedded PID"),
        "{err}"
    );
    // a block that is not there
    let o = usim(
        dir.path(),
        &["import-moos", "m.moos", "--pid-from", "pMarinePIDV22"],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no `ProcessConfig = pMarinePIDV22` block"));
}

#[test]
fn framework_keys_are_silent_and_typos_get_a_suggestion() {
    let text = "Community = a\nProcessConfig = uSimMarine\n{\n  app_logging = true\n  deprecated_ok = true\n  commstic = 4\n  trun_rate = 3\n  CommsTick = 4\n  MaxAppTick = 10\n  term_report_interval = 1\n  max_appcast_events = 10\n}\n";
    let dir = mission(&[("m.moos", text)]);
    let o = usim(dir.path(), &["import-moos", "m.moos"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // the MOOS / AppCasting framework keys (AppCastingMOOSApp's
    // reportUnhandledConfigWarning list) are silent
    for k in [
        "app_logging",
        "deprecated_ok",
        "key `CommsTick`",
        "MaxAppTick",
        "term_report_interval",
        "max_appcast_events",
    ] {
        assert!(!err.contains(k), "{k}: {err}");
    }
    assert!(
        err.contains("m.moos:6: key `commstic`: not imported: not a uSimMarine parameter (uSimMarine reports it as unhandled); did you mean `CommsTick`?"),
        "{err}"
    );
    assert!(err.contains("did you mean `turn_rate`?"), "{err}");
}

/// Issue 37 item 14: an include bomb. 200,000 `#include big.moos` of an
/// 8 MiB file whose text sits in an `#ifdef NEVER` block add few lines
/// but would read 1.6 TB (over an hour); the bytes read across includes
/// are bounded (64 MiB), so the import fails at once naming the line.
#[test]
fn an_include_bomb_is_refused_by_the_bytes_it_reads() {
    let big = format!("#ifdef NEVER\n{}\n#endif\n", "x".repeat(8 << 20));
    let top = "#include big.moos\n".repeat(200_000);
    let dir = mission(&[("alpha.moos", &top), ("big.moos", &big)]);
    let t0 = std::time::Instant::now();
    let o = usim(
        dir.path(),
        &["import-moos", "alpha.moos", "-o", "alpha.toml"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("alpha.moos:8:") && err.contains("64 MiB"),
        "the error names the include that crossed the bound: {err}"
    );
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(60),
        "not bounded: {:?}",
        t0.elapsed()
    );
    assert!(!dir.path().join("alpha.toml").exists());
}
