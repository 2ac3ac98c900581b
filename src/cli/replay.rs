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
    /// A directory (ending in `/` or existing) gets one CSV per vehicle, `NAME.csv`.
    /// `.alog` writes MOOS's alog (the posts and every publication, docs/alog.md);
    /// any other extension than .csv, .mcap, .alog is refused.
    #[arg(short, long, value_name = "OUT.csv|OUT.mcap|OUT.alog|DIR/")]
    pub output: Option<PathBuf>,
    /// Output format; default: from the extension of -o (.csv, .mcap, .alog), CSV on stdout.
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Also write every publication the vehicle made (`k,t,var,type,value`) here.
    #[arg(long, value_name = "POSTS.csv")]
    pub posts: Option<PathBuf>,
    /// Also write the encounters between vehicles (near miss, collision,
    /// clear; ranges from the mission's `near_miss` and `collision`) here.
    #[arg(long, value_name = "ENCOUNTERS.csv")]
    pub encounters: Option<PathBuf>,
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
    /// MOOS alog text log (docs/alog.md).
    Alog,
}

impl From<OutputFormat> for crate::replay::Format {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Csv => crate::replay::Format::Csv,
            OutputFormat::Mcap => crate::replay::Format::Mcap,
            OutputFormat::Alog => crate::replay::Format::Alog,
        }
    }
}

impl OutputFormat {
    /// `explicit`, else from the extension of `path` (`.csv`, `.mcap`,
    /// `.alog`), else CSV when there is no path (stdout). Any other
    /// extension is refused: the file would not be what its name says.
    pub fn choose(
        explicit: Option<OutputFormat>,
        path: Option<&std::path::Path>,
    ) -> anyhow::Result<OutputFormat> {
        if let Some(f) = explicit {
            return Ok(f);
        }
        let Some(path) = path else {
            return Ok(OutputFormat::Csv);
        };
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("csv") => Ok(OutputFormat::Csv),
            Some("mcap") => Ok(OutputFormat::Mcap),
            Some("alog") => Ok(OutputFormat::Alog),
            _ => anyhow::bail!(
                "cannot tell the output format of {}: name it .csv, .mcap or .alog, or give --format csv|mcap|alog",
                path.display().to_string().escape_debug()
            ),
        }
    }
}

/// Run `usim replay`.
pub fn run(a: ReplayArgs) -> anyhow::Result<ExitCode> {
    let mission = crate::mission::load(&a.mission)?;
    if !a.quiet {
        for i in 0..mission.vehicle_count() {
            for w in &mission.vehicle_at(i).warnings {
                eprintln!("usim: warning: {w}");
            }
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
    let to_dir = a
        .output
        .as_ref()
        .is_some_and(|p| p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/'));
    let format = if to_dir {
        a.format.unwrap_or(OutputFormat::Csv)
    } else {
        OutputFormat::choose(a.format, a.output.as_deref())?
    };
    if to_dir && format != OutputFormat::Csv {
        anyhow::bail!("-o DIR/ writes one CSV per vehicle; MCAP and alog need a file: -o OUT.mcap, -o OUT.alog");
    }
    let multi = mission.vehicle_count() > 1;
    let names: Vec<String> = (0..mission.vehicle_count())
        .map(|i| mission.vehicle_at(i).name.clone())
        .collect();
    let mut posts_tmp = match &a.posts {
        Some(path) => Some(crate::atomic_file::AtomicFile::create(path)?),
        None => None,
    };
    let mut posts_writer = posts_tmp
        .as_mut()
        .map(|t| std::io::BufWriter::with_capacity(1 << 16, t.take()));
    let posts = posts_writer.as_mut().map(|w| w as &mut dyn Write);
    let mut enc = match &a.encounters {
        Some(path) => {
            let Some(ranges) = mission.encounters else {
                anyhow::bail!(
                    "--encounters needs encounter ranges: set near_miss (and collision), m, in the [mission] table of {}",
                    a.mission.display()
                );
            };
            let mut tmp = crate::atomic_file::AtomicFile::create(path)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 16, tmp.take());
            writeln!(w, "{}", crate::encounter::CSV_HEADER)?;
            Some(EncounterLog {
                tracker: crate::encounter::Tracker::new(ranges),
                tmp,
                w,
                line: Vec::new(),
                error: None,
                names: names.clone(),
            })
        }
        None => None,
    };
    let mut on_step = |_k: u64, t: f64, vs: &[crate::model::Vehicle]| {
        if let Some(e) = enc.as_mut() {
            e.observe(t, vs);
        }
    };
    let summary = match &a.output {
        Some(dir) if to_dir => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the directory {}", dir.display()))?;
            let mut tmps = Vec::new();
            let mut writers = Vec::new();
            for name in &names {
                let path = dir.join(format!("{name}.csv"));
                let mut tmp = crate::atomic_file::AtomicFile::create(&path)?;
                writers.push(std::io::BufWriter::with_capacity(1 << 16, tmp.take()));
                tmps.push((tmp, path));
            }
            let out = crate::replay::csv::PerVehicleCsv::new(writers.iter_mut().collect())?;
            let summary =
                crate::replay::run_fleet(&mission, out, posts, &mut progress, &mut on_step)
                    .with_context(|| format!("writing into {}", dir.display()))?;
            for ((tmp, path), w) in tmps.into_iter().zip(writers) {
                let file = w
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .with_context(|| format!("writing {}", path.display()))?;
                tmp.commit_file(file)?;
            }
            summary
        }
        Some(path) => {
            let mut tmp = crate::atomic_file::AtomicFile::create(path)?;
            let file = tmp.take();
            let mut writer = std::io::BufWriter::with_capacity(1 << 16, file);
            let summary = crate::replay::run_into(
                &mission,
                format.into(),
                &mut writer,
                posts,
                &mut progress,
                &mut on_step,
            )
            .with_context(|| format!("writing {}", path.display()))?;
            let file = writer
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(|| format!("writing {}", path.display()))?;
            tmp.commit_file(file)?;
            summary
        }
        None if format == OutputFormat::Alog => {
            let stdout = std::io::stdout().lock();
            let out = crate::alog::ReplayAlog::new(stdout, &mission)?;
            let s = crate::replay::run_fleet(&mission, out, posts, &mut progress, &mut on_step)?;
            std::io::stdout().flush()?;
            s
        }
        None if format == OutputFormat::Mcap => {
            anyhow::bail!("MCAP output needs a file: -o OUT.mcap (it is not streamed to stdout)")
        }
        None if multi => {
            let stdout = std::io::stdout().lock();
            let out = crate::replay::csv::FleetCsvWriter::new(stdout, names.clone())?;
            let s = crate::replay::run_fleet(&mission, out, posts, &mut progress, &mut on_step)?;
            std::io::stdout().flush()?;
            s
        }
        None => {
            let stdout = std::io::stdout().lock();
            let out = crate::replay::csv::CsvWriter::new(stdout)?;
            let s = crate::replay::run_fleet(&mission, out, posts, &mut progress, &mut on_step)?;
            std::io::stdout().flush()?;
            s
        }
    };
    if let (Some(e), Some(path)) = (enc, &a.encounters) {
        e.commit()
            .with_context(|| format!("writing {}", path.display()))?;
    }
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
        match &a.output {
            Some(path) if format == OutputFormat::Alog => {
                eprintln!(
                    "usim: wrote the posts and publications as alog to {}",
                    path.display()
                )
            }
            Some(path) => eprintln!("usim: wrote {} rows to {}", summary.rows, path.display()),
            None => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--encounters` file being written: the tracker and the file.
struct EncounterLog {
    tracker: crate::encounter::Tracker,
    tmp: crate::atomic_file::AtomicFile,
    w: std::io::BufWriter<std::fs::File>,
    line: Vec<u8>,
    error: Option<std::io::Error>,
    names: Vec<String>,
}

impl EncounterLog {
    fn observe(&mut self, t: f64, vehicles: &[crate::model::Vehicle]) {
        let (line, w, error, names) = (&mut self.line, &mut self.w, &mut self.error, &self.names);
        crate::encounter::observe_fleet(&mut self.tracker, t, vehicles, |e| {
            line.clear();
            crate::encounter::push_csv(line, &e, names);
            if error.is_none() {
                if let Err(err) = w.write_all(line) {
                    *error = Some(err);
                }
            }
        });
    }

    fn commit(self) -> std::io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let file = self.w.into_inner().map_err(|e| e.into_error())?;
        self.tmp.commit_file(file)
    }
}
