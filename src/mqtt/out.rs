//! The MQTT side of the live host's [`Transport`]: each vehicle's
//! publications on `{topic_root}/{name}/{VARIABLE}`, QoS 0, not retained,
//! through rumqttc (`usim run`, a fleet on `mqtts://`) or the fleet's
//! iteration buffer ([`super::burst`]), numbers as their shortest decimal
//! text.
use std::collections::HashMap;

use rumqttc::{AsyncClient, QoS};

use super::burst::PacketBuf;
use super::topics::{Topics, NODE_REPORT, USM_TIME};
use crate::config::{PublishMode, VehicleConfig};
use crate::live::host::{Transport, Value};
use crate::live::vehicle::{LiveVehicle, PubSet};

/// What a vehicle of `cfg` publishes on MQTT: with `publish = "all"` every
/// variable on its topic and `PID_OUTPUT`, else only `NODE_REPORT` and
/// `USM_TIME` (plus `NODE_REPORT_LOCAL` when configured).
pub fn pub_set(cfg: &VehicleConfig) -> PubSet {
    let all = cfg.mqtt.publish == PublishMode::All;
    PubSet {
        postings: all,
        pid_output: all,
        node_report: true,
        usm_time: true,
    }
}

/// A live vehicle for MQTT: its config's [`pub_set`], log lines naming
/// its topics.
pub fn live_vehicle(cfg: &VehicleConfig, topics: &Topics, start_time_s: f64) -> LiveVehicle {
    LiveVehicle::new(cfg, start_time_s, pub_set(cfg), topics.base().to_string())
}

/// One vehicle's topics, each published variable's made once.
#[derive(Debug)]
pub struct VehicleTopics {
    /// The vehicle's topics.
    pub topics: Topics,
    node_report: String,
    time: String,
    cache: HashMap<String, String>,
}

impl VehicleTopics {
    /// The topics of `topics`' vehicle.
    pub fn new(topics: Topics) -> VehicleTopics {
        VehicleTopics {
            node_report: topics.var(NODE_REPORT),
            time: topics.var(USM_TIME),
            topics,
            cache: HashMap::new(),
        }
    }

    /// The topic of `var`.
    fn of(&mut self, var: &str) -> &str {
        match var {
            NODE_REPORT => &self.node_report,
            USM_TIME => &self.time,
            _ => {
                if !self.cache.contains_key(var) {
                    let t = self.topics.var(var);
                    self.cache.insert(var.to_string(), t);
                }
                &self.cache[var]
            }
        }
    }
}

/// Where publications go: the rumqttc client (one request, topic and
/// payload copied, per message) or one buffer of `PUBLISH` packets
/// (encoded in place).
pub enum Out<'a> {
    /// Through rumqttc's request channel.
    Client(&'a AsyncClient),
    /// Into one buffer of `PUBLISH` packets.
    Burst(&'a mut PacketBuf),
}

impl Out<'_> {
    /// Queue one publication; false if refused (queue full, packet too big).
    pub fn send(&mut self, topic: &str, payload: &[u8]) -> bool {
        match self {
            Out::Client(c) => c
                .try_publish(topic, QoS::AtMostOnce, false, payload.to_vec())
                .is_ok(),
            Out::Burst(b) => b.publish(topic, payload),
        }
    }
}

/// The host's [`Transport`] for one iteration on MQTT: `out` is `None`
/// while disconnected.
pub struct MqttOut<'a> {
    /// Where this iteration's publications go.
    pub out: Option<Out<'a>>,
    /// The host's vehicles' topics, in the host's order.
    pub topics: &'a mut [VehicleTopics],
}

impl Transport for MqttOut<'_> {
    fn connected(&self) -> bool {
        self.out.is_some()
    }

    fn publish(&mut self, vehicle: usize, var: &str, value: Value<'_>) -> bool {
        let (Some(out), Some(t)) = (&mut self.out, self.topics.get_mut(vehicle)) else {
            return false;
        };
        let topic = t.of(var);
        match value {
            Value::Number(v) => out.send(topic, format!("{v}").as_bytes()),
            Value::Text(s) => out.send(topic, s.as_bytes()),
        }
    }
}
