//! Criterion benchmarks of the simulator core: one model step, and a
//! 36,000-step mission replay to CSV and to MCAP (rows or state messages per
//! second = 36,001 / time; the MCAP also holds a pose, a transform and a
//! location fix per step), and `usim plot` of that run (SVG and PNG).
//!
//! Run: `cargo bench --bench model`. The step is measured with the default
//! `math = "fast"` and with `math = "libm"` (uSimMarine's own libm calls).
use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use usim::command::parse_text;
use usim::model::trig::MathMode;
use usim::model::Vehicle;

fn kayak(rudder: &str, math: MathMode) -> Vehicle {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cfg =
        usim::config::load_vehicle(&root.join("configs/kayak.toml")).expect("kayak config");
    cfg.params.math = math;
    let mut v = Vehicle::new(&cfg, 0.0);
    for (var, val) in [
        ("DESIRED_THRUST", "80"),
        ("DESIRED_RUDDER", rudder),
        ("DRIFT_VECTOR", "45, 0.2"),
        ("USM_RESET", "heading=33"),
    ] {
        // at t = 10 s: the kayak's rudder rate limit counts from t = 0
        v.handle_command(parse_text(var, val).unwrap(), 10.0)
            .unwrap();
    }
    v
}

fn step(c: &mut Criterion) {
    let mut g = c.benchmark_group("model");
    g.throughput(Throughput::Elements(1));
    for (name, rudder, math) in [
        (
            "step turning (kayak: thrust map, rudder 20, drift)",
            "20",
            MathMode::Fast,
        ),
        (
            "step holding course (kayak: thrust map, drift)",
            "0",
            MathMode::Fast,
        ),
        (
            "step turning, math = libm (bit-identical with the C++)",
            "20",
            MathMode::Libm,
        ),
        ("step holding course, math = libm", "0", MathMode::Libm),
    ] {
        let mut v = kayak(rudder, math);
        let mut k = 0u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                k += 1;
                v.step(black_box(10.0 + k as f64 * 0.1));
                black_box(v.nav().x)
            })
        });
    }
    g.finish();
}

/// A V22 vehicle with the embedded PID running every step (docs/v22.md §4).
fn pid_vehicle(config: &str, depth: bool) -> Vehicle {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = usim::config::load_vehicle(&root.join(config)).expect("V22 PID config");
    let mut v = Vehicle::new(&cfg, 0.0);
    v.step(0.1); // the PID ignores setpoints delivered before its first step
    let mut msgs = vec![("DESIRED_HEADING", "135"), ("DESIRED_SPEED", "2")];
    if depth {
        msgs.push(("DESIRED_DEPTH", "20"));
    }
    for (var, val) in msgs {
        v.handle_command(parse_text(var, val).unwrap(), 0.1)
            .unwrap();
    }
    v
}

fn step_pid(c: &mut Criterion) {
    let mut g = c.benchmark_group("model");
    g.throughput(Throughput::Elements(1));
    for (name, config, depth) in [
        (
            "step with the embedded PID (v22 boat: heading + speed)",
            "configs/v22_pid_boat.toml",
            false,
        ),
        (
            "step with the embedded PID (v22 uuv: heading + speed + depth cascade)",
            "configs/v22_pid_uuv.toml",
            true,
        ),
    ] {
        let mut v = pid_vehicle(config, depth);
        let mut k = 1u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                k += 1;
                v.step(black_box(k as f64 * 0.1));
                black_box(v.nav().x)
            })
        });
        // (skipped when a name filter left this benchmark out: k stays 1)
        assert!(
            k == 1 || v.pid_output().is_some_and(|o| o.thrust > 0.0),
            "the PID ran"
        );
    }
    g.finish();
}

fn replay(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mission = usim::mission::load(&root.join("missions/long_survey.toml")).expect("mission");
    assert_eq!(mission.steps, 36_000);
    let mut g = c.benchmark_group("replay");
    g.sample_size(20);
    g.throughput(Throughput::Elements(mission.steps + 1));
    g.bench_function("long_survey 36000 steps to CSV (rows)", |b| {
        b.iter(|| {
            let summary = usim::replay::run(&mission, std::io::sink(), |_, _| {}).unwrap();
            black_box(summary.rows)
        })
    });
    g.bench_function("long_survey 36000 steps to MCAP (state messages)", |b| {
        b.iter(|| {
            let out = usim::replay::mcap::ReplayMcap {
                log: usim::replay::mcap::McapLog::new(NullSeek::default()).unwrap(),
                vehicle: mission.vehicle.name.clone(),
                fleet: Vec::new(),
                start_time: mission.start_time,
            };
            let summary = usim::replay::run_to(&mission, out, |_, _| {}).unwrap();
            black_box(summary.rows)
        })
    });
    g.finish();
}

/// A seekable sink: keeps the position and length, stores nothing (the
/// MCAP writer seeks back to fill in chunk lengths), like `io::sink` for CSV.
#[derive(Default)]
struct NullSeek {
    pos: u64,
    len: u64,
}

impl std::io::Write for NullSeek {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pos += buf.len() as u64;
        self.len = self.len.max(self.pos);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for NullSeek {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.pos = match to {
            std::io::SeekFrom::Start(p) => p,
            std::io::SeekFrom::End(d) => self.len.saturating_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

/// `usim plot` of the 36,001-row long_survey CSV: parse + draw + encode.
fn plot(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mission = usim::mission::load(&root.join("missions/long_survey.toml")).expect("mission");
    let mut csv = Vec::new();
    usim::replay::run(&mission, &mut csv, |_, _| {}).unwrap();
    let fig = usim::plot::Figure {
        panels: usim::plot::Panel::ALL.to_vec(),
        title: Some("long_survey".into()),
        obstacles: Vec::new(),
        environment: usim::plot::EnvLegend::default(),
    };
    let mut g = c.benchmark_group("plot");
    g.sample_size(10);
    for (name, format) in [
        ("36001 rows to SVG", usim::plot::ImageFormat::Svg),
        ("36001 rows to PNG", usim::plot::ImageFormat::Png),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let runs = usim::plot::run_csv::parse(&csv).unwrap();
                assert_eq!(runs[0].len(), 36_001);
                let labelled: Vec<usim::plot::Labelled> = runs
                    .into_iter()
                    .map(|run| usim::plot::Labelled {
                        label: "long_survey".into(),
                        run,
                    })
                    .collect();
                black_box(usim::plot::render(&labelled, &fig, format).unwrap().len())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, step, step_pid, replay, plot);
criterion_main!(benches);
