//! uSimMarineV22's configuration keys beyond the core (docs/v22.md §2,
//! §15): the embedded PID, sailing, wormholes and `post_des_*`.
//!
//! Values uSimMarineV22 itself would reject are warnings naming the file,
//! line and key (the setting keeps its default); values usim cannot run
//! with are errors.
use super::error::{ConfigError, Source};
use super::raw::{BoolOrText, Lines, NumOrText, RawVehicle};
use crate::model::angles::{atof, deg_to_radians, is_number};
use crate::model::pid::{Gains, PidSettings};
use crate::model::{ModelVariant, Params};
use toml::Spanned;

type S<T> = Option<Spanned<T>>;

/// Read the V22 keys of `raw` into `p`; warnings are appended.
pub fn build(
    src: &Source<'_>,
    raw: &RawVehicle,
    p: &mut Params,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let sink = std::cell::RefCell::new(Vec::new());
    let res = build_inner(src, raw, p, &|at: usize, key: &str, msg: &str| {
        sink.borrow_mut().push(src.warning(at, key, msg))
    });
    warnings.extend(sink.into_inner());
    res
}

fn build_inner(
    src: &Source<'_>,
    raw: &RawVehicle,
    p: &mut Params,
    warn: &dyn Fn(usize, &str, &str),
) -> Result<(), ConfigError> {
    let keys = v22_keys_present(raw);
    if p.variant != ModelVariant::V22 {
        // Every V22-only key present on a classic vehicle is a warning.
        for (k, at) in keys {
            warn(
                at,
                k,
                "is a uSimMarineV22 parameter; the classic model ignores it (set model = \"v22\")",
            );
        }
        return Ok(());
    }
    post_des(raw, p, warn);
    sailing_and_wormholes(raw, p, warn);
    if !pid_coupled(raw) {
        for (k, at) in keys.iter().filter(|(k, _)| {
            !matches!(
                *k,
                "wind_conditions"
                    | "polar_plot"
                    | "wormhole"
                    | "post_des_thrust"
                    | "post_des_rudder"
            )
        }) {
            warn(
                *at,
                k,
                "ignored: the embedded PID is coupled only by a yaw_pid_* key",
            );
        }
        return Ok(());
    }
    let mut s = PidSettings::default();
    yaw_and_speed_gains(raw, &mut s, warn);
    depth_gains(src, raw, &mut s, warn)?;
    pid_extras(raw, &mut s, warn);
    p.pid = Some(s);
    Ok(())
}

/// The V22-only keys present in `raw`, with their offsets.
fn v22_keys_present(raw: &RawVehicle) -> Vec<(&'static str, usize)> {
    macro_rules! present {
        ($($f:ident),*) => {{
            let mut v: Vec<(&'static str, usize)> = Vec::new();
            $( if let Some(x) = &raw.$f { v.push((stringify!($f), x.span().start)); } )*
            v
        }};
    }
    present!(
        yaw_pid_kp,
        yaw_pid_kd,
        yaw_pid_ki,
        yaw_pid_integral_limit,
        yaw_pid_ki_limit,
        maxrudder,
        speed_pid_kp,
        speed_pid_kd,
        speed_pid_ki,
        speed_pid_integral_limit,
        maxthrust,
        speed_factor,
        depth_control,
        z_to_pitch_pid_kp,
        z_to_pitch_pid_kd,
        z_to_pitch_pid_ki,
        z_to_pitch_pid_integral_limit,
        maxpitch,
        pitch_pid_kp,
        pitch_pid_kd,
        pitch_pid_ki,
        pitch_pid_integral_limit,
        maxelevator,
        simulation,
        tardy_helm_threshold,
        tardy_nav_threshold,
        sim_instability,
        heading_debug,
        speed_debug,
        depth_debug,
        wind_conditions,
        polar_plot,
        wormhole,
        post_des_thrust,
        post_des_rudder
    )
}

/// `post_des_thrust`/`post_des_rudder` (docs/v22.md §2.3): the names the
/// PID's outputs are posted under.
fn post_des(raw: &RawVehicle, p: &mut Params, warn: &dyn Fn(usize, &str, &str)) {
    for (key, v, slot, reserved) in [
        (
            "post_des_thrust",
            &raw.post_des_thrust,
            &mut p.post_des_thrust,
            "DESIRED_THRUST",
        ),
        (
            "post_des_rudder",
            &raw.post_des_rudder,
            &mut p.post_des_rudder,
            "DESIRED_RUDDER",
        ),
    ] {
        if let Some(v) = v {
            let name: String = v.get_ref().chars().filter(|c| !c.is_whitespace()).collect();
            if name.is_empty() || name == reserved || name.contains(['/', '+', '#']) {
                warn(
                    v.span().start,
                    key,
                    &format!("must be a variable name other than {reserved}; ignored"),
                );
            } else {
                *slot = Some(name);
            }
        }
    }
}

/// Sailing (docs/v22.md §11) and wormholes (§10).
fn sailing_and_wormholes(raw: &RawVehicle, p: &mut Params, warn: &dyn Fn(usize, &str, &str)) {
    if let Some(pl) = &raw.polar_plot {
        for line in lines_of(pl.get_ref()) {
            if let Err(e) = p.sailing.plot.add_line(line) {
                warn(pl.span().start, "polar_plot", &format!("{e}; line ignored"));
            }
        }
    }
    if let Some(w) = &raw.wind_conditions {
        if let Err(e) = p.sailing.set_wind(w.get_ref()) {
            warn(
                w.span().start,
                "wind_conditions",
                &format!("{e}; the elements before it were applied"),
            );
        }
    }
    // Wormholes (docs/v22.md §10)
    if let Some(wh) = &raw.wormhole {
        for line in lines_of(wh.get_ref()) {
            if let Err(e) = p.wormholes.configure(line) {
                warn(wh.span().start, "wormhole", &format!("{e}; line ignored"));
            }
        }
    }
}

/// The embedded PID is coupled by any `yaw_pid_*` key (docs/v22.md §2.1).
fn pid_coupled(raw: &RawVehicle) -> bool {
    raw.yaw_pid_kp.is_some()
        || raw.yaw_pid_kd.is_some()
        || raw.yaw_pid_ki.is_some()
        || raw.yaw_pid_integral_limit.is_some()
        || raw.yaw_pid_ki_limit.is_some()
}

/// A PID number as uSimMarineV22 reads it (`atof` of a numeric text); a
/// non-number is a warning and `dflt` is used.
fn num(v: &S<NumOrText>, key: &str, dflt: f64, warn: &dyn Fn(usize, &str, &str)) -> f64 {
    let Some(v) = v else { return dflt };
    match v.get_ref() {
        NumOrText::Num(x) if x.is_finite() => *x,
        NumOrText::Num(_) => {
            warn(
                v.span().start,
                key,
                "not a finite number; the default is used",
            );
            dflt
        }
        NumOrText::Text(t) => {
            let t = t.trim();
            if is_number(t) {
                atof(t)
            } else {
                warn(
                    v.span().start,
                    key,
                    &format!("`{t}` is not a number; the default is used"),
                );
                dflt
            }
        }
    }
}

/// The yaw and speed loops: gains, limits, `speed_factor` (docs/v22.md §2.2).
fn yaw_and_speed_gains(raw: &RawVehicle, s: &mut PidSettings, warn: &dyn Fn(usize, &str, &str)) {
    let yaw_ilim = match (&raw.yaw_pid_integral_limit, &raw.yaw_pid_ki_limit) {
        // both given: the later line wins
        (Some(a), Some(b)) if b.span().start > a.span().start => {
            num(&raw.yaw_pid_ki_limit, "yaw_pid_ki_limit", 0.0, warn)
        }
        (Some(_), _) => num(
            &raw.yaw_pid_integral_limit,
            "yaw_pid_integral_limit",
            0.0,
            warn,
        ),
        (None, _) => num(&raw.yaw_pid_ki_limit, "yaw_pid_ki_limit", 0.0, warn),
    };
    s.max_rudder = num(&raw.maxrudder, "maxrudder", 100.0, warn);
    s.yaw = Gains {
        kp: num(&raw.yaw_pid_kp, "yaw_pid_kp", 0.0, warn),
        kd: num(&raw.yaw_pid_kd, "yaw_pid_kd", 0.0, warn),
        ki: num(&raw.yaw_pid_ki, "yaw_pid_ki", 0.0, warn),
        integral_limit: yaw_ilim,
        output_limit: s.max_rudder,
    };
    s.max_thrust = num(&raw.maxthrust, "maxthrust", 100.0, warn);
    s.speed = Gains {
        kp: num(&raw.speed_pid_kp, "speed_pid_kp", 0.0, warn),
        kd: num(&raw.speed_pid_kd, "speed_pid_kd", 0.0, warn),
        ki: num(&raw.speed_pid_ki, "speed_pid_ki", 0.0, warn),
        integral_limit: num(
            &raw.speed_pid_integral_limit,
            "speed_pid_integral_limit",
            0.0,
            warn,
        ),
        output_limit: s.max_thrust,
    };
    let f = num(&raw.speed_factor, "speed_factor", 0.0, warn);
    if f < 0.0 {
        if let Some(v) = &raw.speed_factor {
            warn(
                v.span().start,
                "speed_factor",
                "must be >= 0; 0 (speed PID) is used",
            );
        }
    } else {
        s.speed_factor = f;
    }
}

/// `depth_control` and the depth/pitch loops (a bad `depth_control` is an
/// error: uSimMarineV22 would abandon its start-up, docs/v22.md §14.4).
fn depth_gains(
    src: &Source<'_>,
    raw: &RawVehicle,
    s: &mut PidSettings,
    warn: &dyn Fn(usize, &str, &str),
) -> Result<(), ConfigError> {
    if let Some(v) = &raw.depth_control {
        s.depth_control = match bool_word(v.get_ref()) {
            Some(b) => b,
            None => {
                // uSimMarineV22 abandons its start-up here (docs/v22.md §14.4);
                // usim refuses the config instead.
                return Err(src.error(
                    v.span().start,
                    "depth_control",
                    "must be true or false (uSimMarineV22 would abandon its start-up)",
                ));
            }
        };
    }
    s.max_elevator = num(&raw.maxelevator, "maxelevator", 13.0, warn);
    if s.depth_control {
        let maxpitch_valid = match &raw.maxpitch {
            Some(v) => match v.get_ref() {
                NumOrText::Num(x) => x.is_finite(),
                NumOrText::Text(t) => is_number(t.trim()),
            },
            None => false,
        };
        let mp = num(&raw.maxpitch, "maxpitch", 15.0, warn);
        // degrees -> radians only for a valid configured value; the default
        // 15 stays 15 (radians, i.e. no limit), as in uSimMarineV22
        s.max_pitch = if maxpitch_valid {
            deg_to_radians(mp)
        } else {
            mp
        };
        s.depth = Gains {
            kp: num(&raw.z_to_pitch_pid_kp, "z_to_pitch_pid_kp", 0.0, warn),
            kd: num(&raw.z_to_pitch_pid_kd, "z_to_pitch_pid_kd", 0.0, warn),
            ki: num(&raw.z_to_pitch_pid_ki, "z_to_pitch_pid_ki", 0.0, warn),
            integral_limit: num(
                &raw.z_to_pitch_pid_integral_limit,
                "z_to_pitch_pid_integral_limit",
                0.0,
                warn,
            ),
            output_limit: s.max_pitch,
        };
        s.pitch = Gains {
            kp: num(&raw.pitch_pid_kp, "pitch_pid_kp", 0.0, warn),
            kd: num(&raw.pitch_pid_kd, "pitch_pid_kd", 0.0, warn),
            ki: num(&raw.pitch_pid_ki, "pitch_pid_ki", 0.0, warn),
            integral_limit: num(
                &raw.pitch_pid_integral_limit,
                "pitch_pid_integral_limit",
                0.0,
                warn,
            ),
            output_limit: s.max_elevator,
        };
    } else {
        s.max_pitch = num(&raw.maxpitch, "maxpitch", 15.0, warn);
        s.depth = Gains {
            output_limit: s.max_pitch,
            ..Gains::default()
        };
        s.pitch = Gains {
            output_limit: s.max_elevator,
            ..Gains::default()
        };
    }
    Ok(())
}

/// `simulation`, the tardiness thresholds, `sim_instability` and the debug
/// switches.
fn pid_extras(raw: &RawVehicle, s: &mut PidSettings, warn: &dyn Fn(usize, &str, &str)) {
    if let Some(v) = &raw.simulation {
        match bool_word(v.get_ref()) {
            Some(b) => s.simulation = b,
            None => warn(
                v.span().start,
                "simulation",
                "must be true or false; ignored",
            ),
        }
    }
    let atof_of = |v: &S<NumOrText>| -> Option<f64> {
        v.as_ref().map(|v| match v.get_ref() {
            NumOrText::Num(x) if x.is_finite() => *x,
            NumOrText::Num(_) => 0.0,
            NumOrText::Text(t) => atof(t),
        })
    };
    if let Some(x) = atof_of(&raw.tardy_helm_threshold) {
        s.tardy_helm = x.max(0.0);
    }
    if let Some(x) = atof_of(&raw.tardy_nav_threshold) {
        s.tardy_nav = x.max(0.0);
    }
    if let Some(x) = atof_of(&raw.sim_instability) {
        s.sim_instability = x.clamp(0.0, 100.0);
    }
    for (key, v) in [
        ("heading_debug", &raw.heading_debug),
        ("speed_debug", &raw.speed_debug),
        ("depth_debug", &raw.depth_debug),
    ] {
        if let Some(v) = v {
            if bool_word(v.get_ref()) == Some(true) {
                warn(
                    v.span().start,
                    key,
                    "accepted; usim does not publish the PID's debug texts",
                );
            }
        }
    }
}

fn lines_of(l: &Lines) -> Vec<&str> {
    match l {
        Lines::One(s) => vec![s.as_str()],
        Lines::Many(v) => v.iter().map(String::as_str).collect(),
    }
}

/// MOOS's boolean words (`setBooleanOnString`, without `toggle`).
fn bool_word(v: &BoolOrText) -> Option<bool> {
    match v {
        BoolOrText::Bool(b) => Some(*b),
        BoolOrText::Text(t) => match t.trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" => Some(true),
            "false" | "off" | "no" => Some(false),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse_vehicle;
    use std::path::Path;

    fn load(text: &str) -> Result<crate::config::VehicleConfig, crate::config::ConfigError> {
        parse_vehicle(Path::new("boat.toml"), text)
    }

    #[test]
    fn a_yaw_key_couples_the_pid_with_its_limits() {
        let c = load(
            "model = \"v22\"\nyaw_pid_kp = 0.8\nmaxrudder = 40\nmaxpitch = 15\nmaxelevator = 30\nspeed_factor = 20\n",
        )
        .unwrap();
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let p = c.params.pid.expect("coupled");
        assert_eq!(p.yaw.kp, 0.8);
        assert_eq!(p.yaw.output_limit, 40.0);
        assert_eq!(p.max_rudder, 40.0);
        assert_eq!(p.max_pitch, (15.0 / 180.0) * std::f64::consts::PI);
        assert_eq!(p.depth.output_limit, p.max_pitch);
        assert_eq!(p.pitch.output_limit, 30.0);
        assert_eq!(p.speed_factor, 20.0);
        assert!(p.depth_control);
    }

    #[test]
    fn default_maxpitch_stays_fifteen_unconverted() {
        let c = load("model = \"v22\"\nyaw_pid_ki = 0.1\n").unwrap();
        let p = c.params.pid.unwrap();
        assert_eq!(p.max_pitch, 15.0);
        assert_eq!(p.max_elevator, 13.0);
        assert_eq!((p.tardy_helm, p.tardy_nav), (2.0, 2.0));
    }

    #[test]
    fn a_non_number_warns_with_file_line_key_and_keeps_the_default() {
        let c =
            load("model = \"v22\"\nyaw_pid_kp = 1\nyaw_pid_kd = \"abc\"\nyaw_pid_ki = \"0.5\"\n")
                .unwrap();
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(
            c.warnings[0].starts_with("boat.toml:3: key `yaw_pid_kd`"),
            "{}",
            c.warnings[0]
        );
        let p = c.params.pid.unwrap();
        assert_eq!((p.yaw.kd, p.yaw.ki), (0.0, 0.5));
    }

    #[test]
    fn an_invalid_depth_control_is_an_error() {
        let e = load("model = \"v22\"\nyaw_pid_kp = 1\ndepth_control = \"maybe\"\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.key.as_deref(), Some("depth_control"));
        let c = load("model = \"v22\"\nyaw_pid_kp = 1\ndepth_control = \"off\"\n").unwrap();
        assert!(!c.params.pid.clone().unwrap().depth_control);
        assert!(!c.params.depth_control());
    }

    #[test]
    fn pid_keys_without_a_yaw_key_are_ignored_with_a_warning() {
        let c = load("model = \"v22\"\nspeed_factor = 20\ndepth_control = false\n").unwrap();
        assert!(c.params.pid.is_none());
        assert!(c.params.depth_control(), "depth control stays on");
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        let c = load("yaw_pid_kp = 1\n").unwrap();
        assert!(c.params.pid.is_none());
        assert!(c.warnings[0].contains("uSimMarineV22"), "{:?}", c.warnings);
    }

    #[test]
    fn max_speed_sets_the_turn_limit_speed_and_sailing_and_wormholes_load() {
        let c = load(
            "model = \"v22\"\nmax_speed = 3\nturn_radius = 10\npolar_plot = [\"0,0: 90,80\", \"180,50\"]\nwind_conditions = \"spd=4, dir=90\"\nwormhole = [\"tag=a, madrid_poly={0,0:10,0:10,10:0,10}, weber_poly={50,0:60,0:60,10:50,10}\", \"tag=b, connection=sideways\"]\n",
        )
        .unwrap();
        let p = &c.params;
        assert_eq!(
            (p.max_speed, p.turn_limit_max_speed, p.turn_radius),
            (3.0, 3.0, 10.0)
        );
        assert!(p.sailing.enabled());
        assert_eq!(p.sailing.plot.points().len(), 3);
        assert_eq!(p.wormholes.holes.len(), 2, "rejected new tag stays (empty)");
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("key `wormhole`"));
        // max_speed <= 0: warned, the turn limit takes the cap as it is (5)
        let c = load("model = \"v22\"\nmax_speed = 0\n").unwrap();
        assert_eq!(
            (c.params.max_speed, c.params.turn_limit_max_speed),
            (5.0, 5.0)
        );
        assert_eq!(c.warnings.len(), 1);
    }
}
