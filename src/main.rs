//! The `usim` binary: parse the command line, run, map the result to an exit code.
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // pAntler starts apps as `APP MISSION.moos ALIAS` (docs/moos.md §1.1);
    // started as a MOOS app that cannot run, say so and fail (pAntler
    // itself reports every launch as successful).
    let args = match usim::cli::moos::antler_args(std::env::args_os().collect()) {
        Ok(a) => a,
        Err(why) => {
            eprintln!("usim: error: {why}");
            return ExitCode::from(2);
        }
    };
    let cli = usim::cli::Cli::parse_from(args);
    match usim::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Broken pipe (e.g. `usim replay m.toml | head`) is not an error.
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("usim: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
