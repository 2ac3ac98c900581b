//! The DDS participant: usim on a ROS 2 graph over RTPS, through RustDDS
//! (pure Rust: no ROS install, no C library). This is the shell that owns
//! sockets; what goes in and out of them is made by the sans-IO
//! [`crate::ros2`] (CDR codecs, names, QoS, the state mapping).
//!
//! * [`Participant`]: one DDS domain participant (`ROS_DOMAIN_ID`), with a
//!   [`Writer`]/[`Reader`] per ROS topic that carry serialized CDR as it is:
//!   RustDDS never (de)serializes usim's messages.
//! * [`vehicle::VehiclePorts`]: one vehicle's topics (`/NAME/...`, `/tf`).
//! * [`claim`]: a second usim with the same vehicle name is refused.
//! * [`live`]: `usim ros2`, the ROS 2 adapter on the live host.
//!
//! The live loop that steps vehicles is not here: [`live`] plugs into the
//! one live host (`crate::live`) every live transport shares.
pub mod claim;
pub mod live;
pub mod vehicle;

use std::collections::HashMap;
use std::fmt;

use bytes::Bytes;
use rustdds::no_key::{Decode, DefaultDecoder, DeserializerAdapter, SerializerAdapter};
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{
    DomainParticipant, QosPolicies, QosPolicyBuilder, RTPSEntity, ReadCondition,
    RepresentationIdentifier, SampleIdentity, Topic, TopicKind, WriteOptionsBuilder,
};

use crate::ros2::cdr::HEADER_CDR_LE;
use crate::ros2::msg::{Gid, Message};
use crate::ros2::names;
use crate::ros2::qos::Qos;

/// Most samples one [`Reader::take`] returns (the reader's history bounds
/// what waits: keep-last `depth` samples per topic).
pub const MAX_TAKE: usize = 64;

/// A DDS error, with what usim was doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DdsError(pub String);

impl fmt::Display for DdsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DdsError {}

fn err(what: &str, e: impl fmt::Display) -> DdsError {
    DdsError(format!("DDS: {what}: {e}"))
}

/// A serialized sample's body (no encapsulation header) and its byte order.
#[derive(Debug, Clone)]
pub struct RawSample {
    /// The CDR body.
    pub body: Bytes,
    /// Little-endian (`CDR_LE`) or big-endian.
    pub little_endian: bool,
}

/// Why RustDDS could not decode a raw sample (never: every byte string is
/// handed on; the CDR codecs judge it).
#[derive(Debug)]
pub struct NoError;

impl fmt::Display for NoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("raw CDR")
    }
}

impl std::error::Error for NoError {}

/// Hands the bytes of a sample through RustDDS unchanged.
pub struct RawAdapter;

/// [`RawAdapter`]'s decoder.
#[derive(Clone)]
pub struct RawDecoder;

impl<'de> Decode<'de, RawSample> for RawDecoder {
    type Error = NoError;
    fn decode_bytes(
        self,
        input: &'de [u8],
        encoding: RepresentationIdentifier,
    ) -> Result<RawSample, NoError> {
        Ok(RawSample {
            body: Bytes::copy_from_slice(input),
            little_endian: encoding == RepresentationIdentifier::CDR_LE,
        })
    }
}

impl DeserializerAdapter<RawSample> for RawAdapter {
    type Error = NoError;
    type Decoded = RawSample;
    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &[
            RepresentationIdentifier::CDR_LE,
            RepresentationIdentifier::CDR_BE,
        ]
    }
    fn transform_decoded(d: RawSample) -> RawSample {
        d
    }
}

impl DefaultDecoder<RawSample> for RawAdapter {
    type Decoder = RawDecoder;
    const DECODER: RawDecoder = RawDecoder;
}

impl SerializerAdapter<RawSample> for RawAdapter {
    type Error = NoError;
    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }
    fn to_bytes(v: &RawSample) -> Result<Bytes, NoError> {
        Ok(v.body.clone())
    }
}

/// DDS policies of a usim QoS.
pub fn policies(q: Qos) -> QosPolicies {
    let reliability = if q.reliable {
        Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(10),
        }
    } else {
        Reliability::BestEffort
    };
    let durability = if q.transient_local {
        Durability::TransientLocal
    } else {
        Durability::Volatile
    };
    QosPolicyBuilder::new()
        .reliability(reliability)
        .durability(durability)
        .history(History::KeepLast {
            depth: q.depth.clamp(1, 1000) as i32,
        })
        .build()
}

/// One DDS domain participant.
pub struct Participant {
    dp: DomainParticipant,
    publisher: rustdds::Publisher,
    subscriber: rustdds::Subscriber,
    topics: HashMap<String, Topic>,
}

/// Writes one ROS topic.
pub struct Writer {
    w: rustdds::no_key::DataWriter<RawSample, RawAdapter>,
    matched: usize,
    /// The ROS topic, for errors.
    pub topic: String,
}

/// Reads one ROS topic.
pub struct Reader {
    r: rustdds::no_key::DataReader<RawSample, RawAdapter>,
    /// The ROS topic.
    pub topic: String,
}

impl Participant {
    /// A participant on DDS domain `domain` (ROS 2's `ROS_DOMAIN_ID`, 0–232).
    pub fn new(domain: u16) -> Result<Participant, DdsError> {
        if domain > 232 {
            return Err(DdsError(format!(
                "ROS_DOMAIN_ID {domain} is outside 0..=232 (its RTPS ports would not exist)"
            )));
        }
        let dp = DomainParticipant::new(domain).map_err(|e| err("cannot join the domain", e))?;
        let q = policies(crate::ros2::qos::DEFAULT);
        let publisher = dp
            .create_publisher(&q)
            .map_err(|e| err("cannot create a publisher", e))?;
        let subscriber = dp
            .create_subscriber(&q)
            .map_err(|e| err("cannot create a subscriber", e))?;
        Ok(Participant {
            dp,
            publisher,
            subscriber,
            topics: HashMap::new(),
        })
    }

    /// The domain id.
    pub fn domain(&self) -> u16 {
        self.dp.domain_id()
    }

    /// The participant's gid (its RTPS GUID), as ROS graphs name it.
    pub fn gid(&self) -> Gid {
        Gid(self.dp.guid().to_bytes())
    }

    fn topic(&mut self, dds_topic: &str, dds_type: &str, q: Qos) -> Result<Topic, DdsError> {
        if let Some(t) = self.topics.get(dds_topic) {
            return Ok(t.clone());
        }
        let t = self
            .dp
            .create_topic(
                dds_topic.to_string(),
                dds_type.to_string(),
                &policies(q),
                TopicKind::NoKey,
            )
            .map_err(|e| err(&format!("cannot create topic {dds_topic}"), e))?;
        self.topics.insert(dds_topic.to_string(), t.clone());
        Ok(t)
    }

    /// A writer of ROS topic `ros_topic` (e.g. `/alpha/odom`) carrying ROS
    /// type `ros_type` (`nav_msgs/msg/Odometry`).
    pub fn writer(&mut self, ros_topic: &str, ros_type: &str, q: Qos) -> Result<Writer, DdsError> {
        let mut w = self.writer_dds(&names::dds_topic(ros_topic), &names::dds_type(ros_type), q)?;
        w.topic = ros_topic.to_string();
        Ok(w)
    }

    /// A writer of DDS topic `dds_topic` and DDS type `dds_type` as they
    /// are (`ros_discovery_info`, a service's `rr/...Reply`).
    pub fn writer_dds(
        &mut self,
        dds_topic: &str,
        dds_type: &str,
        q: Qos,
    ) -> Result<Writer, DdsError> {
        let t = self.topic(dds_topic, dds_type, q)?;
        let w = self
            .publisher
            .create_datawriter_no_key::<RawSample, RawAdapter>(&t, Some(policies(q)))
            .map_err(|e| err(&format!("cannot write {dds_topic}"), e))?;
        Ok(Writer {
            w,
            matched: 0,
            topic: dds_topic.to_string(),
        })
    }

    /// A reader of ROS topic `ros_topic` carrying `ros_type`.
    pub fn reader(&mut self, ros_topic: &str, ros_type: &str, q: Qos) -> Result<Reader, DdsError> {
        let mut r = self.reader_dds(&names::dds_topic(ros_topic), &names::dds_type(ros_type), q)?;
        r.topic = ros_topic.to_string();
        Ok(r)
    }

    /// A reader of DDS topic `dds_topic` and type `dds_type` as they are
    /// (a service's `rq/...Request`).
    pub fn reader_dds(
        &mut self,
        dds_topic: &str,
        dds_type: &str,
        q: Qos,
    ) -> Result<Reader, DdsError> {
        let t = self.topic(dds_topic, dds_type, q)?;
        let r = self
            .subscriber
            .create_datareader_no_key::<RawSample, RawAdapter>(&t, Some(policies(q)))
            .map_err(|e| err(&format!("cannot read {dds_topic}"), e))?;
        Ok(Reader {
            r,
            topic: dds_topic.to_string(),
        })
    }
}

impl Writer {
    /// Publish serialized message `cdr` (encapsulation header included, as
    /// [`Message::to_cdr`] makes it).
    pub fn publish_cdr(&self, cdr: &[u8]) -> Result<(), DdsError> {
        let body = match cdr.strip_prefix(&HEADER_CDR_LE[..]) {
            Some(b) => b,
            None => return Err(DdsError(format!("{}: not CDR little-endian", self.topic))),
        };
        let s = RawSample {
            body: Bytes::copy_from_slice(body),
            little_endian: true,
        };
        self.w
            .write(s, None)
            .map_err(|e| err(&format!("cannot publish on {}", self.topic), e))
    }

    /// Publish message `m`.
    pub fn publish<M: Message>(&self, m: &M) -> Result<(), DdsError> {
        self.publish_cdr(&m.to_cdr())
    }

    /// Publish message `m` as the reply to request `to` (its sample
    /// identity travels in the sample's inline QoS as the related sample
    /// identity: how a ROS 2 client over Fast DDS pairs a reply with its
    /// request).
    pub fn reply<M: Message>(&self, m: &M, to: SampleIdentity) -> Result<(), DdsError> {
        let cdr = m.to_cdr();
        let body = cdr.strip_prefix(&HEADER_CDR_LE[..]).unwrap_or(&cdr);
        let s = RawSample {
            body: Bytes::copy_from_slice(body),
            little_endian: true,
        };
        let opts = WriteOptionsBuilder::new()
            .related_sample_identity(to)
            .build();
        self.w
            .write_with_options(s, opts)
            .map(|_| ())
            .map_err(|e| err(&format!("cannot reply on {}", self.topic), e))
    }

    /// The writer's gid (its RTPS GUID).
    pub fn gid(&self) -> Gid {
        Gid(self.w.guid().to_bytes())
    }

    /// How many readers this writer is matched with now (from the
    /// writer's publication-matched events since the last call).
    pub fn matched(&mut self) -> usize {
        use rustdds::{DataWriterStatus, StatusEvented};
        while let Some(ev) = self.w.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = ev {
                self.matched = usize::try_from(current.count()).unwrap_or(0);
            }
        }
        self.matched
    }
}

impl Reader {
    /// The samples that arrived since the last call, oldest first, at most
    /// [`MAX_TAKE`].
    pub fn take(&mut self) -> Vec<RawSample> {
        match self.r.take(MAX_TAKE, ReadCondition::not_read()) {
            Ok(v) => v.into_iter().map(|s| s.into_value()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The samples that arrived since the last call with each one's sample
    /// identity (its writer and sequence number: what a service reply
    /// names), oldest first, at most [`MAX_TAKE`].
    pub fn take_identified(&mut self) -> Vec<(RawSample, SampleIdentity)> {
        match self.r.take(MAX_TAKE, ReadCondition::not_read()) {
            Ok(v) => v
                .into_iter()
                .map(|s| {
                    let id = s.sample_info().sample_identity();
                    (s.into_value(), id)
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The reader's gid (its RTPS GUID).
    pub fn gid(&self) -> Gid {
        Gid(self.r.guid().to_bytes())
    }

    /// The messages of type `M` that arrived since the last call; a sample
    /// that does not decode is an `Err` naming the topic.
    pub fn take_messages<M: Message>(&mut self) -> Vec<Result<M, String>> {
        let topic = self.topic.clone();
        self.take()
            .into_iter()
            .map(|s| M::from_body(&s.body, s.little_endian).map_err(|e| format!("{topic}: {e}")))
            .collect()
    }
}
