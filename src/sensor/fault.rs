//! Sensor failures: the `USM_SENSOR` message syntax and the schedule of
//! switches it and the config's `faults` list make.
//!
//! `<sensor>=<on|off>[,at=<s>][,for=<s>]`: `sensor` is `gps`, `heading`,
//! `speed`, `depth` or `all`; `at` is the mission time of the switch, s
//! (default: now); `for` switches back after that many seconds. Examples:
//! `gps=off,at=120,for=30` (a 30 s GPS dropout from t = 120 s),
//! `heading=off`, `all=on`.

/// One sensor of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// GPS position: `NAV_X`, `NAV_Y`, `NAV_LAT`, `NAV_LONG`, the GGA fix.
    Gps = 0,
    /// `NAV_HEADING` (and the classic reverse `NAV_YAW`).
    Heading = 1,
    /// `NAV_SPEED`.
    Speed = 2,
    /// `NAV_DEPTH`, `NAV_Z`.
    Depth = 3,
}

/// A parsed switch: which sensor (`None`: all), on or off, when, how long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultEvent {
    /// The sensor (`None`: every one).
    pub which: Option<Which>,
    /// `true`: working; `false`: failed.
    pub on: bool,
    /// Mission time of the switch, s (`None`: when received).
    pub at: Option<f64>,
    /// Switch back after this long, s.
    pub duration: Option<f64>,
}

/// Most switches pending at once (each `for=` makes two).
pub const MAX_PENDING: usize = 1024;
/// Largest `at` or `for` accepted, s (about 31 years).
pub const MAX_TIME_S: f64 = 1e9;

/// Parse `<sensor>=<on|off>[,at=<s>][,for=<s>]`; the error says what is wrong.
pub fn parse(text: &str) -> Result<FaultEvent, String> {
    let mut ev: Option<(Option<Which>, bool)> = None;
    let (mut at, mut duration) = (None, None);
    for part in text.split(',') {
        let part = part.trim();
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!(
                "`{}` is not key=value (expected e.g. gps=off,at=120,for=30)",
                crate::text::clip(part, 40)
            ));
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase());
        let time = |v: &str, key: &str| -> Result<f64, String> {
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=MAX_TIME_S).contains(&x) => Ok(x),
                _ => Err(format!(
                    "{key}={} is not a time in 0..={MAX_TIME_S} s",
                    crate::text::clip(v, 40)
                )),
            }
        };
        match k.as_str() {
            "at" => at = Some(time(&v, "at")?),
            "for" => duration = Some(time(&v, "for")?),
            "gps" | "heading" | "speed" | "depth" | "all" => {
                if ev.is_some() {
                    return Err("name one sensor per message".into());
                }
                let which = match k.as_str() {
                    "gps" => Some(Which::Gps),
                    "heading" => Some(Which::Heading),
                    "speed" => Some(Which::Speed),
                    "depth" => Some(Which::Depth),
                    _ => None,
                };
                let on = match v.as_str() {
                    "on" | "true" => true,
                    "off" | "false" => false,
                    _ => {
                        return Err(format!(
                            "{k}={} : expected on or off",
                            crate::text::clip(&v, 40)
                        ))
                    }
                };
                ev = Some((which, on));
            }
            _ => {
                return Err(format!(
                    "unknown key `{}` (expected gps, heading, speed, depth, all, at, for)",
                    crate::text::clip(&k, 40)
                ))
            }
        }
    }
    let Some((which, on)) = ev else {
        return Err("no sensor named (expected e.g. gps=off)".into());
    };
    Ok(FaultEvent {
        which,
        on,
        at,
        duration,
    })
}

/// Pending switches in time order (ties: in the order they were added).
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    /// (mission time s, sequence, sensor, on)
    pending: Vec<(f64, u64, Option<Which>, bool)>,
    seq: u64,
}

impl Schedule {
    /// Add `ev` received at mission time `now` (s): its switch at `at` (or
    /// now) and, with `for`, the switch back. Refused beyond [`MAX_PENDING`].
    pub fn add(&mut self, ev: &FaultEvent, now: f64) -> Result<(), String> {
        let n = 1 + usize::from(ev.duration.is_some());
        if self.pending.len() + n > MAX_PENDING {
            return Err(format!("{MAX_PENDING} sensor switches are pending already"));
        }
        let t = ev.at.unwrap_or(now);
        self.push(t, ev.which, ev.on);
        if let Some(d) = ev.duration {
            self.push(t + d, ev.which, !ev.on);
        }
        Ok(())
    }

    fn push(&mut self, t: f64, w: Option<Which>, on: bool) {
        self.seq += 1;
        let e = (t, self.seq, w, on);
        let i = self.pending.partition_point(|p| (p.0, p.1) <= (e.0, e.1));
        self.pending.insert(i, e);
    }

    /// The switches due by mission time `t` (s), in order, removed.
    pub fn due(&mut self, t: f64) -> Vec<(Option<Which>, bool)> {
        let n = self.pending.partition_point(|p| p.0 <= t + 1e-9);
        self.pending.drain(..n).map(|p| (p.2, p.3)).collect()
    }

    /// How many switches are pending.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether none is pending.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}
