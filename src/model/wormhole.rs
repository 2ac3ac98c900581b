//! uSimMarineV22's wormholes (docs/v22.md §10): a vehicle that enters one
//! convex polygon fades out for 5 s, reappears at the mirrored entry point
//! of the paired polygon and fades in for 5 s.
//!
//! [`WormholeSet::configure`] parses one `wormhole = …` line; it is a pure
//! function of its text (fuzzable). Units: metres, seconds.
use super::angles::rel_ang;
use super::turn_limit::project_point;

/// Fade-out and fade-in, s (half the fixed tunnel time of 10 s).
const HALF_TUNNEL_S: f64 = 10.0 / 2.0;

/// A convex polygon (vertices in order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Polygon {
    /// Vertices (x, y), m.
    pub pts: Vec<(f64, f64)>,
    sides: Vec<i32>,
}

fn side(x1: f64, y1: f64, x2: f64, y2: f64, x3: f64, y3: f64) -> i32 {
    if x1 == x2 {
        if y1 == y2 {
            2
        } else if x3 > x1 {
            0
        } else if x3 < x1 {
            1
        } else {
            2
        }
    } else {
        let m = (y2 - y1) / (x2 - x1);
        let b = y2 - m * x2;
        let y = m * x3 + b;
        if y > y3 {
            0
        } else if y < y3 {
            1
        } else {
            2
        }
    }
}

impl Polygon {
    /// Parse `x,y:x,y:…` (braces already removed); must be convex.
    pub fn parse(s: &str) -> Result<Polygon, String> {
        let mut pts = Vec::new();
        for v in s.split(':') {
            let (x, y) = v
                .split_once(',')
                .ok_or_else(|| format!("vertex `{v}` is not `x,y`"))?;
            let (x, y) = (x.trim(), y.trim());
            if !super::angles::is_number(x) || !super::angles::is_number(y) {
                return Err(format!("vertex `{v}` is not two numbers"));
            }
            let (x, y) = (super::angles::atof(x), super::angles::atof(y));
            if !(x.is_finite() && y.is_finite() && x.abs() < 1e12 && y.abs() < 1e12) {
                return Err(format!("vertex `{v}` is out of range (|x|, |y| < 1e12 m)"));
            }
            pts.push((x, y));
        }
        let mut p = Polygon {
            pts,
            sides: Vec::new(),
        };
        if !p.compute_sides() {
            return Err("the polygon is not convex".into());
        }
        Ok(p)
    }

    fn compute_sides(&mut self) -> bool {
        let n = self.pts.len();
        if n < 3 {
            return false;
        }
        self.sides.clear();
        for i in 0..n {
            let (a, b) = (self.pts[i], self.pts[(i + 1) % n]);
            let mut s = -1;
            let mut ok = true;
            for (j, q) in self.pts.iter().enumerate() {
                if j == i || j == (i + 1) % n {
                    continue;
                }
                let sd = side(a.0, a.1, b.0, b.1, q.0, q.1);
                if sd == 2 {
                    continue;
                }
                if s == -1 {
                    s = sd;
                } else if s != sd {
                    ok = false;
                }
            }
            if !ok || s == -1 {
                return false;
            }
            self.sides.push(s);
        }
        true
    }

    /// Whether the polygon is convex (parsed polygons always are).
    pub fn is_convex(&self) -> bool {
        self.pts.len() >= 3 && self.sides.len() == self.pts.len()
    }

    /// Point in polygon, boundary included.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        if !self.is_convex() {
            return false;
        }
        let n = self.pts.len();
        for i in 0..n {
            let (a, b) = (self.pts[i], self.pts[(i + 1) % n]);
            if x == a.0 && y == a.1 {
                return true;
            }
            let sd = side(a.0, a.1, b.0, b.1, x, y);
            if sd != 2 && sd != self.sides[i] {
                return false;
            }
        }
        true
    }

    /// Vertex mean, m.
    pub fn centroid(&self) -> (f64, f64) {
        let n = self.pts.len() as f64;
        let (mut sx, mut sy) = (0.0, 0.0);
        for p in &self.pts {
            sx += p.0;
            sy += p.1;
        }
        (sx / n, sy / n)
    }

    fn bbox_centre(&self) -> (f64, f64) {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for p in &self.pts {
            x0 = x0.min(p.0);
            x1 = x1.max(p.0);
            y0 = y0.min(p.1);
            y1 = y1.max(p.1);
        }
        ((x0 + x1) / 2.0, (y0 + y1) / 2.0)
    }

    /// Where the segment from the bounding-box centre to `p` first crosses
    /// an edge (vertex order); `p` itself if none does.
    fn clamp(&self, p: (f64, f64)) -> (f64, f64) {
        let c = self.bbox_centre();
        let n = self.pts.len();
        for i in 0..n {
            let (a, b) = (self.pts[i], self.pts[(i + 1) % n]);
            if let Some(q) = seg_intersect(c, p, a, b) {
                return q;
            }
        }
        p
    }
}

fn seg_intersect(
    p1: (f64, f64),
    p2: (f64, f64),
    q1: (f64, f64),
    q2: (f64, f64),
) -> Option<(f64, f64)> {
    let r = (p2.0 - p1.0, p2.1 - p1.1);
    let s = (q2.0 - q1.0, q2.1 - q1.1);
    let den = r.0 * s.1 - r.1 * s.0;
    if den == 0.0 {
        return None;
    }
    let t = ((q1.0 - p1.0) * s.1 - (q1.1 - p1.1) * s.0) / den;
    let u = ((q1.0 - p1.0) * r.1 - (q1.1 - p1.1) * r.0) / den;
    ((0.0..=1.0).contains(&t) && (0.0..=1.0).contains(&u))
        .then_some((p1.0 + t * r.0, p1.1 + t * r.1))
}

/// Which way a wormhole carries a vehicle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// Enter madrid, exit weber (the default).
    FromMadrid,
    /// Enter weber, exit madrid.
    FromWeber,
    /// Both ways: accepted, never triggers (the C++'s behaviour).
    Both,
}

/// One wormhole.
#[derive(Debug, Clone, PartialEq)]
pub struct Wormhole {
    /// Tag (lower case).
    pub tag: String,
    /// The madrid polygon.
    pub madrid: Polygon,
    /// The weber polygon.
    pub weber: Polygon,
    /// Direction.
    pub connection: Connection,
    /// Parsed, unused, s.
    pub delay: f64,
    /// Parsed, unused.
    pub id_change: bool,
}

/// Split at commas outside `{…}`.
fn split_outside_braces(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The fading state.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Normal,
    Fading,
    Emerging,
}

/// All wormholes of a vehicle and the app's one state machine.
#[derive(Debug, Clone, PartialEq)]
pub struct WormholeSet {
    /// The wormholes, in configuration order.
    pub holes: Vec<Wormhole>,
    phase: Phase,
    stamp: f64,
    transparency: f64,
    entry: (f64, f64),
    active: usize,
}

impl Default for WormholeSet {
    fn default() -> Self {
        WormholeSet {
            holes: Vec::new(),
            phase: Phase::Normal,
            stamp: 0.0,
            transparency: 1.0,
            entry: (0.0, 0.0),
            active: 0,
        }
    }
}

impl WormholeSet {
    /// Whether any wormhole is configured (then `P_TRANSP` is published).
    pub fn is_empty(&self) -> bool {
        self.holes.is_empty()
    }

    /// Transparency, 0..1.
    pub fn transparency(&self) -> f64 {
        self.transparency
    }

    /// Apply one `wormhole = …` line (docs/v22.md §10.1). On error the line
    /// is rejected; a new tag's (empty) wormhole stays in the set.
    pub fn configure(&mut self, line: &str) -> Result<(), String> {
        let s: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        let elems = split_outside_braces(&s);
        let mut tag = None;
        for e in &elems {
            let parts: Vec<&str> = e.split('=').collect();
            if parts.len() != 2 {
                break;
            }
            if parts[0].eq_ignore_ascii_case("tag") {
                tag = Some(parts[1].to_lowercase());
                break;
            }
        }
        let tag = tag.ok_or("no `tag=` before the first element with more than one `=`")?;
        let idx = match self.holes.iter().position(|h| h.tag == tag) {
            Some(i) => i,
            None => {
                self.holes.push(Wormhole {
                    tag: tag.clone(),
                    madrid: Polygon::default(),
                    weber: Polygon::default(),
                    connection: Connection::FromMadrid,
                    delay: 0.0,
                    id_change: false,
                });
                self.holes.len() - 1
            }
        };
        let mut w = self.holes[idx].clone();
        for e in &elems {
            let (k, v) = e.split_once('=').unwrap_or((e, ""));
            match k.to_lowercase().as_str() {
                "madrid_poly" | "weber_poly" => {
                    let inner = v
                        .strip_prefix('{')
                        .and_then(|x| x.strip_suffix('}'))
                        .unwrap_or(v);
                    let p = Polygon::parse(inner).map_err(|e| format!("{k}: {e}"))?;
                    if k.eq_ignore_ascii_case("madrid_poly") {
                        w.madrid = p;
                    } else {
                        w.weber = p;
                    }
                }
                "connection" => {
                    w.connection = match v.to_lowercase().as_str() {
                        "both" => Connection::Both,
                        "from_madrid" => Connection::FromMadrid,
                        "from_weber" => Connection::FromWeber,
                        _ => {
                            return Err(format!(
                                "connection `{v}`: use both, from_madrid or from_weber"
                            ))
                        }
                    }
                }
                "delay" => {
                    if !super::angles::is_number(v) || super::angles::atof(v) < 0.0 {
                        return Err(format!("delay `{v}` must be a number >= 0"));
                    }
                    w.delay = super::angles::atof(v);
                }
                "id_change" => {
                    w.id_change = match v.to_lowercase().as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(format!("id_change `{v}` must be true or false")),
                    }
                }
                "tag" => {}
                _ => return Err(format!("unknown element `{e}`")),
            }
        }
        self.holes[idx] = w;
        Ok(())
    }

    /// One iteration at time `t_s` with the NAV position `(x, y)` after the
    /// step; returns the position to jump both records to, if any.
    pub fn update(&mut self, t_s: f64, x: f64, y: f64) -> Option<(f64, f64)> {
        match self.phase {
            Phase::Emerging => {
                let d = t_s - self.stamp;
                if d > HALF_TUNNEL_S {
                    self.phase = Phase::Normal;
                    self.stamp = t_s;
                    self.transparency = 1.0;
                } else {
                    self.transparency = d / HALF_TUNNEL_S;
                }
                return None;
            }
            Phase::Normal => {
                let hit = self.holes.iter().position(|h| match h.connection {
                    Connection::FromWeber => h.weber.contains(x, y),
                    Connection::FromMadrid => h.madrid.contains(x, y),
                    Connection::Both => false,
                })?;
                self.phase = Phase::Fading;
                self.stamp = t_s;
                self.active = hit;
                self.entry = (x, y);
            }
            Phase::Fading => {}
        }
        let d = t_s - self.stamp;
        if d >= HALF_TUNNEL_S {
            self.phase = Phase::Emerging;
            self.stamp = t_s;
            self.transparency = 0.0;
            self.jump()
        } else {
            self.transparency = 1.0 - (d / (10.0 / 2.0));
            None
        }
    }

    fn jump(&self) -> Option<(f64, f64)> {
        let h = self.holes.get(self.active)?;
        let (a, b) = match h.connection {
            Connection::FromWeber => (&h.weber, &h.madrid),
            _ => (&h.madrid, &h.weber),
        };
        if !a.is_convex() || !b.is_convex() {
            return None;
        }
        let ca = a.centroid();
        let cb = b.centroid();
        let e = self.entry;
        let rho = (e.0 - ca.0).hypot(e.1 - ca.1);
        let beta = rel_ang(ca.0, ca.1, e.0, e.1);
        let p = project_point(beta, rho, cb.0, cb.1);
        if !(p.0.is_finite() && p.1.is_finite()) {
            return None;
        }
        if b.contains(p.0, p.1) {
            Some(p)
        } else {
            Some(b.clamp(p))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "tag=W1, madrid_poly={40,-10:60,-10:60,10:40,10}, weber_poly={140,-10:160,-10:160,10:140,10}, connection=from_madrid";

    #[test]
    fn parse_and_convexity() {
        let mut s = WormholeSet::default();
        s.configure(LINE).unwrap();
        assert_eq!(s.holes[0].tag, "w1");
        assert!(s.holes[0].madrid.contains(40.0, 0.0));
        assert!(!s.holes[0].madrid.contains(39.9, 0.0));
        assert!(Polygon::parse("0,0:10,0:0,10:10,10").is_err()); // bow tie
        assert!(Polygon::parse("0,0:10,0").is_err());
        // rejected line with a new tag leaves an empty wormhole
        assert!(s.configure("tag=w2, connection=sideways").is_err());
        assert_eq!(s.holes.len(), 2);
        // rejected change to a known tag is dropped
        assert!(s.configure("tag=w1, connection=both, color=red").is_err());
        assert_eq!(s.holes[0].connection, Connection::FromMadrid);
        assert!(s.configure("madrid_poly={0,0:1,0:1,1}").is_err()); // no tag
    }

    #[test]
    fn fade_jump_emerge() {
        let mut s = WormholeSet::default();
        s.configure(LINE).unwrap();
        assert_eq!(s.update(1.0, 0.0, 0.0), None);
        assert_eq!(s.transparency(), 1.0);
        assert_eq!(s.update(2.0, 45.0, 5.0), None); // enters: fading
        assert_eq!(s.transparency(), 1.0);
        assert_eq!(s.update(4.5, 50.0, 5.0), None);
        assert_eq!(s.transparency(), 0.5);
        let p = s.update(7.0, 55.0, 5.0).unwrap(); // mirrored entry point
        assert!(
            (p.0 - 145.0).abs() < 1e-9 && (p.1 - 5.0).abs() < 1e-9,
            "{p:?}"
        );
        assert_eq!(s.transparency(), 0.0);
        assert_eq!(s.update(9.5, 150.0, 5.0), None);
        assert_eq!(s.transparency(), 0.5);
        s.update(12.5, 150.0, 5.0);
        assert_eq!(s.transparency(), 1.0);
    }
}
