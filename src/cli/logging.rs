//! Log set-up of every command: plain text on stderr, colour only on a
//! terminal without `NO_COLOR`, and a global rate limit per code location
//! so that no flood of messages floods the log (issue 20 item 23).
//!
//! The limit ([`RateLimit`]): each log call site may write
//! [`PER_SITE_LINES`] lines per [`WINDOW`]; all of them together
//! [`TOTAL_LINES`] per window. What is over is counted, and said in one
//! `N more log lines like this were suppressed` line when the site writes
//! again after its window (and one line for the global cap), so a log
//! stays under `TOTAL_LINES` + a few lines per window whatever the input.
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tracing::callsite::Identifier;
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// Length of one rate-limit window.
pub const WINDOW: Duration = Duration::from_secs(10);
/// Lines one call site may write per window.
pub const PER_SITE_LINES: u32 = 10;
/// Lines all call sites together may write per window (the summary lines
/// of suppressed messages included).
pub const TOTAL_LINES: u32 = 60;

/// True when log lines may be coloured: stderr is a terminal and
/// `NO_COLOR` is unset or empty (<https://no-color.org>).
pub fn colour_wanted() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

/// Per call site: window start, lines written, lines suppressed.
#[derive(Debug)]
struct Site {
    since: Instant,
    written: u32,
    suppressed: u64,
}

#[derive(Debug)]
struct State {
    sites: HashMap<Identifier, Site>,
    total_since: Instant,
    total_written: u32,
    total_suppressed: u64,
}

/// The rate-limiting layer (see the module doc).
#[derive(Debug)]
pub struct RateLimit {
    state: Mutex<State>,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit {
            state: Mutex::new(State {
                sites: HashMap::new(),
                total_since: Instant::now(),
                total_written: 0,
                total_suppressed: 0,
            }),
        }
    }
}

/// What to say after deciding, outside the lock.
enum Report {
    Site(u64, &'static str, u32),
    Total(u64),
}

/// Target of the "suppressed" lines (never limited per site).
const REPORT_TARGET: &str = "usim::log_limit";

impl<S: Subscriber> Layer<S> for RateLimit {
    fn event_enabled(&self, event: &Event<'_>, _ctx: Context<'_, S>) -> bool {
        let meta = event.metadata();
        let now = Instant::now();
        let is_report = meta.target() == REPORT_TARGET;
        let (allow, report) = {
            let Ok(mut st) = self.state.lock() else {
                return true;
            };
            let mut report = None;
            if now.duration_since(st.total_since) >= WINDOW {
                if st.total_suppressed > 0 {
                    report = Some(Report::Total(st.total_suppressed));
                }
                st.total_since = now;
                st.total_written = 0;
                st.total_suppressed = 0;
            }
            let mut allow = true;
            if !is_report {
                let site = st.sites.entry(meta.callsite()).or_insert(Site {
                    since: now,
                    written: 0,
                    suppressed: 0,
                });
                if now.duration_since(site.since) >= WINDOW {
                    if site.suppressed > 0 && report.is_none() {
                        report = Some(Report::Site(
                            site.suppressed,
                            meta.file().unwrap_or("?"),
                            meta.line().unwrap_or(0),
                        ));
                    }
                    site.since = now;
                    site.written = 0;
                    site.suppressed = 0;
                }
                if site.written >= PER_SITE_LINES {
                    site.suppressed += 1;
                    allow = false;
                } else {
                    site.written += 1;
                }
            }
            // The report line (if any) takes a slot of the global budget
            // too; the global summary itself always passes.
            let needed = u32::from(allow) + u32::from(report.is_some());
            if st.total_written + needed > TOTAL_LINES && !is_report {
                if allow {
                    st.total_suppressed += 1;
                    allow = false;
                }
                if matches!(report, Some(Report::Site(..))) {
                    report = None;
                }
            } else {
                st.total_written += needed;
            }
            (allow, report)
        };
        match report {
            Some(Report::Site(n, file, line)) => tracing::warn!(
                target: REPORT_TARGET,
                "{n} more log lines from {file}:{line} were suppressed in the last {} s \
                 (at most {PER_SITE_LINES} lines per {} s from one place)",
                WINDOW.as_secs(),
                WINDOW.as_secs()
            ),
            Some(Report::Total(n)) => tracing::warn!(
                target: REPORT_TARGET,
                "{n} more log lines were suppressed in the last {} s (at most \
                 {TOTAL_LINES} lines per {} s in all)",
                WINDOW.as_secs(),
                WINDOW.as_secs()
            ),
            None => {}
        }
        allow
    }
}

/// Install the subscriber: `filter` levels, [`RateLimit`], plain or
/// coloured text on stderr ([`colour_wanted`]).
pub fn init(filter: tracing_subscriber::EnvFilter) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(colour_wanted());
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(RateLimit::default())
        .with(fmt)
        .try_init();
}
