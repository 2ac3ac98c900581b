//! A replay as a ROS 2 bag: MCAP with `ros2msg` schemas and CDR messages
//! (profile `ros2`, as rosbag2 writes it), on the topics a live usim
//! publishes on a ROS 2 graph (docs/ros2.md), so ROS 2 bag tools read a
//! replay as if it were recorded from a robot. Per vehicle `NAME`, every
//! output step:
//!
//! | topic | type |
//! |---|---|
//! | `/NAME/odom` | `nav_msgs/msg/Odometry` |
//! | `/NAME/pose` | `geometry_msgs/msg/PoseStamped` |
//! | `/NAME/fix` | `sensor_msgs/msg/NavSatFix` (with lat/lon only) |
//! | `/tf` | `tf2_msgs/msg/TFMessage` |
//! | `/clock` | `rosgraph_msgs/msg/Clock` (once per output time) |
//!
//! and every iteration the vehicle's postings on `/NAME/<var>` (`NAV_X` →
//! `/NAME/nav_x`, `std_msgs/msg/Float64` or `String`), and each mission
//! post on its command topic (`DESIRED_RUDDER` → `/NAME/desired_rudder`).
//! Log and publish times are the usim clock in nanoseconds, the same as
//! the header stamps. The messages are made by [`crate::ros2::convert`],
//! the code the live DDS participant uses.
use std::collections::HashMap;
use std::io::{self, Seek, Write};

use super::mcap::{command_value, CommandValue};
use crate::model::Snapshot;
use crate::ros2::convert::{self, VarMessage, VehicleFrames};
use crate::ros2::msg::{
    Clock, Float64, Message, NavSatFix, Odometry, PoseStamped, StringMsg, TfMessage, Time,
};
use crate::ros2::names;

fn mcap_err(e: mcap::McapError) -> io::Error {
    match e {
        mcap::McapError::Io(e) => e,
        other => io::Error::other(other),
    }
}

/// Writes ROS 2 messages to MCAP; [`Ros2Mcap::finish`] must be called.
pub struct Ros2Mcap<W: Write + Seek> {
    w: mcap::Writer<W>,
    schemas: HashMap<&'static str, u16>,
    channels: HashMap<(String, &'static str), u16>,
    vehicles: Vec<VehicleFrames>,
    last_clock: Option<u64>,
    buf: Vec<u8>,
    seq: u32,
}

impl<W: Write + Seek> Ros2Mcap<W> {
    /// A bag on `out` for the vehicles `names` (mission order); each name
    /// must be a ROS name ([`names::check_ros_name`]), or the error says
    /// which is not.
    pub fn new(out: W, vehicles: &[String]) -> io::Result<Self> {
        for v in vehicles {
            names::check_ros_name(v).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("--ros2: vehicle `{}`: {e}", v.escape_default()),
                )
            })?;
        }
        let opts = mcap::WriteOptions::new()
            .compression(None)
            .calculate_chunk_crcs(false)
            .calculate_data_section_crc(false)
            .profile("ros2")
            .library(concat!("usim ", env!("CARGO_PKG_VERSION")));
        Ok(Ros2Mcap {
            w: opts.create(out).map_err(mcap_err)?,
            schemas: HashMap::new(),
            channels: HashMap::new(),
            vehicles: vehicles.iter().map(|v| VehicleFrames::new(v)).collect(),
            last_clock: None,
            buf: Vec::with_capacity(1024),
            seq: 0,
        })
    }

    fn channel(&mut self, topic: &str, ty: &'static str) -> io::Result<u16> {
        if let Some(&c) = self.channels.get(&(topic.to_string(), ty)) {
            return Ok(c);
        }
        let schema = match self.schemas.get(ty) {
            Some(&s) => s,
            None => {
                let text = crate::ros2::msg::ros2msg_schema(ty)
                    .ok_or_else(|| io::Error::other(format!("no ros2msg schema for {ty}")))?;
                let s = self
                    .w
                    .add_schema(ty, "ros2msg", text.as_bytes())
                    .map_err(mcap_err)?;
                self.schemas.insert(ty, s);
                s
            }
        };
        let c = self
            .w
            .add_channel(schema, topic, "cdr", &Default::default())
            .map_err(mcap_err)?;
        self.channels.insert((topic.to_string(), ty), c);
        Ok(c)
    }

    /// Write message `m` on `topic` at log time `t` (ns).
    pub fn message<M: Message>(&mut self, topic: &str, m: &M, t: u64) -> io::Result<()> {
        let ch = self.channel(topic, M::NAME)?;
        self.buf = m.to_cdr_in(std::mem::take(&mut self.buf));
        self.seq = self.seq.wrapping_add(1);
        let header = mcap::records::MessageHeader {
            channel_id: ch,
            sequence: self.seq,
            log_time: t,
            publish_time: t,
        };
        self.w
            .write_to_known_channel(&header, &self.buf)
            .map_err(mcap_err)
    }

    /// One step of vehicle `i` (mission order): its odometry, pose, fix
    /// and transforms, and `/clock` when the clock moved.
    pub fn step(&mut self, i: usize, s: &Snapshot, clock: f64) -> io::Result<()> {
        let Some(frames) = self.vehicles.get_mut(i) else {
            return Ok(());
        };
        let m = frames.step(s, clock);
        let name = frames.name.clone();
        let t = m.stamp.nanos();
        if self.last_clock != Some(t) {
            self.last_clock = Some(t);
            self.message(names::CLOCK, &Clock { clock: m.stamp }, t)?;
        }
        self.message::<Odometry>(&names::odom(&name), &m.odom, t)?;
        self.message::<PoseStamped>(&names::pose(&name), &m.pose, t)?;
        self.message::<TfMessage>(names::TF, &m.tf, t)?;
        if let Some(f) = &m.fix {
            self.message::<NavSatFix>(&names::fix(&name), f, t)?;
        }
        Ok(())
    }

    /// A variable of vehicle `i` (a posting or a command), at usim clock
    /// `clock` (s): a number as `std_msgs/Float64` (not written when not
    /// finite), text as `std_msgs/String`.
    pub fn var(&mut self, i: usize, var: &str, value: VarMessage, clock: f64) -> io::Result<()> {
        let Some(name) = self.vehicles.get(i).map(|f| f.name.clone()) else {
            return Ok(());
        };
        if names::check_ros_name(var).is_err() {
            return Ok(());
        }
        let topic = names::var_topic(&name, var);
        let t = Time::from_secs(clock).nanos();
        match value {
            VarMessage::Number(m) if m.data.is_finite() => self.message::<Float64>(&topic, &m, t),
            VarMessage::Number(_) => Ok(()),
            VarMessage::Text(m) => self.message::<StringMsg>(&topic, &m, t),
        }
    }

    /// Write the summary and footer; returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.finish().map_err(mcap_err)?;
        Ok(self.w.into_inner())
    }
}

impl<W: Write + Seek> super::Output for Ros2Mcap<W> {
    fn row(&mut self, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.step(0, s, clock)
    }

    fn vehicle_row(&mut self, vehicle: usize, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.step(vehicle, s, clock)
    }

    fn post(&mut self, post: &crate::mission::Post, clock: f64) -> io::Result<()> {
        let value = match command_value(&post.command) {
            CommandValue::Number(v) => VarMessage::Number(Float64 { data: v }),
            CommandValue::Text(s) => VarMessage::Text(StringMsg {
                data: s.to_string(),
            }),
        };
        self.var(post.vehicle, &post.var, value, clock)
    }

    fn wants_publications(&self) -> bool {
        true
    }

    fn publications(
        &mut self,
        vehicle: usize,
        pubs: &[crate::model::Publication],
        clock: f64,
    ) -> io::Result<()> {
        for p in pubs {
            if let Some(m) = convert::publication(&p.value) {
                self.var(vehicle, &p.var, m, clock)?;
            }
        }
        Ok(())
    }

    fn finish(self) -> io::Result<()> {
        let mut w = Ros2Mcap::finish(self)?;
        w.flush()
    }
}
