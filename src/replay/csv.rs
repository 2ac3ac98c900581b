//! CSV output (formats.md §3): the fixed columns, numbers written with Rust's
//! shortest round-trip `{}` so they read back to the same f64, `nan` for
//! "not set".
use std::io::{self, Write};

use crate::model::Snapshot;

/// The CSV header, in the contract's order.
pub const HEADER: &str = "k,t,x,y,speed,heading,depth,altitude,pitch,yaw,sog,hog,nav_speed,nav_heading,lat,lon,drift_x,drift_y,rudder,thrust,elevator,gt_x,gt_y";

/// Writes snapshots as CSV rows through a buffer.
pub struct CsvWriter<W: Write> {
    out: io::BufWriter<W>,
    line: Vec<u8>,
}

impl<W: Write> CsvWriter<W> {
    /// Write the header and return the writer.
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(HEADER.as_bytes())?;
        out.write_all(b"\n")?;
        Ok(CsvWriter {
            out,
            line: Vec::with_capacity(512),
        })
    }

    /// Write one row.
    pub fn write_row(&mut self, s: &Snapshot) -> io::Result<()> {
        self.line.clear();
        write!(self.line, "{}", s.k)?;
        for v in [
            s.t,
            s.x,
            s.y,
            s.speed,
            s.heading,
            s.depth,
            s.altitude,
            s.pitch,
            s.yaw,
            s.sog,
            s.hog,
            s.nav_speed,
            s.nav_heading,
            s.lat,
            s.lon,
            s.drift_x,
            s.drift_y,
            s.rudder,
            s.thrust,
            s.elevator,
            s.gt_x,
            s.gt_y,
        ] {
            self.line.push(b',');
            push_f64(&mut self.line, v);
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)
    }

    /// Flush everything.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> super::Output for CsvWriter<W> {
    fn row(&mut self, s: &Snapshot, _clock: f64) -> io::Result<()> {
        self.write_row(s)
    }

    fn finish(self) -> io::Result<()> {
        CsvWriter::finish(self)
    }
}

/// Append `v` in its shortest form that reads back to the same f64 (Ryū:
/// `0.1`, `42`, `4.008336720018362e-305`); `nan` for NaN.
pub fn push_f64(buf: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        buf.extend_from_slice(b"nan");
    } else {
        let mut b = ryu::Buffer::new();
        let text = b.format_finite(v);
        // `42.0` -> `42`: shorter, and reads back the same.
        let text = text.strip_suffix(".0").unwrap_or(text);
        buf.extend_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_nan() {
        let values = [
            0.1 + 0.2,
            -0.0,
            4.008336720018362e-305,
            1.5e-7,
            2.5e20,
            1e-5,
            123.456,
            42.0,
        ];
        let mut b = Vec::new();
        push_f64(&mut b, f64::NAN);
        for v in values {
            b.push(b',');
            push_f64(&mut b, v);
        }
        let s = String::from_utf8(b).unwrap();
        let parts: Vec<&str> = s.split(',').collect();
        assert_eq!(parts[0], "nan");
        for (text, v) in parts[1..].iter().zip(values) {
            let back: f64 = text.parse().unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
            assert!(text.len() <= 24, "short form: {text}");
        }
    }

    #[test]
    fn header_has_23_columns() {
        assert_eq!(HEADER.split(',').count(), 23);
    }
}
