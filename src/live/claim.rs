//! The live-name claim (sans-IO): before a vehicle (or a fleet) starts, it
//! asks on `{root}/NAME/claim` whether NAME is taken, and every running
//! owner of a name answers there. A retained `status` alone is not trusted:
//! anyone can publish a retained `offline` (issue 20).
//!
//! Messages (plain text, at most [`MAX_CLAIM_PAYLOAD`] bytes, QoS 0, never
//! retained):
//!
//! * `probe NONCE RAND`: a process with the per-process nonce `NONCE` wants
//!   the name; `RAND` is a random `u64` drawn once per process.
//! * `owner NONCE`: the process `NONCE` runs the name (answer to a probe).
//!
//! A claimant sends its probe a few times during its listening window. It
//! refuses to start on an `owner` answer, or on a concurrent `probe` whose
//! `(RAND, NONCE)` is smaller than its own (lower wins, so of two processes
//! started at the same instant exactly one starts). When it hears a
//! concurrent probe it loses to nobody, it answers with its own probe, so
//! a claimant that subscribed after its first probe still learns of it.
use std::sync::OnceLock;

/// Last topic level of the claim topic.
pub const CLAIM: &str = "claim";
/// Largest claim payload read, bytes; longer payloads are ignored.
pub const MAX_CLAIM_PAYLOAD: usize = 128;

/// A parsed claim message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimMsg {
    /// A process wants the name.
    Probe {
        /// The claimant's process nonce.
        nonce: String,
        /// Its random number (lower wins).
        rand: u64,
    },
    /// A running process owns the name.
    Owner {
        /// The owner's process nonce.
        nonce: String,
    },
}

impl ClaimMsg {
    /// Parse a payload; `None` for anything that is not a claim message
    /// (oversize, not UTF-8, unknown word, bad number).
    pub fn parse(payload: &[u8]) -> Option<ClaimMsg> {
        if payload.len() > MAX_CLAIM_PAYLOAD {
            return None;
        }
        let text = std::str::from_utf8(payload).ok()?;
        let mut words = text.split(' ');
        let kind = words.next()?;
        let nonce = words.next()?;
        if nonce.is_empty() || !nonce.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let msg = match kind {
            "probe" => ClaimMsg::Probe {
                nonce: nonce.to_string(),
                rand: canonical_u64(words.next()?)?,
            },
            "owner" => ClaimMsg::Owner {
                nonce: nonce.to_string(),
            },
            _ => return None,
        };
        words.next().is_none().then_some(msg)
    }

    /// The payload of this message.
    pub fn payload(&self) -> String {
        match self {
            ClaimMsg::Probe { nonce, rand } => format!("probe {nonce} {rand}"),
            ClaimMsg::Owner { nonce } => format!("owner {nonce}"),
        }
    }
}

/// A number as [`ClaimMsg::payload`] writes it: decimal digits, no sign,
/// no leading zero (so that a parsed message writes back to its payload).
fn canonical_u64(w: &str) -> Option<u64> {
    let digits = !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    if !digits || (w.len() > 1 && w.starts_with('0')) {
        return None;
    }
    w.parse().ok()
}

/// What a claimant does with a message it heard on a name's claim topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing (our own message, or not a claim message).
    Ignore,
    /// A running owner answered: the name is taken.
    Taken,
    /// A concurrent claimant with a lower number: it starts, we do not.
    LostRace,
    /// A concurrent claimant we win against: send our probe again so that
    /// it hears us.
    AnswerWithProbe,
}

/// This process's claim identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    /// The per-process nonce ([`process_nonce`]).
    pub nonce: String,
    /// The per-process random number ([`process_rand`]).
    pub rand: u64,
}

impl Claimant {
    /// This process's identity.
    pub fn this_process() -> Claimant {
        Claimant {
            nonce: process_nonce().to_string(),
            rand: process_rand(),
        }
    }

    /// Our probe.
    pub fn probe(&self) -> ClaimMsg {
        ClaimMsg::Probe {
            nonce: self.nonce.clone(),
            rand: self.rand,
        }
    }

    /// Judge one payload heard while claiming.
    pub fn judge(&self, payload: &[u8]) -> Verdict {
        match ClaimMsg::parse(payload) {
            Some(ClaimMsg::Owner { nonce }) if nonce != self.nonce => Verdict::Taken,
            Some(ClaimMsg::Probe { nonce, rand }) if nonce != self.nonce => {
                if (rand, nonce.as_str()) < (self.rand, self.nonce.as_str()) {
                    Verdict::LostRace
                } else {
                    Verdict::AnswerWithProbe
                }
            }
            _ => Verdict::Ignore,
        }
    }
}

/// The answer a running owner with nonce `ours` gives to `payload` heard on
/// its claim topic: `Some(owner message)` for another process's probe.
pub fn owner_answer(ours: &str, payload: &[u8]) -> Option<String> {
    match ClaimMsg::parse(payload) {
        Some(ClaimMsg::Probe { nonce, .. }) if nonce != ours => Some(
            ClaimMsg::Owner {
                nonce: ours.to_string(),
            }
            .payload(),
        ),
        _ => None,
    }
}

fn random_u64(salt: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(salt);
    h.write_u32(std::process::id());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(nanos);
    h.finish()
}

/// A random 16-hex-digit nonce drawn once per process: part of every MQTT
/// client id of the process and of its claim messages.
pub fn process_nonce() -> &'static str {
    static NONCE: OnceLock<String> = OnceLock::new();
    NONCE.get_or_init(|| format!("{:016x}", random_u64(1)))
}

/// A random number drawn once per process for claim races (lower wins).
pub fn process_rand() -> u64 {
    static RAND: OnceLock<u64> = OnceLock::new();
    *RAND.get_or_init(|| random_u64(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me(rand: u64, nonce: &str) -> Claimant {
        Claimant {
            nonce: nonce.into(),
            rand,
        }
    }

    #[test]
    fn messages_round_trip_and_junk_is_ignored() {
        let p = ClaimMsg::Probe {
            nonce: "ab12".into(),
            rand: u64::MAX,
        };
        assert_eq!(ClaimMsg::parse(p.payload().as_bytes()), Some(p));
        let o = ClaimMsg::Owner { nonce: "z9".into() };
        assert_eq!(ClaimMsg::parse(o.payload().as_bytes()), Some(o));
        assert_eq!(
            ClaimMsg::parse(b"probe ab 0"),
            Some(ClaimMsg::Probe {
                nonce: "ab".into(),
                rand: 0
            })
        );
        for junk in [
            &b""[..],
            b"probe",
            b"probe ab",
            b"probe ab -1",
            b"probe ab 1 2",
            b"probe ab 09",
            b"probe ab +9",
            b"probe ab 18446744073709551616",
            b"owner a$b",
            b"owner ",
            b"offline",
            b"\xff\xfe",
        ] {
            assert_eq!(ClaimMsg::parse(junk), None, "{junk:?}");
        }
        let mut big = b"owner ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 200));
        assert_eq!(ClaimMsg::parse(&big), None);
    }

    #[test]
    fn of_two_claimants_exactly_one_wins() {
        let a = me(5, "aaaa");
        let b = me(7, "bbbb");
        assert_eq!(
            a.judge(b.probe().payload().as_bytes()),
            Verdict::AnswerWithProbe
        );
        assert_eq!(b.judge(a.probe().payload().as_bytes()), Verdict::LostRace);
        // Equal numbers: the nonce decides, still exactly one.
        let c = me(5, "cccc");
        assert_eq!(
            a.judge(c.probe().payload().as_bytes()),
            Verdict::AnswerWithProbe
        );
        assert_eq!(c.judge(a.probe().payload().as_bytes()), Verdict::LostRace);
        // Our own probe echoed back is ignored.
        assert_eq!(a.judge(a.probe().payload().as_bytes()), Verdict::Ignore);
    }

    #[test]
    fn an_owner_answers_other_probes_only() {
        let a = me(5, "aaaa");
        let ans = owner_answer("ownr", a.probe().payload().as_bytes()).unwrap();
        assert_eq!(a.judge(ans.as_bytes()), Verdict::Taken);
        assert_eq!(owner_answer("aaaa", a.probe().payload().as_bytes()), None);
        assert_eq!(owner_answer("ownr", b"owner xyz"), None);
    }

    #[test]
    fn the_nonce_is_stable_and_plain() {
        assert_eq!(process_nonce(), process_nonce());
        assert_eq!(process_nonce().len(), 16);
        assert!(process_nonce().chars().all(|c| c.is_ascii_hexdigit()));
    }
}
