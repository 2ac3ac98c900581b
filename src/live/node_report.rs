//! MOOS's `NODE_REPORT_LOCAL` string form of a vehicle's state, for tools
//! that read it (pMarineViewer-style consumers). Sans-IO: a pure function of
//! the snapshot and the clock.
//!
//! Two times must not be confused: `NODE_REPORT` (JSON) carries `t`, the
//! **mission time** (s since the vehicle started, as the CSV), while
//! `USM_TIME` and this string's `TIME` are the **vehicle clock** in Unix
//! seconds (MOOS time).
use crate::model::drift::fmt_x;
use crate::model::Snapshot;

/// What a `NODE_REPORT_LOCAL` says about the platform itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Platform {
    /// Vehicle name (`NAME=`).
    pub name: String,
    /// Platform type (`TYPE=`), e.g. `kayak`, `uuv`.
    pub kind: String,
    /// Length, m (`LENGTH=`).
    pub length_m: f64,
}

/// `NAME=..,X=..,Y=..,SPD=..,HDG=..,DEP=..,LAT=..,LON=..,TIME=..,TYPE=..,LENGTH=..`:
/// X, Y (m), SPD (m/s, as published), HDG (deg, as published), DEP (m) with
/// two decimals, LAT/LON (deg) with eight (left out without an origin),
/// TIME (vehicle clock, Unix s) with two; trailing zeros removed as MOOS's
/// `doubleToStringX` does. A value not yet set (`nan`) is written as 0.
pub fn node_report_local(p: &Platform, s: &Snapshot, clock_s: f64) -> String {
    let v = |x: f64| if x.is_finite() { x } else { 0.0 };
    let mut out = format!(
        "NAME={},X={},Y={},SPD={},HDG={},DEP={}",
        p.name,
        fmt_x(v(s.x), 2),
        fmt_x(v(s.y), 2),
        fmt_x(v(s.nav_speed), 2),
        fmt_x(v(s.nav_heading), 2),
        fmt_x(v(s.depth), 2),
    );
    if s.lat.is_finite() && s.lon.is_finite() {
        out.push_str(&format!(",LAT={},LON={}", fmt_x(s.lat, 8), fmt_x(s.lon, 8)));
    }
    out.push_str(&format!(
        ",TIME={},TYPE={},LENGTH={}",
        fmt_x(v(clock_s), 2),
        p.kind,
        fmt_x(v(p.length_m), 2)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moos_string_form() {
        let p = Platform {
            name: "alpha".into(),
            kind: "kayak".into(),
            length_m: 4.0,
        };
        let s = Snapshot {
            x: 12.3456,
            y: -7.0,
            nav_speed: 1.25,
            nav_heading: 90.0,
            depth: 0.0,
            lat: 42.358456123,
            lon: -71.087589,
            ..Snapshot::default()
        };
        assert_eq!(
            node_report_local(&p, &s, 1763870000.126),
            "NAME=alpha,X=12.35,Y=-7,SPD=1.25,HDG=90,DEP=0,LAT=42.35845612,LON=-71.087589,TIME=1763870000.13,TYPE=kayak,LENGTH=4"
        );
        let s = Snapshot {
            lat: f64::NAN,
            lon: f64::NAN,
            nav_speed: f64::NAN,
            nav_heading: f64::NAN,
            ..s
        };
        let r = node_report_local(&p, &s, 10.0);
        assert_eq!(
            r,
            "NAME=alpha,X=12.35,Y=-7,SPD=0,HDG=0,DEP=0,TIME=10,TYPE=kayak,LENGTH=4"
        );
    }
}
