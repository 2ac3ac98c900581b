//! Criterion benchmarks of the simulator core: one model step, and a
//! 36,000-step mission replay to CSV (rows per second = 36,001 / time).
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
        assert!(
            v.pid_output().is_some_and(|o| o.thrust > 0.0),
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
    g.finish();
}

criterion_group!(benches, step, step_pid, replay);
criterion_main!(benches);
