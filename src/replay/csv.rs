//! CSV output (docs/formats.md §3): the fixed columns, numbers written with Rust's
//! shortest round-trip `{}` so they read back to the same f64, `nan` for
//! "not set".
use std::io::{self, Write};

use crate::model::Snapshot;

/// The CSV header, in the contract's order.
pub const HEADER: &str = "k,t,x,y,speed,heading,depth,altitude,pitch,yaw,sog,hog,nav_speed,nav_heading,lat,lon,drift_x,drift_y,rudder,thrust,elevator,gt_x,gt_y,thrust_l,thrust_r,current_x,current_y";

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
        push_row(&mut self.line, s);
        self.out.write_all(&self.line)
    }

    /// Flush everything.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The CSV header of a multi-vehicle replay: `vehicle`, then [`HEADER`].
pub const FLEET_HEADER_PREFIX: &str = "vehicle,";

/// Writes a multi-vehicle replay as one CSV: the vehicle's name first,
/// then the columns of [`HEADER`].
pub struct FleetCsvWriter<W: Write> {
    out: io::BufWriter<W>,
    names: Vec<String>,
    line: Vec<u8>,
}

impl<W: Write> FleetCsvWriter<W> {
    /// Write the header and return the writer; `names` are the vehicles'
    /// names in mission order.
    pub fn new(out: W, names: Vec<String>) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(FLEET_HEADER_PREFIX.as_bytes())?;
        out.write_all(HEADER.as_bytes())?;
        out.write_all(b"\n")?;
        Ok(FleetCsvWriter {
            out,
            names,
            line: Vec::with_capacity(512),
        })
    }
}

impl<W: Write> super::Output for FleetCsvWriter<W> {
    fn row(&mut self, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.vehicle_row(0, s, clock)
    }

    fn fleet_rows(&mut self, snaps: &[Snapshot], _clock: f64) -> io::Result<()> {
        // Rows formatted in parallel, 64 vehicles a chunk, written in order.
        use rayon::prelude::*;
        let names = &self.names;
        let chunks: Vec<Vec<u8>> = snaps
            .par_chunks(64)
            .enumerate()
            .map(|(c, part)| {
                let mut buf = Vec::with_capacity(part.len() * 400);
                for (j, s) in part.iter().enumerate() {
                    let name = names.get(c * 64 + j).map_or("", String::as_str);
                    push_field(&mut buf, name);
                    buf.push(b',');
                    push_row(&mut buf, s);
                }
                buf
            })
            .collect();
        for c in chunks {
            self.out.write_all(&c)?;
        }
        Ok(())
    }

    fn vehicle_row(&mut self, vehicle: usize, s: &Snapshot, _clock: f64) -> io::Result<()> {
        self.line.clear();
        let name = self.names.get(vehicle).map_or("", String::as_str);
        push_field(&mut self.line, name);
        self.line.push(b',');
        push_row(&mut self.line, s);
        self.out.write_all(&self.line)
    }

    fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// One CSV file per vehicle (`usim replay -o DIR/`), each exactly what the
/// vehicle's one-vehicle replay would write.
pub struct PerVehicleCsv<W: Write> {
    writers: Vec<CsvWriter<W>>,
}

impl<W: Write> PerVehicleCsv<W> {
    /// One writer per vehicle, in mission order (headers written).
    pub fn new(outs: Vec<W>) -> io::Result<Self> {
        let writers = outs
            .into_iter()
            .map(CsvWriter::new)
            .collect::<io::Result<Vec<_>>>()?;
        Ok(PerVehicleCsv { writers })
    }
}

impl<W: Write> super::Output for PerVehicleCsv<W> {
    fn row(&mut self, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.vehicle_row(0, s, clock)
    }

    fn vehicle_row(&mut self, vehicle: usize, s: &Snapshot, _clock: f64) -> io::Result<()> {
        match self.writers.get_mut(vehicle) {
            Some(w) => w.write_row(s),
            None => Err(io::Error::other(format!("no output for vehicle {vehicle}"))),
        }
    }

    fn finish(self) -> io::Result<()> {
        for w in self.writers {
            w.finish()?;
        }
        Ok(())
    }
}

/// Append the CSV row of `s` (the [`HEADER`] columns) with its newline.
pub fn push_row(line: &mut Vec<u8>, s: &Snapshot) {
    // Writing into a Vec cannot fail.
    let _ = write!(line, "{}", s.k);
    line.push(b',');
    let values = s.values();
    push_f64(line, round_to_microsecond(values[0]));
    for &v in &values[1..] {
        line.push(b',');
        push_f64(line, v);
    }
    line.push(b'\n');
}

/// A mission time as printed: rounded to the microsecond grid the mission
/// times live on (`k·dt` in f64 gives `1.2000000000000002`; the CSV shows
/// `1.2`). The model keeps the exact value.
pub fn round_to_microsecond(t_s: f64) -> f64 {
    if t_s.is_finite() && t_s.abs() < 1e15 {
        (t_s * 1e6).round() / 1e6
    } else {
        t_s
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

/// A CSV field: quoted (with `"` doubled) when it holds a comma, a quote, a
/// line break or leading/trailing blanks, or is empty.
pub fn push_field(buf: &mut Vec<u8>, s: &str) {
    let needs = s.is_empty()
        || s.contains([',', '"', '\n', '\r'])
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace);
    if needs {
        buf.push(b'"');
        for b in s.bytes() {
            if b == b'"' {
                buf.push(b'"');
            }
            buf.push(b);
        }
        buf.push(b'"');
    } else {
        buf.extend_from_slice(s.as_bytes());
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn header_is_k_then_the_snapshot_values() {
        let names = crate::model::Snapshot::VALUE_NAMES.join(",");
        assert_eq!(HEADER, format!("k,{names}"));
    }

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
    fn header_keeps_the_23_columns_and_adds_four() {
        let cols: Vec<&str> = HEADER.split(',').collect();
        assert_eq!(cols.len(), 27);
        assert_eq!(cols[22], "gt_y");
        assert_eq!(
            &cols[23..],
            ["thrust_l", "thrust_r", "current_x", "current_y"]
        );
    }

    #[test]
    fn mission_time_is_printed_on_the_microsecond_grid() {
        let t = 12.0 * 0.1; // 1.2000000000000002
        assert_ne!(t, 1.2);
        assert_eq!(round_to_microsecond(t), 1.2);
        assert_eq!(round_to_microsecond(0.3 * 3.0), 0.9);
        assert_eq!(round_to_microsecond(1234.000001), 1234.000001);
        assert_eq!(round_to_microsecond(0.0), 0.0);
        assert!(round_to_microsecond(f64::NAN).is_nan());
    }
}
