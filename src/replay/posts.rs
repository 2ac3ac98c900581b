//! The posts log: every publication a replayed vehicle made, one line each,
//! `k,t,var,type,value` (`d`: number, shortest round-trip text; `s`: string,
//! CSV-quoted when needed), in publication order (docs/v22.md §13).
use std::io::{self, Write};

use super::csv::{push_f64, push_field};
use crate::model::{PubValue, Publication};

/// The posts log header.
pub const HEADER: &str = "k,t,var,type,value";

/// Writes the posts log through a buffer.
pub struct PostsWriter<W: Write> {
    out: io::BufWriter<W>,
    line: Vec<u8>,
}

/// The posts log header of a multi-vehicle mission.
pub const FLEET_HEADER: &str = "vehicle,k,t,var,type,value";

impl<W: Write> PostsWriter<W> {
    /// Write the header and return the writer.
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(HEADER.as_bytes())?;
        out.write_all(b"\n")?;
        Ok(PostsWriter {
            out,
            line: Vec::with_capacity(256),
        })
    }

    /// Write the multi-vehicle header (`vehicle` first) and return the writer.
    pub fn with_vehicle_column(out: W) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(FLEET_HEADER.as_bytes())?;
        out.write_all(b"\n")?;
        Ok(PostsWriter {
            out,
            line: Vec::with_capacity(256),
        })
    }

    /// Write the publications of iteration `k` at mission time `t_s`.
    pub fn write(&mut self, k: u64, t_s: f64, pubs: &[Publication]) -> io::Result<()> {
        self.write_for(None, k, t_s, pubs)
    }

    /// [`PostsWriter::write`], with the vehicle's name first if given
    /// (a writer made by [`PostsWriter::with_vehicle_column`]).
    pub fn write_for(
        &mut self,
        vehicle: Option<&str>,
        k: u64,
        t_s: f64,
        pubs: &[Publication],
    ) -> io::Result<()> {
        for p in pubs {
            self.line.clear();
            if let Some(name) = vehicle {
                push_field(&mut self.line, name);
                self.line.push(b',');
            }
            write!(self.line, "{k},")?;
            push_f64(&mut self.line, t_s);
            self.line.push(b',');
            push_field(&mut self.line, &p.var);
            match &p.value {
                PubValue::Number(v) => {
                    self.line.extend_from_slice(b",d,");
                    push_f64(&mut self.line, *v);
                }
                PubValue::Text(s) => {
                    self.line.extend_from_slice(b",s,");
                    push_field(&mut self.line, s);
                }
            }
            self.line.push(b'\n');
            self.out.write_all(&self.line)?;
        }
        Ok(())
    }

    /// Flush everything.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_and_strings_are_quoted() {
        let pubs = [
            Publication {
                var: "NAV_X".into(),
                value: PubValue::Number(0.1 + 0.2),
            },
            Publication {
                var: "USM_DRIFT_SUMMARY".into(),
                value: PubValue::Text("ang=0, mag=0".into()),
            },
            Publication {
                var: "SIMULATION_MODE".into(),
                value: PubValue::Text("TRUE".into()),
            },
            Publication {
                var: "Q".into(),
                value: PubValue::Text("say \"hi\"".into()),
            },
        ];
        let mut out = Vec::new();
        let mut w = PostsWriter::new(&mut out).unwrap();
        w.write(2, 0.2, &pubs).unwrap();
        w.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0][4].parse::<f64>().unwrap(), 0.1 + 0.2);
        assert_eq!(&rows[1][4], "ang=0, mag=0");
        assert_eq!(&rows[2][4], "TRUE");
        assert_eq!(&rows[3][4], "say \"hi\"");
        assert!(text.contains(",s,TRUE\n"), "no quotes when not needed");
    }
}
