//! The environment layer (issue 40 items 1-3, docs/model.md §24): the sea
//! and the gusts checked by outside oracles (wavespectra and scipy in the
//! venv, `USIM_REQUIRE_WAVESPECTRA`), the effects on a vehicle against the
//! documented formulas, determinism, and bad input named by file:line:key.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use usim::config::parse_vehicle;
use usim::model::Vehicle;

fn usim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(args)
        .output()
        .expect("run usim")
}

fn python() -> String {
    std::env::var("USIM_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// wavespectra and scipy importable, or SKIPPED (a failure with
/// USIM_REQUIRE_WAVESPECTRA=1).
fn have_wavespectra() -> bool {
    let ok = Command::new(python())
        .args(["-c", "import wavespectra, scipy.signal"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("USIM_REQUIRE_WAVESPECTRA").is_none_or(|v| v != "1"),
            "USIM_REQUIRE_WAVESPECTRA=1 but {} cannot import wavespectra and scipy (scripts/py_env.sh)",
            python()
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: wavespectra/scipy missing (pip install wavespectra scipy); this test passes without running"
        );
    }
    ok
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("usim_env_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn check(args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/py/check_sea.py");
    let out = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {text}");
    eprintln!("{args:?}: {text}");
}

/// 30-minute records (a whole number of the sea's periods: components =
/// 1800·3.5/Tp), both spectra, three seeds each: wavespectra recovers Hs
/// and Tp within 2 %, the band energies within 10 % of its own PM/JONSWAP,
/// the spread within 2° of its dspr of the same cos-2s spreading and the
/// mean direction within 2°.
#[test]
fn wavespectra_recovers_hs_tp_and_the_spread_of_the_generated_sea() {
    if !have_wavespectra() {
        return;
    }
    let dir = scratch("sea");
    for (sp, hs, tp, n, gamma, spread) in [
        ("pm", 2.0, 10.0, 630, None, 20.0),
        ("jonswap", 3.0, 12.0, 525, Some(3.3), 30.0),
    ] {
        for seed in [1, 2, 3] {
            let g = gamma.map_or(String::new(), |g| format!("gamma = {g}\n"));
            let cfg = write(
                &dir,
                &format!("{sp}_{seed}.toml"),
                &format!(
                    "name = \"buoy\"\n[sea]\nspectrum = \"{sp}\"\nhs = {hs}\ntp = {tp}\n{g}direction = 70\n\
                     spreading = {spread}\ncomponents = {n}\nseed = {seed}\n"
                ),
            );
            let out = usim(&[
                "env",
                cfg.to_str().unwrap(),
                "--duration",
                "1800",
                "--dt",
                "0.5",
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let csv = write(
                &dir,
                &format!("{sp}_{seed}.csv"),
                std::str::from_utf8(&out.stdout).unwrap(),
            );
            let (hs, tp, spread) = (hs.to_string(), tp.to_string(), spread.to_string());
            let g = gamma.unwrap_or(1.0).to_string();
            check(&[
                "sea",
                csv.to_str().unwrap(),
                sp,
                &hs,
                &tp,
                &g,
                "70",
                &spread,
            ]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Six hours of gusts: the mean is the configured speed within 1 %, the
/// standard deviation Davenport's √(6κU²·[…]) over the band within 5 %,
/// Welch's band energies Davenport's integrals within 15 %.
#[test]
fn the_gusts_have_davenports_mean_std_and_spectrum() {
    if !have_wavespectra() {
        return;
    }
    let dir = scratch("wind");
    for (seed, u) in [(3, 10.0), (4, 15.0)] {
        let cfg = write(
            &dir,
            &format!("w{seed}.toml"),
            &format!("name = \"mast\"\n[wind]\nspeed = {u}\ndirection = 200\nsurface_drag = 0.002\ncomponents = 64\nseed = {seed}\n"),
        );
        let out = usim(&[
            "env",
            cfg.to_str().unwrap(),
            "--duration",
            "21600",
            "--dt",
            "0.5",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let csv = write(
            &dir,
            &format!("w{seed}.csv"),
            std::str::from_utf8(&out.stdout).unwrap(),
        );
        check(&[
            "wind",
            csv.to_str().unwrap(),
            &u.to_string(),
            "0.002",
            "1200",
            "64",
        ]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn vehicle(text: &str) -> Vehicle {
    let cfg = parse_vehicle(Path::new("env.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    Vehicle::new(&cfg, 0.0)
}

fn run(v: &mut Vehicle, seconds: f64) {
    // on from the vehicle's clock (iterations of 0.1 s since t = 0)
    let (k0, n) = (v.iteration(), (seconds * 10.0).round() as u64);
    for k in k0 + 1..=k0 + n {
        v.step(k as f64 * 0.1);
    }
}

/// A hull at rest in a steady wind (no gusts, no weathervaning) drifts
/// downwind at windage·U (docs/model.md §24.4): 0.03 · 10 m/s from the east
/// for 100 s is 30 m west.
#[test]
fn windage_sets_a_hull_at_rest_downwind() {
    let mut v = vehicle("[wind]\nspeed = 10\ndirection = 90\ngusts = false\nweathervane = 0\n");
    run(&mut v, 100.0);
    let n = v.nav();
    assert!((n.x + 30.0).abs() < 1e-9 && n.y.abs() < 1e-9, "{n:?}");
    assert_eq!(n.heading, 0.0);
}

/// Weathervaning turns the bow into the wind: from north, a wind from 90°
/// turns the heading toward 90° as the solution of dδ/dt = −k·sin δ.
#[test]
fn weathervaning_turns_the_bow_into_the_wind() {
    let mut v = vehicle("[wind]\nspeed = 10\ndirection = 90\ngusts = false\nwindage = 0\n");
    run(&mut v, 1.0);
    // 0.01 (deg/s)/(m/s)² · 100 · sin 90° = 1 deg/s at first
    assert!((v.nav().heading - 1.0).abs() < 0.01, "{}", v.nav().heading);
    run(&mut v, 200.0);
    // dδ/dt = −k·sin δ for δ = 90° − heading, k = 1 deg/s in rad/s:
    // tan(δ/2) = tan(45°)·e^(−k·t)
    let k = 1.0f64.to_radians();
    let delta = 2.0 * (-k * 201.0f64).exp().atan().to_degrees();
    assert!(
        (v.nav().heading - (90.0 - delta)).abs() < 0.05,
        "{} vs {}",
        v.nav().heading,
        90.0 - delta
    );
}

/// A reversing tide on a current field: the field's 0.5 m/s east at full
/// flood (t = 0), slack at a quarter period, 0.5 m/s west at half.
#[test]
fn a_tide_reverses_the_current_field() {
    let dir = scratch("tide");
    write(&dir, "f.cfd", "radius: 1000\nx=0, y=0, xdot=0.5, ydot=0\n");
    let cfg = write(
        &dir,
        "v.toml",
        "current_field = \"f.cfd\"\n[current_tide]\nperiod = 400\n",
    );
    let cfg = usim::config::load_vehicle(&cfg).unwrap();
    let mut v = Vehicle::new(&cfg, 0.0);
    let cur = |v: &mut Vehicle, t: f64| {
        let k = (t * 10.0).round() as u64;
        for i in (v.iteration() + 1)..=k {
            v.step(i as f64 * 0.1);
        }
        v.snapshot().current_x
    };
    // the step from t − 0.1 reads the factor at its start
    let f = |t: f64| (std::f64::consts::TAU * t / 400.0).cos();
    assert!((cur(&mut v, 0.1) - 0.5 * f(0.0) * (1.0f64 - 0.1 / 1000.0).powi(2)).abs() < 1e-3);
    let c100 = cur(&mut v, 100.1);
    assert!(c100.abs() < 1e-3, "{c100}");
    let c200 = cur(&mut v, 200.1);
    assert!(c200 < -0.3, "{c200}");
    let _ = std::fs::remove_dir_all(&dir);
}

const SEA: &str =
    "platform_length = 4\nplatform_beam = 1\n[sea]\nhs = 1.5\ntp = 6\ndirection = 0\n\
                   spreading = 0\ncomponents = 100\nseed = 5\n";

/// In a long-crested sea from the north, a hull at rest heaves and pitches
/// and is carried south by the Stokes drift Σωka² (docs/model.md §24.2);
/// its wave-frequency surge is bounded by the wave amplitudes.
#[test]
fn a_sea_moves_a_hull_and_sets_it_down_wave() {
    let mut v = vehicle(SEA);
    let f = parse_vehicle(Path::new("env.toml"), SEA).unwrap();
    let sea = f.params.env.as_ref().unwrap().sea.clone().unwrap();
    let stokes = sea.stokes_drift(0.0);
    assert!(stokes.0.abs() < 1e-12 && stokes.1 < 0.0, "{stokes:?}");
    let (mut heave2, mut pitch2, mut n) = (0.0, 0.0, 0.0);
    for k in 1..=6000u64 {
        v.step(k as f64 * 0.1);
        let m = v.wave_motion().unwrap();
        heave2 += m.heave * m.heave;
        pitch2 += m.pitch_deg * m.pitch_deg;
        n += 1.0;
    }
    // Hs = 4σ of the surface; a 4 m hull in 56 m waves heaves nearly as much
    let hs_heave = 4.0 * (heave2 / n).sqrt();
    assert!(hs_heave > 1.0 && hs_heave < 1.7, "{hs_heave}");
    assert!(pitch2 > 0.0);
    // 600 s of Stokes drift south, give or take the wave-frequency excursion
    let y = v.nav().y;
    let expect = stokes.1 * 600.0;
    assert!((y - expect).abs() < 1.5, "y {y} vs Stokes {expect}");
    assert!(
        v.nav().x.abs() < 1e-6,
        "long-crested from the north: no east motion"
    );
}

/// The same file gives the same bits; a different seed another sea.
#[test]
fn the_same_seed_gives_the_same_bits() {
    let text = format!("{SEA}[wind]\nspeed = 12\ndirection = 30\nseed = 9\n");
    let (mut a, mut b) = (vehicle(&text), vehicle(&text));
    run(&mut a, 60.0);
    run(&mut b, 60.0);
    assert_eq!(
        a.snapshot().values().map(f64::to_bits),
        b.snapshot().values().map(f64::to_bits)
    );
    let mut c = vehicle(&text.replace("seed = 9", "seed = 10"));
    run(&mut c, 60.0);
    assert_ne!(a.nav().heading, c.nav().heading);
}

/// A replay with sea and wind: stdout and `-o FILE` (the threaded writer)
/// give the same bytes, run after run.
#[test]
fn a_replay_with_sea_and_wind_is_byte_identical() {
    let mission = concat!(env!("CARGO_MANIFEST_DIR"), "/missions/sea_state.toml");
    let a = usim(&["replay", mission]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let dir = scratch("replay");
    let file = dir.join("out.csv");
    let b = usim(&["replay", mission, "-o", file.to_str().unwrap()]);
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    assert_eq!(a.stdout, std::fs::read(&file).unwrap());
    let c = usim(&["replay", mission]);
    assert_eq!(a.stdout, c.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad values name the file, the line and the key.
#[test]
fn bad_sea_and_wind_values_name_file_line_and_key() {
    for (text, line, key) in [
        ("name = \"a\"\n[sea]\nhs = -1\ntp = 8\n", 3, "sea.hs"),
        ("name = \"a\"\n[sea]\nhs = nan\ntp = 8\n", 3, "sea.hs"),
        ("name = \"a\"\n[sea]\nhs = 1\ntp = inf\n", 4, "sea.tp"),
        ("[sea]\nhs = 1\ntp = 8\ngamma = 0.2\n", 4, "sea.gamma"),
        (
            "[sea]\nhs = 1\ntp = 8\nspectrum = \"bretschneider\"\n",
            4,
            "sea.spectrum",
        ),
        (
            "[sea]\nhs = 1\ntp = 8\ncomponents = 0\n",
            4,
            "sea.components",
        ),
        (
            "[sea]\nhs = 1\ntp = 8\nspreading = -5\n",
            4,
            "sea.spreading",
        ),
        ("\n[sea]\ntp = 8\n", 2, "sea.hs"),
        ("[sea]\nhs = 5\ntp = 3\n", 1, "sea.hs"),
        ("[wind]\nspeed = 500\n", 2, "wind.speed"),
        ("[wind]\nspeed = -3\n", 2, "wind.speed"),
        ("[wind]\nspeed = 5\nwindage = nan\n", 3, "wind.windage"),
        ("[current_tide]\nperiod = 0\n", 2, "current_tide.period"),
    ] {
        let e = parse_vehicle(Path::new("bad.toml"), text)
            .err()
            .unwrap_or_else(|| panic!("accepted {text:?}"));
        assert_eq!(e.line, Some(line), "{text:?}: {e}");
        assert_eq!(e.key.as_deref(), Some(key), "{text:?}: {e}");
        let shown = e.to_string();
        assert!(shown.contains("bad.toml") && shown.contains(key), "{shown}");
    }
    // an unknown key in [sea] is a TOML error at its line
    let e =
        parse_vehicle(Path::new("bad.toml"), "[sea]\nhs = 1\ntp = 8\nheight = 2\n").unwrap_err();
    assert_eq!(e.line, Some(4), "{e}");
    // every table off: no environment at all
    let off = parse_vehicle(
        Path::new("ok.toml"),
        "[sea]\nactive = false\nhs = 1\ntp = 8\n",
    )
    .unwrap();
    assert!(off.params.env.is_none());
}

/// V22 sailing reads the environment's wind when `[wind]` is on: a beam
/// reach (90° off a wind of 4 m/s from the west) is capped at 80 % of it,
/// 3.2 m/s, though the thrust map alone would give 5 m/s and no
/// `wind_conditions` is set (docs/model.md §24.4, docs/v22.md §11.3).
#[test]
fn v22_sailing_reads_the_environment_wind() {
    let text =
        "model = \"v22\"\nthrust_map = \"0:0, 100:5\"\nmax_acceleration = 0\nmax_speed = 10\n\
                polar_plot = \"0,0: 30,10: 90,80: 180,60\"\n\
                [wind]\nspeed = 4\ndirection = 270\ngusts = false\nwindage = 0\nweathervane = 0\n";
    let mut v = vehicle(text);
    v.handle_command(usim::command::Command::DesiredThrust(100.0), 0.0)
        .unwrap();
    run(&mut v, 20.0);
    // heading 0 (north), wind from the west: 90° off the wind
    assert!((v.nav().speed - 3.2).abs() < 1e-9, "{}", v.nav().speed);
    // without the wind table, no cap: the map's 5 m/s
    let mut calm = vehicle(&text[..text.find("[wind]").unwrap()]);
    calm.handle_command(usim::command::Command::DesiredThrust(100.0), 0.0)
        .unwrap();
    run(&mut calm, 20.0);
    assert!(
        (calm.nav().speed - 5.0).abs() < 1e-9,
        "{}",
        calm.nav().speed
    );
}

/// A sweep draws sea states and winds (docs/sweeps.md `sea_*`, `wind_*`
/// targets): the same seed gives the same summary on 1 and 2 threads and
/// from shards, the draws change the track, and a target needs its table.
#[test]
fn a_sweep_draws_sea_states_and_winds_deterministically() {
    let dir = scratch("sweep");
    let mission = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/missions/sea_state.toml"
    ))
    .unwrap()
    .replace(
        "../configs/kayak_sea.toml",
        concat!(env!("CARGO_MANIFEST_DIR"), "/configs/kayak_sea.toml"),
    )
    .replace("duration = 300.0", "duration = 60.0");
    write(&dir, "m.toml", &mission);
    let sweep = write(
        &dir,
        "s.toml",
        "[sweep]\nmission = \"m.toml\"\nseed = 5\nruns = 4\n\n\
         [[var]]\nname = \"hs\"\nkind = \"uniform\"\ntarget = \"kayak.sea_hs\"\nmin = 0.2\nmax = 2.0\n\n\
         [[var]]\nname = \"wind\"\nkind = \"grid\"\ntarget = \"kayak.wind_speed\"\nvalues = [2.0, 15.0]\n\n\
         [[var]]\nname = \"sea_seed\"\nkind = \"uniform\"\ntarget = \"kayak.sea_seed\"\nmin = 0\nmax = 1000\n",
    );
    let s = sweep.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["sweep", s, "-q"];
        args.extend_from_slice(extra);
        let o = usim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let a = run(&[]);
    assert_eq!(a, run(&["--threads", "1"]));
    let text = String::from_utf8(a.clone()).unwrap();
    assert_eq!(text.lines().count(), 1 + 8, "{text}");
    // every run ends somewhere else (sea, seed and wind all differ)
    let ends: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(4).unwrap())
        .collect();
    let mut uniq = ends.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), ends.len(), "{text}");
    // shards merge to the whole
    let mut parts = Vec::new();
    for i in 0..2 {
        let p = dir.join(format!("p{i}.csv"));
        run(&["--shard", &format!("{i}/2"), "-o", p.to_str().unwrap()]);
        parts.push(p);
    }
    let m = dir.join("merged.csv");
    let o = usim(&[
        "sweep",
        "merge",
        parts[1].to_str().unwrap(),
        parts[0].to_str().unwrap(),
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&m).unwrap(), a);
    // a vehicle without [sea]: the target is refused at its line
    let calm = mission.replace("kayak_sea.toml", "kayak.toml");
    write(&dir, "m.toml", &calm);
    let o = usim(&["sweep", s, "-q"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("s.toml:") && err.contains("has no [sea] table"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sweep axes over the sea, the sensors and their faults (docs/sweeps.md):
/// each run uses the values it drew. The heave RMS of a small hull is Hs/4
/// (Hs = 4·√m0, docs/model.md §24.1; the 3 m kayak averages away little of
/// a Tp = 5 s sea), the GPS error RMS of white noise σ per axis is √2·σ,
/// and a drawn dropout of F s silences F·10 postings at 10 Hz; the summary
/// is the same bytes on 1 and 2 threads and from shards.
#[test]
fn a_sweep_over_hs_and_gps_faults_runs_what_it_drew() {
    let dir = scratch("sweep_axes");
    let cfg = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/kayak_sea.toml"
    ))
    .unwrap();
    write(&dir, "kayak.toml", &format!("{cfg}\n[sensors]\nseed = 3\n"));
    let mission = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/missions/sea_state.toml"
    ))
    .unwrap()
    .replace("../configs/kayak_sea.toml", "kayak.toml")
    .replace("duration = 300.0", "duration = 200.0");
    write(&dir, "m.toml", &mission);
    let sweep = write(
        &dir,
        "s.toml",
        "[sweep]\nmission = \"m.toml\"\nseed = 11\nruns = 2\n\n\
         [[var]]\nname = \"hs\"\nkind = \"grid\"\ntarget = \"kayak.sea_hs\"\nvalues = [0.5, 1.5]\n\n\
         [[var]]\nname = \"sigma\"\nkind = \"uniform\"\ntarget = \"kayak.sensors_gps_sigma\"\nmin = 1\nmax = 4\n\n\
         [[var]]\nname = \"drop_at\"\nkind = \"uniform\"\ntarget = \"kayak.sensors_gps_dropout_at\"\nmin = 20\nmax = 150\n\n\
         [[var]]\nname = \"drop_for\"\nkind = \"grid\"\ntarget = \"kayak.sensors_gps_dropout_for\"\nvalues = [10, 40]\n",
    );
    let s = sweep.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["sweep", s, "-q"];
        args.extend_from_slice(extra);
        let o = usim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let a = run(&[]);
    assert_eq!(a, run(&["--threads", "1"]));
    let text = String::from_utf8(a.clone()).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (hs, sigma, drop_for) = (col("hs"), col("sigma"), col("drop_for"));
    let (heave, lost, err) = (
        col("kayak_heave_rms"),
        col("kayak_gps_lost"),
        col("kayak_gps_error_rms"),
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 8, "{text}");
    for r in &rows {
        let want = r[hs] / 4.0;
        assert!(
            (r[heave] / want - 1.0).abs() < 0.15,
            "heave rms {} for hs {}: {text}",
            r[heave],
            r[hs]
        );
        let want = std::f64::consts::SQRT_2 * r[sigma];
        assert!(
            (r[err] / want - 1.0).abs() < 0.08,
            "gps error rms {} for sigma {}: {text}",
            r[err],
            r[sigma]
        );
        assert!(
            (r[lost] - 10.0 * r[drop_for]).abs() <= 1.0,
            "{} postings lost for a {} s dropout: {text}",
            r[lost],
            r[drop_for]
        );
    }
    // shards merge to the whole, byte for byte
    let mut parts = Vec::new();
    for i in 0..3 {
        let p = dir.join(format!("p{i}.csv"));
        run(&["--shard", &format!("{i}/3"), "-o", p.to_str().unwrap()]);
        parts.push(p);
    }
    let m = dir.join("merged.csv");
    let mut args = vec!["sweep", "merge"];
    args.extend(parts.iter().rev().map(|p| p.to_str().unwrap()));
    args.extend(["-o", m.to_str().unwrap()]);
    let o = usim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&m).unwrap(), a);
    // without [sensors] the sensor targets are refused at their line
    write(&dir, "kayak.toml", &cfg);
    let o = usim(&["sweep", s, "-q"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("s.toml:15") && err.contains("has no [sensors] table"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
