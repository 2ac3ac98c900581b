//! `USM_RESET` and `start_pos` (docs/model.md §14): a pose written as
//! `x=..,y=..,heading=..,speed=..,depth=..` or positionally `x,y,hdg,spd,dep`.
use super::angles::atof;

/// The fields a reset sets; `None` = not given (left unchanged).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PoseUpdate {
    /// East, m.
    pub x: Option<f64>,
    /// North, m.
    pub y: Option<f64>,
    /// Heading, degrees (stored verbatim, wrapped by the next step).
    pub heading: Option<f64>,
    /// Speed, m/s.
    pub speed: Option<f64>,
    /// Depth, m (a negative value is accepted and clipped by the next depth step).
    pub depth: Option<f64>,
}

/// Check a reset against the physical bounds of
/// [`crate::command::limits`]: `Err(reason)` names the first field outside.
pub fn check_bounds(p: &PoseUpdate) -> Result<(), String> {
    use crate::command::limits::{DEPTH_M, HEADING_DEG, POSITION_M, SPEED_MPS};
    let fields = [
        ("x", p.x, POSITION_M, "m"),
        ("y", p.y, POSITION_M, "m"),
        ("heading", p.heading, HEADING_DEG, "degrees"),
        ("speed", p.speed, SPEED_MPS, "m/s"),
        ("depth", p.depth, DEPTH_M, "m"),
    ];
    for (name, v, lim, unit) in fields {
        if let Some(v) = v {
            if !(v.is_finite() && v.abs() <= lim) {
                return Err(format!(
                    "{name}={} is outside the accepted range ±{lim} {unit} (physical bound)",
                    crate::command::fmt_num(v)
                ));
            }
        }
    }
    Ok(())
}

/// Parse a reset string. Elements are trimmed and lower-cased; values are
/// read with C `atof` (garbage reads 0). An unknown key stops processing:
/// the elements before it stay applied and the error says which key.
pub fn parse_pose(s: &str) -> (PoseUpdate, Option<String>) {
    let mut p = PoseUpdate::default();
    for (i, elem) in s.split(',').enumerate() {
        let elem = elem.trim().to_lowercase();
        let (key, val) = match elem.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => {
                let key = match i {
                    0 => "x",
                    1 => "y",
                    2 => "heading",
                    3 => "speed",
                    4 => "depth",
                    _ => elem.as_str(),
                };
                (key.to_string(), elem.clone())
            }
        };
        let v = atof(&val);
        match key.as_str() {
            "x" => p.x = Some(v),
            "y" => p.y = Some(v),
            "heading" | "hdg" | "deg" => p.heading = Some(v),
            "speed" | "spd" => p.speed = Some(v),
            "depth" | "dep" => p.depth = Some(v),
            _ => {
                return (
                    p,
                    Some(format!(
                        "unknown key `{key}` (known: x, y, heading|hdg|deg, speed|spd, depth|dep); the rest was ignored"
                    )),
                )
            }
        }
    }
    (p, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_and_positional() {
        let (p, e) = parse_pose("x=200, Y=250, speed=0.4, HEADING=135, depth=10");
        assert_eq!(e, None);
        assert_eq!(
            p,
            PoseUpdate {
                x: Some(200.0),
                y: Some(250.0),
                heading: Some(135.0),
                speed: Some(0.4),
                depth: Some(10.0)
            }
        );
        let (p, e) = parse_pose("1,2,3,4,5");
        assert_eq!(e, None);
        assert_eq!(p.depth, Some(5.0));
        assert_eq!(p.heading, Some(3.0));
    }

    #[test]
    fn unknown_key_stops_but_keeps_earlier() {
        let (p, e) = parse_pose("x=5, foo=3, y=7");
        assert_eq!(p.x, Some(5.0));
        assert_eq!(p.y, None);
        assert!(e.unwrap().contains("foo"));
        let (p, e) = parse_pose("1,2,3,4,5,6");
        assert!(e.is_some());
        assert_eq!(p.depth, Some(5.0));
    }

    #[test]
    fn garbage_values_read_zero_and_negative_depth_is_kept() {
        let (p, _) = parse_pose("x=abc, depth=-4, hdg=400");
        assert_eq!(p.x, Some(0.0));
        assert_eq!(p.depth, Some(-4.0));
        assert_eq!(p.heading, Some(400.0));
    }
}
