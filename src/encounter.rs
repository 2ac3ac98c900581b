//! Encounters between vehicles (docs/fleets.md): the closest point of
//! approach (CPA) of a pair, a spatial grid that finds the pairs within a
//! range in O(n) for sparse fleets, and a tracker that turns positions over
//! time into near-miss, collision and clear events.
//!
//! Sans-IO: positions and velocities in, events out. Frame: x east, y
//! north, m; headings and bearings in degrees, 0 = north, clockwise.
use std::collections::HashMap;

use nalgebra::Vector2;

use crate::mission::EncounterRanges;

/// A vehicle's horizontal motion at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Track {
    /// Position (east, north), m.
    pub pos: Vector2<f64>,
    /// Velocity over ground (east, north), m/s.
    pub vel: Vector2<f64>,
}

impl Track {
    /// A track from a position (m), a speed over ground (m/s) and a
    /// heading over ground (degrees, 0 = north, clockwise).
    pub fn from_sog_hog(x: f64, y: f64, sog: f64, hog_deg: f64) -> Track {
        let (s, c) = hog_deg.to_radians().sin_cos();
        Track {
            pos: Vector2::new(x, y),
            vel: Vector2::new(sog * s, sog * c),
        }
    }
}

/// The closest point of approach of two tracks moving at constant velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cpa {
    /// Time from now to the CPA, s (0 if the pair is already separating
    /// or not moving relative to each other).
    pub time: f64,
    /// Range at the CPA, m.
    pub range: f64,
    /// Bearing from the first vehicle to the second at the CPA, degrees in
    /// [0, 360), 0 = north, clockwise.
    pub bearing: f64,
}

/// The CPA of `a` and `b`: with relative position `r = b − a` and relative
/// velocity `v = vb − va`, the range `|r + v·t|` is least at
/// `t* = −(r·v)/(v·v)`, taken as 0 when that is in the past or `v = 0`.
pub fn cpa(a: &Track, b: &Track) -> Cpa {
    let r = b.pos - a.pos;
    let v = b.vel - a.vel;
    let vv = v.dot(&v);
    let time = if vv > 0.0 {
        (-r.dot(&v) / vv).max(0.0)
    } else {
        0.0
    };
    let d = r + v * time;
    Cpa {
        time,
        range: d.norm(),
        bearing: bearing_deg(&d),
    }
}

/// Compass bearing of a vector, degrees in [0, 360) (0 = north, clockwise).
pub fn bearing_deg(d: &Vector2<f64>) -> f64 {
    let b = d.x.atan2(d.y).to_degrees();
    if b < 0.0 {
        b + 360.0
    } else {
        b
    }
}

/// A uniform grid of square cells for finding pairs within a range, kept
/// as one flat array of `(cell, vehicle)` sorted by cell (row by row).
/// With the cell size at least the range, the pairs of a point are in its
/// own cell and the 8 around it; each pair is looked at from one side only
/// (the cell itself, the next cell of its row and the 3 cells of the next
/// row, found by a second pointer that only moves forward), so a sparse
/// fleet costs O(n) per query. The array is kept between queries in the
/// last order: vehicles rarely change cells from one step to the next, so
/// re-sorting it is an insertion sort of a nearly sorted array, O(n), and
/// nothing is allocated once the fleet's size is known.
#[derive(Debug, Default)]
pub struct Grid {
    /// `(cell key, vehicle index)`, a permutation of the vehicles, sorted
    /// by key after a query.
    entries: Vec<Entry>,
}

/// A fast hasher for pair keys (a multiply–xor mix; the keys are not
/// chosen by an adversary in a way that matters: a collision only costs
/// time, and the pairs are bounded by the near-miss range).
#[derive(Debug, Default, Clone, Copy)]
pub struct CellHash;

/// The [`CellHash`] state.
#[derive(Debug, Default, Clone, Copy)]
pub struct CellHasher(u64);

impl std::hash::BuildHasher for CellHash {
    type Hasher = CellHasher;
    fn build_hasher(&self) -> CellHasher {
        CellHasher(0)
    }
}

impl std::hash::Hasher for CellHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z ^ (z >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, v: usize) {
        self.write_i64(v as i64);
    }
    fn write_i64(&mut self, v: i64) {
        self.0 = (self.0.rotate_left(29) ^ v as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
}

/// The key of a non-finite position: sorted after every cell, never scanned.
const NOWHERE: u64 = u64::MAX;

/// One step up a row in a cell key (the row is the high 32 bits).
const ROW: u64 = 1 << 32;

/// The cell key of `p` (m) with `inv` = 1 / cell size (1/m): row (north)
/// in the high 32 bits, column (east) in the low 32, each biased so that
/// the key order is the order of the signed cell numbers. A cell number is
/// the product truncated toward zero (no `floor` call: cell 0 is twice as
/// wide, which only makes it larger), clamped to `i32::MIN + 1 ..=
/// i32::MAX - 2` so that the neighbours' keys (±1 in both) neither
/// overflow nor reach [`NOWHERE`]. Cells that are only larger keep every
/// pair within the cell size in the same or neighbouring cells.
#[inline]
fn cell_key(p: &Vector2<f64>, inv: f64) -> u64 {
    if !(p.x.is_finite() && p.y.is_finite()) {
        return NOWHERE;
    }
    let cell = |v: f64| {
        let c = ((v * inv) as i32).clamp(i32::MIN + 1, i32::MAX - 2);
        (c as u32 ^ (1 << 31)) as u64
    };
    (cell(p.y) << 32) | cell(p.x)
}

/// One vehicle in the grid: its cell key, index and position (m), kept
/// together so that the scan reads one array in order.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u64,
    idx: u32,
    pos: Vector2<f64>,
}

/// Fleets of at least this many vehicles get their cell keys computed in
/// parallel (rayon) and their cells scanned in parallel; smaller ones on
/// the calling thread (a thread hand-off costs more).
const PARALLEL_GRID: usize = 512;

/// Vehicles per parallel task.
const GRID_CHUNK: usize = 256;

impl Grid {
    /// An empty grid.
    pub fn new() -> Grid {
        Grid::default()
    }

    /// Every pair `(i, j)`, `i < j`, of `positions` whose distance is at
    /// most `range` (m), sorted, into `out` (cleared first). Non-finite
    /// positions are skipped.
    pub fn pairs_within(
        &mut self,
        positions: &[Vector2<f64>],
        range: f64,
        out: &mut Vec<(usize, usize)>,
    ) {
        self.pairs_within_by(positions.len(), |i| positions[i], range, out)
    }

    /// [`Grid::pairs_within`] for `n` vehicles whose positions (m) `pos(i)`
    /// gives (asked once per vehicle per query, from several threads for
    /// large fleets).
    pub fn pairs_within_by(
        &mut self,
        n: usize,
        pos: impl Fn(usize) -> Vector2<f64> + Sync,
        range: f64,
        out: &mut Vec<(usize, usize)>,
    ) {
        out.clear();
        if !(range.is_finite() && range > 0.0) {
            return;
        }
        if self.entries.len() != n {
            self.entries.clear();
            self.entries.extend((0..n as u32).map(|idx| Entry {
                key: 0,
                idx,
                pos: Vector2::zeros(),
            }));
        }
        // Cells a little wider than the range, so that rounding in the
        // product cannot put two points within the range two cells apart
        // (capped: a subnormal range would give an infinite inverse).
        let inv = (1.0 / (range * (1.0 + 1e-9))).min(f64::MAX);
        let fill = |part: &mut [Entry]| {
            for e in part {
                e.pos = pos(e.idx as usize);
                e.key = cell_key(&e.pos, inv);
            }
        };
        let parallel = n >= PARALLEL_GRID;
        if parallel {
            use rayon::prelude::*;
            self.entries.par_chunks_mut(GRID_CHUNK).for_each(fill);
        } else {
            fill(&mut self.entries);
        }
        sort_nearly_sorted(&mut self.entries);
        let e = &self.entries[..];
        // Non-finite positions are last.
        let end = e.partition_point(|x| x.key != NOWHERE);
        let r2 = range * range;
        if parallel && end >= PARALLEL_GRID {
            use rayon::prelude::*;
            // Slices of whole cells, scanned each on its own; the pairs
            // are sorted at the end, so their order here does not matter.
            let mut cuts = vec![0];
            let mut at = GRID_CHUNK;
            while at < end {
                let key = e[at].key;
                at += e[at..end].partition_point(|x| x.key == key);
                if at < end {
                    cuts.push(at);
                }
                at += GRID_CHUNK;
            }
            cuts.push(end);
            let parts: Vec<Vec<(usize, usize)>> = cuts
                .par_windows(2)
                .map(|w| {
                    let mut o = Vec::new();
                    scan(&e[..end], w[0], w[1], r2, &mut o);
                    o
                })
                .collect();
            for p in parts {
                out.extend_from_slice(&p);
            }
        } else {
            scan(&e[..end], 0, end, r2, out);
        }
        out.sort_unstable();
    }
}

/// The pairs of the cells that start in `e[from..to]` (`from` and `to` at
/// cell starts; `e` sorted by key, finite positions only): within each
/// cell, with the next cell of its row, and with the three cells of the
/// next row, found by a pointer that only moves forward.
fn scan(e: &[Entry], from: usize, to: usize, r2: f64, out: &mut Vec<(usize, usize)>) {
    let end = e.len();
    let run_end = |mut j: usize, key: u64| {
        while j < end && e[j].key == key {
            j += 1;
        }
        j
    };
    let mut up = None;
    let mut i = from;
    while i < to {
        let key = e[i].key;
        let j = run_end(i + 1, key);
        let here = &e[i..j];
        for (n, a) in here.iter().enumerate() {
            for b in &here[n + 1..] {
                push_if_near(a, b, r2, out);
            }
        }
        // The next cell of the row.
        if j < end && e[j].key == key + 1 {
            cross(here, &e[j..run_end(j + 1, key + 1)], r2, out);
        }
        // The three cells of the next row: keys key + ROW - 1 ..= key + ROW + 1.
        let lo = key + ROW - 1;
        let mut u = match up {
            Some(u) => u,
            None => e.partition_point(|x| x.key < lo),
        };
        while u < end && e[u].key < lo {
            u += 1;
        }
        up = Some(u);
        let mut k = u;
        while k < end && e[k].key <= lo + 2 {
            k += 1;
        }
        if k > u {
            cross(here, &e[u..k], r2, out);
        }
        i = j;
    }
}

/// Sort by key: an insertion sort, O(n) for the nearly sorted arrays of
/// one step after another; if it has to move too far (a new or shuffled
/// fleet) it hands over to the standard sort.
fn sort_nearly_sorted(v: &mut [Entry]) {
    let mut budget = 8 * v.len() + 64;
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].key > x.key {
            if budget == 0 {
                v[j] = x;
                v.sort_unstable_by_key(|e| e.key);
                return;
            }
            budget -= 1;
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

fn cross(a: &[Entry], b: &[Entry], r2: f64, out: &mut Vec<(usize, usize)>) {
    for x in a {
        for y in b {
            push_if_near(x, y, r2, out);
        }
    }
}

#[inline]
fn push_if_near(a: &Entry, b: &Entry, r2: f64, out: &mut Vec<(usize, usize)>) {
    if (b.pos - a.pos).norm_squared() <= r2 {
        let (i, j) = (a.idx as usize, b.idx as usize);
        out.push((i.min(j), i.max(j)));
    }
}

/// The pairs within a range of a fleet that moves a little from one query
/// to the next (a Verlet list): the [`Grid`] finds the candidate pairs
/// within `range + skin` (the skin is the range) and remembers where every
/// vehicle was; while no vehicle has moved more than half the skin since,
/// every pair within `range` now is among the candidates (triangle
/// inequality), so a query only checks each vehicle's displacement and the
/// candidates' distances: O(n) with a small constant, no grid. When a
/// vehicle has moved further, is not finite or is very far out (more than
/// [`NearPairs::FAR`] ranges from the origin in x or y, where rounding
/// could matter) the candidates are
/// rebuilt (or, for the last two, the grid answers directly). The answer
/// is always exactly [`Grid::pairs_within`]'s.
#[derive(Debug, Default)]
pub struct NearPairs {
    grid: Grid,
    /// Positions at the last build, m.
    built: Vec<Vector2<f64>>,
    /// Positions now, m (read once per query, then from here).
    now: Vec<Vector2<f64>>,
    /// Pairs within `built_range` of each other at the last build, sorted.
    candidates: Vec<(usize, usize)>,
    /// `range + skin` of the last build, m (0: no valid build).
    built_range: f64,
    /// The range the candidates are for, m.
    range: f64,
}

impl NearPairs {
    /// Positions further out than this many ranges (in x or y) make a
    /// query go to the grid directly.
    pub const FAR: f64 = 1e6;

    /// Empty.
    pub fn new() -> NearPairs {
        NearPairs::default()
    }

    /// Every pair `(i, j)`, `i < j`, of the `n` vehicles whose positions
    /// (m) `pos(i)` gives that are at most `range` (m) apart, sorted, into
    /// `out` (cleared first). Non-finite positions are in no pair.
    pub fn pairs_within_by(
        &mut self,
        n: usize,
        pos: impl Fn(usize) -> Vector2<f64> + Sync,
        range: f64,
        out: &mut Vec<(usize, usize)>,
    ) {
        out.clear();
        let skin = range;
        let outer = range + skin;
        if !(range.is_finite() && range > 0.0 && outer.is_finite()) {
            self.built_range = 0.0;
            return self.grid.pairs_within_by(n, pos, range, out);
        }
        // Moved at most half the skin (less a sliver for rounding).
        let half = 0.5 * skin * (1.0 - 1e-6);
        let half2 = half * half;
        let far_out = Self::FAR * range;
        let fresh = self.built_range == outer && self.range == range && self.built.len() == n;
        self.now.clear();
        self.now.extend((0..n).map(&pos));
        // (Within half the skin of a build that was within `far_out`: no
        // need to look at how far out.) NaN fails the test.
        let fresh = fresh
            && self
                .now
                .iter()
                .zip(&self.built)
                .all(|(p, b)| (p - b).norm_squared() <= half2);
        let now = &self.now[..];
        if !fresh {
            self.built.clear();
            self.built.extend_from_slice(now);
            let far = !now
                .iter()
                .all(|p| p.x.abs() <= far_out && p.y.abs() <= far_out);
            if far {
                // Non-finite or far out: the grid, every time, until
                // the fleet is back.
                self.built_range = 0.0;
                return self.grid.pairs_within_by(n, |i| now[i], range, out);
            }
            self.grid
                .pairs_within_by(n, |i| now[i], outer, &mut self.candidates);
            self.built_range = outer;
            self.range = range;
        }
        let r2 = range * range;
        out.extend(
            self.candidates
                .iter()
                .filter(|&&(a, b)| (now[b] - now[a]).norm_squared() <= r2),
        );
    }
}

/// The O(n²) reference for [`Grid::pairs_within`]: every pair at most
/// `range` apart, sorted.
pub fn pairs_within_brute(positions: &[Vector2<f64>], range: f64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let r2 = range * range;
    for i in 0..positions.len() {
        for j in i + 1..positions.len() {
            if (positions[j] - positions[i]).norm_squared() <= r2 {
                out.push((i, j));
            }
        }
    }
    out
}

/// What happened to a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The pair came within the near-miss range.
    NearMiss,
    /// The pair came within the collision range.
    Collision,
    /// The pair left the near-miss range; `range` and `t` of the event
    /// are the least range seen during the encounter and when.
    Clear,
}

impl EventKind {
    /// The name written in `encounters.csv` and `ENCOUNTER` messages.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::NearMiss => "near_miss",
            EventKind::Collision => "collision",
            EventKind::Clear => "clear",
        }
    }
}

/// One encounter event between vehicles `a < b` (indices in the mission).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    /// Mission time, s (for `Clear`: when the range was least).
    pub t: f64,
    /// First vehicle.
    pub a: usize,
    /// Second vehicle.
    pub b: usize,
    /// What happened.
    pub kind: EventKind,
    /// Range then, m (for `Clear`: the least range of the encounter).
    pub range: f64,
    /// The CPA predicted from the motion at the event (constant velocity).
    pub cpa: Cpa,
}

#[derive(Debug, Clone, Copy)]
struct Active {
    min_range: f64,
    t_min: f64,
    cpa_at_min: Cpa,
    collided: bool,
    /// The last observation (count) the pair was within the range.
    seen: u64,
}

/// Follows every pair over time and reports encounters (see [`EventKind`]).
#[derive(Debug)]
pub struct Tracker {
    ranges: EncounterRanges,
    grid: NearPairs,
    pairs: Vec<(usize, usize)>,
    positions: Vec<Vector2<f64>>,
    active: HashMap<(usize, usize), Active, CellHash>,
    /// Observations so far.
    step: u64,
    /// Pairs that left the range this observation (kept allocated).
    gone: Vec<((usize, usize), Active)>,
    /// Number of near-miss events so far.
    pub near_misses: u64,
    /// Number of collision events so far.
    pub collisions: u64,
    /// Least range between any two vehicles seen within the near-miss
    /// range, m, with its time, s (None: no pair came that close).
    pub min_range: Option<(f64, f64)>,
}

impl Tracker {
    /// A tracker for these ranges.
    pub fn new(ranges: EncounterRanges) -> Tracker {
        Tracker {
            ranges,
            grid: NearPairs::new(),
            pairs: Vec::new(),
            positions: Vec::new(),
            active: HashMap::default(),
            step: 0,
            gone: Vec::new(),
            near_misses: 0,
            collisions: 0,
            min_range: None,
        }
    }

    /// Look at the fleet at mission time `t` (s). `track(i)` gives vehicle
    /// `i`'s motion (it is asked for velocities only for vehicles in a
    /// close pair); `pos` holds every vehicle's position. Events go to
    /// `emit` in a fixed order (by pair, `Clear` after the others).
    pub fn observe(
        &mut self,
        t: f64,
        pos: impl ExactSizeIterator<Item = Vector2<f64>>,
        track: impl Fn(usize) -> Track,
        emit: impl FnMut(Event),
    ) {
        let mut positions = std::mem::take(&mut self.positions);
        positions.clear();
        positions.extend(pos);
        self.observe_with(t, positions.len(), |i| positions[i], track, emit);
        self.positions = positions;
    }

    /// [`Tracker::observe`] with `n` vehicles whose positions (m) `pos(i)`
    /// gives (asked from several threads for large fleets, see
    /// [`Grid::pairs_within_by`]).
    pub fn observe_with(
        &mut self,
        t: f64,
        n: usize,
        pos: impl Fn(usize) -> Vector2<f64> + Sync,
        track: impl Fn(usize) -> Track,
        mut emit: impl FnMut(Event),
    ) {
        self.grid
            .pairs_within_by(n, &pos, self.ranges.near_miss, &mut self.pairs);
        self.step += 1;
        let step = self.step;
        for &(a, b) in &self.pairs {
            let range = (pos(b) - pos(a)).norm();
            if self.min_range.is_none_or(|(m, _)| range < m) {
                self.min_range = Some((range, t));
            }
            // The CPA (two sines and cosines, an arctangent) only when an
            // event or a new least range needs it: the same values, less
            // work for pairs that stay close.
            let collision = self.ranges.collision;
            let cpa_of = |a: usize, b: usize| cpa(&track(a), &track(b));
            match self.active.get_mut(&(a, b)) {
                None => {
                    let c = cpa_of(a, b);
                    self.near_misses += 1;
                    emit(Event {
                        t,
                        a,
                        b,
                        kind: EventKind::NearMiss,
                        range,
                        cpa: c,
                    });
                    let collided = range <= collision;
                    self.active.insert(
                        (a, b),
                        Active {
                            min_range: range,
                            t_min: t,
                            cpa_at_min: c,
                            collided,
                            seen: step,
                        },
                    );
                    if collided {
                        self.collisions += 1;
                        emit(Event {
                            t,
                            a,
                            b,
                            kind: EventKind::Collision,
                            range,
                            cpa: c,
                        });
                    }
                }
                Some(st) => {
                    st.seen = step;
                    let least = range < st.min_range;
                    let collides = range <= collision && !st.collided;
                    if least || collides {
                        let c = cpa_of(a, b);
                        if least {
                            st.min_range = range;
                            st.t_min = t;
                            st.cpa_at_min = c;
                        }
                        if collides {
                            st.collided = true;
                            self.collisions += 1;
                            emit(Event {
                                t,
                                a,
                                b,
                                kind: EventKind::Collision,
                                range,
                                cpa: c,
                            });
                        }
                    }
                }
            }
        }
        if self.active.len() > self.pairs.len() {
            // Pairs that left the near-miss range, in pair order.
            let gone = &mut self.gone;
            gone.clear();
            self.active.retain(|&key, st| {
                let still = st.seen == step;
                if !still {
                    gone.push((key, *st));
                }
                still
            });
            gone.sort_unstable_by_key(|g| g.0);
            for &(key, st) in gone.iter() {
                emit(Event {
                    t: st.t_min,
                    a: key.0,
                    b: key.1,
                    kind: EventKind::Clear,
                    range: st.min_range,
                    cpa: st.cpa_at_min,
                });
            }
        }
    }
}

/// [`Tracker::observe`] on a replayed fleet at mission time `t` (s): the
/// vehicles' positions (`x`, `y`), speeds and headings over ground.
pub fn observe_fleet(
    tracker: &mut Tracker,
    t: f64,
    vehicles: &[crate::model::Vehicle],
    emit: impl FnMut(Event),
) {
    tracker.observe_with(
        t,
        vehicles.len(),
        |i| {
            let g = vehicles[i].nav();
            Vector2::new(g.x, g.y)
        },
        |i| Pose::of(&vehicles[i]).track(),
        emit,
    );
}

/// What [`Tracker`] needs of one vehicle at one moment (88 bytes, where
/// the vehicle itself is several kilobytes; the blocked fleet replay keeps
/// one per vehicle per iteration of a block). The heading over ground is
/// kept as its inputs and computed only for the vehicles of a close pair,
/// as [`observe_fleet`] does (about 130 instructions each).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pose {
    /// East position, m.
    pub x: f64,
    /// North position, m.
    pub y: f64,
    /// Speed over ground, m/s.
    pub sog: f64,
    hog: crate::model::position::HogInputs,
}

impl Pose {
    /// The pose of `v`'s navigation record.
    pub fn of(v: &crate::model::Vehicle) -> Pose {
        let g = v.nav();
        Pose {
            x: g.x,
            y: g.y,
            sog: g.sog,
            hog: g.hog_inputs(),
        }
    }

    /// Heading over ground, degrees (the record's [`crate::model::Record::hog`]).
    pub fn hog(&self) -> f64 {
        self.hog.value()
    }

    /// The position, m.
    pub fn position(&self) -> Vector2<f64> {
        Vector2::new(self.x, self.y)
    }

    /// The motion, for [`cpa`].
    pub fn track(&self) -> Track {
        Track::from_sog_hog(self.x, self.y, self.sog, self.hog())
    }
}

impl Pose {
    /// `v`'s pose in two parts: its position, m, and its [`Motion`] (the
    /// arrays of [`observe_split`]).
    pub fn split(v: &crate::model::Vehicle) -> (Vector2<f64>, Motion) {
        let g = v.nav();
        (
            Vector2::new(g.x, g.y),
            Motion {
                sog: g.sog,
                hog: g.hog_inputs(),
            },
        )
    }
}

/// A [`Pose`] without its position (72 bytes): what [`Tracker`] asks only
/// of the vehicles of a close pair.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Motion {
    /// Speed over ground, m/s.
    pub sog: f64,
    hog: crate::model::position::HogInputs,
}

impl Motion {
    /// Heading over ground, degrees (the record's [`crate::model::Record::hog`]).
    pub fn hog(&self) -> f64 {
        self.hog.value()
    }
}

impl AsRef<Motion> for Motion {
    fn as_ref(&self) -> &Motion {
        self
    }
}

/// [`observe_fleet`] on the fleet's poses in two arrays (see
/// [`Pose::split`]): `positions[i]` (m) and `motions[i]` (or a larger
/// record holding it) of vehicle `i`. The same events as
/// [`observe_poses`]; the tracker scans the 16-byte positions of every
/// vehicle and reads motions only for close pairs.
pub fn observe_split<M: AsRef<Motion> + Sync>(
    tracker: &mut Tracker,
    t: f64,
    positions: &[Vector2<f64>],
    motions: &[M],
    emit: impl FnMut(Event),
) {
    tracker.observe_with(
        t,
        positions.len(),
        |i| positions[i],
        |i| {
            let (p, m) = (positions[i], motions[i].as_ref());
            Track::from_sog_hog(p.x, p.y, m.sog, m.hog())
        },
        emit,
    );
}

impl AsRef<Pose> for Pose {
    fn as_ref(&self) -> &Pose {
        self
    }
}

/// [`observe_fleet`] on the fleet's poses (`poses[i]` of vehicle `i`, see
/// [`Pose::of`], or a larger record holding it): the same events.
pub fn observe_poses<P: AsRef<Pose> + Sync>(
    tracker: &mut Tracker,
    t: f64,
    poses: &[P],
    emit: impl FnMut(Event),
) {
    tracker.observe_with(
        t,
        poses.len(),
        |i| poses[i].as_ref().position(),
        |i| poses[i].as_ref().track(),
        emit,
    );
}

/// The `encounters.csv` header.
pub const CSV_HEADER: &str = "t,event,a,b,range,cpa_time,cpa_range,cpa_bearing";

/// Append one `encounters.csv` line (names of the vehicles in `names`).
pub fn push_csv(line: &mut Vec<u8>, e: &Event, names: &[String]) {
    use crate::replay::csv::push_field;
    use crate::replay::csv::{push_f64, round_to_microsecond};
    push_f64(line, round_to_microsecond(e.t));
    line.push(b',');
    line.extend_from_slice(e.kind.name().as_bytes());
    for i in [e.a, e.b] {
        line.push(b',');
        push_field(line, names.get(i).map_or("", String::as_str));
    }
    for v in [e.range, e.cpa.time, e.cpa.range, e.cpa.bearing] {
        line.push(b',');
        push_f64(line, v);
    }
    line.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(x: f64, y: f64, vx: f64, vy: f64) -> Track {
        Track {
            pos: Vector2::new(x, y),
            vel: Vector2::new(vx, vy),
        }
    }

    #[test]
    fn head_on_cpa_by_hand() {
        // A at (0, 0) going north at 2 m/s; B at (3, 100) going south at
        // 3 m/s. Relative position (3, 100), relative velocity (0, -5):
        // t* = 100/5 = 20 s, when B is 3 m east of A: range 3, bearing 90.
        let c = cpa(&tr(0.0, 0.0, 0.0, 2.0), &tr(3.0, 100.0, 0.0, -3.0));
        assert!((c.time - 20.0).abs() < 1e-9, "{c:?}");
        assert!((c.range - 3.0).abs() < 1e-9, "{c:?}");
        assert!((c.bearing - 90.0).abs() < 1e-9, "{c:?}");
        // Oblique: A at origin east 1 m/s, B at (10, 10) south 1 m/s.
        // r = (10, 10), v = (-1, -1): t* = 20/2 = 10 s, range 0.
        let c = cpa(&tr(0.0, 0.0, 1.0, 0.0), &tr(10.0, 10.0, 0.0, -1.0));
        assert!(
            (c.time - 10.0).abs() < 1e-9 && c.range.abs() < 1e-9,
            "{c:?}"
        );
        // Separating: CPA is now.
        let c = cpa(&tr(0.0, 0.0, 0.0, -1.0), &tr(0.0, 5.0, 0.0, 1.0));
        assert_eq!(c.time, 0.0);
        assert!((c.range - 5.0).abs() < 1e-12 && c.bearing.abs() < 1e-12);
        // Same velocity: range stays.
        let c = cpa(&tr(0.0, 0.0, 1.0, 1.0), &tr(-4.0, 0.0, 1.0, 1.0));
        assert_eq!((c.time, c.range, c.bearing), (0.0, 4.0, 270.0));
    }

    #[test]
    fn from_sog_hog_is_compass() {
        let t = Track::from_sog_hog(0.0, 0.0, 2.0, 90.0);
        assert!((t.vel.x - 2.0).abs() < 1e-12 && t.vel.y.abs() < 1e-12);
    }

    /// The all-pairs, CPA-every-step reference of [`Tracker`]: the events
    /// of the tracker (Verlet list, grid, CPA only when needed) must be
    /// exactly these, in the same order.
    fn reference_events(ranges: EncounterRanges, frames: &[(f64, Vec<Track>)]) -> Vec<Event> {
        let mut active: std::collections::BTreeMap<(usize, usize), Active> = Default::default();
        let mut events = Vec::new();
        for (t, tracks) in frames {
            let t = *t;
            let pos: Vec<Vector2<f64>> = tracks.iter().map(|k| k.pos).collect();
            let pairs = pairs_within_brute(&pos, ranges.near_miss);
            for &(a, b) in &pairs {
                let range = (pos[b] - pos[a]).norm();
                let c = cpa(&tracks[a], &tracks[b]);
                let fresh = !active.contains_key(&(a, b));
                if fresh {
                    events.push(Event {
                        t,
                        a,
                        b,
                        kind: EventKind::NearMiss,
                        range,
                        cpa: c,
                    });
                }
                let st = active.entry((a, b)).or_insert(Active {
                    min_range: range,
                    t_min: t,
                    cpa_at_min: c,
                    collided: false,
                    seen: 0,
                });
                if range < st.min_range {
                    st.min_range = range;
                    st.t_min = t;
                    st.cpa_at_min = c;
                }
                if range <= ranges.collision && !st.collided {
                    st.collided = true;
                    events.push(Event {
                        t,
                        a,
                        b,
                        kind: EventKind::Collision,
                        range,
                        cpa: c,
                    });
                }
            }
            let gone: Vec<(usize, usize)> = active
                .keys()
                .filter(|k| pairs.binary_search(k).is_err())
                .copied()
                .collect();
            for key in gone {
                let st = active.remove(&key).unwrap();
                events.push(Event {
                    t: st.t_min,
                    a: key.0,
                    b: key.1,
                    kind: EventKind::Clear,
                    range: st.min_range,
                    cpa: st.cpa_at_min,
                });
            }
        }
        events
    }

    #[test]
    fn tracker_events_equal_the_all_pairs_reference() {
        let mut state = 42u64;
        let mut unit = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let ranges = EncounterRanges {
            near_miss: 15.0,
            collision: 3.0,
        };
        // 60 vehicles in a 150 m square, turning at their own rates, some
        // fast (jumps past half the near-miss range: the Verlet list is
        // rebuilt), one lost for a while.
        let n = 60;
        let mut x: Vec<(f64, f64, f64, f64, f64)> = (0..n)
            .map(|i| {
                let speed = if i % 7 == 0 { 9.0 } else { 0.5 + 2.0 * unit() };
                (
                    150.0 * unit(),
                    150.0 * unit(),
                    speed,
                    360.0 * unit(),
                    20.0 * unit() - 10.0,
                )
            })
            .collect();
        let mut frames = Vec::new();
        for k in 0..300 {
            let t = k as f64 * 0.5;
            let tracks: Vec<Track> = x
                .iter()
                .enumerate()
                .map(|(i, &(px, py, sog, hog, _))| {
                    if i == 5 && (100..120).contains(&k) {
                        Track::from_sog_hog(f64::NAN, py, sog, hog)
                    } else {
                        Track::from_sog_hog(px, py, sog, hog)
                    }
                })
                .collect();
            frames.push((t, tracks));
            for v in x.iter_mut() {
                let (s, c) = v.3.to_radians().sin_cos();
                v.0 = (v.0 + 0.5 * v.2 * s).rem_euclid(150.0);
                v.1 = (v.1 + 0.5 * v.2 * c).rem_euclid(150.0);
                v.3 = (v.3 + 0.5 * v.4).rem_euclid(360.0);
            }
        }
        let want = reference_events(ranges, &frames);
        let mut tracker = Tracker::new(ranges);
        let mut got = Vec::new();
        for (t, tracks) in &frames {
            tracker.observe(
                *t,
                tracks.iter().map(|k| k.pos),
                |i| tracks[i],
                |e| got.push(e),
            );
        }
        let count = |k: EventKind| want.iter().filter(|e| e.kind == k).count() as u64;
        assert!(count(EventKind::Collision) > 10 && count(EventKind::NearMiss) > 100);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w);
        }
        assert_eq!(tracker.near_misses, count(EventKind::NearMiss));
        assert_eq!(tracker.collisions, count(EventKind::Collision));
    }

    #[test]
    fn tracker_reports_near_miss_collision_clear_once() {
        let ranges = EncounterRanges {
            near_miss: 10.0,
            collision: 2.0,
        };
        let mut tr_ = Tracker::new(ranges);
        let mut events = Vec::new();
        // B passes A at 1 m, moving east at 1 m/s from x = -20 to 20.
        for k in 0..=40 {
            let t = k as f64;
            let b = Vector2::new(-20.0 + t, 1.0);
            let pos = [Vector2::new(0.0, 0.0), b];
            tr_.observe(
                t,
                pos.into_iter(),
                |i| {
                    if i == 0 {
                        tr(0.0, 0.0, 0.0, 0.0)
                    } else {
                        tr(b.x, b.y, 1.0, 0.0)
                    }
                },
                |e| events.push(e),
            );
        }
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [EventKind::NearMiss, EventKind::Collision, EventKind::Clear]
        );
        // Within 10 m from x = -sqrt(99) = -9.95: first at t = 11 (x = -9).
        assert_eq!(events[0].t, 11.0);
        assert!((events[0].cpa.time - 9.0).abs() < 1e-12);
        assert!((events[0].cpa.range - 1.0).abs() < 1e-12);
        // Within 2 m from x = -sqrt(3): first at t = 19 (x = -1).
        assert_eq!(events[1].t, 19.0);
        assert_eq!((events[2].t, events[2].range), (20.0, 1.0));
        assert_eq!((tr_.near_misses, tr_.collisions), (1, 1));
        assert_eq!(tr_.min_range, Some((1.0, 20.0)));
    }
}
