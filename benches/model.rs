//! Criterion benchmarks of the simulator core: one model step, and a
//! 36,000-step mission replay to CSV (rows per second = 36,001 / time).
//!
//! Run: `cargo bench --bench model`.
use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use usim::command::parse_text;
use usim::model::Vehicle;

fn step(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = usim::config::load_vehicle(&root.join("configs/kayak.toml")).expect("kayak config");
    let mut v = Vehicle::new(&cfg, 0.0);
    v.handle_command(parse_text("DESIRED_THRUST", "80").unwrap(), 0.0)
        .unwrap();
    v.handle_command(parse_text("DESIRED_RUDDER", "20").unwrap(), 0.0)
        .unwrap();
    v.handle_command(parse_text("DRIFT_VECTOR", "45, 0.2").unwrap(), 0.0)
        .unwrap();
    let mut k = 0u64;
    let mut g = c.benchmark_group("model");
    g.throughput(Throughput::Elements(1));
    g.bench_function(
        "step (kayak: thrust map, turn, drift, lat/lon posting)",
        |b| {
            b.iter(|| {
                k += 1;
                v.step(black_box(k as f64 * 0.1));
                black_box(v.nav().x)
            })
        },
    );
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

criterion_group!(benches, step, replay);
criterion_main!(benches);
