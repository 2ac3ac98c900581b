//! Steps a `BatchFleet` (the Python package's `Fleet`) of N kayaks for
//! STEPS steps with thrust 60 % and a rudder spread over the fleet, state
//! columns x, y, speed, heading (the setup of `python/benches/bench.py`):
//! a fixed workload for `valgrind --tool=callgrind` (repeatable
//! instruction counts on a loaded machine) next to `cargo bench --bench
//! batch`. Prints vehicle-steps/s.
//!
//! `cargo run --release --example batch_profile [STEPS=1000] [VEHICLES=1000] [CONFIG=configs/kayak.toml]`
use std::hint::black_box;

use usim::batch::{BatchFleet, Field};
use usim::model::Actuator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let steps: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let n: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let config = args.next().unwrap_or_else(|| "configs/kayak.toml".into());
    let cfg = usim::config::load_vehicle(std::path::Path::new(&config))?;
    let mut fleet = BatchFleet::new(
        vec![cfg.params; n],
        0.0,
        0.1,
        vec![Actuator::Thrust, Actuator::Rudder],
        vec![Field::X, Field::Y, Field::Speed, Field::Heading],
    )?;
    let mut sp = vec![0.0; n * 2];
    for i in 0..n {
        sp[2 * i] = 60.0;
        sp[2 * i + 1] = (i % 200) as f64 - 100.0;
    }
    let mut out = vec![0.0; n * 4];
    let t0 = std::time::Instant::now();
    for _ in 0..steps {
        fleet.step(black_box(&sp), &mut out)?;
    }
    black_box(&out);
    let s = t0.elapsed().as_secs_f64();
    println!(
        "{n} vehicles x {steps} steps: {s:.3} s, {:.0} vehicle-steps/s",
        (n as u64 * steps) as f64 / s
    );
    Ok(())
}
