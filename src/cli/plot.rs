//! `usim plot RUN.csv [RUN2.csv …] -o OUT.svg|OUT.png`: a one-page figure
//! of runs (docs/viewing.md).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use crate::plot::{self, Figure, ImageFormat, Labelled, Panel};

/// Arguments of `usim plot`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  usim replay missions/harbour_turns.toml -o turns.csv && usim plot turns.csv -o turns.svg\n  usim plot a.csv b.csv -o both.png --panels track,speed --title \"two runs\"\n\nThe CSVs are those of `usim replay` or `usim record` (columns found by name; a `vehicle` column gives one line per vehicle)."
)]
pub struct PlotArgs {
    /// Run CSVs (from `usim replay` or `usim record`) or alogs (`.alog`:
    /// the NAV_* or USM_* pose and DESIRED_* actuators).
    #[arg(required = true, value_name = "RUN.csv|RUN.alog")]
    pub runs: Vec<PathBuf>,
    /// The figure: .svg or .png (written whole or not at all).
    #[arg(short, long, value_name = "OUT.svg|OUT.png")]
    pub output: PathBuf,
    /// Panels, top to bottom: any of track,speed,heading,depth,actuators.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "track,speed,heading,depth,actuators"
    )]
    pub panels: String,
    /// Title above the panels.
    #[arg(long)]
    pub title: Option<String>,
    /// Line names, comma-separated, one per run in order (default: the
    /// `vehicle` column, the alog's vehicle, else the file name).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub labels: Vec<String>,
    /// An obstacle file (uFldObstacleSim's format, docs/obstacles.md): its
    /// polygons drawn grey under the tracks.
    #[arg(long, value_name = "FILE")]
    pub obstacles: Option<PathBuf>,
    /// A vehicle file whose `[wind]` and `[sea]` (docs/model.md §24) the
    /// track panel's legend names: mean wind speed and direction, Hs, Tp
    /// and the waves' direction, each with an arrow flying with it.
    #[arg(long, value_name = "CONFIG.toml")]
    pub env: Option<PathBuf>,
    /// Image format; default: from the extension of -o.
    #[arg(long, value_enum)]
    pub format: Option<PlotFormat>,
}

/// Image formats of `usim plot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlotFormat {
    /// Scalable vector graphics.
    Svg,
    /// PNG bitmap.
    Png,
}

fn format_of(explicit: Option<PlotFormat>, out: &Path) -> anyhow::Result<ImageFormat> {
    let f = match explicit {
        Some(f) => f,
        None => match out
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("svg") => PlotFormat::Svg,
            Some("png") => PlotFormat::Png,
            _ => anyhow::bail!(
                "cannot tell the image format of {}: name it .svg or .png, or give --format",
                out.display()
            ),
        },
    };
    Ok(match f {
        PlotFormat::Svg => ImageFormat::Svg,
        PlotFormat::Png => ImageFormat::Png,
    })
}

/// The polygons of obstacle file `path`; errors name the file, line and key.
fn load_obstacles(path: &Path) -> anyhow::Result<Vec<crate::obstacle::Polygon>> {
    let text = crate::input_file::read_text(path, crate::input_file::MAX_TEXT_BYTES)
        .with_context(|| format!("reading {}", path.display()))?;
    let field = crate::obstacle::parse(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: key `{}`: {}",
            path.display(),
            e.line,
            e.key,
            e.message
        )
    })?;
    Ok(field.obstacles.into_iter().map(|o| o.poly).collect())
}

/// The wind and sea of vehicle file `path` (errors name its line and
/// key); an error if neither table is on.
fn load_env(path: &Path) -> anyhow::Result<plot::EnvLegend> {
    let cfg = crate::config::load_vehicle(path)?;
    let env = cfg.params.env.as_deref();
    let legend = plot::EnvLegend {
        wind: env
            .and_then(|e| e.wind.as_ref())
            .map(|w| (w.settings.speed_mps, w.settings.direction_deg)),
        sea: env.and_then(|e| e.sea.as_ref()).map(|s| {
            let s = s.state();
            (s.hs_m, s.tp_s, s.direction_deg)
        }),
    };
    if legend.wind.is_none() && legend.sea.is_none() {
        anyhow::bail!("--env {}: no [wind] or [sea] table is on", path.display());
    }
    Ok(legend)
}

/// Read run CSVs; labels are the vehicle names (a `vehicle` column) or the
/// file stems. Errors name the file, line and column.
pub fn load_runs(paths: &[PathBuf]) -> anyhow::Result<Vec<Labelled>> {
    let mut out = Vec::new();
    for path in paths {
        let bytes = crate::input_file::read(path, crate::input_file::MAX_DATA_BYTES)?;
        let is_alog = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("alog"));
        let runs = if is_alog {
            let a = crate::alog::parse(&bytes)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            plot::alog_run::runs(&a).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        } else {
            plot::run_csv::parse(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        };
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for run in runs {
            let label = if run.vehicle.is_empty() {
                stem.clone()
            } else {
                run.vehicle.clone()
            };
            out.push(Labelled { label, run });
        }
    }
    Ok(out)
}

/// Run `usim plot`.
pub fn run(a: PlotArgs) -> anyhow::Result<ExitCode> {
    let format = format_of(a.format, &a.output)?;
    let panels = Panel::parse_list(&a.panels).map_err(|e| anyhow::anyhow!("--panels: {e}"))?;
    let mut runs = load_runs(&a.runs)?;
    if !a.labels.is_empty() {
        if a.labels.len() != runs.len() {
            anyhow::bail!(
                "--labels gives {} name{} for {} run{} ({})",
                a.labels.len(),
                if a.labels.len() == 1 { "" } else { "s" },
                runs.len(),
                if runs.len() == 1 { "" } else { "s" },
                runs.iter()
                    .map(|r| r.label.escape_debug().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for (r, l) in runs.iter_mut().zip(&a.labels) {
            r.label = l.clone();
        }
    }
    let drawn = plot::panels_for(&runs, &panels);
    if drawn.len() < panels.len() {
        eprintln!("usim: depth is 0 throughout: no depth panel");
    }
    let obstacles = match &a.obstacles {
        Some(path) => load_obstacles(path)?,
        None => Vec::new(),
    };
    let environment = match &a.env {
        Some(path) => load_env(path)?,
        None => plot::EnvLegend::default(),
    };
    let fig = Figure {
        panels: drawn,
        title: a.title,
        obstacles,
        environment,
    };
    let bytes = plot::render(&runs, &fig, format)
        .with_context(|| format!("drawing {}", a.output.display()))?;
    let mut tmp = crate::atomic_file::AtomicFile::create(&a.output)?;
    std::io::Write::write_all(tmp.file(), &bytes)
        .with_context(|| format!("writing {}", a.output.display()))?;
    tmp.commit()?;
    let rows: usize = runs.iter().map(|r| r.run.len()).sum();
    eprintln!(
        "usim: plotted {} run{} ({rows} rows) to {}",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        a.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
