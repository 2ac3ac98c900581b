//! `usim profile`: time-optimal jerk-limited (double S) profiles from the
//! command line (docs/formats.md §6).
//!
//! * `--batch CASES.csv [--at t1,t2,...]`: one motion per row; the rows are
//!   written back with a `duration` column (and `p@t,v@t,a@t` columns).
//! * single motion from flags: the duration, or with `--dt` the setpoints
//!   `t,p,v,a,j` over the whole motion (the notes' "simulation mode").
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};

use crate::interp::jerk_profile::{plan, Limits, State};

const AFTER_HELP: &str = "\
Units: positions u, velocities u/s, accelerations u/s², jerks u/s³, times s.
The start may break the limits (it is braked back first); the target velocity
and acceleration must lie inside them.

Examples:
  usim profile --pf 5.0625 --vmax 10 --amax 4.5 --jmax 6          # prints 3
  usim profile --p0 0 --v0 1 --pf 2 --vmax 2 --amax 1 --jmax 1 --dt 0.1
  usim profile --batch cases.csv --at 0.5,1,2 > out.csv

Batch CSV header (any column order, extra columns are copied through):
  p0,v0,a0,pf,vf,af,vmax,amax,jmax
Output: the same rows plus `duration` and, for each --at time t as written,
`p@t,v@t,a@t` (past the end, the target state moving on at its velocity and
acceleration).";

/// Arguments of `usim profile`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ProfileArgs {
    /// Read motions from this CSV (header p0,v0,a0,pf,vf,af,vmax,amax,jmax)
    /// and write them back with their minimal duration.
    #[arg(long, value_name = "CASES.csv", conflicts_with = "dt")]
    pub batch: Option<PathBuf>,
    /// With --batch: add the state p@t,v@t,a@t at these times (s).
    #[arg(long, value_name = "t1,t2,...", requires = "batch")]
    pub at: Option<String>,
    /// Start position, u.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub p0: f64,
    /// Start velocity, u/s.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub v0: f64,
    /// Start acceleration, u/s².
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub a0: f64,
    /// Target position, u.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub pf: f64,
    /// Target velocity, u/s.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub vf: f64,
    /// Target acceleration, u/s².
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub af: f64,
    /// Velocity limit |v| <= vmax, u/s (single motion).
    #[arg(long, required_unless_present = "batch")]
    pub vmax: Option<f64>,
    /// Acceleration limit |a| <= amax, u/s² (single motion).
    #[arg(long, required_unless_present = "batch")]
    pub amax: Option<f64>,
    /// Jerk limit |j| <= jmax, u/s³ (single motion).
    #[arg(long, required_unless_present = "batch")]
    pub jmax: Option<f64>,
    /// Print the setpoints t,p,v,a,j every DT seconds over the whole motion
    /// (plus the end) instead of the duration.
    #[arg(long, value_name = "DT")]
    pub dt: Option<f64>,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Run `usim profile`.
pub fn run(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    let mut out: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    match &args.batch {
        Some(path) => {
            let at = match &args.at {
                Some(s) => parse_times(s)?,
                None => Vec::new(),
            };
            let file = crate::input_file::open(path, crate::input_file::MAX_STREAM_BYTES)?;
            batch(path, file, &at, &mut out)?;
        }
        None => single(&args, &mut out)?,
    }
    match out.flush() {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        r => r.context("cannot write output")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `--at` times, each kept as written for the column names.
fn parse_times(s: &str) -> anyhow::Result<Vec<(String, f64)>> {
    let mut v = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        let t: f64 = item
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite())
            .with_context(|| format!("--at: '{item}' is not a finite time in seconds"))?;
        v.push((item.to_string(), t));
    }
    Ok(v)
}

const COLUMNS: [&str; 9] = ["p0", "v0", "a0", "pf", "vf", "af", "vmax", "amax", "jmax"];

/// The batch mode on any reader (`path` names it in errors): a CSV with the
/// columns p0,v0,a0,pf,vf,af,vmax,amax,jmax in, one profile per row out.
pub fn batch(
    path: &Path,
    input: impl io::Read,
    at: &[(String, f64)],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let name = path.display();
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(false)
        .from_reader(input);
    let header = rdr
        .headers()
        .with_context(|| format!("{name}:1: cannot read the CSV header"))?
        .clone();
    let mut idx = [0usize; 9];
    for (k, col) in COLUMNS.iter().enumerate() {
        idx[k] = header.iter().position(|h| h == *col).with_context(|| {
            format!(
                "{name}:1: missing column '{col}' (the header needs {})",
                COLUMNS.join(",")
            )
        })?;
    }
    let mut head: Vec<String> = header.iter().map(str::to_string).collect();
    head.push("duration".into());
    for (t, _) in at {
        head.extend([format!("p@{t}"), format!("v@{t}"), format!("a@{t}")]);
    }
    writeln!(out, "{}", head.join(","))?;
    for rec in rdr.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            anyhow::anyhow!("{name}:{line}: {e}")
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        let mut x = [0.0f64; 9];
        for k in 0..9 {
            let field = rec.get(idx[k]).unwrap_or("");
            x[k] = match field.parse::<f64>() {
                Ok(v) => v,
                Err(_) => bail!(
                    "{name}:{line}: column {}: '{field}' is not a number",
                    COLUMNS[k]
                ),
            };
        }
        let prof = Limits::symmetric(x[6], x[7], x[8])
            .and_then(|l| {
                plan(
                    State::new(x[0], x[1], x[2]),
                    State::new(x[3], x[4], x[5]),
                    &l,
                )
            })
            .map_err(|e| anyhow::anyhow!("{name}:{line}: {e}"))?;
        let mut row: Vec<String> = rec.iter().map(str::to_string).collect();
        row.push(prof.duration().to_string());
        for (_, t) in at {
            let s = prof.at(*t);
            row.extend([s.p.to_string(), s.v.to_string(), s.a.to_string()]);
        }
        writeln!(out, "{}", row.join(","))?;
    }
    Ok(())
}

fn single(args: &ProfileArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let (Some(vmax), Some(amax), Some(jmax)) = (args.vmax, args.amax, args.jmax) else {
        bail!("a single motion needs --vmax, --amax and --jmax (or use --batch)");
    };
    let limits = Limits::symmetric(vmax, amax, jmax)?;
    let prof = plan(
        State::new(args.p0, args.v0, args.a0),
        State::new(args.pf, args.vf, args.af),
        &limits,
    )?;
    match args.dt {
        None => writeln!(out, "{}", prof.duration())?,
        Some(dt) => {
            let sps = prof.setpoints(dt)?;
            writeln!(out, "t,p,v,a,j")?;
            for (t, s) in sps {
                writeln!(out, "{t},{},{},{},{}", s.p, s.v, s.a, s.j)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_reports_bad_line() {
        let csv = "p0,v0,a0,pf,vf,af,vmax,amax,jmax\n0,0,0,1,0,0,1,1,1\n0,0,0,x,0,0,1,1,1\n";
        let mut out = Vec::new();
        let e = batch(Path::new("c.csv"), csv.as_bytes(), &[], &mut out).unwrap_err();
        assert_eq!(e.to_string(), "c.csv:3: column pf: 'x' is not a number");
    }

    #[test]
    fn at_times_keep_their_spelling() {
        let t = parse_times("0.10,1").expect("times");
        assert_eq!(t[0].0, "0.10");
        assert!(parse_times("1,abc").is_err());
    }
}
