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
    #[arg(short, long, value_name = "OUT.csv|OUT.mcap|DIR/")]
    pub output: Option<PathBuf>,
    /// Output format; default: from the extension of -o (.mcap = MCAP), else CSV.
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Also write every publication the vehicle made (`k,t,var,type,value`) here.
    #[arg(long, value_name = "POSTS.csv")]
    pub posts: Option<PathBuf>,
    /// Also write the encounters between vehicles (near miss, collision,
    /// clear; ranges from the mission's `near_miss` and `collision`) here.
    #[arg(long, value_name = "ENCOUNTERS.csv")]
    pub encounters: Option<PathBuf>,
    /// Also write the run as NMEA 0183 and AIS here (docs/nmea.md): own-ship
    /// sentences for one vehicle, `!AIVDM` for the others; UTC from the
    /// mission's clock. Every vehicle needs a lat/lon origin.
    #[arg(long, value_name = "OUT.nmea")]
    pub nmea: Option<PathBuf>,
    /// Own ship of --nmea (default: the first vehicle of the mission).
    #[arg(long, value_name = "NAME", requires = "nmea")]
    pub nmea_own: Option<String>,
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

impl From<OutputFormat> for crate::replay::Format {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Csv => crate::replay::Format::Csv,
            OutputFormat::Mcap => crate::replay::Format::Mcap,
        }
    }
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
    let format = OutputFormat::choose(a.format, a.output.as_deref());
    let to_dir = a
        .output
        .as_ref()
        .is_some_and(|p| p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/'));
    if to_dir && format == OutputFormat::Mcap {
        anyhow::bail!("-o DIR/ writes one CSV per vehicle; MCAP needs a file: -o OUT.mcap");
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
    let mut nmea = match &a.nmea {
        Some(path) => Some(NmeaLog::new(&mission, path, a.nmea_own.as_deref())?),
        None => None,
    };
    let mut on_step = |_k: u64, t: f64, vs: &[crate::model::Vehicle]| {
        if let Some(e) = enc.as_mut() {
            e.observe(t, vs);
        }
        if let Some(n) = nmea.as_mut() {
            n.observe(vs);
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
    if let (Some(n), Some(path)) = (nmea, &a.nmea) {
        let lines = n
            .commit()
            .with_context(|| format!("writing {}", path.display()))?;
        if !a.quiet {
            eprintln!("usim: wrote {lines} NMEA/AIS lines to {}", path.display());
        }
    }
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
        if let Some(path) = &a.output {
            eprintln!("usim: wrote {} rows to {}", summary.rows, path.display());
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

/// The `--nmea` file being written: the engine, the vehicles' names and
/// clock, and the file.
struct NmeaLog {
    engine: crate::nmea::Engine,
    names: Vec<String>,
    start_time: f64,
    tmp: crate::atomic_file::AtomicFile,
    w: std::io::BufWriter<std::fs::File>,
    buf: Vec<u8>,
    lines: u64,
    error: Option<std::io::Error>,
}

impl NmeaLog {
    fn new(
        mission: &crate::mission::Mission,
        path: &std::path::Path,
        own: Option<&str>,
    ) -> anyhow::Result<NmeaLog> {
        let n = mission.vehicle_count();
        let names: Vec<String> = (0..n).map(|i| mission.vehicle_at(i).name.clone()).collect();
        let own = match own {
            Some(o) if names.iter().any(|n| n == o) => o.to_string(),
            Some(o) => anyhow::bail!(
                "--nmea-own {:?}: no such vehicle in the mission (it has {})",
                crate::mqtt::escape_control(o),
                names.join(", ")
            ),
            None => names[0].clone(),
        };
        let mut engine = crate::nmea::Engine::new(crate::nmea::Options::default(), Some(own));
        for i in 0..n {
            let cfg = mission.vehicle_at(i);
            if cfg.params.origin.is_none() {
                anyhow::bail!(
                    "--nmea: vehicle {} has no lat/lon origin, so no position to send: set \
                     lat_origin and lon_origin in its config (docs/nmea.md)",
                    cfg.name
                );
            }
            engine.set_identity(crate::nmea::Identity::of_config(cfg));
        }
        let mut tmp = crate::atomic_file::AtomicFile::create(path)?;
        let w = std::io::BufWriter::with_capacity(1 << 16, tmp.take());
        Ok(NmeaLog {
            engine,
            names,
            start_time: mission.start_time,
            tmp,
            w,
            buf: Vec::with_capacity(4096),
            lines: 0,
            error: None,
        })
    }

    fn observe(&mut self, vehicles: &[crate::model::Vehicle]) {
        self.buf.clear();
        for (v, name) in vehicles.iter().zip(&self.names) {
            let snap = v.snapshot();
            let s = crate::nmea::ShipState::from_snapshot(&snap, self.start_time + snap.t);
            // The origin was checked up front; a refusal here sends nothing.
            if let Ok(n) = self.engine.update(name, &s, &mut self.buf) {
                self.lines += n as u64;
            }
        }
        if self.error.is_none() && !self.buf.is_empty() {
            if let Err(e) = self.w.write_all(&self.buf) {
                self.error = Some(e);
            }
        }
    }

    fn commit(self) -> std::io::Result<u64> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let file = self.w.into_inner().map_err(|e| e.into_error())?;
        self.tmp.commit_file(file)?;
        Ok(self.lines)
    }
}
