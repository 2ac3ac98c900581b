//! ROS 2 names: which vehicle names are ROS names, the topics of a vehicle,
//! and how ROS 2 names topics and types on DDS (the `rt/` prefix and the
//! `package::msg::dds_::Type_` type names that `rmw_fastrtps` and every
//! other DDS middleware of ROS 2 use; `rmw_dds_common`/`rosidl` naming).

/// Topic of the frame transforms of every vehicle (global, as tf2 expects).
pub const TF: &str = "/tf";
/// Topic of the simulation clock.
pub const CLOCK: &str = "/clock";
/// The fixed world frame (ENU: x east, y north, z up; origin at usim's
/// local (0, 0), the lat/lon origin when the vehicle has one).
pub const MAP_FRAME: &str = "map";

/// The rule a vehicle name must meet to become a ROS name (one token of a
/// topic name and a frame prefix).
pub const ROS_NAME_RULE: &str = "a ROS 2 vehicle name starts with an ASCII letter and has only \
     ASCII letters, digits and single `_` (usim's `-` and `.` are not allowed in ROS names)";

/// `Ok` for a vehicle name that is a ROS name token ([`ROS_NAME_RULE`]):
/// `[A-Za-z][A-Za-z0-9_]*` with no `__` and no trailing `_`.
pub fn check_ros_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'));
    if let Some(c) = bad {
        return Err(format!(
            "{ROS_NAME_RULE}; `{}` has {}",
            name.escape_default(),
            c.escape_default()
        ));
    }
    if !first_ok || name.contains("__") || name.ends_with('_') || name.len() > 64 {
        return Err(format!(
            "{ROS_NAME_RULE}; `{}` is not one",
            name.escape_default()
        ));
    }
    Ok(())
}

/// Vehicle `v`'s odometry topic (`nav_msgs/Odometry`).
pub fn odom(v: &str) -> String {
    format!("/{v}/odom")
}
/// Vehicle `v`'s GNSS fix topic (`sensor_msgs/NavSatFix`).
pub fn fix(v: &str) -> String {
    format!("/{v}/fix")
}
/// Vehicle `v`'s pose topic (`geometry_msgs/PoseStamped`, frame `map`).
pub fn pose(v: &str) -> String {
    format!("/{v}/pose")
}
/// Vehicle `v`'s error topic (`std_msgs/String`): refused commands.
pub fn errors(v: &str) -> String {
    format!("/{v}/usim/errors")
}
/// Vehicle `v`'s lock-step acknowledgement topic (`std_msgs/Float64`, the
/// stamp handled, s: `usim ros2 --lockstep ack`).
pub fn ack(v: &str) -> String {
    format!("/{v}/usim/ack")
}
/// Vehicle `v`'s name-claim topic (`std_msgs/String`, the claim messages
/// of `live::claim`).
pub fn claim(v: &str) -> String {
    format!("/{v}/usim/claim")
}
/// The topic of usim variable `var` (a publication such as `NAV_X` or a
/// command such as `DESIRED_RUDDER`) of vehicle `v`: its name in lower case,
/// as ROS names topics (`/alpha/nav_x`, `/alpha/desired_rudder`).
pub fn var_topic(v: &str, var: &str) -> String {
    format!("/{v}/{}", var.to_ascii_lowercase())
}
/// The usim variable of the last token of a command topic (`desired_rudder`
/// → `DESIRED_RUDDER`).
pub fn topic_var(token: &str) -> String {
    token.to_ascii_uppercase()
}
/// Vehicle `v`'s odom frame.
pub fn odom_frame(v: &str) -> String {
    format!("{v}/odom")
}
/// Vehicle `v`'s body frame (FLU: x forward, y left, z up).
pub fn base_frame(v: &str) -> String {
    format!("{v}/base_link")
}

/// The DDS topic on which every ROS 2 middleware announces the ROS nodes of
/// its participant (`rmw_dds_common/msg/ParticipantEntitiesInfo`); a DDS
/// name as it is, without the `rt/` prefix of ROS topics.
pub const DISCOVERY_INFO_TOPIC: &str = "ros_discovery_info";

/// The name of every node usim announces: the process's node `/usim`
/// (namespace `/`: `/tf`, `/clock`, `/usim/step`) and one per vehicle,
/// `/NAME/usim` (namespace `/NAME`: the vehicle's topics and service).
pub const NODE_NAME: &str = "usim";

/// The namespace of vehicle `v`'s node (`/kayak`).
pub fn node_namespace(v: &str) -> String {
    format!("/{v}")
}

/// Vehicle `v`'s reset service (`std_srvs/srv/Trigger`): `USM_RESET` to the
/// vehicle's configured start pose.
pub fn reset_service(v: &str) -> String {
    format!("/{v}/usim/reset")
}

/// The DDS topic of the requests of ROS service `service` (`rq/` prefix,
/// `Request` suffix, as rmw_fastrtps names it).
pub fn dds_request_topic(service: &str) -> String {
    format!("rq/{}Request", service.trim_start_matches('/'))
}

/// The DDS topic of the replies of ROS service `service` (`rr/` prefix,
/// `Reply` suffix).
pub fn dds_reply_topic(service: &str) -> String {
    format!("rr/{}Reply", service.trim_start_matches('/'))
}

/// The DDS topic of ROS topic `topic` (`/alpha/odom` → `rt/alpha/odom`).
pub fn dds_topic(topic: &str) -> String {
    format!("rt/{}", topic.trim_start_matches('/'))
}

/// The DDS type name of ROS type `package/msg/Type`
/// (`nav_msgs::msg::dds_::Odometry_`).
pub fn dds_type(ros_type: &str) -> String {
    let mut parts = ros_type.split('/');
    let (pkg, kind, ty) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or("msg"),
        parts.next().unwrap_or(""),
    );
    format!("{pkg}::{kind}::dds_::{ty}_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_names() {
        for ok in ["alpha", "Boat_2", "a1", "uuv_b"] {
            assert!(check_ros_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1boat", "_a", "a-b", "a.b", "a__b", "a_", "a/b", "ä"] {
            assert!(check_ros_name(bad).is_err(), "{bad}");
        }
        let e = check_ros_name("alpha-1").unwrap_err();
        assert!(e.contains("`alpha-1` has -"), "{e}");
    }

    #[test]
    fn topics_and_dds_names() {
        assert_eq!(
            var_topic("alpha", "DESIRED_RUDDER"),
            "/alpha/desired_rudder"
        );
        assert_eq!(topic_var("desired_rudder"), "DESIRED_RUDDER");
        assert_eq!(dds_topic(&odom("alpha")), "rt/alpha/odom");
        assert_eq!(dds_topic(TF), "rt/tf");
        assert_eq!(
            dds_request_topic(&reset_service("alpha")),
            "rq/alpha/usim/resetRequest"
        );
        assert_eq!(
            dds_reply_topic(&reset_service("alpha")),
            "rr/alpha/usim/resetReply"
        );
        assert_eq!(
            dds_type("std_srvs/srv/Trigger_Request"),
            "std_srvs::srv::dds_::Trigger_Request_"
        );
        assert_eq!(
            dds_type("nav_msgs/msg/Odometry"),
            "nav_msgs::msg::dds_::Odometry_"
        );
        assert_eq!(
            dds_type("std_msgs/msg/Float64"),
            "std_msgs::msg::dds_::Float64_"
        );
    }
}
