//! One vehicle's ROS 2 topics on a [`Participant`]: what it publishes each
//! step (`/NAME/odom`, `/NAME/pose`, `/NAME/fix`, its part of `/tf`), its
//! variables (`/NAME/nav_x`, …), the commands it reads (`/NAME/desired_rudder`,
//! …) and its error topic. The messages come from [`crate::ros2::convert`];
//! this only moves them. [`Graph`] holds the per-process topics (`/tf`,
//! `/clock`).
use std::collections::HashMap;

use rustdds::SampleIdentity;

use super::{DdsError, Participant, Reader, Writer};
use crate::command::{Command, MessageError, Payload};
use crate::model::{Publication, Snapshot};
use crate::ros2::convert::{self, StepMessages, VarMessage, VehicleFrames};
use crate::ros2::msg::{
    Clock, Float64, Gid, Message, NavSatFix, NodeEntitiesInfo, Odometry, PoseStamped, StringMsg,
    TfMessage, TriggerRequest, TriggerResponse,
};
use crate::ros2::{names, qos};

/// The commands a vehicle reads by default: the actuators, the V22 PID's
/// setpoints, `USM_RESET`, `DRIFT_VECTOR_ADD` and timed `SET` lists.
pub const DEFAULT_COMMANDS: &[&str] = &[
    "DESIRED_THRUST",
    "DESIRED_RUDDER",
    "DESIRED_ELEVATOR",
    "DESIRED_THRUST_L",
    "DESIRED_THRUST_R",
    "DESIRED_HEADING",
    "DESIRED_SPEED",
    "DESIRED_DEPTH",
    "USM_RESET",
    "DRIFT_VECTOR_ADD",
    "SET",
];

/// Most variable topics one vehicle opens (each posting name is one topic).
pub const MAX_VAR_TOPICS: usize = 64;

/// The per-process topics: `/tf` (every vehicle's transforms) and `/clock`.
pub struct Graph {
    /// `/tf` (`tf2_msgs/TFMessage`).
    pub tf: Writer,
    /// `/clock` (`rosgraph_msgs/Clock`).
    pub clock: Writer,
}

impl Graph {
    /// Open `/tf` and `/clock` on `p`.
    pub fn open(p: &mut Participant) -> Result<Graph, DdsError> {
        Ok(Graph {
            tf: p.writer(names::TF, TfMessage::NAME, qos::TF)?,
            clock: p.writer(names::CLOCK, Clock::NAME, qos::CLOCK)?,
        })
    }

    /// The process's node `/usim`: `/tf`, `/clock` and the readers in
    /// `readers` (the lock-step `/usim/step` reader, when there is one).
    pub fn node(&self, readers: Vec<Gid>) -> NodeEntitiesInfo {
        NodeEntitiesInfo {
            node_namespace: "/".into(),
            node_name: names::NODE_NAME.into(),
            reader_gid_seq: readers,
            writer_gid_seq: vec![self.tf.gid(), self.clock.gid()],
        }
    }

    /// Publish usim clock `clock` (s) on `/clock`.
    pub fn publish_clock(&self, clock: f64) -> Result<(), DdsError> {
        self.clock.publish(&convert::clock(clock))
    }
}

/// One vehicle's topics.
pub struct VehiclePorts {
    frames: VehicleFrames,
    odom: Writer,
    pose: Writer,
    fix: Writer,
    errors: Writer,
    commands: Vec<(String, Reader)>,
    vars: HashMap<String, Writer>,
    ack: Option<Reader>,
    reset_requests: Reader,
    reset_replies: Writer,
    last: Option<StepMessages>,
}

/// A request to a vehicle's reset service: who asked (the request's
/// sample identity, which the reply names) and whether it is a
/// `std_srvs/srv/Trigger` request (`Err`: why not).
pub struct ResetRequest {
    /// The request's sample identity.
    pub id: SampleIdentity,
    /// `Ok` for a well-formed request.
    pub valid: Result<(), String>,
}

impl VehiclePorts {
    /// Open vehicle `name`'s topics on `p`, reading the command variables
    /// `commands` (usim names, e.g. [`DEFAULT_COMMANDS`]). The name must be
    /// a ROS name ([`names::check_ros_name`]); a variable usim does not
    /// read is an error.
    pub fn open(
        p: &mut Participant,
        name: &str,
        commands: &[&str],
    ) -> Result<VehiclePorts, DdsError> {
        names::check_ros_name(name).map_err(|e| DdsError(format!("vehicle `{name}`: {e}")))?;
        let mut readers = Vec::with_capacity(commands.len());
        for var in commands {
            let Some(ty) = convert::command_type(var) else {
                return Err(DdsError(format!("{var} is not a usim command variable")));
            };
            let topic = names::var_topic(name, var);
            let token = var.to_ascii_lowercase();
            readers.push((token, p.reader(&topic, ty, qos::DEFAULT)?));
        }
        let service = names::reset_service(name);
        let reset_requests = p.reader_dds(
            &names::dds_request_topic(&service),
            &names::dds_type(TriggerRequest::NAME),
            qos::SERVICES,
        )?;
        let reset_replies = p.writer_dds(
            &names::dds_reply_topic(&service),
            &names::dds_type(TriggerResponse::NAME),
            qos::SERVICES,
        )?;
        Ok(VehiclePorts {
            reset_requests,
            reset_replies,
            frames: VehicleFrames::new(name),
            odom: p.writer(&names::odom(name), Odometry::NAME, qos::DEFAULT)?,
            pose: p.writer(&names::pose(name), PoseStamped::NAME, qos::DEFAULT)?,
            fix: p.writer(&names::fix(name), NavSatFix::NAME, qos::SENSOR_DATA)?,
            errors: p.writer(&names::errors(name), StringMsg::NAME, qos::DEFAULT)?,
            commands: readers,
            vars: HashMap::new(),
            ack: None,
            last: None,
        })
    }

    /// The vehicle's name.
    pub fn name(&self) -> &str {
        &self.frames.name
    }

    /// Publish one step: snapshot `s` at usim clock `clock` (s) on the
    /// vehicle's topics and its transforms on `graph`'s `/tf`. Returns the
    /// messages sent.
    pub fn publish_step(
        &mut self,
        graph: &Graph,
        s: &Snapshot,
        clock: f64,
    ) -> Result<StepMessages, DdsError> {
        let m = self.frames.step(s, clock);
        self.odom.publish(&m.odom)?;
        self.pose.publish(&m.pose)?;
        graph.tf.publish(&m.tf)?;
        if let Some(f) = &m.fix {
            self.fix.publish(f)?;
        }
        self.last = Some(m.clone());
        Ok(m)
    }

    /// Publish the last step's messages again (same stamps: a lock-step
    /// subscriber that missed them, e.g. before discovery, gets them now).
    pub fn republish_step(&self, graph: &Graph) -> Result<(), DdsError> {
        let Some(m) = &self.last else { return Ok(()) };
        self.odom.publish(&m.odom)?;
        self.pose.publish(&m.pose)?;
        graph.tf.publish(&m.tf)?;
        if let Some(f) = &m.fix {
            self.fix.publish(f)?;
        }
        Ok(())
    }

    /// Publish one usim posting `var` (`NAV_X`, …) on `/NAME/<var lower
    /// case>`: a number as `std_msgs/Float64` (not sent when it is not
    /// finite), text as `std_msgs/String`. The topic is opened when `var` is
    /// first posted, up to [`MAX_VAR_TOPICS`]; `Ok(false)` when it is not
    /// sent for that (too many names, or not a ROS name).
    pub fn publish_var(
        &mut self,
        p: &mut Participant,
        var: &str,
        msg: VarMessage,
    ) -> Result<bool, DdsError> {
        if !self.vars.contains_key(var) {
            if self.vars.len() >= MAX_VAR_TOPICS || names::check_ros_name(var).is_err() {
                return Ok(false);
            }
            let ty = match msg {
                VarMessage::Number(_) => Float64::NAME,
                VarMessage::Text(_) => StringMsg::NAME,
            };
            let w = p.writer(&names::var_topic(self.name(), var), ty, qos::DEFAULT)?;
            self.vars.insert(var.to_string(), w);
        }
        let w = &self.vars[var];
        match msg {
            VarMessage::Number(m) => w.publish(&m)?,
            VarMessage::Text(m) => w.publish(&m)?,
        }
        Ok(true)
    }

    /// Publish usim postings (`NAV_X`, …) on `/NAME/<var lower case>`:
    /// numbers as `std_msgs/Float64`, text as `std_msgs/String`. A
    /// variable's topic is opened when it is first posted, up to
    /// [`MAX_VAR_TOPICS`]; later new names are dropped.
    pub fn publish_vars(
        &mut self,
        p: &mut Participant,
        pubs: &[Publication],
    ) -> Result<(), DdsError> {
        for pb in pubs {
            if let Some(msg) = convert::publication(&pb.value) {
                self.publish_var(p, &pb.var, msg)?;
            }
        }
        Ok(())
    }

    /// The commands that arrived since the last call (at most
    /// [`super::MAX_TAKE`] per topic), parsed with the same checks as every
    /// transport's; a refused one is an `Err` (see [`Self::report`]).
    pub fn poll_commands(&mut self) -> Vec<Result<Command, MessageError>> {
        let mut out = Vec::new();
        for (token, r) in &mut self.commands {
            for s in r.take() {
                out.push(convert::command_from_cdr(token, &s.body, s.little_endian));
            }
        }
        out
    }

    /// The commands that arrived since the last call (at most
    /// [`super::MAX_TAKE`] per topic) as variable and payload, before
    /// usim's payload checks (a live host's inbox makes them); a sample
    /// that is not the topic's message type is an `Err`.
    pub fn poll_payloads(&mut self) -> Vec<Result<(String, Payload), MessageError>> {
        let mut out = Vec::new();
        for (token, r) in &mut self.commands {
            for s in r.take() {
                out.push(convert::payload_from_cdr(token, &s.body, s.little_endian));
            }
        }
        out
    }

    /// Read `/NAME/usim/ack` (`std_msgs/Float64`) from now on (lock-step).
    pub fn open_ack(&mut self, p: &mut Participant) -> Result<(), DdsError> {
        self.ack = Some(p.reader(&names::ack(self.name()), Float64::NAME, qos::DEFAULT)?);
        Ok(())
    }

    /// The acknowledged stamps (s) since the last call; a sample that is
    /// not a `std_msgs/Float64` is an `Err` naming the topic.
    pub fn poll_acks(&mut self) -> Vec<Result<f64, String>> {
        match &mut self.ack {
            Some(r) => r
                .take_messages::<Float64>()
                .into_iter()
                .map(|m| m.map(|m| m.data))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Publish a refused command on `/NAME/usim/errors` (the text usim
    /// logs: variable, payload, reason).
    pub fn report(&self, e: &MessageError) -> Result<(), DdsError> {
        self.errors.publish(&StringMsg {
            data: format!("{}={}: {}", e.var, e.payload, e.reason),
        })
    }

    /// The requests to `/NAME/usim/reset` since the last call (at most
    /// [`super::MAX_TAKE`]).
    pub fn poll_reset(&mut self) -> Vec<ResetRequest> {
        self.reset_requests
            .take_identified()
            .into_iter()
            .map(|(s, id)| ResetRequest {
                id,
                valid: TriggerRequest::from_body(&s.body, s.little_endian)
                    .map(|_| ())
                    .map_err(|e| format!("{}: {e}", names::reset_service(self.name()))),
            })
            .collect()
    }

    /// Answer reset request `to` with `answer`.
    pub fn reply_reset(
        &self,
        to: SampleIdentity,
        answer: &TriggerResponse,
    ) -> Result<(), DdsError> {
        self.reset_replies.reply(answer, to)
    }

    /// How many variable topics are open (each posting opens one when it
    /// is first published: the node's writers change).
    pub fn var_topics(&self) -> usize {
        self.vars.len()
    }

    /// The vehicle's node, `/NAME/usim`: the gids of its readers and
    /// writers (and of `extra_readers`, `extra_writers`: its claim
    /// topic's), as `ros_discovery_info` announces it.
    pub fn node(&self, extra_readers: &[Gid], extra_writers: &[Gid]) -> NodeEntitiesInfo {
        let mut readers: Vec<Gid> = self.commands.iter().map(|(_, r)| r.gid()).collect();
        readers.extend(self.ack.iter().map(Reader::gid));
        readers.push(self.reset_requests.gid());
        readers.extend_from_slice(extra_readers);
        let mut writers = vec![
            self.odom.gid(),
            self.pose.gid(),
            self.fix.gid(),
            self.errors.gid(),
            self.reset_replies.gid(),
        ];
        let mut vars: Vec<(&String, &Writer)> = self.vars.iter().collect();
        vars.sort_by(|a, b| a.0.cmp(b.0));
        writers.extend(vars.into_iter().map(|(_, w)| w.gid()));
        writers.extend_from_slice(extra_writers);
        NodeEntitiesInfo {
            node_namespace: names::node_namespace(self.name()),
            node_name: names::NODE_NAME.into(),
            reader_gid_seq: readers,
            writer_gid_seq: writers,
        }
    }

    /// Readers matched with the odometry writer (0 until discovery).
    pub fn odom_subscribers(&mut self) -> usize {
        self.odom.matched()
    }
}
