//! The text of the MOOSDB's own summary variables (`DB_VARSUMMARY`,
//! `DB_QOS`, `DB_RWSUMMARY`) and of the `PROC_SUMMARY` reply, formatted as
//! the MOOSDB formats them (docs/moosdb.md gives each format and the MOOS
//! source file it comes from). Plain functions of their inputs; the only
//! outside fact read is the time zone (`localtime_r`), as the MOOSDB does.
use std::fmt::Write as _;

/// One variable's line of `DB_VARSUMMARY`.
#[derive(Debug, Clone)]
pub struct VarLine<'a> {
    /// Variable name.
    pub name: &'a str,
    /// When the DB last wrote it, MOOS s (−1: never).
    pub written_time: f64,
    /// Its last writer (empty: `(write pending)`).
    pub who: &'a str,
    /// Write frequency, Hz.
    pub freq: f64,
    /// Data type byte (`D`, `S`, `B`, `~`).
    pub type_byte: u8,
    /// Its double value (type `D`).
    pub dval: f64,
    /// Its string value (type `S`; length only for `B`).
    pub sval: &'a [u8],
}

/// `s` padded with spaces on the right to `width` bytes (C++ `std::left <<
/// std::setw(width)`), never cut.
fn pad(out: &mut String, s: &str, width: usize) {
    out.push_str(s);
    for _ in s.len()..width {
        out.push(' ');
    }
}

/// A double as C++ `ostream << d` prints it by default (`%g`, precision 6).
pub fn cpp_g(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The exponent after rounding to 6 significant digits decides the style.
    let sci = format!("{x:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant), exp.abs())
    } else {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        strip(&format!("{x:.decimals$}"))
    }
}

/// A double as `std::fixed << std::setprecision(1)` prints it.
fn cpp_fixed1(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    format!("{x:.1}")
}

/// `MOOS::TimeToDate(t, false, true)`: local `HH:MM:SS.mmm` of a MOOS
/// time (s). As in the MOOSDB, the seconds go through a C `int`: a time
/// past 2^31 s (any warped time at `MOOSTimeWarp` ≥ 1.2 today) becomes
/// `INT_MIN` (the x86 conversion), i.e. 1901-12-13 20:45:52 UTC.
pub fn time_to_date(t: f64) -> String {
    let integral = t.trunc();
    let frac = t - integral;
    let to_int = |v: f64| -> i32 {
        if v.is_finite() && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
            v as i32
        } else {
            i32::MIN
        }
    };
    let sec = to_int(integral);
    let usec = to_int(frac * 1_000_000.0);
    let clock = libc::time_t::from(sec);
    // SAFETY: `tm` is plain data that localtime_r fills; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&clock, &mut tm).is_null() };
    if !ok {
        return format!("{t:03.6}");
    }
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        usec / 1000
    )
}

/// `DB_VARSUMMARY`: one line per variable (in name order), each
/// `NAME(20) HH:MM:SS.mmm(20) WRITER(20) F.FHz T(2) VALUE\n`.
pub fn var_summary(lines: &[VarLine<'_>]) -> String {
    let mut out = String::new();
    for l in lines {
        pad(&mut out, l.name, 20);
        out.push(' ');
        pad(&mut out, &time_to_date(l.written_time), 20);
        out.push(' ');
        pad(
            &mut out,
            if l.who.is_empty() {
                "(write pending)"
            } else {
                l.who
            },
            20,
        );
        out.push(' ');
        pad(&mut out, &cpp_fixed1(l.freq), 4);
        out.push_str("Hz ");
        pad(&mut out, &char::from(l.type_byte).to_string(), 2);
        out.push(' ');
        match l.type_byte {
            b'D' => out.push_str(&cpp_fixed1(l.dval)),
            b'S' => {
                if l.sval.len() > 25 {
                    out.push_str(&String::from_utf8_lossy(&l.sval[..22]));
                    out.push_str("...");
                } else {
                    out.push_str(&String::from_utf8_lossy(l.sval));
                }
            }
            b'B' => {
                let s = l.sval.len();
                let _ = if s < 1024 {
                    write!(out, "*binary* {s:<4} B")
                } else if s < 1024 * 1024 {
                    write!(out, "*binary* {:.3} KB", s as f64 / 1024.0)
                } else {
                    write!(out, "*binary* {:.3} MB", s as f64 / (1024.0 * 1024.0))
                };
            }
            _ => {}
        }
        out.push('\n');
    }
    out
}

/// One client's latency figures in `DB_QOS`, ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// The latest (after the first five timing messages), ms.
    pub recent: f64,
    /// Largest, ms (0 before any).
    pub max: f64,
    /// Smallest, ms (1e9 before any).
    pub min: f64,
    /// The "moving average" (see [`Latency::add`]), ms.
    pub average: f64,
    sum: f64,
    count: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            recent: 0.0,
            max: 0.0,
            min: 1e9,
            average: 0.0,
            sum: 0.0,
            count: 0,
        }
    }
}

impl Latency {
    /// One timing message's latency, ms, folded in as the MOOSDB's
    /// `ServerAudit::AddTimingStatistic` does: from the fifth message on,
    /// `recent` is the latest and `average` is the sum of the first four
    /// and the latest, over 5.
    pub fn add(&mut self, ms: f64) {
        self.max = self.max.max(ms);
        self.min = self.min.min(ms);
        self.sum += ms;
        self.count += 1;
        if self.count >= 5 {
            self.sum -= self.recent;
            self.recent = ms;
            self.average = self.sum / 5.0;
        }
    }
}

/// `DB_QOS`: `NAME=recent:max:min:average,` for each audited client, in
/// name order, the numbers as C++ prints a double.
pub fn qos(clients: &[(&str, Latency)]) -> String {
    let mut out = String::new();
    for (name, l) in clients {
        let _ = write!(
            out,
            "{name}={}:{}:{}:{},",
            cpp_g(l.recent),
            cpp_g(l.max),
            cpp_g(l.min),
            cpp_g(l.average)
        );
    }
    out
}

/// One client's entry of `DB_RWSUMMARY` / `PROC_SUMMARY`: the variables
/// it subscribes to and those it has written, each in name order.
#[derive(Debug, Clone, Default)]
pub struct ReadWrite {
    /// Client name.
    pub name: String,
    /// Variables it is subscribed to.
    pub subscribes: Vec<String>,
    /// Variables it has written.
    pub publishes: Vec<String>,
}

/// `DB_RWSUMMARY`: `NAME=SUB1:SUB2&PUB1:PUB2` per client, joined by `,`.
pub fn rw_summary(clients: &[ReadWrite]) -> String {
    clients
        .iter()
        .map(|c| {
            format!(
                "{}={}&{}",
                c.name,
                c.subscribes.join(":"),
                c.publishes.join(":")
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `PROC_SUMMARY`'s value for one client:
/// `NAME:SUBSCRIBED=,S1,S2,PUBLISHED=,P1,P2`.
pub fn proc_summary(c: &ReadWrite) -> String {
    let mut out = format!("{}:SUBSCRIBED=", c.name);
    for s in &c.subscribes {
        out.push(',');
        out.push_str(s);
    }
    out.push_str(",PUBLISHED=");
    for p in &c.publishes {
        out.push(',');
        out.push_str(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected strings are what glibc's `printf("%g")` prints for each
    /// value (the C++ stream default).
    #[test]
    fn cpp_g_matches_printf_g() {
        for (x, want) in [
            (1e9, "1e+09"),
            (0.0, "0"),
            (12.5, "12.5"),
            (0.1234567, "0.123457"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (-3.25, "-3.25"),
            (999999.5, "1e+06"),
            (2.0, "2"),
        ] {
            assert_eq!(cpp_g(x), want, "{x}");
        }
    }

    #[test]
    fn latency_is_folded_as_the_moosdb_does() {
        let mut l = Latency::default();
        for ms in [1.0, 2.0, 3.0, 4.0] {
            l.add(ms);
        }
        assert_eq!((l.recent, l.average, l.max, l.min), (0.0, 0.0, 4.0, 1.0));
        l.add(10.0);
        assert_eq!((l.recent, l.average), (10.0, 4.0));
        l.add(20.0);
        // sum = 1+2+3+4+10+20-10 = 30: the first four and the latest.
        assert_eq!((l.recent, l.average), (20.0, 6.0));
        assert_eq!(qos(&[("a", l)]), "a=20:20:1:6,");
        assert_eq!(qos(&[("b", Latency::default())]), "b=0:0:1e+09:0,");
    }

    #[test]
    fn summary_lines_are_padded_as_setw_does() {
        let s = var_summary(&[
            VarLine {
                name: "NAV_X",
                written_time: 3723.25,
                who: "usim",
                freq: 10.0,
                type_byte: b'D',
                dval: 12.345,
                sval: b"",
            },
            VarLine {
                name: "DB_QOS",
                written_time: 0.0,
                who: "",
                freq: 0.0,
                type_byte: b'S',
                dval: -1.0,
                sval: b"abcdefghijklmnopqrstuvwxyz",
            },
        ]);
        // The clock is local time (the hour depends on the zone).
        let (d1, d2) = (time_to_date(3723.25), time_to_date(0.0));
        let want = format!(
            "NAV_X                {d1}         usim                 10.0Hz D  12.3\n\
             DB_QOS               {d2}         (write pending)      0.0 Hz S  abcdefghijklmnopqrstuv...\n"
        );
        assert_eq!(s, want);
        assert_eq!(d1.len(), 12);
        assert!(d1.ends_with(":03.250"), "{d1}");
        // Warped times past 2^31 s go through INT_MIN (1901-12-13
        // 20:45:52 UTC), as in the MOOSDB.
        assert!(time_to_date(1.8e10 + 0.5).ends_with(":52.500"));
        assert_eq!(time_to_date(1.8e10), time_to_date(f64::from(i32::MIN)));
    }

    #[test]
    fn rw_and_proc_summaries() {
        let c = vec![
            ReadWrite {
                name: "b".into(),
                subscribes: vec!["X".into(), "Y".into()],
                publishes: vec!["Z".into()],
            },
            ReadWrite {
                name: "a".into(),
                subscribes: vec![],
                publishes: vec![],
            },
        ];
        assert_eq!(rw_summary(&c), "b=X:Y&Z,a=&");
        assert_eq!(proc_summary(&c[0]), "b:SUBSCRIBED=,X,Y,PUBLISHED=,Z");
        assert_eq!(proc_summary(&c[1]), "a:SUBSCRIBED=,PUBLISHED=");
    }
}
