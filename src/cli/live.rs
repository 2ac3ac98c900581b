//! Live subcommands: `run`, `broker`, `up`, `post`, `watch` (stubs, being written).
use std::process::ExitCode;

/// Arguments of `usim run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {}
/// Arguments of `usim broker`.
#[derive(Debug, clap::Args)]
pub struct BrokerArgs {}
/// Arguments of `usim up`.
#[derive(Debug, clap::Args)]
pub struct UpArgs {}
/// Arguments of `usim post`.
#[derive(Debug, clap::Args)]
pub struct PostArgs {}
/// Arguments of `usim watch`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {}

/// Run `usim run`.
pub fn run(_a: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
/// Run `usim broker`.
pub fn broker(_a: BrokerArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
/// Run `usim up`.
pub fn up(_a: UpArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
/// Run `usim post`.
pub fn post(_a: PostArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
/// Run `usim watch`.
pub fn watch(_a: WatchArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
