//! A replay written as MOOS's alog (docs/alog.md): the posts log's
//! publications and the mission's posts as rows, through the format
//! writer of [`crate::alog`].
use std::io::{self, Write};

use crate::alog::{AlogValue, AlogWriter};

/// A replay written as an alog ([`super::Output`]): `LOGSTART` is
/// the mission's start time; each post is a row with source `mission`,
/// each publication a row with source `uSimMarine` (or `uSimMarineV22`),
/// at the vehicle clock of its iteration. In a multi-vehicle mission the
/// source carries the vehicle's name as its auxiliary text
/// (`uSimMarine:alpha`). Rows of the CSV are not written.
pub struct ReplayAlog<W: Write> {
    w: AlogWriter<W>,
    /// Per vehicle: (source of its publications, source of its posts).
    sources: Vec<(String, String)>,
}

impl<W: Write> ReplayAlog<W> {
    /// Write the header for `mission` and return the output.
    pub fn new(out: W, mission: &crate::mission::Mission) -> io::Result<Self> {
        let n = mission.vehicle_count();
        let sources = (0..n)
            .map(|i| {
                let v = mission.vehicle_at(i);
                let app = match v.params.variant {
                    crate::model::ModelVariant::V22 => "uSimMarineV22",
                    _ => "uSimMarine",
                };
                if n > 1 {
                    (format!("{app}:{}", v.name), format!("mission:{}", v.name))
                } else {
                    (app.to_string(), "mission".to_string())
                }
            })
            .collect();
        let name = format!("usim replay ({})", mission.vehicle.name);
        Ok(ReplayAlog {
            w: AlogWriter::new(out, &name, mission.start_time)?,
            sources,
        })
    }
}

impl<W: Write> super::Output for ReplayAlog<W> {
    fn row(&mut self, _s: &crate::model::Snapshot, _clock: f64) -> io::Result<()> {
        Ok(())
    }

    fn wants_rows(&self) -> bool {
        false
    }

    fn wants_publications(&self) -> bool {
        true
    }

    fn post(&mut self, post: &crate::mission::Post, clock: f64) -> io::Result<()> {
        use super::mcap::{command_value, CommandValue};
        let value = match command_value(&post.command) {
            CommandValue::Number(v) => AlogValue::Number(v),
            CommandValue::Text(s) => AlogValue::Text(s.to_string()),
        };
        let src = self
            .sources
            .get(post.vehicle)
            .map_or("mission", |s| s.1.as_str());
        let src = src.to_string();
        self.w.write(clock, &post.var, &src, &value)
    }

    fn publications(
        &mut self,
        vehicle: usize,
        pubs: &[crate::model::Publication],
        clock: f64,
    ) -> io::Result<()> {
        let src = self
            .sources
            .get(vehicle)
            .map_or_else(|| "uSimMarine".to_string(), |s| s.0.clone());
        for p in pubs {
            let value = match &p.value {
                crate::model::PubValue::Number(v) => AlogValue::Number(*v),
                crate::model::PubValue::Text(s) => AlogValue::Text(s.clone()),
            };
            self.w.write(clock, &p.var, &src, &value)?;
        }
        Ok(())
    }

    fn finish(self) -> io::Result<()> {
        self.w.finish().map(|_| ())
    }
}
