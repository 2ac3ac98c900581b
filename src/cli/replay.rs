//! `usim replay` (being written).
use std::process::ExitCode;

/// Arguments of `usim replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {}

/// Run `usim replay`.
pub fn run(_a: ReplayArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
