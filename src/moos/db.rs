//! The MOOSDB's logic (our MOOS protocol notes §6–§8, docs/moos.md), with
//! no sockets and no clock: the runtime ([`crate::moos::server`]) feeds it
//! handshakes, packets and the time, and writes the packets it returns.
//!
//! Two times are passed in: `now`, the DB's MOOS time (Unix seconds ×
//! `MOOSTimeWarp`, s), used for message times, registration intervals and
//! the 2 s `DB_*` postings; and `real`, unwarped seconds from any fixed
//! origin, used for `ClientTimeout` only.
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::codec::{DataType, Message, MsgType};
use super::db_summary::{self, Latency, ReadWrite, VarLine};
use super::wildcard::{Filter, MAX_PATTERN};

/// Held mail per client before the oldest is dropped, messages.
pub const MAX_HELD_MESSAGES: usize = 20_000;
/// Held mail per client before the oldest is dropped, bytes.
pub const MAX_HELD_BYTES: usize = 16 * 1024 * 1024;
/// Largest number of wildcard filters one client may hold.
pub const MAX_FILTERS: usize = 1024;
/// Longest client name, bytes (a longer one is poisoned): `DB_CLIENTS`
/// carries every name to every subscriber each 2 s.
pub const MAX_CLIENT_NAME: usize = 256;
/// Most variables the DB holds, its own included; a write or registration
/// that would make another is refused (logged).
pub const MAX_VARIABLES: usize = 65_536;
/// Longest variable name, bytes; a longer one is refused (logged).
pub const MAX_VAR_NAME: usize = 65_536;
/// Bytes the DB stores at most: variable names and their last values (as
/// on the wire); a client's write that would pass it is refused (logged).
pub const MAX_STORED_BYTES: usize = 256 * 1024 * 1024;
/// Distinct writers a variable remembers (for `DB_RWSUMMARY`).
pub const MAX_WRITERS: usize = 256;
/// How often the DB posts `DB_TIME`, `DB_UPTIME`, `DB_CLIENTS`,
/// `DB_VARSUMMARY`, `DB_QOS` and `DB_RWSUMMARY`, MOOS s.
pub const DB_POST_PERIOD: f64 = 2.0;
/// The variables the MOOSDB makes at start, before anyone writes them
/// (with their data types): listed by `VAR_SUMMARY` from the start.
const DB_OWN_VARS: [(&str, DataType); 7] = [
    ("DB_TIME", DataType::Double),
    ("DB_UPTIME", DataType::Double),
    ("DB_CLIENTS", DataType::Double),
    ("DB_EVENT", DataType::String),
    ("DB_VARSUMMARY", DataType::String),
    ("DB_QOS", DataType::String),
    ("DB_RWSUMMARY", DataType::String),
];
/// The writer the MOOSDB shows for its own variables before their first
/// write (its name before the community is read).
const DB_PRESET_WRITER: &str = "MOOSDB#1";

/// DB settings.
#[derive(Debug, Clone)]
pub struct DbConfig {
    /// Community name (`Community`).
    pub community: String,
    /// Host name sent in the welcome (`hostname=...`).
    pub host: String,
    /// Drop a client after this many real seconds of silence (`ClientTimeout`, default 5).
    pub client_timeout: f64,
}

/// A packet to write to a client.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The client's name.
    pub to: String,
    /// The packet's messages, in order.
    pub msgs: Vec<Message>,
}

#[derive(Debug)]
struct Client {
    asynchronous: bool,
    held: Vec<Message>,
    held_bytes: usize,
    /// Messages dropped because the held mail was full.
    dropped: u64,
    last_rx_real: f64,
    filters: Vec<Arc<Filter>>,
    /// The lowest number free when it connected, as a socket descriptor
    /// is: the MOOSDB lists its clients by descriptor, highest first.
    slot: usize,
    /// Latencies of its timing messages, once it has sent or been sent a
    /// packet (the MOOSDB's audit, `DB_QOS`).
    audit: Option<Latency>,
}

#[derive(Debug, Default)]
struct Sub {
    interval: f64,
    last_sent: Option<f64>,
}

#[derive(Debug)]
struct Var {
    data_type: DataType,
    last: Option<Message>,
    writes: u64,
    subs: BTreeMap<String, Sub>,
    /// Everyone who ever wrote it (kept after they leave, as the MOOSDB does).
    writers: BTreeSet<String>,
    /// When the DB last wrote it, MOOS s (−1: never).
    written_time: f64,
    /// One of the DB's own variables, not yet written.
    preset: bool,
    /// Write frequency, Hz, and the time and write count it was last updated at.
    freq: f64,
    stats_time: f64,
    stats_writes: u64,
}

impl Var {
    fn new() -> Var {
        Var {
            data_type: DataType::NotSet,
            last: None,
            writes: 0,
            subs: BTreeMap::new(),
            writers: BTreeSet::new(),
            written_time: -1.0,
            preset: false,
            freq: 0.0,
            stats_time: -1.0,
            stats_writes: 0,
        }
    }

    /// Its last writer as the MOOSDB shows it (empty: never written).
    fn who(&self) -> &str {
        match &self.last {
            Some(m) => &m.source,
            None if self.preset => DB_PRESET_WRITER,
            None => "",
        }
    }

    /// A write at MOOS time `now`: the writer, the count and the write
    /// frequency, updated as `CMOOSDB::OnNotify` does (an IIR filter over
    /// windows longer than 0.5 s; 0 after a gap over 10 s).
    fn count_write(&mut self, writer: &str, now: f64) {
        self.written_time = now;
        if self.writers.len() < MAX_WRITERS && !self.writers.contains(writer) {
            self.writers.insert(writer.to_string());
        }
        self.writes += 1;
        let dt = now - self.stats_time;
        let n = self.writes.saturating_sub(self.stats_writes);
        if dt > 0.5 {
            if dt > 10.0 {
                self.freq = 0.0;
            } else {
                self.freq = 0.5 * self.freq + 0.5 / (dt / n as f64);
            }
            self.stats_writes = self.writes;
            self.stats_time = now;
        }
    }
}

/// A notable thing the DB did, for the runtime's log.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A write refused because the variable has another data type.
    TypeMismatch {
        /// Writer.
        client: String,
        /// Variable.
        var: String,
    },
    /// A registration without a source, or a wildcard with a bad sval.
    BadRequest {
        /// Client.
        client: String,
        /// Why.
        why: String,
    },
    /// A write or registration refused for one of the DB's limits
    /// (variables, name length, stored bytes). Raised for the 1st, 2nd,
    /// 4th, 8th … refusal only, so a flood makes a few log lines.
    Refused {
        /// Client.
        client: String,
        /// Why.
        why: String,
        /// Refusals so far (all clients).
        total: u64,
    },
    /// Held mail was full: the oldest messages were dropped.
    MailDropped {
        /// Client.
        client: String,
        /// Messages dropped so far.
        total: u64,
    },
}

/// The database.
#[derive(Debug)]
pub struct Db {
    cfg: DbConfig,
    name: String,
    start: f64,
    clients: BTreeMap<String, Client>,
    vars: HashMap<String, Var>,
    last_db_post: Option<f64>,
    /// Events since the last [`Db::take_events`].
    events: Vec<Event>,
    /// Bytes of variable names and last values stored.
    stored: usize,
    /// Writes and registrations refused for a limit.
    refused: u64,
    /// [`MAX_VARIABLES`] and [`MAX_STORED_BYTES`] (smaller in unit tests).
    max_vars: usize,
    max_stored: usize,
}

/// Wildcard matching for the first writes of new variables in one packet,
/// to be done outside the DB's lock ([`Db::match_plan`], then
/// [`MatchPlan::run`], then [`Db::on_packet_prematched`]): the filters
/// are shared, so the plan is cheap to take.
#[derive(Debug, Default)]
pub struct MatchPlan {
    /// (variable, writer) of each first write.
    jobs: Vec<(String, String)>,
    filters: Vec<Arc<Filter>>,
}

/// The verdicts of a [`MatchPlan`]: which filters match each new variable.
#[derive(Debug, Default)]
pub struct Prematched {
    /// Keeps the filters alive, so no other filter takes their addresses.
    filters: Vec<Arc<Filter>>,
    /// Variable → (writer, addresses of the filters that match).
    verdicts: HashMap<String, (String, HashSet<usize>)>,
}

impl MatchPlan {
    /// Whether there is nothing to match.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty() || self.filters.is_empty()
    }

    /// Match every new variable against every filter (no lock needed).
    pub fn run(self) -> Prematched {
        let mut verdicts = HashMap::new();
        for (var, writer) in self.jobs {
            let hits: HashSet<usize> = self
                .filters
                .iter()
                .filter(|f| f.matches(&writer, &var))
                .map(|f| Arc::as_ptr(f) as usize)
                .collect();
            verdicts.insert(var, (writer, hits));
        }
        Prematched {
            filters: self.filters,
            verdicts,
        }
    }
}

impl Prematched {
    /// Whether `f` matches a write of `var` by `writer`: the verdict of
    /// the plan when it had that filter, else matched now.
    fn matches(&self, f: &Arc<Filter>, writer: &str, var: &str) -> bool {
        if let Some((w, hits)) = self.verdicts.get(var) {
            let p = Arc::as_ptr(f) as usize;
            if w == writer && self.filters.iter().any(|g| Arc::as_ptr(g) as usize == p) {
                return hits.contains(&p);
            }
        }
        f.matches(writer, var)
    }
}

impl Db {
    /// A DB started at MOOS time `now` (s).
    pub fn new(cfg: DbConfig, now: f64) -> Db {
        let mut vars = HashMap::new();
        let mut stored = 0;
        for (name, data_type) in DB_OWN_VARS {
            stored += name.len();
            let mut v = Var::new();
            v.data_type = data_type;
            v.preset = true;
            v.written_time = now;
            vars.insert(name.to_string(), v);
        }
        Db {
            name: format!("MOOSDB_{}", cfg.community),
            cfg,
            start: now,
            clients: BTreeMap::new(),
            vars,
            last_db_post: None,
            events: Vec::new(),
            stored,
            refused: 0,
            max_vars: MAX_VARIABLES,
            max_stored: MAX_STORED_BYTES,
        }
    }

    /// Bytes of variable names and last values stored (bounded by
    /// [`MAX_STORED_BYTES`], but for the DB's own postings).
    pub fn stored_bytes(&self) -> usize {
        self.stored
    }

    /// Log a refusal (the 1st, 2nd, 4th … only).
    fn refuse(&mut self, client: &str, why: String) {
        self.refused += 1;
        if self.refused.is_power_of_two() {
            self.events.push(Event::Refused {
                client: client.to_string(),
                why,
                total: self.refused,
            });
        }
    }

    /// Whether a new variable `name` may be made; refused (logged) if not.
    fn room_for(&mut self, client: &str, name: &str) -> bool {
        let why = if name.len() > MAX_VAR_NAME {
            format!(
                "a variable name of {} bytes (over {MAX_VAR_NAME})",
                name.len()
            )
        } else if self.vars.len() >= self.max_vars {
            format!("a new variable past {} variables", self.max_vars)
        } else if self.stored + name.len() > self.max_stored {
            format!("a new variable past {} stored bytes", self.max_stored)
        } else {
            return true;
        };
        self.refuse(client, format!("{why}: refused"));
        false
    }

    /// The wildcard matching that the first writes of new variables in
    /// `msgs` (from `from`) will need, to run outside the DB's lock.
    pub fn match_plan(&self, from: &str, msgs: &[Message]) -> MatchPlan {
        let mut plan = MatchPlan::default();
        for m in msgs.iter().filter(|m| m.msg_type == MsgType::Notify) {
            let new = self.vars.get(&m.key).is_none_or(|v| v.last.is_none());
            if new && m.key.len() <= MAX_VAR_NAME && !plan.jobs.iter().any(|(k, _)| *k == m.key) {
                let writer = if m.source.is_empty() { from } else { &m.source };
                plan.jobs.push((m.key.clone(), writer.to_string()));
            }
        }
        if !plan.jobs.is_empty() {
            plan.filters = self
                .clients
                .values()
                .flat_map(|c| c.filters.iter().cloned())
                .collect();
        }
        plan
    }

    /// The DB's own MOOS name (`MOOSDB_<community>`), the source of its postings.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Names of the connected clients, sorted.
    pub fn clients(&self) -> Vec<String> {
        self.clients.keys().cloned().collect()
    }

    /// Whether `name` is connected.
    pub fn has_client(&self, name: &str) -> bool {
        self.clients.contains_key(name)
    }

    /// Number of variables known.
    pub fn var_count(&self) -> usize {
        self.vars.len()
    }

    /// Events since the last call (type mismatches, bad requests, drops).
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// The handshake's second step: the client's `i` message (`hello`).
    /// `Ok(welcome)` registers the client; `Err(poison)` refuses it (the
    /// runtime sends it and closes the socket).
    pub fn handshake(
        &mut self,
        hello: &Message,
        now: f64,
        real: f64,
    ) -> Result<Message, Box<Message>> {
        let poison = |why: String| {
            Box::new(Message {
                msg_type: MsgType::Poison,
                data_type: DataType::String,
                sval: why,
                time: now,
                ..Message::default()
            })
        };
        if hello.msg_type != MsgType::Data || hello.sval.is_empty() {
            return Err(poison("Failed to read receive client's name".into()));
        }
        if hello.sval.len() > MAX_CLIENT_NAME {
            return Err(poison(format!(
                "client name of {} bytes (at most {MAX_CLIENT_NAME})",
                hello.sval.len()
            )));
        }
        let name = hello.sval.clone();
        if self.clients.contains_key(&name) || name == self.name {
            return Err(poison(format!(
                "A client of this name (\"{name}\") already exists"
            )));
        }
        let asynchronous = hello.key == "asynchronous";
        let used: BTreeSet<usize> = self.clients.values().map(|c| c.slot).collect();
        let slot = (0..).find(|n| !used.contains(n)).unwrap_or(0);
        self.clients.insert(
            name.clone(),
            Client {
                asynchronous,
                held: Vec::new(),
                held_bytes: 0,
                dropped: 0,
                last_rx_real: real,
                filters: Vec::new(),
                slot,
                audit: None,
            },
        );
        self.post_own("DB_EVENT", None, Some(&format!("connected={name}")), now);
        Ok(Message {
            msg_type: MsgType::Welcome,
            data_type: DataType::Double,
            dval: if hello.time.is_finite() {
                now - hello.time
            } else {
                0.0
            },
            sval: "asynchronous".into(),
            source_aux: format!("hostname={}", self.cfg.host),
            community: self.cfg.community.clone(),
            time: now,
            ..Message::default()
        })
    }

    /// A client went away (socket closed, timed out, or a write failed):
    /// its subscriptions and held mail go, `DB_EVENT=disconnected=<name>`.
    pub fn disconnect(&mut self, name: &str, now: f64) -> bool {
        if self.clients.remove(name).is_none() {
            return false;
        }
        for v in self.vars.values_mut() {
            v.subs.remove(name);
        }
        self.post_own("DB_EVENT", None, Some(&format!("disconnected={name}")), now);
        true
    }

    /// A packet from client `from`: process its messages, and return the
    /// packets to write (the reply to `from` first, then pushes of held
    /// mail to asynchronous clients if the packet had a notification).
    pub fn on_packet(
        &mut self,
        from: &str,
        msgs: Vec<Message>,
        now: f64,
        real: f64,
    ) -> Vec<Outgoing> {
        self.on_packet_prematched(from, msgs, &Prematched::default(), now, real)
    }

    /// [`Db::on_packet`] with the wildcard verdicts of new variables
    /// worked out beforehand (outside the lock) by [`Db::match_plan`].
    pub fn on_packet_prematched(
        &mut self,
        from: &str,
        msgs: Vec<Message>,
        pre: &Prematched,
        now: f64,
        real: f64,
    ) -> Vec<Outgoing> {
        let Some(c) = self.clients.get_mut(from) else {
            return Vec::new();
        };
        c.last_rx_real = real;
        let asynchronous = c.asynchronous;
        let audit = c.audit.get_or_insert_with(Latency::default);
        // The latency of a leading timing message (`ServerAudit`), ms.
        if let Some(t) = msgs.first().filter(|m| m.msg_type == MsgType::Timing) {
            let ms = (now - t.time) * 1000.0;
            if ms.is_finite() {
                audit.add(ms);
            }
        }
        let mut lead: Option<Message> = None;
        if !asynchronous {
            lead = Some(Message {
                msg_type: MsgType::Null,
                dval: now,
                time: now,
                ..Message::default()
            });
        } else if let Some(first) = msgs.first().filter(|m| m.msg_type == MsgType::Timing) {
            let mut t = first.clone();
            t.dval = now;
            t.dval2 = 0.0;
            lead = Some(t);
        }
        let mut any_notify = false;
        // Replies to server requests, in the order the MOOSDB makes them.
        let mut replies = Vec::new();
        for m in msgs {
            match m.msg_type {
                MsgType::Notify => {
                    any_notify = true;
                    self.on_notify(from, m, now, pre);
                }
                MsgType::Register => self.on_register(from, &m, now),
                MsgType::Unregister => {
                    if let Some(v) = self.vars.get_mut(&m.key) {
                        v.subs.remove(from);
                    }
                }
                MsgType::WildcardRegister => self.on_wildcard(from, &m, now, true),
                MsgType::WildcardUnregister => self.on_wildcard(from, &m, now, false),
                MsgType::ServerRequest => self.server_request(&m, now, &mut replies),
                _ => {}
            }
        }
        self.maybe_post_db_vars(now);
        // The MOOSDB puts each reply at the front of the packet, then the
        // held mail before them all: held mail first, replies reversed.
        for r in replies.into_iter().rev() {
            self.hold(from, r);
        }
        let mut out = Vec::new();
        let mut reply: Vec<Message> = lead.into_iter().collect();
        if let Some(c) = self.clients.get_mut(from) {
            reply.append(&mut c.held);
            c.held_bytes = 0;
        }
        if !reply.is_empty() {
            out.push(Outgoing {
                to: from.to_string(),
                msgs: reply,
            });
        }
        if any_notify {
            out.extend(self.push_all_mail());
        }
        out
    }

    /// The periodic work: clients silent for longer than `ClientTimeout`
    /// are disconnected (their names are returned, for the runtime to close
    /// their sockets), the `DB_*` postings, and mail for async clients.
    pub fn tick(&mut self, now: f64, real: f64) -> (Vec<String>, Vec<Outgoing>) {
        let timeout = self.cfg.client_timeout;
        let silent: Vec<String> = self
            .clients
            .iter()
            .filter(|(_, c)| real - c.last_rx_real > timeout)
            .map(|(n, _)| n.clone())
            .collect();
        for n in &silent {
            self.disconnect(n, now);
        }
        (silent, self.push_all_mail())
    }

    /// Every async client's held mail, as packets.
    pub fn push_all_mail(&mut self) -> Vec<Outgoing> {
        let mut out = Vec::new();
        for (name, c) in self.clients.iter_mut() {
            if c.asynchronous && !c.held.is_empty() {
                c.audit.get_or_insert_with(Latency::default);
                c.held_bytes = 0;
                out.push(Outgoing {
                    to: name.clone(),
                    msgs: std::mem::take(&mut c.held),
                });
            }
        }
        out
    }

    fn hold(&mut self, client: &str, m: Message) {
        let Some(c) = self.clients.get_mut(client) else {
            return;
        };
        c.held_bytes += m.wire_len();
        c.held.push(m);
        if c.held.len() > MAX_HELD_MESSAGES || c.held_bytes > MAX_HELD_BYTES {
            let n = c.held.len() / 2;
            c.held.drain(..n);
            c.held_bytes = c.held.iter().map(|m| m.wire_len()).sum();
            c.dropped += n as u64;
            self.events.push(Event::MailDropped {
                client: client.to_string(),
                total: c.dropped,
            });
        }
    }

    fn on_notify(&mut self, from: &str, mut m: Message, now: f64, pre: &Prematched) {
        if m.community.is_empty() {
            m.community = self.cfg.community.clone();
        }
        if m.source.is_empty() {
            m.source = from.to_string();
        }
        // Never written before: a new variable, or one a registration made
        // (an app registering for a variable it will also post, as V22's
        // NAV_X). A wildcard filter stored since then has not seen it.
        let known = self.vars.get(&m.key);
        let first_write = known.is_none_or(|v| v.last.is_none());
        let old = known
            .and_then(|v| v.last.as_ref())
            .map_or(0, Message::wire_len);
        let is_new = known.is_none();
        if is_new && !self.room_for(from, &m.key) {
            return;
        }
        // The DB's own postings are never refused (they are bounded by
        // what they summarise).
        let grown = self.stored - old + m.wire_len() + if is_new { m.key.len() } else { 0 };
        if grown > self.max_stored && from != self.name {
            let why = format!(
                "a write of {} ({} bytes) past {} stored bytes: refused",
                super::log_safe(&m.key, 80),
                m.wire_len(),
                self.max_stored
            );
            self.refuse(from, why);
            return;
        }
        let var = self.vars.entry(m.key.clone()).or_insert_with(Var::new);
        if first_write {
            // The first write fixes the type (the DB's own variables are
            // made with one that their first write may change).
            var.data_type = m.data_type;
            var.preset = false;
        } else if var.data_type != m.data_type {
            self.events.push(Event::TypeMismatch {
                client: from.to_string(),
                var: m.key.clone(),
            });
            return;
        }
        if first_write {
            // New variables are matched against every wildcard filter; a
            // client's own registration of the variable keeps its interval.
            for (cname, c) in &self.clients {
                let hit = c.filters.iter().find(|f| pre.matches(f, &m.source, &m.key));
                if let Some(f) = hit {
                    var.subs.entry(cname.clone()).or_insert(Sub {
                        interval: f.interval,
                        last_sent: None,
                    });
                }
            }
        }
        var.count_write(&m.source, now);
        var.last = Some(m.clone());
        self.stored = grown;
        let mut due = Vec::new();
        for (cname, s) in var.subs.iter_mut() {
            let expired = s.interval <= 0.0 || s.last_sent.is_none_or(|t| now - t >= s.interval);
            if expired {
                s.last_sent = Some(now);
                due.push(cname.clone());
            }
        }
        for cname in due {
            self.hold(&cname, m.clone());
        }
    }

    fn subscribe(&mut self, who: &str, var: &str, interval: f64) {
        let v = self.vars.entry(var.to_string()).or_insert_with(Var::new);
        v.subs.insert(
            who.to_string(),
            Sub {
                interval,
                last_sent: None,
            },
        );
        if let Some(last) = v.last.clone() {
            self.hold(who, last);
        }
    }

    fn on_register(&mut self, from: &str, m: &Message, _now: f64) {
        if m.source.is_empty() {
            self.events.push(Event::BadRequest {
                client: from.to_string(),
                why: format!("registration for {:?} without a source", m.key),
            });
            return;
        }
        let interval = if m.dval.is_finite() && m.dval > 0.0 {
            m.dval
        } else {
            0.0
        };
        // The subscriber is the connection's client: a source naming someone
        // else must not subscribe another client.
        if !self.vars.contains_key(&m.key) {
            if !self.room_for(from, &m.key) {
                return;
            }
            self.stored += m.key.len();
        }
        self.subscribe(from, &m.key, interval);
    }

    fn on_wildcard(&mut self, from: &str, m: &Message, _now: f64, add: bool) {
        let Some(f) = Filter::parse(&m.sval) else {
            self.events.push(Event::BadRequest {
                client: from.to_string(),
                why: format!("wildcard registration {:?} does not parse", m.sval),
            });
            return;
        };
        if f.app.len() > MAX_PATTERN || f.var.len() > MAX_PATTERN {
            self.events.push(Event::BadRequest {
                client: from.to_string(),
                why: format!("a wildcard pattern over {MAX_PATTERN} bytes: refused"),
            });
            return;
        }
        let Some(c) = self.clients.get_mut(from) else {
            return;
        };
        if !add {
            c.filters.retain(|g| g.app != f.app || g.var != f.var);
            let names: Vec<String> = self
                .vars
                .iter()
                .filter(|(k, v)| {
                    super::wildcard::wild_match(&f.var, k)
                        && v.last
                            .as_ref()
                            .is_none_or(|l| super::wildcard::wild_match(&f.app, &l.source))
                })
                .map(|(k, _)| k.clone())
                .collect();
            for k in names {
                if let Some(v) = self.vars.get_mut(&k) {
                    v.subs.remove(from);
                }
            }
            return;
        }
        if c.filters.len() >= MAX_FILTERS {
            self.events.push(Event::BadRequest {
                client: from.to_string(),
                why: format!("more than {MAX_FILTERS} wildcard registrations"),
            });
            return;
        }
        c.filters.push(Arc::new(f.clone()));
        let names: Vec<String> = self
            .vars
            .iter()
            .filter(|(k, v)| match &v.last {
                Some(l) => f.matches(&l.source, k),
                None => false,
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in names {
            self.subscribe(from, &k, f.interval);
        }
    }

    /// A `Q` message (`CMOOSDB::DoServerRequest`): `ALL`, then keys
    /// containing `PROC_SUMMARY`, `VAR_SUMMARY` or `DB_CLEAR`; each reply
    /// carries the request's id (−2, which `ServerRequest` waits for).
    fn server_request(&mut self, req: &Message, now: f64, replies: &mut Vec<Message>) {
        let reply = |key: &str, sval: String, time: f64| Message {
            id: req.id,
            msg_type: MsgType::Notify,
            data_type: DataType::String,
            source: self.name.clone(),
            key: key.to_string(),
            sval,
            time,
            dval: -1.0,
            ..Message::default()
        };
        if req.key == "ALL" {
            for name in self.sorted_names() {
                let v = &self.vars[name];
                let mut m = Message {
                    id: req.id,
                    msg_type: MsgType::Notify,
                    data_type: v.data_type,
                    source: v.who().to_string(),
                    key: name.to_string(),
                    dval2: v.freq,
                    ..Message::default()
                };
                if let Some(l) = &v.last {
                    m.sval = l.sval.clone();
                    m.bytes = l.bytes.clone();
                    m.source_aux = l.source_aux.clone();
                    m.dval = l.dval;
                    m.community = l.community.clone();
                }
                m.time = v.written_time - self.start;
                if m.time < 0.0 {
                    m.time = -1.0;
                }
                replies.push(m);
            }
        } else if req.key.contains("PROC_SUMMARY") {
            for rw in self.read_write() {
                replies.push(reply(
                    "PROC_SUMMARY",
                    db_summary::proc_summary(&rw),
                    now - self.start,
                ));
            }
        } else if req.key.contains("VAR_SUMMARY") {
            let names = self.sorted_names().join(",");
            replies.push(reply("VAR_SUMMARY", names, now));
        } else if req.key.contains("DB_CLEAR") {
            self.clear(now);
        }
    }

    /// `DB_CLEAR`: every variable forgets its value and writers (its
    /// subscribers stay), all held mail goes, and the start time is now.
    fn clear(&mut self, now: f64) {
        for v in self.vars.values_mut() {
            if let Some(l) = v.last.take() {
                self.stored -= l.wire_len();
            }
            v.preset = false;
            v.writers.clear();
            v.written_time = -1.0;
            v.writes = 0;
            v.freq = 0.0;
            v.stats_writes = 0;
            v.stats_time = -1.0;
        }
        for c in self.clients.values_mut() {
            c.held.clear();
            c.held_bytes = 0;
        }
        self.start = now;
    }

    /// Variable names in name order (the MOOSDB's map order).
    fn sorted_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.vars.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Client names as the MOOSDB lists them (`GetClientNames`): by
    /// socket descriptor, highest first.
    fn listed_clients(&self) -> Vec<&str> {
        let mut c: Vec<(usize, &str)> = self
            .clients
            .iter()
            .map(|(n, c)| (c.slot, n.as_str()))
            .collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.into_iter().map(|(_, n)| n).collect()
    }

    /// What each client subscribes to and has written, in the order of
    /// [`Db::listed_clients`], each list in variable-name order.
    fn read_write(&self) -> Vec<ReadWrite> {
        let mut by_client: HashMap<&str, ReadWrite> = HashMap::new();
        for name in self.sorted_names() {
            let v = &self.vars[name];
            for s in v.subs.keys() {
                by_client
                    .entry(s.as_str())
                    .or_default()
                    .subscribes
                    .push(name.to_string());
            }
            for w in &v.writers {
                by_client
                    .entry(w.as_str())
                    .or_default()
                    .publishes
                    .push(name.to_string());
            }
        }
        self.listed_clients()
            .into_iter()
            .map(|n| {
                let mut rw = by_client.remove(n).unwrap_or_default();
                rw.name = n.to_string();
                rw
            })
            .collect()
    }

    /// The `DB_VARSUMMARY` text of the variables now.
    fn var_summary(&self) -> String {
        let names = self.sorted_names();
        let lines: Vec<VarLine<'_>> = names
            .iter()
            .map(|&name| {
                let v = &self.vars[name];
                let (dval, sval): (f64, &[u8]) = match &v.last {
                    Some(l) if v.data_type == DataType::Binary => (l.dval, &l.bytes),
                    Some(l) => (l.dval, l.sval.as_bytes()),
                    None => (-1.0, b""),
                };
                VarLine {
                    name,
                    written_time: v.written_time,
                    who: v.who(),
                    freq: v.freq,
                    type_byte: v.data_type.byte(),
                    dval,
                    sval,
                }
            })
            .collect();
        db_summary::var_summary(&lines)
    }

    /// The `DB_QOS` text. A client whose name holds `=` or `,` is left
    /// out: the MOOS client library's parser of `DB_QOS` would throw on it
    /// and take down every client that monitors comms status.
    fn qos(&self) -> String {
        let audited: Vec<(&str, Latency)> = self
            .clients
            .iter()
            .filter(|(n, _)| !n.contains(['=', ',']))
            .filter_map(|(n, c)| c.audit.map(|a| (n.as_str(), a)))
            .collect();
        db_summary::qos(&audited)
    }

    /// Every 2 MOOS s, when a packet arrives (`CMOOSDB::OnRxPkt`): the
    /// DB's own variables, in the MOOSDB's order.
    fn maybe_post_db_vars(&mut self, now: f64) {
        if self.last_db_post.is_some_and(|t| now - t <= DB_POST_PERIOD) {
            return;
        }
        self.last_db_post = Some(now);
        self.post_own("DB_TIME", Some(now), None, now);
        self.post_own("DB_UPTIME", Some(now - self.start), None, now);
        let mut clients = String::new();
        for n in self.listed_clients() {
            clients.push_str(n);
            clients.push(',');
        }
        self.post_own("DB_CLIENTS", None, Some(&clients), now);
        let summary = self.var_summary();
        self.post_own("DB_VARSUMMARY", None, Some(&summary), now);
        let qos = self.qos();
        self.post_own("DB_QOS", None, Some(&qos), now);
        let rw = db_summary::rw_summary(&self.read_write());
        self.post_own("DB_RWSUMMARY", None, Some(&rw), now);
    }

    /// A posting by the DB itself.
    fn post_own(&mut self, key: &str, d: Option<f64>, s: Option<&str>, now: f64) {
        let mut m = match (d, s) {
            (_, Some(s)) => Message::notify_string(key, s, now),
            (Some(d), None) => Message::notify_double(key, d, now),
            (None, None) => return,
        };
        m.source = self.name.clone();
        m.community = self.cfg.community.clone();
        let name = self.name.clone();
        self.on_notify(&name, m, now, &Prematched::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Db {
        Db::new(
            DbConfig {
                community: "c".into(),
                host: "h".into(),
                client_timeout: 5.0,
            },
            100.0,
        )
    }

    fn hello(name: &str) -> Message {
        Message {
            msg_type: MsgType::Data,
            data_type: DataType::String,
            key: "asynchronous".into(),
            sval: name.into(),
            time: 99.0,
            ..Message::default()
        }
    }

    fn reg(src: &str, var: &str, interval: f64) -> Message {
        Message {
            msg_type: MsgType::Register,
            source: src.into(),
            key: var.into(),
            dval: interval,
            ..Message::default()
        }
    }

    fn post(src: &str, var: &str, v: f64) -> Message {
        let mut m = Message::notify_double(var, v, 1.0);
        m.source = src.into();
        m
    }

    #[test]
    fn welcome_poison_and_types() {
        let mut d = db();
        let w = d.handshake(&hello("a"), 100.0, 0.0).unwrap();
        assert_eq!(w.msg_type, MsgType::Welcome);
        assert_eq!(w.dval, 1.0);
        assert_eq!(w.community, "c");
        let p = d.handshake(&hello("a"), 100.0, 0.0).unwrap_err();
        assert_eq!(p.msg_type, MsgType::Poison);
        assert!(p.sval.contains("already exists"));
        d.handshake(&hello("b"), 100.0, 0.0).unwrap();
        d.on_packet("b", vec![reg("b", "X", 0.0)], 100.0, 0.0);
        let out = d.on_packet("a", vec![post("a", "X", 1.0)], 100.0, 0.0);
        let to_b: Vec<_> = out.iter().filter(|o| o.to == "b").collect();
        assert_eq!(to_b.len(), 1);
        assert_eq!(to_b[0].msgs[0].dval, 1.0);
        assert_eq!(to_b[0].msgs[0].community, "c");
        // A string write to a double variable is refused.
        let mut s = Message::notify_string("X", "no", 1.0);
        s.source = "a".into();
        let out = d.on_packet("a", vec![s], 100.0, 0.0);
        assert!(out.iter().all(|o| o.to != "b"));
        assert_eq!(
            d.take_events().last(),
            Some(&Event::TypeMismatch {
                client: "a".into(),
                var: "X".into()
            })
        );
    }

    #[test]
    fn intervals_wildcards_timeouts() {
        let mut d = db();
        d.handshake(&hello("a"), 100.0, 0.0).unwrap();
        d.handshake(&hello("b"), 100.0, 0.0).unwrap();
        d.on_packet("b", vec![reg("b", "X", 1.0)], 100.0, 0.0);
        let mut got = 0;
        for i in 0..10 {
            let now = 100.0 + i as f64 * 0.25;
            for o in d.on_packet("a", vec![post("a", "X", i as f64)], now, 0.0) {
                got += o.msgs.iter().filter(|m| m.key == "X").count();
            }
        }
        // Writes at 100, 100.25, ..., 102.25 with a 1 s interval: 100, 101, 102.
        assert_eq!(got, 3);
        let w = Message {
            msg_type: MsgType::WildcardRegister,
            source: "b".into(),
            key: "b".into(),
            sval: "AppPattern=*,VarPattern=NAV_*,Interval=0".into(),
            ..Message::default()
        };
        d.on_packet("b", vec![w], 103.0, 0.0);
        let out = d.on_packet(
            "a",
            vec![post("a", "NAV_Y", 5.0), post("a", "OTHER", 1.0)],
            103.0,
            0.0,
        );
        let keys: Vec<&str> = out
            .iter()
            .filter(|o| o.to == "b")
            .flat_map(|o| o.msgs.iter().map(|m| m.key.as_str()))
            .collect();
        assert_eq!(keys, vec!["NAV_Y"]);
        let (gone, _) = d.tick(104.0, 4.0);
        assert!(gone.is_empty());
        d.on_packet("a", vec![], 104.0, 4.0);
        let (gone, _) = d.tick(106.0, 6.0);
        assert_eq!(gone, vec!["b".to_string()]);
        assert_eq!(d.clients(), vec!["a".to_string()]);
    }

    /// CI met this race: the app registered for NAV_X (a V22 input it also
    /// posts), then the tester's `NAV_*` wildcard arrived before the first
    /// write of NAV_X; the tester must still get every NAV_X.
    #[test]
    fn a_wildcard_sees_a_variable_registered_before_its_first_write() {
        let mut d = db();
        d.handshake(&hello("app"), 100.0, 0.0).unwrap();
        d.handshake(&hello("t"), 100.0, 0.0).unwrap();
        d.on_packet("app", vec![reg("app", "NAV_X", 0.0)], 100.0, 0.0);
        let w = Message {
            msg_type: MsgType::WildcardRegister,
            source: "t".into(),
            key: "t".into(),
            sval: "AppPattern=*,VarPattern=NAV_*,Interval=0".into(),
            ..Message::default()
        };
        d.on_packet("t", vec![w], 100.0, 0.0);
        for i in 0..3 {
            let out = d.on_packet("app", vec![post("app", "NAV_X", i as f64)], 101.0, 0.0);
            let to_t: Vec<f64> = out
                .iter()
                .filter(|o| o.to == "t")
                .flat_map(|o| o.msgs.iter().filter(|m| m.key == "NAV_X").map(|m| m.dval))
                .collect();
            assert_eq!(to_t, vec![i as f64], "write {i}");
        }
        // The app's own registration keeps its (zero) interval: it gets each write too.
        let out = d.on_packet("app", vec![post("app", "NAV_X", 9.0)], 101.0, 0.0);
        assert!(out.iter().any(|o| o.to == "app"));
    }

    /// `DB_CLEAR` restarts a variable's write statistics with its count:
    /// writes after it once subtracted the old window's count from the new
    /// one (an overflow the `moos_db` fuzzer found).
    #[test]
    fn writes_after_db_clear_count_from_zero() {
        let mut d = db();
        d.handshake(&hello("a"), 100.0, 0.0).unwrap();
        for i in 0..4 {
            let t = 100.0 + f64::from(i);
            d.on_packet("a", vec![post("a", "X", 1.0)], t, 0.0);
        }
        let clear = Message {
            msg_type: MsgType::ServerRequest,
            key: "DB_CLEAR".into(),
            ..Message::default()
        };
        d.on_packet("a", vec![clear], 104.0, 0.0);
        assert_eq!(d.vars["X"].writes, 0);
        // One write a second after the clear: 1 Hz, from a fresh window.
        d.on_packet("a", vec![post("a", "X", 1.0)], 105.0, 0.0);
        d.on_packet("a", vec![post("a", "X", 1.0)], 106.0, 0.0);
        let v = &d.vars["X"];
        assert_eq!(v.writes, 2);
        assert!(
            v.freq.is_finite() && v.freq > 0.0 && v.freq <= 1.0,
            "{}",
            v.freq
        );
    }

    /// What pLogger and uMS ask of the DB (CMOOSDB::DoServerRequest,
    /// UpdateReadWriteSummaryVar, UpdateDBClientsVar in MOOSDB.cpp).
    #[test]
    fn server_requests_and_summaries() {
        let mut d = db();
        d.handshake(&hello("app"), 100.0, 0.0).unwrap();
        d.handshake(&hello("log"), 100.0, 0.0).unwrap();
        d.on_packet("app", vec![post("app", "NAV_X", 1.0)], 100.5, 0.0);
        // The first packet brought the first summaries: DB_VARSUMMARY,
        // built before it is written, lists itself as not yet written.
        let first = d.vars["DB_VARSUMMARY"].last.clone().unwrap().sval;
        let own = first
            .lines()
            .find(|l| l.starts_with("DB_VARSUMMARY "))
            .unwrap();
        assert!(own.contains(" MOOSDB#1 "), "{own}");
        d.on_packet("log", vec![reg("log", "NAV_X", 0.0)], 100.5, 0.0);
        // pLogger's ServerRequest("VAR_SUMMARY"): id -2, every variable
        // (the DB's own from the start) in name order, comma-separated.
        let q = Message {
            id: -2,
            msg_type: MsgType::ServerRequest,
            key: "VAR_SUMMARY".into(),
            ..Message::default()
        };
        let out = d.on_packet("log", vec![q], 100.5, 0.0);
        let r = out[0].msgs.iter().find(|m| m.key == "VAR_SUMMARY").unwrap();
        assert_eq!(
            (r.id, r.msg_type, r.data_type),
            (-2, MsgType::Notify, DataType::String)
        );
        assert_eq!(r.source, "MOOSDB_c");
        assert_eq!(
            r.sval,
            "DB_CLIENTS,DB_EVENT,DB_QOS,DB_RWSUMMARY,DB_TIME,DB_UPTIME,DB_VARSUMMARY,NAV_X"
        );
        // After 2 s the DB posts its summaries; clients listed newest
        // socket first; a subscriber sees who reads and writes what.
        d.on_packet("log", vec![reg("log", "DB_RWSUMMARY", 0.0)], 100.6, 0.0);
        let out = d.on_packet("app", vec![post("app", "NAV_X", 2.0)], 103.0, 0.0);
        let got: Vec<&Message> = out
            .iter()
            .filter(|o| o.to == "log")
            .flat_map(|o| o.msgs.iter())
            .collect();
        let rw = got.iter().rev().find(|m| m.key == "DB_RWSUMMARY").unwrap();
        assert_eq!(rw.sval, "log=DB_RWSUMMARY:NAV_X&,app=&NAV_X");
        assert_eq!(rw.source, "MOOSDB_c");
        let v = &d.vars["DB_CLIENTS"];
        assert_eq!(v.last.as_ref().unwrap().sval, "log,app,");
        assert_eq!(v.data_type, DataType::String);
        // No timing messages yet: the audit's initial figures.
        assert_eq!(
            d.vars["DB_QOS"].last.as_ref().unwrap().sval,
            "app=0:0:1e+09:0,log=0:0:1e+09:0,"
        );
        let summary = &d.vars["DB_VARSUMMARY"].last.as_ref().unwrap().sval;
        let nav = summary.lines().find(|l| l.starts_with("NAV_X ")).unwrap();
        assert!(nav.contains(" app "), "{nav}");
        assert!(nav.ends_with("Hz D  2.0"), "{nav}");
        let own = summary
            .lines()
            .find(|l| l.starts_with("DB_VARSUMMARY "))
            .unwrap();
        assert!(own.contains(" MOOSDB_c "), "{own}");
        // A freed slot is reused, as a socket descriptor is.
        d.disconnect("app", 103.0);
        d.handshake(&hello("new"), 103.0, 0.0).unwrap();
        assert_eq!(d.listed_clients(), vec!["log", "new"]);
    }

    /// Issue 37 items 3, 4 and 20a: client names, variables, stored
    /// bytes and wildcard patterns are bounded; refusals are events (the
    /// 1st, 2nd, 4th …), and everything under the limits still works.
    #[test]
    fn names_variables_and_bytes_are_bounded() {
        let mut d = db();
        let long = "n".repeat(MAX_CLIENT_NAME + 1);
        let p = d.handshake(&hello(&long), 100.0, 0.0).unwrap_err();
        assert!(p.sval.contains("at most 256"), "{}", p.sval);
        assert!(d.handshake(&hello(&long[1..]), 100.0, 0.0).is_ok());
        d.handshake(&hello("a"), 100.0, 0.0).unwrap();
        d.handshake(&hello("b"), 100.0, 0.0).unwrap();
        d.on_packet("b", vec![reg("b", "X0", 0.0)], 100.0, 0.0);
        // Variables: own 7 + X0, then up to the cap; beyond, refused.
        d.max_vars = 20;
        let posts: Vec<Message> = (0..30).map(|i| post("a", &format!("V{i}"), 1.0)).collect();
        d.on_packet("a", posts, 100.0, 0.0);
        assert_eq!(d.var_count(), 20);
        d.on_packet("b", vec![reg("b", "NEW", 0.0)], 100.0, 0.0);
        assert_eq!(
            d.var_count(),
            20,
            "a registration makes no variable past the cap"
        );
        let refused: Vec<u64> = d
            .take_events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Refused { total, why, .. } => {
                    assert!(why.contains("past 20 variables"), "{why}");
                    Some(total)
                }
                _ => None,
            })
            .collect();
        // 19 refusals (V12..V29 and NEW): logged at 1, 2, 4, 8, 16.
        assert_eq!(refused, vec![1, 2, 4, 8, 16]);
        // Existing variables are still written and delivered.
        let out = d.on_packet("a", vec![post("a", "X0", 7.0)], 100.0, 0.0);
        assert!(out
            .iter()
            .any(|o| o.to == "b" && o.msgs.iter().any(|m| m.dval == 7.0)));
        // A name over MAX_VAR_NAME is refused whatever the count.
        d.max_vars = MAX_VARIABLES;
        let huge = "N".repeat(MAX_VAR_NAME + 1);
        d.on_packet("a", vec![post("a", &huge, 1.0)], 100.0, 0.0);
        assert_eq!(d.var_count(), 20);
        // Stored bytes: a write that would pass the cap is refused; one
        // that replaces a value with a smaller one is not.
        let before = d.stored_bytes();
        d.max_stored = before + 5_000;
        let big = |v: &str, n: usize| {
            let mut m = Message::notify_string(v, &"x".repeat(n), 1.0);
            m.source = "a".into();
            m
        };
        d.on_packet("a", vec![big("S", 3_000)], 100.0, 0.0);
        assert!(d.stored_bytes() > before + 3_000);
        d.on_packet("a", vec![big("S", 6_000)], 100.0, 0.0);
        assert_eq!(d.vars["S"].last.as_ref().unwrap().sval.len(), 3_000);
        d.on_packet("a", vec![big("S", 10)], 100.0, 0.0);
        assert!(d.stored_bytes() < before + 200);
        // Wildcard patterns over MAX_PATTERN bytes are refused.
        let w = Message {
            msg_type: MsgType::WildcardRegister,
            source: "b".into(),
            key: "b".into(),
            sval: format!("AppPattern=*,VarPattern=*{}", "a".repeat(MAX_PATTERN)),
            ..Message::default()
        };
        d.take_events();
        d.on_packet("b", vec![w], 100.0, 0.0);
        assert!(d.clients["b"].filters.is_empty());
        assert!(
            matches!(&d.take_events()[..], [Event::BadRequest { why, .. }] if why.contains("over 256"))
        );
        // A variable remembers at most MAX_WRITERS writers.
        for i in 0..(MAX_WRITERS + 10) {
            d.on_packet("a", vec![post(&format!("w{i}"), "X0", 1.0)], 100.0, 0.0);
        }
        assert_eq!(d.vars["X0"].writers.len(), MAX_WRITERS);
    }

    /// Matching outside the lock gives what matching inside would: the
    /// plan's verdicts, and a filter added after the plan is still matched.
    #[test]
    fn prematched_wildcards_agree() {
        let mut d = db();
        d.handshake(&hello("a"), 100.0, 0.0).unwrap();
        d.handshake(&hello("t"), 100.0, 0.0).unwrap();
        let wild = |pat: &str| Message {
            msg_type: MsgType::WildcardRegister,
            source: "t".into(),
            key: "t".into(),
            sval: format!("AppPattern=*,VarPattern={pat},Interval=0"),
            ..Message::default()
        };
        d.on_packet("t", vec![wild("NAV_*")], 100.0, 0.0);
        let msgs = vec![post("a", "NAV_X", 1.0), post("a", "OTHER", 2.0)];
        let plan = d.match_plan("a", &msgs);
        assert!(!plan.is_empty());
        let pre = plan.run();
        // A filter registered between the plan and the packet.
        d.on_packet("t", vec![wild("OTH*")], 100.0, 0.0);
        let out = d.on_packet_prematched("a", msgs, &pre, 100.0, 0.0);
        let keys: Vec<&str> = out
            .iter()
            .filter(|o| o.to == "t")
            .flat_map(|o| o.msgs.iter().map(|m| m.key.as_str()))
            .collect();
        assert_eq!(keys, vec!["NAV_X", "OTHER"]);
        assert!(d.match_plan("a", &[post("a", "NAV_X", 3.0)]).is_empty());
    }

    #[test]
    fn held_mail_is_bounded() {
        let mut d = db();
        d.handshake(&hello("a"), 100.0, 0.0).unwrap();
        // A sync client that never calls in again.
        let mut h = hello("s");
        h.key.clear();
        d.handshake(&h, 100.0, 0.0).unwrap();
        d.on_packet("s", vec![reg("s", "X", 0.0)], 100.0, 0.0);
        for i in 0..(MAX_HELD_MESSAGES + 10) {
            d.on_packet("a", vec![post("a", "X", i as f64)], 100.0, 0.0);
        }
        let c = &d.clients["s"];
        assert!(c.held.len() <= MAX_HELD_MESSAGES);
        assert!(c.dropped > 0);
    }
}
