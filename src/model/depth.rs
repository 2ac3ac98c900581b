//! Depth and pitch step (`propagateDepth`, docs/model.md §9): elevator, buoyancy,
//! speed-scaled depth rate, the pitch feedback and the surface clip.

/// Parameters of the depth step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepthParams {
    /// Buoyancy rate `b`, m/s, positive = rises.
    pub buoyancy_rate: f64,
    /// Maximum depth rate `r_max`, m/s.
    pub max_depth_rate: f64,
    /// Speed at which the full depth rate is reached `v_r`, m/s (≤ 0: always full).
    pub max_depth_rate_speed: f64,
}

/// New (depth m, pitch rad) from elevator `E` (%), speed `v_n` (m/s), prior
/// pitch `θ_p` (rad) and depth `z_p` (m) over `dt_s`. Positive elevator dives.
pub fn propagate_depth(
    p: &DepthParams,
    elevator: f64,
    v_n: f64,
    pitch_p: f64,
    z_p: f64,
    dt_s: f64,
) -> (f64, f64) {
    let e = elevator.clamp(-100.0, 100.0);
    let b = p.buoyancy_rate;
    let (z, pitch) = if v_n <= 0.0 {
        (z_p + (-b * dt_s), 0.0)
    } else if e == 0.0 && pitch_p == 0.0 && v_n < f64::INFINITY && p.max_depth_rate.is_finite() {
        // Level with the elevator at zero (every surface vehicle): the
        // same numbers as below without the square root and the two
        // divisions. sin(±0) = ±0; the rate r below is finite with the
        // sign of max_depth_rate, so (e/100)·r = e·max_depth_rate, a zero
        // of the same sign; q + a is a signed zero, and so (q + a)/v_n.
        let q = -pitch_p * v_n;
        let a = e * p.max_depth_rate;
        let rate = ((-b) + q) + a;
        (z_p + rate * dt_s, -(q + a))
    } else {
        let mut pct = if p.max_depth_rate_speed <= 0.0 {
            1.0
        } else {
            (v_n / p.max_depth_rate_speed).min(1.0)
        };
        pct = pct.sqrt();
        let r = pct * p.max_depth_rate;
        // sin(±0) is ±0 exactly: skip the call for a level vehicle.
        let sin_p = if pitch_p == 0.0 {
            pitch_p
        } else {
            pitch_p.sin()
        };
        let q = -sin_p * v_n;
        let a = (e / 100.0) * r;
        let rate = ((-b) + q) + a;
        let z = z_p + rate * dt_s;
        let pitch = if (q + a).abs() <= v_n {
            let r = (q + a) / v_n;
            // asin(±0) is ±0 exactly
            -(if r == 0.0 { r } else { r.asin() })
        } else {
            0.0
        };
        (z, pitch)
    };
    (z.max(0.0), pitch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general branch of the step (with speed), as docs/model.md §8
    /// writes it, for the level fast path to be checked against.
    fn general(p: &DepthParams, e: f64, v_n: f64, pitch_p: f64, z_p: f64, dt: f64) -> (f64, f64) {
        let pct = if p.max_depth_rate_speed <= 0.0 {
            1.0
        } else {
            (v_n / p.max_depth_rate_speed).min(1.0)
        };
        let r = pct.sqrt() * p.max_depth_rate;
        let sin_p = if pitch_p == 0.0 {
            pitch_p
        } else {
            pitch_p.sin()
        };
        let q = -sin_p * v_n;
        let a = (e / 100.0) * r;
        let z = z_p + (((-p.buoyancy_rate) + q) + a) * dt;
        let pitch = if (q + a).abs() <= v_n {
            let r = (q + a) / v_n;
            -(if r == 0.0 { r } else { r.asin() })
        } else {
            0.0
        };
        (z.max(0.0), pitch)
    }

    #[test]
    fn level_fast_path_equals_the_general_step_bit_for_bit() {
        let mut n = 0;
        for mdr in [1.0, 0.5, 0.0, -0.0, -1.0] {
            for mdrs in [2.5, 0.0, -1.0, 1e-300] {
                for b in [0.0, -0.0, 0.05, -0.3] {
                    let p = DepthParams {
                        buoyancy_rate: b,
                        max_depth_rate: mdr,
                        max_depth_rate_speed: mdrs,
                    };
                    for e in [0.0, -0.0] {
                        for pitch in [0.0, -0.0] {
                            for v in [1e-300, 0.3, 2.0, 7.0, 1e300] {
                                for z in [0.0, -0.0, 3.0] {
                                    let got = propagate_depth(&p, e, v, pitch, z, 0.1);
                                    let want = general(&p, e, v, pitch, z, 0.1);
                                    assert_eq!(
                                        (got.0.to_bits(), got.1.to_bits()),
                                        (want.0.to_bits(), want.1.to_bits()),
                                        "{p:?} e {e} pitch {pitch} v {v} z {z}"
                                    );
                                    n += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(n, 5 * 4 * 4 * 2 * 2 * 5 * 3);
    }

    #[test]
    fn saw_tooth_worked_example() {
        // docs/model.md §9: v=1.8, r_max=1, v_r=2.5, E=40, b=0.05, 10 Hz:
        // increments 0.0289, 0.0629, 0.0968, 0.1308, 0.1647, 0.1986, then 0.0289
        let p = DepthParams {
            buoyancy_rate: 0.05,
            max_depth_rate: 1.0,
            max_depth_rate_speed: 2.5,
        };
        let expected = [0.0289, 0.0629, 0.0968, 0.1308, 0.1647, 0.1986, 0.0289];
        let (mut z, mut pitch) = (10.0, 0.0);
        let a = 0.4 * (1.8f64 / 2.5).sqrt();
        for (k, want) in expected.iter().enumerate() {
            let (zn, pn) = propagate_depth(&p, 40.0, 1.8, pitch, z, 0.1);
            assert!(
                (zn - z - want).abs() < 5e-5,
                "step {k}: {} vs {want}",
                zn - z
            );
            // closed form inside the cycle: (-b + (k+1)·a)·dt
            if k < 6 {
                assert!((zn - z - (-0.05 + (k as f64 + 1.0) * a) * 0.1).abs() < 1e-12);
            }
            z = zn;
            pitch = pn;
        }
    }

    #[test]
    fn zero_speed_floats_and_surface_clips() {
        let p = DepthParams {
            buoyancy_rate: 0.5,
            max_depth_rate: 1.0,
            max_depth_rate_speed: 2.0,
        };
        assert_eq!(propagate_depth(&p, 100.0, 0.0, 0.3, 1.0, 1.0), (0.5, 0.0));
        assert_eq!(propagate_depth(&p, 100.0, 0.0, 0.3, 0.2, 1.0), (0.0, 0.0));
        // elevator clipped to 100 in the formula: 150 acts as 100
        let a = propagate_depth(&p, 150.0, 2.0, 0.0, 5.0, 0.1);
        let b = propagate_depth(&p, 100.0, 2.0, 0.0, 5.0, 0.1);
        assert_eq!(a, b);
    }
}
