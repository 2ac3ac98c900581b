//! The thrust map: thrust (percent) → speed (m/s), docs/model.md §12.
//!
//! Two sides: the positive map (thrust > 0 → speed ≥ 0) and the negative
//! map (thrust < 0 → speed ≤ 0), each ordered by thrust with speeds
//! non-descending; the origin (0, 0) is implicit. With no positive pairs the
//! speed is `thrust / thrust_factor`.
use super::angles::is_number;

/// Thrust range accepted for pairs, percent.
const MIN_THRUST: f64 = -100.0;
/// Thrust range accepted for pairs, percent.
const MAX_THRUST: f64 = 100.0;

/// Thrust → speed map with uSimMarine's insertion rules and lookup.
#[derive(Debug, Clone, PartialEq)]
pub struct ThrustMap {
    /// Positive side, (thrust %, speed m/s), ascending thrust.
    pos: Vec<(f64, f64)>,
    /// Negative side, (thrust %, speed m/s), ascending thrust.
    neg: Vec<(f64, f64)>,
    /// Speed = thrust / factor when the positive side is empty (default 20).
    thrust_factor: f64,
    /// Mirror the positive side for negative thrust when the negative side is empty.
    reflect: bool,
}

impl Default for ThrustMap {
    fn default() -> Self {
        ThrustMap {
            pos: Vec::new(),
            neg: Vec::new(),
            thrust_factor: 20.0,
            reflect: false,
        }
    }
}

/// Why a `thrust_map` line was not (fully) used.
#[derive(Debug, Clone, PartialEq)]
pub struct ThrustMapLineError {
    /// Pairs added before processing stopped.
    pub added: usize,
    /// The offending element, as written.
    pub element: String,
    /// Why it was refused.
    pub reason: &'static str,
}

impl std::fmt::Display for ThrustMapLineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pair `{}` {}; uSimMarine keeps the {} pair(s) before it and drops the rest of the line",
            self.element, self.reason, self.added
        )
    }
}

impl ThrustMap {
    /// Set the fallback factor (thrust % per m/s); negative values are refused.
    pub fn set_thrust_factor(&mut self, factor: f64) -> bool {
        if factor >= 0.0 && factor.is_finite() {
            self.thrust_factor = factor;
            true
        } else {
            false
        }
    }

    /// The fallback factor, thrust % per m/s.
    pub fn thrust_factor(&self) -> f64 {
        self.thrust_factor
    }

    /// Use the mirrored positive side for negative thrust (only when no negative pairs exist).
    pub fn set_reflect(&mut self, reflect: bool) {
        self.reflect = reflect;
    }

    /// Positive-side pairs (thrust %, speed m/s).
    pub fn positive(&self) -> &[(f64, f64)] {
        &self.pos
    }

    /// Negative-side pairs (thrust %, speed m/s).
    pub fn negative(&self) -> &[(f64, f64)] {
        &self.neg
    }

    /// Add one pair (`addPair`, docs/model.md §12.1). Returns false if refused.
    pub fn add_pair(&mut self, thrust: f64, speed: f64) -> bool {
        if !thrust.is_finite() || !speed.is_finite() {
            return false;
        }
        if !(MIN_THRUST..=MAX_THRUST).contains(&thrust) {
            return false;
        }
        if (thrust > 0.0 && speed < 0.0)
            || (thrust < 0.0 && speed > 0.0)
            || (thrust == 0.0 && speed != 0.0)
        {
            return false;
        }
        if thrust == 0.0 {
            return true; // the origin is implicit
        }
        let side = if thrust > 0.0 {
            &mut self.pos
        } else {
            &mut self.neg
        };
        let mut candidate: Vec<(f64, f64)> =
            side.iter().copied().filter(|(t, _)| *t != thrust).collect();
        let at = candidate.partition_point(|(t, _)| *t < thrust);
        candidate.insert(at, (thrust, speed));
        if candidate.windows(2).any(|w| w[1].1 < w[0].1) {
            return false;
        }
        *side = candidate;
        true
    }

    /// Parse one `thrust_map` config line `t:s, t:s, ...` (docs/model.md §12.2):
    /// pairs are added left to right and processing stops at the first
    /// malformed or refused pair, keeping the pairs before it.
    pub fn add_line(&mut self, line: &str) -> Result<usize, ThrustMapLineError> {
        let mut added = 0;
        for element in line.split(',') {
            let err = |reason| ThrustMapLineError {
                added,
                element: element.trim().to_string(),
                reason,
            };
            let Some((t, s)) = element.split_once(':') else {
                return Err(err("has no `:`"));
            };
            let (t, s) = (t.trim(), s.trim());
            if !is_number(t) || !is_number(s) {
                return Err(err(
                    "is not two plain numbers (uSimMarine takes no exponents)",
                ));
            }
            let (Ok(t), Ok(s)) = (t.parse::<f64>(), s.parse::<f64>()) else {
                return Err(err("is not two plain numbers"));
            };
            if !self.add_pair(t, s) {
                return Err(err(
                    "is refused (thrust outside ±100, speed sign differs from thrust, or speeds not ascending)",
                ));
            }
            added += 1;
        }
        Ok(added)
    }

    /// Speed for a thrust, m/s (`getSpeedValue`, docs/model.md §12.3). The thrust
    /// is not clipped: the map saturates on its own, the factor does not.
    pub fn speed(&self, thrust: f64) -> f64 {
        if thrust == 0.0 {
            return 0.0;
        }
        if thrust > 0.0 {
            return self.positive_speed(thrust);
        }
        if self.neg.is_empty() {
            return if self.reflect {
                -self.positive_speed(-thrust)
            } else {
                0.0
            };
        }
        let s_first = self.neg[0].1;
        if thrust <= MIN_THRUST {
            return s_first;
        }
        // right = lowest pair with t >= thrust (none: the origin)
        let ri = self.neg.partition_point(|(t, _)| *t < thrust);
        let right = self.neg.get(ri).copied().unwrap_or((0.0, 0.0));
        let left = if ri == 0 {
            (MIN_THRUST, s_first)
        } else {
            self.neg[ri - 1]
        };
        interpolate(thrust, left, right)
    }

    fn positive_speed(&self, thrust: f64) -> f64 {
        let Some(&(_, s_last)) = self.pos.last() else {
            return if self.thrust_factor != 0.0 {
                thrust / self.thrust_factor
            } else {
                0.0
            };
        };
        if thrust >= MAX_THRUST {
            return s_last;
        }
        // left = highest pair with t <= thrust (none: the origin)
        let n_le = self.pos.partition_point(|(t, _)| *t <= thrust);
        let left = if n_le == 0 {
            (0.0, 0.0)
        } else {
            self.pos[n_le - 1]
        };
        let right = self.pos.get(n_le).copied().unwrap_or((MAX_THRUST, s_last));
        interpolate(thrust, left, right)
    }
}

/// `speed = (T − tₗ)·((sᵣ − sₗ)/(tᵣ − tₗ)) + sₗ`; 0 on a degenerate segment.
fn interpolate(thrust: f64, left: (f64, f64), right: (f64, f64)) -> f64 {
    let (tl, sl) = left;
    let (tr, sr) = right;
    if tr - tl <= 0.0 {
        return 0.0;
    }
    let slope = (sr - sl) / (tr - tl);
    (thrust - tl) * slope + sl
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(line: &str) -> ThrustMap {
        let mut m = ThrustMap::default();
        let _ = m.add_line(line);
        m
    }

    #[test]
    fn empty_map_uses_thrust_factor_unclipped() {
        let mut m = ThrustMap::default();
        assert_eq!(m.speed(100.0), 5.0); // factor 20
        assert!(m.set_thrust_factor(25.0));
        assert_eq!(m.speed(130.0), 5.2); // docs/model.md §12.3: no clipping
        assert!(!m.set_thrust_factor(-1.0));
        assert_eq!(m.speed(-50.0), 0.0); // no reflect, no negative side
        m.set_reflect(true);
        assert_eq!(m.speed(-50.0), -2.0);
    }

    #[test]
    fn interpolation_and_saturation() {
        let m = map("0:0, 20:1, 40:2, 60:3, 80:4, 100:5");
        assert_eq!(m.speed(80.0), 4.0); // docs/model.md §7 worked example
        assert_eq!(m.speed(30.0), 1.5);
        assert_eq!(m.speed(130.0), 5.0);
        let m = map("-100:-3, -60:-2, -20:-0.5, 10:0.6, 30:1.5, 55:2.8, 90:4.1");
        // flat from the last pair to 100
        assert_eq!(m.speed(95.0), 4.1);
        // between origin and the first pair
        assert!((m.speed(5.0) - 0.3).abs() < 1e-15);
        // negative side: -40 between -60:-2 and -20:-0.5
        assert!((m.speed(-40.0) - -1.25).abs() < 1e-15);
        assert_eq!(m.speed(-150.0), -3.0);
        // between -20 and origin
        assert!((m.speed(-10.0) - -0.25).abs() < 1e-15);
    }

    #[test]
    fn manual_first_example_yields_empty_map() {
        // docs/model.md §12.2: the first pair is out of range, nothing is added.
        let mut m = ThrustMap::default();
        let e = m
            .add_line(
                "-120:-5, -100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 100:5.0, 120:6",
            )
            .unwrap_err();
        assert_eq!(e.added, 0);
        assert!(m.positive().is_empty() && m.negative().is_empty());
        assert_eq!(m.speed(100.0), 5.0); // the factor stays in force
    }

    #[test]
    fn non_ascending_pair_stops_the_line() {
        let mut m = ThrustMap::default();
        let e = m
            .add_line("20:2.4, 50:4.2, 80:4.8, 90:4, 100:5.0")
            .unwrap_err();
        assert_eq!(e.added, 3);
        assert_eq!(m.positive().last(), Some(&(80.0, 4.8)));
        assert_eq!(m.speed(100.0), 4.8);
    }

    #[test]
    fn zero_thrust_nonzero_speed_refused_after_valid_pairs() {
        let mut m = ThrustMap::default();
        let e = m.add_line("20:1.2, 50:2.9, 100:4.5, 0:1").unwrap_err();
        assert_eq!(e.added, 3);
        assert_eq!(m.positive().len(), 3);
    }

    #[test]
    fn add_pair_rules() {
        let mut m = ThrustMap::default();
        assert!(m.add_pair(0.0, 0.0));
        assert!(!m.add_pair(10.0, -1.0));
        assert!(!m.add_pair(-10.0, 1.0));
        assert!(!m.add_pair(101.0, 1.0));
        assert!(m.add_pair(50.0, 2.0));
        assert!(m.add_pair(50.0, 3.0)); // replaces
        assert_eq!(m.positive(), &[(50.0, 3.0)]);
        assert!(m.add_pair(60.0, 3.0)); // equal speeds allowed
        assert!(!m.add_pair(70.0, 2.0));
        assert!(!m.add_pair(f64::NAN, 1.0));
    }

    #[test]
    fn exponents_are_not_numbers() {
        let mut m = ThrustMap::default();
        assert!(m.add_line("50:2e0").is_err());
        assert!(m.add_line("50 2").is_err());
    }
}
