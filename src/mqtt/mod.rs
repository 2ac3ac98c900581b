//! MQTT: `usim run` and `usim fleet` as adapters of the live host
//! ([`crate::live`]), the embedded broker, the fleet launcher, the scripting
//! tools, `usim record` and `usim nmea` (docs/formats.md §4).
//!
//! The vehicle loop (clock, mailbox, step, publication set, claim rule) is
//! the host's; this module maps topics to the host's inboxes, the host's
//! publications to topics, and drives the connection:
//!
//! * [`topics`]: topic names (`{topic_root}/{vehicle}/{VARIABLE}`).
//! * [`endpoint`]: broker URLs (`mqtt://`, `mqtts://`) → rumqttc options.
//! * [`out`]: the host's publications on MQTT topics (its
//!   [`crate::live::host::Transport`]).
//! * [`bridge`]: `usim run`: rumqttc event loop task + the host's tick loop
//!   for one vehicle; the connection task and the name check.
//! * [`burst`]: a fleet's publications of one iteration as one buffer of
//!   `PUBLISH` packets on a publish-only connection.
//! * [`gate`]: the embedded broker's connection gate (limits per client).
//! * [`broker`]: the embedded rumqttd broker (`usim broker`).
//! * [`fleet`]: `usim up`: embedded broker plus one child process per vehicle
//!   (or, with `--in-process`, the vehicles of [`fleet_runtime`]).
//! * [`fleet_runtime`]: `usim fleet`: many vehicles in one process on one
//!   connection, with live `ENCOUNTER` events.
//! * [`tools`]: `usim post` (like uPokeDB) and `usim watch` (like uXMS).
//! * [`nmea_bridge`]: `usim nmea`: live vehicles as NMEA 0183 and AIS over UDP/TCP.
//! * [`record`]: `usim record`: live vehicles' reports and commands to CSV or MCAP.
use std::fmt;

pub mod bridge;
pub mod broker;
pub mod burst;
pub mod endpoint;
pub mod fleet;
pub mod fleet_runtime;
pub mod gate;
pub mod nmea_bridge;
pub mod out;
pub mod record;
pub mod tools;
pub mod topics;

/// Errors of the live shell, each with the cause and, where possible, the remedy.
#[derive(Debug)]
#[non_exhaustive]
pub enum BridgeError {
    /// A broker URL that cannot be used (`mqtt://host:port` expected).
    BadUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A vehicle name, topic root or variable that cannot be part of a topic.
    BadTopic(String),
    /// An option out of range (time warp, tick rate, count…).
    BadOption(String),
    /// The broker could not be reached or refused us.
    Connect {
        /// The broker URL.
        url: String,
        /// What happened.
        reason: String,
    },
    /// The broker answered but refused the connection (credentials, ACL).
    Refused {
        /// The broker URL.
        url: String,
        /// What the broker said.
        reason: String,
    },
    /// The embedded broker could not start.
    Broker(String),
    /// A local I/O error (signals, files, child processes).
    Io(std::io::Error),
    /// TLS set-up failed (`mqtts://`).
    Tls(String),
    /// Another vehicle with this name is already running on the broker.
    Duplicate {
        /// The vehicle name.
        name: String,
        /// The broker URL.
        url: String,
        /// True when another process claimed the name at the same moment
        /// (and won the draw), false when a running owner answered.
        race: bool,
    },
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeError::BadUrl { url, reason } => write!(
                f,
                "bad broker URL {url:?}: {reason} (expected mqtt://HOST:PORT or mqtts://HOST:PORT)"
            ),
            BridgeError::BadTopic(s) => write!(f, "{s}"),
            BridgeError::BadOption(s) => write!(f, "{s}"),
            BridgeError::Connect { url, reason } => write!(
                f,
                "cannot reach the MQTT broker at {url}: {reason}. {}",
                no_broker_hint()
            ),
            BridgeError::Refused { url, reason } => write!(
                f,
                "the MQTT broker at {url} refused the connection: {reason} (check the user \
                 name and password: --username or [mqtt] username, USIM_MQTT_PASSWORD or \
                 [mqtt] password)"
            ),
            BridgeError::Broker(s) => write!(f, "embedded broker: {s}"),
            BridgeError::Io(e) => write!(f, "{e}"),
            BridgeError::Tls(s) => write!(f, "TLS: {s}"),
            BridgeError::Duplicate { name, url, race } => {
                if *race {
                    write!(
                        f,
                        "another process claimed the vehicle name {name:?} on the broker at \
                         {url} at the same moment and won the draw, so this one does not start \
                         (two vehicles with one name would mix their topics). Give this one \
                         another name (--name or `name` in the config)"
                    )
                } else {
                    write!(
                        f,
                        "a vehicle named {name:?} is already running on the broker at {url} (it \
                         answered this name's claim on {{root}}/{name}/claim, or its USM_TIME is \
                         being published); two vehicles with one name would mix their topics. \
                         Give this one another name (--name or `name` in the config), or stop \
                         the other first"
                    )
                }
            }
        }
    }
}

impl std::error::Error for BridgeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BridgeError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for BridgeError {
    fn from(e: std::io::Error) -> Self {
        BridgeError::Io(e)
    }
}

/// What to tell a user who has no broker running.
pub fn no_broker_hint() -> &'static str {
    "Is a broker running? Start the embedded one with `usim broker` \
     (or launch broker and vehicles together with `usim up CONFIG...`), \
     run mosquitto, or pass --broker URL"
}

pub(crate) use crate::live::inbox::clip_for_log;
pub use crate::text::escape_control;

#[cfg(test)]
mod escape_tests {
    use super::escape_control;

    /// Caught (issue 13): `usim watch` printed payloads raw, so ANSI/OSC
    /// sequences in a payload rewrote the user's terminal.
    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_control("60.5"), "60.5");
        assert_eq!(escape_control("héllo wörld"), "héllo wörld");
        let e = escape_control("\x1b]0;pwned\x07\x1b[2J\r\n\u{9b}31m\u{202e}x");
        assert!(!e.chars().any(|c| c.is_control()), "{e}");
        assert_eq!(
            e,
            "\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\r\\n\\u{9b}31m\\u{202e}x"
        );
    }
}
