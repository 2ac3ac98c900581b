//! `usim replay MISSION [-o OUT.csv|OUT.mcap]`: run a mission on a virtual
//! clock and write the CSV (stdout without `-o`) or an MCAP file
//! (docs/viewing.md).
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

/// Arguments of `usim replay`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  usim replay missions/harbour_turns.toml -o turns.csv\n  usim replay missions/dive.toml | head\n  usim replay missions/harbour_turns.toml -o turns.mcap   # for Foxglove, Rerun, PlotJuggler\n  usim replay missions/lawnmower_pid.toml -o run.csv --posts posts.csv\n\nThe CSV columns are described in the README (docs/formats.md §3). The same mission always gives byte-identical CSV."
)]
pub struct ReplayArgs {
    /// Mission file (TOML with a `[mission]` table, a `[vehicle]` table or `mission.vehicle` path, and `[[post]]` entries).
    pub mission: PathBuf,
    /// Write the CSV (or MCAP) here instead of stdout; written whole or not at all.
    #[arg(short, long, value_name = "OUT.csv|OUT.mcap")]
    pub output: Option<PathBuf>,
    /// Output format; default: from the extension of -o (.mcap = MCAP), else CSV.
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Also write every publication the vehicle made (`k,t,var,type,value`) here.
    #[arg(long, value_name = "POSTS.csv")]
    pub posts: Option<PathBuf>,
    /// Do not print warnings, dropped messages or progress.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Output formats of `usim replay` and `usim record`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Comma-separated values, one row per output step (README).
    Csv,
    /// MCAP with JSON messages (docs/viewing.md).
    Mcap,
}

impl OutputFormat {
    /// `explicit`, else from the extension of `path` (`.mcap`), else CSV.
    pub fn choose(explicit: Option<OutputFormat>, path: Option<&std::path::Path>) -> OutputFormat {
        explicit.unwrap_or_else(|| {
            match path.and_then(|p| p.extension()).and_then(|e| e.to_str()) {
                Some(e) if e.eq_ignore_ascii_case("mcap") => OutputFormat::Mcap,
                _ => OutputFormat::Csv,
            }
        })
    }
}

/// Run `usim replay`.
pub fn run(a: ReplayArgs) -> anyhow::Result<ExitCode> {
    let mission = crate::mission::load(&a.mission)?;
    if !a.quiet {
        for w in &mission.vehicle.warnings {
            eprintln!("usim: warning: {w}");
        }
    }
    let show_progress = !a.quiet && std::io::stderr().is_terminal() && mission.steps >= 100_000;
    let mut last_pct = u64::MAX;
    let mut progress = |k: u64, n: u64| {
        let pct = (k * 100).checked_div(n).unwrap_or(100);
        if show_progress && pct != last_pct {
            last_pct = pct;
            let bar = "#".repeat((pct / 4) as usize);
            eprint!("\r[{bar:<25}] {pct:3}% {k}/{n} steps");
            if k == n {
                eprintln!();
            }
        }
    };
    let format = OutputFormat::choose(a.format, a.output.as_deref());
    let mut posts_tmp = match &a.posts {
        Some(path) => Some(crate::atomic_file::AtomicFile::create(path)?),
        None => None,
    };
    let mut posts_writer = posts_tmp
        .as_mut()
        .map(|t| std::io::BufWriter::with_capacity(1 << 16, t.take()));
    let posts = posts_writer.as_mut().map(|w| w as &mut dyn Write);
    let summary = match &a.output {
        Some(path) => {
            let mut tmp = crate::atomic_file::AtomicFile::create(path)?;
            let file = tmp.take();
            let mut writer = std::io::BufWriter::with_capacity(1 << 16, file);
            let summary = match format {
                OutputFormat::Csv => crate::replay::run_with(
                    &mission,
                    &mut writer,
                    posts,
                    &mut progress,
                    |_, _, _| {},
                ),
                OutputFormat::Mcap => {
                    let log = crate::mcap_log::McapLog::new(&mut writer)?;
                    let out = crate::mcap_log::ReplayMcap {
                        log,
                        vehicle: mission.vehicle.name.clone(),
                        start_time: mission.start_time,
                    };
                    crate::replay::run_to_with(&mission, out, posts, &mut progress, |_, _, _| {})
                }
            }
            .with_context(|| format!("writing {}", path.display()))?;
            let file = writer
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(|| format!("writing {}", path.display()))?;
            tmp.commit_file(file)?;
            summary
        }
        None if format == OutputFormat::Mcap => {
            anyhow::bail!("MCAP output needs a file: -o OUT.mcap (it is not streamed to stdout)")
        }
        None => {
            let stdout = std::io::stdout().lock();
            let s = crate::replay::run_with(&mission, stdout, posts, &mut progress, |_, _, _| {})?;
            std::io::stdout().flush()?;
            s
        }
    };
    if let (Some(tmp), Some(w), Some(path)) = (posts_tmp, posts_writer, &a.posts) {
        let file = w
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {}", path.display()))?;
        tmp.commit_file(file)?;
    }
    if !a.quiet {
        for d in &summary.dropped {
            eprintln!(
                "usim: warning: {}:{}: {} (before iteration {})",
                a.mission.display(),
                d.line,
                d.reason,
                d.k
            );
        }
        if let Some(path) = &a.output {
            eprintln!("usim: wrote {} rows to {}", summary.rows, path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
