//! The MOOSDB's logic (our MOOS protocol notes §6–§8, docs/moos.md), with
//! no sockets and no clock: the runtime ([`crate::moos::server`]) feeds it
//! handshakes, packets and the time, and writes the packets it returns.
//!
//! Two times are passed in: `now`, the DB's MOOS time (Unix seconds ×
//! `MOOSTimeWarp`, s), used for message times, registration intervals and
//! the 2 s `DB_*` postings; and `real`, unwarped seconds from any fixed
//! origin, used for `ClientTimeout` only.
use std::collections::{BTreeMap, HashMap};

use super::codec::{DataType, Message, MsgType};
use super::wildcard::Filter;

/// Held mail per client before the oldest is dropped, messages.
pub const MAX_HELD_MESSAGES: usize = 20_000;
/// Held mail per client before the oldest is dropped, bytes.
pub const MAX_HELD_BYTES: usize = 16 * 1024 * 1024;
/// Largest number of wildcard filters one client may hold.
pub const MAX_FILTERS: usize = 1024;
/// How often the DB posts `DB_TIME`, `DB_UPTIME`, `DB_CLIENTS`, MOOS s.
pub const DB_POST_PERIOD: f64 = 2.0;

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
    filters: Vec<Filter>,
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
}

impl Var {
    fn new() -> Var {
        Var {
            data_type: DataType::NotSet,
            last: None,
            writes: 0,
            subs: BTreeMap::new(),
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
}

impl Db {
    /// A DB started at MOOS time `now` (s).
    pub fn new(cfg: DbConfig, now: f64) -> Db {
        Db {
            name: format!("MOOSDB_{}", cfg.community),
            cfg,
            start: now,
            clients: BTreeMap::new(),
            vars: HashMap::new(),
            last_db_post: None,
            events: Vec::new(),
        }
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
        let name = hello.sval.clone();
        if self.clients.contains_key(&name) || name == self.name {
            return Err(poison(format!(
                "A client of this name (\"{name}\") already exists"
            )));
        }
        let asynchronous = hello.key == "asynchronous";
        self.clients.insert(
            name.clone(),
            Client {
                asynchronous,
                held: Vec::new(),
                held_bytes: 0,
                dropped: 0,
                last_rx_real: real,
                filters: Vec::new(),
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
        let Some(c) = self.clients.get_mut(from) else {
            return Vec::new();
        };
        c.last_rx_real = real;
        let asynchronous = c.asynchronous;
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
        for m in msgs {
            match m.msg_type {
                MsgType::Notify => {
                    any_notify = true;
                    self.on_notify(from, m, now);
                }
                MsgType::Register => self.on_register(from, &m, now),
                MsgType::Unregister => {
                    if let Some(v) = self.vars.get_mut(&m.key) {
                        v.subs.remove(from);
                    }
                }
                MsgType::WildcardRegister => self.on_wildcard(from, &m, now, true),
                MsgType::WildcardUnregister => self.on_wildcard(from, &m, now, false),
                MsgType::ServerRequest if m.key == "ALL" => self.all_request(from, now),
                _ => {}
            }
        }
        self.maybe_post_db_vars(now);
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

    fn on_notify(&mut self, from: &str, mut m: Message, now: f64) {
        if m.community.is_empty() {
            m.community = self.cfg.community.clone();
        }
        if m.source.is_empty() {
            m.source = from.to_string();
        }
        // Never written before: a new variable, or one a registration made
        // (an app registering for a variable it will also post, as V22's
        // NAV_X). A wildcard filter stored since then has not seen it.
        let first_write = self.vars.get(&m.key).is_none_or(|v| v.last.is_none());
        let var = self.vars.entry(m.key.clone()).or_insert_with(Var::new);
        if var.data_type == DataType::NotSet {
            var.data_type = m.data_type;
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
                if let Some(f) = c.filters.iter().find(|f| f.matches(&m.source, &m.key)) {
                    var.subs.entry(cname.clone()).or_insert(Sub {
                        interval: f.interval,
                        last_sent: None,
                    });
                }
            }
        }
        var.writes += 1;
        var.last = Some(m.clone());
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
        c.filters.push(f.clone());
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

    fn all_request(&mut self, from: &str, now: f64) {
        let mut msgs: Vec<Message> = self
            .vars
            .values()
            .filter_map(|v| v.last.clone())
            .map(|mut m| {
                m.time -= self.start;
                m
            })
            .collect();
        msgs.sort_by(|a, b| a.key.cmp(&b.key));
        let _ = now;
        for m in msgs {
            self.hold(from, m);
        }
    }

    fn maybe_post_db_vars(&mut self, now: f64) {
        if self.last_db_post.is_some_and(|t| now - t < DB_POST_PERIOD) {
            return;
        }
        self.last_db_post = Some(now);
        self.post_own("DB_TIME", Some(now), None, now);
        self.post_own("DB_UPTIME", Some(now - self.start), None, now);
        let mut clients = String::new();
        for n in self.clients.keys() {
            clients.push_str(n);
            clients.push(',');
        }
        self.post_own("DB_CLIENTS", None, Some(&clients), now);
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
        self.on_notify(&name, m, now);
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
