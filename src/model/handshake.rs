//! uSimMarineV22's buoyancy and trim handshake (docs/v22.md §12): a
//! `BUOYANCY_CONTROL` or `TRIM_CONTROL` request is acknowledged at once and
//! reported complete after 5 s (trim: once the pitch is within
//! `trim_tolerance` degrees, or after `max_trim_delay` s).

/// Seconds before a request completes (and between progress reports).
const DELAY_S: f64 = 5.0;

/// One report to publish.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Report {
    /// `BUOYANCY_REPORT`, completed or not.
    Buoyancy {
        /// Completed (status 2) or progressing (status 1).
        done: bool,
    },
    /// `TRIM_REPORT` with the pitch in degrees (`None` for the request's
    /// acknowledgement, which reports 0.0).
    Trim {
        /// Completed (status 2) or progressing (status 1).
        done: bool,
        /// Pitch, degrees.
        pitch_deg: Option<f64>,
    },
}

impl Report {
    /// The variable name.
    pub fn var(&self) -> &'static str {
        match self {
            Report::Buoyancy { .. } => "BUOYANCY_REPORT",
            Report::Trim { .. } => "TRIM_REPORT",
        }
    }

    /// The report text.
    pub fn text(&self) -> String {
        let status = |done: bool| {
            if done {
                "status=2,error=0,completed"
            } else {
                "status=1,error=0,progressing"
            }
        };
        match *self {
            Report::Buoyancy { done } => format!("{},buoyancy=0.0", status(done)),
            Report::Trim { done, pitch_deg } => match pitch_deg {
                None => format!("{},trim_pitch=0.0,trim_roll=0.0", status(done)),
                Some(p) => format!("{},trim_pitch={p:.5},trim_roll=0.0", status(done)),
            },
        }
    }
}

/// The handshake state.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Handshake {
    buoyancy: Option<f64>,
    trim: Option<f64>,
    last_report: f64,
}

impl Handshake {
    /// `BUOYANCY_CONTROL` = `true` at time `t_s`: returns the acknowledgement
    /// (the caller also sets the buoyancy rate to 0).
    pub fn request_buoyancy(&mut self, t_s: f64) -> Report {
        self.buoyancy = Some(t_s);
        self.last_report = t_s;
        Report::Buoyancy { done: false }
    }

    /// `TRIM_CONTROL` = `true` at time `t_s`.
    pub fn request_trim(&mut self, t_s: f64) -> Report {
        self.trim = Some(t_s);
        self.last_report = t_s;
        Report::Trim {
            done: false,
            pitch_deg: None,
        }
    }

    /// Whether anything is pending.
    pub fn pending(&self) -> bool {
        self.buoyancy.is_some() || self.trim.is_some()
    }

    /// Progress after the step at `t_s` with the NAV pitch (radians);
    /// reports are pushed to `out`.
    pub fn check(
        &mut self,
        t_s: f64,
        pitch_rad: f64,
        trim_tolerance: f64,
        max_trim_delay: f64,
        out: &mut Vec<Report>,
    ) {
        if let Some(t_req) = self.buoyancy {
            if t_s - t_req >= DELAY_S {
                out.push(Report::Buoyancy { done: true });
                self.buoyancy = None;
            } else if t_s - self.last_report >= DELAY_S {
                out.push(Report::Buoyancy { done: false });
                self.last_report = t_s;
            }
        }
        if let Some(t_req) = self.trim {
            let deg = pitch_rad * 180.0 / std::f64::consts::PI;
            let elapsed = t_s - t_req;
            if (deg.abs() <= trim_tolerance && elapsed >= DELAY_S) || elapsed >= max_trim_delay {
                out.push(Report::Trim {
                    done: true,
                    pitch_deg: Some(deg),
                });
                self.trim = None;
            } else if t_s - self.last_report >= DELAY_S {
                out.push(Report::Trim {
                    done: false,
                    pitch_deg: Some(deg),
                });
                self.last_report = t_s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buoyancy_completes_after_five_seconds() {
        let mut h = Handshake::default();
        let ack = h.request_buoyancy(10.0);
        assert_eq!(ack.text(), "status=1,error=0,progressing,buoyancy=0.0");
        let mut out = Vec::new();
        h.check(14.9, 0.0, 5.0, 10.0, &mut out);
        assert!(out.is_empty());
        h.check(15.0, 0.0, 5.0, 10.0, &mut out);
        assert_eq!(out[0].text(), "status=2,error=0,completed,buoyancy=0.0");
        assert!(!h.pending());
    }

    #[test]
    fn trim_waits_for_tolerance_or_max_delay() {
        let mut h = Handshake::default();
        assert_eq!(
            h.request_trim(0.0).text(),
            "status=1,error=0,progressing,trim_pitch=0.0,trim_roll=0.0"
        );
        let mut out = Vec::new();
        let pitch = 0.2; // 11.459 degrees > tolerance 5
        h.check(5.0, pitch, 5.0, 10.0, &mut out);
        assert_eq!(
            out[0].text(),
            "status=1,error=0,progressing,trim_pitch=11.45916,trim_roll=0.0"
        );
        h.check(10.0, -0.0, 5.0, 10.0, &mut out);
        assert_eq!(
            out[1].text(),
            "status=2,error=0,completed,trim_pitch=-0.00000,trim_roll=0.0"
        );
    }
}
