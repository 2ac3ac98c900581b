//! Mean wind plus gusts (docs/model.md §24.4): the longitudinal gust
//! spectrum of Davenport (1961), as DNV-RP-C205 §2.3.2 gives it,
//!
//! S(f) = 4κ·U²·x² / (f·(1 + x²)^(4/3)),  x = L·f/U,
//!
//! (U the 10-minute mean speed at 10 m, m/s; κ the surface drag
//! coefficient; L = 1200 m), cut into N log-spaced bins between
//! [`F_LO_HZ`] and [`F_HI_HZ`] whose energies are the exact integrals
//! 6κU²·[(1 + x₁²)^(−1/3) − (1 + x₂²)^(−1/3)], one cosine per bin at the
//! bin's geometric centre with a seeded random phase. The gust is the same
//! everywhere (coherent over the fleet) and along the mean direction only.

use super::super::rng::Rng;
use super::super::trig::sin_cos_deg;
use super::{exp, ln};

/// Lowest gust frequency, Hz (1/hour).
pub const F_LO_HZ: f64 = 1.0 / 3600.0;
/// Highest gust frequency, Hz.
pub const F_HI_HZ: f64 = 0.5;
/// Largest mean wind speed taken, m/s (beyond hurricane force).
pub const MAX_SPEED_MPS: f64 = 80.0;

/// The wind as configured (`[wind]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindSettings {
    /// Mean speed at 10 m, m/s.
    pub speed_mps: f64,
    /// Direction the wind comes from, degrees clockwise from north.
    pub direction_deg: f64,
    /// Whether gusts are on.
    pub gusts: bool,
    /// Surface drag coefficient κ of Davenport's spectrum (default 0.002:
    /// open sea; σ_u = √(6κ)·U ≈ 0.11·U over all frequencies).
    pub surface_drag: f64,
    /// Length scale L, m (default 1200, Davenport's).
    pub length_scale_m: f64,
    /// Number of gust components (log-spaced bins).
    pub components: usize,
    /// Seed of the gust phases.
    pub seed: u64,
}

impl Default for WindSettings {
    fn default() -> WindSettings {
        WindSettings {
            speed_mps: 5.0,
            direction_deg: 0.0,
            gusts: true,
            surface_drag: 0.002,
            length_scale_m: 1200.0,
            components: 64,
            seed: 1,
        }
    }
}

impl WindSettings {
    /// Why these settings are no wind (the config names the key).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let within = super::check_range;
        within("speed", self.speed_mps, 0.0, MAX_SPEED_MPS, "m/s")?;
        within("direction", self.direction_deg, -360.0, 360.0, "degrees")?;
        within("surface_drag", self.surface_drag, 0.0, 0.05, "")?;
        within("length_scale", self.length_scale_m, 1.0, 10_000.0, "m")?;
        if !(1..=10_000).contains(&self.components) {
            return Err((
                "components",
                format!("must be from 1 to 10000, got {}", self.components),
            ));
        }
        Ok(())
    }

    /// Davenport's one-sided density S(f), (m/s)²/Hz.
    pub fn density(&self, f_hz: f64) -> f64 {
        let u = self.speed_mps;
        if f_hz <= 0.0 || u <= 0.0 {
            return 0.0;
        }
        let x = self.length_scale_m * f_hz / u;
        let x2 = x * x;
        4.0 * self.surface_drag * u * u * x2 / (f_hz * exp(4.0 / 3.0 * ln(1.0 + x2)))
    }

    /// ∫₀^f S df = 6κU²·[1 − (1 + x²)^(−1/3)], (m/s)².
    pub fn cumulative(&self, f_hz: f64) -> f64 {
        let u = self.speed_mps;
        if f_hz <= 0.0 || u <= 0.0 {
            return 0.0;
        }
        let x = self.length_scale_m * f_hz / u;
        6.0 * self.surface_drag * u * u * (1.0 - exp(-ln(1.0 + x * x) / 3.0))
    }

    /// Edges of the gust bins, Hz: F_LO·r^j, j = 0..=N, r = (F_HI/F_LO)^(1/N).
    pub fn bin_edges(&self) -> Vec<f64> {
        let n = self.components;
        let lr = ln(F_HI_HZ / F_LO_HZ) / n as f64;
        (0..=n)
            .map(|j| {
                if j == n {
                    F_HI_HZ
                } else {
                    F_LO_HZ * exp(lr * j as f64)
                }
            })
            .collect()
    }
}

/// A wind: the settings and the gust components (frequency Hz as degrees
/// per second, amplitude m/s, phase degrees).
#[derive(Debug, Clone, PartialEq)]
pub struct Wind {
    /// The settings.
    pub settings: WindSettings,
    comps: Vec<(f64, f64, f64)>,
}

impl Wind {
    /// The wind of `s` (checked first).
    pub fn new(s: &WindSettings) -> Result<Wind, (&'static str, String)> {
        s.check()?;
        let mut comps = Vec::new();
        if s.gusts && s.speed_mps > 0.0 && s.surface_drag > 0.0 {
            let edges = s.bin_edges();
            let mut rng = Rng::for_run(s.seed, 0x717d);
            for w in edges.windows(2) {
                let energy = s.cumulative(w[1]) - s.cumulative(w[0]);
                let f = (w[0] * w[1]).sqrt();
                let a = (2.0 * energy.max(0.0)).sqrt();
                comps.push((360.0 * f, a, 360.0 * rng.unit()));
            }
        }
        Ok(Wind {
            settings: *s,
            comps,
        })
    }

    /// The gust (m/s, zero mean) at simulated time `t_s`.
    pub fn gust_at(&self, t_s: f64) -> f64 {
        self.comps
            .iter()
            .map(|&(w_deg, a, ph)| a * sin_cos_deg(w_deg * t_s + ph).1)
            .sum()
    }

    /// The wind speed at simulated time `t_s`, m/s: mean plus gust, never
    /// below 0.
    pub fn speed_at(&self, t_s: f64) -> f64 {
        (self.settings.speed_mps + self.gust_at(t_s)).max(0.0)
    }

    /// (frequency Hz, amplitude m/s) of every gust component.
    pub fn components(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.comps.iter().map(|&(w, a, _)| (w / 360.0, a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cumulative_is_the_integral_of_the_density() {
        let s = WindSettings {
            speed_mps: 12.0,
            ..WindSettings::default()
        };
        // midpoint rule on a log grid from 1e-5 to 0.5 Hz
        let (a, b, n) = (1e-5f64, 0.5f64, 200_000);
        let r = (b / a).ln() / n as f64;
        let mut sum = 0.0;
        for i in 0..n {
            let f0 = a * (r * i as f64).exp();
            let f1 = a * (r * (i + 1) as f64).exp();
            sum += s.density(0.5 * (f0 + f1)) * (f1 - f0);
        }
        let exact = s.cumulative(b) - s.cumulative(a);
        assert!((sum / exact - 1.0).abs() < 1e-4, "{sum} vs {exact}");
        // the whole spectrum: 6κU²
        assert!((s.cumulative(1e12) - 6.0 * 0.002 * 144.0).abs() < 1e-9);
    }

    #[test]
    fn the_gust_components_hold_the_band_energy() {
        let s = WindSettings {
            speed_mps: 10.0,
            ..WindSettings::default()
        };
        let w = Wind::new(&s).unwrap();
        let var: f64 = w.components().map(|(_, a)| 0.5 * a * a).sum();
        let band = s.cumulative(F_HI_HZ) - s.cumulative(F_LO_HZ);
        assert!((var / band - 1.0).abs() < 1e-12);
        assert_eq!(w.components().count(), 64);
    }

    #[test]
    fn no_gusts_is_the_mean_wind_and_bad_settings_name_their_key() {
        let s = WindSettings {
            speed_mps: 7.0,
            gusts: false,
            ..WindSettings::default()
        };
        let w = Wind::new(&s).unwrap();
        assert_eq!(w.speed_at(123.4), 7.0);
        for (bad, key) in [
            (
                WindSettings {
                    speed_mps: -1.0,
                    ..s
                },
                "speed",
            ),
            (
                WindSettings {
                    speed_mps: 500.0,
                    ..s
                },
                "speed",
            ),
            (
                WindSettings {
                    speed_mps: f64::NAN,
                    ..s
                },
                "speed",
            ),
            (
                WindSettings {
                    direction_deg: f64::INFINITY,
                    ..s
                },
                "direction",
            ),
            (WindSettings { components: 0, ..s }, "components"),
        ] {
            assert_eq!(Wind::new(&bad).unwrap_err().0, key);
        }
    }
}
