//! Criterion benchmarks of fleets in one replay (docs/fleets.md): 1,000
//! vehicles for 100 steps (100,000 vehicle-steps per iteration), with no
//! output, with a CSV row per vehicle per step, and with encounters on.
//!
//! Run: `cargo bench --bench fleet`. Throughput is in vehicle-steps/s.
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
#[path = "common/fleet_mission.rs"]
mod fleet_mission;
use fleet_mission::fleet_mission;

fn fleet(c: &mut Criterion) {
    let (n, steps) = (1000usize, 100u64);
    let m = fleet_mission(n, steps);
    let names: Vec<String> = (0..n).map(|i| m.vehicle_at(i).name.clone()).collect();
    let mut g = c.benchmark_group("fleet 1000 vehicles x 100 steps");
    g.sample_size(20);
    g.throughput(Throughput::Elements(n as u64 * steps));
    g.bench_function("no output", |b| {
        b.iter(|| {
            usim::replay::run_fleet(&m, usim::replay::NoRows, None, |_, _| {}, |_, _, _| {})
                .unwrap()
        })
    });
    g.bench_function("no output, encounters on", |b| {
        b.iter(|| {
            let mut tr = usim::encounter::Tracker::new(m.encounters.unwrap());
            let mut events = 0u64;
            usim::replay::run_fleet(
                &m,
                usim::replay::NoRows,
                None,
                |_, _| {},
                |_, t, vs| usim::encounter::observe_fleet(&mut tr, t, vs, |_| events += 1),
            )
            .unwrap();
            black_box(events)
        })
    });
    g.bench_function("CSV row per vehicle per step", |b| {
        b.iter(|| {
            let out =
                usim::replay::csv::FleetCsvWriter::new(std::io::sink(), names.clone()).unwrap();
            usim::replay::run_fleet(&m, out, None, |_, _| {}, |_, _, _| {}).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, fleet);
criterion_main!(benches);
