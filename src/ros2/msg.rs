//! The ROS 2 message types usim publishes and reads, with their CDR
//! encoding ([`super::cdr`]) and their `ros2msg` definitions (the schema
//! text an MCAP bag carries). Field order and types are those of the
//! message packages of ROS 2 (`builtin_interfaces`, `std_msgs`,
//! `geometry_msgs`, `nav_msgs`, `sensor_msgs`, `tf2_msgs`,
//! `rosgraph_msgs`); docs/ros2.md lists them.
use super::cdr::{CdrError, Reader, Writer};

/// A ROS 2 message with its CDR encoding.
pub trait Message: Sized {
    /// Full type name, `package/msg/Type`.
    const NAME: &'static str;
    /// Write the fields (no header).
    fn write(&self, w: &mut Writer);
    /// Read the fields (no header).
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError>;

    /// The serialized message, encapsulation header included.
    fn to_cdr(&self) -> Vec<u8> {
        let mut w = Writer::new();
        self.write(&mut w);
        w.finish()
    }
    /// The serialized message into `buf` (cleared first).
    fn to_cdr_in(&self, buf: Vec<u8>) -> Vec<u8> {
        let mut w = Writer::reuse(buf);
        self.write(&mut w);
        w.finish()
    }
    /// A whole serialized message (header, fields, at most a few bytes of
    /// padding).
    fn from_cdr(msg: &[u8]) -> Result<Self, CdrError> {
        let mut r = Reader::new(msg)?;
        let m = Self::read(&mut r)?;
        r.end()?;
        Ok(m)
    }
    /// A DDS sample's body (the header travels beside it).
    fn from_body(body: &[u8], little_endian: bool) -> Result<Self, CdrError> {
        let mut r = Reader::body(body, little_endian)?;
        let m = Self::read(&mut r)?;
        r.end()?;
        Ok(m)
    }
}

/// `builtin_interfaces/msg/Time`: seconds and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Time {
    /// Whole seconds.
    pub sec: i32,
    /// Nanoseconds, 0..1e9.
    pub nanosec: u32,
}

impl Time {
    /// `t` seconds (a usim clock) as a ROS time: negative or non-finite
    /// times are 0, times past 2^31 s saturate; nanoseconds rounded.
    pub fn from_secs(t: f64) -> Time {
        if t.is_nan() || t <= 0.0 {
            return Time::default();
        }
        if t >= i32::MAX as f64 {
            return Time {
                sec: i32::MAX,
                nanosec: 999_999_999,
            };
        }
        let mut sec = t.floor();
        let mut ns = ((t - sec) * 1e9).round();
        if ns >= 1e9 {
            sec += 1.0;
            ns -= 1e9;
        }
        Time {
            sec: sec as i32,
            nanosec: ns as u32,
        }
    }

    /// The time in seconds.
    pub fn secs(&self) -> f64 {
        self.sec as f64 + self.nanosec as f64 * 1e-9
    }

    /// Nanoseconds since 0 (0 for negative times): an MCAP log time.
    pub fn nanos(&self) -> u64 {
        u64::try_from(self.sec).unwrap_or(0) * 1_000_000_000 + u64::from(self.nanosec)
    }

    fn write(&self, w: &mut Writer) {
        w.i32(self.sec);
        w.u32(self.nanosec);
    }
    fn read(r: &mut Reader<'_>) -> Result<Time, CdrError> {
        Ok(Time {
            sec: r.i32("stamp.sec")?,
            nanosec: r.u32("stamp.nanosec")?,
        })
    }
}

impl Message for Time {
    const NAME: &'static str = "builtin_interfaces/msg/Time";
    fn write(&self, w: &mut Writer) {
        Time::write(self, w)
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Time::read(r)
    }
}

/// `std_msgs/msg/Header`: stamp and frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    /// When the data was true (usim's clock).
    pub stamp: Time,
    /// The frame the data is given in.
    pub frame_id: String,
}

impl Header {
    fn write(&self, w: &mut Writer) {
        self.stamp.write(w);
        w.string(&self.frame_id);
    }
    fn read(r: &mut Reader<'_>) -> Result<Header, CdrError> {
        Ok(Header {
            stamp: Time::read(r)?,
            frame_id: r.string("header.frame_id")?,
        })
    }
}

/// `geometry_msgs/msg/Pose`: position (m) and orientation (unit quaternion).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    /// `x, y, z`, m.
    pub position: [f64; 3],
    /// `x, y, z, w`.
    pub orientation: [f64; 4],
}

impl Pose {
    fn write(&self, w: &mut Writer) {
        w.f64s(&self.position);
        w.f64s(&self.orientation);
    }
    fn read(r: &mut Reader<'_>) -> Result<Pose, CdrError> {
        Ok(Pose {
            position: r.f64s("pose.position")?,
            orientation: r.f64s("pose.orientation")?,
        })
    }
}

/// `nav_msgs/msg/Odometry`: pose in `header.frame_id`, twist in
/// `child_frame_id`, each with a row-major 6×6 covariance.
#[derive(Debug, Clone, PartialEq)]
pub struct Odometry {
    /// Stamp and the pose's frame (`NAME/odom`).
    pub header: Header,
    /// The twist's frame (`NAME/base_link`).
    pub child_frame_id: String,
    /// Pose in the odom frame.
    pub pose: Pose,
    /// Covariance of (x, y, z, roll, pitch, yaw).
    pub pose_covariance: [f64; 36],
    /// Linear velocity in the child frame, m/s.
    pub linear: [f64; 3],
    /// Angular velocity in the child frame, rad/s.
    pub angular: [f64; 3],
    /// Covariance of the twist.
    pub twist_covariance: [f64; 36],
}

impl Message for Odometry {
    const NAME: &'static str = "nav_msgs/msg/Odometry";
    fn write(&self, w: &mut Writer) {
        self.header.write(w);
        w.string(&self.child_frame_id);
        self.pose.write(w);
        w.f64s(&self.pose_covariance);
        w.f64s(&self.linear);
        w.f64s(&self.angular);
        w.f64s(&self.twist_covariance);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(Odometry {
            header: Header::read(r)?,
            child_frame_id: r.string("child_frame_id")?,
            pose: Pose::read(r)?,
            pose_covariance: r.f64s("pose.covariance")?,
            linear: r.f64s("twist.linear")?,
            angular: r.f64s("twist.angular")?,
            twist_covariance: r.f64s("twist.covariance")?,
        })
    }
}

/// `sensor_msgs/msg/NavSatFix` (with its `NavSatStatus`).
#[derive(Debug, Clone, PartialEq)]
pub struct NavSatFix {
    /// Stamp and the antenna's frame.
    pub header: Header,
    /// `NavSatStatus.status`: −1 no fix, 0 fix, 1 SBAS, 2 GBAS.
    pub status: i8,
    /// `NavSatStatus.service` bit field: 1 GPS, 2 GLONASS, 4 COMPASS, 8 GALILEO.
    pub service: u16,
    /// Degrees north.
    pub latitude: f64,
    /// Degrees east.
    pub longitude: f64,
    /// Metres above the WGS 84 ellipsoid.
    pub altitude: f64,
    /// Row-major 3×3 covariance in ENU, m².
    pub position_covariance: [f64; 9],
    /// 0 unknown, 1 approximated, 2 diagonal known, 3 known.
    pub position_covariance_type: u8,
}

impl Message for NavSatFix {
    const NAME: &'static str = "sensor_msgs/msg/NavSatFix";
    fn write(&self, w: &mut Writer) {
        self.header.write(w);
        w.i8(self.status);
        w.u16(self.service);
        w.f64(self.latitude);
        w.f64(self.longitude);
        w.f64(self.altitude);
        w.f64s(&self.position_covariance);
        w.u8(self.position_covariance_type);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(NavSatFix {
            header: Header::read(r)?,
            status: r.i8("status.status")?,
            service: r.u16("status.service")?,
            latitude: r.f64("latitude")?,
            longitude: r.f64("longitude")?,
            altitude: r.f64("altitude")?,
            position_covariance: r.f64s("position_covariance")?,
            position_covariance_type: r.u8("position_covariance_type")?,
        })
    }
}

/// `geometry_msgs/msg/PoseStamped`.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseStamped {
    /// Stamp and frame.
    pub header: Header,
    /// The pose.
    pub pose: Pose,
}

impl Message for PoseStamped {
    const NAME: &'static str = "geometry_msgs/msg/PoseStamped";
    fn write(&self, w: &mut Writer) {
        self.header.write(w);
        self.pose.write(w);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(PoseStamped {
            header: Header::read(r)?,
            pose: Pose::read(r)?,
        })
    }
}

/// `geometry_msgs/msg/TransformStamped`: `child_frame_id` in `header.frame_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct TransformStamped {
    /// Stamp and parent frame.
    pub header: Header,
    /// Child frame.
    pub child_frame_id: String,
    /// Translation, m.
    pub translation: [f64; 3],
    /// Rotation `x, y, z, w`.
    pub rotation: [f64; 4],
}

impl Message for TransformStamped {
    const NAME: &'static str = "geometry_msgs/msg/TransformStamped";
    fn write(&self, w: &mut Writer) {
        self.header.write(w);
        w.string(&self.child_frame_id);
        w.f64s(&self.translation);
        w.f64s(&self.rotation);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(TransformStamped {
            header: Header::read(r)?,
            child_frame_id: r.string("child_frame_id")?,
            translation: r.f64s("transform.translation")?,
            rotation: r.f64s("transform.rotation")?,
        })
    }
}

/// `tf2_msgs/msg/TFMessage`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TfMessage {
    /// The transforms.
    pub transforms: Vec<TransformStamped>,
}

impl Message for TfMessage {
    const NAME: &'static str = "tf2_msgs/msg/TFMessage";
    fn write(&self, w: &mut Writer) {
        w.seq_len(self.transforms.len());
        for t in &self.transforms {
            t.write(w);
        }
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        // A transform is at least 8 (stamp) + 4 + 4 (two empty strings) +
        // 56 (seven float64s) bytes.
        let n = r.seq_len("transforms", 72)?;
        let mut transforms = Vec::with_capacity(n);
        for _ in 0..n {
            transforms.push(TransformStamped::read(r)?);
        }
        Ok(TfMessage { transforms })
    }
}

/// `std_msgs/msg/Float64`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Float64 {
    /// The value.
    pub data: f64,
}

impl Message for Float64 {
    const NAME: &'static str = "std_msgs/msg/Float64";
    fn write(&self, w: &mut Writer) {
        w.f64(self.data);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(Float64 {
            data: r.f64("data")?,
        })
    }
}

/// `std_msgs/msg/String`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StringMsg {
    /// The text.
    pub data: String,
}

impl Message for StringMsg {
    const NAME: &'static str = "std_msgs/msg/String";
    fn write(&self, w: &mut Writer) {
        w.string(&self.data);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(StringMsg {
            data: r.string("data")?,
        })
    }
}

/// `rosgraph_msgs/msg/Clock`: the simulation time on `/clock`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Clock {
    /// usim's clock.
    pub clock: Time,
}

impl Message for Clock {
    const NAME: &'static str = "rosgraph_msgs/msg/Clock";
    fn write(&self, w: &mut Writer) {
        self.clock.write(w);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(Clock {
            clock: Time::read(r)?,
        })
    }
}

/// `rmw_dds_common/msg/Gid`: the id of a DDS entity as ROS 2 graphs name it,
/// `char[16] data` (rmw_dds_common's Gid.msg): the entity's RTPS GUID, its
/// 12-byte prefix then its 4-byte entity id (what rmw_fastrtps copies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Gid(pub [u8; 16]);

impl Gid {
    fn write(&self, w: &mut Writer) {
        for b in self.0 {
            w.u8(b);
        }
    }
    fn read(r: &mut Reader<'_>) -> Result<Gid, CdrError> {
        let mut g = [0u8; 16];
        for b in &mut g {
            *b = r.u8("gid")?;
        }
        Ok(Gid(g))
    }
    fn read_seq(r: &mut Reader<'_>, what: &str) -> Result<Vec<Gid>, CdrError> {
        let n = r.seq_len(what, 16)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(Gid::read(r)?);
        }
        Ok(v)
    }
    fn write_seq(v: &[Gid], w: &mut Writer) {
        w.seq_len(v.len());
        for g in v {
            g.write(w);
        }
    }
}

/// `rmw_dds_common/msg/NodeEntitiesInfo`: one ROS node of a participant,
/// with the gids of the DDS readers and writers that are its
/// subscriptions, publishers and service endpoints (NodeEntitiesInfo.msg:
/// namespace and name at most 256 characters).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeEntitiesInfo {
    /// The node's namespace (`/`, `/kayak`).
    pub node_namespace: String,
    /// The node's name (`usim`).
    pub node_name: String,
    /// Its readers.
    pub reader_gid_seq: Vec<Gid>,
    /// Its writers.
    pub writer_gid_seq: Vec<Gid>,
}

/// `rmw_dds_common/msg/ParticipantEntitiesInfo`: what a ROS 2 middleware
/// publishes on `ros_discovery_info` so that other nodes learn which ROS
/// nodes a DDS participant holds (ParticipantEntitiesInfo.msg); `ros2 node
/// list` and the node names of `ros2 topic info -v` come from it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParticipantEntitiesInfo {
    /// The participant's gid.
    pub gid: Gid,
    /// Its nodes.
    pub node_entities_info_seq: Vec<NodeEntitiesInfo>,
}

impl Message for ParticipantEntitiesInfo {
    const NAME: &'static str = "rmw_dds_common/msg/ParticipantEntitiesInfo";
    fn write(&self, w: &mut Writer) {
        self.gid.write(w);
        w.seq_len(self.node_entities_info_seq.len());
        for n in &self.node_entities_info_seq {
            w.string(&n.node_namespace);
            w.string(&n.node_name);
            Gid::write_seq(&n.reader_gid_seq, w);
            Gid::write_seq(&n.writer_gid_seq, w);
        }
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        let gid = Gid::read(r)?;
        // A node is at least two empty strings and two empty sequences.
        let n = r.seq_len("node_entities_info_seq", 16)?;
        let mut nodes = Vec::with_capacity(n);
        for _ in 0..n {
            nodes.push(NodeEntitiesInfo {
                node_namespace: r.string("node_namespace")?,
                node_name: r.string("node_name")?,
                reader_gid_seq: Gid::read_seq(r, "reader_gid_seq")?,
                writer_gid_seq: Gid::read_seq(r, "writer_gid_seq")?,
            });
        }
        Ok(ParticipantEntitiesInfo {
            gid,
            node_entities_info_seq: nodes,
        })
    }
}

/// `std_srvs/srv/Trigger` request: no fields. On the wire a struct
/// without members carries one `uint8` (rosidl's
/// `structure_needs_at_least_one_member`, 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TriggerRequest;

impl Message for TriggerRequest {
    const NAME: &'static str = "std_srvs/srv/Trigger_Request";
    fn write(&self, w: &mut Writer) {
        w.u8(0);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        r.u8("structure_needs_at_least_one_member")?;
        Ok(TriggerRequest)
    }
}

/// `std_srvs/srv/Trigger` response (Trigger.srv): whether the service did
/// its work, and a message saying what it did or why not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TriggerResponse {
    /// It worked.
    pub success: bool,
    /// What was done, or why not.
    pub message: String,
}

impl Message for TriggerResponse {
    const NAME: &'static str = "std_srvs/srv/Trigger_Response";
    fn write(&self, w: &mut Writer) {
        w.u8(u8::from(self.success));
        w.string(&self.message);
    }
    fn read(r: &mut Reader<'_>) -> Result<Self, CdrError> {
        Ok(TriggerResponse {
            success: r.u8("success")? != 0,
            message: r.string("message")?,
        })
    }
}

/// The `.msg` definitions (fields only, types written in full) of every
/// type above and of the types they contain, by `package/Type`.
const DEFINITIONS: &[(&str, &str)] = &[
    ("builtin_interfaces/Time", "int32 sec\nuint32 nanosec\n"),
    (
        "std_msgs/Header",
        "builtin_interfaces/Time stamp\nstring frame_id\n",
    ),
    ("std_msgs/Float64", "float64 data\n"),
    ("std_msgs/String", "string data\n"),
    ("rosgraph_msgs/Clock", "builtin_interfaces/Time clock\n"),
    ("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n"),
    ("geometry_msgs/Vector3", "float64 x\nfloat64 y\nfloat64 z\n"),
    (
        "geometry_msgs/Quaternion",
        "float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n",
    ),
    (
        "geometry_msgs/Pose",
        "geometry_msgs/Point position\ngeometry_msgs/Quaternion orientation\n",
    ),
    (
        "geometry_msgs/PoseWithCovariance",
        "geometry_msgs/Pose pose\nfloat64[36] covariance\n",
    ),
    (
        "geometry_msgs/Twist",
        "geometry_msgs/Vector3 linear\ngeometry_msgs/Vector3 angular\n",
    ),
    (
        "geometry_msgs/TwistWithCovariance",
        "geometry_msgs/Twist twist\nfloat64[36] covariance\n",
    ),
    (
        "geometry_msgs/PoseStamped",
        "std_msgs/Header header\ngeometry_msgs/Pose pose\n",
    ),
    (
        "geometry_msgs/Transform",
        "geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation\n",
    ),
    (
        "geometry_msgs/TransformStamped",
        "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/Transform transform\n",
    ),
    (
        "tf2_msgs/TFMessage",
        "geometry_msgs/TransformStamped[] transforms\n",
    ),
    (
        "nav_msgs/Odometry",
        "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/PoseWithCovariance pose\ngeometry_msgs/TwistWithCovariance twist\n",
    ),
    ("sensor_msgs/NavSatStatus", "int8 status\nuint16 service\n"),
    (
        "sensor_msgs/NavSatFix",
        "std_msgs/Header header\nsensor_msgs/NavSatStatus status\nfloat64 latitude\nfloat64 longitude\nfloat64 altitude\nfloat64[9] position_covariance\nuint8 position_covariance_type\n",
    ),
];

/// The line between definitions in a `ros2msg` schema.
const SEPARATOR: &str =
    "================================================================================\n";

/// The `ros2msg` schema of type `name` (`package/msg/Type`) as rosbag2
/// writes it into MCAP: the type's definition, then each type it uses
/// once, depth first, each after a separator line and `MSG: package/Type`.
/// `None` for a type usim does not know.
pub fn ros2msg_schema(name: &str) -> Option<String> {
    let short = name.replacen("/msg/", "/", 1);
    let top = definition(&short)?;
    let mut out = String::from(top);
    let mut seen = vec![short];
    let mut stack: Vec<String> = deps(top).into_iter().rev().collect();
    while let Some(d) = stack.pop() {
        if seen.contains(&d) {
            continue;
        }
        let def = definition(&d)?;
        out.push_str(SEPARATOR);
        out.push_str("MSG: ");
        out.push_str(&d);
        out.push('\n');
        out.push_str(def);
        stack.extend(deps(def).into_iter().rev());
        seen.push(d);
    }
    Some(out)
}

fn definition(short: &str) -> Option<&'static str> {
    DEFINITIONS
        .iter()
        .find(|(n, _)| *n == short)
        .map(|(_, d)| *d)
}

/// The complex types a definition's fields use, in field order.
fn deps(def: &str) -> Vec<String> {
    def.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|t| t.contains('/'))
        .map(|t| t.split('[').next().unwrap_or(t).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_from_seconds_rounds_and_saturates() {
        assert_eq!(
            Time::from_secs(1.5),
            Time {
                sec: 1,
                nanosec: 500_000_000
            }
        );
        assert_eq!(Time::from_secs(-3.0), Time::default());
        assert_eq!(Time::from_secs(f64::NAN), Time::default());
        assert_eq!(Time::from_secs(1e12).sec, i32::MAX);
        // 0.9999999999 s rounds up to a whole second, not nanosec 1e9.
        assert_eq!(Time::from_secs(2.9999999999), Time { sec: 3, nanosec: 0 });
        assert_eq!(Time::from_secs(7.25).nanos(), 7_250_000_000);
    }

    #[test]
    fn every_type_round_trips() {
        let h = Header {
            stamp: Time { sec: 5, nanosec: 7 },
            frame_id: "alpha/odom".into(),
        };
        let odom = Odometry {
            header: h.clone(),
            child_frame_id: "alpha/base_link".into(),
            pose: Pose {
                position: [1.0, 2.0, -3.0],
                orientation: [0.0, 0.0, 0.5, 0.75],
            },
            pose_covariance: [0.25; 36],
            linear: [1.0, 0.0, 0.0],
            angular: [0.0, 0.0, -0.1],
            twist_covariance: [0.5; 36],
        };
        assert_eq!(Odometry::from_cdr(&odom.to_cdr()).unwrap(), odom);
        let fix = NavSatFix {
            header: h.clone(),
            status: 0,
            service: 1,
            latitude: 43.8,
            longitude: -70.3,
            altitude: -1.0,
            position_covariance: [0.0; 9],
            position_covariance_type: 0,
        };
        assert_eq!(NavSatFix::from_cdr(&fix.to_cdr()).unwrap(), fix);
        let tf = TfMessage {
            transforms: vec![
                TransformStamped {
                    header: h.clone(),
                    child_frame_id: "c".into(),
                    translation: [1.0, 2.0, 3.0],
                    rotation: [0.0, 0.0, 0.0, 1.0],
                };
                2
            ],
        };
        assert_eq!(TfMessage::from_cdr(&tf.to_cdr()).unwrap(), tf);
        let s = StringMsg {
            data: "a,b=c".into(),
        };
        assert_eq!(StringMsg::from_cdr(&s.to_cdr()).unwrap(), s);
        let c = Clock {
            clock: Time { sec: 9, nanosec: 1 },
        };
        assert_eq!(Clock::from_cdr(&c.to_cdr()).unwrap(), c);
        let info = ParticipantEntitiesInfo {
            gid: Gid([7; 16]),
            node_entities_info_seq: vec![NodeEntitiesInfo {
                node_namespace: "/alpha".into(),
                node_name: "usim".into(),
                reader_gid_seq: vec![Gid([1; 16])],
                writer_gid_seq: vec![Gid([2; 16]), Gid([3; 16])],
            }],
        };
        assert_eq!(
            ParticipantEntitiesInfo::from_cdr(&info.to_cdr()).unwrap(),
            info
        );
        let resp = TriggerResponse {
            success: true,
            message: "ok".into(),
        };
        assert_eq!(TriggerResponse::from_cdr(&resp.to_cdr()).unwrap(), resp);
        assert_eq!(
            TriggerRequest::from_cdr(&TriggerRequest.to_cdr()).unwrap(),
            TriggerRequest
        );
        // The body alone, as DDS hands it over.
        let b = Float64 { data: -2.5 }.to_cdr();
        assert_eq!(Float64::from_body(&b[4..], true).unwrap().data, -2.5);
    }

    #[test]
    fn every_cut_of_a_message_is_an_error() {
        let odom = Odometry {
            header: Header::default(),
            child_frame_id: "b".into(),
            pose: Pose::default(),
            pose_covariance: [0.0; 36],
            linear: [0.0; 3],
            angular: [0.0; 3],
            twist_covariance: [0.0; 36],
        };
        let b = odom.to_cdr();
        for n in 0..b.len() {
            assert!(Odometry::from_cdr(&b[..n]).is_err(), "cut at {n}");
        }
    }

    #[test]
    fn schemas_list_each_dependency_once() {
        let s = ros2msg_schema("nav_msgs/msg/Odometry").unwrap();
        assert!(s.starts_with("std_msgs/Header header\n"));
        for dep in [
            "std_msgs/Header",
            "builtin_interfaces/Time",
            "geometry_msgs/PoseWithCovariance",
            "geometry_msgs/Pose",
            "geometry_msgs/Point",
            "geometry_msgs/Quaternion",
            "geometry_msgs/TwistWithCovariance",
            "geometry_msgs/Twist",
            "geometry_msgs/Vector3",
        ] {
            assert_eq!(s.matches(&format!("MSG: {dep}\n")).count(), 1, "{dep}");
        }
        assert_eq!(
            ros2msg_schema("std_msgs/msg/Float64").unwrap(),
            "float64 data\n"
        );
        assert!(ros2msg_schema("std_msgs/msg/Bool").is_none());
        // Every named type has a definition.
        for (_, def) in DEFINITIONS {
            for d in deps(def) {
                assert!(definition(&d).is_some(), "{d}");
            }
        }
    }
}
