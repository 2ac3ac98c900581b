//! The environment tables of a vehicle file (docs/config.md, docs/model.md
//! §24): `[sea]`, `[wind]` and `[current_tide]` → [`Environment`]. Each
//! value is checked with the file, line and key of its error; every table
//! off (absent, or `active = false`) leaves `Params::env` at `None`.
use std::sync::Arc;

use toml::Spanned;

use super::error::{ConfigError, Source};
use super::raw::{RawSea, RawTide, RawWind};
use crate::model::env::{
    Environment, Hull, SeaState, Spectrum, Tide, WaveField, Wind, WindSettings,
};
use crate::model::Params;

type S<T> = Option<Spanned<T>>;

/// Where table `[name]` starts in the text (for errors about a missing key).
fn table_offset(src: &Source<'_>, name: &str) -> usize {
    src.text.find(&format!("[{name}]")).unwrap_or(0)
}

fn num(
    src: &Source<'_>,
    v: &S<f64>,
    key: &str,
    lo: f64,
    hi: f64,
    unit: &str,
) -> Result<Option<f64>, ConfigError> {
    let Some(v) = v else { return Ok(None) };
    let x = *v.get_ref();
    if !(x.is_finite() && (lo..=hi).contains(&x)) {
        return Err(src.error(
            v.span().start,
            key,
            format!("must be a number from {lo} to {hi} {unit}, got {x}"),
        ));
    }
    Ok(Some(x))
}

fn int(
    src: &Source<'_>,
    v: &S<i64>,
    key: &str,
    lo: i64,
    hi: i64,
) -> Result<Option<i64>, ConfigError> {
    let Some(v) = v else { return Ok(None) };
    let x = *v.get_ref();
    if !(lo..=hi).contains(&x) {
        return Err(src.error(
            v.span().start,
            key,
            format!("must be a whole number from {lo} to {hi}, got {x}"),
        ));
    }
    Ok(Some(x))
}

fn on(a: &S<bool>) -> bool {
    a.as_ref().is_none_or(|a| *a.get_ref())
}

/// The sea of `[sea]`, or `None` when it is off.
pub fn sea(src: &Source<'_>, raw: &RawSea) -> Result<Option<(SeaState, f64)>, ConfigError> {
    if !on(&raw.active) {
        return Ok(None);
    }
    let mut s = SeaState::default();
    let gamma = num(src, &raw.gamma, "sea.gamma", 1.0, 20.0, "")?;
    s.spectrum = match &raw.spectrum {
        None => Spectrum::Jonswap {
            gamma: gamma.unwrap_or(3.3),
        },
        Some(sp) => match sp.get_ref().trim().to_ascii_lowercase().as_str() {
            "jonswap" => Spectrum::Jonswap {
                gamma: gamma.unwrap_or(3.3),
            },
            "pm" | "pierson-moskowitz" | "pierson_moskowitz" => {
                if let Some(g) = &raw.gamma {
                    return Err(src.error(
                        g.span().start,
                        "sea.gamma",
                        "only a JONSWAP sea has a gamma (spectrum = \"jonswap\")",
                    ));
                }
                Spectrum::PiersonMoskowitz
            }
            other => {
                return Err(src.error(
                    sp.span().start,
                    "sea.spectrum",
                    format!(
                        "unknown spectrum `{}`; use \"jonswap\" or \"pm\"",
                        crate::text::clip(other, 40)
                    ),
                ))
            }
        },
    };
    let at = table_offset(src, "sea");
    s.hs_m = num(src, &raw.hs, "sea.hs", 1e-3, 30.0, "m")?.ok_or_else(|| {
        src.error(
            at,
            "sea.hs",
            "a sea needs its significant wave height hs, m",
        )
    })?;
    s.tp_s = num(src, &raw.tp, "sea.tp", 1.0, 40.0, "s")?
        .ok_or_else(|| src.error(at, "sea.tp", "a sea needs its peak period tp, s"))?;
    if let Some(d) = num(
        src,
        &raw.direction,
        "sea.direction",
        -360.0,
        360.0,
        "degrees",
    )? {
        s.direction_deg = d;
    }
    if let Some(d) = num(src, &raw.spreading, "sea.spreading", 0.0, 80.0, "degrees")? {
        s.spreading_deg = d;
    }
    if let Some(n) = int(
        src,
        &raw.components,
        "sea.components",
        1,
        crate::model::env::waves::MAX_COMPONENTS as i64,
    )? {
        s.components = n as usize;
    }
    if let Some(n) = int(src, &raw.seed, "sea.seed", 0, i64::MAX)? {
        s.seed = n as u64;
    }
    let drift = num(src, &raw.wave_drift, "sea.wave_drift", 0.0, 2.0, "")?.unwrap_or(1.0);
    Ok(Some((s, drift)))
}

/// The wind of `[wind]` (with the hull's windage and weathervaning), or
/// `None` when it is off.
pub fn wind(
    src: &Source<'_>,
    raw: &RawWind,
) -> Result<Option<(WindSettings, f64, f64)>, ConfigError> {
    if !on(&raw.active) {
        return Ok(None);
    }
    let mut w = WindSettings::default();
    let at = table_offset(src, "wind");
    w.speed_mps = num(
        src,
        &raw.speed,
        "wind.speed",
        0.0,
        crate::model::env::wind::MAX_SPEED_MPS,
        "m/s",
    )?
    .ok_or_else(|| src.error(at, "wind.speed", "a wind needs its mean speed, m/s"))?;
    if let Some(d) = num(
        src,
        &raw.direction,
        "wind.direction",
        -360.0,
        360.0,
        "degrees",
    )? {
        w.direction_deg = d;
    }
    if let Some(g) = &raw.gusts {
        w.gusts = *g.get_ref();
    }
    if let Some(k) = num(src, &raw.surface_drag, "wind.surface_drag", 0.0, 0.05, "")? {
        w.surface_drag = k;
    }
    if let Some(l) = num(
        src,
        &raw.length_scale,
        "wind.length_scale",
        1.0,
        10_000.0,
        "m",
    )? {
        w.length_scale_m = l;
    }
    if let Some(n) = int(src, &raw.components, "wind.components", 1, 10_000)? {
        w.components = n as usize;
    }
    if let Some(n) = int(src, &raw.seed, "wind.seed", 0, i64::MAX)? {
        w.seed = n as u64;
    }
    let hull = Hull::default();
    let windage = num(src, &raw.windage, "wind.windage", 0.0, 0.5, "")?.unwrap_or(hull.windage);
    let vane = num(
        src,
        &raw.weathervane,
        "wind.weathervane",
        0.0,
        1.0,
        "(deg/s)/(m/s)^2",
    )?
    .unwrap_or(hull.weathervane);
    Ok(Some((w, windage, vane)))
}

/// The tide of `[current_tide]`, or `None` when it is off.
pub fn tide(src: &Source<'_>, raw: &RawTide) -> Result<Option<Tide>, ConfigError> {
    if !on(&raw.active) {
        return Ok(None);
    }
    let mut t = Tide::default();
    if let Some(m) = num(src, &raw.mean, "current_tide.mean", -10.0, 10.0, "")? {
        t.mean = m;
    }
    if let Some(a) = num(
        src,
        &raw.amplitude,
        "current_tide.amplitude",
        -10.0,
        10.0,
        "",
    )? {
        t.amplitude = a;
    }
    if let Some(p) = num(src, &raw.period, "current_tide.period", 1.0, 1e9, "s")? {
        t.period_s = p;
    }
    if let Some(p) = num(
        src,
        &raw.phase,
        "current_tide.phase",
        -360.0,
        360.0,
        "degrees",
    )? {
        t.phase_deg = p;
    }
    Ok(Some(t))
}

/// Build `p.env` from the three tables; `length_m`/`beam_m` are the
/// vehicle's `platform_length`/`platform_beam` (0: a point hull).
pub fn build(
    src: &Source<'_>,
    sea_raw: Option<&RawSea>,
    wind_raw: Option<&RawWind>,
    tide_raw: Option<&RawTide>,
    length_m: f64,
    beam_m: f64,
    p: &mut Params,
) -> Result<(), ConfigError> {
    let mut env = Environment {
        hull: Hull {
            length_m,
            beam_m,
            ..Hull::default()
        },
        ..Environment::default()
    };
    if let Some(r) = sea_raw {
        if let Some((s, drift)) = sea(src, r)? {
            let field = WaveField::new(&s)
                .map_err(|(k, m)| src.error(table_offset(src, "sea"), &format!("sea.{k}"), m))?;
            env.sea = Some(Arc::new(field));
            env.hull.wave_drift = drift;
        }
    }
    if let Some(r) = wind_raw {
        if let Some((w, windage, vane)) = wind(src, r)? {
            let wind = Wind::new(&w)
                .map_err(|(k, m)| src.error(table_offset(src, "wind"), &format!("wind.{k}"), m))?;
            env.wind = Some(Arc::new(wind));
            env.hull.windage = windage;
            env.hull.weathervane = vane;
        }
    }
    if let Some(r) = tide_raw {
        env.tide = tide(src, r)?;
    }
    if !env.is_off() {
        p.env = Some(Box::new(env));
    }
    Ok(())
}
