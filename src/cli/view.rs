//! `usim view`: serve the live fleet view (docs/view.md).
use std::net::SocketAddr;
use std::process::ExitCode;

use std::time::Duration;

use crate::view::protocol::{DEFAULT_EXPIRE_S, MAX_VEHICLES};
use crate::view::server::{
    choose_token, warn_if_open, ViewOptions, ViewServer, DEFAULT_BIND, DEFAULT_FPS,
    DEFAULT_MAX_CONNECTIONS,
};

/// Arguments of `usim view`.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// A MOOS mission file: its pMarineViewer block's action buttons
    /// (`button_one = DEPLOY # DEPLOY=true`) become buttons on the page
    /// that post to the mission's community (`{root}/{Community}/{VAR}`).
    #[arg(value_name = "MISSION.moos")]
    pub mission: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub tool: super::live::ToolArgs,
    /// HTTP listen address (loopback by default; 0.0.0.0:8080 opens it to
    /// the network: anyone who reaches it can drive the vehicles, so give
    /// --token too). Port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_BIND)]
    pub bind: SocketAddr,
    /// Require this token in the page URL and the WebSocket handshake
    /// (letters, digits, -_.~). Default: a random one, printed in the URL.
    #[arg(long, value_name = "T", conflicts_with = "no_token")]
    pub token: Option<String>,
    /// No token (loopback --bind only; the Host header must then name a
    /// loopback address).
    #[arg(long)]
    pub no_token: bool,
    /// At most N frames per second to each page, whatever the fleet size.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FPS)]
    pub fps: f64,
    /// At most N open connections (pages and requests); more are closed at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Keep at most N vehicles; a new one pushes out the one silent longest.
    #[arg(long, value_name = "N", default_value_t = MAX_VEHICLES)]
    pub max_vehicles: usize,
    /// Forget a vehicle not heard from for S seconds.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_EXPIRE_S)]
    pub expire: f64,
    /// Close a connection that has not sent its request headers within S seconds.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub header_timeout: f64,
    /// Close an HTTP connection (not a page's socket) silent for S seconds.
    #[arg(long, value_name = "S", default_value_t = 30.0)]
    pub idle_timeout: f64,
}

fn seconds(flag: &str, s: f64) -> anyhow::Result<Duration> {
    if !(s.is_finite() && (0.1..=86_400.0).contains(&s)) {
        anyhow::bail!("{flag} must be in [0.1, 86400] s, got {s}");
    }
    Ok(Duration::from_secs_f64(s))
}

/// The pMarineViewer buttons of a mission file and its community.
fn mission_buttons(
    path: &std::path::Path,
) -> anyhow::Result<(String, Vec<crate::view::buttons::Button>)> {
    let text = crate::config::read_capped(path, 4 * 1024 * 1024)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let community = crate::moos::mission::read_globals(&text)
        .community
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no `Community` line: the buttons would not know where to post",
                path.display()
            )
        })?;
    crate::mqtt::topics::Topics::new("usim", &community)
        .map_err(|e| anyhow::anyhow!("{}: Community {e}", path.display()))?;
    let (buttons, warnings) = crate::view::buttons::from_mission(&text);
    for w in warnings {
        tracing::warn!(
            "{}: pMarineViewer: {}",
            path.display(),
            crate::text::escape_control(&w)
        );
    }
    tracing::info!(
        "{} button(s) of {}'s pMarineViewer, posting to community {}",
        buttons.len(),
        path.display(),
        crate::text::escape_control(&community)
    );
    Ok((community, buttons))
}

/// Bind, print the URL, serve until SIGINT/SIGTERM.
pub fn run(a: ViewArgs) -> anyhow::Result<ExitCode> {
    let token = choose_token(&a.bind, a.token, a.no_token, "--no-token")?;
    let buttons = match &a.mission {
        Some(p) => Some(mission_buttons(p)?),
        None => None,
    };
    let opts = ViewOptions {
        buttons,
        fps: a.fps,
        max_connections: a.max_connections,
        max_vehicles: a.max_vehicles,
        expire_s: a.expire,
        header_timeout: seconds("--header-timeout", a.header_timeout)?,
        idle_timeout: seconds("--idle-timeout", a.idle_timeout)?,
        ..ViewOptions::new(a.tool.connection()?, a.bind, token)
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
