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
    after_help = "Examples:\n  usim replay missions/harbour_turns.toml -o turns.csv\n  usim replay missions/dive.toml | head\n  usim replay missions/harbour_turns.toml -o turns.mcap   # for Foxglove, Rerun, PlotJuggler\n  usim replay missions/harbour_turns.toml -o turns.mcap --ros2   # a ROS 2 bag (docs/ros2.md)\n  usim replay missions/lawnmower_pid.toml -o run.csv --posts posts.csv\n\nThe CSV columns are described in the README (docs/formats.md §3). The same mission always gives byte-identical CSV."
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
    /// Also write the run as NMEA 0183 and AIS here (docs/nmea.md): own-ship
    /// sentences for one vehicle, `!AIVDM` for the others; UTC from the
    /// mission's clock. Every vehicle needs a lat/lon origin.
    #[arg(long, value_name = "OUT.nmea")]
    pub nmea: Option<PathBuf>,
    /// Own ship of --nmea (default: the first vehicle of the mission).
    #[arg(long, value_name = "NAME", requires = "nmea")]
    pub nmea_own: Option<String>,
    /// With an MCAP output: write a ROS 2 bag instead of JSON (`ros2msg`
    /// schemas, CDR messages, on the topics a live usim has on ROS 2:
    /// /NAME/odom, /NAME/pose, /NAME/fix, /tf, /clock, /NAME/nav_x, ...;
    /// docs/ros2.md). Vehicle names must then be ROS names (letters, digits, `_`).
    #[arg(long)]
    pub ros2: bool,
    /// Do not print warnings, dropped messages or progress.
    #[arg(short, long)]
    pub quiet: bool,
    /// Run a replay estimated above 10^8 rows or above the free disk space
    /// of the output's directory (refused without it).
    #[arg(long)]
    pub allow_large: bool,
}

/// Bytes free for an unprivileged user on the file system of `dir`.
#[cfg(unix)]
fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid C string and a zeroed out-struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

#[cfg(not(unix))]
fn free_bytes(_: &std::path::Path) -> Option<u64> {
    None
}

/// `1.2 GB`-style size.
fn human(bytes: u64) -> String {
    let b = bytes as f64;
    match b {
        b if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.1} kB", b / 1e3),
        b => format!("{b} B"),
    }
}

/// `1h02m03s`-style duration.
fn hms(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "?".into();
    }
    let s = s.round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
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

/// The replay format of `format`, a ROS 2 bag for MCAP with `--ros2`.
fn replay_format(format: OutputFormat, ros2: bool) -> crate::replay::Format {
    match format {
        OutputFormat::Mcap if ros2 => crate::replay::Format::McapRos2,
        f => f.into(),
    }
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
    // For the estimate only: a bad -o is refused below with its reason.
    let est_format =
        OutputFormat::choose(a.format, a.output.as_deref()).unwrap_or(OutputFormat::Csv);
    let est = crate::replay::estimate(&mission, replay_format(est_format, a.ros2));
    if est.rows > crate::replay::MAX_ROWS && !a.allow_large {
        anyhow::bail!(
            "{}: this replay would write about {} rows (~{}), more than the limit of {} rows; \
             shorten duration/steps, raise output_every, or pass --allow-large",
            a.mission.display(),
            est.rows,
            human(est.bytes),
            crate::replay::MAX_ROWS
        );
    }
    if let Some(out) = &a.output {
        let dir = if out.is_dir() {
            out.clone()
        } else {
            match out.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            }
        };
        if let Some(free) = free_bytes(&dir) {
            if est.bytes > free && !a.allow_large {
                anyhow::bail!(
                    "{}: this replay would write about {} ({} rows) but {} has only {} free; \
                     pass --allow-large to try anyway",
                    a.mission.display(),
                    human(est.bytes),
                    est.rows,
                    dir.display(),
                    human(free)
                );
            }
        }
    }
    // A progress line on a terminal once the replay has run ~1 s: steps,
    // %, rows so far, rate and time left; nothing when not a terminal.
    let show_progress = !a.quiet && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let mut shown: Option<std::time::Instant> = None;
    let per_step_rows = est.rows as f64 / mission.steps.max(1) as f64;
    let mut progress = |k: u64, n: u64| {
        if !show_progress {
            return;
        }
        let el = started.elapsed().as_secs_f64();
        if k < n && (el < 1.0 || shown.is_some_and(|t| t.elapsed().as_secs_f64() < 0.25)) {
            return;
        }
        if k == n && shown.is_none() {
            return;
        }
        shown = Some(std::time::Instant::now());
        let pct = (k as f64 * 100.0 / n.max(1) as f64).min(100.0);
        let rate = k as f64 / el.max(1e-9);
        let eta = (n - k.min(n)) as f64 / rate.max(1e-9);
        eprint!(
            "\r\x1b[Kusim: {pct:5.1}% step {k}/{n}, ~{} rows, {:.0} steps/s, ETA {}",
            (k as f64 * per_step_rows) as u64,
            rate,
            hms(eta)
        );
        if k == n {
            eprintln!();
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
    if a.ros2 {
        if format != OutputFormat::Mcap || a.output.is_none() {
            anyhow::bail!("--ros2 writes a ROS 2 bag: it needs an MCAP file, -o OUT.mcap");
        }
        for i in 0..mission.vehicle_count() {
            let name = &mission.vehicle_at(i).name;
            if let Err(e) = crate::ros2::names::check_ros_name(name) {
                anyhow::bail!("--ros2: vehicle `{}`: {e}", name.escape_default());
            }
        }
    }
    let multi = mission.vehicle_count() > 1;
    let names: Vec<String> = (0..mission.vehicle_count())
        .map(|i| mission.vehicle_at(i).name.clone())
        .collect();
    if a.posts.is_some() {
        if let Some(name) = fast_v22_vehicle(&mission) {
            eprintln!(
                "usim: note: vehicle `{}` is V22 under math = \"fast\": its posted NAV_SPEED/GT_SPEED are snapped to 0.01 m/s and can differ from uSimMarineV22 by one step; set math = \"libm\" for bit-identical posts (docs/v22.md §17)",
                crate::text::escape_control(&name)
            );
        }
    }
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
            let out = crate::replay::csv::PerVehicleCsv::with_columns(
                writers.iter_mut().collect(),
                &mission.columns,
            )?;
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
            // The disk writes start as the file grows (Writeback), so the
            // final fsync has little left to wait for.
            let file = crate::atomic_file::Writeback::new(tmp.take());
            let mut writer = std::io::BufWriter::with_capacity(1 << 16, file);
            let summary = crate::replay::run_into_on(
                crate::replay::Threads::Two,
                &mission,
                replay_format(format, a.ros2),
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
            tmp.commit_file(file.into_inner())?;
            summary
        }
        None if format == OutputFormat::Alog => {
            let stdout = std::io::stdout().lock();
            let out = crate::replay::alog::ReplayAlog::new(stdout, &mission)?;
            let s = crate::replay::run_fleet(&mission, out, posts, &mut progress, &mut on_step)?;
            std::io::stdout().flush()?;
            s
        }
        None if format == OutputFormat::Mcap => {
            anyhow::bail!("MCAP output needs a file: -o OUT.mcap (it is not streamed to stdout)")
        }
        None if multi => {
            let stdout = std::io::stdout().lock();
            let out = crate::replay::csv::FleetCsvWriter::with_columns(
                stdout,
                names.clone(),
                &mission.columns,
            )?;
            let s = crate::replay::run_fleet(&mission, out, posts, &mut progress, &mut on_step)?;
            std::io::stdout().flush()?;
            s
        }
        None => {
            let stdout = std::io::stdout().lock();
            let out = crate::replay::csv::CsvWriter::with_columns(stdout, &mission.columns)?;
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
        if let Some(line) = obstacle_line(&mission, &summary) {
            eprintln!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `usim: obstacle hits: N` and the first hit (vehicle, obstacle, time),
/// when a vehicle of `mission` has obstacles (docs/obstacles.md §5).
fn obstacle_line(
    mission: &crate::mission::Mission,
    summary: &crate::replay::Summary,
) -> Option<String> {
    let n = mission.vehicle_count();
    if (0..n).all(|i| mission.vehicle_at(i).obstacles.is_none()) {
        return None;
    }
    let mut line = format!("usim: obstacle hits: {}", summary.obstacle_hit_count);
    if let Some(h) = summary.obstacle_hits.first() {
        line += &format!(
            " (first: {} met {} at t = {} s, iteration {})",
            mission.vehicle_at(h.vehicle).name,
            h.label,
            h.t,
            h.k
        );
    }
    Some(line)
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

/// The first V22 vehicle of the mission that runs `math = "fast"`: its
/// snapped publications can differ from the C++ by one snap step.
fn fast_v22_vehicle(mission: &crate::mission::Mission) -> Option<String> {
    use crate::model::{trig::MathMode, ModelVariant};
    (0..mission.vehicle_count())
        .map(|i| mission.vehicle_at(i))
        .find(|v| v.params.variant == ModelVariant::V22 && v.params.math == MathMode::Fast)
        .map(|v| v.name.clone())
}

/// The `--nmea` file being written: the engine, the vehicles' names and
/// clock, and the file.
struct NmeaLog {
    engine: crate::nmea::Engine,
    names: Vec<String>,
    /// Per vehicle: it has a `[sensors]` table (its sentences wait for
    /// the first reading instead of showing the true start state).
    sensors: Vec<bool>,
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
                crate::text::escape_control(o),
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
        let sensors = (0..n)
            .map(|i| mission.vehicle_at(i).params.sensors.is_some())
            .collect();
        Ok(NmeaLog {
            engine,
            names,
            sensors,
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
        for ((v, name), &sensors) in vehicles.iter().zip(&self.names).zip(&self.sensors) {
            let snap = v.snapshot();
            if sensors && snap.sensed.is_none() {
                continue;
            }
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
