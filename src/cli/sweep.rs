//! `usim sweep SWEEP.toml [--shard I/N] [-o SUMMARY.csv] [--runs-dir DIR
//! [--runs-format csv|mcap]]` and
//! `usim sweep merge PART.csv… -o SUMMARY.csv` (docs/sweeps.md).
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
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
    /// Write the summary here instead of stdout: streamed to
    /// `SUMMARY.csv.partial` and renamed when complete (Ctrl-C keeps the
    /// finished rows there for --resume). Checked writable before any run.
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
    /// Keep the finished rows of an interrupted run (`-o FILE` streams
    /// them to `FILE.partial`) and run only the rest; the partial file is
    /// checked to be this sweep's (header, run order, and its first and
    /// last rows recomputed).
    #[arg(long, requires = "output")]
    pub resume: bool,
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

/// Set by SIGINT/SIGTERM: runs not yet started are skipped, the finished
/// rows are kept. A second signal exits at once.
static STOP: crate::sweep::Stop = crate::sweep::Stop::new(false);

#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    if STOP.swap(true, std::sync::atomic::Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) }
    }
}

fn catch_signals() {
    #[cfg(unix)]
    // SAFETY: the handler only touches an atomic and calls _exit.
    unsafe {
        let h = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, h);
        libc::signal(libc::SIGTERM, h);
    }
}

/// `-o FILE` is written as `FILE.partial` and renamed when complete.
fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    out.with_file_name(name)
}

/// The finished rows of a `.partial` that belong to this sweep.
struct Kept {
    rows: u64,
    bytes: u64,
    hash: crate::sweep::Fnv,
}

/// Check a `.partial` for `--resume`: the header of this sweep, rows in run
/// order from the start of `range`, and its first and last rows equal to
/// this sweep's (recomputed: same seed, sweep file and mission). A last
/// line cut short by the interruption is dropped.
fn check_partial(
    path: &Path,
    sweep: &crate::sweep::Sweep,
    range: &std::ops::Range<u64>,
) -> anyhow::Result<Kept> {
    let name = path.display();
    let mut r = BufReader::new(crate::input_file::open(path, u64::MAX)?);
    let not_ours = |why: String| {
        anyhow::anyhow!(
            "{name}: {why}: not the partial summary of this sweep; remove it or run without --resume"
        )
    };
    let mut line = Vec::new();
    let mut hash = crate::sweep::Fnv::default();
    let n = r.read_until(b'\n', &mut line)?;
    if line != format!("{}\n", sweep.header()).as_bytes() {
        return Err(not_ours("its header differs".into()));
    }
    hash.update(&line);
    let mut bytes = n as u64;
    let mut rows = 0u64;
    let (mut first, mut last) = (None, None);
    while rows < range.end - range.start {
        line.clear();
        let n = r.read_until(b'\n', &mut line)?;
        if n == 0 || !line.ends_with(b"\n") {
            break;
        }
        let want = range.start + rows;
        let run = std::str::from_utf8(&line)
            .ok()
            .and_then(|l| l.split(',').next())
            .and_then(|r| r.parse::<u64>().ok());
        if run != Some(want) {
            return Err(not_ours(format!(
                "line {}: expected run {want} (another --shard?)",
                rows + 2
            )));
        }
        hash.update(&line);
        if first.is_none() {
            first = Some((want, line.clone()));
        }
        last = Some((want, line.clone()));
        bytes += n as u64;
        rows += 1;
    }
    for (run, text) in [first, last].into_iter().flatten() {
        if sweep.run_one(run)?.as_bytes() != text.as_slice() {
            return Err(not_ours(format!(
                "run {run} differs from this sweep's (another seed, sweep file or mission?)"
            )));
        }
    }
    Ok(Kept { rows, bytes, hash })
}

/// Where the summary goes: `FILE.partial` (renamed to FILE when complete)
/// or stdout.
enum Out {
    File {
        w: crate::sweep::Hashing<BufWriter<File>>,
        partial: PathBuf,
        target: PathBuf,
    },
    Stdout(crate::sweep::Hashing<BufWriter<std::io::Stdout>>),
}

impl Out {
    fn w(&mut self) -> &mut dyn Write {
        match self {
            Out::File { w, .. } => w,
            Out::Stdout(w) => w,
        }
    }
    fn hash(&self) -> u64 {
        match self {
            Out::File { w, .. } => w.hash.0,
            Out::Stdout(w) => w.hash.0,
        }
    }
}

/// Open the summary before any run (an unwritable `-o` is refused now, not
/// at the end) and, with `--resume`, keep the finished rows of its
/// `.partial`. Returns the output and the rows already done.
fn open_summary(
    a: &SweepArgs,
    sweep: &crate::sweep::Sweep,
    range: &std::ops::Range<u64>,
) -> anyhow::Result<(Out, u64)> {
    let Some(target) = &a.output else {
        if a.resume {
            anyhow::bail!("--resume needs -o FILE (the finished rows are kept in FILE.partial)");
        }
        let mut w = crate::sweep::Hashing {
            inner: BufWriter::new(std::io::stdout()),
            hash: Default::default(),
        };
        writeln!(w, "{}", sweep.header())?;
        return Ok((Out::Stdout(w), 0));
    };
    if target.is_dir() {
        anyhow::bail!("-o {}: is a directory", target.display());
    }
    let partial = partial_path(target);
    let kept = if a.resume && partial.exists() {
        Some(check_partial(&partial, sweep, range)?)
    } else {
        None
    };
    let cannot = |e: std::io::Error| {
        anyhow::anyhow!(
            "cannot write the summary {} (as {} until complete): {e}",
            target.display(),
            partial.display()
        )
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(kept.is_none())
        .open(&partial)
        .map_err(cannot)?;
    let (done, hash) = match kept {
        Some(k) => {
            file.set_len(k.bytes).map_err(cannot)?;
            file.seek(SeekFrom::End(0)).map_err(cannot)?;
            (k.rows, k.hash)
        }
        None => (0, Default::default()),
    };
    let mut w = crate::sweep::Hashing {
        inner: BufWriter::with_capacity(1 << 16, file),
        hash,
    };
    if done == 0 && w.hash == crate::sweep::Fnv::default() {
        writeln!(w, "{}", sweep.header()).map_err(cannot)?;
        w.flush().map_err(cannot)?;
    }
    Ok((
        Out::File {
            w,
            partial,
            target: target.clone(),
        },
        done,
    ))
}

/// Run `usim sweep`.
pub fn run(a: SweepArgs) -> anyhow::Result<ExitCode> {
    if let Some(SweepCommand::Merge { parts, output }) = a.merge {
        let mut texts = Vec::new();
        for p in &parts {
            let t = crate::input_file::read_text(p, crate::input_file::MAX_DATA_BYTES)?;
            texts.push((p.display().to_string(), t));
        }
        let merged = crate::sweep::merge(&texts).map_err(|e| anyhow::anyhow!(e))?;
        write_out(output.as_ref(), merged.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(path) = a.sweep.clone() else {
        anyhow::bail!("usage: usim sweep SWEEP.toml [--shard I/N] [-o SUMMARY.csv [--resume]] [--runs-dir DIR [--runs-format csv|mcap]] | usim sweep merge PART.csv...");
    };
    let sweep = crate::sweep::load(&path)?;
    let total = sweep.spec.total_runs();
    let range = a.shard.map_or(0..total, |s| s.range(total));
    let (mut out, done) = open_summary(&a, &sweep, &range)?;
    if done > 0 && !a.quiet {
        eprintln!(
            "usim: resuming: {done} finished runs kept, {} to go",
            range.end - range.start - done
        );
    }
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
    catch_signals();
    let started = std::time::Instant::now();
    let todo = range.start + done..range.end;
    let go = |w: &mut dyn Write| {
        crate::sweep::stream_rows(&sweep, todo.clone(), w, files.as_ref(), &STOP)
    };
    let written = match a.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .context("starting the worker threads")?
            .install(|| go(out.w())),
        None => go(out.w()),
    };
    let written = match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        r => r.context("running the sweep")?,
    };
    if written < todo.end - todo.start {
        out.w().flush()?;
        let kept = done + written;
        match &out {
            Out::File { partial, .. } => eprintln!(
                "usim: interrupted: {kept} of {} runs finished and kept in {}; the same command with --resume runs the rest",
                range.end - range.start,
                partial.display()
            ),
            Out::Stdout(_) => eprintln!(
                "usim: interrupted after {kept} of {} runs",
                range.end - range.start
            ),
        }
        return Ok(ExitCode::from(130));
    }
    if let Some(shard) = a.shard {
        let end = crate::sweep::PartEnd {
            spec: sweep.hash,
            seed: sweep.spec.seed,
            shard,
            total,
            rows: range.end - range.start,
            fnv: out.hash(),
        };
        writeln!(out.w(), "{}", end.line())?;
    }
    match out {
        Out::File { w, partial, target } => {
            let file = w
                .inner
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(|| format!("writing {}", partial.display()))?;
            file.sync_all()
                .with_context(|| format!("writing {}", partial.display()))?;
            std::fs::rename(&partial, &target).with_context(|| {
                format!("renaming {} to {}", partial.display(), target.display())
            })?;
        }
        Out::Stdout(mut w) => match w.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r?,
        },
    }
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
