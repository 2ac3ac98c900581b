//! A seeded directional sea (docs/model.md §24.1–§24.3): a Pierson–Moskowitz
//! or JONSWAP spectrum (DNV-RP-C205 §3.5.5) with cos-2s spreading, cut into
//! N components on an even frequency grid, each with one direction and a
//! random phase (single summation); the elevation at any point and time,
//! the hull's wave-frequency motion and the Stokes drift.
//!
//! Units: metres, seconds, degrees (directions the waves come FROM,
//! clockwise from north); x east, y north.

use super::super::rng::Rng;
use super::super::trig::sin_cos_deg;
use super::super::trig_tables::DEG_PER_RAD;
use super::{exp, ln, Hull};

/// Gravity for the deep-water dispersion relation k = ω²/g, m/s².
pub const G: f64 = 9.81;

/// Lowest component frequency as a fraction of the peak frequency.
pub const BAND_LO: f64 = 0.5;
/// Width of the component band as a multiple of the peak frequency
/// (the band is [0.5, 4]·fp).
pub const BAND_WIDTH: f64 = 3.5;

/// The spectrum's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spectrum {
    /// Pierson–Moskowitz (fully developed sea), in its Hs–Tp form.
    PiersonMoskowitz,
    /// JONSWAP with peak enhancement γ.
    Jonswap {
        /// Peak enhancement factor γ (1 to 20; 3.3 is the JONSWAP mean).
        gamma: f64,
    },
}

/// The sea as configured (`[sea]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeaState {
    /// Spectrum shape.
    pub spectrum: Spectrum,
    /// Significant wave height Hs = 4·√m0, m.
    pub hs_m: f64,
    /// Peak period Tp, s.
    pub tp_s: f64,
    /// Mean direction the waves come from, degrees.
    pub direction_deg: f64,
    /// Directional spread σ (Kuik et al. 1988), degrees; 0: long-crested.
    pub spreading_deg: f64,
    /// Number of components.
    pub components: usize,
    /// Seed of phases and directions.
    pub seed: u64,
}

impl Default for SeaState {
    fn default() -> SeaState {
        SeaState {
            spectrum: Spectrum::Jonswap { gamma: 3.3 },
            hs_m: 1.0,
            tp_s: 6.0,
            direction_deg: 0.0,
            spreading_deg: 30.0,
            components: 260,
            seed: 1,
        }
    }
}

/// Steepest sea taken, Hs over the peak wavelength.
pub const MAX_STEEPNESS: f64 = 0.1;

/// Largest number of components.
pub const MAX_COMPONENTS: usize = 100_000;

impl SeaState {
    /// Why these settings are no sea (the config names the key).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let finite = super::check_range;
        finite("hs", self.hs_m, 1e-3, 30.0, "m")?;
        finite("tp", self.tp_s, 1.0, 40.0, "s")?;
        finite("direction", self.direction_deg, -360.0, 360.0, "degrees")?;
        finite("spreading", self.spreading_deg, 0.0, 80.0, "degrees")?;
        // a sea steeper than Hs/λp = 1/10 breaks (λp = g·Tp²/2π)
        let lambda_p = G * self.tp_s * self.tp_s / std::f64::consts::TAU;
        if self.hs_m > MAX_STEEPNESS * lambda_p {
            return Err((
                "hs",
                format!(
                    "a sea with hs = {} m at tp = {} s is steeper than Hs/λp = 1/10 (it would break); \
                     at this tp, hs must be at most {:.3} m",
                    self.hs_m,
                    self.tp_s,
                    MAX_STEEPNESS * lambda_p
                ),
            ));
        }
        if let Spectrum::Jonswap { gamma } = self.spectrum {
            finite("gamma", gamma, 1.0, 20.0, "")?;
        }
        if !(1..=MAX_COMPONENTS).contains(&self.components) {
            return Err((
                "components",
                format!(
                    "must be from 1 to {MAX_COMPONENTS}, got {}",
                    self.components
                ),
            ));
        }
        Ok(())
    }

    /// One-sided spectral density S(f) of the configured shape before
    /// normalisation, m²/Hz (DNV-RP-C205 eq. 3.5.3 and 3.5.5).
    pub fn density(&self, f_hz: f64) -> f64 {
        let tau = std::f64::consts::TAU;
        let (w, wp) = (tau * f_hz, tau / self.tp_s);
        if w <= 0.0 {
            return 0.0;
        }
        let r = wp / w;
        let r4 = (r * r) * (r * r);
        let pm = 5.0 / 16.0 * self.hs_m * self.hs_m * wp.powi(4) / w.powi(5) * exp(-1.25 * r4);
        let s_w = match self.spectrum {
            Spectrum::PiersonMoskowitz => pm,
            Spectrum::Jonswap { gamma } => {
                let sigma = if w <= wp { 0.07 } else { 0.09 };
                let d = (w - wp) / (sigma * wp);
                let lg = ln(gamma);
                (1.0 - 0.287 * lg) * pm * exp(lg * exp(-0.5 * d * d))
            }
        };
        s_w * tau
    }

    /// The grid spacing Δf of the components, Hz: the sea repeats every 1/Δf s.
    pub fn delta_f(&self) -> f64 {
        BAND_WIDTH / self.tp_s / self.components as f64
    }

    /// The cos-2s exponent s of the spread σ: σ² = 2/(s + 1) (σ in radians).
    pub fn spreading_exponent(&self) -> Option<f64> {
        if self.spreading_deg <= 0.0 {
            return None;
        }
        let sr = self.spreading_deg / DEG_PER_RAD.0;
        Some((2.0 / (sr * sr) - 1.0).max(0.0))
    }
}

/// One wave component, with what a step reads precomputed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Component {
    /// Amplitude, m.
    a: f64,
    /// Wave number, rad/m.
    k: f64,
    /// ω in degrees per second.
    w_deg: f64,
    /// Wave-number vector in degrees per metre (east, north).
    kx_deg: f64,
    ky_deg: f64,
    /// Unit vector of propagation (east, north).
    ex: f64,
    ey: f64,
    /// Phase, degrees.
    phase_deg: f64,
}

/// The sea-surface elevation's motion at a hull (docs/model.md §24.3).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WaveMotion {
    /// Elevation of the free surface at the hull's centre, m (up).
    pub elevation: f64,
    /// Heave, m (up): the elevation averaged over the waterplane.
    pub heave: f64,
    /// Roll, degrees (starboard down positive).
    pub roll_deg: f64,
    /// Pitch, degrees (bow up positive).
    pub pitch_deg: f64,
    /// Wave-frequency displacement east, m.
    pub dx: f64,
    /// Wave-frequency displacement north, m.
    pub dy: f64,
    /// Wave-frequency yaw, degrees (clockwise positive).
    pub yaw_deg: f64,
}

/// A directional wave field: its settings and components.
#[derive(Debug, Clone, PartialEq)]
pub struct WaveField {
    state: SeaState,
    comps: Vec<Component>,
    /// Stokes drift at the surface, m/s (east, north).
    stokes0: (f64, f64),
}

/// Points of the spreading function's inverse-CDF table.
const CDF_POINTS: usize = 2048;

/// The cos-2s spreading's inverse CDF on [−180°, 180°], as a table of
/// (cumulative, angle) pairs.
fn spreading_cdf(s: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(CDF_POINTS + 1);
    let mut acc = 0.0;
    let step = 360.0 / CDF_POINTS as f64;
    let dens = |deg: f64| {
        let c = sin_cos_deg(0.5 * deg).1.abs();
        if c <= 0.0 {
            0.0
        } else {
            exp(2.0 * s * ln(c))
        }
    };
    out.push((0.0, -180.0));
    for i in 0..CDF_POINTS {
        let a = -180.0 + step * i as f64;
        // trapezoid
        acc += 0.5 * (dens(a) + dens(a + step)) * step;
        out.push((acc, a + step));
    }
    let total = acc;
    for p in &mut out {
        p.0 /= total;
    }
    out
}

/// The angle at cumulative probability `q` in a table of [`spreading_cdf`].
fn inverse_cdf(table: &[(f64, f64)], q: f64) -> f64 {
    let i = table.partition_point(|p| p.0 < q).clamp(1, table.len() - 1);
    let (c0, a0) = table[i - 1];
    let (c1, a1) = table[i];
    if c1 > c0 {
        a0 + (a1 - a0) * (q - c0) / (c1 - c0)
    } else {
        a0
    }
}

impl WaveField {
    /// The field of `state` (checked first).
    pub fn new(state: &SeaState) -> Result<WaveField, (&'static str, String)> {
        state.check()?;
        let n = state.components;
        let df = state.delta_f();
        let fp = 1.0 / state.tp_s;
        // the grid f_i = (m + i)·Δf from about 0.5·fp: every record of a
        // whole number of periods 1/Δf has exactly the target spectrum
        let m = (BAND_LO * fp / df + 0.5).floor().max(1.0);
        let freqs: Vec<f64> = (0..n).map(|i| (m + i as f64) * df).collect();
        let mut amps: Vec<f64> = freqs
            .iter()
            .map(|&f| (2.0 * state.density(f) * df).sqrt())
            .collect();
        // normalise: Σ a²/2 = m0 = Hs²/16 exactly
        let m0: f64 = amps.iter().map(|a| 0.5 * a * a).sum();
        let scale = if m0 > 0.0 {
            (state.hs_m * state.hs_m / 16.0 / m0).sqrt()
        } else {
            0.0
        };
        for a in &mut amps {
            *a *= scale;
        }
        let mut rng = Rng::for_run(state.seed, 0x5ea);
        let phases: Vec<f64> = (0..n).map(|_| 360.0 * rng.unit()).collect();
        // directions: in groups of 16 components of similar energy, one
        // stratified draw of the spreading's quantiles each (so every energy
        // level spans the spread)
        let mut offsets = vec![0.0; n];
        if let Some(s) = state.spreading_exponent() {
            let table = spreading_cdf(s);
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&i, &j| amps[j].total_cmp(&amps[i]).then(i.cmp(&j)));
            for chunk in order.chunks(16) {
                let g = chunk.len();
                let mut slots: Vec<usize> = (0..g).collect();
                for i in (1..g).rev() {
                    let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                    slots.swap(i, j);
                }
                for (&c, &slot) in chunk.iter().zip(&slots) {
                    let q = (slot as f64 + rng.unit()) / g as f64;
                    offsets[c] = inverse_cdf(&table, q);
                }
            }
        }
        let tau = std::f64::consts::TAU;
        let mut comps = Vec::with_capacity(n);
        let mut stokes0 = (0.0, 0.0);
        for i in 0..n {
            let w = tau * freqs[i];
            let k = w * w / G;
            let toward = state.direction_deg + 180.0 + offsets[i];
            let (ex, ey) = sin_cos_deg(toward);
            let kd = k * DEG_PER_RAD.0;
            let a = amps[i];
            stokes0.0 += w * k * a * a * ex;
            stokes0.1 += w * k * a * a * ey;
            comps.push(Component {
                a,
                k,
                w_deg: 360.0 * freqs[i],
                kx_deg: kd * ex,
                ky_deg: kd * ey,
                ex,
                ey,
                phase_deg: phases[i],
            });
        }
        Ok(WaveField {
            state: *state,
            comps,
            stokes0,
        })
    }

    /// The settings.
    pub fn state(&self) -> &SeaState {
        &self.state
    }

    /// (frequency Hz, amplitude m, direction the component comes from,
    /// degrees) of every component.
    pub fn components(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        self.comps.iter().map(|c| {
            // (a report only: the library's atan2 is fine here)
            let toward = c.ex.atan2(c.ey).to_degrees();
            let from = super::super::angles::angle360(toward + 180.0);
            (c.w_deg / 360.0, c.a, from)
        })
    }

    #[inline(always)]
    fn phase(c: &Component, x: f64, y: f64, t_s: f64) -> f64 {
        c.w_deg * t_s - (c.kx_deg * x + c.ky_deg * y) + c.phase_deg
    }

    /// Elevation of the free surface at (x, y) m and time `t_s`, m:
    /// η = Σ a·cos(ωt − k·r + φ).
    pub fn elevation(&self, x: f64, y: f64, t_s: f64) -> f64 {
        self.comps
            .iter()
            .map(|c| c.a * sin_cos_deg(Self::phase(c, x, y, t_s)).1)
            .sum()
    }

    /// Elevation (m) and its slopes ∂η/∂x, ∂η/∂y at (x, y), time `t_s`
    /// (what a heave–pitch–roll buoy measures).
    pub fn elevation_and_slopes(&self, x: f64, y: f64, t_s: f64) -> (f64, f64, f64) {
        let mut out = (0.0, 0.0, 0.0);
        for c in &self.comps {
            let (s, co) = sin_cos_deg(Self::phase(c, x, y, t_s));
            out.0 += c.a * co;
            let ak = c.a * c.k * s;
            out.1 += ak * c.ex;
            out.2 += ak * c.ey;
        }
        out
    }

    /// Stokes drift at depth `depth_m` (≥ 0), m/s (east, north):
    /// Σ ω·k·a²·e^(−2kz) along each component.
    pub fn stokes_drift(&self, depth_m: f64) -> (f64, f64) {
        if depth_m <= 0.0 || depth_m.is_nan() {
            return self.stokes0;
        }
        let mut out = (0.0, 0.0);
        for c in &self.comps {
            let w = c.w_deg / DEG_PER_RAD.0;
            let v = w * c.k * c.a * c.a * exp(-2.0 * c.k * depth_m);
            out.0 += v * c.ex;
            out.1 += v * c.ey;
        }
        out
    }

    /// The hull's wave-frequency motion at (x, y) m, time `t_s`, heading
    /// `heading_deg`, depth `depth_m` (docs/model.md §24.3): per component,
    /// the waterplane averages sinc(k·L·cosβ/2)·sinc(k·B·sinβ/2), the depth
    /// attenuation e^(−kz), and the differences bow − stern and port −
    /// starboard for pitch, roll and yaw.
    pub fn motion(
        &self,
        x: f64,
        y: f64,
        t_s: f64,
        heading_deg: f64,
        depth_m: f64,
        hull: &Hull,
    ) -> WaveMotion {
        let (bs, bc) = sin_cos_deg(heading_deg); // bow = (sin h, cos h)
        let (half_l, half_b) = (0.5 * hull.length_m, 0.5 * hull.beam_m);
        let submerged = depth_m > 0.0;
        // sin(u)/u: its series up to u⁸ below |u| = 0.5 (error < 3e-11;
        // the common case for small hulls), else by the sine
        let sinc = |u: f64| -> f64 {
            if u.abs() < 0.5 {
                let z = u * u;
                1.0 + z
                    * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (1.0 / 362_880.0))))
            } else {
                sin_cos_deg(u * DEG_PER_RAD.0).0 / u
            }
        };
        let mut m = WaveMotion::default();
        let (mut pitch, mut roll, mut yaw) = (0.0, 0.0, 0.0);
        let mut heave = 0.0;
        let (mut dx, mut dy) = (0.0, 0.0);
        for comp in &self.comps {
            let (sp, cp) = sin_cos_deg(Self::phase(comp, x, y, t_s));
            m.elevation += comp.a * cp;
            let c = comp.ex * bs + comp.ey * bc; // cos of the angle off the bow
            let s = comp.ex * bc - comp.ey * bs; // its sine (to starboard)
            let hl = sinc(comp.k * c * half_l);
            let hb = sinc(comp.k * s * half_b);
            let att = if submerged {
                exp(-comp.k * depth_m)
            } else {
                1.0
            };
            let a = comp.a * att * hl * hb;
            heave += a * cp;
            pitch += a * comp.k * c * sp;
            roll -= a * comp.k * s * sp;
            yaw -= a * comp.k * s * c * cp;
            let disp = a * sp;
            dx += disp * comp.ex;
            dy += disp * comp.ey;
        }
        m.heave = heave;
        m.pitch_deg = pitch * DEG_PER_RAD.0;
        m.roll_deg = roll * DEG_PER_RAD.0;
        m.yaw_deg = yaw * DEG_PER_RAD.0;
        m.dx = dx;
        m.dy = dy;
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sea(spectrum: Spectrum, n: usize) -> SeaState {
        SeaState {
            spectrum,
            hs_m: 2.0,
            tp_s: 8.0,
            direction_deg: 30.0,
            spreading_deg: 20.0,
            components: n,
            seed: 7,
        }
    }

    #[test]
    fn the_components_hold_exactly_the_variance_of_hs() {
        for sp in [Spectrum::PiersonMoskowitz, Spectrum::Jonswap { gamma: 3.3 }] {
            let f = WaveField::new(&sea(sp, 260)).unwrap();
            let m0: f64 = f.comps.iter().map(|c| 0.5 * c.a * c.a).sum();
            assert!((4.0 * m0.sqrt() - 2.0).abs() < 1e-12);
        }
    }

    #[test]
    fn the_unnormalised_spectra_integrate_to_about_hs_squared_over_16() {
        // DNV-RP-C205: ∫S = Hs²/16 for PM; JONSWAP's 1 − 0.287 ln γ within ~1 %
        for (sp, tol) in [
            (Spectrum::PiersonMoskowitz, 0.002),
            (Spectrum::Jonswap { gamma: 3.3 }, 0.02),
        ] {
            let s = sea(sp, 260);
            let (mut m0, df) = (0.0, 1e-4);
            let mut f = df / 2.0;
            while f < 5.0 {
                m0 += s.density(f) * df;
                f += df;
            }
            assert!((m0 / 0.25 - 1.0).abs() < tol, "{sp:?}: m0 {m0}");
        }
    }

    #[test]
    fn a_long_crested_sea_is_a_function_of_the_distance_along_its_direction() {
        let mut s = sea(Spectrum::PiersonMoskowitz, 64);
        s.spreading_deg = 0.0;
        s.direction_deg = 90.0; // from the east: travels west
        let f = WaveField::new(&s).unwrap();
        // north-south offsets change nothing
        let a = f.elevation(10.0, 0.0, 3.0);
        let b = f.elevation(10.0, 500.0, 3.0);
        assert!((a - b).abs() < 1e-9, "{a} {b}");
        // a component's crest moves west at its phase speed g/ω
        let c = f.comps[20];
        let w = c.w_deg / DEG_PER_RAD.0;
        let cphase = G / w;
        let p0 = WaveField::phase(&c, 0.0, 0.0, 0.0);
        let p1 = WaveField::phase(&c, -cphase * 2.0, 0.0, 2.0);
        assert!((p0 - p1).abs() < 1e-9);
    }

    #[test]
    fn the_same_seed_gives_the_same_sea_and_another_seed_another() {
        let a = WaveField::new(&sea(Spectrum::Jonswap { gamma: 2.0 }, 100)).unwrap();
        let b = WaveField::new(&sea(Spectrum::Jonswap { gamma: 2.0 }, 100)).unwrap();
        assert_eq!(a, b);
        let mut s = sea(Spectrum::Jonswap { gamma: 2.0 }, 100);
        s.seed = 8;
        let c = WaveField::new(&s).unwrap();
        assert_ne!(a.elevation(1.0, 2.0, 3.0), c.elevation(1.0, 2.0, 3.0));
    }

    #[test]
    fn a_point_hull_follows_the_surface_and_a_long_one_averages_short_waves() {
        let f = WaveField::new(&sea(Spectrum::Jonswap { gamma: 3.3 }, 260)).unwrap();
        let point = Hull {
            length_m: 0.0,
            beam_m: 0.0,
            ..Hull::default()
        };
        let (mut e2, mut h2) = (0.0, 0.0);
        let (mut eh, mut s2) = (0.0, 0.0);
        let long = Hull {
            length_m: 200.0,
            beam_m: 30.0,
            ..Hull::default()
        };
        for i in 0..2000 {
            let t = i as f64 * 0.5;
            let m = f.motion(3.0, -4.0, t, 45.0, 0.0, &point);
            assert!((m.heave - m.elevation).abs() < 1e-12);
            e2 += m.elevation * m.elevation;
            eh += m.elevation * m.heave;
            let l = f.motion(3.0, -4.0, t, 45.0, 0.0, &long);
            h2 += l.heave * l.heave;
            s2 += m.pitch_deg * m.pitch_deg;
        }
        assert!(eh > 0.0 && s2 > 0.0);
        // a 200 m ship heaves far less than the surface at Tp = 8 s (λ ≈ 100 m)
        assert!(h2 < 0.2 * e2, "{h2} vs {e2}");
        // and a submerged vehicle at 100 m barely moves (e^(−k·z))
        let deep = f.motion(3.0, -4.0, 10.0, 45.0, 100.0, &point);
        assert!(deep.heave.abs() < 1e-2, "{deep:?}");
    }

    #[test]
    fn pitch_of_a_point_hull_is_the_slope_along_its_bow() {
        let f = WaveField::new(&sea(Spectrum::PiersonMoskowitz, 50)).unwrap();
        let point = Hull {
            length_m: 0.0,
            beam_m: 0.0,
            ..Hull::default()
        };
        let (_, sx, sy) = f.elevation_and_slopes(5.0, 6.0, 7.0);
        // heading east: the bow is +x; roll = port (north) minus starboard (south)
        let m = f.motion(5.0, 6.0, 7.0, 90.0, 0.0, &point);
        assert!((m.pitch_deg / DEG_PER_RAD.0 - sx).abs() < 1e-12);
        assert!((m.roll_deg / DEG_PER_RAD.0 - sy).abs() < 1e-12);
    }

    #[test]
    fn bad_settings_name_their_key() {
        let mut s = sea(Spectrum::PiersonMoskowitz, 10);
        s.hs_m = f64::NAN;
        assert_eq!(WaveField::new(&s).unwrap_err().0, "hs");
        s.hs_m = -1.0;
        assert_eq!(WaveField::new(&s).unwrap_err().0, "hs");
        let mut s = sea(Spectrum::Jonswap { gamma: 0.5 }, 10);
        assert_eq!(WaveField::new(&s).unwrap_err().0, "gamma");
        s.spectrum = Spectrum::PiersonMoskowitz;
        s.components = 0;
        assert_eq!(WaveField::new(&s).unwrap_err().0, "components");
    }
}
