//! Vehicle configs (formats.md §1): TOML → validated [`VehicleConfig`].
//! (Being written: the loader is a stub.)
use std::path::Path;

use crate::model::Params;

/// MQTT settings of a live vehicle (`[mqtt]` table).
#[derive(Debug, Clone, PartialEq)]
pub struct MqttConfig {
    /// Broker URL, `mqtt://host:port` (or `mqtts://` with the `tls` feature).
    pub broker: String,
    /// First topic level: topics are `{topic_root}/{vehicle}/{VARIABLE}`.
    pub topic_root: String,
    /// Optional user name for the broker.
    pub username: Option<String>,
    /// Optional password for the broker.
    pub password: Option<String>,
}

impl Default for MqttConfig {
    fn default() -> Self {
        MqttConfig {
            broker: "mqtt://127.0.0.1:1883".to_string(),
            topic_root: "usim".to_string(),
            username: None,
            password: None,
        }
    }
}

/// A loaded, validated vehicle config.
#[derive(Debug, Clone)]
pub struct VehicleConfig {
    /// Vehicle name: MQTT topics, CSV, logs (default `"vehicle"`).
    pub name: String,
    /// Model parameters and start pose.
    pub params: Params,
    /// Iterations per second in live runs (default 10).
    pub app_tick: f64,
    /// MQTT settings.
    pub mqtt: MqttConfig,
    /// Warnings for values uSimMarine would reject ("unhandled config"), naming the key.
    pub warnings: Vec<String>,
}

/// A config that could not be loaded.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

/// Load a vehicle config file.
pub fn load_vehicle(path: &Path) -> Result<VehicleConfig, ConfigError> {
    Err(ConfigError(format!("{}: loader not written yet", path.display())))
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&w, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
