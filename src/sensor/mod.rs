//! Sensor degradation between the true state and the `NAV_*` postings
//! (docs/model.md, "Sensors"), sans-IO and seeded: GPS white noise plus a
//! first-order Gauss–Markov bias, outliers and dropouts; heading noise and
//! bias; speed and depth noise; a latency; failures switched by
//! `USM_SENSOR` messages or scheduled in the config. [`Suite`] implements
//! the model's [`NavSensors`] seam; the true state is never touched.
//!
//! Every channel draws from its own stream ([`Rng::for_run`] of the seed and
//! the vehicle's name), every reading, whatever the faults: the same seed
//! gives the same bytes in replays, live runs and Python, and switching one
//! sensor off does not shift the noise of another.
use std::collections::VecDeque;

use crate::model::rng::Rng;
use crate::model::sensing::{NavSensors, Reading, SensorBox, Truth};

pub mod fault;

pub use fault::{FaultEvent, Which};

/// Largest latency accepted, s.
pub const MAX_LATENCY_S: f64 = 60.0;
/// Readings held for the latency at most (older ones are dropped first).
pub const MAX_DELAYED: usize = 65_536;
/// Largest σ, bias or outlier magnitude accepted for a position, m.
pub const MAX_POS_M: f64 = 10_000.0;
/// User equivalent range error the HDOP rule divides by, m: HDOP times
/// the UERE is the horizontal error a receiver would claim.
pub const GPS_UERE_M: f64 = 5.0;
/// The range of an HDOP (the rule's result is clamped into it; the
/// `gps_hdop` key must lie in it): NMEA writes one decimal, 99.9 at most.
pub const HDOP_RANGE: (f64, f64) = (0.1, 99.9);

/// The `[sensors]` settings, validated. Units: m, s, degrees, m/s; σ are
/// standard deviations per axis; every default is 0 (a perfect sensor).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Seed of every stream (with the vehicle's name).
    pub seed: u64,
    /// GPS white noise σ per axis (east, north), m.
    pub gps_sigma: f64,
    /// Stationary σ of the Gauss–Markov bias per axis, m.
    pub gps_bias_sigma: f64,
    /// Correlation time τ of the bias, s (> 0 when the bias is on).
    pub gps_bias_tau: f64,
    /// Probability of an outlier per reading, 0..1.
    pub gps_outlier_prob: f64,
    /// Outlier magnitude, m (a jump in a uniformly drawn direction).
    pub gps_outlier_m: f64,
    /// GGA fix quality with a fix (default 8, simulation).
    pub gps_fix_quality: u8,
    /// HDOP with a fix; `None` (the default): [`Settings::hdop`]'s rule.
    pub gps_hdop: Option<f64>,
    /// Satellites in use with a fix (default 12).
    pub gps_satellites: u8,
    /// Heading white noise σ, degrees.
    pub heading_sigma: f64,
    /// Constant heading bias, degrees.
    pub heading_bias: f64,
    /// Speed white noise σ, m/s.
    pub speed_sigma: f64,
    /// Depth white noise σ, m.
    pub depth_sigma: f64,
    /// Latency: what is published at t was read at t − latency, s.
    pub latency: f64,
    /// Failures scheduled from the start (the `faults` list).
    pub faults: Vec<FaultEvent>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            seed: 0,
            gps_sigma: 0.0,
            gps_bias_sigma: 0.0,
            gps_bias_tau: 0.0,
            gps_outlier_prob: 0.0,
            gps_outlier_m: 0.0,
            gps_fix_quality: 8,
            gps_hdop: None,
            gps_satellites: 12,
            heading_sigma: 0.0,
            heading_bias: 0.0,
            speed_sigma: 0.0,
            depth_sigma: 0.0,
            latency: 0.0,
            faults: Vec::new(),
        }
    }
}

impl Settings {
    /// The HDOP reported with a fix: `gps_hdop` if set, else the
    /// horizontal RMS error of the noise over the UERE,
    /// HDOP = √(2(σ² + σ_b²)) / [`GPS_UERE_M`] (σ the white noise, σ_b the
    /// bias, per axis, m; outliers left out: a receiver does not know of
    /// them), clamped into [`HDOP_RANGE`] (a perfect GPS reports 0.1).
    pub fn hdop(&self) -> f64 {
        if let Some(h) = self.gps_hdop {
            return h;
        }
        let (s, b) = (self.gps_sigma, self.gps_bias_sigma);
        let h = (2.0 * (s * s + b * b)).sqrt() / GPS_UERE_M;
        h.clamp(HDOP_RANGE.0, HDOP_RANGE.1)
    }
}

/// The streams of one vehicle: one per channel.
#[derive(Debug, Clone)]
struct Streams {
    gps: Rng,
    outlier: Rng,
    heading: Rng,
    speed: Rng,
    depth: Rng,
}

/// FNV-1a 64 of a name: the vehicle's part of its streams.
fn fnv(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A vehicle's sensor suite: [`Settings`], the bias state, the faults and
/// the delay line.
#[derive(Debug, Clone)]
pub struct Suite {
    s: Settings,
    /// The vehicle's part of the streams' seed (FNV-1a of its name).
    key: u64,
    rng: Streams,
    /// Gauss–Markov bias (east, north), m, and the mission time it is of.
    bias: Option<(f64, f64, f64)>,
    /// Sensors failed now: gps, heading, speed, depth.
    off: [bool; 4],
    schedule: fault::Schedule,
    delayed: VecDeque<(f64, Reading)>,
    /// The reading published while the delay line fills.
    held: Option<Reading>,
}

impl Suite {
    /// The suite of vehicle `name` with `settings` (already validated).
    pub fn new(settings: Settings, name: &str) -> Suite {
        Suite::keyed(settings, fnv(name))
    }

    /// The suite of the same vehicle with other `settings` (already
    /// validated), from the start: what a sweep run uses when it draws a
    /// sensor field (docs/sweeps.md). The streams are those
    /// [`Suite::new`] gives this vehicle with these settings.
    pub fn with_settings(&self, settings: Settings) -> Suite {
        Suite::keyed(settings, self.key)
    }

    /// The settings this suite was made with.
    pub fn settings(&self) -> &Settings {
        &self.s
    }

    fn keyed(settings: Settings, key: u64) -> Suite {
        let base = Rng::for_run(settings.seed, key).next_u64();
        let rng = Streams {
            gps: Rng::for_run(base, 1),
            outlier: Rng::for_run(base, 2),
            heading: Rng::for_run(base, 3),
            speed: Rng::for_run(base, 4),
            depth: Rng::for_run(base, 5),
        };
        let mut schedule = fault::Schedule::default();
        for f in &settings.faults {
            // The list was checked against the cap when it was read.
            let _ = schedule.add(f, 0.0);
        }
        Suite {
            s: settings,
            key,
            rng,
            bias: None,
            off: [false; 4],
            schedule,
            delayed: VecDeque::new(),
            held: None,
        }
    }

    /// As the model's boxed seam.
    pub fn boxed(self) -> SensorBox {
        SensorBox(Box::new(self))
    }

    /// The GPS bias (east, north) after the last reading, m (0 before).
    pub fn bias(&self) -> (f64, f64) {
        self.bias.map_or((0.0, 0.0), |b| (b.0, b.1))
    }

    /// Whether sensor `w` is failed now.
    pub fn is_off(&self, w: Which) -> bool {
        self.off[w as usize]
    }

    /// Advance the Gauss–Markov bias to mission time `t`:
    /// b ← φ·b + σ_b·√(1−φ²)·n, φ = exp(−Δt/τ), n ~ N(0, 1) per axis; the
    /// first value is drawn from the stationary N(0, σ_b²).
    fn advance_bias(&mut self, t: f64) -> (f64, f64) {
        let (sb, tau) = (self.s.gps_bias_sigma, self.s.gps_bias_tau);
        if sb <= 0.0 {
            return (0.0, 0.0);
        }
        let g = &mut self.rng.gps;
        let (bx, by) = match self.bias {
            None => (sb * g.normal(), sb * g.normal()),
            Some((bx, by, t0)) => {
                let dt = (t - t0).max(0.0);
                let phi = (-dt / tau).exp();
                let k = sb * (1.0 - phi * phi).sqrt();
                (phi * bx + k * g.normal(), phi * by + k * g.normal())
            }
        };
        self.bias = Some((bx, by, t));
        (bx, by)
    }

    /// One reading of `truth`, before the latency.
    fn read(&mut self, truth: &Truth) -> Reading {
        for (w, on) in self.schedule.due(truth.t) {
            match w {
                Some(w) => self.off[w as usize] = !on,
                None => self.off = [!on; 4],
            }
        }
        let (bx, by) = self.advance_bias(truth.t);
        let s = &self.s;
        let s_ = s.gps_sigma;
        let (mut wx, mut wy) = (0.0, 0.0);
        if s_ > 0.0 {
            wx = s_ * self.rng.gps.normal();
            wy = s_ * self.rng.gps.normal();
        }
        let (mut ox, mut oy) = (0.0, 0.0);
        if s.gps_outlier_prob > 0.0 {
            let u = self.rng.outlier.unit();
            let a = self.rng.outlier.unit() * std::f64::consts::TAU;
            if u < s.gps_outlier_prob {
                ox = s.gps_outlier_m * a.sin();
                oy = s.gps_outlier_m * a.cos();
            }
        }
        let noise = |r: &mut Rng, sigma: f64| {
            if sigma > 0.0 {
                sigma * r.normal()
            } else {
                0.0
            }
        };
        let dh = noise(&mut self.rng.heading, s.heading_sigma);
        let dv = noise(&mut self.rng.speed, s.speed_sigma);
        let dd = noise(&mut self.rng.depth, s.depth_sigma);
        let gps_on = !self.off[Which::Gps as usize];
        let add = |v: f64, d: f64| if d == 0.0 { v } else { v + d };
        Reading {
            pos: gps_on.then(|| (add(truth.x, bx + wx + ox), add(truth.y, by + wy + oy))),
            heading: (!self.off[Which::Heading as usize])
                .then(|| add(truth.heading, s.heading_bias + dh)),
            speed: (!self.off[Which::Speed as usize]).then(|| add(truth.speed, dv)),
            depth: (!self.off[Which::Depth as usize]).then(|| {
                if s.depth_sigma > 0.0 {
                    (truth.depth + dd).max(0.0)
                } else {
                    truth.depth
                }
            }),
            fix_quality: if gps_on { s.gps_fix_quality } else { 0 },
            hdop: if gps_on { s.hdop() } else { f64::NAN },
            satellites: if gps_on { s.gps_satellites } else { 0 },
        }
    }
}

impl NavSensors for Suite {
    fn sense(&mut self, truth: &Truth) -> Reading {
        let now = self.read(truth);
        if self.s.latency <= 0.0 {
            return now;
        }
        if self.delayed.len() >= MAX_DELAYED {
            self.delayed.pop_front();
        }
        self.delayed.push_back((truth.t, now));
        // The newest reading at least `latency` old; the first one until then.
        let due = truth.t - self.s.latency;
        while let Some(&(t0, r)) = self.delayed.front() {
            if t0 > due + 1e-9 {
                break;
            }
            self.held = Some(r);
            self.delayed.pop_front();
        }
        match self.held {
            Some(r) => r,
            None => self.delayed.front().map_or(now, |e| e.1),
        }
    }

    fn command(&mut self, text: &str, t: f64) -> Result<(), String> {
        let ev = fault::parse(text)?;
        self.schedule.add(&ev, t)
    }

    fn box_clone(&self) -> Box<dyn NavSensors> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests;
