//! Plane geometry of obstacle polygons, in local metres (x east, y north):
//! point in polygon, distance from a point to a polygon's edges, the
//! nearest point of the boundary, and the convexity test uFldObstacleSim
//! applies to every polygon it reads (docs/obstacles.md §2).

/// A closed polygon: vertices in order, the last joined back to the first.
#[derive(Debug, Clone, PartialEq)]
pub struct Polygon {
    /// Vertices `(x, y)`, m, in order (either sense).
    pub pts: Vec<(f64, f64)>,
}

/// The point of segment `a`–`b` nearest to `p`, and its distance, m.
pub fn nearest_on_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> ((f64, f64), f64) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let s = if len2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let q = (a.0 + s * dx, a.1 + s * dy);
    (q, (p.0 - q.0).hypot(p.1 - q.1))
}

impl Polygon {
    /// The edges `(from, to)`, the closing edge last.
    pub fn edges(&self) -> impl Iterator<Item = ((f64, f64), (f64, f64))> + '_ {
        let n = self.pts.len();
        (0..n).map(move |i| (self.pts[i], self.pts[(i + 1) % n]))
    }

    /// Whether `(x, y)` is inside or on the boundary (crossing count, with
    /// points on an edge counted inside).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        if self.pts.len() < 3 {
            return false;
        }
        let mut inside = false;
        for (a, b) in self.edges() {
            if nearest_on_segment((x, y), a, b).1 == 0.0 {
                return true;
            }
            if (a.1 > y) != (b.1 > y) {
                let xc = a.0 + (y - a.1) * (b.0 - a.0) / (b.1 - a.1);
                if x < xc {
                    inside = !inside;
                }
            }
        }
        inside
    }

    /// The point of the boundary nearest to `(x, y)` and its distance, m
    /// (`None` for a polygon without vertices).
    pub fn nearest_boundary_point(&self, x: f64, y: f64) -> Option<((f64, f64), f64)> {
        self.edges()
            .map(|(a, b)| nearest_on_segment((x, y), a, b))
            .min_by(|p, q| p.1.total_cmp(&q.1))
    }

    /// Distance from `(x, y)` to the polygon, m: 0 inside or on the
    /// boundary, else the distance to the nearest edge (uFldCollObDetect's
    /// rule: `dist_to_poly` alone is the distance to the nearest edge even
    /// from inside, so it tests containment first).
    pub fn distance(&self, x: f64, y: f64) -> f64 {
        if self.contains(x, y) {
            return 0.0;
        }
        self.nearest_boundary_point(x, y)
            .map_or(f64::INFINITY, |(_, d)| d)
    }

    /// Whether the polygon is convex: at least 3 vertices, every turn
    /// between consecutive edges the same way (straight runs allowed), the
    /// turns summing to one full circle (a star drawn in one stroke turns
    /// the same way at every vertex but twice round), and a nonzero area.
    pub fn is_convex(&self) -> bool {
        let n = self.pts.len();
        if n < 3 {
            return false;
        }
        let (mut pos, mut neg) = (false, false);
        let mut turning = 0.0f64;
        for i in 0..n {
            let a = self.pts[i];
            let b = self.pts[(i + 1) % n];
            let c = self.pts[(i + 2) % n];
            let (u, v) = ((b.0 - a.0, b.1 - a.1), (c.0 - b.0, c.1 - b.1));
            if u == (0.0, 0.0) {
                return false;
            }
            let cross = u.0 * v.1 - u.1 * v.0;
            let dot = u.0 * v.0 + u.1 * v.1;
            pos |= cross > 0.0;
            neg |= cross < 0.0;
            turning += cross.atan2(dot);
        }
        !(pos && neg) && (turning.abs() - std::f64::consts::TAU).abs() < 1e-6 && self.area() > 0.0
    }

    /// Area, m² (shoelace, either sense).
    pub fn area(&self) -> f64 {
        let s: f64 = self.edges().map(|(a, b)| a.0 * b.1 - b.0 * a.1).sum();
        s.abs() / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The square 50..70 × −10..10 of the replay test (docs/obstacles.md).
    fn square() -> Polygon {
        Polygon {
            pts: vec![(50.0, -10.0), (70.0, -10.0), (70.0, 10.0), (50.0, 10.0)],
        }
    }

    #[test]
    fn inside_outside_and_on_the_edge() {
        let s = square();
        assert!(s.contains(60.0, 0.0));
        assert!(s.contains(50.0, 0.0), "on the west edge");
        assert!(s.contains(70.0, 10.0), "a vertex");
        assert!(!s.contains(49.9, 0.0));
        assert!(!s.contains(60.0, 10.1));
        assert!(!s.contains(80.0, 0.0), "east, on the line of no edge");
    }

    #[test]
    fn distances_worked_by_hand() {
        let s = square();
        // west of the west edge: straight across, 50 − 45 = 5
        assert_eq!(s.distance(45.0, 0.0), 5.0);
        // south-west of the corner (50, −10): the 3-4-5 triangle
        assert_eq!(s.distance(47.0, -14.0), 5.0);
        // inside: 0, though the nearest edge is 10 away
        assert_eq!(s.distance(60.0, 0.0), 0.0);
        let (q, d) = s.nearest_boundary_point(60.0, 0.0).unwrap();
        assert_eq!(d, 10.0);
        assert!(q == (60.0, -10.0) || q == (70.0, 0.0) || q == (60.0, 10.0) || q == (50.0, 0.0));
        // north of the top edge at x = 55: nearest point (55, 10), 3 away
        let (q, d) = s.nearest_boundary_point(55.0, 13.0).unwrap();
        assert_eq!((q, d), ((55.0, 10.0), 3.0));
    }

    #[test]
    fn convexity() {
        assert!(square().is_convex());
        let mut cw = square();
        cw.pts.reverse();
        assert!(cw.is_convex(), "clockwise is as convex");
        // an arrow head: the vertex (60, 0) dents the square
        let dent = Polygon {
            pts: vec![
                (50.0, -10.0),
                (70.0, -10.0),
                (60.0, 0.0),
                (70.0, 10.0),
                (50.0, 10.0),
            ],
        };
        assert!(!dent.is_convex());
        // a bow tie crosses itself
        let bow = Polygon {
            pts: vec![(0.0, 0.0), (10.0, 10.0), (10.0, 0.0), (0.0, 10.0)],
        };
        assert!(!bow.is_convex());
        // the five-pointed star in one stroke turns left at every vertex, twice round
        let star: Vec<(f64, f64)> = (0..5)
            .map(|i| {
                let a = (i as f64) * 4.0 * std::f64::consts::PI / 5.0;
                (a.sin() * 10.0, a.cos() * 10.0)
            })
            .collect();
        assert!(!Polygon { pts: star }.is_convex());
        let line = Polygon {
            pts: vec![(0.0, 0.0), (5.0, 0.0), (10.0, 0.0)],
        };
        assert!(!line.is_convex(), "no area");
        assert!(!Polygon {
            pts: vec![(0.0, 0.0), (1.0, 0.0)]
        }
        .is_convex());
        assert_eq!(square().area(), 400.0);
    }
}
