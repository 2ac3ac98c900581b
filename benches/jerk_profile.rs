//! Speed of the jerk-limited profile generator on random general cases.
//!
//! `cargo bench --bench jerk_profile`. Each iteration is one 1-DOF
//! calculation (`plan_into`, as the interpolator and the follower re-plan:
//! into the same profile) or one sampled setpoint (`Profile::at`), cycling
//! through 4096 fixed pseudo-random cases: limits uniform in [0.1, 10],
//! start and target positions ~ N(0, 4), velocities and accelerations
//! uniform inside the limits (start without unavoidable overshoot, target
//! reachable) — the same distribution as `scripts/compare_ruckig.py`.
use std::hint::black_box;

use criterion::{criterion_group, Criterion};
use usim::interp::jerk_profile::{plan, plan_into, Limits, Profile, State};

/// SplitMix64: a tiny deterministic generator (no extra dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn normal(&mut self, sd: f64) -> f64 {
        let u = self.next().max(1e-300);
        let v = self.next();
        sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

fn cases(n: usize) -> Vec<(State, State, Limits)> {
    let mut r = Rng(42);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (vm, am, jm) = (
            r.uniform(0.1, 10.0),
            r.uniform(0.1, 10.0),
            r.uniform(0.1, 10.0),
        );
        let state = |r: &mut Rng, start: bool| loop {
            let v = r.uniform(-vm, vm);
            let a = r.uniform(-am, am);
            let w = if start {
                v + a * a.abs() / (2.0 * jm)
            } else {
                v - a * a.abs() / (2.0 * jm)
            };
            if w.abs() <= vm {
                return (v, a);
            }
        };
        let (v0, a0) = state(&mut r, true);
        let (vf, af) = state(&mut r, false);
        let Ok(l) = Limits::symmetric(vm, am, jm) else {
            continue;
        };
        out.push((
            State::new(r.normal(4.0), v0, a0),
            State::new(r.normal(4.0), vf, af),
            l,
        ));
    }
    out
}

fn bench(c: &mut Criterion) {
    let cases = cases(4096);
    let mut i = 0usize;
    let mut prof = plan(cases[0].0, cases[0].1, &cases[0].2).expect("plan failed");
    c.bench_function("jerk_profile/plan (per 1-DOF calculation)", |b| {
        b.iter(|| {
            i = (i + 1) & 4095;
            let (s, t, l) = &cases[i];
            let r = plan_into(black_box(*s), black_box(*t), l, &mut prof);
            black_box(&prof);
            black_box(r)
        })
    });
    let profiles: Vec<Profile> = cases
        .iter()
        .filter_map(|(s, t, l)| plan(*s, *t, l).ok())
        .collect();
    let mut r = Rng(7);
    let queries: Vec<(usize, f64)> = (0..4096)
        .map(|k| {
            let p = k % profiles.len();
            (p, r.next() * profiles[p].duration())
        })
        .collect();
    let mut k = 0usize;
    c.bench_function("jerk_profile/at (per sampled setpoint)", |b| {
        b.iter(|| {
            k = (k + 1) & 4095;
            let (p, t) = queries[k];
            black_box(profiles[p].at(black_box(t)))
        })
    });
}

criterion_group!(benches, bench);

/// `JERK_PROFILE_COUNT=N`: instead of criterion, plan the 4096 cases N times
/// and sample every profile at 16 times (for `valgrind --tool=callgrind
/// --toggle-collect=*count_plans* ...`: instructions per calculation =
/// Ir / (4096·N); `*count_at*` likewise per setpoint = Ir / (4096·16·N)).
fn main() {
    if let Some(n) = std::env::var("JERK_PROFILE_COUNT")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
    {
        let cases = cases(4096);
        let mut prof = plan(cases[0].0, cases[0].1, &cases[0].2).expect("plan failed");
        count_plans(&cases, n, &mut prof);
        let profiles: Vec<Profile> = cases
            .iter()
            .map(|(s, t, l)| plan(*s, *t, l).expect("plan failed"))
            .collect();
        let mut sum = 0.0;
        for _ in 0..n {
            sum += count_at(&profiles);
        }
        println!(
            "planned {} x {n}; {} setpoints x {n}; checksum {sum}",
            cases.len(),
            16 * profiles.len()
        );
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

/// Plans every case `n` times into `prof` (only `plan_into` is counted: the profiles
/// sampled by `count_at` are planned outside).
#[inline(never)]
fn count_plans(cases: &[(State, State, Limits)], n: usize, prof: &mut Profile) {
    for _ in 0..n {
        for (s, t, l) in cases {
            let r = plan_into(black_box(*s), black_box(*t), black_box(l), prof);
            black_box(&*prof);
            let _ = black_box(r);
        }
    }
}

#[inline(never)]
fn count_at(profiles: &[Profile]) -> f64 {
    let mut sum = 0.0;
    for p in profiles {
        let d = p.duration();
        for i in 0..16 {
            sum += black_box(p.at(black_box(d * (i as f64 + 0.5) / 16.0))).p;
        }
    }
    sum
}
