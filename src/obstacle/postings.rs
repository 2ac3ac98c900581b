//! The text of the obstacle postings, as uFldObstacleSim writes them
//! (docs/obstacles.md §3): `GIVEN_OBSTACLE`/`KNOWN_OBSTACLE` (points and
//! label), `VIEW_POLYGON` (the same with pMarineViewer's drawing hints),
//! `TRACKED_FEATURE_<VNAME>` (one point of an obstacle within sensor
//! range) and `OBSTACLE_HIT`.
use super::file::Obstacle;
use super::geometry::Polygon;

/// The obstacle's polygon for shoreside apps (ground truth).
pub const KNOWN_OBSTACLE: &str = "KNOWN_OBSTACLE";
/// The obstacle's polygon for the vehicles (when points are not posted).
pub const GIVEN_OBSTACLE: &str = "GIVEN_OBSTACLE";
/// A polygon to draw (pMarineViewer).
pub const VIEW_POLYGON: &str = "VIEW_POLYGON";
/// Prefix of the per-vehicle point postings (`TRACKED_FEATURE_ALPHA`).
pub const TRACKED_FEATURE: &str = "TRACKED_FEATURE";
/// A hull met an obstacle; uSimMarineV22 halts on it.
pub const OBSTACLE_HIT: &str = "OBSTACLE_HIT";
/// The value of `OBSTACLE_HIT` usim posts: a bool word (V22 reads string
/// bools; the classic app takes any string message as a hit).
pub const HIT_VALUE: &str = "true";

/// A number as MOOS-IvP's `doubleToStringX(v, digits)` writes it: fixed
/// `digits` decimals, then trailing zeros and a trailing `.` removed, and
/// `-0` written `0`.
pub fn number_x(v: f64, digits: usize) -> String {
    let mut s = format!("{v:.digits$}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// `pts={x,y:x,y:…}` with `digits` decimals (`XYSegList::get_spec_pts`).
pub fn pts_spec(poly: &Polygon, digits: usize) -> String {
    let pts: Vec<String> = poly
        .pts
        .iter()
        .map(|&(x, y)| format!("{},{}", number_x(x, digits), number_x(y, digits)))
        .collect();
    format!("pts={{{}}}", pts.join(":"))
}

/// `GIVEN_OBSTACLE` and `KNOWN_OBSTACLE`: `pts={…},label=…`, 2 decimals
/// (`get_spec_pts_label(2)` in uFldObstacleSim's `postObstaclesRefresh`).
pub fn known_obstacle(ob: &Obstacle) -> String {
    format!("{},label={}", pts_spec(&ob.poly, 2), ob.label)
}

/// `VIEW_POLYGON` of an obstacle: the points (2 decimals), the label and
/// uFldObstacleSim's default drawing hints, in `XYObject::get_spec`'s
/// order (label, label colour, edge, vertex and fill colours, vertex and
/// edge sizes, fill transparency).
pub fn view_polygon(ob: &Obstacle) -> String {
    format!(
        "{},label={},label_color=invisible,edge_color=gray50,vertex_color=gray50,\
         fill_color=white,vertex_size=1,edge_size=1,fill_transparency=0.15",
        pts_spec(&ob.poly, 2),
        ob.label
    )
}

/// `VIEW_POLYGON` of the region: 1 decimal (`get_spec()`'s default),
/// label `obs_region`, edge `gray50`, vertices `white`.
pub fn view_region(region: &Polygon) -> String {
    format!(
        "{},label=obs_region,edge_color=gray50,vertex_color=white",
        pts_spec(region, 1)
    )
}

/// The variable of a vehicle's points: `TRACKED_FEATURE_` and the name in
/// upper case.
pub fn tracked_feature_var(vehicle: &str) -> String {
    format!("{TRACKED_FEATURE}_{}", vehicle.to_ascii_uppercase())
}

/// One point of obstacle `label`: `x=…,y=…,key=…` (2 decimals).
pub fn tracked_feature(x: f64, y: f64, label: &str) -> String {
    format!("x={},y={},key={label}", number_x(x, 2), number_x(y, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ob() -> Obstacle {
        Obstacle {
            label: "ob_0".into(),
            poly: Polygon {
                pts: vec![(50.0, -10.0), (70.126, -10.0), (70.0, 10.004), (50.0, 10.0)],
            },
        }
    }

    #[test]
    fn numbers_as_double_to_string_x() {
        assert_eq!(number_x(10.0, 2), "10");
        assert_eq!(number_x(10.5, 2), "10.5");
        assert_eq!(number_x(-0.001, 2), "0");
        assert_eq!(number_x(2.345678, 2), "2.35");
        assert_eq!(number_x(-80.4, 2), "-80.4");
        assert_eq!(number_x(100.0, 0), "100");
    }

    #[test]
    fn spec_texts() {
        assert_eq!(
            known_obstacle(&ob()),
            "pts={50,-10:70.13,-10:70,10:50,10},label=ob_0"
        );
        assert!(view_polygon(&ob()).starts_with("pts={50,-10:70.13,-10:70,10:50,10},label=ob_0,"));
        assert!(view_polygon(&ob()).ends_with(",fill_transparency=0.15"));
        assert_eq!(
            view_region(&Polygon {
                pts: vec![(0.0, 0.0), (100.0, 0.0), (100.0, -100.26)]
            }),
            "pts={0,0:100,0:100,-100.3},label=obs_region,edge_color=gray50,vertex_color=white"
        );
        assert_eq!(tracked_feature_var("alpha-2"), "TRACKED_FEATURE_ALPHA-2");
        assert_eq!(
            tracked_feature(45.0, -3.456, "ob_0"),
            "x=45,y=-3.46,key=ob_0"
        );
    }
}
