//! The `usim` binary: parse the command line, run, map the result to an exit code.
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // pAntler starts apps as `APP MISSION.moos ALIAS` (docs/moos.md).
    let args = usim::cli::moos::antler_args(std::env::args_os().collect());
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
