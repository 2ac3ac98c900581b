//! Mail received between two iterations (docs/model.md §5), sans-IO.
//!
//! uSimMarine handles every message that arrived since the last `Iterate`
//! before stepping. The [`Mailbox`] keeps them in arrival order with two
//! bounds, so that a flood cannot grow memory:
//!
//! * a *plain setpoint* (a numeric variable that sets a value, such as
//!   `DESIRED_THRUST` or `DRIFT_X`) replaces the pending message for the same
//!   variable: latest value wins, and it moves to the end of the queue so the
//!   order against other variables is that of the last message. A plain
//!   setpoint is always admitted, even when the queue is full: there is at
//!   most one pending per variable and the variables are a fixed set, so
//!   they cannot grow memory, and a flood of other mail must not lose the
//!   last command a user sent;
//! * every other message (`USM_RESET`, `DRIFT_VECTOR_ADD`, `SET`, mode
//!   strings, `DRIFT_VECTOR_MULT`, which accumulate or act once) is queued as
//!   is, up to [`Mailbox::new`]'s entry and byte limits; past them new
//!   messages are dropped and counted until the next drain.
use std::collections::VecDeque;

use crate::command::{kind_of, Command, Kind};

/// One message waiting for the next iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Mail {
    /// The variable (MOOS name).
    pub var: String,
    /// The payload as received (for logs).
    pub payload: String,
    /// The parsed command.
    pub command: Command,
}

/// What [`Mailbox::push`] did with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Queued at the end.
    Queued,
    /// Replaced a pending message for the same plain setpoint.
    Coalesced,
    /// Dropped: the mailbox is full until the next iteration drains it.
    Dropped,
}

/// Pending mail, bounded (see the module doc).
#[derive(Debug)]
pub struct Mailbox {
    queue: VecDeque<Mail>,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
    dropped: u64,
    coalesced: u64,
}

/// True for variables whose message only sets a value, so a later message
/// makes an earlier pending one irrelevant.
pub fn is_plain_setpoint(var: &str) -> bool {
    kind_of(var) == Some(Kind::Number)
        && !matches!(var, "DRIFT_VECTOR_MULT" | "USM_FORCE_VECTOR_MULT")
}

impl Mailbox {
    /// An empty mailbox holding at most `max_entries` messages and
    /// `max_bytes` bytes of payload.
    pub fn new(max_entries: usize, max_bytes: usize) -> Mailbox {
        Mailbox {
            queue: VecDeque::new(),
            bytes: 0,
            max_entries: max_entries.max(1),
            max_bytes,
            dropped: 0,
            coalesced: 0,
        }
    }

    /// Add one message (see the module doc for the rules).
    pub fn push(&mut self, mail: Mail) -> Pushed {
        let mut outcome = Pushed::Queued;
        let plain = is_plain_setpoint(&mail.var);
        if plain {
            if let Some(i) = self.queue.iter().position(|m| m.var == mail.var) {
                if let Some(old) = self.queue.remove(i) {
                    self.bytes -= old.payload.len();
                }
                self.coalesced += 1;
                outcome = Pushed::Coalesced;
            }
        }
        if !plain
            && (self.queue.len() >= self.max_entries
                || self.bytes + mail.payload.len() > self.max_bytes)
        {
            self.dropped += 1;
            return Pushed::Dropped;
        }
        self.bytes += mail.payload.len();
        self.queue.push_back(mail);
        outcome
    }

    /// Take every pending message, in order, and reset the counters;
    /// returns the messages with the number dropped since the last drain.
    pub fn drain_into(&mut self, out: &mut Vec<Mail>) -> u64 {
        out.extend(self.queue.drain(..));
        self.bytes = 0;
        std::mem::take(&mut self.dropped)
    }

    /// Number of pending messages.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Plain setpoints replaced since the mailbox was made.
    pub fn coalesced_total(&self) -> u64 {
        self.coalesced
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::parse_text;

    fn mail(var: &str, payload: &str) -> Mail {
        Mail {
            var: var.into(),
            payload: payload.into(),
            command: parse_text(var, payload).unwrap(),
        }
    }

    #[test]
    fn latest_setpoint_wins_and_moves_to_the_end() {
        let mut b = Mailbox::new(8, 1 << 16);
        assert_eq!(b.push(mail("DESIRED_THRUST", "10")), Pushed::Queued);
        assert_eq!(b.push(mail("USM_RESET", "x=1,y=2")), Pushed::Queued);
        assert_eq!(b.push(mail("DESIRED_THRUST", "20")), Pushed::Coalesced);
        let mut out = Vec::new();
        assert_eq!(b.drain_into(&mut out), 0);
        let got: Vec<_> = out.iter().map(|m| m.payload.as_str()).collect();
        assert_eq!(got, ["x=1,y=2", "20"]);
        assert!(b.is_empty());
    }

    #[test]
    fn accumulating_messages_queue_and_flood_is_bounded() {
        let mut b = Mailbox::new(4, 1 << 16);
        for _ in 0..10 {
            b.push(mail("DRIFT_VECTOR_ADD", "90, 0.1"));
        }
        for i in 0..10_000 {
            b.push(mail("DESIRED_RUDDER", &i.to_string()));
        }
        // The 4 drift additions that fit, then the last rudder value: plain
        // setpoints enter a full queue, one per variable.
        assert_eq!(b.len(), 5);
        b.push(mail("DRIFT_VECTOR_ADD", "90, 0.1"));
        let mut out = Vec::new();
        let dropped = b.drain_into(&mut out);
        assert_eq!(dropped, 6 + 1);
        let got: Vec<_> = out.iter().map(|m| m.payload.as_str()).collect();
        assert_eq!(got, ["90, 0.1", "90, 0.1", "90, 0.1", "90, 0.1", "9999"]);
    }

    #[test]
    fn byte_budget_is_enforced() {
        let mut b = Mailbox::new(100, 20);
        assert_eq!(
            b.push(mail("USM_RESET", "x=1, y=2, heading=3")),
            Pushed::Queued
        );
        assert_eq!(b.push(mail("USM_RESET", "x=1")), Pushed::Dropped);
        let mut out = Vec::new();
        assert_eq!(b.drain_into(&mut out), 1);
        assert_eq!(b.push(mail("USM_RESET", "x=1")), Pushed::Queued);
    }

    #[test]
    fn setpoint_classification() {
        assert!(is_plain_setpoint("DESIRED_THRUST"));
        assert!(is_plain_setpoint("DRIFT_X"));
        assert!(!is_plain_setpoint("DRIFT_VECTOR_MULT"));
        assert!(!is_plain_setpoint("DRIFT_VECTOR_ADD"));
        assert!(!is_plain_setpoint("SET"));
        assert!(!is_plain_setpoint("NOT_A_VAR"));
    }
}
