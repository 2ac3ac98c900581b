//! The `[obstacles]` table (docs/config.md, docs/obstacles.md): an
//! obstacle file in uFldObstacleSim's format, read relative to the config,
//! and how the vehicle meets and senses it, validated into
//! [`crate::obstacle::Setup`]. A bad file's errors name that file, its
//! line and the key.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::Spanned;

use super::error::{ConfigError, Source};
use super::raw::RawObstacles;
use crate::obstacle::{self, Settings, Setup};

type S<T> = Option<Spanned<T>>;

/// Largest `sensor_range` and `hit_range`, m.
pub const MAX_RANGE_M: f64 = 1e6;

/// Validate `[obstacles]` (at byte `raw.span()` of `src`) and read its file.
pub fn build(src: &Source<'_>, raw: &Spanned<RawObstacles>) -> Result<Arc<Setup>, ConfigError> {
    let r = raw.get_ref();
    let range = |v: &S<f64>, key: &str, default: f64| -> Result<f64, ConfigError> {
        let Some(v) = v else { return Ok(default) };
        let x = *v.get_ref();
        if !(x.is_finite() && (0.0..=MAX_RANGE_M).contains(&x)) {
            return Err(src.error(
                v.span().start,
                &format!("obstacles.{key}"),
                format!("must be a number of metres in [0, {MAX_RANGE_M}]"),
            ));
        }
        Ok(x)
    };
    let mut settings = Settings {
        sensor_range: range(
            &r.sensor_range,
            "sensor_range",
            obstacle::DEFAULT_SENSOR_RANGE_M,
        )?,
        hit_range: range(&r.hit_range, "hit_range", obstacle::DEFAULT_HIT_RANGE_M)?,
        post_points: r.post_points.as_ref().is_some_and(|b| *b.get_ref()),
        refresh_interval: None,
    };
    if let Some(v) = &r.refresh_interval {
        let x = *v.get_ref();
        if !(x.is_finite() && x > 0.0 && x <= 1e9) {
            return Err(src.error(
                v.span().start,
                "obstacles.refresh_interval",
                "must be a number of seconds > 0 (leave it out to post the obstacles once)",
            ));
        }
        settings.refresh_interval = Some(x);
    }
    let Some(f) = &r.file else {
        return Err(src.error(
            raw.span().start,
            "obstacles.file",
            "missing: name the obstacle file (uFldObstacleSim's format, relative to this file)",
        ));
    };
    let path = src
        .path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(f.get_ref());
    let text = super::read_capped(&path, super::MAX_INPUT_BYTES).map_err(|e| {
        src.error(
            f.span().start,
            "obstacles.file",
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    setup(path, &text, settings)
}

/// An obstacle field from obstacle file `file` (relative to `base`'s
/// directory) with `settings` (a `.moos` file's uFldObstacleSim block,
/// `usim moos`); the file's errors name it, its line and key.
pub fn from_file(base: &Path, file: &str, settings: Settings) -> Result<Arc<Setup>, ConfigError> {
    let path = base.parent().unwrap_or_else(|| Path::new(".")).join(file);
    let text = super::read_capped(&path, super::MAX_INPUT_BYTES).map_err(|e| ConfigError {
        path: base.to_path_buf(),
        line: None,
        key: Some("obstacle_file".to_string()),
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    setup(path, &text, settings)
}

/// The field of obstacle file `path` (its text `text`) with `settings`;
/// a parse error names the file, its line and key.
fn setup(path: PathBuf, text: &str, settings: Settings) -> Result<Arc<Setup>, ConfigError> {
    let field = obstacle::parse(text).map_err(|e| ConfigError {
        path,
        line: Some(e.line),
        key: Some(e.key),
        message: e.message,
    })?;
    Ok(Arc::new(Setup { field, settings }))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::config::parse_vehicle;

    fn dir_with(obstacles: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("obs.txt"), obstacles).unwrap();
        let cfg = d.path().join("v.toml");
        (d, cfg)
    }

    #[test]
    fn the_file_is_read_relative_to_the_config() {
        let (_d, cfg) = dir_with("poly = pts={50,-10:70,-10:70,10:50,10},label=box\n");
        let text =
            "name = \"a\"\n[obstacles]\nfile = \"obs.txt\"\nhit_range = 5\npost_points = true\n";
        let v = parse_vehicle(&cfg, text).unwrap();
        let s = v.obstacles.expect("obstacles on");
        assert_eq!(s.field.obstacles[0].label, "box");
        assert_eq!(s.settings.hit_range, 5.0);
        assert_eq!(s.settings.sensor_range, 50.0, "uFldObstacleSim's default");
        assert!(s.settings.post_points);
        assert!(parse_vehicle(&cfg, "name = \"a\"\n")
            .unwrap()
            .obstacles
            .is_none());
    }

    #[test]
    fn a_bad_obstacle_file_names_its_line_and_key() {
        let (_d, cfg) = dir_with("// field\n\npoly = pts={0,0:10,0:5,5:10,10:0,10},label=dent\n");
        let e = parse_vehicle(&cfg, "[obstacles]\nfile = \"obs.txt\"\n").unwrap_err();
        assert!(e.path.ends_with("obs.txt"), "{e}");
        assert_eq!((e.line, e.key.as_deref()), (Some(3), Some("pts")), "{e}");
        assert!(
            e.to_string()
                .contains("obs.txt:3: key `pts`: not a convex polygon"),
            "{e}"
        );
    }

    #[test]
    fn bad_settings_name_the_config_key() {
        let (_d, cfg) = dir_with("poly = pts={0,0:1,0:1,1}\n");
        let e =
            parse_vehicle(&cfg, "[obstacles]\nfile = \"obs.txt\"\nhit_range = -1\n").unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(3), Some("obstacles.hit_range")),
            "{e}"
        );
        let e = parse_vehicle(&cfg, "[obstacles]\nhit_range = 1\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("obstacles.file"), "{e}");
        let e = parse_vehicle(&cfg, "[obstacles]\nfile = \"none.txt\"\n").unwrap_err();
        assert!(e.message.contains("cannot read"), "{e}");
        let e =
            parse_vehicle(&cfg, "[obstacles]\nfile = \"obs.txt\"\nsensor_rng = 3\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
    }
}
