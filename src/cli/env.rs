//! `usim env`: a vehicle file's environment sampled at one point (the sea
//! surface elevation and its slopes, the wind speed, the tide factor) as
//! CSV, for plots and outside oracles (docs/model.md §24).
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};

const AFTER_HELP: &str = "\
Columns: t (s), elevation (m), slope_x, slope_y (m/m, east and north),
wind (m/s, mean plus gust), tide (the current field's factor); a part that
is off gives empty cells. Time is simulated time from the start, s.
Limits: --dt > 0, at most 1e8 rows; the tables' ranges are in
docs/security.md (a bad value is refused with file:line:key).

Examples:
  usim env configs/kayak_sea.toml --duration 1800 --dt 0.5 > sea.csv
  usim env configs/kayak_sea.toml --components > components.csv";

/// Largest number of rows `usim env` writes.
pub const MAX_ROWS: f64 = 1e8;

/// Arguments of `usim env`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct EnvArgs {
    /// The vehicle file with `[sea]`, `[wind]` or `[current_tide]`.
    pub config: PathBuf,
    /// Length of the record, s.
    #[arg(long, default_value_t = 1800.0)]
    pub duration: f64,
    /// Sample interval, s.
    #[arg(long, default_value_t = 0.5)]
    pub dt: f64,
    /// Where to sample, east, m.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub x: f64,
    /// Where to sample, north, m.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub y: f64,
    /// Print the components instead: part,frequency_hz,amplitude,direction_deg.
    #[arg(long)]
    pub components: bool,
}

/// Run `usim env`.
pub fn run(a: EnvArgs) -> anyhow::Result<ExitCode> {
    let cfg = crate::config::load_vehicle(&a.config)?;
    let Some(env) = cfg.params.env.as_deref() else {
        bail!(
            "{}: no [sea], [wind] or [current_tide] table is on",
            a.config.display()
        );
    };
    let out = io::stdout().lock();
    let mut w = BufWriter::new(out);
    if a.components {
        writeln!(w, "part,frequency_hz,amplitude,direction_deg")?;
        if let Some(sea) = &env.sea {
            for (f, amp, dir) in sea.components() {
                writeln!(w, "sea,{f},{amp},{dir}")?;
            }
        }
        if let Some(wind) = &env.wind {
            for (f, amp) in wind.components() {
                writeln!(w, "wind,{f},{amp},{}", wind.settings.direction_deg)?;
            }
        }
        w.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if !(a.dt.is_finite() && a.dt > 0.0) {
        bail!("--dt must be a positive number of seconds, got {}", a.dt);
    }
    if !(a.duration.is_finite() && a.duration >= 0.0) || a.duration / a.dt > MAX_ROWS {
        bail!(
            "--duration must be from 0 to {MAX_ROWS}·dt seconds, got {}",
            a.duration
        );
    }
    if !(a.x.is_finite() && a.y.is_finite()) {
        bail!("--x and --y must be finite, m");
    }
    let n = (a.duration / a.dt).round() as u64;
    writeln!(w, "t,elevation,slope_x,slope_y,wind,tide")?;
    for i in 0..n {
        let t = i as f64 * a.dt;
        match &env.sea {
            Some(s) => {
                let (e, sx, sy) = s.elevation_and_slopes(a.x, a.y, t);
                write!(w, "{t},{e},{sx},{sy},")?;
            }
            None => write!(w, "{t},,,,")?,
        }
        match &env.wind {
            Some(wd) => write!(w, "{},", wd.speed_at(t))?,
            None => write!(w, ",")?,
        }
        match &env.tide {
            Some(td) => writeln!(w, "{}", td.factor(t))?,
            None => writeln!(w)?,
        }
    }
    w.flush().context("writing the record")?;
    Ok(ExitCode::SUCCESS)
}
