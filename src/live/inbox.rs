//! A vehicle's incoming side, transport-neutral: outside messages parsed
//! into its bounded, coalescing [`Mailbox`] by whichever thread or task
//! receives them ([`Inbox::accept_bytes`] for text payloads such as MQTT's,
//! [`Inbox::accept_payload`] for typed ones such as MOOS's), and the
//! rate-limited log of what was dropped ([`DropLog`]).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use super::mailbox::{Mail, Mailbox, Pushed};
use crate::command::{parse, parse_text, Command, MessageError, Payload};
use crate::text::escape_control;

/// Mail kept between two iterations: entries and payload bytes.
pub const MAILBOX_ENTRIES: usize = 256;
/// See [`MAILBOX_ENTRIES`].
pub const MAILBOX_BYTES: usize = 128 * 1024;

/// Truncate a payload for a log line (characters, not bytes).
pub fn clip_for_log(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max_chars).collect();
        s.push('…');
        s
    }
}

/// A vehicle's incoming side, shared by the transport (which fills it) and
/// the host's iterations (which drain it).
#[derive(Debug)]
pub struct Inbox {
    mailbox: Mutex<Mailbox>,
    bad_messages: AtomicU64,
    /// `[mqtt] max_payload`, bytes.
    max_payload: usize,
    /// Subscribed variables this vehicle publishes itself
    /// ([`super::vehicle::echo_vars`]): a message on one is its own
    /// publication coming back, ignored.
    echoes: Vec<&'static str>,
}

impl Inbox {
    /// An empty inbox with the standard bounds; payloads over
    /// `max_payload` bytes are dropped; messages on `echoes` ignored.
    pub fn new(max_payload: usize, echoes: Vec<&'static str>) -> Inbox {
        Inbox {
            mailbox: Mutex::new(Mailbox::new(MAILBOX_ENTRIES, MAILBOX_BYTES)),
            bad_messages: AtomicU64::new(0),
            max_payload,
            echoes,
        }
    }

    pub(crate) fn mailbox(&self) -> MutexGuard<'_, Mailbox> {
        // Never poisoned in practice (no panics while held); recover anyway.
        self.mailbox.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Messages that did not parse or were refused by the model so far.
    pub fn bad_messages(&self) -> u64 {
        self.bad_messages.load(Ordering::Relaxed)
    }

    /// Messages waiting for the next iteration.
    pub fn pending(&self) -> usize {
        self.mailbox().len()
    }

    /// Plain setpoints superseded before an iteration used them, so far.
    pub fn coalesced(&self) -> u64 {
        self.mailbox().coalesced_total()
    }

    /// True for a variable this vehicle publishes itself.
    pub fn is_echo(&self, var: &str) -> bool {
        self.echoes.contains(&var)
    }

    /// Count one bad message and log it (rate-limited by `drops`); `origin`
    /// names where it came from (a topic, a MOOS variable).
    pub fn reject(&self, drops: &mut DropLog, origin: &str, payload: &str, reason: &str) {
        self.bad_messages.fetch_add(1, Ordering::Relaxed);
        drops.dropped(origin, payload, reason);
    }

    /// Parse one text message for variable `var` (`None`: `origin` is not
    /// one of this vehicle's names) into the mailbox, or log and drop it.
    /// A retained message (MQTT) is never a command.
    pub fn accept_bytes(
        &self,
        origin: &str,
        var: Option<&str>,
        payload: &[u8],
        retain: bool,
        drops: &mut DropLog,
    ) {
        let n = payload.len();
        if n > self.max_payload {
            // The head of the payload only (lossy: it may be cut inside a character).
            let head = String::from_utf8_lossy(&payload[..n.min(40)]);
            let why = format!(
                "payload of {n} bytes is over [mqtt] max_payload = {} bytes; dropped, the \
                 connection stays up",
                self.max_payload
            );
            return self.reject(drops, origin, &head, &why);
        }
        let Some(var) = var else {
            let text = String::from_utf8_lossy(payload);
            return self.reject(drops, origin, &text, "not a topic of this vehicle");
        };
        if self.is_echo(var) {
            // Our own publication (a prefix such as `NAV` makes `NAV_X` both
            // published and a V22 input): never a command.
            return;
        }
        let Ok(text) = std::str::from_utf8(payload) else {
            let text = String::from_utf8_lossy(payload);
            return self.reject(drops, origin, &text, "payload is not UTF-8");
        };
        if retain {
            let why = "retained command ignored (post commands without the retain flag)";
            return self.reject(drops, origin, text, why);
        }
        match parse_text(var, text) {
            Ok(command) => self.push(origin, var, text.to_string(), command),
            Err(e) => self.reject(drops, origin, text, &e.reason),
        }
    }

    /// Parse one typed message (a MOOS double or string) for `var` into the
    /// mailbox; a message that does not parse is counted and its error
    /// returned (the caller reports it where its users look).
    pub fn accept_payload(&self, var: &str, payload: &Payload) -> Result<(), MessageError> {
        if self.is_echo(var) {
            return Ok(());
        }
        match parse(var, payload) {
            Ok(command) => {
                let text = match payload {
                    Payload::Number(v) => format!("{v}"),
                    Payload::Text(s) => s.clone(),
                };
                self.push(var, var, text, command);
                Ok(())
            }
            Err(e) => {
                self.bad_messages.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    fn push(&self, origin: &str, var: &str, payload: String, command: Command) {
        let pushed = self.mailbox().push(Mail {
            var: var.to_string(),
            payload,
            command,
        });
        if pushed == Pushed::Dropped {
            // Counted and reported once per iteration by the host.
            debug!("mailbox full: dropped {}", clip_for_log(origin, 80));
        }
    }

    /// Count a message the model refused at the iteration.
    pub(crate) fn count_refused(&self) {
        self.bad_messages.fetch_add(1, Ordering::Relaxed);
    }
}

/// Logs dropped messages: every one, up to 20 a second; beyond that a count.
#[derive(Debug)]
pub struct DropLog {
    window: Instant,
    in_window: u32,
    suppressed: u64,
}

impl Default for DropLog {
    fn default() -> Self {
        DropLog::new()
    }
}

impl DropLog {
    const PER_SECOND: u32 = 20;

    /// A fresh log window.
    pub fn new() -> DropLog {
        DropLog {
            window: Instant::now(),
            in_window: 0,
            suppressed: 0,
        }
    }

    /// Log (or count) one dropped message with its origin and the reason;
    /// true if it was logged.
    pub fn dropped(&mut self, origin: &str, payload: &str, reason: &str) -> bool {
        if self.window.elapsed() >= Duration::from_secs(1) {
            if self.suppressed > 0 {
                warn!(
                    "{} more bad messages dropped without a log line (flood)",
                    self.suppressed
                );
            }
            self.window = Instant::now();
            self.in_window = 0;
            self.suppressed = 0;
        }
        if self.in_window < Self::PER_SECOND {
            self.in_window += 1;
            warn!(
                "dropped message on {}: payload {:?}: {reason}",
                escape_control(&clip_for_log(origin, 200)),
                clip_for_log(payload, 200)
            );
            true
        } else {
            self.suppressed += 1;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_typed_mail_reach_the_mailbox_and_bad_mail_is_counted() {
        let inbox = Inbox::new(100, vec!["NAV_X"]);
        let mut drops = DropLog::new();
        inbox.accept_bytes(
            "r/a/DESIRED_THRUST",
            Some("DESIRED_THRUST"),
            b"50",
            false,
            &mut drops,
        );
        inbox.accept_bytes(
            "r/a/DESIRED_RUDDER",
            Some("DESIRED_RUDDER"),
            b"x",
            false,
            &mut drops,
        );
        inbox.accept_bytes(
            "r/a/DESIRED_RUDDER",
            Some("DESIRED_RUDDER"),
            b"5",
            true,
            &mut drops,
        );
        inbox.accept_bytes("r/a/NAV_X", Some("NAV_X"), b"5", false, &mut drops);
        inbox.accept_bytes(
            "r/a/DESIRED_RUDDER",
            Some("DESIRED_RUDDER"),
            &[b'1'; 101],
            false,
            &mut drops,
        );
        inbox.accept_bytes("r/b/x", None, b"1", false, &mut drops);
        assert_eq!(inbox.pending(), 1);
        assert_eq!(inbox.bad_messages(), 4);
        assert!(inbox
            .accept_payload("DESIRED_RUDDER", &Payload::Number(20.0))
            .is_ok());
        assert!(inbox.accept_payload("NAV_X", &Payload::Number(1.0)).is_ok());
        assert!(inbox
            .accept_payload("DESIRED_RUDDER", &Payload::Number(f64::NAN))
            .is_err());
        assert_eq!(inbox.pending(), 2);
        assert_eq!(inbox.bad_messages(), 5);
    }

    #[test]
    fn the_drop_log_is_rate_limited() {
        let mut d = DropLog::new();
        let logged = (0..100).filter(|_| d.dropped("t", "p", "r")).count();
        assert_eq!(logged, 20);
    }
}
