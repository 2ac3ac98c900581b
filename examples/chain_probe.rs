//! Is a model step bound by its loop-carried dependency chain or by
//! throughput? Steps K independent copies of the classic kayak (turning,
//! as examples/step_profile.rs) or of the V22 boat with its PID (as
//! examples/pid_step_profile.rs) round-robin and prints ns per
//! vehicle-step: a latency-bound step gets cheaper per vehicle as K grows
//! (the copies' chains overlap), a throughput-bound one does not.
//!
//! `cargo run --release --example chain_probe [N] [classic|boat] [K]`
use std::time::Instant;

use usim::command::parse_text;
use usim::model::Vehicle;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let which = args.next().unwrap_or_else(|| "boat".into());
    let k: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pid = match which.as_str() {
        "boat" => true,
        "classic" => false,
        other => return Err(format!("unknown workload {other:?} (classic or boat)").into()),
    };
    let cfg = if pid {
        usim::config::load_vehicle(&root.join("configs/v22_pid_boat.toml"))?
    } else {
        usim::config::load_vehicle(&root.join("configs/kayak.toml"))?
    };
    let mut vs: Vec<Vehicle> = (0..k).map(|_| Vehicle::new(&cfg, 0.0)).collect();
    let t0 = if pid { 0.0 } else { 10.0 };
    for v in &mut vs {
        if pid {
            v.step(0.1);
            for (var, val) in [("DESIRED_HEADING", "135"), ("DESIRED_SPEED", "2")] {
                v.handle_command(parse_text(var, val)?, 0.1)?;
            }
        } else {
            for (var, val) in [
                ("DESIRED_THRUST", "80"),
                ("DESIRED_RUDDER", "20"),
                ("USM_RESET", "heading=33"),
                ("DRIFT_VECTOR", "45, 0.2"),
            ] {
                v.handle_command(parse_text(var, val)?, 10.0)?;
            }
        }
    }
    let heading = [
        parse_text("DESIRED_HEADING", "165")?,
        parse_text("DESIRED_HEADING", "135")?,
    ];
    let start = Instant::now();
    let mut s = 0.0;
    for i in 2..n + 2 {
        let t = t0 + i as f64 * 0.1;
        for v in &mut vs {
            if pid && i % 200 == 0 {
                v.handle_command(heading[((i / 200) % 2) as usize].clone(), t)?;
            }
            v.step(t);
            s += v.nav().x;
        }
    }
    let el = start.elapsed();
    println!(
        "{n} steps x {k} ({which}): {:.1} ns/vehicle-step (checksum {s})",
        el.as_nanos() as f64 / (n as f64 * k as f64)
    );
    Ok(())
}
