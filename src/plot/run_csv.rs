//! Reading run CSVs (as `usim replay` and `usim record` write them) for
//! plotting. A pure function over bytes, so it can be fuzzed: any input
//! gives either runs or an error naming the line and column.
//!
//! Columns are found by header name, never by position; extra columns are
//! ignored. An optional `vehicle` column splits the rows into one run per
//! vehicle (in order of first appearance).
use std::fmt;

/// Optional columns of the sensed position (`sensed_x`, `sensed_y`, m):
/// with both, the plot draws the sensed track next to the true one.
pub const SENSED: [&str; 2] = ["sensed_x", "sensed_y"];

/// Columns a run CSV must have.
pub const REQUIRED: [&str; 10] = [
    "k", "t", "x", "y", "speed", "heading", "depth", "rudder", "thrust", "elevator",
];

/// One vehicle's run: columns as vectors of equal length (NaN = not set).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    /// Vehicle name (the `vehicle` column), empty without one.
    pub vehicle: String,
    /// Iteration index.
    pub k: Vec<f64>,
    /// Mission time, s.
    pub t: Vec<f64>,
    /// East, m.
    pub x: Vec<f64>,
    /// North, m.
    pub y: Vec<f64>,
    /// Speed, m/s.
    pub speed: Vec<f64>,
    /// Heading, degrees (0 = north, clockwise).
    pub heading: Vec<f64>,
    /// Depth, m.
    pub depth: Vec<f64>,
    /// Rudder as the model holds it (degrees/percent).
    pub rudder: Vec<f64>,
    /// Thrust, percent.
    pub thrust: Vec<f64>,
    /// Elevator, percent.
    pub elevator: Vec<f64>,
    /// The sensed (published, noisy) position east, m, next to the true
    /// one (`x`): empty when the file has none; NaN rows are dropouts.
    pub sensed_x: Vec<f64>,
    /// The sensed position north, m.
    pub sensed_y: Vec<f64>,
}

impl Run {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// Whether the run has a sensed track (one value per row).
    pub fn has_sensed(&self) -> bool {
        !self.sensed_x.is_empty() && self.sensed_x.len() == self.len()
    }

    /// The ten numeric columns in [`REQUIRED`]'s order.
    pub(super) fn columns_mut(&mut self) -> [&mut Vec<f64>; 10] {
        [
            &mut self.k,
            &mut self.t,
            &mut self.x,
            &mut self.y,
            &mut self.speed,
            &mut self.heading,
            &mut self.depth,
            &mut self.rudder,
            &mut self.thrust,
            &mut self.elevator,
        ]
    }
}

/// Why a CSV is not a run CSV: 1-based line and (when it is about one
/// field) 1-based column number and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// Line, 1-based.
    pub line: usize,
    /// Column number (1-based) and header name, when one field is at fault.
    pub column: Option<(usize, String)>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some((n, name)) = &self.column {
            write!(f, ", column {n} ({name})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for CsvError {}

/// Parse a run CSV. Numbers are Rust `f64` syntax (`nan` = not set); a
/// field that is not a number or is ±inf, a row with the wrong number of fields, a
/// missing column, an empty file or a file without rows is an error.
pub fn parse(bytes: &[u8]) -> Result<Vec<Run>, CsvError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        CsvError {
            line,
            column: None,
            reason: "not UTF-8 text".into(),
        }
    })?;
    let mut lines = text.lines().enumerate();
    let header = match lines.next() {
        Some((_, h)) if !h.trim().is_empty() => h,
        _ => {
            return Err(CsvError {
                line: 1,
                column: None,
                reason: format!(
                    "empty file: expected a header with the columns {}",
                    REQUIRED.join(",")
                ),
            })
        }
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let mut index = [0usize; REQUIRED.len()];
    let mut missing = Vec::new();
    for (slot, want) in index.iter_mut().zip(REQUIRED) {
        match names.iter().position(|n| *n == want) {
            Some(i) => *slot = i,
            None => missing.push(want),
        }
    }
    if !missing.is_empty() {
        return Err(CsvError {
            line: 1,
            column: None,
            reason: format!(
                "not a usim run CSV: missing column{} {} (header: {})",
                if missing.len() > 1 { "s" } else { "" },
                missing.join(", "),
                truncate(header, 120)
            ),
        });
    }
    let vehicle_col = names.iter().position(|n| *n == "vehicle");
    let sensed_cols = match SENSED.map(|c| names.iter().position(|n| *n == c)) {
        [Some(a), Some(b)] => Some([a, b]),
        _ => None,
    };

    let mut runs: Vec<Run> = Vec::new();
    let mut fields: Vec<&str> = Vec::with_capacity(names.len());
    for (i, line) in lines {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        fields.clear();
        fields.extend(line.split(','));
        if fields.len() != names.len() {
            return Err(CsvError {
                line: line_no,
                column: None,
                reason: format!("{} fields, the header has {}", fields.len(), names.len()),
            });
        }
        let vehicle = vehicle_col.map(|c| fields[c].trim()).unwrap_or("");
        let run = match runs.iter().position(|r| r.vehicle == vehicle) {
            Some(r) => &mut runs[r],
            None => {
                runs.push(Run {
                    vehicle: vehicle.to_string(),
                    ..Run::default()
                });
                runs.last_mut().expect("pushed")
            }
        };
        let mut values = [0.0; REQUIRED.len()];
        for (j, (&col, want)) in index.iter().zip(REQUIRED).enumerate() {
            let field = fields[col].trim();
            let err = |what: &str| CsvError {
                line: line_no,
                column: Some((col + 1, want.to_string())),
                reason: format!("{:?} is not {what}", truncate(field, 40)),
            };
            values[j] = field.parse::<f64>().map_err(|_| err("a number"))?;
            // `inf` parses, but no run holds it (NaN means "not set")
            if values[j].is_infinite() {
                return Err(err("a finite number"));
            }
        }
        for (column, v) in run.columns_mut().into_iter().zip(values) {
            column.push(v);
        }
        if let Some(cols) = sensed_cols {
            let mut xy = [f64::NAN; 2];
            for (slot, (col, want)) in xy.iter_mut().zip(cols.into_iter().zip(SENSED)) {
                let field = fields[col].trim();
                *slot = field
                    .parse::<f64>()
                    .ok()
                    .filter(|v| !v.is_infinite())
                    .ok_or_else(|| CsvError {
                        line: line_no,
                        column: Some((col + 1, want.to_string())),
                        reason: format!("{:?} is not a finite number", truncate(field, 40)),
                    })?;
            }
            run.sensed_x.push(xy[0]);
            run.sensed_y.push(xy[1]);
        }
    }
    if runs.is_empty() {
        return Err(CsvError {
            line: 2,
            column: None,
            reason: "no rows after the header".into(),
        });
    }
    Ok(runs)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "k,t,x,y,speed,heading,depth,altitude,pitch,yaw,sog,hog,nav_speed,nav_heading,lat,lon,drift_x,drift_y,rudder,thrust,elevator,gt_x,gt_y";

    #[test]
    fn reads_by_name_with_extra_columns_and_nan() {
        let csv = "extra,vehicle,t,k,x,y,speed,heading,depth,rudder,thrust,elevator\n\
                   1,a,0,0,1,2,0.5,90,nan,0,10,0\n\
                   1,b,0,0,5,6,0.5,180,0,0,10,0\n\
                   1,a,0.1,1,1.5,2,0.5,91,0,0,10,0\n";
        let runs = parse(csv.as_bytes()).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].vehicle, "a");
        assert_eq!(runs[0].x, vec![1.0, 1.5]);
        assert_eq!(runs[0].k, vec![0.0, 1.0]);
        assert!(runs[0].depth[0].is_nan());
        assert_eq!(runs[1].heading, vec![180.0]);
        assert!(!runs[0].has_sensed());
    }

    #[test]
    fn sensed_columns_give_the_sensed_track_and_name_their_errors() {
        let head = "t,k,x,y,speed,heading,depth,rudder,thrust,elevator,sensed_x,sensed_y\n";
        let csv = format!("{head}0,0,1,2,0,0,0,0,0,0,1.5,1\n0.1,1,1,2,0,0,0,0,0,0,nan,nan\n");
        let runs = parse(csv.as_bytes()).unwrap();
        assert!(runs[0].has_sensed());
        assert_eq!(runs[0].sensed_x[0], 1.5);
        assert!(runs[0].sensed_y[1].is_nan());
        let bad = format!("{head}0,0,1,2,0,0,0,0,0,0,1.5,far\n");
        let e = parse(bad.as_bytes()).unwrap_err();
        assert_eq!((e.line, e.column), (2, Some((12, "sensed_y".into()))));
        // one of the two columns alone is no sensed track
        let one =
            "t,k,x,y,speed,heading,depth,rudder,thrust,elevator,sensed_x\n0,0,1,2,0,0,0,0,0,0,1\n";
        assert!(!parse(one.as_bytes()).unwrap()[0].has_sensed());
    }

    #[test]
    fn replay_header_parses() {
        let row = "0,0,1,2,3,4,5,nan,0,0,0,0,nan,nan,nan,nan,0,0,7,8,9,1,2";
        let runs = parse(format!("{HEAD}\n{row}\n").as_bytes()).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].vehicle, "");
        assert_eq!(
            (runs[0].rudder[0], runs[0].thrust[0], runs[0].elevator[0]),
            (7.0, 8.0, 9.0)
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse(b"").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.reason.contains("empty"), "{e}");

        let e = parse(b"k,t,x,y\n0,0,0,0\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.to_string().contains("missing columns speed, heading"),
            "{e}"
        );

        let row = "0,0,1,2,3,4,5,nan,0,0,0,0,nan,nan,nan,nan,0,0,7,8,9,1,2";
        let bad = "1,0.1,1,2,3,fast,5,nan,0,0,0,0,nan,nan,nan,nan,0,0,7,8,9,1,2";
        let e = parse(format!("{HEAD}\n{row}\n{bad}\n").as_bytes()).unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(e.column, Some((6, "heading".to_string())));
        assert_eq!(
            e.to_string(),
            "line 3, column 6 (heading): \"fast\" is not a number"
        );

        let e = parse(format!("{HEAD}\n{row}\n1,2,3\n").as_bytes()).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.reason.contains("3 fields"), "{e}");

        let e = parse(format!("{HEAD}\n").as_bytes()).unwrap_err();
        assert!(e.reason.contains("no rows"), "{e}");

        let e = parse(b"k,t\n\xff\xfe\n").unwrap_err();
        assert_eq!(e.line, 2);
    }

    proptest::proptest! {
        /// Any bytes: runs or an error, never a panic; errors point at a
        /// line of the input.
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            if let Err(e) = parse(&bytes) {
                let lines = bytes.split(|&b| b == b'\n').count().max(1);
                proptest::prop_assert!(e.line >= 1 && e.line <= lines + 1);
            }
        }

        /// A valid file with one byte changed: still no panic, and every run
        /// has equal-length columns.
        #[test]
        fn mutated_valid_file(at in 0usize..200, byte in proptest::prelude::any::<u8>()) {
            let mut b = format!(
                "vehicle,{HEAD}\na,0,0,1,2,3,4,5,nan,0,0,0,0,nan,nan,nan,nan,0,0,7,8,9,1,2\nb,1,0.1,1,2,3,4,5,nan,0,0,0,0,nan,nan,nan,nan,0,0,7,8,9,1,2\n"
            ).into_bytes();
            let i = at % b.len();
            b[i] = byte;
            if let Ok(runs) = parse(&b) {
                for r in runs {
                    let n = r.len();
                    proptest::prop_assert!([&r.k, &r.x, &r.y, &r.speed, &r.heading, &r.depth, &r.rudder, &r.thrust, &r.elevator].iter().all(|c| c.len() == n));
                }
            }
        }
    }
}
