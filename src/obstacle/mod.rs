//! Polygon obstacles as MOOS-IvP missions use them (docs/obstacles.md),
//! sans-IO: uFldObstacleSim's obstacle file ([`file`]), the geometry of a
//! hull point against a polygon ([`geometry`]), the postings' text
//! ([`postings`]), and a [`Tracker`] that turns one vehicle's positions
//! into hits (`OBSTACLE_HIT`) and sensed points (`TRACKED_FEATURE_<V>`).
//! Time and positions are arguments; the runners (replay, the live host)
//! read the file and deliver what the tracker returns.
use std::sync::Arc;

pub mod file;
pub mod geometry;
pub mod postings;

pub use file::{parse, FileError, Obstacle, ObstacleFile};
pub use geometry::Polygon;

/// Default `sensor_range`, m: uFldObstacleSim's.
pub const DEFAULT_SENSOR_RANGE_M: f64 = 50.0;
/// Default `hit_range`, m: uFldCollObDetect's `collision_dist`.
pub const DEFAULT_HIT_RANGE_M: f64 = 1.0;

/// How a vehicle meets and senses the obstacles (the `[obstacles]` table,
/// docs/config.md).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Obstacles whose polygon is within this distance of the vehicle are
    /// sensed (`TRACKED_FEATURE_<V>` points), m.
    pub sensor_range: f64,
    /// The hull meets an obstacle when its reference point is inside the
    /// polygon or closer to it than this, m (a hull radius).
    pub hit_range: f64,
    /// Post `TRACKED_FEATURE_<V>` points instead of `GIVEN_OBSTACLE`
    /// (uFldObstacleSim's `post_points`).
    pub post_points: bool,
    /// Post the start-up set again every this many seconds, s (`None`:
    /// once; uFldObstacleSim's `refresh_interval`).
    pub refresh_interval: Option<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sensor_range: DEFAULT_SENSOR_RANGE_M,
            hit_range: DEFAULT_HIT_RANGE_M,
            post_points: false,
            refresh_interval: None,
        }
    }
}

/// An obstacle field and the settings it is used with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Setup {
    /// The parsed file.
    pub field: ObstacleFile,
    /// The settings.
    pub settings: Settings,
}

/// One hit: the vehicle's reference point met obstacle `index`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Index of the obstacle in the file.
    pub index: usize,
    /// Its label.
    pub label: String,
}

/// One vehicle's view of the obstacles: which it is touching, how many
/// hits so far.
#[derive(Debug, Clone)]
pub struct Tracker {
    setup: Arc<Setup>,
    touching: Vec<bool>,
    hits: u64,
    last_start_posting: Option<f64>,
}

impl Tracker {
    /// A tracker touching nothing.
    pub fn new(setup: Arc<Setup>) -> Self {
        let n = setup.field.obstacles.len();
        Tracker {
            setup,
            touching: vec![false; n],
            hits: 0,
            last_start_posting: None,
        }
    }

    /// The setup.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// Hits so far (each time the vehicle comes to touch an obstacle it
    /// was not touching).
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// The vehicle is at `(x, y)`, m: the obstacles it touches now and did
    /// not touch at the last call (each counted as a hit). It touches an
    /// obstacle when inside it or closer than `hit_range`.
    pub fn observe(&mut self, x: f64, y: f64) -> Vec<Hit> {
        let mut new = Vec::new();
        let range = self.setup.settings.hit_range;
        for (i, ob) in self.setup.field.obstacles.iter().enumerate() {
            let d = ob.poly.distance(x, y);
            let touch = d == 0.0 || d < range;
            if touch && !self.touching[i] {
                self.hits += 1;
                new.push(Hit {
                    index: i,
                    label: ob.label.clone(),
                });
            }
            self.touching[i] = touch;
        }
        new
    }

    /// The postings of start-up (and of each refresh), `(variable, value)`
    /// in uFldObstacleSim's order: a `VIEW_POLYGON` per obstacle, the
    /// region's, then per obstacle `KNOWN_OBSTACLE` and (unless points are
    /// posted) `GIVEN_OBSTACLE`.
    pub fn start_postings(&self) -> Vec<(&'static str, String)> {
        let f = &self.setup.field;
        let mut out: Vec<(&'static str, String)> = f
            .obstacles
            .iter()
            .map(|o| (postings::VIEW_POLYGON, postings::view_polygon(o)))
            .collect();
        if let Some(r) = &f.region {
            out.push((postings::VIEW_POLYGON, postings::view_region(r)));
        }
        for o in &f.obstacles {
            let spec = postings::known_obstacle(o);
            if !self.setup.settings.post_points {
                out.push((postings::KNOWN_OBSTACLE, spec.clone()));
                out.push((postings::GIVEN_OBSTACLE, spec));
            } else {
                out.push((postings::KNOWN_OBSTACLE, spec));
            }
        }
        out
    }

    /// Whether the start-up set is due at clock `t_s` (s): the first call,
    /// then every `refresh_interval`; marks it posted.
    pub fn start_postings_due(&mut self, t_s: f64) -> bool {
        let due = match (
            self.last_start_posting,
            self.setup.settings.refresh_interval,
        ) {
            (None, _) => true,
            (Some(last), Some(every)) => t_s - last >= every,
            (Some(_), None) => false,
        };
        if due {
            self.last_start_posting = Some(t_s);
        }
        due
    }

    /// The points of the obstacles within `sensor_range` of `(x, y)` (m),
    /// `(x, y, label)`: per such obstacle its boundary point nearest the
    /// vehicle, then its vertices within range. Empty unless
    /// `post_points`.
    pub fn features(&self, x: f64, y: f64) -> Vec<(f64, f64, &str)> {
        let s = &self.setup.settings;
        let mut out = Vec::new();
        if !s.post_points {
            return out;
        }
        for ob in &self.setup.field.obstacles {
            let Some((q, d)) = ob.poly.nearest_boundary_point(x, y) else {
                continue;
            };
            if !ob.poly.contains(x, y) && d > s.sensor_range {
                continue;
            }
            out.push((q.0, q.1, ob.label.as_str()));
            for &(vx, vy) in &ob.poly.pts {
                if (vx - x).hypot(vy - y) <= s.sensor_range && (vx, vy) != q {
                    out.push((vx, vy, ob.label.as_str()));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(post_points: bool) -> Arc<Setup> {
        let field = parse(
            "region = pts={0,20:100,20:100,-20:0,-20}\n\
             poly = pts={50,-10:70,-10:70,10:50,10},label=box\n",
        )
        .unwrap();
        Arc::new(Setup {
            field,
            settings: Settings {
                sensor_range: 20.0,
                hit_range: 5.0,
                post_points,
                refresh_interval: Some(10.0),
            },
        })
    }

    #[test]
    fn a_hit_is_counted_once_per_approach() {
        let mut t = Tracker::new(setup(false));
        assert!(t.observe(44.0, 0.0).is_empty(), "6 m off");
        assert!(
            t.observe(45.0, 0.0).is_empty(),
            "5 m: not closer than hit_range"
        );
        let h = t.observe(45.1, 0.0);
        assert_eq!(
            h,
            vec![Hit {
                index: 0,
                label: "box".into()
            }]
        );
        assert!(t.observe(60.0, 0.0).is_empty(), "still touching (inside)");
        assert!(t.observe(80.0, 0.0).is_empty(), "10 m east: left it");
        assert_eq!(t.observe(74.0, 0.0).len(), 1, "came back: 4 m off");
        assert_eq!(t.hits(), 2);
    }

    #[test]
    fn start_postings_in_order_and_refreshed() {
        let mut t = Tracker::new(setup(false));
        let vars: Vec<&str> = t.start_postings().iter().map(|p| p.0).collect();
        assert_eq!(
            vars,
            [
                "VIEW_POLYGON",
                "VIEW_POLYGON",
                "KNOWN_OBSTACLE",
                "GIVEN_OBSTACLE"
            ]
        );
        assert!(t.start_postings_due(100.0));
        assert!(!t.start_postings_due(109.9));
        assert!(t.start_postings_due(110.0));
        let t = Tracker::new(setup(true));
        let vars: Vec<&str> = t.start_postings().iter().map(|p| p.0).collect();
        assert_eq!(vars, ["VIEW_POLYGON", "VIEW_POLYGON", "KNOWN_OBSTACLE"]);
    }

    #[test]
    fn features_within_sensor_range() {
        let t = Tracker::new(setup(true));
        assert!(t.features(29.0, 0.0).is_empty(), "21 m off");
        // 15 m west of the west edge: the nearest point (50, 0); the west
        // vertices are hypot(15, 10) = 18.03 m away, the east ones 35.
        let f = t.features(35.0, 0.0);
        assert_eq!(
            f,
            vec![
                (50.0, 0.0, "box"),
                (50.0, -10.0, "box"),
                (50.0, 10.0, "box")
            ]
        );
        assert!(Tracker::new(setup(false)).features(35.0, 0.0).is_empty());
    }
}
