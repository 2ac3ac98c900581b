//! Who gets one of the TCP server's client slots (sans-IO): `usim nmea
//! --tcp` serves at most [`MAX_CLIENTS`] listeners, at most
//! [`MAX_PER_ADDRESS`] of them from one IP address. A listener never sends
//! anything, so silence says nothing about it; instead a new connection
//! always gets in and the one that has to go is the longest-connected one
//! of its own address when that address is at its cap, else (all slots
//! taken) the longest-connected one of the address holding the most
//! slots. A host opening many idle sockets thus only ever displaces its
//! own, and a chart plotter connecting from anywhere is served.
use std::collections::HashMap;
use std::net::IpAddr;

/// Most TCP clients at once.
pub const MAX_CLIENTS: usize = 64;
/// Most TCP clients from one IP address at once.
pub const MAX_PER_ADDRESS: usize = 8;

/// A client's slot number (assigned in connection order).
pub type SlotId = u64;

/// The clients holding slots.
#[derive(Debug, Clone)]
pub struct Slots {
    max: usize,
    per_address: usize,
    /// (slot, address), oldest first.
    held: Vec<(SlotId, IpAddr)>,
    next: SlotId,
}

impl Default for Slots {
    fn default() -> Self {
        Slots::new(MAX_CLIENTS, MAX_PER_ADDRESS)
    }
}

impl Slots {
    /// At most `max` clients, `per_address` from one address (both at least 1).
    pub fn new(max: usize, per_address: usize) -> Slots {
        Slots {
            max: max.max(1),
            per_address: per_address.max(1),
            held: Vec::new(),
            next: 0,
        }
    }

    /// A client from `addr` connects: its slot, and the slot whose client
    /// must be closed to make room for it, if any.
    pub fn admit(&mut self, addr: IpAddr) -> (SlotId, Option<SlotId>) {
        let mine = self.held.iter().filter(|(_, a)| *a == addr).count();
        let evict = if mine >= self.per_address {
            self.oldest_of(addr)
        } else if self.held.len() >= self.max {
            let mut count: HashMap<IpAddr, usize> = HashMap::new();
            for (_, a) in &self.held {
                *count.entry(*a).or_insert(0) += 1;
            }
            // The most slots; ties go to the address whose oldest slot is oldest.
            let top = count.values().copied().max().unwrap_or(0);
            self.held
                .iter()
                .find(|(_, a)| count.get(a) == Some(&top))
                .map(|(id, _)| *id)
        } else {
            None
        };
        if let Some(e) = evict {
            self.release(e);
        }
        let id = self.next;
        self.next += 1;
        self.held.push((id, addr));
        (id, evict)
    }

    /// A client closed (or was closed): its slot is free.
    pub fn release(&mut self, id: SlotId) {
        self.held.retain(|(s, _)| *s != id);
    }

    /// Clients holding slots.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// No client.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    fn oldest_of(&self, addr: IpAddr) -> Option<SlotId> {
        self.held
            .iter()
            .find(|(_, a)| *a == addr)
            .map(|(id, _)| *id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn one_host_only_ever_displaces_its_own_oldest() {
        let mut s = Slots::default();
        let attacker = ip("10.0.0.9");
        for i in 0..MAX_PER_ADDRESS as u64 {
            assert_eq!(s.admit(attacker), (i, None));
        }
        // The 9th from the same host closes its first.
        assert_eq!(s.admit(attacker), (8, Some(0)));
        // 64 more from it: still 8 held, each new one closing its oldest.
        for _ in 0..64 {
            let (_, e) = s.admit(attacker);
            assert!(e.is_some());
        }
        assert_eq!(s.len(), MAX_PER_ADDRESS);
        // A plotter elsewhere gets in without closing anyone.
        assert_eq!(s.admit(ip("192.168.1.20")).1, None);
    }

    #[test]
    fn when_full_the_most_represented_address_gives_way() {
        let mut s = Slots::new(10, 4);
        for a in ["10.0.0.1", "10.0.0.2"] {
            for _ in 0..4 {
                assert_eq!(s.admit(ip(a)).1, None);
            }
        }
        assert_eq!(s.admit(ip("10.0.0.3")).1, None);
        assert_eq!(s.admit(ip("10.0.0.3")).1, None);
        assert_eq!(s.len(), 10);
        // Full: 10.0.0.1 and .2 hold 4 each; .1's oldest (slot 0) is the oldest.
        assert_eq!(s.admit(ip("10.0.0.4")), (10, Some(0)));
        // Now .2 holds the most (4): its oldest, slot 4, goes.
        assert_eq!(s.admit(ip("10.0.0.5")), (11, Some(4)));
        s.release(11);
        assert_eq!(s.admit(ip("10.0.0.5")), (12, None));
    }
}
