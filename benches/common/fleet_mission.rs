//! The fleet benchmarks' mission, shared by `benches/fleet.rs` and
//! `examples/fleet_profile.rs` (instruction counts under callgrind).
use std::fmt::Write as _;
use std::path::Path;

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
