//! The vehicle-name claim on DDS: a second usim with the same vehicle name
//! on the same domain is refused, by the rule MQTT's claim uses
//! ([`crate::live::claim`]: probes and owner answers, lower random number
//! wins a race), carried as `std_msgs/String` on `/NAME/usim/claim`
//! (reliable, volatile). A claimant probes for a window (discovery has to
//! find the peers first: DDS has no broker that holds the subscribers);
//! the owner then answers probes for as long as it runs ([`ClaimGuard::serve`]).
use std::time::{Duration, Instant};

use super::{DdsError, Participant, Reader, Writer};
use crate::live::claim::{owner_answer, Claimant, Verdict};
use crate::ros2::msg::{Gid, Message, StringMsg};
use crate::ros2::{names, qos};

/// How long a claimant listens by default, s: longer than DDS discovery
/// takes on one host (under a second here) with room for a loaded machine.
pub const DEFAULT_WINDOW: Duration = Duration::from_millis(2500);
/// Probes sent during the window.
pub const PROBES: u32 = 10;

/// A claimed vehicle name; answer probes with [`ClaimGuard::serve`] every
/// tick for as long as the vehicle runs.
pub struct ClaimGuard {
    nonce: String,
    writer: Writer,
    reader: Reader,
}

fn open(p: &mut Participant, name: &str) -> Result<(Writer, Reader), DdsError> {
    names::check_ros_name(name).map_err(|e| DdsError(format!("vehicle `{name}`: {e}")))?;
    let topic = names::claim(name);
    Ok((
        p.writer(&topic, StringMsg::NAME, qos::DEFAULT)?,
        p.reader(&topic, StringMsg::NAME, qos::DEFAULT)?,
    ))
}

/// Claim vehicle `name` on `p` as `me`, listening for `window`. Refused
/// (an error saying why) when a running usim owns the name, or when a
/// concurrent claimant wins the race.
pub fn claim_as(
    p: &mut Participant,
    name: &str,
    me: &Claimant,
    window: Duration,
) -> Result<ClaimGuard, DdsError> {
    let mut v = claim_many(p, &[name], me, window)?;
    v.pop()
        .ok_or_else(|| DdsError(format!("vehicle `{name}`: nothing claimed")))
}

/// Claim every name of `vehicles` on `p` as `me` in one window (a fleet's
/// start-up costs one window, not one per vehicle); refused as a whole
/// when one of them is refused ([`claim_as`]).
pub fn claim_many(
    p: &mut Participant,
    vehicles: &[&str],
    me: &Claimant,
    window: Duration,
) -> Result<Vec<ClaimGuard>, DdsError> {
    let mut ports = Vec::with_capacity(vehicles.len());
    for name in vehicles {
        ports.push(open(p, name)?);
    }
    let probe = StringMsg {
        data: me.probe().payload(),
    };
    let every = window / PROBES.max(1);
    let t0 = Instant::now();
    let mut next = t0;
    while t0.elapsed() < window {
        let now = Instant::now();
        let send = now >= next;
        if send {
            next += every;
        }
        for (name, (writer, reader)) in vehicles.iter().zip(ports.iter_mut()) {
            if send {
                writer.publish(&probe)?;
            }
            for m in reader.take_messages::<StringMsg>().into_iter().flatten() {
                match me.judge(m.data.as_bytes()) {
                    Verdict::Taken => {
                        return Err(DdsError(format!(
                            "vehicle name `{name}` is taken: another usim runs it on DDS domain {} (topic {})",
                            p.domain(),
                            names::claim(name)
                        )))
                    }
                    Verdict::LostRace => {
                        return Err(DdsError(format!(
                            "vehicle name `{name}` is being claimed by another usim starting at the same time on DDS domain {}",
                            p.domain()
                        )))
                    }
                    Verdict::AnswerWithProbe => writer.publish(&probe)?,
                    Verdict::Ignore => {}
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(ports
        .into_iter()
        .map(|(writer, reader)| ClaimGuard {
            nonce: me.nonce.clone(),
            writer,
            reader,
        })
        .collect())
}

/// [`claim_as`] with this process's identity.
pub fn claim(p: &mut Participant, name: &str, window: Duration) -> Result<ClaimGuard, DdsError> {
    claim_as(p, name, &Claimant::this_process(), window)
}

impl ClaimGuard {
    /// The gids of the claim topic's reader and writer.
    pub fn gids(&self) -> (Gid, Gid) {
        (self.reader.gid(), self.writer.gid())
    }

    /// Answer every probe heard since the last call: the name is ours.
    pub fn serve(&mut self) -> Result<(), DdsError> {
        for m in self
            .reader
            .take_messages::<StringMsg>()
            .into_iter()
            .flatten()
        {
            if let Some(answer) = owner_answer(&self.nonce, m.data.as_bytes()) {
                self.writer.publish(&StringMsg { data: answer })?;
            }
        }
        Ok(())
    }
}
