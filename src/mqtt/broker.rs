//! The embedded MQTT broker (rumqttd, MQTT 3.1.1) of `usim broker` and
//! `usim up`: loopback by default, no TLS, no authentication, small
//! in-memory limits. Its configuration is `src/mqtt/rumqttd.toml`,
//! embedded with `include_str!`; rumqttd listens on a private loopback
//! port behind the connection gate ([`super::gate`]), which listens on the
//! user's address and enforces the connection limits of docs/security.md.
//!
//! Any standard broker works instead (mosquitto, EMQX): see docs/mqtt.md.
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::endpoint::BrokerUrl;
use super::BridgeError;

/// The embedded broker's configuration (rumqttd format).
pub const CONFIG_TOML: &str = include_str!("rumqttd.toml");
/// Default listen address: loopback, standard port.
pub const DEFAULT_BIND: &str = "127.0.0.1:1883";

/// The rumqttd configuration with the v4 listener on `bind`.
pub fn config(bind: SocketAddr) -> Result<rumqttd::Config, BridgeError> {
    let mut cfg: rumqttd::Config = toml::from_str(CONFIG_TOML)
        .map_err(|e| BridgeError::Broker(format!("built-in config: {e}")))?;
    let servers = cfg
        .v4
        .as_mut()
        .ok_or_else(|| BridgeError::Broker("built-in config has no [v4] server".into()))?;
    for server in servers.values_mut() {
        server.listen = bind;
    }
    Ok(cfg)
}

/// A running embedded broker (its threads live until the process exits).
#[derive(Debug)]
pub struct EmbeddedBroker {
    addr: SocketAddr,
    thread: JoinHandle<Result<(), String>>,
    /// The connection gate (super::gate) in front of rumqttd.
    gate: JoinHandle<()>,
}

impl EmbeddedBroker {
    /// Start a broker listening on `bind` and wait (up to 5 s) until it
    /// accepts connections. A port already in use is reported with a hint.
    pub fn start(bind: SocketAddr) -> Result<EmbeddedBroker, BridgeError> {
        let listener = match TcpListener::bind(bind) {
            Ok(l) => l,
            Err(e) => {
                let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
                    " (another broker, e.g. mosquitto, may already listen there: use it with \
                     --broker mqtt://ADDR, or choose another --bind)"
                } else {
                    ""
                };
                return Err(BridgeError::Broker(format!(
                    "cannot listen on {bind}: {e}{hint}"
                )));
            }
        };
        // The address as bound (port 0 → the port chosen).
        let bind = listener.local_addr()?;
        super::gate::raise_fd_limit();
        // rumqttd itself listens on a private loopback port; only the gate
        // (super::gate) talks to it. It only logs a failed bind, so pick a
        // port that was free a moment ago.
        let core: SocketAddr = TcpListener::bind("127.0.0.1:0")?.local_addr()?;
        let cfg = config(core)?;
        let thread = std::thread::Builder::new()
            .name("broker".into())
            .spawn(move || {
                let mut broker = rumqttd::Broker::new(cfg);
                broker.start().map_err(|e| e.to_string())
            })?;
        let gate = super::gate::spawn_gate(listener, core, super::gate::GateLimits::default())?;
        let broker = EmbeddedBroker {
            addr: bind,
            thread,
            gate,
        };
        broker.wait_ready(Duration::from_secs(5))?;
        Ok(broker)
    }

    fn wait_ready(&self, timeout: Duration) -> Result<(), BridgeError> {
        let probe = connectable(self.addr);
        let t0 = Instant::now();
        loop {
            if mqtt_ping(probe).is_ok() {
                return Ok(());
            }
            if !self.is_running() {
                return Err(BridgeError::Broker(format!(
                    "stopped during start-up (listening on {})",
                    self.addr
                )));
            }
            if t0.elapsed() > timeout {
                return Err(BridgeError::Broker(format!(
                    "not accepting connections on {} after {:?}",
                    self.addr, timeout
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The listen address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL clients on this machine use.
    pub fn url(&self) -> BrokerUrl {
        let a = connectable(self.addr);
        BrokerUrl {
            tls: false,
            host: a.ip().to_string(),
            port: a.port(),
        }
    }

    /// False once the broker's servers have all stopped.
    pub fn is_running(&self) -> bool {
        !self.thread.is_finished() && !self.gate.is_finished()
    }
}

/// Connect, send an MQTT 3.1.1 CONNECT, expect a CONNACK, DISCONNECT: a
/// readiness probe that the broker does not log as a broken connection.
fn mqtt_ping(addr: SocketAddr) -> std::io::Result<()> {
    use std::io::{Read, Write};
    const CONNECT: &[u8] = &[
        0x10, 22, // CONNECT, remaining length
        0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 10, // MQTT 3.1.1, clean session, 10 s
        0, 10, b'u', b's', b'i', b'm', b'-', b'p', b'r', b'o', b'b', b'e',
    ];
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(200))?;
    s.set_read_timeout(Some(Duration::from_millis(500)))?;
    s.write_all(CONNECT)?;
    let mut ack = [0u8; 4];
    s.read_exact(&mut ack)?;
    if ack[0] != 0x20 || ack[3] != 0 {
        return Err(std::io::Error::other(format!("unexpected CONNACK {ack:?}")));
    }
    s.write_all(&[0xE0, 0])
}

/// The address to connect to for a listen address (`0.0.0.0` → loopback).
fn connectable(bind: SocketAddr) -> SocketAddr {
    let mut a = bind;
    if a.ip().is_unspecified() {
        a.set_ip(if a.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_config_parses_and_takes_the_bind_address() {
        let bind: SocketAddr = "127.0.0.1:18830".parse().unwrap();
        let cfg = config(bind).unwrap();
        let v4 = cfg.v4.unwrap();
        assert_eq!(v4.len(), 1);
        assert!(v4.values().all(|s| s.listen == bind));
        assert!(cfg.console.is_none() && cfg.prometheus.is_none());
    }

    #[test]
    fn unspecified_bind_connects_on_loopback() {
        let a = connectable("0.0.0.0:1883".parse().unwrap());
        assert_eq!(a.to_string(), "127.0.0.1:1883");
    }
}
