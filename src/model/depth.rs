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
