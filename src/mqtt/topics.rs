//! Topic names of one vehicle: `{topic_root}/{vehicle}/{VARIABLE}`
//! (docs/formats.md §4). The only place, with [`crate::command`], that knows them.
use crate::command::SUBSCRIPTIONS;

use super::BridgeError;

/// The retained status topic's last level (`online` / `offline`).
pub const STATUS: &str = "status";
pub use crate::live::vehicle::{NODE_REPORT, NODE_REPORT_LOCAL, PID_OUTPUT, USM_TIME};
/// Variables a vehicle posts only when they change, not every iteration:
/// a watcher may wait a long time for them.
pub const ON_CHANGE: &[&str] = &["USM_DRIFT_SUMMARY", "USM_FSUMMARY", "USM_RESET_COUNT"];
/// Payload of [`STATUS`] while the vehicle runs (retained).
pub const ONLINE: &str = "online";
/// Payload of [`STATUS`] after a clean exit, and the MQTT last will.
pub const OFFLINE: &str = "offline";

/// Subscriptions of a tool to the variables `vars` (with their QoS) of the
/// listed vehicles, or of every vehicle under `topic_root` (`+`); the
/// names and the root are checked first.
pub fn vehicle_filters(
    topic_root: &str,
    vehicles: Option<&[String]>,
    vars: &[(&str, rumqttc::QoS)],
) -> Result<Vec<rumqttc::SubscribeFilter>, BridgeError> {
    let mut f = Vec::new();
    match vehicles {
        Some(list) => {
            for v in list {
                let t = Topics::new(topic_root, v)?;
                for (var, qos) in vars {
                    f.push(rumqttc::SubscribeFilter::new(t.var(var), *qos));
                }
            }
        }
        None => {
            Topics::new(topic_root, "x")?;
            for (var, qos) in vars {
                let filter = format!("{topic_root}/+/{var}");
                f.push(rumqttc::SubscribeFilter::new(filter, *qos));
            }
        }
    }
    Ok(f)
}

/// `(vehicle, variable)` of a topic `{prefix}{vehicle}/{variable}` (`prefix`
/// is the root with its trailing slash), or `None` for any other topic.
pub fn vehicle_var<'a>(prefix: &str, topic: &'a str) -> Option<(&'a str, &'a str)> {
    topic
        .strip_prefix(prefix)
        .and_then(|rest| rest.split_once('/'))
        .filter(|(v, var)| !v.is_empty() && !var.contains('/'))
}

/// The topics of one vehicle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    /// `{topic_root}/{vehicle}/`, with the trailing slash.
    base: String,
    /// Length of `{topic_root}` in `base`.
    root_len: usize,
}

impl Topics {
    /// Topics for `vehicle` under `topic_root`. The root may have several
    /// levels (`fleet/usim`); neither may be empty or contain `+`, `#` or
    /// NUL, and the vehicle name may not contain `/`.
    pub fn new(topic_root: &str, vehicle: &str) -> Result<Topics, BridgeError> {
        check_level("topic root", topic_root, true)?;
        crate::config::check_vehicle_name(vehicle)
            .map_err(|why| BridgeError::BadTopic(format!("vehicle name {vehicle:?}: {why}")))?;
        check_level("vehicle name", vehicle, false)?;
        Ok(Topics {
            base: format!("{topic_root}/{vehicle}/"),
            root_len: topic_root.len(),
        })
    }

    /// The topic root these topics are under.
    pub fn root(&self) -> &str {
        &self.base[..self.root_len]
    }

    /// `{topic_root}/{vehicle}/`: the prefix of each of its topics.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The topic of `var` (a MOOS variable name such as `NAV_X`).
    pub fn var(&self, var: &str) -> String {
        format!("{}{var}", self.base)
    }

    /// The retained status topic.
    pub fn status(&self) -> String {
        self.var(STATUS)
    }

    /// `{topic_root}/{vehicle}/#`: everything of this vehicle (for watchers).
    pub fn all(&self) -> String {
        format!("{}#", self.base)
    }

    /// One filter per subscribed variable ([`SUBSCRIPTIONS`]). A vehicle
    /// subscribes to these only, not to `#`, so it never hears its own
    /// publications or another vehicle's mail.
    pub fn command_filters(&self) -> Vec<String> {
        self.command_filters_except(&[])
    }

    /// [`Topics::command_filters`] without the variables in `except`
    /// (those the vehicle publishes itself).
    pub fn command_filters_except(&self, except: &[&str]) -> Vec<String> {
        SUBSCRIPTIONS
            .iter()
            .filter(|(name, _, _)| !except.contains(name))
            .map(|(name, _, _)| self.var(name))
            .collect()
    }

    /// The variable of `topic` if the topic belongs to this vehicle and has
    /// exactly one level below it.
    pub fn var_of<'a>(&self, topic: &'a str) -> Option<&'a str> {
        let var = topic.strip_prefix(self.base.as_str())?;
        (!var.is_empty() && !var.contains('/')).then_some(var)
    }
}

/// Check a variable name given on a command line (`usim post`, `usim watch`).
pub fn check_var(var: &str) -> Result<(), BridgeError> {
    check_level("variable", var, false)
}

fn check_level(what: &str, s: &str, slash_ok: bool) -> Result<(), BridgeError> {
    let bad = |why: &str| Err(BridgeError::BadTopic(format!("{what} {s:?} {why}")));
    if s.is_empty() {
        return bad("is empty");
    }
    if s.contains(['+', '#', '\0']) {
        return bad("may not contain '+', '#' or NUL (MQTT wildcards)");
    }
    if !slash_ok && s.contains('/') {
        return bad("may not contain '/'");
    }
    if slash_ok && (s.starts_with('/') || s.ends_with('/') || s.contains("//")) {
        return bad("may not start or end with '/' or have an empty level");
    }
    Ok(())
}

/// The last topic level of a vehicle's retained model (`classic` or `v22`),
/// published at each connection so that `usim post` can tell whether the
/// vehicle reads a variable.
pub const MODEL: &str = "model";

/// The retained [`MODEL`] of a vehicle that lives in a MOOS community
/// (published by the MOOS⇄MQTT bridge): its inputs are any MOOS variable,
/// so `usim post` does not check them against uSimMarine's.
pub const MOOS_MODEL: &str = "moos";

/// The model name a vehicle publishes on [`MODEL`].
pub fn model_name(variant: crate::model::ModelVariant) -> &'static str {
    match variant {
        crate::model::ModelVariant::Classic => "classic",
        crate::model::ModelVariant::V22 => "v22",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_of_accepts_only_own_single_level_topics() {
        let t = Topics::new("usim", "alpha").unwrap();
        assert_eq!(t.var("NAV_X"), "usim/alpha/NAV_X");
        assert_eq!(
            t.var_of("usim/alpha/DESIRED_THRUST"),
            Some("DESIRED_THRUST")
        );
        assert_eq!(t.var_of("usim/alphabet/DESIRED_THRUST"), None);
        assert_eq!(t.var_of("usim/beta/DESIRED_THRUST"), None);
        assert_eq!(t.var_of("usim/alpha/a/b"), None);
        assert_eq!(t.var_of("usim/alpha/"), None);
    }

    #[test]
    fn filters_are_one_per_subscribed_variable() {
        let t = Topics::new("fleet/usim", "a").unwrap();
        let f = t.command_filters();
        assert_eq!(f.len(), SUBSCRIPTIONS.len());
        assert!(f.contains(&"fleet/usim/a/USM_RESET".to_string()));
        assert!(f.iter().all(|s| !s.contains('#') && !s.contains('+')));
    }

    #[test]
    fn wildcards_and_slashes_are_rejected() {
        assert!(Topics::new("usim", "a/b").is_err());
        assert!(Topics::new("usim", "a+").is_err());
        assert!(Topics::new("us#im", "a").is_err());
        assert!(Topics::new("", "a").is_err());
        assert!(Topics::new("usim/", "a").is_err());
        assert!(Topics::new("usim", "").is_err());
        assert!(check_var("NAV_X").is_ok());
        assert!(check_var("NAV/X").is_err());
    }
}
