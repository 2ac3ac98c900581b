//! `usim record`: live vehicles to CSV or MCAP (docs/viewing.md).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::live::ToolArgs;
use super::replay::OutputFormat;
use crate::mqtt::record::{self, RecordFormat, RecordOptions};

/// Arguments of `usim record`.
#[derive(Debug, clap::Args)]
#[command(
    group(clap::ArgGroup::new("which").args(["vehicles", "all", "recover"]).required(true)),
    after_help = "Examples:\n  usim record --all -o fleet.mcap                 # until Ctrl-C\n  usim record --vehicles kayak -o kayak.csv --duration 60\n  usim record --recover fleet.mcap                # after a crash or kill -9\n\nThe file is written at its name and flushed every 0.5 s: a recorder killed outright loses at most the last 0.5 s; --recover makes such a file whole (an MCAP gets its summary back, a CSV loses its cut last line).\n\nCSV: the replay's columns (plus `vehicle` first with --all or several vehicles).\nMCAP: the replay's channels, with every command posted to the vehicles.\nalog: MOOS's text log (docs/alog.md): each NODE_REPORT with the NAV_* it carries, and every command."
)]
pub struct RecordArgs {
    /// Vehicles to record, comma-separated.
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub vehicles: Vec<String>,
    /// Record every vehicle under the topic root.
    #[arg(long)]
    pub all: bool,
    /// Output: .csv, .mcap or .alog (written in place, flushed every 0.5 s); other extensions are refused.
    #[arg(
        short,
        long,
        value_name = "FILE.csv|FILE.mcap|FILE.alog",
        required_unless_present = "recover"
    )]
    pub output: Option<PathBuf>,
    /// Make a recording cut short by a kill or crash whole, in place: an
    /// MCAP keeps every complete chunk and gets its summary and footer; a
    /// CSV loses its cut last line. Nothing is recorded.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["vehicles", "all", "output", "duration"])]
    pub recover: Option<PathBuf>,
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
    if let Some(path) = &a.recover {
        return recover(path);
    }
    let Some(output) = a.output else {
        anyhow::bail!("-o FILE is required");
    };
    if a.vehicles.is_empty() && !a.all {
        anyhow::bail!("give --vehicles A,B or --all");
    }
    let duration = super::live::optional_seconds(a.duration, "--duration")?;
    let format = match OutputFormat::choose(a.format, Some(&output))? {
        OutputFormat::Csv => RecordFormat::Csv,
        OutputFormat::Mcap => RecordFormat::Mcap,
        OutputFormat::Alog => RecordFormat::Alog,
    };
    let opts = RecordOptions {
        conn: a.tool.connection()?,
        vehicles: (!a.all).then_some(a.vehicles),
        output,
        format,
        duration,
    };
    let rt = super::live::runtime()?;
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
        // Names come from topics on the broker: escaped (issue 20 item 24).
        eprintln!(
            "usim: {}: {} reports, {} commands{}",
            crate::text::escape_control(v),
            c.reports,
            c.commands,
            if c.bad > 0 {
                format!(", {} malformed reports dropped", c.bad)
            } else {
                String::new()
            }
        );
    }
    if summary.oversize > 0 {
        eprintln!(
            "usim: warning: {} messages larger than {} bytes skipped",
            summary.oversize,
            record::MAX_RECORDED_PAYLOAD
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

/// `usim record --recover FILE`: an MCAP (by its magic bytes, or a `.mcap`
/// name) is rewritten whole beside itself and renamed over; a CSV is cut
/// after its last complete line.
fn recover(path: &Path) -> anyhow::Result<ExitCode> {
    use std::io::{BufReader, BufWriter, Read};
    let name = path.display();
    let mut head = [0u8; 8];
    let n = crate::input_file::open(path, u64::MAX)?.read(&mut head)?;
    let is_mcap = head[..n] == mcap_magic()[..n.min(8)] && (n == 8 || is_mcap_name(path));
    if is_mcap {
        let input = BufReader::with_capacity(1 << 16, crate::input_file::open(path, u64::MAX)?);
        let mut tmp = crate::atomic_file::AtomicFile::create(path)?;
        let out = BufWriter::with_capacity(1 << 16, tmp.take());
        let (out, got) = crate::replay::mcap::recover(input, out)
            .with_context(|| format!("recovering {name}"))?;
        let file = out
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {name}"))?;
        tmp.commit_file(file)
            .with_context(|| format!("writing {name}"))?;
        eprintln!(
            "usim: {name}: {} messages in {} chunks kept{}; summary and footer written",
            got.messages,
            got.chunks,
            if got.whole {
                " (the file was whole)".to_string()
            } else if got.dropped_bytes > 0 {
                format!(
                    ", {} bytes of an unfinished chunk dropped",
                    got.dropped_bytes
                )
            } else {
                String::new()
            }
        );
    } else {
        let mut r = BufReader::with_capacity(1 << 16, crate::input_file::open(path, u64::MAX)?);
        let (mut pos, mut keep) = (0u64, 0u64);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let k = r.read(&mut buf)?;
            if k == 0 {
                break;
            }
            if let Some(i) = buf[..k].iter().rposition(|&b| b == b'\n') {
                keep = pos + i as u64 + 1;
            }
            pos += k as u64;
        }
        if keep < pos {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("opening {name} to cut its last line"))?;
            f.set_len(keep)
                .and_then(|_| f.sync_all())
                .with_context(|| format!("cutting {name}"))?;
            eprintln!(
                "usim: {name}: a cut last line of {} bytes dropped; {keep} bytes kept",
                pos - keep
            );
        } else {
            eprintln!("usim: {name}: whole ({keep} bytes, every line complete)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn mcap_magic() -> [u8; 8] {
    [0x89, b'M', b'C', b'A', b'P', 0x30, b'\r', b'\n']
}

fn is_mcap_name(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("mcap"))
}
