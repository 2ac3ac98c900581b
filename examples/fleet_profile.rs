//! Replays the fleet benchmark's mission (1,000 kayaks 50 m apart, near
//! miss 20 m; `benches/fleet.rs`) for N steps: a fixed workload for
//! `valgrind --tool=callgrind` (repeatable instruction counts on a loaded
//! machine) next to `cargo bench --bench fleet`. `scripts/fleet_instructions.sh`
//! runs it.
//!
//! `cargo run --release --example fleet_profile [STEPS=100] [none|encounters|encounters-dense|records|none-unblocked|encounters-unblocked|positions|csv] [VEHICLES=1000]`
//!
//! `none` and `encounters` run the blocked loop
//! (`usim::replay::run_fleet_split`: chunks of vehicles through several
//! iterations at a time, positions and motions recorded for the
//! encounter tracker; `records` records them with no tracker); the
//! `-unblocked` modes the loop that steps the whole fleet once per
//! iteration (`usim::replay::run_fleet`), for comparison.
//!
//! Prints the rate of the whole replay (vehicles made, stepped, dropped)
//! and, apart, the rate of the steps alone (from the loop's first
//! `on_step`, after the vehicles and the blocked loop's records are made,
//! to its last, before they are dropped), also per second of the process's
//! CPU time (steadier on a shared machine), and the set-up and tear-down
//! time per vehicle: a short run of a large fleet (20 steps of 100,000
//! vehicles) would otherwise count making 100,000 vehicles as stepping.
use std::hint::black_box;
use std::time::Instant;

/// When the replay loop first and last called `on_step`: wall clock and
/// the process's CPU time, s (read only at iterations 0 and `steps`: it is
/// a system call, ~1 µs, as long as a few vehicle-steps).
struct Marks {
    steps: u64,
    first: Option<(Instant, f64)>,
    last: Option<(Instant, f64)>,
}

impl Marks {
    fn mark(&mut self, k: u64) {
        let cpu = if k == 0 || k == self.steps {
            cpu_seconds()
        } else {
            f64::NAN
        };
        let now = (Instant::now(), cpu);
        self.first.get_or_insert(now);
        self.last = Some(now);
    }
}

/// CPU time of the whole process (every thread, rayon's too), s: unlike
/// the wall clock it does not count the time other programs had the core,
/// which on a shared machine is most of the noise (it still counts their
/// effect on the caches).
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid timespec to write into.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    f64::NAN
}

#[path = "../benches/common/fleet_mission.rs"]
mod fleet_mission;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let steps: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100);
    let mode = args.next().unwrap_or_else(|| "none".into());
    let n: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let loading = std::time::Instant::now();
    let m = fleet_mission::fleet_mission(n, steps);
    let load_s = loading.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut marks = Marks {
        steps,
        first: None,
        last: None,
    };
    match mode.as_str() {
        "none" => {
            // Nothing recorded of the vehicles: the blocked loop of
            // `run_fleet_recorded` with empty records.
            usim::replay::run_fleet_recorded(
                &m,
                usim::replay::NoRows,
                None,
                |_, _| {},
                |_| (),
                |k, _, _| marks.mark(k),
            )?;
        }
        "none-unblocked" => {
            usim::replay::run_fleet(
                &m,
                usim::replay::NoRows,
                None,
                |_, _| {},
                |k, _, _| marks.mark(k),
            )?;
        }
        "encounters" | "encounters-dense" => {
            let mut ranges = m
                .encounters
                .ok_or("the fleet mission has encounter ranges")?;
            if mode == "encounters-dense" {
                // Every lattice neighbour (50 m) within the near-miss
                // range: about 2 pairs per vehicle every step.
                ranges.near_miss = 60.0;
            }
            let mut tr = usim::encounter::Tracker::new(ranges);
            let mut events = 0u64;
            usim::replay::run_fleet_split(
                &m,
                usim::replay::NoRows,
                None,
                |_, _| {},
                usim::encounter::Pose::split,
                |k, t, positions, motions| {
                    usim::encounter::observe_split(&mut tr, t, positions, motions, |_| events += 1);
                    marks.mark(k);
                },
            )?;
            black_box(events);
        }
        "records" => {
            // The blocked loop recording the encounter tracker's poses,
            // with no tracker: what the records cost.
            usim::replay::run_fleet_split(
                &m,
                usim::replay::NoRows,
                None,
                |_, _| {},
                usim::encounter::Pose::split,
                |k, _, positions, motions| {
                    black_box((positions.len(), motions.len()));
                    marks.mark(k);
                },
            )?;
        }
        "encounters-unblocked" => {
            let ranges = m
                .encounters
                .ok_or("the fleet mission has encounter ranges")?;
            let mut tr = usim::encounter::Tracker::new(ranges);
            let mut events = 0u64;
            usim::replay::run_fleet(
                &m,
                usim::replay::NoRows,
                None,
                |_, _| {},
                |k, t, vs| {
                    usim::encounter::observe_fleet(&mut tr, t, vs, |_| events += 1);
                    marks.mark(k);
                },
            )?;
            black_box(events);
        }
        "positions" => {
            // Only read every vehicle's position after every step (the
            // memory traffic encounters cannot avoid).
            let mut sum = 0.0;
            usim::replay::run_fleet(
                &m,
                usim::replay::NoRows,
                None,
                |_, _| {},
                |k, _, vs| {
                    for v in vs {
                        sum += v.nav().x + v.nav().y;
                    }
                    marks.mark(k);
                },
            )?;
            black_box(sum);
        }
        "csv" => {
            let names = (0..n).map(|i| m.vehicle_at(i).name.clone()).collect();
            let out = usim::replay::csv::FleetCsvWriter::new(std::io::sink(), names)?;
            usim::replay::run_fleet(&m, out, None, |_, _| {}, |k, _, _| marks.mark(k))?;
        }
        other => {
            return Err(format!(
                "mode {other}: none, encounters, encounters-dense, none-unblocked, \
                 encounters-unblocked, positions or csv"
            )
            .into())
        }
    }
    let ended = Instant::now();
    let s = (ended - started).as_secs_f64();
    let ((first, cpu_first), (last, cpu_last)) = (
        marks.first.unwrap_or((started, f64::NAN)),
        marks.last.unwrap_or((ended, f64::NAN)),
    );
    let stepping = (last - first).as_secs_f64();
    eprintln!(
        "{} bytes per vehicle",
        std::mem::size_of::<usim::model::Vehicle>()
    );
    println!(
        "{n} vehicles x {steps} steps ({mode}): {:.2} ms per 100 steps, \
         {:.0} vehicle-steps/s, mission built and parsed in {:.3} s; \
         steps alone {:.0} vehicle-steps/s ({:.0} per CPU second), \
         set-up {:.2} us and tear-down {:.2} us per vehicle",
        s * 1e3 * 100.0 / steps as f64,
        (n as f64 * steps as f64) / s,
        load_s,
        (n as f64 * steps as f64) / stepping,
        (n as f64 * steps as f64) / (cpu_last - cpu_first),
        (first - started).as_secs_f64() * 1e6 / n as f64,
        (ended - last).as_secs_f64() * 1e6 / n as f64,
    );
    Ok(())
}
