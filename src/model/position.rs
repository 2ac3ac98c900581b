//! Position step (`SimEngine::propagate`, docs/model.md §10): mean speed, vector
//! mean heading, drift; speed and heading over ground.
use super::angles::{deg_to_radians, rel_ang};
use super::trig::{self, MathMode};

/// Result of the position step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionOut {
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// New stored speed: the step mean, m/s (negative astern).
    pub speed: f64,
    /// Speed over ground, m/s (≥ 0).
    pub sog: f64,
    /// Heading over ground, degrees [0, 360).
    pub hog: f64,
}

/// Sine and cosine of a marine heading in degrees, as the position step
/// needs them (`sin(deg2rad(h))`, `cos(deg2rad(h))`).
pub fn heading_sin_cos(h_deg: f64) -> (f64, f64) {
    let r = deg_to_radians(h_deg);
    (r.sin(), r.cos())
}

/// Advance (x_p, y_p) over `dt_s` with speeds `v_p → v_n` (m/s), headings
/// `h_p → h_n` (degrees) and drift (d_x, d_y) (m/s), with uSimMarine's own
/// libm calls (`math = "libm"`).
#[allow(clippy::too_many_arguments)]
pub fn propagate_position(
    x_p: f64,
    y_p: f64,
    v_p: f64,
    v_n: f64,
    h_p: f64,
    h_n: f64,
    drift: (f64, f64),
    dt_s: f64,
) -> PositionOut {
    let mut memo = TrigMemo::default();
    propagate_position_memo(
        x_p,
        y_p,
        v_p,
        v_n,
        h_p,
        h_n,
        None,
        drift,
        dt_s,
        &mut memo,
        MathMode::Libm,
    )
}

/// Memo of the position step's trigonometry. A vehicle's prior heading is
/// its last new heading, and a vehicle holding course repeats the same
/// mean direction every step: both are reused instead of recomputed. The
/// results are the same numbers (same function of the same bits).
#[derive(Debug, Clone, Copy)]
pub struct TrigMemo {
    heading: f64,
    heading_sc: (f64, f64),
    sum_bits: (u64, u64),
    direction_sc: (f64, f64),
}

impl Default for TrigMemo {
    fn default() -> Self {
        TrigMemo {
            heading: f64::NAN,
            heading_sc: (0.0, 0.0),
            sum_bits: (u64::MAX, u64::MAX),
            direction_sc: (0.0, 1.0),
        }
    }
}

impl TrigMemo {
    /// [`heading_sin_cos`] of `h_deg`, reusing the last one when equal.
    pub fn heading_sin_cos(&mut self, h_deg: f64) -> (f64, f64) {
        if h_deg.to_bits() != self.heading.to_bits() {
            self.heading = h_deg;
            self.heading_sc = heading_sin_cos(h_deg);
        }
        self.heading_sc
    }

    /// `(sin φ, cos φ)` with `φ = atan2(s, c)`, reusing the last one when equal.
    pub fn direction_sin_cos(&mut self, s: f64, c: f64) -> (f64, f64) {
        let key = (s.to_bits(), c.to_bits());
        if key != self.sum_bits {
            let phi = s.atan2(c);
            self.sum_bits = key;
            self.direction_sc = (phi.sin(), phi.cos());
        }
        self.direction_sc
    }

    /// `math = "fast"`: `(sin φ, cos φ)` of the mean heading φ (degrees),
    /// reusing the last one when φ is the same bits.
    pub fn mean_direction_fast(&mut self, phi: f64) -> (f64, f64) {
        let key = (phi.to_bits(), 0);
        if key != self.sum_bits {
            self.sum_bits = key;
            self.direction_sc = trig::sin_cos_deg(phi);
        }
        self.direction_sc
    }
}

/// The inputs of a position step's heading over ground: the bearing from
/// `from` to `to` (m), with `math = "fast"` hinted by the velocity over
/// ground `hint` (m/s). Kept by the record and evaluated when read: the
/// same function of the same numbers as computing it in the step, so the
/// same bits. The default (all zero) is a bearing of 0.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HogInputs {
    /// Position before the step (x, y), m.
    pub from: (f64, f64),
    /// Position after the step, before any turn-radius limit (x, y), m.
    pub to: (f64, f64),
    /// Velocity over ground of the step (east, north), m/s.
    pub hint: (f64, f64),
    /// `math = "fast"` (else libm's `relAng`).
    pub fast: bool,
}

impl HogInputs {
    /// Heading over ground, degrees in [0, 360).
    pub fn value(&self) -> f64 {
        let ((xa, ya), (xb, yb)) = (self.from, self.to);
        if self.fast {
            trig::rel_ang_hinted(xa, ya, xb, yb, self.hint.0, self.hint.1)
        } else {
            rel_ang(xa, ya, xb, yb)
        }
    }
}

/// [`PositionOut`] without the heading over ground, which it leaves as its
/// inputs (the model step's form: the bearing is computed when read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PositionStep {
    /// New east, m.
    pub x: f64,
    /// New north, m.
    pub y: f64,
    /// Stored speed, m/s (signed).
    pub speed: f64,
    /// Speed over ground, m/s.
    pub sog: f64,
    /// The heading over ground's inputs.
    pub hog: HogInputs,
}

/// [`propagate_position`] with its trigonometry memoized in `memo`.
/// `h_mean`, when given, is the bisector of `h_p` and `h_n` as the caller
/// knows it from the turn (used by `math = "fast"` only).
#[allow(clippy::too_many_arguments)]
pub fn propagate_position_memo(
    x_p: f64,
    y_p: f64,
    v_p: f64,
    v_n: f64,
    h_p: f64,
    h_n: f64,
    h_mean: Option<f64>,
    drift: (f64, f64),
    dt_s: f64,
    memo: &mut TrigMemo,
    math: MathMode,
) -> PositionOut {
    let s = position_step(
        x_p, y_p, v_p, v_n, h_p, h_n, h_mean, drift, dt_s, memo, math,
    );
    PositionOut {
        x: s.x,
        y: s.y,
        speed: s.speed,
        sog: s.sog,
        hog: s.hog.value(),
    }
}

/// [`propagate_position_memo`] with the heading over ground left as its
/// inputs.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn position_step(
    x_p: f64,
    y_p: f64,
    v_p: f64,
    v_n: f64,
    h_p: f64,
    h_n: f64,
    h_mean: Option<f64>,
    drift: (f64, f64),
    dt_s: f64,
    memo: &mut TrigMemo,
    math: MathMode,
) -> PositionStep {
    let v_mean = (v_n + v_p) / 2.0;
    let (sin_phi, cos_phi) = match math {
        MathMode::Fast => {
            memo.mean_direction_fast(h_mean.unwrap_or_else(|| trig::mean_heading_deg(h_p, h_n)))
        }
        MathMode::Libm => {
            let sc_p = memo.heading_sin_cos(h_p);
            let sc_n = memo.heading_sin_cos(h_n);
            let s = sc_p.0 + sc_n.0;
            let c = sc_p.1 + sc_n.1;
            memo.direction_sin_cos(s, c)
        }
    };
    let hypot = |a: f64, b: f64| match math {
        MathMode::Fast => trig::hypot(a, b),
        MathMode::Libm => a.hypot(b),
    };
    let xdot = sin_phi * v_mean;
    let ydot = cos_phi * v_mean;
    let x = (x_p + xdot * dt_s) + drift.0 * dt_s;
    let y = (y_p + ydot * dt_s) + drift.1 * dt_s;
    let magnitude = hypot(xdot, ydot);
    let speed = if v_mean < 0.0 { -magnitude } else { magnitude };
    // Without drift, hypot(ẋ + 0, ẏ + 0) is the same number as above.
    let sog = if drift == (0.0, 0.0) {
        magnitude
    } else {
        hypot(xdot + drift.0, ydot + drift.1)
    };
    let hog = HogInputs {
        from: (x_p, y_p),
        to: (x, y),
        hint: (xdot + drift.0, ydot + drift.1),
        fast: math == MathMode::Fast,
    };
    PositionStep {
        x,
        y,
        speed,
        sog,
        hog,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_speed_is_the_mean() {
        // docs/model.md §7 example: (0.04 + 0)/2 = 0.02, heading 45
        let o = propagate_position(0.0, 0.0, 0.0, 0.04, 45.0, 45.0, (0.0, 0.0), 0.1);
        assert!((o.speed - 0.02).abs() < 1e-17);
        let d = 0.02 * 0.1 / 2f64.sqrt();
        assert!((o.x - d).abs() < 1e-15 && (o.y - d).abs() < 1e-15);
        assert!((o.hog - 45.0).abs() < 1e-9);
    }

    #[test]
    fn vector_mean_heading_across_north() {
        // 350 and 10 average to 0 (north), not 180
        let o = propagate_position(0.0, 0.0, 1.0, 1.0, 350.0, 10.0, (0.0, 0.0), 1.0);
        assert!(o.x.abs() < 1e-12 && (o.y - 1.0).abs() < 1e-12);
    }

    #[test]
    fn drift_moves_position_not_speed() {
        let o = propagate_position(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, (0.5, 0.0), 0.1);
        assert_eq!(o.speed, 0.0);
        assert_eq!(o.x, 0.05);
        assert_eq!(o.sog, 0.5);
        assert_eq!(o.hog, 90.0);
        // astern: negative stored speed
        let o = propagate_position(0.0, 0.0, -1.0, -1.0, 0.0, 0.0, (0.0, 0.0), 1.0);
        assert_eq!(o.speed, -1.0);
        assert_eq!(o.hog, 180.0);
    }
}
