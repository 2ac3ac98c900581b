//! `usim interp`: preview a timed-command script (docs/formats.md §5).
//!
//! Reads the script, then for every cycle `t = C, 2C, … <= U` applies the
//! calls received at or before `t` and runs one actuator's interpolator at
//! `t`, printing `t,value` as CSV.
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use serde_json::Value;

use crate::interp::timed_commands::{
    parse_commands, seconds_to_us, us_to_seconds, TimedCommand, TimedCommands, UpdateKind,
};

/// What `usim interp --help` prints after the options. (The one-line summary
/// comes from the subcommand's doc comment in `cli/mod.rs`.)
const HELP: &str = "\
Runs one actuator's timed-command interpolator every cycle and prints its value
as CSV `t,value`, one row per cycle t = C, 2C, ... <= U.

SCRIPT has one JSON object per line: a `set` call and the time `at` (s) it is
received:

  {\"at\": 0.03, \"update\": \"Merge\", \"commands\": [[40.0, 0.08]]}

`update` is Merge, ClearAll, ClearAfter or ClearBefore. Each command is
[value, time] or [value, time, importance] (importance is ignored). A number
time is the clock in seconds; a string \"+2.5\" is 2.5 s after `at`. A call
received at `at` is applied before the cycle that runs at `at`; calls are
taken in order of `at` (file order for equal `at`). Blank lines and lines
starting with # are skipped.

The interpolator starts at --initial with a virtual cycle at t = 0. Times are
kept as integer microseconds. `value` is the double-precision value
(lastCommandDouble), written so that it reads back to the same f64; --rounded
prints the rounded sendCommand instead.

Example (the seed's second worked example, docs/timed_commands.md):
  usim interp missions/interp/seed_example_2.jsonl --cycle 0.01 --until 0.08";

/// Arguments of `usim interp`.
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct InterpArgs {
    /// The script: one JSON object per line (`-` reads standard input).
    #[arg(value_name = "SCRIPT")]
    pub script: PathBuf,
    /// Cycle period, s (> 0; rounded to the microsecond).
    #[arg(long, value_name = "C")]
    pub cycle: f64,
    /// Last cycle time, s: cycles run at C, 2C, ... while <= U.
    #[arg(long, value_name = "U")]
    pub until: f64,
    /// Value before any command (the actuator's unit).
    #[arg(
        long,
        value_name = "V",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub initial: f64,
    /// Print sendCommand (the value rounded to the nearest integer, halves
    /// away from zero) instead of the double value.
    #[arg(long)]
    pub rounded: bool,
}

/// One line of the script: a `set` call received at `at_us`.
#[derive(Debug, Clone, PartialEq)]
struct ScriptCall {
    at_us: i64,
    update: UpdateKind,
    commands: Vec<TimedCommand>,
}

/// Run `usim interp`.
pub fn run(args: InterpArgs) -> anyhow::Result<ExitCode> {
    let cycle_us = seconds_to_us(args.cycle)
        .filter(|&c| c > 0)
        .with_context(|| {
            format!(
                "--cycle {}: must be a positive number of seconds (at least 1e-6)",
                args.cycle
            )
        })?;
    let until_us = seconds_to_us(args.until)
        .with_context(|| format!("--until {}: must be a finite number of seconds", args.until))?;
    if !args.initial.is_finite() {
        bail!("--initial {}: must be a finite number", args.initial);
    }
    let name = args.script.display().to_string();
    let text = if args.script.as_os_str() == "-" {
        let mut s = String::new();
        io::stdin()
            .take(crate::input_file::MAX_TEXT_BYTES + 1)
            .read_to_string(&mut s)
            .context("reading the script from standard input")?;
        if s.len() as u64 > crate::input_file::MAX_TEXT_BYTES {
            bail!(
                "the script on standard input is longer than {} bytes",
                crate::input_file::MAX_TEXT_BYTES
            );
        }
        s
    } else {
        crate::input_file::read_text(&args.script, crate::input_file::MAX_TEXT_BYTES)?
    };
    let calls =
        parse_script(&text).map_err(|(line, msg)| anyhow::anyhow!("{name}:{line}: {msg}"))?;

    let mut tc = TimedCommands::new(args.initial);
    tc.start_us(0);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    writeln!(out, "t,value")?;
    let mut next_call = calls.iter().peekable();
    let mut k: i64 = 1;
    while let Some(t_us) = k.checked_mul(cycle_us).filter(|&t| t <= until_us) {
        while let Some(call) = next_call.next_if(|c| c.at_us <= t_us) {
            tc.apply(call.update, &call.commands);
        }
        tc.cycle_us(t_us);
        let v = if args.rounded {
            tc.send_command()
        } else {
            tc.value()
        };
        writeln!(out, "{},{}", us_to_seconds(t_us), v)?;
        k += 1;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Parses the script; an error is `(1-based line, message)`. The calls come
/// back sorted by receipt time, file order kept for equal times.
fn parse_script(text: &str) -> Result<Vec<ScriptCall>, (usize, String)> {
    let mut calls = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        calls.push(parse_line(line).map_err(|e| (i + 1, e))?);
    }
    calls.sort_by_key(|c| c.at_us);
    Ok(calls)
}

fn parse_line(line: &str) -> Result<ScriptCall, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("malformed JSON: {e}"))?;
    let Value::Object(obj) = v else {
        return Err(r#"expected a JSON object like {"at": 0.03, "update": "Merge", "commands": [[40.0, 0.08]]}"#.into());
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !["at", "update", "commands"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown key {k:?} (expected \"at\", \"update\", \"commands\")"
        ));
    }
    let at_s = match obj.get("at") {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(other) => return Err(format!("\"at\" must be a number of seconds, got {other}")),
        None => return Err("missing \"at\" (receipt time, s)".into()),
    };
    let at_us = seconds_to_us(at_s).ok_or_else(|| format!("\"at\" {at_s} is not a usable time"))?;
    let update = match obj.get("update") {
        Some(Value::String(s)) => UpdateKind::from_name(s).ok_or_else(|| {
            format!(
                "unknown update kind {s:?} (expected Merge, ClearAll, ClearAfter or ClearBefore)"
            )
        })?,
        Some(other) => return Err(format!("\"update\" must be a string, got {other}")),
        None => {
            return Err("missing \"update\" (Merge, ClearAll, ClearAfter or ClearBefore)".into())
        }
    };
    let list = obj
        .get("commands")
        .ok_or("missing \"commands\" (a list of [value, time])")?;
    let commands = parse_commands(list, at_s).map_err(|e| e.to_string())?;
    Ok(ScriptCall {
        at_us,
        update,
        commands,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_lines_parse_and_sort_by_receipt() {
        let text =
            "# comment\n\n{\"at\": 0.03, \"update\": \"Merge\", \"commands\": [[40.0, 0.08]]}\n\
                    {\"at\": 0.01, \"update\": \"ClearAll\", \"commands\": [[1, \"+0.05\", 0]]}\n";
        let calls = parse_script(text).expect("valid script");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].at_us, 10_000);
        assert_eq!(calls[0].update, UpdateKind::ClearAll);
        assert_eq!(calls[0].commands[0].time_us, 60_000);
        assert_eq!(
            calls[1].commands[0],
            TimedCommand {
                value: 40.0,
                time_us: 80_000
            }
        );
    }

    #[test]
    fn script_errors_name_the_line() {
        let cases = [
            (
                "{\"at\": 1, \"update\": \"Merge\", \"commands\": [[1, 2]]}\n{\"at\": 1",
                2,
                "malformed JSON",
            ),
            ("[1]", 1, "expected a JSON object"),
            (
                "{\"update\": \"Merge\", \"commands\": []}",
                1,
                "missing \"at\"",
            ),
            ("{\"at\": 1, \"commands\": []}", 1, "missing \"update\""),
            (
                "{\"at\": 1, \"update\": \"Merge\"}",
                1,
                "missing \"commands\"",
            ),
            (
                "{\"at\": 1, \"update\": \"Mix\", \"commands\": []}",
                1,
                "unknown update kind \"Mix\"",
            ),
            (
                "{\"at\": 1, \"update\": \"Merge\", \"commands\": [], \"x\": 1}",
                1,
                "unknown key \"x\"",
            ),
            (
                "{\"at\": \"1\", \"update\": \"Merge\", \"commands\": []}",
                1,
                "\"at\" must be a number",
            ),
            (
                "\n\n{\"at\": 1, \"update\": \"Merge\", \"commands\": [[1, \"+inf\"]]}",
                3,
                "command 0: time \"+inf\"",
            ),
        ];
        for (text, line, want) in cases {
            let (l, msg) = parse_script(text).expect_err("bad script");
            assert_eq!(l, line, "{text}");
            assert!(msg.contains(want), "{text}: got {msg:?}");
        }
    }
}
