//! MOOS's alog text log (pLogger's format, as MOOS-IvP's log tools read
//! it: `lib_logutils/LogUtils.cpp`): a header of `%` lines with
//! `%% LOGSTART t0` among the first five, then one message per line,
//! `TIME VAR SOURCE VALUE` (TIME in seconds since `t0`, 3 decimals; VALUE
//! the rest of the line; a VALUE that is a MOOS number is a double).
//!
//! Sans-IO: [`AlogWriter`] writes into any `Write`, [`parse`] reads text.
use std::fmt;
use std::io::{self, Write};

use crate::model::angles::is_number;

/// Longest line the MOOS readers take whole (their buffer); longer string
/// values are cut to fit, at a character boundary.
pub const MAX_LINE: usize = 4000;

/// An alog value: a double or a string.
#[derive(Debug, Clone, PartialEq)]
pub enum AlogValue {
    /// A double (written shortest round-trip).
    Number(f64),
    /// A string (newlines written as spaces).
    Text(String),
}

/// One alog row.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Seconds since `LOGSTART`.
    pub t: f64,
    /// Variable name.
    pub var: String,
    /// Source app, `app` or `app:aux`.
    pub source: String,
    /// The value.
    pub value: AlogValue,
}

impl Entry {
    /// The source's auxiliary text (after the first `:`), if any.
    pub fn aux(&self) -> Option<&str> {
        self.source.split_once(':').map(|(_, a)| a)
    }
}

/// A parsed alog.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Alog {
    /// `LOGSTART`, Unix s (MOOS time).
    pub t0: f64,
    /// The rows, in file order.
    pub entries: Vec<Entry>,
    /// Lines skipped as invalid (first field not a number, or fewer than
    /// four fields).
    pub skipped: usize,
}

/// Why a text is not an alog.
#[derive(Debug, Clone, PartialEq)]
pub struct AlogError(pub String);

impl fmt::Display for AlogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AlogError {}

/// Days since 1970-01-01 → (year, month 1..12, day 1..31), proleptic Gregorian.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `Thu Nov 26 21:04:29 2026` (UTC) for Unix time `t`, as pLogger's
/// `FILE OPENED ON` line shows a date (C's `ctime`).
pub fn ctime_utc(t: f64) -> String {
    let s = if t.is_finite() { t.floor() as i64 } else { 0 };
    let days = s.div_euclid(86_400);
    let sod = s.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        WD[days.rem_euclid(7) as usize],
        MO[(m - 1) as usize],
        d,
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        y
    )
}

/// A word for the VAR or SOURCE field: non-empty, no blanks.
fn word(s: &str) -> String {
    let w: String = s
        .chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if w.is_empty() {
        "?".into()
    } else {
        w
    }
}

/// Writes an alog: the header at creation, then one row per message.
pub struct AlogWriter<W: Write> {
    out: W,
    t0: f64,
    line: String,
    /// Rows written.
    pub rows: u64,
}

impl<W: Write> AlogWriter<W> {
    /// Write pLogger's header for a log named `name` starting at Unix time
    /// `t0` (MOOS time) and return the writer.
    pub fn new(mut out: W, name: &str, t0: f64) -> io::Result<Self> {
        let t0 = if t0.is_finite() { t0 } else { 0.0 };
        let bar = "%".repeat(80);
        let name: String = name.chars().filter(|c| !c.is_control()).collect();
        write!(
            out,
            "{bar}\n%% LOG FILE:       {name}\n%% FILE OPENED ON  {}\n%% LOGSTART           {t0:.3}\n{bar}\n",
            ctime_utc(t0)
        )?;
        Ok(AlogWriter {
            out,
            t0,
            line: String::with_capacity(128),
            rows: 0,
        })
    }

    /// `LOGSTART`, Unix s.
    pub fn t0(&self) -> f64 {
        self.t0
    }

    /// One row at Unix time `clock` (written as `clock - t0`). A number that
    /// is not finite is not written (MOOS has no NaN in a log).
    pub fn write(
        &mut self,
        clock: f64,
        var: &str,
        source: &str,
        value: &AlogValue,
    ) -> io::Result<()> {
        use std::fmt::Write as _;
        let t = clock - self.t0;
        if !t.is_finite() {
            return Ok(());
        }
        self.line.clear();
        let _ = write!(
            self.line,
            "{:<14} {:<22} {:<16} ",
            format!("{t:.3}"),
            word(var),
            word(source)
        );
        match value {
            AlogValue::Number(v) if !v.is_finite() => return Ok(()),
            AlogValue::Number(v) => {
                let _ = write!(self.line, "{v}");
            }
            AlogValue::Text(s) => {
                for c in s.chars() {
                    if self.line.len() + c.len_utf8() > MAX_LINE {
                        break;
                    }
                    self.line.push(if c == '\n' || c == '\r' { ' ' } else { c });
                }
            }
        }
        self.line.push('\n');
        self.rows += 1;
        self.out.write_all(self.line.as_bytes())
    }

    /// Push the rows written so far to the sink.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flush and hand back the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Read an alog. The header must have `%% LOGSTART t0` in its first five
/// lines; rows whose first field is not a number, or that have fewer than
/// four fields, are skipped and counted. A VALUE that is a MOOS number
/// (no exponent, no `nan`) is a double, else a string.
pub fn parse(bytes: &[u8]) -> Result<Alog, AlogError> {
    let text = String::from_utf8_lossy(bytes);
    let mut t0 = None;
    for line in text.lines().take(5) {
        let mut f = line.split_whitespace();
        if f.next() == Some("%%") && f.next() == Some("LOGSTART") {
            t0 = f
                .next()
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|v| v.is_finite());
            if t0.is_none() {
                return Err(AlogError(format!(
                    "`{}`: LOGSTART is not a number",
                    line.chars()
                        .take(80)
                        .flat_map(char::escape_debug)
                        .collect::<String>()
                )));
            }
            break;
        }
    }
    let Some(t0) = t0 else {
        return Err(AlogError(
            "not an alog: no `%% LOGSTART` line among the first five".into(),
        ));
    };
    let mut out = Alog {
        t0,
        ..Alog::default()
    };
    for line in text.lines() {
        if line.starts_with('%') || line.trim().is_empty() {
            continue;
        }
        match row(line) {
            Some(e) => out.entries.push(e),
            None => out.skipped += 1,
        }
    }
    Ok(out)
}

/// One row, `None` if invalid.
fn row(line: &str) -> Option<Entry> {
    let line = line.trim_end_matches(['\r', '\n']);
    let mut rest = line.trim_start_matches([' ', '\t']);
    let mut fields = [""; 3];
    for f in &mut fields {
        let end = rest.find([' ', '\t'])?;
        *f = &rest[..end];
        rest = rest[end..].trim_start_matches([' ', '\t']);
    }
    let value = rest.trim_end_matches([' ', '\t']);
    if value.is_empty() || !is_number(fields[0]) {
        return None;
    }
    let t: f64 = fields[0].parse().ok().filter(|v: &f64| v.is_finite())?;
    let value = if is_number(value) {
        match value.parse::<f64>() {
            Ok(v) if v.is_finite() => AlogValue::Number(v),
            _ => AlogValue::Text(value.to_string()),
        }
    } else {
        AlogValue::Text(value.to_string())
    };
    Some(Entry {
        t,
        var: fields[1].to_string(),
        source: fields[2].to_string(),
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_known_dates() {
        // GNU `date -u -d @T` for each T
        assert_eq!(ctime_utc(0.0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime_utc(1_795_727_069.5), "Thu Nov 26 21:04:29 2026");
        assert_eq!(ctime_utc(951_782_400.0), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn round_trip() {
        let mut w = AlogWriter::new(Vec::new(), "run.alog", 1000.0).unwrap();
        w.write(1000.5, "NAV_X", "uSimMarine", &AlogValue::Number(-1.25))
            .unwrap();
        w.write(1001.0, "NODE REPORT", "", &AlogValue::Text("a b\nc".into()))
            .unwrap();
        w.write(1001.0, "NAV_Y", "u", &AlogValue::Number(f64::NAN))
            .unwrap();
        let bytes = w.finish().unwrap();
        let a = parse(&bytes).unwrap();
        assert_eq!(a.t0, 1000.0);
        assert_eq!(a.skipped, 0);
        assert_eq!(
            a.entries,
            [
                Entry {
                    t: 0.5,
                    var: "NAV_X".into(),
                    source: "uSimMarine".into(),
                    value: AlogValue::Number(-1.25)
                },
                Entry {
                    t: 1.0,
                    var: "NODE_REPORT".into(),
                    source: "?".into(),
                    value: AlogValue::Text("a b c".into())
                },
            ]
        );
    }

    #[test]
    fn invalid_rows_are_skipped_and_a_header_is_needed() {
        assert!(parse(b"1.0 X s 1\n").is_err());
        let a = parse(b"%% LOGSTART 5\nx X s 1\n1.0 X s\n2.0\tY\tapp:aux\t 1e5 \n").unwrap();
        assert_eq!(a.skipped, 2);
        assert_eq!(a.entries[0].value, AlogValue::Text("1e5".into()));
        assert_eq!(a.entries[0].aux(), Some("aux"));
    }
}
