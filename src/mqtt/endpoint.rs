//! Broker URLs and the rumqttc options built from them.
//!
//! Accepted: `mqtt://HOST[:PORT]` (also `tcp://`, default port 1883) and,
//! with the cargo feature `tls`, `mqtts://HOST[:PORT]` (also `ssl://`,
//! default port 8883). A bare `HOST:PORT` means `mqtt://`. IPv6 hosts are
//! written in brackets: `mqtt://[::1]:1883`.
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use rumqttc::{
    AsyncClient, ConnectionError, EventLoop, LastWill, MqttOptions, NetworkOptions, QoS,
};

use super::BridgeError;

/// The default broker: a local one on the standard port.
pub const DEFAULT_BROKER: &str = "mqtt://127.0.0.1:1883";

/// A parsed broker URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerUrl {
    /// `mqtts://`: TLS (needs the `tls` feature).
    pub tls: bool,
    /// Host name or IP address (without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl BrokerUrl {
    /// Parse a broker URL (see the module doc).
    pub fn parse(url: &str) -> Result<BrokerUrl, BridgeError> {
        let bad = |reason: &str| BridgeError::BadUrl {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let (tls, rest) = match url.split_once("://") {
            Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
                "mqtt" | "tcp" => (false, rest),
                "mqtts" | "ssl" | "tls" => (true, rest),
                _ => return Err(bad("unknown scheme")),
            },
            None => (false, url),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#', '@']) {
            return Err(bad(
                "paths, queries and user@ are not supported (set username/password in [mqtt])",
            ));
        }
        let default_port = if tls { 8883 } else { 1883 };
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            match after.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None if after.is_empty() => (host, None),
                None => return Err(bad("junk after ']'")),
            }
        } else {
            match rest.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = match port {
            None => default_port,
            Some(p) => match p.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return Err(bad("port must be 1..65535")),
            },
        };
        Ok(BrokerUrl {
            tls,
            host: host.to_string(),
            port,
        })
    }
}

impl fmt::Display for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        if self.host.contains(':') {
            write!(f, "{scheme}://[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{}:{}", self.host, self.port)
        }
    }
}

/// Largest MQTT packet any usim client sends, bytes (a larger one is an
/// error of the client's event loop, which drops the connection).
pub const MAX_OUTGOING_PACKET: usize = 64 * 1024;

/// Everything needed to open one MQTT connection.
#[derive(Debug, Clone)]
pub struct ConnectSpec {
    /// Where.
    pub url: BrokerUrl,
    /// MQTT client id (unique per connection on a broker).
    pub client_id: String,
    /// Optional user name and password.
    pub credentials: Option<(String, String)>,
    /// CA bundle (PEM) for `mqtts://`; default: the system bundle
    /// `/etc/ssl/certs/ca-certificates.crt`.
    pub ca_file: Option<PathBuf>,
    /// Keep-alive interval (at least 1 s).
    pub keep_alive: Duration,
    /// Largest packet accepted from the broker, bytes.
    pub max_incoming_packet: usize,
    /// Last will: `(topic, payload)`, retained, QoS 1.
    pub last_will: Option<(String, String)>,
    /// Outgoing QoS 1 messages in flight before the client waits for
    /// acknowledgements (default 32; a fleet sets one status per vehicle).
    pub inflight: u16,
}

impl ConnectSpec {
    /// A spec with defaults: no credentials, 5 s keep-alive, 32 KiB packets.
    pub fn new(url: BrokerUrl, client_id: impl Into<String>) -> ConnectSpec {
        ConnectSpec {
            url,
            client_id: client_id.into(),
            credentials: None,
            ca_file: None,
            keep_alive: Duration::from_secs(5),
            max_incoming_packet: 32 * 1024,
            last_will: None,
            inflight: 32,
        }
    }

    /// A client and its event loop, with `TCP_NODELAY` set (small messages
    /// must not wait for Nagle's algorithm: it adds tens of milliseconds
    /// to command-to-effect latency) and a 5 s connection timeout.
    /// `capacity` bounds the request channel.
    pub fn client(&self, capacity: usize) -> Result<(AsyncClient, EventLoop), BridgeError> {
        let (client, mut eventloop) = AsyncClient::new(self.mqtt_options()?, capacity);
        let mut net = NetworkOptions::new();
        net.set_tcp_nodelay(true);
        net.set_connection_timeout(5);
        eventloop.set_network_options(net);
        Ok((client, eventloop))
    }

    /// The rumqttc options (clean session: subscriptions are made again on
    /// every connection).
    pub fn mqtt_options(&self) -> Result<MqttOptions, BridgeError> {
        let mut o = MqttOptions::new(&self.client_id, &self.url.host, self.url.port);
        o.set_keep_alive(self.keep_alive.max(Duration::from_secs(1)));
        o.set_clean_session(true);
        o.set_max_packet_size(self.max_incoming_packet, MAX_OUTGOING_PACKET);
        o.set_inflight(self.inflight.max(1));
        if let Some((user, pass)) = &self.credentials {
            o.set_credentials(user, pass);
        }
        if let Some((topic, payload)) = &self.last_will {
            o.set_last_will(LastWill::new(
                topic,
                payload.as_bytes().to_vec(),
                QoS::AtLeastOnce,
                true,
            ));
        }
        if self.url.tls {
            set_tls(&mut o, self.ca_file.as_deref())?;
        }
        Ok(o)
    }
}

/// The error for a failed connection: [`BridgeError::Refused`] when the
/// broker answered with a refusal, else [`BridgeError::Connect`].
pub fn connection_failure(url: &BrokerUrl, e: &ConnectionError) -> BridgeError {
    match e {
        ConnectionError::ConnectionRefused(code) => BridgeError::Refused {
            url: url.to_string(),
            reason: format!("{code:?}"),
        },
        #[cfg(feature = "tls")]
        ConnectionError::Tls(e) => BridgeError::Tls(format!(
            "{url}: {e} (if the broker's certificate is signed by a private CA, give it with \
             --ca-file PEM)"
        )),
        _ => BridgeError::Connect {
            url: url.to_string(),
            reason: e.to_string(),
        },
    }
}

/// Credentials from an optional user name and password; the password may
/// also come from the environment variable `USIM_MQTT_PASSWORD`.
pub fn credentials(username: Option<String>, password: Option<String>) -> Option<(String, String)> {
    let user = username?;
    let pass = password
        .or_else(|| std::env::var("USIM_MQTT_PASSWORD").ok())
        .unwrap_or_default();
    Some((user, pass))
}

#[cfg(feature = "tls")]
fn set_tls(o: &mut MqttOptions, ca_file: Option<&std::path::Path>) -> Result<(), BridgeError> {
    use rumqttc::{TlsConfiguration, Transport};
    // rumqttc is built without a crypto provider: install ring once.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let path = ca_file
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/etc/ssl/certs/ca-certificates.crt"));
    let ca = std::fs::read(&path).map_err(|e| {
        BridgeError::Tls(format!(
            "cannot read the CA bundle {}: {e} (give one with --ca-file)",
            path.display()
        ))
    })?;
    o.set_transport(Transport::tls_with_config(TlsConfiguration::Simple {
        ca,
        alpn: None,
        client_auth: None,
    }));
    Ok(())
}

#[cfg(not(feature = "tls"))]
fn set_tls(_o: &mut MqttOptions, _ca_file: Option<&std::path::Path>) -> Result<(), BridgeError> {
    Err(BridgeError::Tls(
        "this usim was built without TLS; rebuild with `cargo build --release --features tls` \
         to use mqtts://"
            .to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_schemes_ports_and_ipv6() {
        let u = BrokerUrl::parse("mqtt://127.0.0.1:1884").unwrap();
        assert_eq!((u.tls, u.host.as_str(), u.port), (false, "127.0.0.1", 1884));
        assert_eq!(BrokerUrl::parse("localhost").unwrap().port, 1883);
        assert_eq!(BrokerUrl::parse("tcp://h:1").unwrap().port, 1);
        let u = BrokerUrl::parse("mqtts://broker.example").unwrap();
        assert!(u.tls);
        assert_eq!(u.port, 8883);
        let u = BrokerUrl::parse("mqtt://[::1]:2000/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 2000));
        assert_eq!(u.to_string(), "mqtt://[::1]:2000");
        assert_eq!(
            BrokerUrl::parse(DEFAULT_BROKER).unwrap().to_string(),
            DEFAULT_BROKER
        );
    }

    #[test]
    fn rejects_bad_urls() {
        for bad in [
            "http://h:1",
            "mqtt://:1883",
            "mqtt://h:0",
            "mqtt://h:99999",
            "mqtt://h:x",
            "mqtt://u@h",
            "mqtt://h/path",
            "mqtt://[::1",
        ] {
            assert!(BrokerUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[cfg(not(feature = "tls"))]
    #[test]
    fn mqtts_without_the_feature_says_how_to_get_it() {
        let spec = ConnectSpec::new(BrokerUrl::parse("mqtts://h").unwrap(), "c");
        let err = spec.mqtt_options().unwrap_err().to_string();
        assert!(err.contains("--features tls"), "{err}");
    }
}
