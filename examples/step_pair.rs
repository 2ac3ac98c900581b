//! The V22 PID step against the classic turning step in ONE process, in
//! alternating blocks: the workloads of `step_profile` (the kayak turning,
//! rudder 20, drift) and `pid_step_profile` (the V22 boat with its embedded
//! PID, the heading setpoint swinging every 20 s), B steps of one, then B
//! of the other, R times. Both meet the same clock speed and the same
//! neighbours within a few milliseconds, which separate processes seconds
//! apart do not (on a shared VM their medians move by ±20 %). Prints the
//! median ns/step of each over the R blocks with the range, the median
//! and range of the per-pair ratios (PID block / the classic block next to
//! it), and the ratio of the fastest blocks (the quiet machine's figure:
//! a slow phase adds time to both, which pulls a ratio towards 1).
//!
//! `cargo run --release --example step_pair [R=200] [B=20000] [boat|uuv]`
use std::time::Instant;

use usim::command::{parse_text, Command};
use usim::model::Vehicle;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut num = |d: u64| -> Result<u64, Box<dyn std::error::Error>> {
        Ok(args.next().map(|s| s.parse()).transpose()?.unwrap_or(d))
    };
    let rounds = num(200)?.max(1);
    let block = num(20_000)?.max(1);
    let which = std::env::args().nth(3).unwrap_or_else(|| "boat".into());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));

    // the classic kayak, as in examples/step_profile.rs
    let kcfg = usim::config::load_vehicle(&root.join("configs/kayak.toml"))?;
    let mut kayak = Vehicle::new(&kcfg, 0.0);
    for (var, val) in [
        ("DESIRED_THRUST", "80"),
        ("DESIRED_RUDDER", "20"),
        ("USM_RESET", "heading=33"),
        ("DRIFT_VECTOR", "45, 0.2"),
    ] {
        kayak.handle_command(parse_text(var, val)?, 10.0)?;
    }

    // the V22 PID vehicle, as in examples/pid_step_profile.rs
    let (config, depth) = match which.as_str() {
        "boat" => ("configs/v22_pid_boat.toml", false),
        "uuv" => ("configs/v22_pid_uuv.toml", true),
        other => return Err(format!("unknown vehicle {other:?} (boat or uuv)").into()),
    };
    let pcfg = usim::config::load_vehicle(&root.join(config))?;
    let mut pid = Vehicle::new(&pcfg, 0.0);
    pid.step(0.1);
    let mut msgs = vec![("DESIRED_HEADING", "135"), ("DESIRED_SPEED", "2")];
    if depth {
        msgs.push(("DESIRED_DEPTH", "20"));
    }
    for (var, val) in msgs {
        pid.handle_command(parse_text(var, val)?, 0.1)?;
    }
    let heading: [Command; 2] = [
        parse_text("DESIRED_HEADING", "165")?,
        parse_text("DESIRED_HEADING", "135")?,
    ];

    let (mut kk, mut pk) = (1u64, 2u64);
    let (mut sk, mut sp, mut r) = (0.0, 0.0, 0u64);
    let mut classic = Vec::with_capacity(rounds as usize);
    let mut v22 = Vec::with_capacity(rounds as usize);
    let mut ratio = Vec::with_capacity(rounds as usize);
    for round in 0..rounds {
        // alternate which goes first, so neither always follows the other
        let mut c = 0.0;
        let mut p = 0.0;
        for part in 0..2 {
            if (part == 0) == (round % 2 == 0) {
                let start = Instant::now();
                for _ in 0..block {
                    kayak.step(10.0 + kk as f64 * 0.1);
                    sk += kayak.nav().x;
                    kk += 1;
                }
                c = start.elapsed().as_nanos() as f64 / block as f64;
            } else {
                let start = Instant::now();
                for _ in 0..block {
                    let t = pk as f64 * 0.1;
                    if pk % 200 == 0 {
                        pid.handle_command(heading[((pk / 200) % 2) as usize].clone(), t)?;
                    }
                    pid.step(t);
                    sp += pid.nav().x;
                    r = r.wrapping_add(pid.pid_output().map_or(0, |o| o.rudder.to_bits()));
                    pk += 1;
                }
                p = start.elapsed().as_nanos() as f64 / block as f64;
            }
        }
        classic.push(c);
        v22.push(p);
        ratio.push(p / c);
    }
    let stat = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let med = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        (med, v[0], v[n - 1])
    };
    let (cm, clo, chi) = stat(&mut classic);
    let (pm, plo, phi) = stat(&mut v22);
    let (rm, rlo, rhi) = stat(&mut ratio);
    println!(
        "{rounds} pairs of {block}-step blocks: classic {cm:.1} ns ({clo:.1}-{chi:.1}), \
         V22 {which} PID {pm:.1} ns ({plo:.1}-{phi:.1}), ratio {rm:.3} ({rlo:.3}-{rhi:.3}); \
         fastest blocks {:.3} (checksums {sk}, {sp}, {r:x})",
        plo / clo
    );
    Ok(())
}
