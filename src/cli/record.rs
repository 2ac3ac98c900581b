//! `usim record`: live vehicles to CSV or MCAP (docs/viewing.md).
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::live::ToolArgs;
use super::replay::OutputFormat;
use crate::mqtt::record::{self, RecordFormat, RecordOptions};

/// Arguments of `usim record`.
#[derive(Debug, clap::Args)]
#[command(
    group(clap::ArgGroup::new("which").required(true).args(["vehicles", "all"])),
    after_help = "Examples:\n  usim record --all -o fleet.mcap                 # until Ctrl-C\n  usim record --vehicles kayak -o kayak.csv --duration 60\n\nCSV: the replay's columns (plus `vehicle` first with --all or several vehicles).\nMCAP: the replay's channels, with every command posted to the vehicles.\nalog: MOOS's text log (docs/alog.md): each NODE_REPORT with the NAV_* it carries, and every command."
)]
pub struct RecordArgs {
    /// Vehicles to record, comma-separated.
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub vehicles: Vec<String>,
    /// Record every vehicle under the topic root.
    #[arg(long)]
    pub all: bool,
    /// Output: .csv, .mcap or .alog (written whole on exit); other extensions are refused.
    #[arg(short, long, value_name = "FILE.csv|FILE.mcap|FILE.alog")]
    pub output: PathBuf,
    /// Output format; default: from the extension of -o (.csv, .mcap, .alog).
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Stop after S seconds (default: on Ctrl-C).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    #[command(flatten)]
    pub tool: ToolArgs,
}

/// Run `usim record`.
pub fn run(a: RecordArgs) -> anyhow::Result<ExitCode> {
    let duration = match a.duration {
        Some(s) => Some(
            std::time::Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .with_context(|| {
                    format!("--duration must be a positive number of seconds, got {s}")
                })?,
        ),
        None => None,
    };
    let format = match OutputFormat::choose(a.format, Some(&a.output))? {
        OutputFormat::Csv => RecordFormat::Csv,
        OutputFormat::Mcap => RecordFormat::Mcap,
        OutputFormat::Alog => RecordFormat::Alog,
    };
    let opts = RecordOptions {
        conn: a.tool.connection()?,
        vehicles: (!a.all).then_some(a.vehicles),
        output: a.output,
        format,
        duration,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let which = match &opts.vehicles {
        Some(v) => v.join(", "),
        None => "every vehicle".to_string(),
    };
    let summary = rt.block_on(record::record(&opts, || {
        eprintln!(
            "usim: recording {which} from {} to {} ({})",
            opts.conn.url,
            opts.output.display(),
            match opts.duration {
                Some(d) => format!("{:.1} s", d.as_secs_f64()),
                None => "Ctrl-C stops".into(),
            }
        );
    }))?;
    let mut total = 0;
    for (v, c) in &summary.vehicles {
        total += c.reports + c.commands;
        eprintln!(
            "usim: {v}: {} reports, {} commands{}",
            c.reports,
            c.commands,
            if c.bad > 0 {
                format!(", {} malformed reports dropped", c.bad)
            } else {
                String::new()
            }
        );
    }
    if summary.ignored > 0 {
        eprintln!(
            "usim: warning: {} messages from vehicles beyond the first {} ignored",
            summary.ignored,
            record::MAX_VEHICLES
        );
    }
    eprintln!(
        "usim: wrote {total} messages from {} vehicle{} to {}",
        summary.vehicles.len(),
        if summary.vehicles.len() == 1 { "" } else { "s" },
        opts.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
