//! uSimMarineV22's sailing speed cap (docs/v22.md §11): a wind (direction
//! it comes from, degrees; speed, m/s) and a polar plot (percent of the wind
//! speed by angle off the wind, degrees) cap the thrust map's speed.
//!
//! The parsers here are pure functions of their text (fuzzable).

/// The wind (`wind_conditions`, `WIND_CONDITIONS`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Wind {
    /// Whether a direction or speed was ever set.
    pub set: bool,
    /// Where the wind comes from, degrees [0, 360).
    pub dir: f64,
    /// Wind speed, m/s.
    pub speed: f64,
}

impl Wind {
    /// Apply `spd=…,dir=…` (docs/v22.md §11.1). Elements apply in order;
    /// the first bad element stops the parse with an error, the earlier ones
    /// stay applied.
    pub fn apply(&mut self, s: &str) -> Result<(), String> {
        for elem in s.split(',') {
            let (k, v) = match elem.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (elem.trim(), ""),
            };
            let num = super::angles::is_number(v)
                .then(|| super::angles::atof(v))
                .filter(|x| x.is_finite());
            match (k, num) {
                ("spd", Some(x)) => {
                    if x >= 0.0 {
                        self.speed = x;
                        self.set = true;
                    }
                }
                ("dir", Some(x)) if x >= 0.0 => {
                    self.dir = super::angles::angle360(x);
                    self.set = true;
                }
                _ => return Err(format!("bad element `{}`", elem.trim())),
            }
        }
        Ok(())
    }
}

/// The polar plot: set points (angle off the wind in [0, 180], percent ≥ 0),
/// ascending by angle, and the wind angle it is oriented to, degrees.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolarPlot {
    points: Vec<(f64, f64)>,
    /// The wind angle the table is built for, degrees.
    pub wind_angle: f64,
    table: Option<Box<[Option<f64>; 361]>>,
}

impl PolarPlot {
    /// Whether the plot has any set point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The set points, ascending by angle.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Add a line `h,v: h,v: …` (docs/v22.md §11.2); any bad pair, or an
    /// angle already in the plot, rejects the whole line.
    pub fn add_line(&mut self, s: &str) -> Result<(), String> {
        let mut new: Vec<(f64, f64)> = Vec::new();
        for pair in s.split(':') {
            let (h, v) = pair
                .split_once(',')
                .ok_or_else(|| format!("`{}` is not `angle,percent`", pair.trim()))?;
            let (h, v) = (h.trim(), v.trim());
            if !super::angles::is_number(h) || !super::angles::is_number(v) {
                return Err(format!("`{}` is not two numbers", pair.trim()));
            }
            let (h, v) = (super::angles::atof(h), super::angles::atof(v));
            if !(0.0..=180.0).contains(&h) || v.is_nan() || v < 0.0 || v.is_infinite() {
                return Err(format!(
                    "`{}`: angle must be in [0, 180] and percent >= 0",
                    pair.trim()
                ));
            }
            if self.points.iter().any(|p| p.0 == h) {
                return Err(format!("angle {h} is already in the plot"));
            }
            if !new.iter().any(|p| p.0 == h) {
                new.push((h, v));
            }
        }
        self.points.extend(new);
        self.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.table = None;
        Ok(())
    }

    /// Orient the plot to wind direction `a`, degrees.
    pub fn set_wind_angle(&mut self, a: f64) {
        let a = super::angles::angle360(a);
        if a.to_bits() != self.wind_angle.to_bits() {
            self.table = None;
        }
        self.wind_angle = a;
    }

    /// Interpolated percent at angle off the wind `q` (degrees, [0, 180]).
    fn interp(&self, q: f64) -> f64 {
        let (mut lo, mut hi) = ((0.0, 0.0), (180.0, 0.0));
        for &p in &self.points {
            if p.0 == q {
                return p.1;
            }
            if p.0 < q {
                lo = p;
            } else {
                hi = p;
                break;
            }
        }
        if lo.0 == hi.0 {
            return lo.1;
        }
        lo.1 + ((q - lo.0) / (hi.0 - lo.0)) * (hi.1 - lo.1)
    }

    fn build_table(&self) -> Box<[Option<f64>; 361]> {
        let mut t = Box::new([None; 361]);
        for h in 0..360 {
            let hf = h as f64;
            let key = super::angles::angle360(hf + self.wind_angle + 0.5).trunc() as usize;
            let v = if h <= 180 {
                self.interp(hf)
            } else {
                self.interp(360.0 - hf)
            };
            if key < 361 {
                t[key] = Some(v);
            }
        }
        t
    }

    /// The speed fraction (≤ 1) at heading `h` (degrees); 0 where the
    /// table has no entry.
    pub fn fraction(&mut self, h: f64) -> f64 {
        if self.table.is_none() {
            self.table = Some(self.build_table());
        }
        let hh = super::angles::angle360(h);
        let key = (hh + 0.5).trunc();
        let val = match &self.table {
            Some(t) if (0.0..361.0).contains(&key) => t[key as usize].unwrap_or(0.0),
            _ => 0.0,
        };
        (val / 100.0).min(1.0)
    }
}

/// Wind plus polar plot: the sailing state of a vehicle.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sailing {
    /// The wind.
    pub wind: Wind,
    /// The polar plot.
    pub plot: PolarPlot,
}

impl Sailing {
    /// Sailing is enabled when the wind is set and the plot has a point.
    pub fn enabled(&self) -> bool {
        self.wind.set && !self.plot.is_empty()
    }

    /// Apply a wind string; on success the plot is re-oriented (on failure
    /// it is not — the C++'s behaviour, docs/v22.md §11.1).
    pub fn set_wind(&mut self, s: &str) -> Result<(), String> {
        self.wind.apply(s)?;
        if self.wind.set {
            self.plot.set_wind_angle(self.wind.dir);
        }
        Ok(())
    }

    /// The speed cap (m/s) at prior heading `h` (degrees); 0 = no cap.
    pub fn cap(&mut self, h: f64) -> f64 {
        if !self.enabled() {
            return 0.0;
        }
        self.plot.fraction(h) * self.wind.speed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sail() -> Sailing {
        let mut s = Sailing::default();
        s.plot.add_line("0,0: 30,10: 90,80: 180,60").unwrap();
        s.set_wind("spd=4, dir=0").unwrap();
        s
    }

    #[test]
    fn cap_interpolates_the_polar_plot() {
        let mut s = sail();
        // beam reach: 80 % of 4 m/s
        assert_eq!(s.cap(90.0), 3.2);
        assert_eq!(s.cap(270.0), 3.2);
        // 60°: between 30 (10 %) and 90 (80 %): 10 + 0.5·70 = 45 %
        assert!((s.cap(60.0) - 1.8).abs() < 1e-12);
        // head to wind: 0 -> no cap
        assert_eq!(s.cap(0.0), 0.0);
        // 359.5 and up: key 360 is never filled (the C++'s hole)
        assert_eq!(s.cap(359.7), 0.0);
    }

    #[test]
    fn wind_parse_applies_in_part_and_keeps_the_old_orientation() {
        let mut s = sail();
        assert!(s.set_wind("dir=90, spd=2.5, gust=4").is_err());
        assert_eq!(s.wind.dir, 90.0);
        assert_eq!(s.wind.speed, 2.5);
        assert_eq!(s.plot.wind_angle, 0.0);
        assert!(s.set_wind("spd=-1").is_ok()); // negative speed silently skipped
        assert_eq!(s.wind.speed, 2.5);
        assert!(s.set_wind("dir=-5").is_err());
    }

    #[test]
    fn polar_lines_reject_as_a_whole() {
        let mut p = PolarPlot::default();
        p.add_line("0,0: 90,50").unwrap();
        assert!(p.add_line("45,20: 90,10").is_err()); // 90 already there
        assert!(p.add_line("45,20: 200,10").is_err());
        assert!(p.add_line("45,x").is_err());
        assert_eq!(p.points(), &[(0.0, 0.0), (90.0, 50.0)]);
        p.add_line("45,20: 45,30").unwrap(); // repeated within a line: first kept
        assert_eq!(p.points()[1], (45.0, 20.0));
    }
}
