//! Heading step (`propagateHeading`, docs/model.md §8): turn rate, thrust effect,
//! rotate speed; the V22 turn-speed map (§8.1); differential thrust (§15.2).
use super::angles::{angle180, angle360, deg_to_radians};

/// V22 turn-speed map state: turn rate (0..100) as a function of speed (m/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnSpeedMap {
    /// Speed at or below which the null rate applies, m/s.
    pub null_speed: f64,
    /// Turn rate at or below the null speed, 0..100.
    pub null_rate: f64,
    /// Speed at or above which the full rate applies, m/s (set to 5 every step).
    pub full_speed: f64,
    /// Turn rate at or above the full speed, 0..100 (set to turn_rate every step).
    pub full_rate: f64,
}

impl Default for TurnSpeedMap {
    fn default() -> Self {
        TurnSpeedMap {
            null_speed: 0.0,
            null_rate: 0.0,
            full_speed: 1.0,
            full_rate: 100.0,
        }
    }
}

impl TurnSpeedMap {
    /// Effective turn rate at speed `v` (m/s) for the configured `turn_rate`:
    /// first full rate := turn_rate (if 0 < it ≤ 100) and full speed := 5,
    /// lowering the null values if needed, then the piecewise-linear map.
    pub fn rate(&mut self, turn_rate: f64, v: f64) -> f64 {
        self.normalize(turn_rate);
        self.at(v)
    }

    /// The first half of [`TurnSpeedMap::rate`]: full rate := `turn_rate`
    /// (if 0 < it ≤ 100), full speed := 5, the null values lowered if
    /// needed. Idempotent: a second call with the same `turn_rate` changes
    /// nothing (so a caller may skip it while the turn rate stays).
    #[inline]
    pub fn normalize(&mut self, turn_rate: f64) {
        if turn_rate > 0.0 && turn_rate <= 100.0 {
            self.full_rate = turn_rate;
            if self.null_rate > self.full_rate {
                self.null_rate = self.full_rate;
            }
        }
        self.full_speed = 5.0;
        if self.null_speed > self.full_speed {
            self.null_speed = self.full_speed;
        }
    }

    /// The second half of [`TurnSpeedMap::rate`]: the piecewise-linear map
    /// at speed `v` (m/s) as the map stands.
    #[inline]
    pub fn at(&self, v: f64) -> f64 {
        self.at_spans(v, self.spans())
    }

    /// The map's speed and rate spans, `(full_speed − null_speed,
    /// full_rate − null_rate)`: fixed between normalizations, so a caller
    /// may keep them for [`TurnSpeedMap::at_spans`].
    #[inline]
    pub fn spans(&self) -> (f64, f64) {
        (
            self.full_speed - self.null_speed,
            self.full_rate - self.null_rate,
        )
    }

    /// [`TurnSpeedMap::at`] with `spans` = [`TurnSpeedMap::spans`] of the
    /// map as it stands (the same operations on the same numbers).
    #[inline]
    pub fn at_spans(&self, v: f64, spans: (f64, f64)) -> f64 {
        let (ns, nr, fs, fr) = (
            self.null_speed,
            self.null_rate,
            self.full_speed,
            self.full_rate,
        );
        if v <= ns {
            nr
        } else if v >= fs {
            fr
        } else {
            ((v - ns) / spans.0) * spans.1 + nr
        }
    }

    /// The map is plain: null speed ±0, null rate +0.0, full speed above
    /// 0 and full rate in [0, 100] (the defaults after a normalization
    /// with a turn rate in (0, 100]). Then [`TurnSpeedMap::at_clamped`]
    /// skips three operations; fixed between normalizations.
    pub fn plain(&self) -> bool {
        self.null_speed == 0.0
            && self.null_rate.to_bits() == 0
            && self.full_speed > 0.0
            && (0.0..=100.0).contains(&self.full_rate)
    }

    /// `at_spans(v, spans).clamp(0.0, 100.0)`, the rate the heading step
    /// uses, with `plain` = [`TurnSpeedMap::plain`]. For a plain map the
    /// same number without `− ns`, `+ nr` and the clamp: for v in (ns, fs)
    /// = (0, fs), `v − (±0.0)` is v and `spans.0` is fs; `v/fs` rounds
    /// into [+0.0, 1] (v < fs, and rounding is monotonic), so the product
    /// with `spans.1` (= fr, in [0, 100]) is in [+0.0, fr], which `+ (+0.0)`
    /// and the clamp leave as it is; the other branches give +0.0 and fr,
    /// which the clamp leaves too.
    ///
    /// With `fast` (`math = "fast"`) a plain map takes `v·(1/fs)` for
    /// `v/fs` (within an ulp: the reciprocal does not wait for v, so the
    /// division leaves the step's dependency chain).
    #[inline(always)]
    pub fn at_clamped(&self, v: f64, spans: (f64, f64), plain: bool, fast: bool) -> f64 {
        if plain {
            if v <= self.null_speed {
                0.0
            } else if v >= self.full_speed {
                self.full_rate
            } else if fast {
                (v * (1.0 / spans.0)) * spans.1
            } else {
                (v / spans.0) * spans.1
            }
        } else {
            self.at_spans(v, spans).clamp(0.0, 100.0)
        }
    }
}

/// Inputs of the normal heading step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadingInput {
    /// Rudder, ±100 (clipped here).
    pub rudder: f64,
    /// Thrust, percent, signed and unclipped.
    pub thrust: f64,
    /// Turn rate 0..100 (for V22 already mapped through the turn-speed map).
    pub turn_rate: f64,
    /// Extra rotation, deg/s.
    pub rotate_speed: f64,
    /// New speed from the speed step, m/s.
    pub v_n: f64,
    /// Thrust mode reverse.
    pub reverse: bool,
}

/// New heading in [0, 360) degrees and yaw (radians) from prior heading `h_p`.
/// `turn_rate` is looked up after the zero-speed and reverse rules through
/// `rate_of`, so V22 can pass its map.
pub fn propagate_heading(
    inp: &HeadingInput,
    h_p: f64,
    dt_s: f64,
    rate_of: impl FnOnce(f64) -> f64,
) -> (f64, f64) {
    let rate = |tr| rate_of(tr).clamp(0.0, 100.0);
    let memo = &mut TurnFactors::default();
    let (h, yaw, _) = propagate_heading_memo(inp, h_p, dt_s, rate, memo, false);
    (h, yaw)
}

/// The two quotients of the heading step, `turn_rate/100` and
/// `1 + (thrust − 50)/50`, each kept while its input stays the same bits
/// (the common case, even with a rudder that changes every step): the same
/// numbers without two divisions in the step's longest dependency chain.
#[derive(Debug, Clone, Copy)]
pub struct TurnFactors {
    rate_key: u64,
    rate_frac: f64,
    thrust_key: u64,
    thrust_factor: f64,
}

impl Default for TurnFactors {
    fn default() -> Self {
        TurnFactors {
            rate_key: f64::NAN.to_bits(),
            rate_frac: f64::NAN,
            thrust_key: f64::NAN.to_bits(),
            thrust_factor: f64::NAN,
        }
    }
}

impl TurnFactors {
    /// `(rudder·(tr/100), 1 + (thrust − 50)/50)`. (A fresh quotient is
    /// used from the register it was computed in, not read back from
    /// the memo: with a rate that changes every step, as the V22 map's
    /// with a moving rudder, the store and reload sat in the step's
    /// dependency chain.)
    ///
    /// With `fast` (`math = "fast"`) `tr·0.01` for `tr/100` (within an
    /// ulp; with the V22 map the rate changes every step and the quotient
    /// sits in the chain).
    #[inline(always)]
    fn get(&mut self, rudder: f64, tr: f64, thrust: f64, fast: bool) -> (f64, f64) {
        let rate_frac = if tr.to_bits() != self.rate_key {
            let f = if fast { tr * 0.01 } else { tr / 100.0 };
            self.rate_key = tr.to_bits();
            self.rate_frac = f;
            f
        } else {
            self.rate_frac
        };
        let thrust_factor = if thrust.to_bits() != self.thrust_key {
            let f = 1.0 + ((thrust - 50.0) / 50.0);
            self.thrust_key = thrust.to_bits();
            self.thrust_factor = f;
            f
        } else {
            self.thrust_factor
        };
        (rudder * rate_frac, thrust_factor)
    }
}

/// [`propagate_heading`] with the turn factors memoized in `memo`; also
/// returns the turn of the step before wrapping, degrees. Here `rate_of`
/// gives the rate clamped to [0, 100] (as [`propagate_heading`] clamps
/// its `rate_of`'s: [`TurnSpeedMap::at_clamped`] can skip the clamp);
/// `fast` as in [`TurnFactors::get`]. (Inlined: the model step calls it
/// once per model variant.)
#[inline(always)]
pub fn propagate_heading_memo(
    inp: &HeadingInput,
    h_p: f64,
    dt_s: f64,
    rate_of: impl FnOnce(f64) -> f64,
    memo: &mut TurnFactors,
    fast: bool,
) -> (f64, f64, f64) {
    let mut rudder = inp.rudder;
    let mut thrust = inp.thrust;
    if inp.v_n == 0.0 {
        rudder = 0.0;
    }
    if inp.reverse {
        thrust = -thrust;
        rudder = -rudder;
    }
    let tr = rate_of(inp.turn_rate);
    let rudder = rudder.clamp(-100.0, 100.0);
    let (rate, thrust_factor) = memo.get(rudder, tr, thrust, fast);
    let mut delta = rate * dt_s;
    // (1 + (T − 50)/50)·δ: IEEE multiplication commutes, so this is bit-identical.
    delta *= thrust_factor;
    delta += dt_s * inp.rotate_speed;
    let h = angle360(delta + h_p);
    (h, yaw_of(h), delta)
}

/// Differential-thrust heading step (docs/model.md §15.2): at most 36 deg/s,
/// left thrust above right turns to starboard; `None` when Δt ≤ 0.
pub fn propagate_heading_diff(
    left: f64,
    right: f64,
    rotate_speed: f64,
    reverse: bool,
    h_p: f64,
    dt_s: f64,
) -> Option<(f64, f64)> {
    if dt_s <= 0.0 {
        return None;
    }
    let (l, r) = if reverse {
        (-right, left)
    } else {
        (left, right)
    };
    let delta = (36.0 * ((l - r) / 200.0)) * dt_s + dt_s * rotate_speed;
    let h = angle360(h_p + delta);
    Some((h, yaw_of(h)))
}

/// Yaw in radians, east-north-up sense: `−deg2rad(angle180(h))`.
pub fn yaw_of(h: f64) -> f64 {
    -deg_to_radians(angle180(h))
}

#[cfg(test)]
mod tests {
    #[test]
    fn memoized_factors_give_the_same_headings() {
        // rudder, thrust and rate change now and then; the memo must follow
        let mut memo = TurnFactors::default();
        let mut h = 10.0;
        for k in 0..200 {
            let i = inp(
                [20.0, -35.5, 100.0, 0.0][(k / 7 + k / 50) % 4],
                [50.0, 80.0, 80.0, -20.0][k / 50],
                [70.0, 70.0, 35.0, 100.0][k / 50],
                1.5,
            );
            let a = propagate_heading(&i, h, 0.1, |t| t);
            let b = propagate_heading_memo(&i, h, 0.1, |t| t.clamp(0.0, 100.0), &mut memo, false);
            assert!((b.2 - ((b.0 - h + 540.0).rem_euclid(360.0) - 180.0)).abs() < 1e-9);
            assert_eq!(a.0.to_bits(), b.0.to_bits());
            assert_eq!(a.1.to_bits(), b.1.to_bits());
            h = a.0;
        }
    }

    use super::*;

    fn inp(rudder: f64, thrust: f64, tr: f64, v_n: f64) -> HeadingInput {
        HeadingInput {
            rudder,
            thrust,
            turn_rate: tr,
            rotate_speed: 0.0,
            v_n,
            reverse: false,
        }
    }

    /// |a − b| in units in the last place of `a`.
    fn ulps(a: f64, b: f64) -> f64 {
        (a - b).abs() / (f64::EPSILON * a.abs().max(f64::MIN_POSITIVE))
    }

    #[test]
    fn fast_reciprocals_stay_within_an_ulp_or_two() {
        // math = "fast": tr·0.01 for tr/100 and v·(1/fs) for v/fs, over
        // turn rates 0..=100 and speeds across the map (docs/model.md §20.1)
        let mut map = TurnSpeedMap::default();
        map.normalize(70.0);
        assert!(map.plain());
        let spans = map.spans();
        let mut differ = 0;
        for k in 0..=10_000 {
            let v = 5.0 * f64::from(k) / 10_000.0 * 1.000_000_1;
            let (a, b) = (
                map.at_clamped(v, spans, true, false),
                map.at_clamped(v, spans, true, true),
            );
            assert!(ulps(a, b) <= 2.0, "v {v}: {a:e} / {b:e}");
            differ += usize::from(a != b);
            let tr = f64::from(k) / 100.0;
            let (mut exact, mut fast) = (TurnFactors::default(), TurnFactors::default());
            let (a, _) = exact.get(1.0, tr, 80.0, false);
            let (b, _) = fast.get(1.0, tr, 80.0, true);
            assert!(ulps(a, b) <= 1.0, "tr {tr}: {a:e} / {b:e}");
        }
        assert!(differ > 0, "the fast map is another computation");
        // a whole turn: the headings stay within 1e-12 degrees
        let (mut me, mut mf) = (TurnFactors::default(), TurnFactors::default());
        let (mut he, mut hf) = (10.0, 10.0);
        for k in 0..3_000 {
            let v = 0.5 + 4.0 * f64::from(k % 97) / 97.0;
            let i = inp(-35.5 + f64::from(k % 71), 80.0, 70.0, v);
            let rate = |_| map.at_clamped(v, spans, true, false);
            he = propagate_heading_memo(&i, he, 0.1, rate, &mut me, false).0;
            let rate = |_| map.at_clamped(v, spans, true, true);
            hf = propagate_heading_memo(&i, hf, 0.1, rate, &mut mf, true).0;
        }
        let d = (he - hf + 540.0).rem_euclid(360.0) - 180.0;
        assert!(d.abs() < 1e-12, "{he} / {hf}");
    }

    #[test]
    fn classic_worked_example() {
        // docs/model.md §8, run 02 k=50: 100*0.40*2 = 80 deg/s -> 350 -> 358
        let (h, _) = propagate_heading(&inp(100.0, 100.0, 40.0, 2.875), 350.0, 0.1, |t| t);
        assert!((h - 358.0).abs() < 1e-9);
    }

    #[test]
    fn negative_thrust_turns_the_other_way() {
        // rudder +20, thrust -40 -> -0.8 x the nominal rate (docs/model.md §8)
        let (h, _) = propagate_heading(&inp(20.0, -40.0, 100.0, 1.0), 100.0, 1.0, |t| t);
        assert!((h - (100.0 - 0.8 * 20.0)).abs() < 1e-9);
    }

    #[test]
    fn zero_speed_only_rotates() {
        let mut i = inp(50.0, 100.0, 70.0, 0.0);
        i.rotate_speed = 3.0;
        let (h, _) = propagate_heading(&i, 359.0, 1.0, |t| t);
        assert!((h - 2.0).abs() < 1e-9);
    }

    #[test]
    fn v22_map_worked_example() {
        // docs/model.md §8.1, 02.v22 k=50: v_n=2 -> rate 40*2/5 = 16 -> 3.2 deg
        let mut tsm = TurnSpeedMap::default();
        let (h, _) = propagate_heading(&inp(100.0, 100.0, 40.0, 2.0), 350.0, 0.1, |t| {
            tsm.rate(t, 2.0)
        });
        assert!((h - 353.2).abs() < 1e-9);
        // no turning astern, full rate above 5 m/s
        assert_eq!(tsm.rate(40.0, -1.0), 0.0);
        assert_eq!(tsm.rate(40.0, 7.0), 40.0);
        // turn_rate 0 is refused: the full rate stays at the last valid one
        assert_eq!(tsm.rate(0.0, 7.0), 40.0);
    }

    #[test]
    fn differential_turns_to_starboard() {
        let (h, yaw) = propagate_heading_diff(80.0, 20.0, 0.0, false, 0.0, 0.1).unwrap();
        assert!((h - 36.0 * 0.3 * 0.1).abs() < 1e-12);
        assert!((yaw + h.to_radians()).abs() < 1e-12);
        assert_eq!(
            propagate_heading_diff(80.0, 20.0, 0.0, false, 0.0, 0.0),
            None
        );
    }
}
