//! The ROS 2 adapter on the live host (`usim ros2`): the vehicles are a
//! [`Host`] (the one live loop of every transport); this only moves
//! messages between the host and DDS.
//!
//! * mail in: each vehicle's command topics ([`VehiclePorts::poll_payloads`])
//!   into its [`crate::live::inbox::Inbox`], with the same checks and
//!   drop log as MQTT; refused ones (bad CDR, bad payload, refused by the
//!   model) are logged and answered on `/NAME/usim/errors`, at most
//!   [`MAX_REPORTS_PER_S`] a second per vehicle;
//! * publications out: the host's postings (`NAV_*`, `USM_*`) through
//!   [`Transport`], then each vehicle's odometry, pose, fix and `/tf`, and
//!   `/clock` first;
//! * time: [`Ros2Node::iterate`] at each deadline of the live schedule
//!   (`crate::live::run::tick_loop`), or in lock-step
//!   ([`Ros2Node::run_lockstep`], the rules of [`crate::ros2::lockstep`]).
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use super::claim::{self, ClaimGuard};
use super::vehicle::{Graph, VehiclePorts, DEFAULT_COMMANDS};
use super::{DdsError, Participant, Reader, Writer};
use crate::command::MessageError;
use crate::command::Payload;
use crate::config::VehicleConfig;
use crate::live::claim::Claimant;
use crate::live::host::{Host, Transport, Value};
use crate::live::inbox::DropLog;
use crate::live::vehicle::{LiveVehicle, PubSet};
use crate::ros2::convert::{self, VarMessage};
use crate::ros2::lockstep::{resend_after_s, Ack, AckGate, Mode, StepRequests, STEP_TOPIC};
use crate::ros2::msg::{
    Float64, Message, NodeEntitiesInfo, ParticipantEntitiesInfo, StringMsg, TriggerResponse,
};
use crate::ros2::{names, qos};

/// Most refused commands answered on one vehicle's error topic per second
/// (the rest are counted in the log: a flood of bad commands does not
/// become a flood of answers).
pub const MAX_REPORTS_PER_S: u32 = 20;

/// Longest lock-step waits before it sends the current iteration again to
/// the vehicles that have not acknowledged it (a subscriber that joined
/// late, or lost a sample, gets it); the wait is twice the time the last
/// iteration took ([`resend_after_s`]), at least [`RESEND_MIN`].
pub const REPUBLISH_EVERY: Duration = Duration::from_millis(250);

/// Shortest wait before lock-step sends an iteration again.
pub const RESEND_MIN: Duration = Duration::from_millis(10);

/// How often lock-step reads every waiting vehicle's acknowledgements (in
/// between, it reads them in order up to the first with nothing new).
pub const FULL_SWEEP_EVERY: Duration = Duration::from_millis(2);

/// How long `--steps N` in ack mode waits for the last iteration's
/// acknowledgements before it stops.
pub const FINAL_ACK_WAIT: Duration = Duration::from_secs(5);

/// What [`Ros2Node::open`] needs.
#[derive(Debug, Clone)]
pub struct NodeOptions {
    /// DDS domain (`ROS_DOMAIN_ID`).
    pub domain: u16,
    /// The vehicles (names final, each a ROS name).
    pub vehicles: Vec<VehicleConfig>,
    /// Clock at start-up, s.
    pub start_time_s: f64,
    /// Publish usim's postings (`NAV_*`, `USM_*`) as typed topics.
    pub postings: bool,
    /// Lock-step rule, or `None` for the live clock.
    pub lockstep: Option<Mode>,
    /// Listening window of the name claim; `None`: no claim.
    pub claim_window: Option<Duration>,
}

/// Refused commands answered per second on one error topic.
#[derive(Debug)]
struct ReportBudget {
    window: Instant,
    sent: u32,
    held: u64,
}

impl ReportBudget {
    fn new() -> ReportBudget {
        ReportBudget {
            window: Instant::now(),
            sent: 0,
            held: 0,
        }
    }

    /// Whether one more answer may go out now; the answers held back in
    /// the window that just closed, if any.
    fn allow(&mut self, now: Instant) -> (bool, u64) {
        let mut closed = 0;
        if now.duration_since(self.window) >= Duration::from_secs(1) {
            self.window = now;
            self.sent = 0;
            closed = std::mem::take(&mut self.held);
        }
        if self.sent < MAX_REPORTS_PER_S {
            self.sent += 1;
            (true, closed)
        } else {
            self.held += 1;
            (false, closed)
        }
    }
}

/// The host's publications onto the vehicles' topics.
struct Out<'a> {
    p: &'a mut Participant,
    ports: &'a mut [VehiclePorts],
}

impl Transport for Out<'_> {
    fn connected(&self) -> bool {
        true
    }

    fn publish(&mut self, vehicle: usize, var: &str, value: Value<'_>) -> bool {
        let msg = match value {
            Value::Number(x) if x.is_finite() => VarMessage::Number(Float64 { data: x }),
            // Not set yet: nothing non-finite is published (not a refusal).
            Value::Number(_) => return true,
            Value::Text(s) => VarMessage::Text(StringMsg {
                data: s.to_string(),
            }),
        };
        let Some(port) = self.ports.get_mut(vehicle) else {
            return false;
        };
        match port.publish_var(self.p, var, msg) {
            Ok(sent) => sent,
            Err(e) => {
                debug!("{e}");
                false
            }
        }
    }
}

/// One `usim ros2` process: a DDS participant, the vehicles' topics and the
/// live host.
pub struct Ros2Node {
    // Fields drop in order: the endpoints before their participant.
    graph: Graph,
    ports: Vec<VehiclePorts>,
    claims: Vec<ClaimGuard>,
    step_reader: Option<Reader>,
    discovery_info: Writer,
    announced_var_topics: usize,
    p: Participant,
    host: Host,
    drops: DropLog,
    budgets: Vec<ReportBudget>,
    steps: StepRequests,
    gate: AckGate,
    clock: f64,
    iterations: u64,
}

impl Ros2Node {
    /// Join the domain, claim the vehicle names, open every topic.
    pub fn open(o: &NodeOptions) -> Result<Ros2Node, DdsError> {
        if o.vehicles.is_empty() {
            return Err(DdsError("no vehicles".into()));
        }
        for v in &o.vehicles {
            names::check_ros_name(&v.name)
                .map_err(|e| DdsError(format!("vehicle `{}`: {e}", v.name.escape_default())))?;
        }
        let mut p = Participant::new(o.domain)?;
        let claims = match o.claim_window {
            Some(w) => {
                let names: Vec<&str> = o.vehicles.iter().map(|v| v.name.as_str()).collect();
                claim::claim_many(&mut p, &names, &Claimant::this_process(), w)?
            }
            None => Vec::new(),
        };
        let graph = Graph::open(&mut p)?;
        let mut ports = Vec::with_capacity(o.vehicles.len());
        for v in &o.vehicles {
            let mut port = VehiclePorts::open(&mut p, &v.name, DEFAULT_COMMANDS)?;
            if o.lockstep == Some(Mode::Ack) {
                port.open_ack(&mut p)?;
            }
            ports.push(port);
        }
        let step_reader = match o.lockstep {
            Some(Mode::Step) => Some(p.reader(STEP_TOPIC, Float64::NAME, qos::DEFAULT)?),
            _ => None,
        };
        let discovery_info = p.writer_dds(
            names::DISCOVERY_INFO_TOPIC,
            &names::dds_type(ParticipantEntitiesInfo::NAME),
            qos::DISCOVERY_INFO,
        )?;
        let set = PubSet {
            postings: o.postings,
            pid_output: false,
            node_report: false,
            usm_time: false,
        };
        let vehicles = o
            .vehicles
            .iter()
            .map(|v| LiveVehicle::new(v, o.start_time_s, set, format!("/{}/", v.name)))
            .collect();
        let mut node = Ros2Node {
            discovery_info,
            announced_var_topics: 0,
            p,
            graph,
            budgets: (0..o.vehicles.len()).map(|_| ReportBudget::new()).collect(),
            gate: AckGate::new(o.vehicles.len()),
            ports,
            claims,
            host: Host::new(vehicles),
            drops: DropLog::new(),
            step_reader,
            steps: StepRequests::new(),
            clock: o.start_time_s,
            iterations: 0,
        };
        node.announce();
        Ok(node)
    }

    /// The ROS nodes of this process with their readers and writers:
    /// `/usim` and one `/NAME/usim` per vehicle.
    pub fn nodes(&self) -> Vec<NodeEntitiesInfo> {
        let step: Vec<_> = self.step_reader.iter().map(Reader::gid).collect();
        let mut nodes = vec![self.graph.node(step)];
        for (i, port) in self.ports.iter().enumerate() {
            // Claims are opened in vehicle order, one per vehicle.
            let (r, w) = match self.claims.get(i) {
                Some(c) => {
                    let (r, w) = c.gids();
                    (vec![r], vec![w])
                }
                None => (Vec::new(), Vec::new()),
            };
            nodes.push(port.node(&r, &w));
        }
        nodes
    }

    /// Announce the process's nodes on `ros_discovery_info` (ROS 2's node
    /// graph: `ros2 node list`, the node of each endpoint in `ros2 topic
    /// info -v`); transient local, so later nodes get the last one.
    fn announce(&mut self) {
        self.announced_var_topics = self.ports.iter().map(VehiclePorts::var_topics).sum();
        let info = ParticipantEntitiesInfo {
            gid: self.p.gid(),
            node_entities_info_seq: self.nodes(),
        };
        if let Err(e) = self.discovery_info.publish(&info) {
            debug!("{e}");
        }
    }

    /// Announce again when a vehicle opened a variable topic since the
    /// last announcement.
    fn announce_if_changed(&mut self) {
        let n: usize = self.ports.iter().map(VehiclePorts::var_topics).sum();
        if n != self.announced_var_topics {
            self.announce();
        }
    }

    /// Serve every vehicle's `/NAME/usim/reset` (`std_srvs/srv/Trigger`):
    /// a request posts `USM_RESET` with the vehicle's configured start
    /// pose into its inbox, as a `USM_RESET` message would (applied at the
    /// next iteration, with the same checks); the reply says so, or why
    /// not.
    pub fn serve_resets(&mut self) {
        for i in 0..self.ports.len() {
            let requests = self.ports[i].poll_reset();
            if requests.is_empty() {
                continue;
            }
            let payload = convert::reset_payload(&self.host.vehicles()[i].vehicle.params().start);
            for rq in requests {
                let answer = match rq.valid {
                    Ok(()) => match self
                        .host
                        .inbox(i)
                        .accept_payload("USM_RESET", &Payload::Text(payload.clone()))
                    {
                        Ok(()) => TriggerResponse {
                            success: true,
                            message: format!("USM_RESET {payload} (at the next iteration)"),
                        },
                        Err(e) => TriggerResponse {
                            success: false,
                            message: format!("USM_RESET {payload}: {}", e.reason),
                        },
                    },
                    Err(why) => {
                        self.drops
                            .dropped(&names::reset_service(self.ports[i].name()), "", &why);
                        TriggerResponse {
                            success: false,
                            message: why,
                        }
                    }
                };
                if let Err(e) = self.ports[i].reply_reset(rq.id, &answer) {
                    warn!("{e}");
                }
            }
        }
    }

    /// The live host (its vehicles, mail counters).
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Iterations run so far.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The clock of the last iteration (or the start), s.
    pub fn clock(&self) -> f64 {
        self.clock
    }

    /// Answer a refused command of vehicle `i` on its error topic (within
    /// the budget).
    fn report(&mut self, i: usize, e: &MessageError) {
        let (allow, held) = self.budgets[i].allow(Instant::now());
        if held > 0 {
            warn!(
                "{}: {held} refused commands not answered on {} (more than {MAX_REPORTS_PER_S} a second)",
                self.ports[i].name(),
                names::errors(self.ports[i].name())
            );
        }
        if allow {
            if let Err(e) = self.ports[i].report(e) {
                debug!("{e}");
            }
        }
    }

    /// Hand every command received since the last call to the vehicles'
    /// inboxes; refused ones are logged and answered.
    pub fn take_mail(&mut self) {
        for i in 0..self.ports.len() {
            let inbox = self.host.inbox(i);
            for got in self.ports[i].poll_payloads() {
                let refused = match got {
                    Ok((var, payload)) => match inbox.accept_payload(&var, &payload) {
                        Ok(()) => None,
                        Err(e) => {
                            let origin = names::var_topic(self.ports[i].name(), &var);
                            self.drops.dropped(&origin, &e.payload, &e.reason);
                            Some(e)
                        }
                    },
                    Err(e) => {
                        let origin = names::var_topic(self.ports[i].name(), &e.var);
                        inbox.reject(&mut self.drops, &origin, &e.payload, &e.reason);
                        Some(e)
                    }
                };
                if let Some(e) = refused {
                    self.report(i, &e);
                }
            }
        }
    }

    /// One iteration at clock `t_s` (s): mail in, the host's step and
    /// postings, `/clock`, then every vehicle's odometry, pose, fix and
    /// transforms; the model's refusals answered; name claims served.
    pub fn iterate(&mut self, t_s: f64) -> u64 {
        self.serve_resets();
        self.take_mail();
        let mut out = Out {
            p: &mut self.p,
            ports: &mut self.ports,
        };
        let failed = self.host.iterate(t_s, &mut out);
        self.publish_state(t_s);
        for r in self.host.take_refusals() {
            if let Some(i) = self.ports.iter().position(|p| p.name() == r.vehicle) {
                self.report(i, &MessageError::new(&r.var, &r.payload, r.reason));
            }
        }
        self.serve_claims();
        self.announce_if_changed();
        self.clock = t_s;
        self.iterations += 1;
        self.gate.published(t_s);
        failed
    }

    /// `/clock` and every vehicle's step messages at `t_s` (s), from the
    /// host's vehicles as they are.
    fn publish_state(&mut self, t_s: f64) {
        if let Err(e) = self.graph.publish_clock(t_s) {
            debug!("{e}");
        }
        for (port, v) in self.ports.iter_mut().zip(self.host.vehicles()) {
            if let Err(e) = port.publish_step(&self.graph, &v.vehicle.snapshot(), t_s) {
                debug!("{e}");
            }
        }
    }

    fn serve_claims(&mut self) {
        for c in &mut self.claims {
            if let Err(e) = c.serve() {
                debug!("{e}");
            }
        }
    }

    fn poll_steps(&mut self) {
        let Some(r) = &mut self.step_reader else {
            return;
        };
        for m in r.take_messages::<Float64>() {
            let refused = match m {
                Ok(m) => self
                    .steps
                    .request(m.data)
                    .err()
                    .map(|e| (format!("{}", m.data), e)),
                Err(e) => Some((String::new(), e)),
            };
            if let Some((payload, why)) = refused {
                self.drops.dropped(STEP_TOPIC, &payload, &why);
            }
        }
    }

    /// Take the acknowledgements of the vehicles still waiting; how many
    /// counted. Unless `full`, stops at the first waiting vehicle with
    /// nothing new (controllers answer roughly in the order the odometry
    /// went out), so that a round of `n` vehicles costs about `n` reads
    /// rather than `n` per poll.
    fn poll_acks(&mut self, full: bool) -> usize {
        let mut counted = 0;
        for i in 0..self.ports.len() {
            if !self.gate.is_waiting(i) {
                continue;
            }
            let got = self.ports[i].poll_acks();
            let empty = got.is_empty();
            for a in got {
                let why = match a {
                    Ok(t) => match self.gate.ack(i, t) {
                        Ok(Ack::Current) => {
                            counted += 1;
                            None
                        }
                        Ok(Ack::Stale) => None,
                        Err(e) => Some((format!("{t}"), e)),
                    },
                    Err(e) => Some((String::new(), e)),
                };
                if let Some((payload, why)) = why {
                    let topic = names::ack(self.ports[i].name());
                    self.drops.dropped(&topic, &payload, &why);
                }
            }
            if empty && !full {
                break;
            }
        }
        counted
    }

    /// Send the current iteration again (same stamps) to the vehicles that
    /// have not acknowledged it, and `/clock`.
    fn resend_waiting(&mut self) {
        let _ = self.graph.publish_clock(self.clock);
        for (i, p) in self.ports.iter().enumerate() {
            if self.gate.is_waiting(i) {
                let _ = p.republish_step(&self.graph);
            }
        }
    }

    /// Run in lock-step by rule `mode`, iteration `k` at clock `start +
    /// k·period` (s), until `stop` is set or `max_iterations` have run. In
    /// ack mode the start state is published first (iteration 0, not
    /// stepped) for the controllers to acknowledge.
    pub fn run_lockstep(
        &mut self,
        mode: Mode,
        period_s: f64,
        stop: &AtomicBool,
        max_iterations: Option<u64>,
    ) {
        let start = self.clock;
        let mut k: u64 = 0;
        // When the current iteration went out, when it (or its last copy)
        // was sent, how long the last one took to be acknowledged, and the
        // last full sweep of the ack readers.
        let mut round = Instant::now();
        let mut sent = Instant::now();
        let mut last_round_s = REPUBLISH_EVERY.as_secs_f64();
        let mut swept = Instant::now();
        let mut served = Instant::now();
        if mode == Mode::Ack {
            self.publish_state(start);
            self.gate.published(start);
        }
        info!(
            "lock-step ({}): waiting for {}",
            match mode {
                Mode::Step => "step",
                Mode::Ack => "ack",
            },
            match mode {
                Mode::Step => STEP_TOPIC.to_string(),
                Mode::Ack => "every vehicle's /NAME/usim/ack".to_string(),
            }
        );
        while !stop.load(Ordering::Relaxed) {
            let finished = max_iterations.is_some_and(|m| k >= m);
            let due = match mode {
                Mode::Step if finished => break,
                Mode::Step => {
                    self.poll_steps();
                    self.steps.take()
                }
                Mode::Ack => {
                    let full = swept.elapsed() >= FULL_SWEEP_EVERY;
                    if full {
                        swept = Instant::now();
                    }
                    self.poll_acks(full);
                    self.gate.due()
                }
            };
            if finished {
                // The last iteration is out: wait (a while) until every
                // controller has it, so none is lost by stopping.
                if due || round.elapsed() >= FINAL_ACK_WAIT {
                    break;
                }
            } else if due {
                last_round_s = round.elapsed().as_secs_f64();
                k += 1;
                self.iterate(start + k as f64 * period_s);
                round = Instant::now();
                sent = round;
                continue;
            }
            if mode == Mode::Ack {
                let after = resend_after_s(
                    last_round_s,
                    RESEND_MIN.as_secs_f64(),
                    REPUBLISH_EVERY.as_secs_f64(),
                );
                if sent.elapsed().as_secs_f64() >= after {
                    self.resend_waiting();
                    sent = Instant::now();
                }
            }
            self.idle(&mut served);
        }
    }

    /// Between lock-step polls: answer name claims, and reset requests
    /// once per [`FULL_SWEEP_EVERY`] (`served`: the last time), then
    /// sleep a little.
    fn idle(&mut self, served: &mut Instant) {
        self.serve_claims();
        if served.elapsed() >= FULL_SWEEP_EVERY {
            *served = Instant::now();
            self.serve_resets();
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}
