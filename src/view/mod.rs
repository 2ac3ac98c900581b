//! `usim view`: a live view of the fleet in the browser (like MOOS-IvP's
//! pMarineViewer), with commanding from the page (docs/view.md).
//!
//! * [`protocol`]: the sans-IO part: the fleet model built from `status` and
//!   `NODE_REPORT` messages, the frame clock (coalescing to at most N frames
//!   per second), the parser of the page's WebSocket messages, the command
//!   check (the same as `usim post`'s) and the access rules (token, Host,
//!   Origin).
//! * [`server`]: the shell around it: an axum HTTP + WebSocket server and a
//!   rumqttc client on tokio.
//! * [`buttons`]: the mission's pMarineViewer action buttons.
//! * `page.html`: the page, plain HTML/JS/CSS embedded in the binary.
pub mod buttons;
pub mod geometry;
pub mod protocol;
pub mod server;

/// The page served at `/` (no build step, no CDN).
pub const PAGE: &str = include_str!("page.html");
