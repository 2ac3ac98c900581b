//! Deterministic mission replay (docs/formats.md §2): the same [`Vehicle`] a live
//! run uses, driven on a virtual clock, written as CSV (docs/formats.md §3).
//!
//! A replay is a pure function of the mission: iteration `k` runs at clock
//! `start_time + rel_k` with `rel_k = k·dt`; before it, every post due by
//! `rel_k + 1e-9` and not yet delivered is handled in file order, stamped
//! with that clock.
use std::io::Write;

use crate::mission::{Mission, Post};
use crate::model::{Snapshot, Vehicle};

pub mod alog;
pub mod csv;
pub mod mcap;
pub mod mcap_ros2;
pub mod posts;
pub mod threaded;

/// Tolerance for a post being due, s (docs/formats.md §2).
const DUE_EPS_S: f64 = 1e-9;

/// A message a replay dropped (the run goes on).
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped {
    /// Iteration before which it was handled.
    pub k: u64,
    /// Mission-file line of the post.
    pub line: usize,
    /// Why.
    pub reason: String,
}

/// Outcome of a replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Rows written (header excluded).
    pub rows: u64,
    /// Messages the vehicle dropped.
    pub dropped: Vec<Dropped>,
    /// Obstacle hits of every vehicle (docs/obstacles.md §4), in order;
    /// at most [`MAX_HIT_EVENTS`] kept, all counted in
    /// [`Summary::obstacle_hit_count`].
    pub obstacle_hits: Vec<ObstacleHitEvent>,
    /// Obstacle hits in all.
    pub obstacle_hit_count: u64,
}

/// Most obstacle hits a [`Summary`] lists (the rest are counted).
pub const MAX_HIT_EVENTS: usize = 10_000;

/// One obstacle hit of a replay: after iteration `k` the vehicle's
/// reference point met the obstacle; `OBSTACLE_HIT = "true"` was delivered
/// to it before iteration `k + 1`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObstacleHitEvent {
    /// The vehicle (index in the mission).
    pub vehicle: usize,
    /// The iteration after which it was found.
    pub k: u64,
    /// Mission time of that iteration, s.
    pub t: f64,
    /// The obstacle's label.
    pub label: String,
}

/// Where a replay's rows and posts go (CSV, MCAP).
pub trait Output {
    /// One output row; `clock` is the vehicle clock, s (start time + `s.t`).
    fn row(&mut self, s: &Snapshot, clock: f64) -> std::io::Result<()>;
    /// One output row of vehicle `vehicle` (index in the mission) of a
    /// multi-vehicle mission; by default the same as [`Output::row`].
    fn vehicle_row(&mut self, _vehicle: usize, s: &Snapshot, clock: f64) -> std::io::Result<()> {
        self.row(s, clock)
    }
    /// A post, just before the vehicle handles it at vehicle clock `clock`, s.
    fn post(&mut self, _post: &Post, _clock: f64) -> std::io::Result<()> {
        Ok(())
    }
    /// Flush and close.
    fn finish(self) -> std::io::Result<()>;
    /// The rows of every vehicle at one output step, `snaps[i]` being
    /// vehicle `i` (large fleets); by default [`Output::vehicle_row`] for
    /// each, in order.
    fn fleet_rows(&mut self, snaps: &[Snapshot], clock: f64) -> std::io::Result<()> {
        for (i, s) in snaps.iter().enumerate() {
            self.vehicle_row(i, s, clock)?;
        }
        Ok(())
    }
    /// Whether rows are wanted at all (false: the loop skips building them).
    fn wants_rows(&self) -> bool {
        true
    }
    /// Whether [`Output::publications`] is wanted (default: no).
    fn wants_publications(&self) -> bool {
        false
    }
    /// What vehicle `vehicle` published in the iteration that just ran, at
    /// vehicle clock `clock`, s (called only if [`Output::wants_publications`]).
    fn publications(
        &mut self,
        _vehicle: usize,
        _pubs: &[crate::model::Publication],
        _clock: f64,
    ) -> std::io::Result<()> {
        Ok(())
    }
}

/// An [`Output`] that takes no rows (sweeps and benchmarks that only need
/// `on_step`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRows;

impl Output for NoRows {
    fn row(&mut self, _s: &Snapshot, _clock: f64) -> std::io::Result<()> {
        Ok(())
    }

    fn finish(self) -> std::io::Result<()> {
        Ok(())
    }

    fn wants_rows(&self) -> bool {
        false
    }
}

/// Run `mission` and write its CSV to `out`. `progress(k, steps)` is called
/// now and then (every 4096 iterations and at the end).
pub fn run<W: Write>(
    mission: &Mission,
    out: W,
    progress: impl FnMut(u64, u64),
) -> std::io::Result<Summary> {
    run_with(mission, out, None, progress, |_, _, _| {})
}

/// [`run`], also writing the posts log (every publication, docs/v22.md §13)
/// to `posts` if given, and calling `on_step(k, t, &vehicle)` after every
/// iteration (mission time `t`, s).
pub fn run_with<W: Write>(
    mission: &Mission,
    out: W,
    posts: Option<&mut dyn Write>,
    progress: impl FnMut(u64, u64),
    on_step: impl FnMut(u64, f64, &Vehicle),
) -> std::io::Result<Summary> {
    run_to_with(
        mission,
        csv::CsvWriter::with_columns(out, &mission.columns)?,
        posts,
        progress,
        on_step,
    )
}

/// Run `mission` into any [`Output`] (see [`run`]).
pub fn run_to<O: Output>(
    mission: &Mission,
    out: O,
    progress: impl FnMut(u64, u64),
) -> std::io::Result<Summary> {
    run_to_with(mission, out, None, progress, |_, _, _| {})
}

/// The replay loop behind [`run`], [`run_with`] and [`run_to`]: rows into
/// `out`, the posts log into `posts` if given, `on_step` after every
/// iteration. A multi-vehicle mission runs through [`run_fleet`].
pub fn run_to_with<O: Output>(
    mission: &Mission,
    out: O,
    posts: Option<&mut dyn Write>,
    progress: impl FnMut(u64, u64),
    mut on_step: impl FnMut(u64, f64, &Vehicle),
) -> std::io::Result<Summary> {
    run_fleet(mission, out, posts, progress, |k, t, vs: &[Vehicle]| {
        on_step(k, t, &vs[0])
    })
}

/// Most rows `usim replay` writes without `--allow-large`: 10^8 (about
/// 25 GB of CSV, 150 GB of MCAP).
pub const MAX_ROWS: u64 = 100_000_000;

/// What a replay will write, estimated before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// Rows (one per vehicle per output step).
    pub rows: u64,
    /// Bytes of output, approximate (measured averages: a CSV row is
    /// ~220 bytes, an MCAP step of one vehicle ~1,320; rounded up).
    pub bytes: u64,
}

/// Estimate the rows and bytes of `mission` in `format` (rows exact up to
/// the first and last row, bytes from per-row averages).
pub fn estimate(mission: &Mission, format: Format) -> Estimate {
    let per_vehicle = (mission.steps / mission.output_every.max(1)).saturating_add(2);
    let rows = per_vehicle.saturating_mul(mission.vehicle_count() as u64);
    let per_row = match format {
        Format::Csv => 256,
        Format::Mcap => 1536,
        // odometry, pose, transforms, fix and ~15 postings per iteration
        Format::McapRos2 => 2560,
        // the publications of one iteration, ~50 bytes each
        Format::Alog => 1536,
    };
    Estimate {
        rows,
        bytes: rows.saturating_mul(per_row),
    }
}

/// The formats a replay is written to a file in (`usim replay -o`,
/// `usim sweep --runs-dir`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CSV: the columns of [`csv::HEADER`], with a `vehicle` column first
    /// for a multi-vehicle mission.
    Csv,
    /// MCAP with JSON messages (docs/viewing.md).
    Mcap,
    /// MCAP as a ROS 2 bag: `ros2msg` schemas, CDR messages (docs/ros2.md).
    McapRos2,
    /// MOOS alog: the posts and every publication (docs/alog.md).
    Alog,
}

impl Format {
    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Mcap | Format::McapRos2 => "mcap",
            Format::Alog => "alog",
        }
    }
}

/// Replay `mission` into `out` in `format`: exactly the bytes `usim replay
/// MISSION -o FILE` writes (CSV of one vehicle, CSV with a `vehicle` column
/// of a fleet, or MCAP). The rest as [`run_fleet`].
pub fn run_into<W: Write + std::io::Seek + Send>(
    mission: &Mission,
    format: Format,
    out: W,
    posts: Option<&mut dyn Write>,
    progress: impl FnMut(u64, u64),
    on_step: impl FnMut(u64, f64, &[Vehicle]),
) -> std::io::Result<Summary> {
    run_into_on(Threads::One, mission, format, out, posts, progress, on_step)
}

/// How many threads a replay runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Everything on the calling thread ([`run_fleet`]).
    One,
    /// The output's rows made and written on a second thread
    /// ([`threaded::run_fleet`]): the same bytes, about half the wall time
    /// on two free cores.
    Two,
}

/// [`run_into`] on one thread or two (`usim replay -o FILE` uses two).
pub fn run_into_on<W: Write + std::io::Seek + Send>(
    threads: Threads,
    mission: &Mission,
    format: Format,
    out: W,
    posts: Option<&mut dyn Write>,
    progress: impl FnMut(u64, u64),
    on_step: impl FnMut(u64, f64, &[Vehicle]),
) -> std::io::Result<Summary> {
    fn go<O: Output + Send>(
        threads: Threads,
        mission: &Mission,
        out: O,
        posts: Option<&mut dyn Write>,
        progress: impl FnMut(u64, u64),
        on_step: impl FnMut(u64, f64, &[Vehicle]),
    ) -> std::io::Result<Summary> {
        match threads {
            Threads::One => run_fleet(mission, out, posts, progress, on_step),
            Threads::Two => threaded::run_fleet(mission, out, posts, progress, on_step),
        }
    }
    let names: Vec<String> = (0..mission.vehicle_count())
        .map(|i| mission.vehicle_at(i).name.clone())
        .collect();
    match format {
        Format::Csv if names.len() > 1 => {
            let w = csv::FleetCsvWriter::with_columns(out, names, &mission.columns)?;
            go(threads, mission, w, posts, progress, on_step)
        }
        Format::Csv => {
            let w = csv::CsvWriter::with_columns(out, &mission.columns)?;
            go(threads, mission, w, posts, progress, on_step)
        }
        Format::Mcap => {
            let log = crate::replay::mcap::McapLog::new(out)?;
            let w = crate::replay::mcap::ReplayMcap {
                log,
                vehicle: mission.vehicle.name.clone(),
                fleet: names,
                start_time: mission.start_time,
            };
            go(threads, mission, w, posts, progress, on_step)
        }
        Format::McapRos2 => {
            let w = mcap_ros2::Ros2Mcap::new(out, &names)?;
            go(threads, mission, w, posts, progress, on_step)
        }
        Format::Alog => {
            let w = alog::ReplayAlog::new(out, mission)?;
            go(threads, mission, w, posts, progress, on_step)
        }
    }
}

/// Fleets of at least this many vehicles step in parallel (rayon), when
/// rayon has more than one thread; smaller ones step on the calling thread.
/// A hand-off to rayon's threads and back costs ~50–100 µs per step on a
/// 2-core machine, about 500 vehicle-steps: measured with
/// `examples/fleet_profile.rs`, 100 vehicles stepped at 3.6 M
/// vehicle-steps/s on two threads and 0.9 M on one rayon thread against
/// 9–10 M on the calling thread; 1,000 vehicles at 11.4 M on two threads.
const PARALLEL_FLEET: usize = 1024;

/// Step every vehicle of `vs` to clock `clock`, in order, each one's
/// per-step cache lines requested [`PREFETCH_AHEAD`] vehicles ahead
/// ([`Vehicle::prefetch_step`]): a fleet too large for the caches (100,000
/// vehicles) would otherwise wait for memory at each vehicle.
fn step_all(vs: &mut [Vehicle], clock: f64) {
    for i in 0..vs.len() {
        if let Some(next) = vs.get(i + PREFETCH_AHEAD) {
            next.prefetch_step();
        }
        vs[i].step(clock);
    }
}

/// Ask Linux to back the spare capacity of `v` with 2 MiB pages
/// (`madvise(MADV_HUGEPAGE)`; transparent huge pages are often on
/// `madvise` only): 100,000 vehicles are 310 MB, 76,000 4 KiB pages, and
/// a step touching each vehicle once misses the TLB at nearly every one.
/// Only whole 2 MiB pages inside the allocation, and only for 8 MiB or
/// more. Advice: nothing changes if it is refused.
///
/// Not free: the kernel may compact memory to find the huge pages while
/// the vehicles are made (on the 2-core VM of docs/performance-history.md, 17–22
/// µs per vehicle instead of ~5), so a fleet asks only when it runs at
/// least [`HUGE_PAGE_STEPS`] steps.
fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity() * std::mem::size_of::<T>();
        if bytes < 4 * HUGE {
            return;
        }
        let start = v.as_ptr() as usize;
        let lo = (start + HUGE - 1) & !(HUGE - 1);
        let hi = (start + bytes) & !(HUGE - 1);
        if hi > lo {
            // SAFETY: advice on whole pages inside our own allocation
            // (not yet written); it changes no memory contents.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Fewest steps of a fleet for [`advise_huge_pages`]: each of its
/// vehicle-steps saved ~0.1–0.2 µs at 100,000 vehicles (steps alone 3.1 →
/// 5.0 M vehicle-steps/s) against ~15 µs more to make each vehicle, so
/// from about 100 steps the run is faster (200 steps: whole run 2.9 →
/// 3.3 M vehicle-steps/s; docs/performance-history.md).
const HUGE_PAGE_STEPS: u64 = 100;

/// How many vehicles ahead [`step_all`] prefetches: a step takes about
/// 100 ns, about one trip to memory; two ahead was faster than one or
/// none at 100,000 vehicles (docs/performance-history.md).
const PREFETCH_AHEAD: usize = 2;

/// The fleet of `mission`, made in mission order (huge pages asked for a
/// long run, [`advise_huge_pages`]).
fn make_fleet(mission: &Mission) -> Vec<Vehicle> {
    let n = mission.vehicle_count();
    let mut vehicles: Vec<Vehicle> = Vec::with_capacity(n);
    if mission.steps >= HUGE_PAGE_STEPS {
        advise_huge_pages(&vehicles);
    }
    vehicles.extend((0..n).map(|i| Vehicle::new(mission.vehicle_at(i), mission.start_time)));
    vehicles
}

/// The indices of `mission`'s posts in order of time; ties in file order.
fn post_order(mission: &Mission) -> Vec<usize> {
    let mut order: Vec<usize> = (0..mission.posts.len()).collect();
    order.sort_by(|&a, &b| {
        mission.posts[a]
            .t
            .total_cmp(&mission.posts[b].t)
            .then(a.cmp(&b))
    });
    order
}

/// The mission time of iterations 1, 2, … in turn, s: `k·dt`, or the
/// pattern's intervals summed one by one (the same additions in the same
/// order however the iterations are grouped).
struct RelTimes<'a> {
    timing: &'a crate::mission::Timing,
    k: u64,
    rel: f64,
}

impl<'a> RelTimes<'a> {
    fn new(mission: &'a Mission) -> Self {
        RelTimes {
            timing: &mission.timing,
            k: 0,
            rel: 0.0,
        }
    }

    /// The mission time of the next iteration, s.
    fn next_rel(&mut self) -> f64 {
        self.k += 1;
        let k = self.k;
        self.rel = match self.timing {
            crate::mission::Timing::Pattern(p) => self.rel + p[((k - 1) % p.len() as u64) as usize],
            crate::mission::Timing::Uniform(dt) => k as f64 * dt,
        };
        self.rel
    }
}

/// The posts due before iteration `k` at mission time `rel` (s) that are
/// not yet delivered (`order[*next..]`), into `batch` in file order;
/// `*next` moves past them.
fn due_posts(
    mission: &Mission,
    order: &[usize],
    next: &mut usize,
    rel: f64,
    batch: &mut Vec<usize>,
) {
    batch.clear();
    while *next < order.len() && mission.posts[order[*next]].t <= rel + DUE_EPS_S {
        batch.push(order[*next]);
        *next += 1;
    }
    batch.sort_unstable();
}

/// Deliver the posts `batch` (file order) to their vehicles at vehicle
/// clock `clock` (s) before iteration `k`, each shown to `out` first; the
/// ones a vehicle refuses go to `dropped`.
fn deliver<O: Output>(
    mission: &Mission,
    batch: &[usize],
    vehicles: &mut [Vehicle],
    out: &mut O,
    k: u64,
    clock: f64,
    dropped: &mut Vec<Dropped>,
) -> std::io::Result<()> {
    for &i in batch {
        let post = &mission.posts[i];
        out.post(post, clock)?;
        if let Err(e) = vehicles[post.vehicle].handle_command(post.command.clone(), clock) {
            dropped.push(Dropped {
                k,
                line: post.line,
                reason: e.to_string(),
            });
        }
    }
    Ok(())
}

/// One [`Tracker`](crate::obstacle::Tracker) per vehicle of `mission`
/// with an `[obstacles]` table (`None` for the others); empty if none has.
fn make_trackers(mission: &Mission) -> Vec<Option<crate::obstacle::Tracker>> {
    let n = mission.vehicle_count();
    if (0..n).all(|i| mission.vehicle_at(i).obstacles.is_none()) {
        return Vec::new();
    }
    (0..n)
        .map(|i| {
            let setup = mission.vehicle_at(i).obstacles.clone();
            setup.map(crate::obstacle::Tracker::new)
        })
        .collect()
}

/// After iteration `k` (mission time `rel`, vehicle clock `clock`, s):
/// measure each tracked vehicle's true position (GT in dual state, else
/// NAV) against its obstacles; each new hit delivers `OBSTACLE_HIT =
/// "true"` to the vehicle (shown to `out` as a post, line 0) and goes into
/// `summary`.
fn check_obstacles<O: Output>(
    trackers: &mut [Option<crate::obstacle::Tracker>],
    vehicles: &mut [Vehicle],
    out: &mut O,
    (k, rel, clock): (u64, f64, f64),
    summary: &mut Summary,
) -> std::io::Result<()> {
    use crate::command::{Command, Payload};
    use crate::obstacle::postings::{HIT_VALUE, OBSTACLE_HIT};
    for (i, (tracker, v)) in trackers.iter_mut().zip(vehicles.iter_mut()).enumerate() {
        let Some(tracker) = tracker else { continue };
        let r = if v.params().dual_state {
            v.ground_truth()
        } else {
            v.nav()
        };
        for hit in tracker.observe(r.x, r.y) {
            let command = Command::ObstacleHit(Payload::Text(HIT_VALUE.to_string()));
            let post = Post {
                t: rel,
                var: OBSTACLE_HIT.to_string(),
                command: command.clone(),
                line: 0,
                vehicle: i,
            };
            out.post(&post, clock)?;
            // a bool word: neither model refuses it
            let _ = v.handle_command(command, clock);
            summary.obstacle_hit_count += 1;
            if summary.obstacle_hits.len() < MAX_HIT_EVENTS {
                summary.obstacle_hits.push(ObstacleHitEvent {
                    vehicle: i,
                    k,
                    t: rel,
                    label: hit.label,
                });
            }
        }
    }
    Ok(())
}

/// The one replay loop, for one vehicle or many: every vehicle runs on the
/// same clock; before iteration `k` every due post is delivered in file
/// order to its vehicle; then every vehicle steps; then (every
/// `output_every` iterations) each vehicle's row goes out, in mission
/// order ([`Output::vehicle_row`]). Vehicles do not interact, so each
/// vehicle's rows equal those of [`Mission::only`] replayed alone. The
/// posts log of a multi-vehicle mission has a `vehicle` first column.
/// `on_step(k, t, vehicles)` runs after every iteration (mission time `t`, s).
///
/// This loop steps the whole fleet once per iteration, which a fleet too
/// large for the caches pays for in memory traffic; a caller that needs
/// only a few numbers of each vehicle per iteration and no rows should use
/// [`run_fleet_recorded`], which steps the fleet in cache-sized blocks.
pub fn run_fleet<O: Output>(
    mission: &Mission,
    mut out: O,
    posts: Option<&mut dyn Write>,
    mut progress: impl FnMut(u64, u64),
    mut on_step: impl FnMut(u64, f64, &[Vehicle]),
) -> std::io::Result<Summary> {
    let n = mission.vehicle_count();
    let multi = n > 1;
    let mut vehicles = make_fleet(mission);
    let names: Vec<&str> = (0..n)
        .map(|i| mission.vehicle_at(i).name.as_str())
        .collect();
    let mut posts = match posts {
        Some(w) if multi => Some(posts::PostsWriter::with_vehicle_column(w)?),
        Some(w) => Some(posts::PostsWriter::new(w)?),
        None => None,
    };
    let mut summary = Summary::default();
    let rows = out.wants_rows();
    for (i, v) in vehicles.iter().enumerate().filter(|_| rows) {
        let first = v.snapshot();
        out.vehicle_row(i, &first, mission.start_time + first.t)?;
        summary.rows += 1;
    }
    on_step(0, 0.0, &vehicles);

    let order = post_order(mission);
    let mut next = 0;
    let mut batch: Vec<usize> = Vec::new();
    let mut snaps: Vec<Snapshot> = Vec::new();
    let steps = mission.steps;
    let mut times = RelTimes::new(mission);
    let parallel = vehicles.len() >= PARALLEL_FLEET && rayon::current_num_threads() > 1;
    let mut trackers = make_trackers(mission);
    for k in 1..=steps {
        let rel = times.next_rel();
        let clock = mission.start_time + rel;
        due_posts(mission, &order, &mut next, rel, &mut batch);
        deliver(
            mission,
            &batch,
            &mut vehicles,
            &mut out,
            k,
            clock,
            &mut summary.dropped,
        )?;
        if parallel {
            use rayon::prelude::*;
            vehicles
                .par_chunks_mut(16)
                .for_each(|vs| step_all(vs, clock));
        } else {
            step_all(&mut vehicles, clock);
        }
        if let Some(pw) = posts.as_mut() {
            for (i, v) in vehicles.iter().enumerate() {
                let name = if multi { Some(names[i]) } else { None };
                pw.write_for(name, k, rel, &v.publications())?;
            }
        }
        if out.wants_publications() {
            for (i, v) in vehicles.iter().enumerate() {
                out.publications(i, &v.publications(), clock)?;
            }
        }
        on_step(k, rel, &vehicles);
        if rows && parallel && (k % mission.output_every == 0 || k == steps) {
            use rayon::prelude::*;
            vehicles
                .par_iter()
                .with_min_len(16)
                .map(|v| {
                    let mut snap = v.snapshot();
                    snap.t = rel;
                    snap
                })
                .collect_into_vec(&mut snaps);
            out.fleet_rows(&snaps, clock)?;
            summary.rows += snaps.len() as u64;
        } else if rows && (k % mission.output_every == 0 || k == steps) {
            for (i, v) in vehicles.iter().enumerate() {
                let mut snap = v.snapshot();
                snap.t = rel;
                out.vehicle_row(i, &snap, clock)?;
                summary.rows += 1;
            }
        }
        if !trackers.is_empty() {
            let when = (k, rel, clock);
            check_obstacles(&mut trackers, &mut vehicles, &mut out, when, &mut summary)?;
        }
        if k % 4096 == 0 {
            progress(k, steps);
        }
    }
    progress(steps, steps);
    out.finish()?;
    if let Some(pw) = posts {
        pw.finish()?;
    }
    Ok(summary)
}

/// Vehicles [`run_fleet_recorded`] steps together through a block of
/// iterations: their per-step cache lines (~10 of 64 bytes each, ~160 KB
/// for 256 vehicles) stay in a core's L2 (2 MiB on the VM of
/// docs/performance-history.md) from one iteration of the block to the next.
pub const BLOCK_VEHICLES: usize = 256;

/// Most iterations of a block of [`run_fleet_recorded`]: the fleet is read
/// from memory once per block instead of once per iteration (100,000
/// vehicles, nothing recorded: 7 M vehicle-steps/s unblocked, ~11 M with
/// blocks of 32, docs/performance-history.md).
pub const BLOCK_STEPS: usize = 32;

/// Most bytes of records [`run_fleet_recorded`] keeps for one block
/// (`iterations × vehicles × record size`) of a fleet that fits the
/// caches; a fleet of more than 64 MiB may keep up to a quarter of its
/// own memory.
pub const BLOCK_RECORD_BYTES: usize = 32 << 20;

/// A fleet's records of a block may take up to 1/this of the fleet's own
/// memory (`vehicles × size_of::<Vehicle>()`), when that is more than
/// [`BLOCK_RECORD_BYTES`] and the fleet more than [`FLEET_CACHE_BYTES`]: 100,000 vehicles (326 MB) of 88-byte encounter
/// records get blocks of up to 9 iterations (81 MB of records) instead
/// of 3. A block reads the fleet's per-step cache lines from memory once
/// (a 4 KiB page and ~10 lines per vehicle, ~0.2–0.3 µs per vehicle on
/// the VM of docs/performance-history.md), so 20 steps in blocks of 3 read a fleet
/// too large for the caches 7 times where blocks of 7 read it 3 times;
/// each further iteration of a block keeps one more record per vehicle
/// in fresh memory (88 bytes, ~60 ns per vehicle to fault in at ~2.7 µs
/// per 4 KiB page). A share of the fleet keeps the records' memory
/// proportional to the fleet, and the number of times a run reads a
/// large fleet the same however large.
const FLEET_RECORD_SHARE: usize = 4;

/// A fleet of more bytes than this is taken not to fit the caches, and
/// gets [`FLEET_RECORD_SHARE`]: 10,000 vehicles (33 MB) keep blocks of 4
/// (in the two-build runs of docs/performance-history.md blocks of 9 measured 16–22 %
/// slower there three times, though the same binary with the block
/// forced to 4 or 9 measured the same).
const FLEET_CACHE_BYTES: usize = 64 << 20;

/// Bytes of records a block should fit in, so that the observer reads
/// them from a core's L2 (2 MiB on the VM of docs/performance-history.md) rather
/// than from memory: records written a whole block before they are read
/// cost more than the blocking saves for a fleet whose vehicles fit the
/// L3 (10,000 vehicles with encounters: 10.4 M vehicle-steps/s with
/// blocks of 32, 12.4 M with 2, 12.6 M unblocked).
const BLOCK_RECORD_CACHE_BYTES: usize = 2 << 20;

/// Fewest iterations of a block of [`run_fleet_recorded`] (unless
/// the records' memory allows fewer): a large fleet's memory traffic
/// falls with each (100,000 vehicles with encounters: 6.0 M
/// vehicle-steps/s with blocks of 2, 6.6 M with 4, 6.8 M with 32 on a
/// loaded machine).
const BLOCK_MIN_STEPS: usize = 4;

/// Iterations per block of [`run_fleet_recorded`] for records of
/// `per_step` bytes per iteration (every vehicle's) of a fleet of
/// `fleet_bytes` bytes: as many as fit [`BLOCK_RECORD_CACHE_BYTES`],
/// between [`BLOCK_MIN_STEPS`] and [`BLOCK_STEPS`], and never past
/// [`BLOCK_RECORD_BYTES`]; or, for a fleet larger than
/// [`FLEET_CACHE_BYTES`] and if more, as many as fit
/// [`FLEET_RECORD_SHARE`] of the fleet (at most [`BLOCK_STEPS`]). At
/// least 1.
fn block_steps(per_step: usize, fleet_bytes: usize) -> usize {
    let per_step = per_step.max(1);
    let cached = (BLOCK_RECORD_CACHE_BYTES / per_step)
        .clamp(BLOCK_MIN_STEPS, BLOCK_STEPS)
        .min(BLOCK_RECORD_BYTES / per_step);
    let shared = if fleet_bytes > FLEET_CACHE_BYTES {
        (fleet_bytes / FLEET_RECORD_SHARE / per_step).min(BLOCK_STEPS)
    } else {
        0
    };
    cached.max(shared).max(1)
}

/// Iterations per block for a run of `steps` (at most `block`): the run
/// cut into as few blocks as `block` allows, of as equal lengths as can
/// be (20 steps in blocks of at most 9: 7, 7, 6), so that no more rows
/// of records are kept than the longest block needs (at least 1).
fn balanced_block(block: usize, steps: u64) -> usize {
    let block = block.max(1) as u64;
    let steps = steps.max(1);
    let blocks = steps.div_ceil(block);
    steps.div_ceil(blocks) as usize
}

/// Step the vehicles `vs` (one chunk of the fleet) through the iterations
/// at vehicle clocks `clocks` (s), writing `record` of each after each
/// iteration `j` into `rows_a[j]` and `rows_b[j]` (one slot per vehicle of
/// the chunk).
fn step_block<A, B>(
    vs: &mut [Vehicle],
    clocks: &[f64],
    rows_a: &mut [&mut [A]],
    rows_b: &mut [&mut [B]],
    record: &(impl Fn(&Vehicle) -> (A, B) + Sync),
) {
    for ((&clock, row_a), row_b) in clocks.iter().zip(rows_a.iter_mut()).zip(rows_b.iter_mut()) {
        for i in 0..vs.len() {
            if let Some(next) = vs.get(i + PREFETCH_AHEAD) {
                next.prefetch_step();
            }
            vs[i].step(clock);
            let (a, b) = record(&vs[i]);
            row_a[i] = a;
            row_b[i] = b;
        }
    }
}

/// `buf`'s first `steps` rows of `n` slots cut into the pieces of each
/// chunk of [`BLOCK_VEHICLES`] vehicles: `parts[c][j]` is chunk `c`'s
/// slots in row `j`.
fn chunk_rows<T>(buf: &mut [T], n: usize, steps: usize) -> Vec<Vec<&mut [T]>> {
    let mut parts: Vec<Vec<&mut [T]>> = (0..n.div_ceil(BLOCK_VEHICLES))
        .map(|_| Vec::with_capacity(steps))
        .collect();
    for row in buf[..steps * n].chunks_mut(n) {
        for (c, piece) in row.chunks_mut(BLOCK_VEHICLES).enumerate() {
            parts[c].push(piece);
        }
    }
    parts
}

/// [`run_fleet`] for a caller that needs, after each iteration, only a
/// record of each vehicle (`record(&vehicle)`, e.g. its pose for
/// `encounter::observe_poses`): `on_step(k, t, records)` gets
/// `records[i]` of vehicle `i` after iteration `k` (mission time `t`, s),
/// for `k` = 0, 1, …, steps in order; rows, posts log, summary and
/// progress as [`run_fleet`]. See [`run_fleet_split`], which this is
/// with nothing in the second array.
pub fn run_fleet_recorded<O: Output, R: Copy + Send + Sync>(
    mission: &Mission,
    out: O,
    posts: Option<&mut dyn Write>,
    progress: impl FnMut(u64, u64),
    record: impl Fn(&Vehicle) -> R + Sync,
    mut on_step: impl FnMut(u64, f64, &[R]),
) -> std::io::Result<Summary> {
    run_fleet_split(
        mission,
        out,
        posts,
        progress,
        |v| (record(v), ()),
        |k, t, recs, _| on_step(k, t, recs),
    )
}

/// Each vehicle's record split in two, in fleet order: `a` and `b` are
/// cleared, then hold `record(v)`'s two halves (e.g. positions and
/// motions for the encounter tracker).
pub fn record_split<A, B>(
    vs: &[Vehicle],
    record: impl Fn(&Vehicle) -> (A, B),
    a: &mut Vec<A>,
    b: &mut Vec<B>,
) {
    a.clear();
    b.clear();
    for v in vs {
        let (x, y) = record(v);
        a.push(x);
        b.push(y);
    }
}

/// [`run_fleet_recorded`] with each vehicle's record in two parts kept in
/// two arrays: `record(&vehicle)` gives `(a, b)`, and `on_step(k, t, a,
/// b)` gets `a[i]` and `b[i]` of vehicle `i` after iteration `k`. An
/// observer that reads one part of every vehicle and the other of a few
/// (the encounter tracker: positions of all, motions of close pairs)
/// reads a compact array.
///
/// Vehicles do not interact: each one's results depend only on its own
/// sequence of posts and steps. So when nothing is needed from the
/// vehicles between iterations but the records (`out` takes no rows and no
/// publications, no posts log), the fleet steps in blocks: a chunk of
/// [`BLOCK_VEHICLES`] vehicles runs through up to [`BLOCK_STEPS`]
/// iterations (fewer for large records: the records of a block stay
/// within [`BLOCK_RECORD_BYTES`] or, for a fleet over 64 MiB, a quarter
/// of its own memory, whichever is more, and within a core's L2 when at least 4
/// iterations allow; the run cut into blocks of nearly equal lengths),
/// then the next chunk; a block ends before any
/// iteration a post is due at, and the posts are delivered between blocks,
/// in file order, as [`run_fleet`] does. Then `on_step` runs once per
/// iteration of the block, in order. Every vehicle gets the same calls
/// with the same clocks as in [`run_fleet`], so records, events and
/// summaries are identical; a fleet too large for the caches is read from
/// memory once per block instead of once per iteration. The records'
/// memory (a block's worth) is made with the vehicles, before the first
/// `on_step`. Otherwise it runs
/// [`run_fleet`], recording every vehicle after each iteration.
pub fn run_fleet_split<O, A, B>(
    mission: &Mission,
    mut out: O,
    posts: Option<&mut dyn Write>,
    mut progress: impl FnMut(u64, u64),
    record: impl Fn(&Vehicle) -> (A, B) + Sync,
    mut on_step: impl FnMut(u64, f64, &[A], &[B]),
) -> std::io::Result<Summary>
where
    O: Output,
    A: Copy + Send + Sync,
    B: Copy + Send + Sync,
{
    // Obstacles are checked between iterations: the plain loop.
    let obstacles = (0..mission.vehicle_count()).any(|i| mission.vehicle_at(i).obstacles.is_some());
    if posts.is_some() || out.wants_rows() || out.wants_publications() || obstacles {
        let (mut recs_a, mut recs_b): (Vec<A>, Vec<B>) = (Vec::new(), Vec::new());
        return run_fleet(mission, out, posts, progress, |k, t, vs| {
            record_split(vs, &record, &mut recs_a, &mut recs_b);
            on_step(k, t, &recs_a, &recs_b);
        });
    }
    let n = mission.vehicle_count();
    let mut vehicles = make_fleet(mission);
    let mut summary = Summary::default();
    let steps = mission.steps;
    let block = block_steps(
        n.saturating_mul(std::mem::size_of::<(A, B)>()),
        n.saturating_mul(std::mem::size_of::<Vehicle>()),
    );
    let block = balanced_block(block, steps);
    // The records of a block, made with the fleet (memory is part of the
    // set-up, as the vehicles' is): row 0 holds the records before the
    // first iteration, the other rows copies of them (overwritten before
    // they are read).
    let (mut buf_a, mut buf_b): (Vec<A>, Vec<B>) =
        (Vec::with_capacity(block * n), Vec::with_capacity(block * n));
    for v in &vehicles {
        let (a, b) = record(v);
        buf_a.push(a);
        buf_b.push(b);
    }
    if let (Some(&a), Some(&b)) = (buf_a.first(), buf_b.first()) {
        buf_a.resize(block * n, a);
        buf_b.resize(block * n, b);
    }
    on_step(0, 0.0, &buf_a[..n], &buf_b[..n]);

    let order = post_order(mission);
    let mut next = 0;
    let mut batch: Vec<usize> = Vec::new();
    let mut times = RelTimes::new(mission);
    let parallel = vehicles.len() >= PARALLEL_FLEET && rayon::current_num_threads() > 1;
    // Mission times of the block's iterations, s, and the one computed
    // past a block's end (a post is due there).
    let mut rels: Vec<f64> = Vec::with_capacity(block);
    let mut clocks: Vec<f64> = Vec::with_capacity(block);
    let mut pending: Option<f64> = None;
    let mut k = 1;
    while k <= steps {
        let rel = pending.take().unwrap_or_else(|| times.next_rel());
        let clock = mission.start_time + rel;
        due_posts(mission, &order, &mut next, rel, &mut batch);
        deliver(
            mission,
            &batch,
            &mut vehicles,
            &mut out,
            k,
            clock,
            &mut summary.dropped,
        )?;
        rels.clear();
        rels.push(rel);
        while rels.len() < block && k + (rels.len() as u64) <= steps {
            let r = times.next_rel();
            if next < order.len() && mission.posts[order[next]].t <= r + DUE_EPS_S {
                pending = Some(r);
                break;
            }
            rels.push(r);
        }
        clocks.clear();
        clocks.extend(rels.iter().map(|r| mission.start_time + r));
        if n > 0 {
            let mut parts_a = chunk_rows(&mut buf_a, n, rels.len());
            let mut parts_b = chunk_rows(&mut buf_b, n, rels.len());
            if parallel {
                use rayon::prelude::*;
                vehicles
                    .par_chunks_mut(BLOCK_VEHICLES)
                    .zip(parts_a.par_iter_mut())
                    .zip(parts_b.par_iter_mut())
                    .for_each(|((vs, ra), rb)| step_block(vs, &clocks, ra, rb, &record));
            } else {
                for ((vs, ra), rb) in vehicles
                    .chunks_mut(BLOCK_VEHICLES)
                    .zip(parts_a.iter_mut())
                    .zip(parts_b.iter_mut())
                {
                    step_block(vs, &clocks, ra, rb, &record);
                }
            }
        }
        for (j, &r) in rels.iter().enumerate() {
            let kj = k + j as u64;
            let rows = j * n..(j + 1) * n;
            on_step(kj, r, &buf_a[rows.clone()], &buf_b[rows]);
            if kj % 4096 == 0 {
                progress(kj, steps);
            }
        }
        k += rels.len() as u64;
    }
    progress(steps, steps);
    out.finish()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks: 32 iterations when nothing is recorded, as many as fit the
    /// L2 for small fleets, at least 4, and the records of a block never
    /// past 32 MiB or (a fleet over 64 MiB) a quarter of the fleet's
    /// memory, whichever is more, unless one iteration's alone are larger.
    #[test]
    fn block_steps_bound_the_records() {
        // 3,264-byte vehicles, 88-byte records.
        let fleet = |n: usize| n * 3264;
        assert_eq!(block_steps(0, fleet(1000)), BLOCK_STEPS);
        assert_eq!(block_steps(1000 * 88, fleet(1000)), 23);
        // 32.6 MB of vehicles: taken to fit the caches, blocks of 4.
        assert_eq!(block_steps(10_000 * 88, fleet(10_000)), 4);
        assert_eq!(block_steps(100_000 * 88, fleet(100_000)), 9);
        // Without the fleet's share: the 32 MiB bound.
        assert_eq!(block_steps(100_000 * 88, 0), 3);
        assert_eq!(block_steps(1_000_000 * 88, 0), 1);
        for n in [1usize, 10, 1000, 100_000, 381_300, 1 << 20] {
            for size in [8usize, 32, 88] {
                let per_step = n * size;
                for fleet_bytes in [0, fleet(n)] {
                    let b = block_steps(per_step, fleet_bytes);
                    assert!((1..=BLOCK_STEPS).contains(&b));
                    let bound = if fleet_bytes > FLEET_CACHE_BYTES {
                        BLOCK_RECORD_BYTES.max(fleet_bytes / FLEET_RECORD_SHARE)
                    } else {
                        BLOCK_RECORD_BYTES
                    };
                    assert!(b == 1 || b * per_step <= bound, "{n} x {size}");
                }
            }
        }
    }

    /// A run cut into as few blocks as the longest allows, of nearly equal
    /// lengths; never longer than the run.
    #[test]
    fn balanced_blocks() {
        assert_eq!(balanced_block(9, 20), 7);
        assert_eq!(balanced_block(3, 20), 3);
        assert_eq!(balanced_block(32, 20), 20);
        assert_eq!(balanced_block(9, 100), 9);
        assert_eq!(balanced_block(4, 200), 4);
        assert_eq!(balanced_block(32, 0), 1);
        assert_eq!(balanced_block(0, 5), 1);
        for block in 1..40usize {
            for steps in 1..200u64 {
                let b = balanced_block(block, steps);
                assert!(b >= 1 && b <= block && b as u64 <= steps);
                assert_eq!(
                    steps.div_ceil(b as u64),
                    steps.div_ceil(block as u64),
                    "{block} {steps}"
                );
            }
        }
    }
}
