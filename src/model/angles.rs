//! uSimMarine's angle and number helpers (docs/model.md §20), written to evaluate
//! in the same order as the C++ so results are bit-identical.
//!
//! Marine angles: degrees, 0 = north (+y), 90 = east (+x), clockwise.
use std::f64::consts::PI;

/// Wrap an angle into [0, 360) degrees by repeated ±360 (`angle360`).
/// Non-finite input is returned as is (the callers never pass it).
#[inline]
pub fn angle360(a: f64) -> f64 {
    if (0.0..360.0).contains(&a) {
        return a; // the common case: nothing to wrap
    }
    angle360_wrap(a)
}

/// [`angle360`] for an angle outside [0, 360): out of line, so that the
/// common case inlines as two comparisons wherever a heading is wrapped.
#[inline(never)]
fn angle360_wrap(mut a: f64) -> f64 {
    if !a.is_finite() {
        return a;
    }
    // Each `a ∓ 360` of the loops below is exact (both are multiples of
    // a's ulp), so `%` (exact too) gives the same number with a bounded
    // cost: a heading of 1e9 would otherwise loop 2.8 million times.
    if a.abs() >= 3600.0 {
        a %= 360.0;
        if a == 0.0 {
            a = 0.0; // -0.0 from a negative multiple of 360: the loops give +0
        }
    }
    while a >= 360.0 {
        a -= 360.0;
    }
    while a < 0.0 {
        a += 360.0;
    }
    // -1e-14 + 360 rounds to 360: keep the result in [0, 360).
    if a >= 360.0 {
        0.0
    } else {
        a
    }
}

/// Wrap an angle into (−180, 180] degrees (`angle180`: 180 stays 180).
#[inline]
pub fn angle180(a: f64) -> f64 {
    if (0.0..=180.0).contains(&a) {
        return a; // angle360 keeps it, and it is not above 180 (−0.0 included)
    }
    if (-180.0..0.0).contains(&a) {
        // angle360's one turn, inline (a heading error, e.g. the PID's):
        // a + 360 is in [180, 360], and rounds to 360 only for a tiny a.
        let b = a + 360.0;
        return if b >= 360.0 {
            0.0
        } else if b > 180.0 {
            b - 360.0
        } else {
            b
        };
    }
    let a = angle360(a);
    if a > 180.0 {
        a - 360.0
    } else {
        a
    }
}

/// Degrees to radians as lib_geometry computes it: `(a/180)·π`.
pub fn deg_to_radians(a: f64) -> f64 {
    (a / 180.0) * PI
}

/// Radians to degrees as lib_geometry computes it: `(r/π)·180`.
pub fn rad_to_degrees(r: f64) -> f64 {
    (r / PI) * 180.0
}

/// Marine heading (degrees) to a math angle (radians, counter-clockwise from
/// east), wrapped once into [−π, π] (`headingToRadians`).
pub fn heading_to_radians(h: f64) -> f64 {
    let mut r = ((90.0 - h) * PI) / 180.0;
    if r > PI {
        r -= 2.0 * PI;
    } else if r < -PI {
        r += 2.0 * PI;
    }
    r
}

/// Marine bearing from A to B in degrees, [0, 360) (`relAng`); 0 if A == B.
pub fn rel_ang(xa: f64, ya: f64, xb: f64, yb: f64) -> f64 {
    let (w, sop) = match rel_ang_cases(xa, ya, xb, yb) {
        RelAng::Exact(a) => return a,
        RelAng::Quadrant { w, sop } => (w, sop),
    };
    let theta = rad_to_degrees(((yb - ya).abs() / (xb - xa).abs()).atan());
    angle360(theta * sop + w)
}

/// What `relAng` decides before its arctangent.
pub(crate) enum RelAng {
    /// A == B (0), or B due north, east, south or west of A.
    Exact(f64),
    /// Otherwise the bearing is `w + sop·atan(|Δy|/|Δx|)` in degrees.
    Quadrant { w: f64, sop: f64 },
}

/// `relAng`'s special cases and quadrant, in the C++'s order.
pub(crate) fn rel_ang_cases(xa: f64, ya: f64, xb: f64, yb: f64) -> RelAng {
    if xa == xb && ya == yb {
        return RelAng::Exact(0.0);
    }
    let w = if xb > xa { 90.0 } else { 270.0 };
    if ya == yb {
        return RelAng::Exact(w);
    }
    if xa == xb {
        return RelAng::Exact(if yb > ya { 0.0 } else { 180.0 });
    }
    let north = yb > ya;
    let east = xb > xa;
    let sop = if north == east { -1.0 } else { 1.0 };
    RelAng::Quadrant { w, sop }
}

/// Round to the nearest multiple of `step`, halves away from zero (`snapToStep`).
pub fn snap_to_step(v: f64, step: f64) -> f64 {
    if step <= 0.0 {
        return v;
    }
    let q = v / step;
    let n = if q >= 0.0 {
        trunc(q + 0.5)
    } else {
        trunc(q - 0.5)
    };
    n * step
}

/// `f64::trunc` without the library call (x86-64 before SSE4.1 has no
/// rounding instruction): the integer conversion truncates toward zero,
/// exactly; the sign is put back for −0.
fn trunc(x: f64) -> f64 {
    if x.abs() < 4_503_599_627_370_496.0 {
        ((x as i64) as f64).copysign(x)
    } else {
        x // already an integer (or NaN / infinite)
    }
}

/// MOOS `isNumber`: optional leading `+`, digits, at most one `.`, a `-` only
/// before any digit or dot; at least one digit; no exponent, no inner spaces.
pub fn is_number(s: &str) -> bool {
    let mut digits = 0;
    let mut dots = 0;
    let mut seen_body = false;
    for (i, c) in s.chars().enumerate() {
        match c {
            '0'..='9' => {
                digits += 1;
                seen_body = true;
            }
            '.' => {
                dots += 1;
                seen_body = true;
                if dots > 1 {
                    return false;
                }
            }
            '-' if !seen_body => {}
            '+' if i == 0 => {}
            _ => return false,
        }
    }
    digits > 0
}

/// C `atof` on decimal text: the longest leading `[+-]digits[.digits][e[+-]digits]`
/// prefix, 0 when there is none. (C would also read `inf`/`nan`; usim reads
/// them as 0 so that they never enter the state.)
pub fn atof(s: &str) -> f64 {
    let b = s.trim_start().as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut mantissa_digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        mantissa_digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return 0.0;
    }
    let mut end = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            end = j;
        }
    }
    std::str::from_utf8(&b[..end])
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|v| v.is_finite())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angle180_short_paths_equal_the_wrap_through_angle360() {
        // the definition: angle360, then above 180 minus 360
        let slow = |a: f64| {
            let a = angle360(a);
            if a > 180.0 {
                a - 360.0
            } else {
                a
            }
        };
        let mut edge = vec![
            -180.0,
            -179.999_999_999_999_97,
            -90.0,
            -1e-14,
            -1e-300,
            -f64::MIN_POSITIVE,
            -5e-324,
            -0.0,
            0.0,
            180.0,
            -180.000_000_000_000_03,
        ];
        // a 64-bit LCG over the bits of [-180, 0)
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            edge.push(-180.0 * ((x >> 11) as f64 / (1u64 << 53) as f64));
            edge.push(-f64::from_bits(x >> 2)); // any magnitude
        }
        for a in edge {
            assert_eq!(angle180(a).to_bits(), slow(a).to_bits(), "{a:e}");
        }
    }

    #[test]
    fn trunc_is_the_library_trunc() {
        for x in [
            0.0,
            -0.0,
            0.3,
            -0.3,
            0.5,
            -0.5,
            1.5,
            -2.5,
            2.999999999999999,
            4503599627370495.5,
            -4503599627370495.5,
            4503599627370496.0,
            1e300,
            -1e300,
            f64::INFINITY,
        ] {
            assert_eq!(trunc(x).to_bits(), x.trunc().to_bits(), "{x}");
        }
        assert!(trunc(f64::NAN).is_nan());
        assert_eq!(snap_to_step(-0.004, 0.01).to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn wraps() {
        assert_eq!(angle360(360.0), 0.0);
        assert_eq!(angle360(-30.0), 330.0);
        assert_eq!(angle360(400.0), 40.0);
        assert_eq!(angle180(180.0), 180.0);
        assert_eq!(angle180(190.0), -170.0);
    }

    /// uSimMarine's `angle360`: nothing but the two loops.
    fn angle360_loops(mut a: f64) -> f64 {
        while a >= 360.0 {
            a -= 360.0;
        }
        while a < 0.0 {
            a += 360.0;
        }
        a
    }

    #[test]
    fn large_angles_wrap_to_the_loops_result_in_bounded_time() {
        // 1e9 used to take 2.8 million subtractions (5 ms, found by fuzzing).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut cases = vec![
            1e9,
            -1e9,
            3600.0,
            -3600.0,
            -3960.0,
            7200.5,
            -7199.75,
            1e7 + 0.1,
        ];
        for _ in 0..4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
            let mag = 10f64.powf(unit * 7.0); // 1 .. 1e7
            cases.push(if x & 1 == 0 { mag } else { -mag });
            cases.push(((x >> 20) % 2_000) as f64 * 360.0 * if x & 2 == 0 { 1.0 } else { -1.0 });
        }
        for a in cases {
            let want = angle360_loops(a);
            let want = if want >= 360.0 { 0.0 } else { want };
            assert_eq!(angle360(a).to_bits(), want.to_bits(), "angle360({a})");
        }
    }

    #[test]
    fn rel_ang_quadrants() {
        assert_eq!(rel_ang(0.0, 0.0, 0.0, 0.0), 0.0);
        assert_eq!(rel_ang(0.0, 0.0, 1.0, 0.0), 90.0);
        assert_eq!(rel_ang(0.0, 0.0, -1.0, 0.0), 270.0);
        assert_eq!(rel_ang(0.0, 0.0, 0.0, -1.0), 180.0);
        assert!((rel_ang(0.0, 0.0, 1.0, 1.0) - 45.0).abs() < 1e-12);
        assert!((rel_ang(0.0, 0.0, 1.0, -1.0) - 135.0).abs() < 1e-12);
        assert!((rel_ang(0.0, 0.0, -1.0, -1.0) - 225.0).abs() < 1e-12);
        assert!((rel_ang(0.0, 0.0, -1.0, 1.0) - 315.0).abs() < 1e-12);
    }

    #[test]
    fn heading_to_radians_wraps_once() {
        assert!((heading_to_radians(90.0)).abs() < 1e-15);
        assert!((heading_to_radians(0.0) - PI / 2.0).abs() < 1e-15);
        // 300 deg: (90-300) = -210 deg -> wrapped to 150 deg.
        assert!((heading_to_radians(300.0) - deg_to_radians(150.0)).abs() < 1e-12);
    }

    #[test]
    fn snap() {
        assert_eq!(snap_to_step(1.234, 0.01), 123.0 * 0.01);
        assert_eq!(snap_to_step(-1.235, 0.01), -124.0 * 0.01);
        assert_eq!(snap_to_step(0.004, 0.01), 0.0);
    }

    #[test]
    fn moos_is_number() {
        for ok in ["1", "+1", "-1.5", ".5", "-.5", "10."] {
            assert!(is_number(ok), "{ok}");
        }
        for bad in ["2e-1", "", "-", ".", "1.2.3", "1 2", "bad", "1-", "1+"] {
            assert!(!is_number(bad), "{bad}");
        }
    }

    #[test]
    fn c_atof() {
        assert_eq!(atof("12.5abc"), 12.5);
        assert_eq!(atof("abc"), 0.0);
        assert_eq!(atof(" -3"), -3.0);
        assert_eq!(atof("2e-1"), 0.2);
        assert_eq!(atof("nan"), 0.0);
        assert_eq!(atof("1e999"), 0.0);
    }
}
