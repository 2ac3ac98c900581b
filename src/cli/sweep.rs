//! `usim sweep SWEEP.toml [--shard I/N] [-o SUMMARY.csv] [--runs-dir DIR
//! [--runs-format csv|mcap]]` and
//! `usim sweep merge PART.csv… -o SUMMARY.csv` (docs/sweeps.md).
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

/// Arguments of `usim sweep`.
#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  usim sweep missions/sweeps/crossing.toml -o summary.csv\n  usim sweep missions/sweeps/crossing.toml --shard 0/4 -o part0.csv   # one of 4 jobs\n  usim sweep merge part*.csv -o summary.csv\n  usim sweep missions/sweeps/crossing.toml -o summary.csv --runs-dir runs/   # also runs/run-000000.csv ...\n\nEvery run is a pure function of (seed, run index): the same seed gives a byte-identical summary, and merged shards equal the unsharded run. Slurm and Kubernetes: docs/sweeps.md."
)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub merge: Option<SweepCommand>,
    /// Sweep file (TOML: a `[sweep]` table naming the base mission, and `[[var]]` variables).
    pub sweep: Option<PathBuf>,
    /// Run only the I-th (0-based) of N equal slices of the runs, e.g. `--shard 0/4`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<crate::sweep::Shard>,
    /// Write the summary here instead of stdout; written whole or not at all.
    #[arg(short, long, value_name = "SUMMARY.csv")]
    pub output: Option<PathBuf>,
    /// Also write every run's replay into this directory (created if
    /// missing): `DIR/run-000123.csv` (or `.mcap`), exactly what `usim
    /// replay` writes for that run's mission, each file whole or not at
    /// all. With --shard, only that shard's runs. The summary is unchanged.
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// Format of the --runs-dir files.
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        default_value = "csv",
        requires = "runs_dir"
    )]
    pub runs_format: super::replay::OutputFormat,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Do not print the progress line.
    #[arg(short, long)]
    pub quiet: bool,
}

fn parse_shard(s: &str) -> Result<crate::sweep::Shard, String> {
    crate::sweep::Shard::parse(s)
}

/// `usim sweep merge`.
#[derive(Debug, clap::Subcommand)]
pub enum SweepCommand {
    /// Join shard summaries (same sweep, every shard) into one summary, in run order.
    Merge {
        /// The shards' summary files.
        #[arg(required = true)]
        parts: Vec<PathBuf>,
        /// Write the merged summary here instead of stdout.
        #[arg(short, long, value_name = "SUMMARY.csv")]
        output: Option<PathBuf>,
    },
}

fn write_out(path: Option<&PathBuf>, bytes: &[u8]) -> anyhow::Result<()> {
    match path {
        Some(p) => {
            let mut tmp = crate::atomic_file::AtomicFile::create(p)?;
            tmp.file()
                .write_all(bytes)
                .with_context(|| format!("writing {}", p.display()))?;
            tmp.commit()
                .with_context(|| format!("writing {}", p.display()))?;
        }
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(bytes)?;
            o.flush()?;
        }
    }
    Ok(())
}

/// Run `usim sweep`.
pub fn run(a: SweepArgs) -> anyhow::Result<ExitCode> {
    if let Some(SweepCommand::Merge { parts, output }) = a.merge {
        let mut texts = Vec::new();
        for p in &parts {
            let t =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            texts.push((p.display().to_string(), t));
        }
        let merged = crate::sweep::merge(&texts).map_err(|e| anyhow::anyhow!(e))?;
        write_out(output.as_ref(), merged.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(path) = a.sweep else {
        anyhow::bail!("usage: usim sweep SWEEP.toml [--shard I/N] [-o SUMMARY.csv] [--runs-dir DIR [--runs-format csv|mcap]] | usim sweep merge PART.csv...");
    };
    let sweep = crate::sweep::load(&path)?;
    let total = sweep.spec.total_runs();
    let range = a.shard.map_or(0..total, |s| s.range(total));
    let files = match &a.runs_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the directory {}", dir.display()))?;
            Some(crate::sweep::RunFiles {
                dir: dir.clone(),
                format: a.runs_format.into(),
            })
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let go = || {
        let mut buf = Vec::new();
        crate::sweep::run_with_files(&sweep, range.clone(), &mut buf, files.as_ref()).map(|_| buf)
    };
    let buf = match a.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .context("starting the worker threads")?
            .install(go),
        None => go(),
    }
    .context("running the sweep")?;
    write_out(a.output.as_ref(), &buf)?;
    if !a.quiet {
        eprintln!(
            "usim: {} runs ({}..{} of {total}) in {:.2} s",
            range.end - range.start,
            range.start,
            range.end,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}
