//! The environment layer (docs/model.md §24): a seeded directional sea
//! ([`waves`]), a mean wind with gusts ([`wind`]) and a tidal factor on the
//! current field ([`Tide`]). Every part is a pure function of its settings,
//! its seed, the simulated time and the position, so a run stays a pure
//! function of its files; with every part off the model is untouched (the
//! golden suites are bit-identical).
//!
//! Arithmetic: `+ − × ÷ √`, the model's [`super::trig::sin_cos_deg`] and the
//! [`exp`]/[`ln`] below (series, no library call), so the same settings give
//! the same bits on every machine and under `math = "libm"` alike.

use std::sync::Arc;

use super::trig::sin_cos_deg;

pub mod waves;
pub mod wind;

pub use waves::{SeaState, Spectrum, WaveField, WaveMotion};
pub use wind::{Wind, WindSettings};

/// The environment of one vehicle: the sea and the wind (shared, `Arc`:
/// every vehicle with the same settings and seed sees the same field), the
/// tidal factor of its current field, and the vehicle's own coefficients.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    /// The directional wave field (`[sea]`), if on.
    pub sea: Option<Arc<WaveField>>,
    /// The wind (`[wind]`), if on.
    pub wind: Option<Arc<Wind>>,
    /// The tidal factor on the current field (`[current_tide]`), if on.
    pub tide: Option<Tide>,
    /// How the hull answers sea and wind.
    pub hull: Hull,
}

/// A vehicle's coefficients for the sea and the wind (docs/model.md §24.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hull {
    /// Waterline length, m (0: a point hull).
    pub length_m: f64,
    /// Beam, m (0: a point hull).
    pub beam_m: f64,
    /// Fraction of the Stokes drift the hull takes (0 to 2, default 1).
    pub wave_drift: f64,
    /// Leeway: drift speed as a fraction of the wind speed (default 0.03).
    pub windage: f64,
    /// Weathervaning: yaw rate per squared wind speed at 90° off the wind,
    /// (deg/s)/(m/s)² (default 0.01; the bow turns into the wind).
    pub weathervane: f64,
}

impl Default for Hull {
    fn default() -> Hull {
        Hull {
            length_m: 0.0,
            beam_m: 0.0,
            wave_drift: 1.0,
            windage: 0.03,
            weathervane: 0.01,
        }
    }
}

/// The tide on a current field: the field's vectors times
/// `mean + amplitude·cos(360°·t/period − phase)` at simulated time t (s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tide {
    /// Constant part of the factor (default 0: a reversing tide).
    pub mean: f64,
    /// Amplitude of the factor (default 1).
    pub amplitude: f64,
    /// Period, s (default 44,714 s, the M2 tide's 12.42 h).
    pub period_s: f64,
    /// Phase, degrees (default 0: full flood at t = 0).
    pub phase_deg: f64,
}

impl Default for Tide {
    fn default() -> Tide {
        Tide {
            mean: 0.0,
            amplitude: 1.0,
            period_s: 44_714.2,
            phase_deg: 0.0,
        }
    }
}

impl Tide {
    /// The factor on the current field at simulated time `t_s`.
    pub fn factor(&self, t_s: f64) -> f64 {
        let a = 360.0 * (t_s / self.period_s) - self.phase_deg;
        self.mean + self.amplitude * sin_cos_deg(a).1
    }
}

/// What the environment adds to one step (docs/model.md §24.5).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepForcing {
    /// Drift velocity east, north, m/s: windage plus the Stokes drift.
    pub drift: (f64, f64),
    /// Weathervaning yaw rate, deg/s.
    pub yaw_rate: f64,
}

impl Environment {
    /// Whether nothing is on (the model then skips the layer).
    pub fn is_off(&self) -> bool {
        self.sea.is_none() && self.wind.is_none() && self.tide.is_none()
    }

    /// The slow forcing at simulated time `t_s` on a hull at heading
    /// `heading_deg` and depth `depth_m`: windage and Stokes drift (m/s),
    /// weathervaning yaw rate (deg/s).
    pub fn forcing(&self, t_s: f64, heading_deg: f64, depth_m: f64) -> StepForcing {
        let mut f = StepForcing::default();
        if let Some(w) = &self.wind {
            let (u, dir_from) = (w.speed_at(t_s), w.settings.direction_deg);
            let (s, c) = sin_cos_deg(dir_from);
            // the wind blows toward dir_from + 180°
            let k = self.hull.windage * u;
            f.drift.0 -= k * s;
            f.drift.1 -= k * c;
            // bow into the wind: rate ∝ U² sin(dir_from − heading)
            let off = sin_cos_deg(dir_from - heading_deg).0;
            f.yaw_rate = self.hull.weathervane * u * u * off;
        }
        if let Some(sea) = &self.sea {
            let (sx, sy) = sea.stokes_drift(depth_m);
            f.drift.0 += self.hull.wave_drift * sx;
            f.drift.1 += self.hull.wave_drift * sy;
        }
        f
    }

    /// The wave-frequency motion of the hull at (x, y) m, time `t_s`,
    /// heading `heading_deg`, depth `depth_m` (zero without a sea).
    pub fn wave_motion(
        &self,
        x: f64,
        y: f64,
        t_s: f64,
        heading_deg: f64,
        depth_m: f64,
    ) -> WaveMotion {
        match &self.sea {
            Some(sea) => sea.motion(x, y, t_s, heading_deg, depth_m, &self.hull),
            None => WaveMotion::default(),
        }
    }
}

/// `Ok` if `v` is a finite number in [lo, hi], else the key and a message
/// (the checks of [`SeaState`] and [`WindSettings`]).
pub fn check_range(
    key: &'static str,
    v: f64,
    lo: f64,
    hi: f64,
    unit: &str,
) -> Result<(), (&'static str, String)> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err((
            key,
            format!("must be a number from {lo} to {hi} {unit}, got {v}"),
        ))
    }
}

/// e^x with `+ − × ÷` only: x = n·ln 2 + r, |r| ≤ ln 2 / 2, a degree-13
/// Taylor series for e^r (error below 1e-16 relative), times 2^n.
/// Underflows to 0 below −708, saturates to +inf above 709.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < -708.0 {
        return 0.0;
    }
    if x > 709.0 {
        return f64::INFINITY;
    }
    // ln 2 split as fdlibm does: a high part with 32 trailing zero bits
    // (n·LN2_HI is exact) and the rest
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    let n = (x * std::f64::consts::LOG2_E + 6_755_399_441_055_744.0) - 6_755_399_441_055_744.0;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..=13 {
        term *= r / i as f64;
        sum += term;
    }
    // 2^n in two halves (n in [−1022, 1023] after the clamps above)
    let n = n as i64;
    let h = n / 2;
    let scale = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    sum * scale(h) * scale(n - h)
}

/// ln x for finite x > 0 with `+ − × ÷` only: x = m·2^e, m in [√½, √2),
/// ln m = 2·atanh(s), s = (m − 1)/(m + 1), by its series; NaN for x ≤ 0.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    if x.is_infinite() {
        return x;
    }
    let mut bits = x.to_bits();
    let mut e = 0i64;
    if bits >> 52 == 0 {
        // subnormal: scale up by 2^54 first
        bits = (x * f64::from_bits((1023 + 54) << 52)).to_bits();
        e -= 54;
    }
    e += ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52)); // [1, 2)
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    let mut term = s;
    let mut sum = 0.0;
    for i in 0..14 {
        sum += term / (2 * i + 1) as f64;
        term *= z;
    }
    2.0 * sum + e as f64 * std::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_ln_agree_with_the_library_to_a_few_ulps() {
        let mut x = -50.0;
        while x < 50.0 {
            let (a, b) = (exp(x), x.exp());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b,
                "exp({x}) = {a} vs {b}"
            );
            x += 0.0137;
        }
        for &x in &[1e-300, 1e-10, 0.3, 0.999, 1.0, 1.0001, 2.0, 7.5, 1e5, 1e300] {
            let (a, b) = (ln(x), x.ln());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0),
                "ln({x}) = {a} vs {b}"
            );
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(ln(1.0), 0.0);
        assert!(ln(-1.0).is_nan() && ln(0.0).is_nan());
        assert_eq!(exp(-1000.0), 0.0);
    }

    #[test]
    fn the_tide_factor_follows_its_cosine() {
        let t = Tide {
            mean: 0.2,
            amplitude: 0.8,
            period_s: 1000.0,
            phase_deg: 90.0,
        };
        assert!((t.factor(0.0) - 0.2).abs() < 1e-15); // cos(−90°) = 0
        assert!((t.factor(250.0) - 1.0).abs() < 1e-15); // cos 0 = 1
        assert!((t.factor(750.0) + 0.6).abs() < 1e-15); // cos 180° = −1
    }

    #[test]
    fn windage_blows_downwind_and_the_bow_turns_into_the_wind() {
        let w = WindSettings {
            speed_mps: 10.0,
            direction_deg: 90.0, // from the east
            gusts: false,
            ..WindSettings::default()
        };
        let env = Environment {
            wind: Some(Arc::new(Wind::new(&w).unwrap())),
            ..Environment::default()
        };
        let f = env.forcing(0.0, 0.0, 0.0);
        assert!(
            (f.drift.0 + 0.3).abs() < 1e-12 && f.drift.1.abs() < 1e-12,
            "{f:?}"
        );
        // heading north, wind from the east: turn to starboard at 0.01·100 deg/s
        assert!((f.yaw_rate - 1.0).abs() < 1e-12, "{f:?}");
        // heading into the wind: no moment
        assert!(env.forcing(0.0, 90.0, 0.0).yaw_rate.abs() < 1e-12);
    }
}
