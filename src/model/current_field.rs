//! The built-in current field (docs/model.md §19, docs/formats.md §1): a set of
//! current vectors at fixed positions, read from a text file in the format
//! of MOOS-IvP's `CurrentField::populate`, and the local current at a point
//! as `CurrentField::getLocalForce` computes it. Sans-IO: [`CurrentField::parse`]
//! takes the file's text, the caller reads the file.
//!
//! File format, one entry per line (see docs/current_field.md):
//!
//! ```text
//! // comment
//! fieldname: bay
//! radius: 40
//! x=0, y=0, mag=0.5, ang=90
//! x=50, y=0, xdot=0.3, ydot=-0.1
//! ```
//!
//! Lookup: every vector `i` closer than `radius` to the point contributes
//! `w_i·(ẋ_i, ẏ_i)` with `w_i = (1 − d_i/radius)²`; the force is the sum
//! divided by the **number** of contributing vectors (not by the sum of the
//! weights); none ⇒ (0, 0).

use std::collections::HashMap;
use std::f64::consts::PI;
use std::fmt;

/// Radius of influence when the file gives none, m (`CurrentField` default).
pub const DEFAULT_RADIUS_M: f64 = 20.0;

/// One current vector of the field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldVector {
    /// East position, m.
    pub x_m: f64,
    /// North position, m.
    pub y_m: f64,
    /// East component of the current, m/s.
    pub xdot_mps: f64,
    /// North component of the current, m/s.
    pub ydot_mps: f64,
}

/// Why a current field file was rejected as a whole. (Single bad lines are
/// only warnings, see [`CurrentField::parse`].)
#[derive(Debug, Clone, PartialEq)]
pub enum CurrentFieldError {
    /// The text has no lines at all (`populate` fails on an empty file).
    Empty,
    /// No line defined a valid vector; `bad_lines` lines were skipped.
    NoVectors {
        /// Number of lines that were skipped as malformed.
        bad_lines: usize,
    },
}

impl fmt::Display for CurrentFieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CurrentFieldError::Empty => write!(f, "current field file is empty"),
            CurrentFieldError::NoVectors { bad_lines } => write!(
                f,
                "current field file defines no vectors ({bad_lines} malformed line(s) skipped); \
                 a vector line looks like `x=10, y=-20, mag=0.4, ang=135`"
            ),
        }
    }
}

impl std::error::Error for CurrentFieldError {}

/// A current field: vectors, a radius of influence and a spatial index.
#[derive(Debug, Clone, PartialEq)]
pub struct CurrentField {
    name: String,
    radius_m: f64,
    vectors: Vec<FieldVector>,
    /// Uniform grid of cell size `radius_m`: cell → indices into `vectors`
    /// (ascending). Empty when the radius is not positive and finite.
    cells: HashMap<(i64, i64), Vec<u32>>,
}

/// Vector fields that only change how a vector is drawn (XYVector's
/// `set_param`); accepted and ignored without a warning.
const COSMETIC_KEYS: &[&str] = &[
    "label",
    "label_color",
    "type",
    "active",
    "msg",
    "source",
    "time",
    "duration",
    "edge_color",
    "vertex_color",
    "edge_size",
    "vertex_size",
    "head_size",
    "transparency",
];

impl CurrentField {
    /// Parse a current field file's text (`CurrentField::populate`).
    ///
    /// Lines are trimmed and lower-cased; blank lines and `//` comments are
    /// ignored; `fieldname: NAME`, `radius: R` (m, default 20) and
    /// `render_hint: ...` (ignored) set properties — as in the C++, the
    /// colon must be followed by a space; every other line is a vector
    /// `x=..,y=..` (or `xpos=..,ypos=..`, both mandatory) with an optional
    /// `mag=..` (m/s), `ang=..` (marine degrees, the direction the current
    /// flows towards) and/or `xdot=..,ydot=..` (m/s, added to the mag/ang
    /// components). Numbers follow MOOS `isNumber` (no exponent).
    ///
    /// A line that is not understood is skipped and reported in the returned
    /// warnings as `line N: ...` (N counted from 1); so are ignored fields of
    /// an otherwise valid vector line. Errors only if the text has no lines
    /// or no valid vector at all.
    pub fn parse(text: &str) -> Result<(CurrentField, Vec<String>), CurrentFieldError> {
        if text.is_empty() {
            return Err(CurrentFieldError::Empty);
        }
        let mut name = String::from("generic_cfield");
        let mut radius_m = DEFAULT_RADIUS_M;
        let mut vectors = Vec::new();
        let mut warnings = Vec::new();
        let mut bad_lines = 0usize;

        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = strip_blank_ends(raw);
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            let line = line.to_ascii_lowercase();
            if let Some(rest) = line.strip_prefix("fieldname: ") {
                name = strip_blank_ends(rest).to_string();
                continue;
            }
            if let Some(rest) = line.strip_prefix("radius: ") {
                let value = strip_blank_ends(rest);
                if is_number(value) {
                    radius_m = atof(value);
                    if radius_m <= 0.0 {
                        warnings.push(format!(
                            "line {line_no}: radius {value} is not positive: no vector will have any effect"
                        ));
                    }
                } else {
                    bad_lines += 1;
                    warnings.push(format!(
                        "line {line_no}: skipped: radius `{value}` is not a number"
                    ));
                }
                continue;
            }
            if line.starts_with("render_hint: ") {
                continue;
            }
            match parse_vector(&line) {
                Ok((v, ignored)) => {
                    for w in ignored {
                        warnings.push(format!("line {line_no}: {w}"));
                    }
                    vectors.push(v);
                }
                Err(why) => {
                    bad_lines += 1;
                    let hint = if ["fieldname:", "radius:", "render_hint:"]
                        .iter()
                        .any(|k| line.starts_with(k))
                    {
                        " (the colon must be followed by a space)"
                    } else {
                        ""
                    };
                    warnings.push(format!(
                        "line {line_no}: skipped `{}`: {why}{hint}",
                        strip_blank_ends(raw)
                    ));
                }
            }
        }
        if vectors.is_empty() {
            return Err(CurrentFieldError::NoVectors { bad_lines });
        }
        let cells = build_index(&vectors, radius_m);
        Ok((
            CurrentField {
                name,
                radius_m,
                vectors,
                cells,
            },
            warnings,
        ))
    }

    /// The field's name (`fieldname:`, lower-cased; `generic_cfield` if
    /// the file gives none).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Radius of influence of each vector, m.
    pub fn radius_m(&self) -> f64 {
        self.radius_m
    }

    /// The vectors in file order.
    pub fn vectors(&self) -> &[FieldVector] {
        &self.vectors
    }

    /// The current (east, north), m/s, at the point (`x_m` east, `y_m`
    /// north), as `CurrentField::getLocalForce` computes it: the mean over
    /// the vectors closer than the radius of `(1 − d/radius)²·(ẋ, ẏ)`;
    /// (0, 0) if there is none. Never NaN: a non-finite point, or a
    /// non-finite sum, gives (0, 0).
    ///
    /// The sum runs in file order with each vector counted twice, as the C++
    /// (which stores every vector twice) does, so results are bit-identical
    /// to it.
    pub fn force_at(&self, x_m: f64, y_m: f64) -> (f64, f64) {
        if !x_m.is_finite() || !y_m.is_finite() || self.cells.is_empty() {
            return (0.0, 0.0);
        }
        let r = self.radius_m;
        let (cx0, cy0) = (cell_of(x_m - r, r), cell_of(y_m - r, r));
        let (cx1, cy1) = (cell_of(x_m + r, r), cell_of(y_m + r, r));
        let mut candidates: Vec<u32> = Vec::new();
        // At most 3×3 cells, as the cell size equals the radius.
        let mut cx = cx0;
        loop {
            let mut cy = cy0;
            loop {
                if let Some(ix) = self.cells.get(&(cx, cy)) {
                    candidates.extend_from_slice(ix);
                }
                if cy >= cy1 {
                    break;
                }
                cy += 1;
            }
            if cx >= cx1 {
                break;
            }
            cx += 1;
        }
        candidates.sort_unstable();

        let (mut total_x, mut total_y) = (0.0f64, 0.0f64);
        let mut count = 0u64;
        for &i in &candidates {
            let v = &self.vectors[i as usize];
            let dist = (x_m - v.x_m).hypot(y_m - v.y_m);
            if dist < r {
                let pct = 1.0 - dist / r;
                let pct = pct * pct;
                let (fx, fy) = (pct * v.xdot_mps, pct * v.ydot_mps);
                // Twice: the C++ stores each vector twice (docs/model.md §19).
                total_x += fx;
                total_y += fy;
                total_x += fx;
                total_y += fy;
                count += 2;
            }
        }
        if count == 0 {
            return (0.0, 0.0);
        }
        let (fx, fy) = (total_x / count as f64, total_y / count as f64);
        if fx.is_finite() && fy.is_finite() {
            (fx, fy)
        } else {
            (0.0, 0.0)
        }
    }
}

/// Grid cell of a coordinate for cell size `size` (saturating).
fn cell_of(v: f64, size: f64) -> i64 {
    // `as` saturates at the i64 range (and maps NaN to 0).
    (v / size).floor() as i64
}

fn build_index(vectors: &[FieldVector], radius_m: f64) -> HashMap<(i64, i64), Vec<u32>> {
    let mut cells: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
    if !(radius_m > 0.0 && radius_m.is_finite()) {
        return cells;
    }
    for (i, v) in vectors.iter().enumerate() {
        let Ok(i) = u32::try_from(i) else { break };
        cells
            .entry((cell_of(v.x_m, radius_m), cell_of(v.y_m, radius_m)))
            .or_default()
            .push(i);
    }
    cells
}

/// Parse one vector line (`string2Vector`). Returns the vector and
/// descriptions of ignored fields, or why the line is not a vector.
fn parse_vector(line: &str) -> Result<(FieldVector, Vec<String>), String> {
    let (mut xpos, mut ypos) = (None, None);
    let (mut mag, mut ang, mut xdot, mut ydot) = (0.0, 0.0, 0.0, 0.0);
    let mut ignored = Vec::new();
    for part in split_quoted(line, ',') {
        let (param, value) = match part.split_once('=') {
            Some((p, v)) => (strip_blank_ends(p), strip_blank_ends(v)),
            None => (strip_blank_ends(part), ""),
        };
        let num = if is_number(value) {
            Some(atof(value))
        } else {
            None
        };
        let slot = match param {
            "x" | "xpos" => Some(&mut xpos),
            "y" | "ypos" => Some(&mut ypos),
            _ => None,
        };
        if let Some(slot) = slot {
            match num {
                Some(n) => *slot = Some(n),
                None => ignored.push(format!("`{param}={value}` is not a number")),
            }
            continue;
        }
        let target = match param {
            "mag" => &mut mag,
            "ang" => &mut ang,
            "xdot" => &mut xdot,
            "ydot" => &mut ydot,
            "" => continue,
            p if COSMETIC_KEYS.contains(&p) => continue,
            p => {
                ignored.push(format!("ignored unknown field `{p}`"));
                continue;
            }
        };
        match num {
            Some(n) => *target = n,
            None => ignored.push(format!("ignored `{param}={value}`: not a number")),
        }
    }
    let (Some(x), Some(y)) = (xpos, ypos) else {
        let mut why = String::from("a vector needs numeric x= and y= (or xpos=, ypos=)");
        if !ignored.is_empty() {
            why.push_str("; ");
            why.push_str(&ignored.join("; "));
        }
        return Err(why);
    };
    // XYVector::setVectorMA, then mergeVectorXY.
    let rads = heading_to_radians(ang);
    let xdot_mps = rads.cos() * mag + xdot;
    let ydot_mps = rads.sin() * mag + ydot;
    if ![x, y, xdot_mps, ydot_mps].iter().all(|v| v.is_finite()) {
        return Err(String::from("a number is too large"));
    }
    Ok((
        FieldVector {
            x_m: x,
            y_m: y,
            xdot_mps,
            ydot_mps,
        },
        ignored,
    ))
}

/// Marine heading (degrees) to a math angle (radians), wrapped once into
/// [−π, π] (lib_geometry `headingToRadians`, docs/model.md §20).
fn heading_to_radians(h: f64) -> f64 {
    let mut r = ((90.0 - h) * PI) / 180.0;
    if r > PI {
        r -= 2.0 * PI;
    } else if r < -PI {
        r += 2.0 * PI;
    }
    r
}

/// MBUtils `stripBlankEnds`: trim blanks, tabs, CR, LF and NUL.
fn strip_blank_ends(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n' | '\0'))
}

/// MBUtils `isNumber`: optional leading `+`, digits, at most one `.`, `-`
/// only before any digit or dot, at least one digit; no exponent.
fn is_number(s: &str) -> bool {
    let s = strip_blank_ends(s);
    let s = if s.len() > 1 {
        s.strip_prefix('+').unwrap_or(s)
    } else {
        s
    };
    let (mut digits, mut dots) = (0, 0);
    for c in s.bytes() {
        match c {
            b'0'..=b'9' => digits += 1,
            b'.' => {
                dots += 1;
                if dots > 1 {
                    return false;
                }
            }
            b'-' if digits == 0 && dots == 0 => {}
            _ => return false,
        }
    }
    digits > 0
}

/// `atof` for strings that passed [`is_number`] (e.g. `--5` gives 0).
fn atof(s: &str) -> f64 {
    strip_blank_ends(s).parse().unwrap_or(0.0)
}

/// MBUtils `parseStringQ`: split at `sep` outside double quotes and braces.
fn split_quoted(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut in_quotes, mut braces) = (false, 0u32);
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_quotes = !in_quotes,
            '{' => braces += 1,
            '}' => braces = braces.saturating_sub(1),
            c if c == sep && !in_quotes && braces == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(text: &str) -> (CurrentField, Vec<String>) {
        match CurrentField::parse(text) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    fn close(a: (f64, f64), b: (f64, f64)) -> bool {
        (a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12
    }

    #[test]
    fn parses_properties_and_vectors() {
        let text =
            "// harbour\n\n  FieldName: Bay  \nradius: 50\nrender_hint: vector_edge_color=red\n\
                    x=0, y=0, mag=1, ang=90\nXPOS=10,YPOS=-5,xdot=0.25,ydot=-0.5\n";
        let (f, w) = field(text);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(f.name(), "bay");
        assert_eq!(f.radius_m(), 50.0);
        assert_eq!(f.vectors().len(), 2);
        let v = f.vectors()[0];
        // ang 90 (east), mag 1: cos(0)·1, sin(0)·1.
        assert_eq!((v.x_m, v.y_m, v.xdot_mps, v.ydot_mps), (0.0, 0.0, 1.0, 0.0));
        let v = f.vectors()[1];
        assert_eq!(
            (v.x_m, v.y_m, v.xdot_mps, v.ydot_mps),
            (10.0, -5.0, 0.25, -0.5)
        );
    }

    #[test]
    fn mag_ang_and_xdot_ydot_add() {
        // ang 0 = north: (cos(π/2)·2, sin(π/2)·2) + (0.5, 0.5) ≈ (0.5, 2.5).
        let (f, _) = field("x=0,y=0,mag=2,ang=0,xdot=0.5,ydot=0.5");
        let v = f.vectors()[0];
        assert!((v.xdot_mps - 0.5).abs() < 1e-15 && (v.ydot_mps - 2.5).abs() < 1e-15);
        // ang 225 = towards south-west; ang 585 is the same direction.
        let (f, _) = field("x=0,y=0,mag=1,ang=225\nx=0,y=0,mag=1,ang=585");
        for v in f.vectors() {
            let s = 0.5f64.sqrt();
            assert!((v.xdot_mps + s).abs() < 1e-12 && (v.ydot_mps + s).abs() < 1e-12);
        }
    }

    #[test]
    fn default_radius_is_20() {
        let (f, _) = field("x=0,y=0,xdot=1,ydot=0");
        assert_eq!(f.radius_m(), 20.0);
        assert_eq!(f.name(), "generic_cfield");
    }

    #[test]
    fn bad_lines_are_skipped_with_line_numbers() {
        let text = "radius: 30\nx=1,ydot=2\nradius:40\nx=abc,y=3,mag=1\nradius: big\n\
                    x=5,y=5,mag=1,ang=0,colour=red,mag2=3\nx=0,y=0,mag=1e2,ang=0\n";
        let (f, w) = field(text);
        assert_eq!(f.radius_m(), 30.0);
        // Line 6 is kept; `mag=1e2` (line 7) is ignored but the vector kept.
        assert_eq!(f.vectors().len(), 2);
        let joined = w.join("\n");
        for needle in [
            "line 2: skipped",
            "line 3: skipped",
            "colon must be followed by a space",
            "line 4: skipped",
            "line 5: skipped",
            "line 6: ignored unknown field `colour`",
            "line 6: ignored unknown field `mag2`",
            "line 7: ignored `mag=1e2`",
        ] {
            assert!(joined.contains(needle), "missing {needle:?} in\n{joined}");
        }
        // Line 7's vector has mag 0 (the 1e2 was ignored, as the C++ does).
        assert_eq!(f.vectors()[1].xdot_mps, 0.0);
        assert_eq!(f.vectors()[1].ydot_mps, 0.0);
    }

    #[test]
    fn whole_file_errors() {
        assert_eq!(CurrentField::parse(""), Err(CurrentFieldError::Empty));
        assert_eq!(
            CurrentField::parse("// only a comment\nfieldname: x\nnot a vector\n"),
            Err(CurrentFieldError::NoVectors { bad_lines: 1 })
        );
    }

    #[test]
    fn force_is_count_mean_of_weighted_vectors() {
        // radius 10; A at (0,0) (1,0) m/s; B at (10,0) (0,2) m/s.
        let (f, _) = field("radius: 10\nx=0,y=0,xdot=1,ydot=0\nx=10,y=0,xdot=0,ydot=2");
        // At (5,0): both at d=5, w=(1-0.5)²=0.25; mean = ((0.25,0)+(0,0.5))/2.
        assert!(close(f.force_at(5.0, 0.0), (0.125, 0.25)));
        // At (2,0): A d=2 w=0.64; B d=8 w=0.04 -> ((0.64,0)+(0,0.08))/2.
        assert!(close(f.force_at(2.0, 0.0), (0.32, 0.04)));
        // At (-3,0): only A, d=3, w=0.49 -> (0.49, 0), divided by count 1.
        assert!(close(f.force_at(-3.0, 0.0), (0.49, 0.0)));
        // On A: w=1 for A, B at d=10 is not < radius -> (1, 0).
        assert_eq!(f.force_at(0.0, 0.0), (1.0, 0.0));
        // Nothing within the radius.
        assert_eq!(f.force_at(0.0, 10.0), (0.0, 0.0));
        assert_eq!(f.force_at(100.0, -100.0), (0.0, 0.0));
        // Never NaN.
        assert_eq!(f.force_at(f64::NAN, 0.0), (0.0, 0.0));
        assert_eq!(f.force_at(0.0, f64::INFINITY), (0.0, 0.0));
    }

    #[test]
    fn non_positive_radius_gives_zero() {
        let (f, w) = field("radius: 0\nx=0,y=0,xdot=1,ydot=1");
        assert_eq!(f.force_at(0.0, 0.0), (0.0, 0.0));
        assert!(w[0].contains("not positive"));
        let (f, _) = field("radius: -5\nx=0,y=0,xdot=1,ydot=1");
        assert_eq!(f.force_at(0.0, 0.0), (0.0, 0.0));
    }

    /// The linear scan of `getLocalForce`, with the double storage.
    fn brute_force(f: &CurrentField, x: f64, y: f64) -> (f64, f64) {
        let (mut tx, mut ty, mut n) = (0.0, 0.0, 0u32);
        for v in f.vectors().iter().flat_map(|v| [v, v]) {
            let d = (x - v.x_m).hypot(y - v.y_m);
            if d < f.radius_m() {
                let p = 1.0 - d / f.radius_m();
                let p = p * p;
                tx += p * v.xdot_mps;
                ty += p * v.ydot_mps;
                n += 1;
            }
        }
        if n == 0 {
            (0.0, 0.0)
        } else {
            (tx / f64::from(n), ty / f64::from(n))
        }
    }

    #[test]
    fn grid_index_matches_linear_scan_bit_for_bit() {
        // A 60×50 lattice (3000 vectors, 7.3 m apart, shuffled file order)
        // and radius 18: every lookup must equal the brute-force scan.
        let mut lines = vec![String::from("radius: 18")];
        let mut k: u64 = 12345;
        let mut cells: Vec<(i32, i32)> =
            (0..60).flat_map(|i| (0..50).map(move |j| (i, j))).collect();
        for i in (1..cells.len()).rev() {
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            cells.swap(i, (k >> 33) as usize % (i + 1));
        }
        for (i, j) in cells {
            lines.push(format!(
                "x={:.3},y={:.3},mag={:.2},ang={}",
                f64::from(i) * 7.3 - 200.0,
                f64::from(j) * 7.3 - 150.0,
                0.1 + f64::from((i * 7 + j * 3) % 10) / 10.0,
                (i * 37 + j * 11) % 360
            ));
        }
        let (f, w) = field(&lines.join("\n"));
        assert!(w.is_empty());
        assert_eq!(f.vectors().len(), 3000);
        for q in 0..2000 {
            let x = -260.0 + (f64::from(q) * 0.618_034 * 560.0) % 560.0;
            let y = -200.0 + (f64::from(q) * 0.414_214 * 470.0) % 470.0;
            let got = f.force_at(x, y);
            let want = brute_force(&f, x, y);
            assert_eq!(got.0.to_bits(), want.0.to_bits(), "({x},{y})");
            assert_eq!(got.1.to_bits(), want.1.to_bits(), "({x},{y})");
        }
    }

    #[test]
    fn is_number_follows_mbutils() {
        for ok in ["1", "-1", "+1", "1.5", ".5", "-.5", "5.", "007"] {
            assert!(is_number(ok), "{ok}");
        }
        for bad in [
            "", "+", "-", ".", "1e5", "2e-1", "1.2.3", "1-", "abc", "1 2", "nan", "inf",
        ] {
            assert!(!is_number(bad), "{bad}");
        }
    }

    #[test]
    fn split_respects_quotes() {
        assert_eq!(
            split_quoted("x=1,label=\"a,b\",y=2", ','),
            vec!["x=1", "label=\"a,b\"", "y=2"]
        );
    }
}
