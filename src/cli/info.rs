//! `usim example` and `usim interface`: what uSimMarine's `--example` and
//! `--interface` print, for usim.
use std::process::ExitCode;

use crate::command::{Kind, SUBSCRIPTIONS};

/// The annotated example config (also `configs/example.toml`).
pub const EXAMPLE_CONFIG: &str = include_str!("../../configs/example.toml");

/// Arguments of `usim example`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Save it and edit it:\n  usim example > configs/alpha.toml")]
pub struct ExampleArgs {}

/// Arguments of `usim interface`.
#[derive(Debug, clap::Args)]
pub struct InterfaceArgs {
    /// Publication prefix to show (the config's `prefix`).
    #[arg(long, default_value = "NAV")]
    pub prefix: String,
}

/// Published variables: (name without prefix, unit, meaning).
pub const PUBLICATIONS: &[(&str, &str, &str)] = &[
    ("X", "m", "east position"),
    ("Y", "m", "north position"),
    ("LAT", "deg", "latitude (with lat_origin/lon_origin)"),
    ("LONG", "deg", "longitude (with lat_origin/lon_origin)"),
    (
        "SPEED",
        "m/s",
        "speed through water (the step mean), rounded to 0.01 (V22: capped at max_speed)",
    ),
    ("HEADING", "deg", "heading in [0,360), 0 = north, clockwise"),
    ("DEPTH", "m", "depth, positive down"),
    ("Z", "m", "-depth (classic)"),
    ("PITCH", "rad", "pitch (classic)"),
    ("YAW", "rad", "yaw, east-north-up sense (classic)"),
    ("HEADING_OVER_GROUND", "deg", "course over ground"),
    ("SPEED_OVER_GROUND", "m/s", "speed over ground (with drift)"),
    (
        "ALTITUDE",
        "m",
        "height above the bottom, once water depth is known",
    ),
    (
        "GT_X, _GT_Y, ...",
        "",
        "ground truth, with dual_state = true",
    ),
];

/// Print the example config.
pub fn example(_a: ExampleArgs) -> anyhow::Result<ExitCode> {
    print!("{EXAMPLE_CONFIG}");
    Ok(ExitCode::SUCCESS)
}

/// Print the interface.
pub fn interface(a: InterfaceArgs) -> anyhow::Result<ExitCode> {
    println!("SUBSCRIPTIONS (MQTT: {{topic_root}}/{{vehicle}}/VARIABLE; MOOS: VARIABLE)");
    println!("{}", "-".repeat(72));
    for (name, kind, what) in SUBSCRIPTIONS {
        let k = match kind {
            Kind::Number => "number",
            Kind::Text => "string",
        };
        println!("  {name:<26} {k:<7} {what}");
    }
    println!();
    println!("PUBLICATIONS (each iteration; V22: even iterations only)");
    println!("{}", "-".repeat(72));
    for (name, unit, what) in PUBLICATIONS {
        let full = format!("{}_{name}", a.prefix);
        println!("  {full:<26} {unit:<7} {what}");
    }
    for (name, what) in [
        (
            "TRUE_X, TRUE_Y",
            "ground position, m (classic; V22 with depth control)",
        ),
        (
            "PID_HAS_CONTROL, PID_STALE",
            "V22 embedded PID: override and staleness (docs/v22.md §4)",
        ),
        (
            "PID_OUTPUT",
            "V22 PID: JSON rudder, thrust, elevator (MQTT only)",
        ),
        (
            "BUOYANCY_REPORT, TRIM_REPORT",
            "V22 handshake reports (docs/v22.md §12)",
        ),
        ("USM_NAVPOS_SUMMARY", "V22: \"x=..,y=..[,lat=..,lon=..]\""),
        ("<PREFIX>_TRANSP", "V22: wormhole transparency, 0..1"),
        (
            "USM_DRIFT_SUMMARY",
            "\"ang=..,mag=..,xmag=..,ymag=..\", only when the drift changed",
        ),
        (
            "USM_RESET_COUNT",
            "number of USM_RESETs, only after a reset",
        ),
        (
            "NODE_REPORT",
            "JSON: every CSV column; t = mission time, s since start (MQTT only)",
        ),
        (
            "NODE_REPORT_LOCAL",
            "MOOS string NAME=..,X=..,..,TIME=.. (node_report_local = true)",
        ),
        ("USM_TIME", "vehicle clock, Unix s (MOOS time; MQTT only)"),
        ("status", "retained online / offline (MQTT only)"),
    ] {
        println!("  {name:<26} {:<7} {what}", "");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_lists_every_key_the_loader_knows() {
        // the unknown-key error says "`usim example` lists every key"
        use crate::config::{ACTUATOR_KEYS, MQTT_KEYS, VEHICLE_KEYS};
        let keys = VEHICLE_KEYS.iter().chain(MQTT_KEYS).chain(ACTUATOR_KEYS);
        for key in keys {
            let listed = EXAMPLE_CONFIG.lines().any(|l| {
                let l = l.trim_start_matches(['#', ' ']);
                l.starts_with(&format!("{key} ="))
                    || l.starts_with(&format!("[{key}"))
                    || l.contains(&format!(" {key} ("))
            });
            assert!(listed, "usim example does not list `{key}`");
        }
    }

    #[test]
    fn example_config_loads_without_warnings() {
        let c = crate::config::parse_vehicle(
            std::path::Path::new("configs/example.toml"),
            EXAMPLE_CONFIG,
        )
        .expect("the example config is valid");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.name, "alpha");
    }
}
