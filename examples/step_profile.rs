//! Runs the kayak for N model steps (default 200,000) and prints the mean
//! cost per step: a fixed workload for `valgrind --tool=callgrind` (repeatable
//! instruction counts) next to `cargo bench --bench model`.
//!
//! `cargo run --release --example step_profile [N]`
use std::time::Instant;

use usim::command::parse_text;
use usim::model::Vehicle;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(200_000);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/kayak.toml");
    let cfg = usim::config::load_vehicle(&path)?;
    let mut v = Vehicle::new(&cfg, 0.0);
    for (var, val) in [
        ("DESIRED_THRUST", "80"),
        (
            "DESIRED_RUDDER",
            std::env::var("RUDDER").as_deref().unwrap_or("20"),
        ),
        ("USM_RESET", "heading=33"),
        ("DRIFT_VECTOR", "45, 0.2"),
    ] {
        // at t = 10 s: the kayak's rudder rate limit counts from t = 0
        v.handle_command(parse_text(var, val)?, 10.0)?;
    }
    let start = Instant::now();
    let mut s = 0.0;
    for k in 1..=n {
        v.step(10.0 + k as f64 * 0.1);
        s += v.nav().x;
    }
    let el = start.elapsed();
    println!(
        "{n} steps: {:.1} ns/step (checksum {s})",
        el.as_nanos() as f64 / n as f64
    );
    Ok(())
}
