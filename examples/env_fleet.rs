//! 1,000 kayaks (a 32-wide grid, 50 m apart, thrust 60, rudder 10) at
//! 10 Hz, in calm water or in a 260-component directional JONSWAP sea
//! (Hs 1.5 m, Tp 6 s, spread 25°) with an 8 m/s wind with Davenport gusts
//! (docs/model.md §24), and (`full`) also sensor noise (GPS white noise
//! and a Gauss–Markov bias, heading and speed noise): a fixed workload for
//! the environment layer's figures. `scripts/env_figures.sh` runs it for wall time and under
//! callgrind for instruction counts.
//!
//! `cargo run --release --example env_fleet [STEPS=600] [calm|sea|full] [THREADS=2] [VEHICLES=1000]`
//!
//! Prints vehicle-steps per second of the stepping loop (wall clock) and
//! the real-time factor at 10 Hz.
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use usim::command::Command;
use usim::model::Vehicle;

const BASE: &str = "name = \"kayak\"\nthrust_map = \"-100:-1.2, -50:-0.6, 20:0.5, 50:1.2, 80:1.8, 100:2.0\"\n\
turn_rate = 60\nmax_acceleration = 0.4\nmax_deceleration = 0.5\nplatform_length = 3\nplatform_beam = 0.8\n";
const SEA: &str = "[sea]\nspectrum = \"jonswap\"\nhs = 1.5\ntp = 6\ngamma = 3.3\ndirection = 45\n\
spreading = 25\ncomponents = 260\nseed = 1\n[wind]\nspeed = 8\ndirection = 60\ngusts = true\ncomponents = 64\nseed = 1\n";
const SENSORS: &str = "[sensors]\nseed = 1\ngps_sigma = 2\ngps_bias_sigma = 1\ngps_bias_tau = 60\n\
heading_sigma = 1\nspeed_sigma = 0.05\n";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let steps: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(600);
    let mode = args.get(2).map(String::as_str).unwrap_or("sea");
    let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2).max(1);
    let n: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let text = match mode {
        "calm" => BASE.to_string(),
        "sea" => format!("{BASE}{SEA}"),
        "full" => format!("{BASE}{SEA}{SENSORS}"),
        other => panic!("mode {other}: calm, sea or full"),
    };
    let cfg = usim::config::parse_vehicle(Path::new("env_fleet.toml"), &text).expect("config");
    let mut fleet: Vec<Vehicle> = (0..n)
        .map(|i| {
            let mut p = cfg.params.clone();
            p.start.x = 50.0 * (i % 32) as f64;
            p.start.y = 50.0 * (i / 32) as f64;
            let mut v = Vehicle::from_params(p, 0.0);
            v.handle_command(Command::DesiredThrust(60.0), 0.0).unwrap();
            v.handle_command(Command::DesiredRudder(10.0), 0.0).unwrap();
            v
        })
        .collect();
    let chunk = n.div_ceil(threads);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for part in fleet.chunks_mut(chunk) {
            s.spawn(move || {
                for k in 1..=steps {
                    let t = k as f64 * 0.1;
                    for v in part.iter_mut() {
                        v.step(t);
                    }
                }
            });
        }
    });
    let wall = t0.elapsed().as_secs_f64();
    let vs = (n as u64 * steps) as f64;
    let x: f64 = fleet.iter().map(|v| v.nav().x).sum();
    black_box(x);
    println!(
        "{n} vehicles, {mode}, {steps} steps on {threads} threads: {:.0} vehicle-steps/s, {:.1}x real time at 10 Hz ({wall:.3} s)",
        vs / wall,
        (steps as f64 * 0.1) / wall
    );
}
