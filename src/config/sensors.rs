//! The `[sensors]` table (docs/config.md): sensor degradation between the
//! true state and the `NAV_*` postings, validated into
//! [`crate::sensor::Settings`] with file:line:key errors.
use toml::Spanned;

use super::error::{ConfigError, Source};
use super::raw::RawSensors;

type S<T> = Option<Spanned<T>>;
use crate::model::{ModelVariant, Params};
use crate::sensor::{self, fault, Settings, Suite};

/// Validate `[sensors]` (at byte `at` of `src`) for vehicle `name` into
/// `p.sensors`.
pub fn build(
    src: &Source<'_>,
    raw: &Spanned<RawSensors>,
    name: &str,
    p: &mut Params,
) -> Result<(), ConfigError> {
    if p.variant == ModelVariant::V22 {
        return Err(src.error(
            raw.span().start,
            "sensors",
            "sensors are not available with model = \"v22\" yet (classic only)",
        ));
    }
    let r = raw.get_ref();
    let mut s = Settings::default();
    let num =
        |v: &S<f64>, key: &str, lo: f64, hi: f64, unit: &str| -> Result<Option<f64>, ConfigError> {
            let Some(v) = v else { return Ok(None) };
            let x = *v.get_ref();
            if !(x.is_finite() && (lo..=hi).contains(&x)) {
                return Err(src.error(
                    v.span().start,
                    &format!("sensors.{key}"),
                    format!("must be a number in [{lo}, {hi}]{unit}"),
                ));
            }
            Ok(Some(x))
        };
    let int = |v: &S<i64>, key: &str, lo: i64, hi: i64| -> Result<Option<i64>, ConfigError> {
        let Some(v) = v else { return Ok(None) };
        let x = *v.get_ref();
        if !(lo..=hi).contains(&x) {
            return Err(src.error(
                v.span().start,
                &format!("sensors.{key}"),
                format!("must be an integer in [{lo}, {hi}]"),
            ));
        }
        Ok(Some(x))
    };
    let m = sensor::MAX_POS_M;
    if let Some(x) = int(&r.seed, "seed", 0, i64::MAX)? {
        s.seed = x as u64;
    }
    s.gps_sigma = num(&r.gps_sigma, "gps_sigma", 0.0, m, " m")?.unwrap_or(0.0);
    s.gps_bias_sigma = num(&r.gps_bias_sigma, "gps_bias_sigma", 0.0, m, " m")?.unwrap_or(0.0);
    let tau = num(&r.gps_bias_tau, "gps_bias_tau", 0.0, 1e9, " s")?;
    if s.gps_bias_sigma > 0.0 {
        match (tau, &r.gps_bias_tau) {
            (Some(t), _) if t > 0.0 => s.gps_bias_tau = t,
            (_, Some(v)) => {
                return Err(src.error(
                    v.span().start,
                    "sensors.gps_bias_tau",
                    "must be > 0 s with a gps_bias_sigma",
                ))
            }
            _ => {
                let at = r
                    .gps_bias_sigma
                    .as_ref()
                    .map_or(raw.span().start, |v| v.span().start);
                return Err(src.error(
                    at,
                    "sensors.gps_bias_sigma",
                    "needs gps_bias_tau (the bias's correlation time, s > 0)",
                ));
            }
        }
    } else {
        s.gps_bias_tau = tau.unwrap_or(0.0);
    }
    s.gps_outlier_prob = num(&r.gps_outlier_prob, "gps_outlier_prob", 0.0, 1.0, "")?.unwrap_or(0.0);
    s.gps_outlier_m = num(&r.gps_outlier_m, "gps_outlier_m", 0.0, m, " m")?.unwrap_or(0.0);
    if let Some(q) = int(&r.gps_fix_quality, "gps_fix_quality", 1, 8)? {
        s.gps_fix_quality = q as u8;
    }
    let (lo, hi) = sensor::HDOP_RANGE;
    s.gps_hdop = num(&r.gps_hdop, "gps_hdop", lo, hi, "")?;
    if let Some(n) = int(&r.gps_satellites, "gps_satellites", 0, 99)? {
        s.gps_satellites = n as u8;
    }
    s.heading_sigma =
        num(&r.heading_sigma, "heading_sigma", 0.0, 180.0, " degrees")?.unwrap_or(0.0);
    s.heading_bias =
        num(&r.heading_bias, "heading_bias", -180.0, 180.0, " degrees")?.unwrap_or(0.0);
    s.speed_sigma = num(&r.speed_sigma, "speed_sigma", 0.0, 100.0, " m/s")?.unwrap_or(0.0);
    s.depth_sigma = num(&r.depth_sigma, "depth_sigma", 0.0, 1000.0, " m")?.unwrap_or(0.0);
    s.latency = num(&r.latency, "latency", 0.0, sensor::MAX_LATENCY_S, " s")?.unwrap_or(0.0);
    for f in r.faults.iter().flatten() {
        let ev = fault::parse(f.get_ref())
            .map_err(|e| src.error(f.span().start, "sensors.faults", e))?;
        s.faults.push(ev);
        if s.faults.len() > fault::MAX_PENDING / 2 {
            return Err(src.error(
                f.span().start,
                "sensors.faults",
                format!("at most {} entries", fault::MAX_PENDING / 2),
            ));
        }
    }
    p.sensors = Some(Suite::new(s, name).boxed());
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::parse_vehicle;
    use crate::model::Vehicle;
    use std::path::Path;

    #[test]
    fn bad_values_name_file_line_and_key() {
        for (text, key, line) in [
            (
                "name = \"a\"\n[sensors]\ngps_sigma = -1\n",
                "sensors.gps_sigma",
                3,
            ),
            (
                "[sensors]\nseed = 1\ngps_bias_sigma = 2\n",
                "sensors.gps_bias_sigma",
                3,
            ),
            (
                "[sensors]\ngps_outlier_prob = 1.5\n",
                "sensors.gps_outlier_prob",
                2,
            ),
            ("[sensors]\nlatency = nan\n", "sensors.latency", 2),
            ("[sensors]\nfaults = [\"gps=maybe\"]\n", "sensors.faults", 2),
        ] {
            let e = parse_vehicle(Path::new("v.toml"), text).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{text}: {e}");
            assert_eq!(e.line, Some(line), "{text}: {e}");
            assert!(e.to_string().starts_with("v.toml:"), "{e}");
        }
        let e = parse_vehicle(Path::new("v.toml"), "[sensors]\ngps_sigm = 1\n").unwrap_err();
        assert!(e.to_string().contains("gps_sigma"), "{e}");
        let e = parse_vehicle(Path::new("v.toml"), "model = \"v22\"\n[sensors]\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("sensors"), "{e}");
    }

    /// The true track (the NAV record, `TRUE_X`/`TRUE_Y`) is the same with
    /// any sensor settings; only the published `NAV_*` values differ.
    #[test]
    fn sensors_leave_the_true_track_alone_and_empty_sensors_change_nothing() {
        let base = "name = \"a\"\nstart_heading = 30\nlat_origin = 43\nlon_origin = -70\n";
        let noisy = format!(
            "{base}[sensors]\nseed = 4\ngps_sigma = 3\ngps_bias_sigma = 2\ngps_bias_tau = 20\n\
             gps_outlier_prob = 0.1\ngps_outlier_m = 40\nheading_sigma = 2\nspeed_sigma = 0.2\n\
             latency = 0.3\nfaults = [\"gps=off,at=5,for=3\"]\n"
        );
        let empty = format!("{base}[sensors]\n");
        let run = |text: &str| {
            let c = parse_vehicle(Path::new("v.toml"), text).unwrap();
            let mut v = Vehicle::new(&c, 1000.0);
            v.handle_command(crate::command::Command::DesiredThrust(60.0), 1000.0)
                .unwrap();
            v.handle_command(crate::command::Command::DesiredRudder(10.0), 1000.0)
                .unwrap();
            let mut out = Vec::new();
            for k in 1..=150 {
                v.step(1000.0 + f64::from(k) * 0.1);
                let s = v.snapshot();
                out.push(((s.x, s.y, s.heading, s.speed), v.publications(), s.sensed));
            }
            out
        };
        let (a, b, c) = (run(base), run(&noisy), run(&empty));
        let mut dropped = 0;
        for k in 0..a.len() {
            assert_eq!(a[k].0, b[k].0, "true state moved at step {k}");
            let var = |p: &[crate::model::Publication], n: &str| {
                p.iter().find(|q| q.var == n).map(|q| q.value.clone())
            };
            assert_eq!(var(&a[k].1, "TRUE_X"), var(&b[k].1, "TRUE_X"));
            if var(&b[k].1, "USM_X").is_none() {
                dropped += 1;
                assert!(var(&b[k].1, "USM_LAT").is_none());
                assert_eq!(b[k].2.unwrap().fix, 0);
            }
            // An empty [sensors] table publishes exactly what none does.
            assert_eq!(a[k].1, c[k].1, "step {k}");
        }
        // gps off from t = 5 s for 3 s, read 0.3 s late: 30 iterations.
        assert_eq!(dropped, 30);
        assert_ne!(a[100].1, b[100].1);
    }
}
