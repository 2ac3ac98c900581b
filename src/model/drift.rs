//! Drift messages (docs/model.md §13): `DRIFT_VECTOR`, `_ADD`, `_MULT` and the
//! `ang,mag` syntax. Drift is a velocity (m/s) added to the position.
use super::angles::{angle360, heading_to_radians, is_number, rel_ang};

/// Parse `"ang,mag"` (degrees, m/s) with uSimMarine's rules: split at the
/// first `,`, both sides trimmed and MOOS numbers (no exponents).
pub fn parse_vector(s: &str) -> Result<(f64, f64), String> {
    let Some((a, m)) = s.split_once(',') else {
        return Err("expected \"ang,mag\" (degrees, m/s)".to_string());
    };
    let (a, m) = (a.trim(), m.trim());
    if !is_number(a) || !is_number(m) {
        return Err(format!(
            "\"{a}\" / \"{m}\" are not both plain numbers (uSimMarine takes no exponents)"
        ));
    }
    match (a.parse::<f64>(), m.parse::<f64>()) {
        (Ok(a), Ok(m)) if a.is_finite() && m.is_finite() => Ok((a, m)),
        _ => Err("not finite numbers".to_string()),
    }
}

/// Check a drift (east, north), m/s: each component within
/// ±[`crate::command::limits::DRIFT_MPS`].
pub fn check(d: (f64, f64)) -> Result<(), String> {
    let lim = crate::command::limits::DRIFT_MPS;
    if d.0.is_finite() && d.1.is_finite() && d.0.abs() <= lim && d.1.abs() <= lim {
        Ok(())
    } else {
        Err(format!(
            "the drift would be ({}, {}) m/s: outside the accepted ±{lim} m/s per component (physical bound)",
            d.0, d.1
        ))
    }
}

/// Components (d_x, d_y), m/s, of a marine-angle vector.
pub fn components(ang: f64, mag: f64) -> (f64, f64) {
    let rho = heading_to_radians(angle360(ang));
    (rho.cos() * mag, rho.sin() * mag)
}

/// Drift after `DRIFT_VECTOR_ADD`: component-wise addition.
pub fn add(drift: (f64, f64), ang: f64, mag: f64) -> (f64, f64) {
    let rho = heading_to_radians(angle360(ang));
    (drift.0 + rho.cos() * mag, drift.1 + rho.sin() * mag)
}

/// Drift after `DRIFT_VECTOR_MULT k`, through relAng and hypot as uSimMarine does.
pub fn mult(drift: (f64, f64), k: f64) -> (f64, f64) {
    let ang = rel_ang(0.0, 0.0, drift.0, drift.1);
    let mag = drift.0.hypot(drift.1) * k;
    let rho = heading_to_radians(ang);
    (rho.cos() * mag, rho.sin() * mag)
}

/// Magnitude (m/s) and marine angle (degrees) for the drift summary.
pub fn polar(drift: (f64, f64)) -> (f64, f64) {
    (drift.0.hypot(drift.1), rel_ang(0.0, 0.0, drift.0, drift.1))
}

/// `%.Nf` with trailing zeros and a trailing `.` removed (`doubleToStringX`).
pub fn fmt_x(v: f64, digits: usize) -> String {
    let s = format!("{v:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// `USM_DRIFT_SUMMARY`: `ang=<2dp>, mag=<2dp>, xmag=<3dp>, ymag=<3dp>`.
pub fn summary(drift: (f64, f64)) -> String {
    let (mag, ang) = polar(drift);
    format!(
        "ang={}, mag={}, xmag={}, ymag={}",
        fmt_x(ang, 2),
        fmt_x(mag, 2),
        fmt_x(drift.0, 3),
        fmt_x(drift.1, 3)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rules() {
        assert_eq!(parse_vector(" 45 , 0.7"), Ok((45.0, 0.7)));
        assert!(parse_vector("bad,1").is_err());
        assert!(parse_vector("10, 2e-1").is_err()); // golden run 10
        assert!(parse_vector("10").is_err());
    }

    #[test]
    fn components_and_opposites_cancel() {
        let (x, y) = components(90.0, 0.5);
        assert!((x - 0.5).abs() < 1e-15 && y.abs() < 1e-15);
        let d = add(add((0.0, 0.0), 45.0, 0.7), 225.0, 0.7);
        assert!(d.0.abs() < 1e-15 && d.1.abs() < 1e-15);
        // angle > 360 and negative magnitude: 400 = 40 deg, reversed
        let (x, y) = components(400.0, -0.3);
        assert!((x + 0.3 * 40f64.to_radians().sin()).abs() < 1e-12);
        assert!((y + 0.3 * 40f64.to_radians().cos()).abs() < 1e-12);
    }

    #[test]
    fn mult_scales_and_flips() {
        let d = mult((0.3, -0.4), 2.0);
        assert!((d.0 - 0.6).abs() < 1e-12 && (d.1 + 0.8).abs() < 1e-12);
        let d = mult((0.3, -0.4), -1.0);
        assert!((d.0 + 0.3).abs() < 1e-12 && (d.1 - 0.4).abs() < 1e-12);
        assert_eq!(mult((0.0, 0.0), 3.0), (0.0, 0.0));
    }

    #[test]
    fn summary_format() {
        assert_eq!(summary((0.5, 0.0)), "ang=90, mag=0.5, xmag=0.5, ymag=0");
    }
}
