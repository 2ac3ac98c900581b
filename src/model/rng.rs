//! A small seeded random generator (SplitMix64) for everything that draws:
//! sweeps (one stream per run) and the environment layer (waves, wind,
//! sensor noise). Plain integer arithmetic, so the same seed gives the same
//! bits on every machine; `normal` uses the platform's `ln` and `cos`.

/// A small seeded generator (SplitMix64): one stream per run, from
/// `(seed, run index)`, so a run's draws do not depend on other runs,
/// threads or shards.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The stream of run `run` of a sweep seeded with `seed`.
    pub fn for_run(seed: u64, run: u64) -> Rng {
        let mut r = Rng(seed ^ 0x5851_f42d_4c95_7f2d);
        let a = r.next_u64();
        Rng(a ^ run.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ run)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box–Muller; uses two draws).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}
