//! `usim example` and `usim interface` (being written).
use std::process::ExitCode;

/// Arguments of `usim example`.
#[derive(Debug, clap::Args)]
pub struct ExampleArgs {}
/// Arguments of `usim interface`.
#[derive(Debug, clap::Args)]
pub struct InterfaceArgs {}

/// Print an example config.
pub fn example(_a: ExampleArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
/// Print the interface.
pub fn interface(_a: InterfaceArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
