//! MOOS geometry postings for the view, sans IO: `VIEW_POINT`,
//! `VIEW_POLYGON`, `VIEW_SEGLIST`, `VIEW_CIRCLE`, `VIEW_MARKER` and
//! `VIEW_ARROW` in pMarineViewer's string forms, e.g.
//! `x=1,y=2,label=a,vertex_color=red,active=true,duration=5` or
//! `pts={1,2:3,4},label=wpts,edge_color=yellow`, received on
//! `{root}/{NAME}/VIEW_*` (a usim vehicle, a script, or the MOOS⇄MQTT
//! bridge mirroring a community).
//!
//! Outside input: every message is parsed with bounded sizes; numbers must
//! be finite and within ±1e9 m; labels are kept as text (the page escapes
//! control characters when it draws them); colours must be words or
//! `#rrggbb`. The [`Shapes`] store is bounded per source and in sources,
//! oldest first out. Times are arguments (s, any monotonic clock).
use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

/// The variables read, and the shape kind each gives.
pub const VIEW_VARS: &[(&str, Kind)] = &[
    ("VIEW_POINT", Kind::Point),
    ("VIEW_POLYGON", Kind::Polygon),
    ("VIEW_SEGLIST", Kind::Seglist),
    ("VIEW_CIRCLE", Kind::Circle),
    ("VIEW_MARKER", Kind::Marker),
    ("VIEW_ARROW", Kind::Arrow),
];
/// Longest posting parsed, bytes.
pub const MAX_SPEC: usize = 16 * 1024;
/// Most vertices of a polygon or seglist.
pub const MAX_POINTS: usize = 500;
/// Longest label kept, characters.
pub const MAX_LABEL: usize = 64;
/// Most shapes kept per source (oldest first out).
pub const MAX_PER_SOURCE: usize = 200;
/// Most sources kept (the one updated longest ago goes first).
pub const MAX_SOURCES: usize = 64;
/// Largest coordinate or radius accepted, m.
pub const MAX_COORD: f64 = 1e9;
/// How far from a vehicle that reports `OBSTACLE_HIT` the polygon it hit
/// may be, m: its report is at most one iteration old and the hit range
/// (`hit_range`, default 1 m) a few metres.
pub const HIT_SEARCH_M: f64 = 10.0;

/// A shape kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A point (`x`, `y`).
    Point,
    /// A closed polygon (`pts`).
    Polygon,
    /// An open line (`pts`).
    Seglist,
    /// A circle (`x`, `y`, `radius`).
    Circle,
    /// A marker (`x`, `y`, `type`).
    Marker,
    /// An arrow (`x`, `y`, `angle` degrees clockwise from north, `length` m).
    Arrow,
}

/// One shape as the page draws it. Units: m, degrees.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shape {
    /// The kind.
    pub kind: Kind,
    /// Who posted it (the `{NAME}` of the topic).
    pub source: String,
    /// Label (may be empty: then each posting is a new shape).
    pub label: String,
    /// Position, m (points, circles, markers, arrows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    /// Position, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    /// Vertices, m (polygons, seglists).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pts: Vec<[f64; 2]>,
    /// Circle radius, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub radius: Option<f64>,
    /// Arrow direction, degrees clockwise from north.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub angle: Option<f64>,
    /// Arrow length, m.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// Colours (CSS names or `#rrggbb`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge_color: Option<String>,
    /// Vertex / fill colour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vertex_color: Option<String>,
    /// Label colour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_color: Option<String>,
    /// Marker type (`circle`, `triangle`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// Fill colour of a polygon (`fill_color`), drawn with
    /// [`Shape::fill_transparency`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_color: Option<String>,
    /// Opacity of the fill, 0 to 1 (`fill_transparency`, as
    /// uFldObstacleSim posts it: 0.15 by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_transparency: Option<f64>,
    /// A vehicle reported `OBSTACLE_HIT` at this polygon ([`Shapes::mark_hit`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hit: bool,
    /// When it goes (caller's clock, s), from `duration`.
    #[serde(skip)]
    pub expires_at: Option<f64>,
}

/// What a posting asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Posting {
    /// Draw (or replace the shape of the same source, kind and label).
    Draw(Box<Shape>),
    /// `active=false`: remove the shape of that source, kind and label.
    Erase {
        /// The kind.
        kind: Kind,
        /// The label.
        label: String,
    },
}

/// Split `a=1,pts={1,2:3,4},b=x` at the commas outside braces.
fn fields(spec: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = spec.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' => depth = (depth - 1).max(0),
            b',' if depth == 0 => {
                out.push(&spec[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&spec[start..]);
    out.into_iter()
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect()
}

fn number(key: &str, v: &str) -> Result<f64, String> {
    let x: f64 = v
        .parse()
        .map_err(|_| format!("{key} = {:?} is not a number", clip(v)))?;
    if !x.is_finite() || x.abs() > MAX_COORD {
        return Err(format!(
            "{key} = {} is out of range (±{MAX_COORD})",
            clip(v)
        ));
    }
    Ok(x)
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

/// `{1,2:3,4}` or `1,2:3,4` → vertices (a third value per vertex, e.g. a
/// depth, is ignored).
fn points(v: &str) -> Result<Vec<[f64; 2]>, String> {
    let inner = v.trim().trim_start_matches('{').trim_end_matches('}');
    let mut pts = Vec::new();
    for vertex in inner.split(':').map(str::trim).filter(|s| !s.is_empty()) {
        if pts.len() >= MAX_POINTS {
            return Err(format!("more than {MAX_POINTS} vertices"));
        }
        let mut it = vertex.split(',');
        let x = number("x", it.next().unwrap_or("").trim())?;
        let y = number("y", it.next().unwrap_or("").trim())?;
        pts.push([x, y]);
    }
    Ok(pts)
}

/// A colour word (`light_blue` → `lightblue`, as CSS spells it) or `#rrggbb`.
fn colour(v: &str) -> Option<String> {
    let v = v.trim().to_ascii_lowercase();
    let word: String = v.chars().filter(|c| *c != '_').collect();
    if (1..=24).contains(&word.len()) && word.chars().all(|c| c.is_ascii_lowercase()) {
        return Some(word);
    }
    if v.len() == 7 && v.starts_with('#') && v[1..].chars().all(|c| c.is_ascii_hexdigit()) {
        return Some(v);
    }
    // pMarineViewer's `hex:rrggbb` form.
    let hex = v.strip_prefix("hex:")?;
    (hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| format!("#{hex}"))
}

/// Parse one posting of `kind` from `source` arriving at `now` (s).
pub fn parse(kind: Kind, source: &str, spec: &[u8], now: f64) -> Result<Posting, String> {
    if spec.len() > MAX_SPEC {
        return Err(format!("longer than {MAX_SPEC} bytes"));
    }
    let spec = std::str::from_utf8(spec).map_err(|_| "not UTF-8".to_string())?;
    let mut s = Shape {
        kind,
        source: source.to_string(),
        label: String::new(),
        x: None,
        y: None,
        pts: Vec::new(),
        radius: None,
        angle: None,
        length: None,
        edge_color: None,
        vertex_color: None,
        label_color: None,
        marker: None,
        fill_color: None,
        fill_transparency: None,
        hit: false,
        expires_at: None,
    };
    let mut active = true;
    for (key, v) in fields(spec) {
        match key.to_ascii_lowercase().as_str() {
            "x" => s.x = Some(number("x", v)?),
            "y" => s.y = Some(number("y", v)?),
            "pts" => s.pts = points(v)?,
            "radius" | "rad" => s.radius = Some(number("radius", v)?.abs()),
            "angle" | "heading" => s.angle = Some(number("angle", v)?),
            "length" | "mag" | "len" => s.length = Some(number("length", v)?.abs()),
            "label" => s.label = v.chars().take(MAX_LABEL).collect(),
            "edge_color" | "color" | "colour" => s.edge_color = colour(v),
            "vertex_color" | "primary_color" => s.vertex_color = colour(v),
            "fill_color" => {
                // Before the fill was drawn it was the vertex colour; it
                // still is when no vertex_color is given.
                s.fill_color = colour(v);
                if s.vertex_color.is_none() {
                    s.vertex_color.clone_from(&s.fill_color);
                }
            }
            "fill_transparency" => {
                s.fill_transparency = Some(number("fill_transparency", v)?.clamp(0.0, 1.0))
            }
            "label_color" => s.label_color = colour(v),
            "type" if kind == Kind::Marker => {
                s.marker = Some(
                    v.chars()
                        .take(24)
                        .filter(char::is_ascii_alphanumeric)
                        .collect(),
                )
            }
            "active" => active = !v.eq_ignore_ascii_case("false"),
            "duration" => {
                let d = number("duration", v)?;
                if d > 0.0 {
                    s.expires_at = Some(now + d);
                }
            }
            _ => {} // msg, vertex_size, edge_size, time, …: not drawn
        }
    }
    if !active {
        return Ok(Posting::Erase {
            kind,
            label: s.label,
        });
    }
    match kind {
        Kind::Polygon | Kind::Seglist if s.pts.is_empty() => Err("no pts".into()),
        Kind::Polygon | Kind::Seglist => Ok(Posting::Draw(Box::new(s))),
        _ if s.x.is_none() || s.y.is_none() => Err("x and y are needed".into()),
        Kind::Circle if s.radius.is_none() => Err("no radius".into()),
        _ => Ok(Posting::Draw(Box::new(s))),
    }
}

/// The shapes of every source, bounded.
#[derive(Debug, Clone, Default)]
pub struct Shapes {
    sources: BTreeMap<String, (f64, VecDeque<Shape>)>,
    dirty: bool,
}

impl Shapes {
    /// Take a posting from `source` at `now` (s).
    pub fn apply(&mut self, source: &str, p: Posting, now: f64) {
        if !self.sources.contains_key(source) && self.sources.len() >= MAX_SOURCES {
            let oldest = self
                .sources
                .iter()
                .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
                .map(|(n, _)| n.clone());
            if let Some(n) = oldest {
                self.sources.remove(&n);
            }
        }
        let (at, list) = self
            .sources
            .entry(source.to_string())
            .or_insert_with(|| (now, VecDeque::new()));
        *at = now;
        match p {
            Posting::Erase { kind, label } => {
                list.retain(|s| !(s.kind == kind && s.label == label));
            }
            Posting::Draw(mut shape) => {
                if !shape.label.is_empty() {
                    // A polygon posted again (uFldObstacleSim's refresh)
                    // stays hit.
                    let same = |s: &Shape| s.kind == shape.kind && s.label == shape.label;
                    shape.hit |= list.iter().any(|s| same(s) && s.hit);
                    list.retain(|s| !same(s));
                }
                if list.len() >= MAX_PER_SOURCE {
                    list.pop_front();
                }
                list.push_back(*shape);
            }
        }
        self.dirty = true;
    }

    /// A vehicle at `(x, y)` (m) reported `OBSTACLE_HIT`: the polygon
    /// nearest to it (0 inside), of any source, within [`HIT_SEARCH_M`],
    /// is marked hit (the posting names no obstacle, so the position
    /// decides). Returns the label of the polygon marked, if any. Costs at
    /// most one pass over the stored vertices (bounded by [`MAX_SOURCES`],
    /// [`MAX_PER_SOURCE`] and [`MAX_POINTS`]).
    pub fn mark_hit(&mut self, x: f64, y: f64) -> Option<String> {
        if !x.is_finite() || !y.is_finite() {
            return None;
        }
        let mut best: Option<(f64, &mut Shape)> = None;
        for (_, list) in self.sources.values_mut() {
            for s in list.iter_mut().filter(|s| s.kind == Kind::Polygon) {
                let poly = crate::obstacle::Polygon {
                    pts: s.pts.iter().map(|p| (p[0], p[1])).collect(),
                };
                let d = poly.distance(x, y);
                if d <= HIT_SEARCH_M && best.as_ref().is_none_or(|(bd, _)| d < *bd) {
                    best = Some((d, s));
                }
            }
        }
        let (_, s) = best?;
        if !s.hit {
            s.hit = true;
            self.dirty = true;
        }
        Some(s.label.clone())
    }

    /// Drop shapes whose `duration` has passed.
    pub fn expire(&mut self, now: f64) {
        for (_, list) in self.sources.values_mut() {
            let before = list.len();
            list.retain(|s| s.expires_at.is_none_or(|t| t > now));
            if list.len() != before {
                self.dirty = true;
            }
        }
        self.sources.retain(|_, (_, l)| !l.is_empty());
    }

    /// Every shape, oldest first per source.
    pub fn all(&self) -> impl Iterator<Item = &Shape> {
        self.sources.values().flat_map(|(_, l)| l.iter())
    }

    /// Whether something changed since the last [`Shapes::take_json`].
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// `{"type":"geometry","shapes":[…]}` for the page; clears the flag.
    pub fn take_json(&mut self) -> String {
        self.dirty = false;
        let shapes: Vec<&Shape> = self.all().collect();
        serde_json::json!({ "type": "geometry", "shapes": shapes }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(kind: Kind, spec: &str) -> Shape {
        match parse(kind, "alpha", spec.as_bytes(), 10.0).unwrap() {
            Posting::Draw(s) => *s,
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn pmarineviewer_forms() {
        let p = draw(
            Kind::Point,
            "x=1,y=2,label=a,vertex_color=red,active=true,duration=5",
        );
        assert_eq!((p.x, p.y), (Some(1.0), Some(2.0)));
        assert_eq!(p.label, "a");
        assert_eq!(p.vertex_color.as_deref(), Some("red"));
        assert_eq!(p.expires_at, Some(15.0));
        let g = draw(
            Kind::Polygon,
            "pts={1,2:3,4:5,-6},label=op_area,edge_color=light_blue",
        );
        assert_eq!(g.pts, vec![[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]]);
        assert_eq!(g.edge_color.as_deref(), Some("lightblue"));
        let s = draw(Kind::Seglist, "pts={0,0:10,0:10,10,3},label=wpts");
        assert_eq!(s.pts.len(), 3);
        let c = draw(
            Kind::Circle,
            "x=5,y=5,radius=20,label=c1,edge_color=hex:ff0000",
        );
        assert_eq!(c.radius, Some(20.0));
        assert_eq!(c.edge_color.as_deref(), Some("#ff0000"));
        let a = draw(Kind::Arrow, "x=0,y=0,angle=45,length=10,label=wind");
        assert_eq!((a.angle, a.length), (Some(45.0), Some(10.0)));
        let m = draw(
            Kind::Marker,
            "type=triangle,x=3,y=4,label=buoy,color=orange",
        );
        assert_eq!(m.marker.as_deref(), Some("triangle"));
        assert_eq!(
            parse(Kind::Point, "a", b"x=1,y=2,label=a,active=false", 0.0).unwrap(),
            Posting::Erase {
                kind: Kind::Point,
                label: "a".into()
            }
        );
    }

    #[test]
    fn bad_postings_are_refused() {
        for (kind, spec) in [
            (Kind::Point, "x=1"),
            (Kind::Point, "x=nan,y=1"),
            (Kind::Point, "x=1e308,y=1"),
            (Kind::Circle, "x=1,y=1"),
            (Kind::Polygon, "label=a"),
            (Kind::Polygon, "pts={1,2:3}"),
        ] {
            assert!(parse(kind, "a", spec.as_bytes(), 0.0).is_err(), "{spec}");
        }
        let many = format!("pts={{{}}}", vec!["1,1"; MAX_POINTS + 1].join(":"));
        assert!(parse(Kind::Seglist, "a", many.as_bytes(), 0.0).is_err());
        assert!(parse(Kind::Point, "a", &vec![b'x'; MAX_SPEC + 1], 0.0).is_err());
        // Colours that are not colours are dropped, not passed to the page.
        let p = draw(Kind::Point, "x=1,y=1,vertex_color=url(javascript:x)");
        assert_eq!(p.vertex_color, None);
    }

    #[test]
    fn the_store_is_bounded_replaces_by_label_and_expires() {
        let mut s = Shapes::default();
        for i in 0..MAX_PER_SOURCE + 20 {
            let p = parse(Kind::Point, "a", format!("x={i},y=0").as_bytes(), 0.0).unwrap();
            s.apply("a", p, 0.0);
        }
        assert_eq!(s.all().count(), MAX_PER_SOURCE);
        assert_eq!(s.all().next().unwrap().x, Some(20.0));
        let mut s = Shapes::default();
        for x in [1, 2] {
            let p = parse(
                Kind::Point,
                "a",
                format!("x={x},y=0,label=p").as_bytes(),
                0.0,
            )
            .unwrap();
            s.apply("a", p, 0.0);
        }
        assert_eq!(s.all().count(), 1);
        assert_eq!(s.all().next().unwrap().x, Some(2.0));
        let p = parse(Kind::Point, "a", b"x=1,y=1,label=q,duration=5", 0.0).unwrap();
        s.apply("a", p, 0.0);
        s.expire(4.0);
        assert_eq!(s.all().count(), 2);
        s.expire(6.0);
        assert_eq!(s.all().count(), 1);
        for i in 0..MAX_SOURCES + 5 {
            let p = parse(Kind::Point, "x", b"x=1,y=1", 0.0).unwrap();
            s.apply(&format!("src{i}"), p, 10.0 + i as f64);
        }
        assert!(s.sources.len() <= MAX_SOURCES);
        let v: serde_json::Value = serde_json::from_str(&s.take_json()).unwrap();
        assert_eq!(v["type"], "geometry");
    }
}
