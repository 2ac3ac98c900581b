//! Properties of the NMEA/AIS encoder over any state, extreme and NaN
//! values included (docs/nmea.md): every line is framed, at most 82
//! characters, with a right checksum and no `NaN`/`inf`; every AIS payload
//! decodes to the vehicle's MMSI, and in-range values come back within the
//! field's precision, out-of-range ones as "not available".
use proptest::prelude::*;
use usim::nmea::{ais, sentence, Engine, Options, ShipState};

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1e3..1e3f64,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-1e300),
        Just(1e300),
        any::<f64>(),
    ]
}

/// The property, for one state: see the module comment.
#[allow(clippy::too_many_arguments)]
fn check_state(
    lat: f64,
    lon: f64,
    sog: f64,
    cog: f64,
    heading: f64,
    depth: f64,
    altitude: f64,
    clock: f64,
    own: bool,
) -> Result<(), TestCaseError> {
    let mut e = Engine::new(Options::default(), own.then(|| "v".to_string()));
    let s = ShipState {
        t: 0.0,
        clock,
        lat,
        lon,
        sog,
        cog,
        heading,
        depth,
        altitude,
        sensed: None,
        attitude: None,
    };
    let mut out = Vec::new();
    let r = e.update("v", &s, &mut out);
    if !(lat.is_finite() && lon.is_finite()) {
        prop_assert!(r.is_err());
        return Ok(());
    }
    let text = String::from_utf8(out).unwrap();
    let mut frags = String::new();
    for l in text.split_terminator("\r\n") {
        prop_assert!(l.len() <= 82 && l.is_ascii(), "{}", l);
        let (body, ck) = l[1..].split_once('*').unwrap();
        // An AIS payload is six-bit armoured text, which may spell
        // "NaN" by chance (CI met `:NaN4`); only the other fields are
        // numbers written as text.
        let mut fields: Vec<&str> = body.split(',').collect();
        if l.starts_with('!') && fields.len() > 5 {
            fields.remove(5);
        }
        let low = fields.join(",").to_ascii_lowercase();
        prop_assert!(!low.contains("nan") && !low.contains("inf"), "{}", l);
        prop_assert_eq!(ck, format!("{:02X}", sentence::checksum(body.as_bytes())));
        if l.starts_with('!') {
            let f: Vec<&str> = body.split(',').collect();
            frags.push_str(f[5]);
            if f[1] != f[2] {
                continue;
            }
            let d = ais::decode(frags.as_bytes()).unwrap();
            frags.clear();
            prop_assert_eq!(d.mmsi, usim::nmea::default_mmsi("v"));
            if d.msg_type != 1 {
                continue;
            }
            let in_range = lat.abs() <= 90.0;
            match d.lat {
                Some(v) => prop_assert!(in_range && (v - lat).abs() < 1e-6, "{} {}", v, lat),
                None => prop_assert!(!in_range),
            }
            match d.sog_kn {
                Some(v) if v < 102.2 => {
                    prop_assert!((v - sog * 3600.0 / 1852.0).abs() <= 0.05 + 1e-9)
                }
                Some(_) => prop_assert!(sog * 3600.0 / 1852.0 >= 102.15),
                None => prop_assert!(!(sog.is_finite() && sog >= 0.0)),
            }
            match d.heading_deg {
                Some(h) => {
                    let diff = (f64::from(h) - heading + 540.0).rem_euclid(360.0) - 180.0;
                    prop_assert!(diff.abs() <= 0.5 + 1e-9, "{} {}", h, heading);
                }
                None => prop_assert!(heading.is_nan() || heading.abs() > 1e9),
            }
            match d.cog_deg {
                Some(c) => {
                    let diff = (c - cog + 540.0).rem_euclid(360.0) - 180.0;
                    prop_assert!(diff.abs() <= 0.05 + 1e-6, "{} {}", c, cog);
                }
                None => prop_assert!(cog.is_nan() || cog.abs() > 1e9),
            }
        }
    }
    Ok(())
}

/// The state CI met: its AIS payload spells `:NaN4` in six-bit text, which
/// is not a number written as text.
#[test]
fn a_payload_that_spells_nan_is_not_a_nan() {
    check_state(
        2.033769142918791,
        0.0,
        0.0,
        f64::NAN,
        0.0,
        0.0,
        0.0,
        0.0,
        false,
    )
    .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_line_is_well_formed(
        lat in prop_oneof![-90.0..90.0f64, any_f64()],
        lon in prop_oneof![-180.0..180.0f64, any_f64()],
        sog in any_f64(),
        cog in any_f64(),
        heading in any_f64(),
        depth in any_f64(),
        altitude in any_f64(),
        clock in prop_oneof![0.0..4e9f64, any_f64()],
        own in any::<bool>(),
    ) {
        check_state(lat, lon, sog, cog, heading, depth, altitude, clock, own)?;
    }

    #[test]
    fn names_in_six_bit_text_are_twenty_encodable_characters(name in ".{0,40}") {
        let t = ais::sixbit_text(&name, 20);
        prop_assert_eq!(t.len(), 20);
        prop_assert!(t.bytes().all(|c| (32..=95).contains(&c)), "{}", t);
    }
}
