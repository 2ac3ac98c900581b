//! Criterion benchmark of `BatchFleet::step` (the Python package's
//! `Fleet.step` without Python): 1,000 kayaks, setpoints thrust 60 % and a
//! rudder spread over the fleet, state columns x, y, speed, heading (the
//! setup of `python/benches/bench.py` and `examples/batch_profile.rs`), and
//! the same with the V22 PID boat.
//!
//! Run: `cargo bench --bench batch`. Throughput is in vehicle-steps/s.
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use usim::batch::{BatchFleet, Field};
use usim::model::Actuator;

fn fleet_of(config: &str, n: usize) -> BatchFleet {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("configs")
        .join(config);
    let cfg = usim::config::load_vehicle(&path).expect("a shipped config loads");
    BatchFleet::new(
        vec![cfg.params; n],
        0.0,
        0.1,
        vec![Actuator::Thrust, Actuator::Rudder],
        vec![Field::X, Field::Y, Field::Speed, Field::Heading],
    )
    .expect("a valid fleet")
}

fn batch(c: &mut Criterion) {
    let n = 1000usize;
    let sp: Vec<f64> = (0..n)
        .flat_map(|i| [60.0, (i % 200) as f64 - 100.0])
        .collect();
    let mut out = vec![0.0; n * 4];
    let mut g = c.benchmark_group("BatchFleet::step, 1000 vehicles");
    g.throughput(Throughput::Elements(n as u64));
    for config in ["kayak.toml", "v22_pid_boat.toml"] {
        let mut f = fleet_of(config, n);
        g.bench_function(config, |b| {
            b.iter(|| f.step(black_box(&sp), &mut out).expect("valid setpoints"))
        });
    }
    g.finish();
}

criterion_group!(benches, batch);
criterion_main!(benches);
