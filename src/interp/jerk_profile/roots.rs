//! Real roots of low-degree polynomials on an interval.
//!
//! The profile equations reduce to polynomials of degree at most four in one
//! unknown. Closed-form quartic formulas lose accuracy exactly where profile
//! regimes meet (double roots), so roots are *isolated* instead: the
//! inflection points split the interval into convex or concave pieces, and
//! each piece with a sign change is solved by safeguarded Laguerre steps. A
//! local extremum whose value is zero within rounding counts as a (double)
//! root. (The tests compare with an isolation by the derivative's roots.)

/// `max`/`min` without the NaN handling of `f64::max` (one instruction
/// each): a NaN `self` gives `other`, like `f64::max`; a NaN `other` gives
/// NaN (never the case here: the second operand is a bound or a constant).
pub(crate) trait FastMinMax {
    fn fmax(self, other: Self) -> Self;
    fn fmin(self, other: Self) -> Self;
}

impl FastMinMax for f64 {
    #[inline(always)]
    fn fmax(self, other: f64) -> f64 {
        if self > other {
            self
        } else {
            other
        }
    }
    #[inline(always)]
    fn fmin(self, other: f64) -> f64 {
        if self < other {
            self
        } else {
            other
        }
    }
}

/// `if c { x } else { y }` without a branch: the compiler makes a branch
/// of a plain `if` that moves one of two values, which the processor
/// mispredicts when `c` is a coin toss; through the bits it cannot.
#[inline(always)]
pub(crate) fn select(c: bool, x: f64, y: f64) -> f64 {
    let m = 0u64.wrapping_sub(c as u64);
    f64::from_bits((x.to_bits() & m) | (y.to_bits() & !m))
}

/// Maximum number of roots returned (degree 4).
pub(crate) const MAX_ROOTS: usize = 4;

/// A small fixed-capacity list of ascending roots.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Roots {
    pub(crate) len: usize,
    pub(crate) x: [f64; MAX_ROOTS],
}

impl Roots {
    fn push(&mut self, r: f64) {
        if self.len > 0 {
            let last = self.x[self.len - 1];
            if (r - last).abs() <= 1e-14 * (1.0 + r.abs()) {
                return;
            }
        }
        if self.len < MAX_ROOTS {
            self.x[self.len] = r;
            self.len += 1;
        }
    }

    /// The roots found, ascending.
    pub(crate) fn as_slice(&self) -> &[f64] {
        &self.x[..self.len]
    }
}

/// Value of `c[0] + c[1] x + ... + c[n] x^n` and a bound on its rounding error.
#[cfg(test)]
#[inline]
fn eval_with_bound(c: &[f64], x: f64) -> (f64, f64) {
    let mut f = 0.0;
    let mut b = 0.0;
    let ax = x.abs();
    for &ck in c.iter().rev() {
        f = f * x + ck;
        b = b * ax + ck.abs();
    }
    (f, b * 8.0 * f64::EPSILON * c.len() as f64)
}

#[cfg(test)]
#[inline]
fn eval_deriv(c: &[f64], x: f64) -> (f64, f64) {
    let mut f = 0.0;
    let mut d = 0.0;
    for &ck in c.iter().rev() {
        d = d * x + f;
        f = f * x + ck;
    }
    (f, d)
}

/// Root of a monotone polynomial piece on `[a, b]` where `fa`, `fb` have
/// opposite signs: Newton steps, falling back to bisection when a step leaves
/// the bracket or does not shrink it fast enough.
#[cfg(test)]
fn bracketed(c: &[f64], mut a: f64, mut b: f64, fa: f64) -> f64 {
    let rising = fa < 0.0;
    let mut x = 0.5 * (a + b);
    for _ in 0..100 {
        let (f, d) = eval_deriv(c, x);
        if f == 0.0 {
            return x;
        }
        if (f < 0.0) == rising {
            a = x;
        } else {
            b = x;
        }
        let mut next = if d != 0.0 { x - f / d } else { f64::NAN };
        if !(next > a && next < b) {
            next = 0.5 * (a + b);
        }
        if (next - x).abs() <= 4.0 * f64::EPSILON * x.abs().fmax(f64::MIN_POSITIVE)
            || b - a <= 4.0 * f64::EPSILON * a.abs().fmax(b.abs())
        {
            return next;
        }
        x = next;
    }
    x
}

/// Real roots in `[lo, hi]` of `c[0] + c[1] x + ... + c[n] x^n`, `n <= 4`,
/// ascending. Leading coefficients that are zero relative to the others are
/// dropped. (The tests' reference for [`poly_roots`]: isolation by the
/// derivative's roots, bracketed Newton.)
#[cfg(test)]
pub(crate) fn roots_in(c: &[f64], lo: f64, hi: f64) -> Roots {
    let mut out = Roots::default();
    if lo > hi || lo.is_nan() || hi.is_nan() {
        return out;
    }
    let scale = c.iter().fold(0.0f64, |m, v| m.fmax(v.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return out;
    }
    let mut n = c.len() - 1;
    while n > 0 && c[n].abs() <= 1e-15 * scale {
        n -= 1;
    }
    let c = &c[..=n];
    match n {
        0 => out,
        1 => {
            let r = -c[0] / c[1];
            if r >= lo && r <= hi {
                out.push(r);
            }
            out
        }
        2 => {
            quadratic(c[0], c[1], c[2], lo, hi, &mut out);
            out
        }
        _ => {
            // Critical points from the derivative.
            let mut d = [0.0; MAX_ROOTS];
            for k in 1..=n {
                d[k - 1] = c[k] * k as f64;
            }
            let crit = roots_in(&d[..n], lo, hi);
            let mut a = lo;
            let (mut fa, mut ba) = eval_with_bound(c, a);
            if fa.abs() <= ba {
                out.push(a);
            }
            for &b in crit.as_slice().iter().chain(std::iter::once(&hi)) {
                if b <= a {
                    continue;
                }
                let (fb, bb) = eval_with_bound(c, b);
                let za = fa.abs() <= ba;
                let zb = fb.abs() <= bb;
                if !za && !zb && (fa < 0.0) != (fb < 0.0) {
                    out.push(bracketed(c, a, b, fa));
                }
                if zb {
                    out.push(b);
                }
                a = b;
                fa = fb;
                ba = bb;
            }
            out
        }
    }
}

/// Real roots in `[lo, hi]` of `c[0] + c[1] x + c[2] x^2`, ascending;
/// leading coefficients that are zero relative to the others are dropped.
#[inline(always)]
pub(crate) fn quadratic_in(c: [f64; 3], lo: f64, hi: f64) -> Roots {
    let mut out = Roots::default();
    let scale = c[0].abs().fmax(c[1].abs()).fmax(c[2].abs());
    if lo > hi || lo.is_nan() || hi.is_nan() || scale == 0.0 || !scale.is_finite() {
        return out;
    }
    if c[2].abs() > 1e-15 * scale {
        quadratic(c[0], c[1], c[2], lo, hi, &mut out);
    } else if c[1].abs() > 1e-15 * scale {
        let r = -c[0] / c[1];
        if r >= lo && r <= hi {
            out.push(r);
        }
    }
    out
}

/// Roots of `c0 + c1 x + c2 x^2` in `[lo, hi]` (numerically stable form);
/// a near-zero discriminant gives the double root.
#[inline(always)]
fn quadratic(c0: f64, c1: f64, c2: f64, lo: f64, hi: f64, out: &mut Roots) {
    let disc = c1 * c1 - 4.0 * c2 * c0;
    let tol = 16.0 * f64::EPSILON * (c1 * c1 + (4.0 * c2 * c0).abs());
    let (r1, r2) = if disc < 0.0 {
        if disc < -tol {
            return;
        }
        let r = -c1 / (2.0 * c2);
        (r, r)
    } else {
        let s = disc.sqrt();
        let q = -0.5 * (c1 + if c1 >= 0.0 { s } else { -s });
        if q == 0.0 {
            (0.0, 0.0)
        } else {
            let x1 = q / c2;
            let x2 = c0 / q;
            (x1.fmin(x2), x1.fmax(x2))
        }
    };
    for r in [r1, r2] {
        if r >= lo && r <= hi {
            out.push(r);
        }
    }
}

/// Value, first and second derivative of `c[0] + ... + c[4] x^4`.
#[inline(always)]
fn eval2(c: &[f64; 5], x: f64) -> (f64, f64, f64) {
    let mut f = c[4];
    let mut d = 0.0;
    let mut dd = 0.0;
    for k in (0..4).rev() {
        dd = dd * x + d;
        d = d * x + f;
        f = f * x + c[k];
    }
    (f, d, 2.0 * dd)
}

/// First derivative of `c[0] + ... + c[4] x^4`.
#[inline(always)]
fn deriv(c: &[f64; 5], x: f64) -> f64 {
    ((4.0 * c[4] * x + 3.0 * c[3]) * x + 2.0 * c[2]) * x + c[1]
}

/// Half the second derivative of `c[0] + ... + c[4] x^4`.
#[inline(always)]
fn half_second(c: &[f64; 5], x: f64) -> f64 {
    (6.0 * c[4] * x + 3.0 * c[3]) * x + c[2]
}

/// Value of `c[0] + ... + c[4] x^4` and a bound on its rounding error.
#[inline(always)]
fn eval_b(c: &[f64; 5], x: f64) -> (f64, f64) {
    let ax = x.abs();
    let mut f = c[4];
    let mut b = c[4].abs();
    for k in (0..4).rev() {
        f = f * x + c[k];
        b = b * ax + c[k].abs();
    }
    (f, b * 40.0 * f64::EPSILON)
}

/// Root in `(a, b)` of a polynomial that changes sign there and has no
/// inflection point inside: Laguerre steps from `x` (the Fourier end, where
/// the value and the second derivative have the same sign), kept inside the
/// shrinking bracket (bisection otherwise).
#[inline(always)]
fn newton_in(c: &[f64; 5], mut a: f64, mut b: f64, rising: bool, mut x: f64) -> f64 {
    let scale = a.abs().fmax(b.abs());
    // Steps below this are rounding noise (a root at or near 0 included).
    let tol = 4.0 * f64::EPSILON * scale;
    // A Newton correction below this (16 ulp) is not worth the
    // square root and division of another step.
    let tol_f = 16.0 * f64::EPSILON * scale;
    for _ in 0..100 {
        let (f, d, dd) = eval2(c, x);
        if f.abs() <= tol_f * d.abs() {
            return x;
        }
        // Which end moves is a coin toss, mispredicted as a branch: selects.
        let lower = (f < 0.0) == rising;
        a = select(lower, x, a);
        b = select(lower, b, x);
        // Laguerre's step (degree 4): exact for (x - r)^4, so a start far
        // from the root converges in a few steps where Newton would crawl.
        // With a negative radicand (complex roots near by) take Newton's
        // step, which converges monotonically from the Fourier end.
        let rad = 3.0 * (3.0 * d * d - 4.0 * f * dd);
        let mut next = if rad >= 0.0 {
            let w = rad.sqrt();
            x - 4.0 * f / (if d >= 0.0 { d + w } else { d - w })
        } else {
            x - f / d
        };
        // Converged: the step is rounding noise (x is now a bracket end,
        // so the step cannot land strictly inside).
        if (next - x).abs() <= tol {
            return next.clamp(a, b);
        }
        let step = (next - x).abs();
        if next > a && next < b {
            // Cubic convergence: the error left after a step `s` is about
            // `C s^3`, `C = f''^2/(4 f'^2) - f'''/(6 f')` (Halley's
            // constant, with a 100-fold margin for Laguerre's): below the
            // tolerance, evaluating at `next` would only confirm it.
            if step <= 1e-3 * scale {
                let d3 = 6.0 * c[3] + 24.0 * c[4] * x;
                let e = (6.0 * dd * dd - 4.0 * d3 * d).abs() * (step * step * step);
                if 100.0 * e <= 24.0 * d * d * tol_f {
                    return next;
                }
            }
        } else {
            next = x - f / d;
            if !(next > a && next < b) {
                next = 0.5 * (a + b);
            }
        }
        if (next - x).abs() <= tol || b - a <= tol {
            return next;
        }
        x = next;
    }
    x
}

/// Real roots in `[lo, hi]` of `c[0] + c[1] x + ... + c[4] x^4`, ascending,
/// leading coefficients that are zero relative to the others dropped (a
/// local extremum whose value is zero within rounding is a double root).
/// The interval is split at the
/// inflection points (closed form); on each piece the polynomial is convex
/// or concave, so a sign change is one root found by monotone Newton from
/// its Fourier end, and equal signs mean no root unless the extremum
/// between (Newton on the derivative, stopped as soon as the two end
/// tangents prove the extremum has the endpoints' sign) crosses zero.
// (Inlined into each family's search with `piece` and `newton_in`: the
// quartics' zero and constant coefficients fold, e.g. `c[3] = 0` of the
// no-plateau family.)
#[inline(always)]
pub(crate) fn poly_roots(mut c: [f64; 5], lo: f64, hi: f64) -> Roots {
    let mut out = Roots::default();
    if lo > hi || lo.is_nan() || hi.is_nan() {
        return out;
    }
    let scale = c.iter().fold(0.0f64, |m, v| m.fmax(v.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return out;
    }
    let mut n = 4;
    while n > 0 && c[n].abs() <= 1e-15 * scale {
        c[n] = 0.0;
        n -= 1;
    }
    match n {
        0 => return out,
        1 => {
            let r = -c[0] / c[1];
            if r >= lo && r <= hi {
                out.push(r);
            }
            return out;
        }
        2 => {
            quadratic(c[0], c[1], c[2], lo, hi, &mut out);
            return out;
        }
        _ => {}
    }
    // Inflection points: f''/2 = 6 c4 x^2 + 3 c3 x + c2.
    let mut infl = Roots::default();
    if n == 4 {
        quadratic(c[2], 3.0 * c[3], 6.0 * c[4], lo, hi, &mut infl);
    } else {
        let r = -c[2] / (3.0 * c[3]);
        if r >= lo && r <= hi {
            infl.push(r);
        }
    }
    let mut a = lo;
    let (mut fa, mut ba) = eval_b(&c, a);
    if fa.abs() <= ba {
        out.push(a);
    }
    for &b in infl.as_slice().iter().chain(std::iter::once(&hi)) {
        if b <= a {
            continue;
        }
        let (fb, bb) = eval_b(&c, b);
        piece(&c, a, b, fa, ba, fb, bb, &mut out);
        if fb.abs() <= bb {
            out.push(b);
        }
        a = b;
        fa = fb;
        ba = bb;
    }
    out
}

/// Roots strictly inside `(a, b)`, a piece without inflection point.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn piece(c: &[f64; 5], a: f64, b: f64, fa: f64, ba: f64, fb: f64, bb: f64, out: &mut Roots) {
    let (za, zb) = (fa.abs() <= ba, fb.abs() <= bb);
    let convex = half_second(c, 0.5 * (a + b)) >= 0.0;
    // Sign just inside each end (a zero end takes its slope's sign).
    let sa = if za {
        let d = deriv(c, a);
        if d == 0.0 {
            convex
        } else {
            d > 0.0
        }
    } else {
        fa > 0.0
    };
    let sb = if zb {
        let d = deriv(c, b);
        if d == 0.0 {
            convex
        } else {
            d < 0.0
        }
    } else {
        fb > 0.0
    };
    if sa != sb {
        // One root; start from the end whose sign is the curvature's.
        let x = if sb == convex { b } else { a };
        out.push(newton_in(c, a, b, !sa, x));
        return;
    }
    if sa != convex {
        // Concave and positive (or convex and negative) at both ends.
        return;
    }
    // Convex and positive at both ends (or the mirror): g = s·f.
    let s = if sa { 1.0 } else { -1.0 };
    let (mut gl, mut dl, mut xl) = (s * fa, s * deriv(c, a), a);
    let (mut gr, mut dr, mut xr) = (s * fb, s * deriv(c, b), b);
    if dl >= 0.0 || dr <= 0.0 {
        return; // monotone
    }
    let mut x = if -dl < dr { a } else { b };
    let mut dd = s * 2.0 * half_second(c, x);
    let mut dx = if x == a { dl } else { dr };
    for _ in 0..100 {
        // The tangents at xl and xr bound g from below.
        let xs = (gr - gl + dl * xl - dr * xr) / (dl - dr);
        let low = gl + dl * (xs - xl);
        let (_, bx) = eval_b(c, xs);
        if low > bx {
            return;
        }
        let mut next = x - dx / dd;
        if !(next > xl && next < xr) {
            next = if xs > xl && xs < xr {
                xs
            } else {
                0.5 * (xl + xr)
            };
        }
        let (f, d, d2) = eval2(c, next);
        let (g, dg) = (s * f, s * d);
        let (_, bn) = eval_b(c, next);
        if g < -bn {
            // Two simple roots around the extremum.
            out.push(newton_in(c, a, next, s < 0.0, a));
            out.push(newton_in(c, next, b, s > 0.0, b));
            return;
        }
        let done = (next - x).abs() <= 4.0 * f64::EPSILON * next.abs().fmax(f64::MIN_POSITIVE)
            || xr - xl <= 4.0 * f64::EPSILON * xl.abs().fmax(xr.abs());
        if done || dg == 0.0 {
            if g <= bn {
                out.push(next); // double root
            }
            return;
        }
        if dg < 0.0 {
            (gl, dl, xl) = (g, dg, next);
        } else {
            (gr, dr, xr) = (g, dg, next);
        }
        x = next;
        dx = dg;
        dd = s * d2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poly_from_roots(r: &[f64]) -> Vec<f64> {
        let mut c = vec![1.0];
        for &x in r {
            let mut n = vec![0.0; c.len() + 1];
            for (k, &ck) in c.iter().enumerate() {
                n[k + 1] += ck;
                n[k] -= x * ck;
            }
            c = n;
        }
        c
    }

    #[test]
    fn quartic_four_simple_roots() {
        let c = poly_from_roots(&[-1.5, 0.25, 2.0, 7.0]);
        let r = roots_in(&c, -10.0, 10.0);
        assert_eq!(r.len, 4);
        for (got, want) in r.as_slice().iter().zip([-1.5, 0.25, 2.0, 7.0]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    #[test]
    fn double_root_is_found() {
        let c = poly_from_roots(&[1.0, 1.0, 3.0, -2.0]);
        let r = roots_in(&c, 0.0, 2.0);
        assert_eq!(r.len, 1);
        assert!((r.x[0] - 1.0).abs() < 1e-7);
    }

    #[test]
    fn interval_restricts_roots() {
        let c = poly_from_roots(&[-1.0, 0.5, 3.0]);
        let r = roots_in(&c, 0.0, 1.0);
        assert_eq!(r.as_slice(), &[0.5]);
    }

    fn both(c: &[f64], lo: f64, hi: f64) -> (Roots, Roots) {
        let mut a = [0.0; 5];
        a[..c.len()].copy_from_slice(c);
        (roots_in(c, lo, hi), poly_roots(a, lo, hi))
    }

    #[test]
    fn poly_roots_agrees_with_isolation() {
        let mut unit = super::super::tests::lcg(1);
        let mut rnd = || unit() * 2.0 - 1.0;
        for k in 0..20000 {
            let n = 3 + k % 2;
            let r: Vec<f64> = (0..n).map(|_| 3.0 * rnd()).collect();
            let mut c = poly_from_roots(&r);
            if k % 3 == 0 {
                c[0] += 0.5 * rnd(); // some roots become complex
            }
            let (lo, hi) = (-2.0 + rnd(), 2.0 + rnd());
            let (x, y) = both(&c, lo, hi);
            assert_eq!(x.len, y.len, "{c:?} [{lo}, {hi}]: {x:?} vs {y:?}");
            for (p, q) in x.as_slice().iter().zip(y.as_slice()) {
                assert!((p - q).abs() < 1e-9, "{c:?}: {x:?} vs {y:?}");
            }
        }
        // Double and near-double roots.
        for c in [
            poly_from_roots(&[1.0, 1.0, 3.0, -2.0]),
            poly_from_roots(&[0.5, 0.5, 0.5, -2.0]),
            poly_from_roots(&[1.0, 1.0, 1.5, 1.5]),
        ] {
            let (x, y) = both(&c, 0.0, 2.0);
            assert_eq!(x.len, y.len, "{c:?}: {x:?} vs {y:?}");
            for (p, q) in x.as_slice().iter().zip(y.as_slice()) {
                assert!((p - q).abs() < 1e-6, "{c:?}: {x:?} vs {y:?}");
            }
        }
    }

    #[test]
    fn quadratic_without_real_roots() {
        assert_eq!(roots_in(&[1.0, 0.0, 1.0], -5.0, 5.0).len, 0);
    }
}
