//! The QoS of each usim topic, as plain data (the participant turns it into
//! DDS policies). The profiles are ROS 2's own (`rmw_qos_profile_*` of the
//! `rmw` package, tf2_ros's broadcaster): what a ROS node subscribing with
//! the usual profile for that message expects.

/// Reliability, history depth and durability of a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    /// Reliable (retransmitted) or best effort.
    pub reliable: bool,
    /// Keep-last history depth, samples.
    pub depth: u32,
    /// Transient-local (late joiners get the last samples) or volatile.
    pub transient_local: bool,
}

/// `rmw_qos_profile_default`: reliable, volatile, keep last 10. Odometry,
/// poses, usim's variables, commands and the error topic.
pub const DEFAULT: Qos = Qos {
    reliable: true,
    depth: 10,
    transient_local: false,
};

/// `rmw_qos_profile_sensor_data`: best effort, volatile, keep last 5. The
/// GNSS fix (`sensor_msgs`), as GNSS drivers publish it; a subscriber with
/// the default (reliable) profile does not match it: use the sensor-data
/// profile.
pub const SENSOR_DATA: Qos = Qos {
    reliable: false,
    depth: 5,
    transient_local: false,
};

/// `/tf`: tf2_ros's dynamic broadcaster (reliable, volatile, keep last 100).
pub const TF: Qos = Qos {
    reliable: true,
    depth: 100,
    transient_local: false,
};

/// `/clock`: reliable, keep last 1. ROS's own `/clock` subscriptions are
/// best effort with depth 1; a reliable writer serves those and reliable
/// readers alike.
pub const CLOCK: Qos = Qos {
    reliable: true,
    depth: 1,
    transient_local: false,
};

/// `ros_discovery_info`: reliable, transient local, keep last 1 (what ROS 2
/// middlewares use for it, so a node that starts later still gets each
/// participant's last announcement).
pub const DISCOVERY_INFO: Qos = Qos {
    reliable: true,
    depth: 1,
    transient_local: true,
};

/// `rmw_qos_profile_services_default`: reliable, volatile, keep last 10
/// (a service's request and reply topics).
pub const SERVICES: Qos = DEFAULT;
