//! Speed step (`propagateSpeed`, docs/model.md §7): thrust map, turn loss,
//! acceleration and deceleration limits.
use super::thrust_map::ThrustMap;

/// Parameters of the speed step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpeedLimits {
    /// Maximum acceleration, m/s² (0 = no limit).
    pub max_accel: f64,
    /// Maximum deceleration, m/s² (0 = no limit).
    pub max_decel: f64,
    /// Turn speed loss factor `L` in [0, 1] (classic: 0.85).
    pub turn_loss: f64,
}

/// New speed `v_n` (m/s) from thrust `T` (%), rudder `R` (±100), prior speed
/// `v_p` (m/s) over `dt_s`; `None` when Δt ≤ 0 (speed unchanged).
#[allow(clippy::too_many_arguments)]
pub fn propagate_speed(
    map: &ThrustMap,
    lim: &SpeedLimits,
    thrust: f64,
    rudder: f64,
    reverse: bool,
    v_p: f64,
    dt_s: f64,
) -> Option<f64> {
    let thrust = if reverse { -thrust } else { thrust };
    propagate_speed_raw(map.speed(thrust), lim, rudder, reverse, v_p, dt_s, false)
}

/// [`propagate_speed`] from the raw map speed `v_raw = M(T)` (m/s) of the
/// (reverse-negated) thrust, so a caller can cache the map lookup. With
/// `fast` (`math = "fast"`) the turn loss takes `|R|·0.01` for `|R|/100`
/// (within an ulp; a division less on a steering vehicle's longest
/// dependency chain, rudder → speed → turn rate → heading).
#[inline]
pub fn propagate_speed_raw(
    v_raw: f64,
    lim: &SpeedLimits,
    rudder: f64,
    reverse: bool,
    v_p: f64,
    dt_s: f64,
    fast: bool,
) -> Option<f64> {
    if dt_s <= 0.0 {
        return None;
    }
    let rudder = if reverse { -rudder } else { rudder };
    let r = rudder.clamp(-100.0, 100.0);
    let frac = if fast {
        r.abs() * 0.01
    } else {
        r.abs() / 100.0
    };
    let vpct = frac * lim.turn_loss;
    let mut v = v_raw * (1.0 - vpct);
    if v > v_p && lim.max_accel > 0.0 && (v - v_p) / dt_s > lim.max_accel {
        v = lim.max_accel * dt_s + v_p;
    }
    if v < v_p && lim.max_decel > 0.0 && (v_p - v) / dt_s > lim.max_decel {
        v = -(lim.max_decel * dt_s) + v_p; // x·(−1) is exactly −x
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_turn_loss_stays_within_a_few_ulps_of_the_map_speed() {
        // math = "fast": (|R|·0.01)·L for (|R|/100)·L, rudders across ±100
        let l = lim(0.0, 0.0, 0.85);
        let mut differ = 0;
        for k in -10_000..=10_000 {
            let r = f64::from(k) / 100.0 * 1.000_000_3;
            let a = propagate_speed_raw(2.3, &l, r, false, 2.0, 0.1, false).unwrap();
            let b = propagate_speed_raw(2.3, &l, r, false, 2.0, 0.1, true).unwrap();
            // (an ulp or two of the loss, times v_raw, and the rounding of
            // the product: a few ulps of v_raw)
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * 2.3,
                "R {r}: {a:e} / {b:e}"
            );
            differ += usize::from(a != b);
        }
        assert!(differ > 0, "the fast turn loss is another computation");
    }

    fn lim(a: f64, d: f64, l: f64) -> SpeedLimits {
        SpeedLimits {
            max_accel: a,
            max_decel: d,
            turn_loss: l,
        }
    }

    #[test]
    fn acceleration_limit_worked_example() {
        // docs/model.md §7, run 01 k=10: T=80 -> M=4.0, a_max=0.4, dt=0.1 -> 0.04
        let mut m = ThrustMap::default();
        m.add_line("0:0, 20:1, 40:2, 60:3, 80:4, 100:5").unwrap();
        let v = propagate_speed(&m, &lim(0.4, 0.25, 0.85), 80.0, 0.0, false, 0.0, 0.1);
        assert_eq!(v, Some(0.4 * 0.1 + 0.0));
        assert!((v.unwrap() - 0.04).abs() < 1e-17);
    }

    #[test]
    fn turn_loss_worked_example() {
        // docs/model.md §7, run 02 k=50: T=100, factor 20 -> 5; R=100 -> 0.75
        let m = ThrustMap::default();
        let v = propagate_speed(&m, &lim(0.0, 0.0, 0.85), 100.0, 100.0, false, 5.0, 0.1);
        assert!((v.unwrap() - 0.75).abs() < 1e-12);
        // V22 with turn_spd_loss 0.6: 2.0
        let v = propagate_speed(&m, &lim(0.0, 0.0, 0.6), 100.0, 100.0, false, 5.0, 0.1);
        assert!((v.unwrap() - 2.0).abs() < 1e-12);
        // rudder beyond 100 is clipped for the loss
        let v = propagate_speed(&m, &lim(0.0, 0.0, 0.85), 100.0, 140.0, false, 5.0, 0.1);
        assert!((v.unwrap() - 0.75).abs() < 1e-12);
    }

    #[test]
    fn limits_act_on_signed_speed() {
        let m = ThrustMap::default();
        // from +2 toward -1 (reflect off => 0 for negative thrust), decel 0.5
        let v = propagate_speed(&m, &lim(0.0, 0.5, 0.85), -20.0, 0.0, false, 2.0, 0.1);
        assert!((v.unwrap() - 1.95).abs() < 1e-12);
        // from -1 toward 0 is an "acceleration" limited by a_max
        let v = propagate_speed(&m, &lim(0.2, 0.0, 0.85), 0.0, 0.0, false, -1.0, 0.1);
        assert!((v.unwrap() - -0.98).abs() < 1e-12);
        // dt <= 0: unchanged
        assert_eq!(
            propagate_speed(&m, &lim(0.0, 0.0, 0.85), 50.0, 0.0, false, 1.0, 0.0),
            None
        );
    }

    #[test]
    fn reverse_negates_thrust() {
        let mut m = ThrustMap::default();
        m.set_reflect(true);
        let v = propagate_speed(&m, &lim(0.0, 0.0, 0.85), 40.0, 0.0, true, 0.0, 0.1);
        assert_eq!(v, Some(-2.0));
    }
}
