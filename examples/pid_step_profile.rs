//! Runs a V22 vehicle with the embedded PID for N model steps (default
//! 200,000) and prints the mean cost per step: a fixed workload for
//! `valgrind --tool=callgrind` (repeatable instruction counts under load)
//! next to `cargo bench --bench model -- "embedded PID"`.
//!
//! `cargo run --release --example pid_step_profile [N] [boat|uuv]`
//!
//! The helm's heading setpoint swings between 135° and 165° every 20 s: small
//! enough that the rudder stays inside ±maxrudder, so the PID's rudder
//! changes every step (the heading loop never settles).
use std::time::Instant;

use usim::command::parse_text;
use usim::model::Vehicle;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(200_000);
    let which = args.next().unwrap_or_else(|| "boat".into());
    let (config, depth) = match which.as_str() {
        "boat" => ("configs/v22_pid_boat.toml", false),
        "uuv" => ("configs/v22_pid_uuv.toml", true),
        other => return Err(format!("unknown vehicle {other:?} (boat or uuv)").into()),
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(config);
    let cfg = usim::config::load_vehicle(&path)?;
    let mut v = Vehicle::new(&cfg, 0.0);
    v.step(0.1); // the PID ignores setpoints delivered before its first step
    let mut msgs = vec![("DESIRED_HEADING", "135"), ("DESIRED_SPEED", "2")];
    if depth {
        msgs.push(("DESIRED_DEPTH", "20"));
    }
    for (var, val) in msgs {
        v.handle_command(parse_text(var, val)?, 0.1)?;
    }
    let heading = [
        parse_text("DESIRED_HEADING", "165")?,
        parse_text("DESIRED_HEADING", "135")?,
    ];
    let start = Instant::now();
    let mut s = 0.0;
    // the rudder's bits, summed: a checksum that the PID's rudder moved
    let mut r = 0u64;
    for k in 2..n + 2 {
        let t = k as f64 * 0.1;
        if k % 200 == 0 {
            v.handle_command(heading[((k / 200) % 2) as usize].clone(), t)?;
        }
        v.step(t);
        s += v.nav().x;
        r = r.wrapping_add(v.pid_output().map_or(0, |o| o.rudder.to_bits()));
    }
    let el = start.elapsed();
    println!(
        "{n} steps ({which}): {:.1} ns/step (checksums {s}, {r:x})",
        el.as_nanos() as f64 / n as f64
    );
    Ok(())
}
