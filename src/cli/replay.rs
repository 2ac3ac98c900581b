//! `usim replay MISSION [-o OUT.csv]`: run a mission on a virtual clock and
//! write the CSV (stdout without `-o`).
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

/// Arguments of `usim replay`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  usim replay missions/harbour_turns.toml -o turns.csv\n  usim replay missions/dive.toml | head\n  usim replay missions/lawnmower_pid.toml -o run.csv --posts posts.csv\n\nThe CSV columns are described in the README (docs/formats.md §3). The same mission always gives byte-identical CSV."
)]
pub struct ReplayArgs {
    /// Mission file (TOML with a `[mission]` table, a `[vehicle]` table or `mission.vehicle` path, and `[[post]]` entries).
    pub mission: PathBuf,
    /// Write the CSV here instead of stdout.
    #[arg(short, long, value_name = "OUT.csv")]
    pub output: Option<PathBuf>,
    /// Also write every publication the vehicle made (`k,t,var,type,value`) here.
    #[arg(long, value_name = "POSTS.csv")]
    pub posts: Option<PathBuf>,
    /// Do not print warnings, dropped messages or progress.
    #[arg(short, long)]
    pub quiet: bool,
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
    let mut posts_file = match &a.posts {
        Some(path) => Some(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => None,
    };
    let posts = posts_file.as_mut().map(|f| f as &mut dyn Write);
    let summary = match &a.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            crate::replay::run_with(&mission, file, posts, &mut progress, |_, _, _| {})
                .with_context(|| format!("writing {}", path.display()))?
        }
        None => {
            let stdout = std::io::stdout().lock();
            let s = crate::replay::run_with(&mission, stdout, posts, &mut progress, |_, _, _| {})?;
            std::io::stdout().flush()?;
            s
        }
    };
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
