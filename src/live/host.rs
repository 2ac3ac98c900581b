//! The host's core and its one interface to transports, sans-IO: time and
//! mail are inputs, publications are outputs.
//!
//! An adapter (MQTT, MOOS, ROS 2, …) plugs in with four things:
//!
//! 1. **claim** its names first, with [`super::claim`]'s rule over its own
//!    wire (probe, owner answer, lower random number wins);
//! 2. **mail in**: it hands each received message to the vehicle's
//!    [`super::inbox::Inbox`] ([`Host::inbox`]; any thread, any time:
//!    `accept_bytes` for text payloads, `accept_payload` for typed ones);
//! 3. **publications out**: it implements [`Transport`] (connection state,
//!    one publication into this iteration's batch, the batch's end);
//! 4. **time**: at each deadline of its [`super::schedule::Schedule`] (or
//!    its lock-step / outside clock, [`super::clock`]) it calls
//!    [`Host::iterate`] with the vehicle clock.
//!
//! [`super::run::tick_loop`] is the deadline loop for adapters on tokio.
use std::sync::Arc;

use super::inbox::Inbox;
use super::vehicle::{LiveVehicle, USM_TIME};

pub use super::vehicle::{Refusal, Transport, Value};

/// Refusals kept between two [`Host::take_refusals`].
pub const MAX_REFUSALS: usize = 64;

/// Mail and drop counters of all vehicles, for `--stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MailCounters {
    /// Messages that did not parse or were refused by the model.
    pub bad_messages: u64,
    /// Messages dropped because a mailbox was full.
    pub mail_dropped: u64,
    /// Plain setpoints superseded before an iteration used them.
    pub mail_coalesced: u64,
}

/// The live vehicles of one process and their iteration.
#[derive(Debug)]
pub struct Host {
    vehicles: Vec<LiveVehicle>,
    mailed: Vec<bool>,
    refusals: Vec<Refusal>,
    time_text: String,
}

impl Host {
    /// A host for these vehicles (one for `usim run`/`usim moos`, many for
    /// a fleet), in this order.
    pub fn new(vehicles: Vec<LiveVehicle>) -> Host {
        Host {
            mailed: Vec::with_capacity(vehicles.len()),
            vehicles,
            refusals: Vec::new(),
            time_text: String::new(),
        }
    }

    /// The vehicles, in the order given.
    pub fn vehicles(&self) -> &[LiveVehicle] {
        &self.vehicles
    }

    /// Vehicle `i`'s inbox, for the transport's receiving side.
    pub fn inbox(&self, i: usize) -> Arc<Inbox> {
        Arc::clone(&self.vehicles[i].inbox)
    }

    /// One iteration at vehicle clock `t_s` (s): every vehicle takes its
    /// mail and steps; while `out` is connected, each publishes its set,
    /// then each its `USM_TIME` (a watcher that saw it has seen the whole
    /// iteration), then the batch is flushed. Vehicles with mail go first:
    /// a command's effect leads the iteration's batch (the vehicles do not
    /// interact, so the order changes nothing else). Returns the
    /// publications `out` refused.
    pub fn iterate(&mut self, t_s: f64, out: &mut impl Transport) -> u64 {
        let connected = out.connected();
        let mut failed = 0;
        self.mailed.clear();
        self.mailed
            .extend(self.vehicles.iter().map(|v| v.inbox.pending() > 0));
        for with_mail in [true, false] {
            for (i, v) in self.vehicles.iter_mut().enumerate() {
                if self.mailed[i] != with_mail {
                    continue;
                }
                v.iterate(t_s, &mut self.refusals, MAX_REFUSALS);
                if connected {
                    failed += v.publish(i, t_s, out);
                }
            }
        }
        if !connected {
            return failed;
        }
        if self.vehicles.iter().any(|v| v.set.usm_time) {
            use std::fmt::Write;
            self.time_text.clear();
            let _ = write!(self.time_text, "{t_s}");
            for (i, v) in self.vehicles.iter().enumerate() {
                if v.set.usm_time {
                    failed += u64::from(!out.publish(i, USM_TIME, Value::Text(&self.time_text)));
                }
            }
        }
        failed + out.flush()
    }

    /// The model's refusals since the last call (at most [`MAX_REFUSALS`]).
    pub fn take_refusals(&mut self) -> Vec<Refusal> {
        std::mem::take(&mut self.refusals)
    }

    /// Mail counters summed over the vehicles.
    pub fn counters(&self) -> MailCounters {
        let mut c = MailCounters::default();
        for v in &self.vehicles {
            c.bad_messages += v.inbox.bad_messages();
            c.mail_dropped += v.mail_dropped;
            c.mail_coalesced += v.inbox.coalesced();
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::super::vehicle::{PubSet, NODE_REPORT};
    use super::*;
    use crate::config::VehicleConfig;

    /// A transport that keeps what it is given.
    #[derive(Default)]
    struct Keep {
        up: bool,
        got: Vec<(usize, String, String)>,
        flushed: usize,
    }

    impl Transport for Keep {
        fn connected(&self) -> bool {
            self.up
        }
        fn publish(&mut self, vehicle: usize, var: &str, value: Value<'_>) -> bool {
            let v = match value {
                Value::Number(x) => format!("{x}"),
                Value::Text(s) => s.to_string(),
            };
            self.got.push((vehicle, var.to_string(), v));
            true
        }
        fn flush(&mut self) -> u64 {
            self.flushed += 1;
            0
        }
    }

    fn host(n: usize, set: PubSet) -> Host {
        Host::new(
            (0..n)
                .map(|i| {
                    let cfg = VehicleConfig {
                        name: format!("v{i}"),
                        platform_type: "kayak".into(),
                        ..VehicleConfig::default()
                    };
                    LiveVehicle::new(&cfg, 100.0, set, format!("r/v{i}/"))
                })
                .collect(),
        )
    }

    const ALL: PubSet = PubSet {
        postings: true,
        pid_output: true,
        node_report: true,
        usm_time: true,
    };

    #[test]
    fn mail_is_applied_and_mailed_vehicles_publish_first_then_every_time() {
        let mut h = host(3, ALL);
        let mut drops = super::super::inbox::DropLog::new();
        h.inbox(2).accept_bytes(
            "r/v2/DESIRED_THRUST",
            Some("DESIRED_THRUST"),
            b"100",
            false,
            &mut drops,
        );
        let mut out = Keep {
            up: true,
            ..Keep::default()
        };
        h.iterate(101.0, &mut out);
        assert_eq!(out.flushed, 1);
        // Vehicle 2 (mail) first, then 0 and 1; USM_TIME of each at the end.
        let order: Vec<usize> = out
            .got
            .iter()
            .filter(|g| g.1 == NODE_REPORT)
            .map(|g| g.0)
            .collect();
        assert_eq!(order, [2, 0, 1]);
        let tail: Vec<(usize, &str, &str)> = out.got[out.got.len() - 3..]
            .iter()
            .map(|g| (g.0, g.1.as_str(), g.2.as_str()))
            .collect();
        assert_eq!(
            tail,
            [
                (0, "USM_TIME", "101"),
                (1, "USM_TIME", "101"),
                (2, "USM_TIME", "101")
            ]
        );
        // The command reached the model: only vehicle 2 moves.
        for k in 2..30 {
            h.iterate(100.0 + f64::from(k), &mut out);
        }
        assert!(h.vehicles()[2].vehicle.nav().sog > 0.5);
        assert_eq!(h.vehicles()[0].vehicle.nav().sog, 0.0);
        let v2: serde_json::Value = serde_json::from_str(
            &out.got
                .iter()
                .find(|g| g.0 == 2 && g.1 == NODE_REPORT)
                .unwrap()
                .2,
        )
        .unwrap();
        assert_eq!(v2["platform_type"], "kayak");
        assert_eq!(h.counters().bad_messages, 0);
    }

    #[test]
    fn nothing_is_published_while_disconnected_and_refusals_are_kept() {
        let mut h = host(1, ALL);
        let inbox = h.inbox(0);
        // Parses, but the model refuses a negative water depth.
        let mut drops = super::super::inbox::DropLog::new();
        inbox.accept_bytes(
            "r/v0/WATER_DEPTH",
            Some("WATER_DEPTH"),
            b"-5",
            false,
            &mut drops,
        );
        let mut out = Keep::default();
        assert_eq!(h.iterate(101.0, &mut out), 0);
        assert!(out.got.is_empty());
        assert_eq!(out.flushed, 0);
        let r = h.take_refusals();
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(
            (r[0].vehicle.as_str(), r[0].var.as_str()),
            ("v0", "WATER_DEPTH")
        );
        assert_eq!(h.counters().bad_messages, 1);
        assert!(h.take_refusals().is_empty());
    }

    #[test]
    fn a_report_only_set_publishes_two_variables() {
        let set = PubSet {
            postings: false,
            pid_output: false,
            node_report: true,
            usm_time: true,
        };
        let mut h = host(2, set);
        assert!(h.vehicles()[0].echoes.is_empty());
        let mut out = Keep {
            up: true,
            ..Keep::default()
        };
        h.iterate(100.1, &mut out);
        let vars: Vec<&str> = out.got.iter().map(|g| g.1.as_str()).collect();
        assert_eq!(vars, ["NODE_REPORT", "NODE_REPORT", "USM_TIME", "USM_TIME"]);
    }
}
