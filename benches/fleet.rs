//! Criterion benchmarks of fleets in one replay (docs/fleets.md): 1,000
//! vehicles for 100 steps (100,000 vehicle-steps per iteration), with no
//! output, with a CSV row per vehicle per step, and with encounters on.
//!
//! Run: `cargo bench --bench fleet`. Throughput is in vehicle-steps/s.
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use usim::mission::Mission;

/// `n` kayaks on a square lattice 50 m apart (a sparse fleet: near-miss
/// range 20 m), each with its own thrust and rudder posts, for `steps`
/// iterations at 10 Hz.
pub fn fleet_mission(n: usize, steps: u64) -> Mission {
    let side = (n as f64).sqrt().ceil() as usize;
    let mut t =
        format!("[mission]\ndt = 0.1\nsteps = {steps}\nnear_miss = 20.0\ncollision = 4.0\n");
    for i in 0..n {
        let (x, y) = ((i % side) as f64 * 50.0, (i / side) as f64 * 50.0);
        let _ = write!(
            t,
            "[[vehicle]]\nname = \"v{i}\"\nstart_pos = \"x={x}, y={y}, heading={}, speed=1\"\n\
             thrust_map = \"-100:-1.2, -50:-0.6, 20:0.5, 50:1.2, 80:1.8, 100:2.0\"\n\
             turn_rate = 60\nmax_acceleration = 0.4\nmax_deceleration = 0.5\n",
            (i * 37) % 360
        );
    }
    for i in 0..n {
        let _ = write!(
            t,
            "[[post]]\nvehicle = \"v{i}\"\nt = 0.0\nvar = \"DESIRED_THRUST\"\nvalue = {}\n\
             [[post]]\nvehicle = \"v{i}\"\nt = 0.0\nvar = \"DESIRED_RUDDER\"\nvalue = {}\n",
            40 + i % 50,
            (i % 21) as f64 - 10.0
        );
    }
    usim::mission::parse(Path::new("fleet.toml"), &t).expect("fleet mission")
}

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
