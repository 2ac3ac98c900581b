//! `usim profile` (stub, being written).
use std::process::ExitCode;

/// Arguments of `usim profile`.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {}

/// Run `usim profile`.
pub fn run(_args: ProfileArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("usim profile is not implemented yet")
}
