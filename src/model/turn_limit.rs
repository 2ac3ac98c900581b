//! uSimMarineV22's turn-radius limit (docs/v22.md §6): after the position
//! step, a chord that deviates from the prior heading more than a circle of
//! radius `R` allows is turned back onto that circle.
//!
//! Units: metres, m/s, degrees. Follows the C++'s evaluation order (libm
//! `hypot`, `asin`, `sin`, `cos`), with one correction: where the C++ would
//! produce NaN (`asin` of more than 1, or a non-positive effective radius)
//! the step is left unlimited (docs/v22.md §14).
use super::angles::{angle360, deg_to_radians, rad_to_degrees, rel_ang};

/// The record before and after the position step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chord {
    /// Prior position, m.
    pub x1: f64,
    /// Prior position, m.
    pub y1: f64,
    /// Prior heading as stored, degrees.
    pub h1: f64,
    /// Speed after the speed step, before averaging, m/s.
    pub v1: f64,
    /// Position after the step, m.
    pub x2: f64,
    /// Position after the step, m.
    pub y2: f64,
    /// Heading after the step, degrees.
    pub h2: f64,
    /// Stored speed after the step (the step mean), m/s.
    pub v2: f64,
}

/// The limited position and heading, or `None` when the step stands.
/// `radius` > 0 (m); `max_speed` ≤ 0 means no speed scaling of the radius.
pub fn limit(c: &Chord, radius: f64, max_speed: f64) -> Option<(f64, f64, f64)> {
    if c.h1 == c.h2 {
        return None;
    }
    let u = (c.v1 + c.v2) / 2.0;
    let mut r_e = radius;
    if max_speed > 0.0 && u < max_speed {
        r_e = (1.0 - ((max_speed - u) / max_speed)) * radius;
    }
    let d = (c.x1 - c.x2).hypot(c.y1 - c.y2);
    let beta = rel_ang(c.x1, c.y1, c.x2, c.y2);
    let alpha = angle_diff(beta, c.h1);
    let ratio = d / (2.0 * r_e);
    // Correction of the C++ (NaN there): no valid circle, no limit.
    if r_e.is_nan() || r_e <= 0.0 || ratio.is_nan() || ratio > 1.0 {
        return None;
    }
    let phi = rad_to_degrees(ratio.asin());
    if phi >= alpha {
        return None;
    }
    let port = angle360(c.h2 - c.h1) > 180.0;
    let psi = if port { c.h1 - phi } else { c.h1 + phi };
    let (x, y) = project_point(psi, d, c.x1, c.y1);
    let h = if port {
        angle360(c.h1 - phi * 2.0)
    } else {
        angle360(c.h1 + phi * 2.0)
    };
    Some((x, y, h))
}

/// `angleDiff(a, b)`: the unsigned difference of two angles, [0, 180], degrees.
pub fn angle_diff(a: f64, b: f64) -> f64 {
    let a = angle360(a);
    let b = angle360(b);
    let mut d = if b > a { b - a } else { a - b };
    if d >= 180.0 {
        d = 360.0 - d;
    }
    d
}

/// `projectPoint(ψ, d, x, y)`: the point `d` metres from `(x, y)` on marine
/// bearing `ψ` (degrees), exact on the four axes.
pub fn project_point(psi: f64, d: f64, x: f64, y: f64) -> (f64, f64) {
    let psi = if !(0.0..360.0).contains(&psi) {
        angle360(psi)
    } else {
        psi
    };
    if psi == 0.0 {
        (x, y + d)
    } else if psi == 90.0 {
        (x + d, y)
    } else if psi == 180.0 {
        (x, y - d)
    } else if psi == 270.0 {
        (x - d, y)
    } else {
        let rho = deg_to_radians(psi);
        (x + rho.sin() * d, y + rho.cos() * d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angle_diff_is_unsigned_on_the_circle() {
        assert_eq!(angle_diff(350.0, 10.0), 20.0);
        assert_eq!(angle_diff(10.0, 350.0), 20.0);
        assert_eq!(angle_diff(0.0, 180.0), 180.0);
        assert_eq!(angle_diff(-90.0, 90.0), 180.0);
    }

    #[test]
    fn project_point_axes_are_exact() {
        assert_eq!(project_point(0.0, 2.0, 1.0, 1.0), (1.0, 3.0));
        assert_eq!(project_point(450.0, 2.0, 1.0, 1.0), (3.0, 1.0));
        assert_eq!(project_point(-180.0, 2.0, 1.0, 1.0), (1.0, -1.0));
    }

    #[test]
    fn a_sharp_turn_is_bent_onto_the_circle() {
        // from (0,0) heading 0, the step went to heading 90 and moved 1 m east.
        let c = Chord {
            x1: 0.0,
            y1: 0.0,
            h1: 0.0,
            v1: 1.0,
            x2: 1.0,
            y2: 0.0,
            h2: 90.0,
            v2: 1.0,
        };
        // R = 10: φ = asin(1/20) in degrees; starboard; heading 2φ.
        let phi = (1.0f64 / 20.0).asin().to_degrees();
        let (x, y, h) = limit(&c, 10.0, 0.0).unwrap();
        assert!((h - 2.0 * phi).abs() < 1e-12);
        assert!((x.hypot(y) - 1.0).abs() < 1e-12, "chord keeps its length");
        assert!((x - phi.to_radians().sin()).abs() < 1e-12);
        // below max_speed the radius shrinks: M = 2, u = 1 -> R_e = 5
        let (_, _, h5) = limit(&c, 10.0, 2.0).unwrap();
        let phi5 = (1.0f64 / 10.0).asin().to_degrees();
        assert!((h5 - 2.0 * phi5).abs() < 1e-12);
        // a gentle turn stands
        let g = Chord {
            h2: 1.0,
            x2: 0.0,
            y2: 1.0,
            ..c
        };
        assert_eq!(limit(&g, 10.0, 0.0), None);
    }

    #[test]
    fn no_nan_when_the_chord_exceeds_the_diameter_or_radius_is_zero() {
        let c = Chord {
            x1: 0.0,
            y1: 0.0,
            h1: 0.0,
            v1: 0.0,
            x2: 30.0,
            y2: 0.0,
            h2: 90.0,
            v2: 0.0,
        };
        assert_eq!(limit(&c, 10.0, 0.0), None); // d = 30 > 2R
        assert_eq!(limit(&c, 10.0, 5.0), None); // u = 0 -> R_e = 0
    }
}
