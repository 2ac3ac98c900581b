//! usim's own trigonometry for the position step (`math = "fast"`, the
//! default): sine and cosine of an angle in degrees, the mean heading of a
//! step, `hypot`, and the bearing's arctangent in degrees — tables of
//! correctly rounded constants plus short series, with `+ − × ÷ √` only.
//!
//! Why: uSimMarine calls the platform libm (`sin`, `cos`, `atan2`, `sin`,
//! `cos`, `hypot`, `hypot`, `atan`) in one dependent chain per step, and
//! those calls were half the cost of a turning step. These kernels are
//! within two ulps of the correctly rounded result (checked against
//! mpmath's values), take a fraction of the time, and give the same bits
//! on every platform: positions, speeds and headings over ground no
//! longer depend on the machine's C library. Against the C++ the positions
//! differ in the last bits (below 1e-12 m over the golden runs, whose
//! tolerance is 1e-6 m).
//! `math = "libm"` keeps uSimMarine's calls in its order: bit-identical
//! with the C++ on glibc x86-64 (`tests/golden.rs` checks both modes).
//!
//! Tables and constants: `trig_tables.rs`, written by
//! `scripts/gen_trig_tables.py`.
use super::angles::{rel_ang_cases, RelAng};
use super::trig_tables::{ATAN_DEG, DEG_PER_RAD, RAD_PER_DEG, SIN_COS_DEG};

/// Which trigonometry the position step uses (config key `math`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MathMode {
    /// usim's own kernels (this module): fast, the same bits everywhere,
    /// within about 1e-12 m / 1e-12 degrees of the C++ over a long run.
    #[default]
    Fast,
    /// The platform libm in uSimMarine's order: bit-identical with the C++
    /// uSimMarine on glibc x86-64.
    Libm,
}

/// 1.5·2⁵²: adding and subtracting it rounds a double below 2⁵¹ to an
/// integer (ties to even) without a library call.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

/// Sine and cosine of `h_deg` degrees: the whole degree n nearest to the
/// angle from a table, the remainder b ∈ [−0.5°, 0.5°] (exact) by short
/// series, then sin(n + b) and cos(n + b) by the angle-sum formulas.
pub fn sin_cos_deg(h_deg: f64) -> (f64, f64) {
    if h_deg.is_nan() || h_deg.abs() >= 1e15 {
        // NaN, infinities and absurd angles: the library's answer.
        let r = (h_deg / 180.0) * std::f64::consts::PI;
        return (r.sin(), r.cos());
    }
    let n = (h_deg + ROUND_MAGIC) - ROUND_MAGIC;
    // Exact: n = 0, or n lies within a factor of two of h (Sterbenz).
    let b = h_deg - n;
    let whole = n as i64;
    let index = if (0..=360).contains(&whole) {
        whole as usize
    } else {
        whole.rem_euclid(360) as usize
    };
    let (sa, ca) = SIN_COS_DEG[index];
    let x = b * RAD_PER_DEG.0;
    let z = x * x;
    // sin x = x − x³/3! + x⁵/5! − x⁷/7!; cos x − 1 = −x²/2! + x⁴/4! − x⁶/6!
    // (|x| ≤ 0.0088: the next terms are below 1e-20 relative)
    let z2 = z * z;
    let sb = x + (x * z) * ((-1.0 / 6.0 + z * (1.0 / 120.0)) + z2 * (-1.0 / 5040.0));
    let cm1 = z * -0.5 + z2 * (1.0 / 24.0 + z * (-1.0 / 720.0));
    (sa + (sa * cm1 + ca * sb), ca + (ca * cm1 - sa * sb))
}

/// The mean direction of headings `h_p` and `h_n` (degrees): the bisector
/// of the smaller angle between them, which is the direction of the vector
/// sum of their unit vectors — the φ of docs/model.md §10 without `atan2`.
/// Opposite headings (a 180° step) have no mean; this gives h_p + 90.
pub fn mean_heading_deg(h_p: f64, h_n: f64) -> f64 {
    let mut d = h_n - h_p;
    if d > 180.0 {
        d -= 360.0;
    } else if d < -180.0 {
        d += 360.0;
    }
    if d.is_nan() {
        return f64::NAN;
    }
    if d.abs() > 180.0 {
        // headings outside [0, 360) (a reset to −720, say): wrap properly
        d = super::angles::angle180(d);
    }
    h_p + 0.5 * d
}

/// `√(x² + y²)` without the library call; the library's `hypot` where the
/// squares could overflow or underflow (and for NaN and infinities).
pub fn hypot(x: f64, y: f64) -> f64 {
    let r2 = x * x + y * y;
    if (1e-290..=1e290).contains(&r2) {
        r2.sqrt()
    } else if x == 0.0 && y == 0.0 {
        0.0
    } else {
        x.hypot(y)
    }
}

/// 1.5·2⁴⁷: adding and subtracting it rounds t ∈ [0, 1] to the nearest
/// multiple of 1/32, whose count k is then the low bits of the sum.
const ROUND_MAGIC_32: f64 = ROUND_MAGIC / 32.0;

/// The nearest multiple c = k/32 of 1/32 to t ∈ [0, 1] (a little beyond
/// is fine), as (c, k).
#[inline(always)]
fn nearest_32th(t: f64) -> (f64, usize) {
    let shifted = t + ROUND_MAGIC_32;
    let c = shifted - ROUND_MAGIC_32; // k/32, exactly
    let k = (shifted.to_bits() & 63) as usize; // 0..=32
    (c, k.min(32))
}

/// `sign`·(atan(k/32) + atan u) in degrees as `(high, tail)`, the high part
/// from the table, atan u (|u| ≤ 1/32) by its series. `sign` is ±1.
#[inline(always)]
fn atan_sum(k: usize, u: f64, sign: f64) -> (f64, f64) {
    let z = u * u;
    // atan u = u − u³/3 + u⁵/5 − u⁷/7 + u⁹/9 (− u¹¹/11 + u¹³/13: below
    // 2e-19·u at |u| ≤ 1/64, the usual range, and 8e-17·u at 1/32), in
    // degrees and signed: r·u + (r·u)·z·p with r = ±180/π
    let p = (-1.0 / 3.0 + z * (1.0 / 5.0)) + (z * z) * (-1.0 / 7.0 + z * (1.0 / 9.0));
    let ru = (sign * DEG_PER_RAD.0) * u;
    let (hi, lo) = ATAN_DEG[k];
    (sign * hi, sign * lo + (ru + (ru * z) * p))
}

/// `sign`·atan(m/big) in degrees for 0 < m ≤ big as `(high, tail)`: by the
/// nearest k/32 to t = m/big, and atan u, u = (t − k/32)/(1 + t·k/32),
/// |u| ≤ 1/64. `None` where the ratio could underflow or overflow (zero,
/// huge, infinite or NaN sides).
#[inline(always)]
fn atan_parts(m: f64, big: f64, sign: f64) -> Option<(f64, f64)> {
    if m.is_nan() || big.is_nan() || m <= 1e-290 || big >= 1e290 {
        return None;
    }
    let t = m / big;
    let (c, k) = nearest_32th(t);
    // t − c is exact (Sterbenz for k ≥ 1; c = 0 otherwise).
    let u = (t - c) / (1.0 + t * c);
    Some(atan_sum(k, u, sign))
}

/// atan(a/b) in degrees for a, b > 0 (the octant above 45° by
/// atan(a/b) = 90° − atan(b/a)).
pub fn atan_ratio_deg(a: f64, b: f64) -> f64 {
    let swap = a > b;
    let (m, big) = if swap { (b, a) } else { (a, b) };
    let sign = if swap { -1.0 } else { 1.0 };
    match atan_parts(m, big, sign) {
        Some((hi, tail)) if swap => (90.0 + hi) + tail,
        Some((hi, tail)) => hi + tail,
        None => (a / b).atan().to_degrees(),
    }
}

/// Marine bearing from A to B in degrees, [0, 360): uSimMarine's `relAng`
/// ([`super::angles::rel_ang`]), `w + sop·atan(|Δy|/|Δx|)` in degrees, with
/// the octant, the sign and the quadrant folded into one sum after the
/// series.
pub fn rel_ang(xa: f64, ya: f64, xb: f64, yb: f64) -> f64 {
    let (w, sop) = match rel_ang_cases(xa, ya, xb, yb) {
        RelAng::Exact(a) => return a,
        RelAng::Quadrant { w, sop } => (w, sop),
    };
    let (ady, adx) = ((yb - ya).abs(), (xb - xa).abs());
    // bearing = w + sop·θ, θ = atan(ady/adx); above 45°, θ = 90 − θ'.
    let swap = ady > adx;
    let (m, big) = if swap { (adx, ady) } else { (ady, adx) };
    let (base, sign) = if swap {
        (w + sop * 90.0, -sop)
    } else {
        (w, sop)
    };
    let Some((hi, tail)) = atan_parts(m, big, sign) else {
        return super::angles::angle360(atan_ratio_deg(ady, adx) * sop + w);
    };
    // base + sign·θ' ∈ [0, 360]: only 360 needs wrapping
    let r = (base + hi) + tail;
    if r >= 360.0 {
        r - 360.0
    } else {
        r
    }
}

/// [`rel_ang`] when the displacement from A to B is expected to point
/// along (hx, hy) — the step's velocity over ground. The octant and the
/// table entry come from the hint, which is known before B is, so B itself
/// costs one division: u = (m − c·big)/(big + c·m). Falls back to
/// [`rel_ang`] when the hint is off (|u| > 1/32) or unusable.
pub fn rel_ang_hinted(xa: f64, ya: f64, xb: f64, yb: f64, hx: f64, hy: f64) -> f64 {
    let (hax, hay) = (hx.abs(), hy.abs());
    let swap = hay > hax;
    let (hm, hb) = if swap { (hax, hay) } else { (hay, hax) };
    if hm.is_nan() || hb.is_nan() || hb <= 1e-290 || hb >= 1e290 {
        return rel_ang(xa, ya, xb, yb);
    }
    let (c, k) = nearest_32th(hm / hb);
    let (w, sop) = match rel_ang_cases(xa, ya, xb, yb) {
        RelAng::Exact(a) => return a,
        RelAng::Quadrant { w, sop } => (w, sop),
    };
    let (ady, adx) = ((yb - ya).abs(), (xb - xa).abs());
    let (m, big) = if swap { (adx, ady) } else { (ady, adx) };
    if m.is_nan() || big.is_nan() || m <= 1e-290 || big >= 1e290 {
        return rel_ang(xa, ya, xb, yb);
    }
    // u = (t − c)/(1 + t·c) with t = m/big, in one division; the rounding of
    // c·big costs at most half an ulp of m
    let u = (m - c * big) / (big + c * m);
    if u.is_nan() || u.abs() > 1.0 / 32.0 {
        return rel_ang(xa, ya, xb, yb);
    }
    let (base, sign) = if swap {
        (w + sop * 90.0, -sop)
    } else {
        (w, sop)
    };
    let (hi, tail) = atan_sum(k, u, sign);
    let r = (base + hi) + tail;
    if r >= 360.0 {
        r - 360.0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place (0 when equal).
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        let ia = a.to_bits() as i64;
        let ib = b.to_bits() as i64;
        let key = |i: i64| if i < 0 { i64::MIN - i } else { i };
        key(ia).abs_diff(key(ib))
    }

    /// SplitMix64 uniform in [0, 1).
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
    }

    #[test]
    fn sin_cos_deg_is_exact_where_the_answer_is() {
        // the table is correctly rounded: sin 30° is 0.5, not libm's
        // sin(π/6) = 0.49999999999999994
        assert_eq!(sin_cos_deg(0.0), (0.0, 1.0));
        assert_eq!(sin_cos_deg(30.0).0, 0.5);
        assert_eq!(sin_cos_deg(60.0).1, 0.5);
        assert_eq!(sin_cos_deg(90.0), (1.0, 0.0));
        assert_eq!(sin_cos_deg(180.0), (0.0, -1.0));
        assert_eq!(sin_cos_deg(-90.0), (-1.0, 0.0));
        assert_eq!(sin_cos_deg(720.0 + 45.0), sin_cos_deg(45.0));
        let (s, c) = sin_cos_deg(f64::NAN);
        assert!(s.is_nan() && c.is_nan());
    }

    #[test]
    fn sin_cos_deg_matches_the_library_on_headings() {
        let mut r = Rng(7);
        let (mut worst_s, mut worst_c) = (0.0f64, 0.0f64);
        for _ in 0..1_000_000 {
            let h = r.next() * 360.0;
            let (s, c) = sin_cos_deg(h);
            let x = (h / 180.0) * std::f64::consts::PI;
            worst_s = worst_s.max((s - x.sin()).abs());
            worst_c = worst_c.max((c - x.cos()).abs());
            assert!(s.abs() <= 1.0 && c.abs() <= 1.0);
            assert!((s * s + c * c - 1.0).abs() <= 4.5e-16, "{h}");
        }
        // the library's own argument h·π/180 is off by up to an ulp of 2π
        assert!(
            worst_s < 1.5e-15 && worst_c < 1.5e-15,
            "{worst_s} {worst_c}"
        );
        // small angles keep their relative accuracy
        for h in [1e-300, 1e-10, 0.25, 0.5, 1.5, -0.75] {
            let x = h * (std::f64::consts::PI / 180.0);
            assert!(ulps(sin_cos_deg(h).0, x.sin()) <= 2, "{h}");
        }
    }

    #[test]
    fn mean_heading_is_the_bisector() {
        assert_eq!(mean_heading_deg(10.0, 20.0), 15.0);
        assert_eq!(mean_heading_deg(350.0, 10.0), 360.0);
        assert_eq!(mean_heading_deg(10.0, 350.0), 0.0);
        assert_eq!(mean_heading_deg(33.0, 33.0), 33.0);
        assert_eq!(mean_heading_deg(-710.0, 20.0), -705.0); // −710 ≡ 10
                                                            // against atan2 of the summed unit vectors (docs/model.md §10)
        let mut r = Rng(3);
        for _ in 0..200_000 {
            let hp = r.next() * 360.0;
            let hn = hp + (r.next() - 0.5) * 40.0;
            let hn = if hn < 0.0 { hn + 360.0 } else { hn % 360.0 };
            let (sp, cp) = (hp.to_radians().sin(), hp.to_radians().cos());
            let (sn, cn) = (hn.to_radians().sin(), hn.to_radians().cos());
            let phi = (sp + sn).atan2(cp + cn).to_degrees();
            let d = (mean_heading_deg(hp, hn) - phi).rem_euclid(360.0);
            assert!(d.min(360.0 - d) < 1e-11, "{hp} {hn}");
        }
    }

    #[test]
    fn hypot_is_within_two_ulps() {
        let mut r = Rng(5);
        for _ in 0..1_000_000 {
            let x = (r.next() * 2.0 - 1.0) * 10f64.powf(r.next() * 8.0 - 4.0);
            let y = (r.next() * 2.0 - 1.0) * 10f64.powf(r.next() * 8.0 - 4.0);
            assert!(ulps(hypot(x, y), x.hypot(y)) <= 2, "{x} {y}");
        }
        assert_eq!(hypot(0.0, 0.0), 0.0);
        assert_eq!(hypot(3.0, 4.0), 5.0);
        assert_eq!(hypot(1e300, 1e300), 1e300f64.hypot(1e300));
        assert_eq!(hypot(1e-300, 0.0), 1e-300);
        assert_eq!(hypot(f64::INFINITY, f64::NAN), f64::INFINITY);
        assert!(hypot(f64::NAN, 1.0).is_nan());
    }

    /// Correctly rounded values from mpmath (`scripts/gen_trig_tables.py
    /// --vectors`): sines and cosines of headings (also large and tiny
    /// ones) and arctangents of ratios, in degrees.
    #[test]
    fn kernels_are_within_two_ulps_of_the_correctly_rounded_value() {
        let data = include_str!("../../tests/data/trig_reference.csv");
        let (mut n, mut worst) = (0, [0u64; 3]);
        for line in data.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split(',').collect();
            let num = |i: usize| f[i].parse::<f64>().expect("reference number");
            match f[0] {
                "sincos" => {
                    let (s, c) = sin_cos_deg(num(1));
                    worst[0] = worst[0].max(ulps(s, num(3)));
                    worst[1] = worst[1].max(ulps(c, num(4)));
                }
                _ => worst[2] = worst[2].max(ulps(atan_ratio_deg(num(1), num(2)), num(3))),
            }
            n += 1;
        }
        assert_eq!(n, 3000);
        // (measured: sin 2, cos 1, atan 2; libm's sin((h/180)·π) is off by
        // up to 1e-15 absolute from the rounding of its own argument)
        assert!(
            worst.iter().all(|&w| w <= 2),
            "worst ulps sin/cos/atan: {worst:?}"
        );
    }

    #[test]
    fn atan_ratio_is_within_three_ulps_of_the_library() {
        // the reference itself is two roundings away: atan, then ×180/π
        let mut r = Rng(9);
        for _ in 0..1_000_000 {
            let a = 10f64.powf(r.next() * 12.0 - 6.0);
            let b = 10f64.powf(r.next() * 12.0 - 6.0);
            let want = (a / b).atan().to_degrees();
            assert!(ulps(atan_ratio_deg(a, b), want) <= 3, "{a} {b}");
        }
        assert_eq!(atan_ratio_deg(1.0, 1.0), 45.0);
        assert_eq!(atan_ratio_deg(1.0, 1e300), (1e-300f64).atan().to_degrees());
        assert_eq!(atan_ratio_deg(f64::INFINITY, 1.0), 90.0);
        assert!(atan_ratio_deg(f64::NAN, 1.0).is_nan());
        assert!(atan_ratio_deg(1.0, f64::NAN).is_nan());
    }

    #[test]
    fn rel_ang_agrees_with_the_library_version() {
        let mut r = Rng(13);
        for _ in 0..200_000 {
            let p = [r.next(), r.next(), r.next(), r.next()].map(|v| (v - 0.5) * 2000.0);
            let a = rel_ang(p[0], p[1], p[2], p[3]);
            let b = super::super::angles::rel_ang(p[0], p[1], p[2], p[3]);
            let d = (a - b).abs();
            assert!(d.min(360.0 - d) < 1e-12, "{p:?}: {a} vs {b}");
            // hinted by a direction off by up to 2 degrees, or by nonsense
            let e = (r.next() - 0.5) * 4.0f64.to_radians();
            let (dx, dy) = (p[2] - p[0], p[3] - p[1]);
            let (hx, hy) = (dx * e.cos() + dy * e.sin(), dy * e.cos() - dx * e.sin());
            for (hx, hy) in [(hx, hy), (-hy, hx), (0.0, 0.0), (f64::NAN, 1.0)] {
                let h = rel_ang_hinted(p[0], p[1], p[2], p[3], hx, hy);
                let d = (h - b).abs();
                assert!(d.min(360.0 - d) < 1e-12, "{p:?} hint {hx} {hy}: {h} vs {b}");
            }
        }
        assert_eq!(rel_ang(0.0, 0.0, 1.0, 1.0), 45.0);
        assert_eq!(rel_ang_hinted(0.0, 0.0, 1.0, 1.0, 1.0, 1.0), 45.0);
        assert_eq!(rel_ang_hinted(5.0, 5.0, 5.0, 5.0, 1.0, 1.0), 0.0);
        assert_eq!(rel_ang(0.0, 0.0, 0.0, -1.0), 180.0);
        assert_eq!(rel_ang(0.0, 0.0, -1.0, 0.0), 270.0);
        assert_eq!(rel_ang(2.0, 2.0, 2.0, 2.0), 0.0);
    }
}
