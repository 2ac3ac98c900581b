//! MOOS V10 in Rust (docs/moos.md): usim as a MOOS citizen.
//!
//! Sans-IO cores:
//! * [`codec`]: packets, messages, framing of a byte stream.
//! * [`wildcard`]: MOOS's glob matching and wildcard registrations.
//! * [`client`]: an asynchronous client's state machine.
//! * [`db`]: the MOOSDB's logic.
//! * [`db_summary`]: the text of the DB's summary variables.
//! * [`mission`]: the mission-wide keys of a `.moos` file.
//! * [`appcast`]: appcasts (`APPCAST` on `APPCAST_REQ`, for uMAC).
//!
//! Thin runtimes (threads and TCP):
//! * [`server`]: `usim moosdb`.
//! * [`conn`]: a client connection with reconnection.
//! * [`app`]: `usim moos`, one vehicle in a MOOS community.
//! * [`bridge`]: `usim moos-bridge`, a community mirrored onto MQTT.
pub mod app;
pub mod appcast;
pub mod bridge;
pub mod client;
pub mod codec;
pub mod conn;
pub mod db;
pub mod db_summary;
pub mod mission;
pub mod server;
pub mod wildcard;

/// Real Unix time now, s.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// This machine's host name (for the welcome and skew decisions).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Text from outside (names, values) made safe for a log line: control
/// characters escaped, at most `max` characters.
pub fn log_safe(text: &str, max: usize) -> String {
    let clipped: String = text.chars().take(max).collect();
    let mut s = crate::text::escape_control(&clipped).into_owned();
    if text.chars().count() > max {
        s.push('…');
    }
    s
}
