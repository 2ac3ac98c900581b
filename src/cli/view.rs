//! `usim view`: serve the live fleet view (docs/view.md).
use std::net::SocketAddr;
use std::process::ExitCode;

use crate::view::server::{warn_if_open, ViewOptions, ViewServer, DEFAULT_BIND, DEFAULT_FPS};

/// Arguments of `usim view`.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    #[command(flatten)]
    pub tool: super::live::ToolArgs,
    /// HTTP listen address (loopback by default; 0.0.0.0:8080 opens it to
    /// the network: anyone who reaches it can drive the vehicles, so give
    /// --token too). Port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_BIND)]
    pub bind: SocketAddr,
    /// Require this token in the page URL and the WebSocket handshake
    /// (letters, digits, -_.~).
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// At most N frames per second to each page, whatever the fleet size.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FPS)]
    pub fps: f64,
}

/// Bind, print the URL, serve until SIGINT/SIGTERM.
pub fn run(a: ViewArgs) -> anyhow::Result<ExitCode> {
    let opts = ViewOptions {
        conn: a.tool.connection()?,
        bind: a.bind,
        token: a.token,
        fps: a.fps,
    };
    warn_if_open(&opts.bind, opts.token.as_deref());
    super::live::runtime()?.block_on(async {
        let shutdown = crate::mqtt::bridge::shutdown_signal()?;
        let server = ViewServer::bind(opts).await?;
        println!("usim view: open {}", server.url());
        tracing::info!("watching {} (Ctrl-C stops)", a.tool.broker);
        server
            .run(async move {
                let why = shutdown.await;
                tracing::info!("{why}: view stopped");
            })
            .await?;
        Ok(ExitCode::SUCCESS)
    })
}
