//! `usim interp` (stub, being written).
use std::process::ExitCode;

/// Arguments of `usim interp`.
#[derive(Debug, clap::Args)]
pub struct InterpArgs {}

/// Run `usim interp`.
pub fn run(_args: InterpArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("usim interp is not implemented yet")
}
