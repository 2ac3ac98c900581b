//! uFldObstacleSim's obstacle file (docs/obstacles.md §1), parsed from its
//! text: one `key = value` per line, `poly = pts={x,y:x,y:…},label=…` for
//! each obstacle, `region = pts={…}` for the field's outline, and the
//! numbers `min_range`, `min_size`, `max_size` (m). Bounded: at most
//! [`MAX_OBSTACLES`] polygons of at most [`MAX_POINTS`] vertices, lines of
//! at most [`MAX_LINE_CHARS`] characters. Errors name the line and key.
use std::fmt;

use super::geometry::Polygon;

/// Most `poly` lines in one file (the largest generated fields of the
/// MOOS-IvP missions have tens).
pub const MAX_OBSTACLES: usize = 1000;
/// Most vertices of one polygon.
pub const MAX_POINTS: usize = 256;
/// Longest line, characters (256 vertices of `-12345.67,-12345.67:`).
pub const MAX_LINE_CHARS: usize = 8192;
/// Largest coordinate magnitude, m: a field of 10,000 km.
pub const MAX_COORD_M: f64 = 1e7;
/// Longest label, characters.
pub const MAX_LABEL_CHARS: usize = 64;

/// The keys of an obstacle file.
pub const FILE_KEYS: &[&str] = &["poly", "region", "min_range", "min_size", "max_size"];

/// The fields of a polygon spec besides `pts` and `label`: drawing hints
/// of MOOS-IvP's `XYObject`, accepted and not used.
pub const HINT_FIELDS: &[&str] = &[
    "active",
    "duration",
    "edge_color",
    "edge_size",
    "fill_color",
    "fill_transparency",
    "label_color",
    "msg",
    "source",
    "time",
    "type",
    "vertex_color",
    "vertex_size",
    "vsource",
];

/// One obstacle: its polygon and label.
#[derive(Debug, Clone, PartialEq)]
pub struct Obstacle {
    /// The label (`ob_<n>` by order in the file when none is given).
    pub label: String,
    /// The convex polygon, m.
    pub poly: Polygon,
}

/// A parsed obstacle file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ObstacleFile {
    /// The obstacles in file order.
    pub obstacles: Vec<Obstacle>,
    /// The `region` polygon, if given (drawn, not an obstacle).
    pub region: Option<Polygon>,
    /// `min_range`, m (kept for the record: usim does not regenerate fields).
    pub min_range: Option<f64>,
    /// `min_size`, m.
    pub min_size: Option<f64>,
    /// `max_size`, m.
    pub max_size: Option<f64>,
}

/// What is wrong with an obstacle file, where.
#[derive(Debug, Clone, PartialEq)]
pub struct FileError {
    /// 1-based line.
    pub line: usize,
    /// The key of the line (`poly`, `region`, …) or `pts`/`label` within it.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.key, self.message)
    }
}

impl std::error::Error for FileError {}

fn err(line: usize, key: &str, message: impl Into<String>) -> FileError {
    FileError {
        line,
        key: crate::text::clip(key, 40).into_owned(),
        message: message.into(),
    }
}

/// Parse the text of an obstacle file. Blank lines and lines starting
/// with `//` or `#` are skipped; keys are matched without regard to case.
pub fn parse(text: &str) -> Result<ObstacleFile, FileError> {
    let mut file = ObstacleFile::default();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.chars().count() > MAX_LINE_CHARS {
            return Err(err(
                n,
                "line",
                format!("longer than {MAX_LINE_CHARS} characters"),
            ));
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with("//") || line.starts_with('#') {
            continue;
        }
        let Some((left, right)) = line.split_once('=') else {
            return Err(err(n, "line", "expected `key = value`"));
        };
        let key = left.trim().to_ascii_lowercase();
        let value = right.trim();
        match key.as_str() {
            "poly" => {
                if file.obstacles.len() >= MAX_OBSTACLES {
                    return Err(err(
                        n,
                        "poly",
                        format!("more than {MAX_OBSTACLES} obstacles"),
                    ));
                }
                let (poly, label) = parse_spec(value, n, "poly")?;
                let label = label.unwrap_or_else(|| format!("ob_{}", file.obstacles.len()));
                if file.obstacles.iter().any(|o| o.label == label) {
                    return Err(err(
                        n,
                        "label",
                        format!("`{label}` is already an obstacle's label"),
                    ));
                }
                file.obstacles.push(Obstacle { label, poly });
            }
            "region" => file.region = Some(parse_spec(value, n, "region")?.0),
            "min_range" => file.min_range = Some(non_negative(value, n, "min_range")?),
            "min_size" => file.min_size = Some(non_negative(value, n, "min_size")?),
            "max_size" => file.max_size = Some(non_negative(value, n, "max_size")?),
            other => {
                let hint = crate::text::nearest(other, FILE_KEYS.iter().copied())
                    .map(|k| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                return Err(err(
                    n,
                    other,
                    format!(
                        "unknown key; an obstacle file has {}{hint}",
                        FILE_KEYS.join(", ")
                    ),
                ));
            }
        }
    }
    if let (Some(lo), Some(hi)) = (file.min_size, file.max_size) {
        if lo > hi {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("min_size"));
            return Err(err(
                line.map_or(0, |l| l + 1),
                "min_size",
                format!("{lo} is greater than max_size {hi}"),
            ));
        }
    }
    Ok(file)
}

fn non_negative(value: &str, line: usize, key: &str) -> Result<f64, FileError> {
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(err(
            line,
            key,
            format!(
                "expected a number of metres ≥ 0, got `{}`",
                crate::text::clip(value, 40)
            ),
        )),
    }
}

/// Split `s` at the commas outside `{…}` and `"…"`.
fn split_fields(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' if !quoted => depth += 1,
            '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// A polygon spec `pts={x,y:x,y:…},label=…[,hint=…]` → its convex
/// polygon and label (`what` names the line's key in errors).
pub fn parse_spec(
    spec: &str,
    line: usize,
    what: &str,
) -> Result<(Polygon, Option<String>), FileError> {
    let mut pts: Option<Vec<(f64, f64)>> = None;
    let mut label = None;
    for field in split_fields(spec) {
        let field = field.trim();
        let Some((k, v)) = field.split_once('=') else {
            return Err(err(
                line,
                what,
                format!(
                    "expected `name=value`, got `{}`",
                    crate::text::clip(field, 40)
                ),
            ));
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        match k.as_str() {
            "pts" | "points" => pts = Some(parse_points(v, line)?),
            "label" => label = Some(parse_label(v, line)?),
            h if HINT_FIELDS.contains(&h) => {}
            other => {
                return Err(err(
                    line,
                    other,
                    format!(
                        "unknown field of a polygon; it has pts, label and drawing hints ({})",
                        HINT_FIELDS.join(", ")
                    ),
                ))
            }
        }
    }
    let Some(pts) = pts else {
        return Err(err(line, what, "no `pts={x,y:x,y:…}`"));
    };
    let poly = Polygon { pts };
    if !poly.is_convex() {
        return Err(err(
            line,
            "pts",
            "not a convex polygon (uFldObstacleSim takes convex polygons only: at least 3 vertices, no dents, no crossing)",
        ));
    }
    Ok((poly, label))
}

fn parse_points(v: &str, line: usize) -> Result<Vec<(f64, f64)>, FileError> {
    let inner = v
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .or_else(|| v.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .unwrap_or(v);
    let mut pts = Vec::new();
    for pair in inner.split(':') {
        if pts.len() >= MAX_POINTS {
            return Err(err(line, "pts", format!("more than {MAX_POINTS} vertices")));
        }
        let nums: Vec<&str> = pair.split(',').map(str::trim).collect();
        if !(2..=3).contains(&nums.len()) {
            return Err(err(
                line,
                "pts",
                format!(
                    "expected `x,y` (or `x,y,z`), got `{}`",
                    crate::text::clip(pair, 40)
                ),
            ));
        }
        let coord = |s: &str| match s.parse::<f64>() {
            Ok(c) if c.is_finite() && c.abs() <= MAX_COORD_M => Ok(c),
            _ => Err(err(
                line,
                "pts",
                format!(
                    "`{}` is not a coordinate (a number of metres, |x| ≤ 1e7)",
                    crate::text::clip(s, 40)
                ),
            )),
        };
        let (x, y) = (coord(nums[0])?, coord(nums[1])?);
        if let Some(z) = nums.get(2) {
            coord(z)?;
        }
        pts.push((x, y));
    }
    Ok(pts)
}

fn parse_label(v: &str, line: usize) -> Result<String, FileError> {
    let ok = !v.is_empty()
        && v.chars().count() <= MAX_LABEL_CHARS
        && v.chars()
            .all(|c| c.is_ascii_graphic() && !",={}:\"".contains(c));
    if ok {
        Ok(v.to_string())
    } else {
        Err(err(
            line,
            "label",
            format!(
                "a label has 1 to {MAX_LABEL_CHARS} printable ASCII characters without , = {{ }} : or \"; got `{}`",
                crate::text::escape_control(&crate::text::clip(v, 40))
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELD: &str = "// a field of two obstacles\n\
        region = pts={0,0:100,0:100,-100:0,-100}\n\
        min_range = 10\n\
        min_size = 5\n\
        max_size = 20\n\
        \n\
        poly = pts={50,-10:70,-10:70,10:50,10},label=ob_box\n\
        poly = pts={10,-50 : 20,-50 : 15,-40}\n";

    #[test]
    fn a_field_with_region_numbers_and_two_polygons() {
        let f = parse(FIELD).unwrap();
        assert_eq!(f.obstacles.len(), 2);
        assert_eq!(f.obstacles[0].label, "ob_box");
        assert_eq!(f.obstacles[0].poly.pts[2], (70.0, 10.0));
        assert_eq!(f.obstacles[1].label, "ob_1", "unlabelled: ob_<index>");
        assert_eq!(f.obstacles[1].poly.pts.len(), 3);
        assert_eq!(f.region.as_ref().map(|r| r.pts.len()), Some(4));
        assert_eq!(
            (f.min_range, f.min_size, f.max_size),
            (Some(10.0), Some(5.0), Some(20.0))
        );
    }

    #[test]
    fn drawing_hints_and_z_are_accepted() {
        let f =
            parse("poly = pts={0,0,1:4,0,1:4,4,1},label=a,edge_color=red,vertex_size=2\n").unwrap();
        assert_eq!(
            f.obstacles[0].poly.pts,
            vec![(0.0, 0.0), (4.0, 0.0), (4.0, 4.0)]
        );
    }

    fn error(text: &str) -> FileError {
        parse(text).unwrap_err()
    }

    #[test]
    fn errors_name_line_and_key() {
        let e = error("min_range = 5\npolly = pts={0,0:1,0:1,1}\n");
        assert_eq!((e.line, e.key.as_str()), (2, "polly"));
        assert!(e.message.contains("did you mean `poly`"), "{e}");
        let e = error("\n\npoly = pts={0,0:10,0:5,5:10,10:0,10}\n");
        assert_eq!((e.line, e.key.as_str()), (3, "pts"));
        assert!(e.message.contains("convex"), "{e}");
        let e = error("poly = pts={0,0:1,x:1,1}\n");
        assert_eq!((e.line, e.key.as_str()), (1, "pts"));
        let e = error("poly = pts={0,0:1,0:1,1},colour=red\n");
        assert_eq!(e.key, "colour");
        let e = error("poly = label=a\n");
        assert!(e.message.contains("no `pts"), "{e}");
        let e = error("min_size = -1\n");
        assert_eq!(e.key, "min_size");
        let e = error("min_size = 30\nmax_size = 20\n");
        assert_eq!((e.line, e.key.as_str()), (1, "min_size"));
        let e = error("poly = pts={0,0:1,0:1,1},label=a\npoly = pts={5,0:6,0:6,1},label=a\n");
        assert_eq!((e.line, e.key.as_str()), (2, "label"));
        let e = error("poly = pts={0,0:1,0:1,1},label=a b\n");
        assert_eq!(e.key, "label");
        let e = error("poly = pts={0,0:1,0:NaN,1}\n");
        assert_eq!(e.key, "pts");
        let e = error("just words\n");
        assert_eq!((e.line, e.key.as_str()), (1, "line"));
    }

    #[test]
    fn bounds() {
        let long = format!("poly = pts={{{}}}\n", "1,1:".repeat(MAX_LINE_CHARS / 4));
        assert!(error(&long).message.contains("longer than"));
        let circle: Vec<String> = (0..=MAX_POINTS)
            .map(|i| {
                let a = i as f64 * std::f64::consts::TAU / (MAX_POINTS + 1) as f64;
                format!("{:.3},{:.3}", 1000.0 * a.cos(), 1000.0 * a.sin())
            })
            .collect();
        let e = error(&format!("poly = pts={{{}}}\n", circle.join(":")));
        assert!(e.message.contains("vertices"), "{e}");
        let many = "poly = pts={0,0:1,0:1,1}\n".repeat(MAX_OBSTACLES + 1);
        let e = error(&many);
        // unlabelled copies get distinct labels, so the cap is what stops them
        assert_eq!(e.line, MAX_OBSTACLES + 1);
    }
}
