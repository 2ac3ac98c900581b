//! usim's state as ROS 2 messages, by REP 103 (SI units, right-handed
//! frames: ENU for the world, FLU for the body) and REP 105 (`map`, `odom`,
//! `base_link`), and ROS 2 commands back into usim's [`Command`]s.
//!
//! * Position: usim's x east, y north (m) are ROS x, y; ROS z = −depth.
//! * Orientation: usim's heading ψ (degrees, 0 = north, clockwise) is the
//!   ENU yaw `90° − ψ` about +z (heading east = identity); usim's pitch
//!   (radians, positive nose up, docs/model.md §9) is the FLU pitch
//!   negated (a positive rotation about +y, the body's left, dips the nose).
//!   No roll.
//! * Twist (in `base_link`): the velocity over ground (usim's speed and
//!   heading over ground, drift included) turned into the body's forward
//!   and left by the heading alone, and the vertical rate (−Δdepth/Δt) as
//!   z; the yaw rate as angular z (rad/s, counter-clockwise positive, from
//!   the heading change between two steps).
//! * Frames: `map` (shared) → `NAME/odom` is the identity (the simulator's
//!   odometry has no drift from the truth), `NAME/odom` → `NAME/base_link`
//!   is the vehicle's pose.
//! * Nothing non-finite is published: a NaN or infinite field is sent as 0
//!   (usim marks "not set" with NaN), and a vehicle without lat/lon has no
//!   `NavSatFix`.
use super::msg::{
    Clock, Float64, Header, NavSatFix, Odometry, Pose, PoseStamped, StringMsg, TfMessage, Time,
    TransformStamped,
};
use super::names;
use crate::command::{kind_of, parse, Command, Kind, MessageError, Payload};
use crate::model::{PubValue, Snapshot};

/// The identity rotation `x, y, z, w`.
pub const IDENTITY: [f64; 4] = [0.0, 0.0, 0.0, 1.0];

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// The ENU/FLU orientation `x, y, z, w` of usim's heading (degrees,
/// clockwise from north) and pitch (radians, nose up): yaw `90° − heading`
/// then pitch `−pitch`, no roll.
pub fn orientation(heading_deg: f64, pitch_rad: f64) -> [f64; 4] {
    let yaw = (90.0 - finite(heading_deg)).to_radians();
    let pitch = -finite(pitch_rad);
    let (sy, cy) = (yaw / 2.0).sin_cos();
    let (sp, cp) = (pitch / 2.0).sin_cos();
    [-sp * sy, sp * cy, cp * sy, cp * cy]
}

/// The heading in degrees (clockwise from north) of an ENU/FLU
/// orientation, in [0, 360): the inverse of [`orientation`]'s yaw.
pub fn heading_of(q: [f64; 4]) -> f64 {
    let [x, y, z, w] = q;
    let yaw = (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z));
    (90.0 - yaw.to_degrees()).rem_euclid(360.0)
}

/// One vehicle's frames and the state kept between steps for the rates.
#[derive(Debug, Clone)]
pub struct VehicleFrames {
    /// The vehicle (a ROS name).
    pub name: String,
    /// `NAME/odom`.
    pub odom: String,
    /// `NAME/base_link`.
    pub base: String,
    /// Time (s), heading (degrees) and depth (m) of the last step seen.
    last: Option<(f64, f64, f64)>,
}

/// What one step of a vehicle publishes.
#[derive(Debug, Clone, PartialEq)]
pub struct StepMessages {
    /// The header stamp of all of them.
    pub stamp: Time,
    /// On `/NAME/odom`.
    pub odom: Odometry,
    /// On `/NAME/pose`.
    pub pose: PoseStamped,
    /// On `/tf`: `map → NAME/odom` (identity), `NAME/odom → NAME/base_link`.
    pub tf: TfMessage,
    /// On `/NAME/fix`, when the vehicle has lat/lon.
    pub fix: Option<NavSatFix>,
}

impl VehicleFrames {
    /// The frames of vehicle `name` (check it with
    /// [`names::check_ros_name`] first).
    pub fn new(name: &str) -> VehicleFrames {
        VehicleFrames {
            name: name.to_string(),
            odom: names::odom_frame(name),
            base: names::base_frame(name),
            last: None,
        }
    }

    /// The messages of one step: snapshot `s` at usim clock `clock` (s).
    /// The rates come from the previous call (0 on the first, or when the
    /// time did not advance).
    pub fn step(&mut self, s: &Snapshot, clock: f64) -> StepMessages {
        let stamp = Time::from_secs(clock);
        let heading = finite(s.heading);
        let depth = finite(s.depth);
        let (mut yaw_rate, mut up) = (0.0, 0.0);
        if let Some((t0, h0, d0)) = self.last {
            let dt = s.t - t0;
            if dt > 0.0 && dt.is_finite() {
                // Heading change in (−180, 180], clockwise positive.
                let dh = (heading - h0 + 180.0).rem_euclid(360.0) - 180.0;
                yaw_rate = finite(-dh.to_radians() / dt);
                up = finite(-(depth - d0) / dt);
            }
        }
        self.last = Some((s.t, heading, depth));

        let (sog, hog) = (finite(s.sog), finite(s.hog).to_radians());
        let (ve, vn) = (sog * hog.sin(), sog * hog.cos());
        let h = heading.to_radians();
        let forward = ve * h.sin() + vn * h.cos();
        let left = -ve * h.cos() + vn * h.sin();

        let pose = Pose {
            position: [finite(s.x), finite(s.y), -depth],
            orientation: orientation(heading, s.pitch),
        };
        let header = |frame: &str| Header {
            stamp,
            frame_id: frame.to_string(),
        };
        let odom = Odometry {
            header: header(&self.odom),
            child_frame_id: self.base.clone(),
            pose,
            pose_covariance: [0.0; 36],
            linear: [forward, left, up],
            angular: [0.0, 0.0, yaw_rate],
            twist_covariance: [0.0; 36],
        };
        let tf = TfMessage {
            transforms: vec![
                TransformStamped {
                    header: header(names::MAP_FRAME),
                    child_frame_id: self.odom.clone(),
                    translation: [0.0; 3],
                    rotation: IDENTITY,
                },
                TransformStamped {
                    header: header(&self.odom),
                    child_frame_id: self.base.clone(),
                    translation: pose.position,
                    rotation: pose.orientation,
                },
            ],
        };
        let fix = (s.lat.is_finite() && s.lon.is_finite()).then(|| NavSatFix {
            header: header(&self.base),
            status: 0,  // STATUS_FIX
            service: 1, // SERVICE_GPS
            latitude: s.lat,
            longitude: s.lon,
            altitude: -depth,
            position_covariance: [0.0; 9],
            position_covariance_type: 0, // COVARIANCE_TYPE_UNKNOWN
        });
        StepMessages {
            stamp,
            pose: PoseStamped {
                header: header(names::MAP_FRAME),
                pose,
            },
            odom,
            tf,
            fix,
        }
    }
}

/// The `/clock` message of usim clock `clock` (s).
pub fn clock(clock: f64) -> Clock {
    Clock {
        clock: Time::from_secs(clock),
    }
}

/// A usim publication (`NAV_X = 12.5`, `USM_...` text) as the message of
/// its topic ([`names::var_topic`]): a number as `std_msgs/Float64`
/// (`None` when it is not finite: nothing is published), text as
/// `std_msgs/String`.
pub enum VarMessage {
    /// `std_msgs/Float64`.
    Number(Float64),
    /// `std_msgs/String`.
    Text(StringMsg),
}

/// See [`VarMessage`].
pub fn publication(value: &PubValue) -> Option<VarMessage> {
    match value {
        PubValue::Number(v) if v.is_finite() => Some(VarMessage::Number(Float64 { data: *v })),
        PubValue::Number(_) => None,
        PubValue::Text(s) => Some(VarMessage::Text(StringMsg { data: s.clone() })),
    }
}

/// A command that arrived as CDR on vehicle topic `/NAME/TOKEN` (`token` is
/// the last name token, `desired_rudder`): `body` is the DDS sample without
/// its encapsulation header. A numeric variable takes `std_msgs/Float64`, a
/// text variable `std_msgs/String` with usim's payload syntax; the payload
/// then goes through the same checks as MQTT's ([`crate::command::parse`]).
pub fn command_from_cdr(
    token: &str,
    body: &[u8],
    little_endian: bool,
) -> Result<Command, MessageError> {
    let (var, payload) = payload_from_cdr(token, body, little_endian)?;
    parse(&var, &payload)
}

/// The variable and payload of a command that arrived as CDR on vehicle
/// topic `/NAME/TOKEN` (see [`command_from_cdr`]), before usim's payload
/// checks: for a live host's inbox, which makes them.
pub fn payload_from_cdr(
    token: &str,
    body: &[u8],
    little_endian: bool,
) -> Result<(String, Payload), MessageError> {
    use super::msg::Message;
    let var = names::topic_var(token);
    let shown = || crate::text::clip(&format!("{} CDR bytes", body.len()), 40).into_owned();
    match kind_of(&var) {
        None => Err(MessageError::new(&var, shown(), "not a usim command topic")),
        Some(Kind::Number) => {
            let m = Float64::from_body(body, little_endian).map_err(|e| {
                MessageError::new(&var, shown(), format!("not a std_msgs/Float64: {e}"))
            })?;
            Ok((var, Payload::Number(m.data)))
        }
        Some(Kind::Text) => {
            let m = StringMsg::from_body(body, little_endian).map_err(|e| {
                MessageError::new(&var, shown(), format!("not a std_msgs/String: {e}"))
            })?;
            Ok((var, Payload::Text(m.data)))
        }
    }
}

/// The ROS type a command variable's topic carries (`None`: not a command).
pub fn command_type(var: &str) -> Option<&'static str> {
    use super::msg::Message;
    match kind_of(var)? {
        Kind::Number => Some(Float64::NAME),
        Kind::Text => Some(StringMsg::NAME),
    }
}

/// The `USM_RESET` payload that puts a vehicle back at start pose `s`
/// (docs/model.md §14's keys: position m, heading degrees, speed m/s, depth m):
/// what `/NAME/usim/reset` posts. Rust's shortest round-trip formatting
/// of each number, so the pose comes back to the bit.
pub fn reset_payload(s: &crate::model::StartPose) -> String {
    format!(
        "x={},y={},heading={},speed={},depth={}",
        s.x, s.y, s.heading, s.speed, s.depth
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Params, Vehicle};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn headings_become_enu_yaws() {
        // East: identity. North: +90° about z. West: 180°. South: −90°.
        let q = orientation(90.0, 0.0);
        assert!(close(q[2], 0.0) && close(q[3], 1.0), "{q:?}");
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let q = orientation(0.0, 0.0);
        assert!(close(q[2], h) && close(q[3], h), "{q:?}");
        let q = orientation(270.0, 0.0);
        assert!(close(q[2].abs(), 1.0) && close(q[3], 0.0), "{q:?}");
        let q = orientation(180.0, 0.0);
        assert!(close(q[2], -h) && close(q[3], h), "{q:?}");
        for hd in [0.0, 12.5, 90.0, 181.0, 359.0] {
            assert!(close(heading_of(orientation(hd, 0.0)), hd), "{hd}");
            assert!(close(heading_of(orientation(hd, 0.3)), hd), "{hd} pitched");
        }
    }

    #[test]
    fn nose_up_pitch_points_the_body_x_axis_up() {
        // Rotate FLU (1, 0, 0) by the quaternion: z must be sin(pitch) > 0.
        let [x, y, z, w] = orientation(90.0, 0.2);
        let fz = 2.0 * (x * z - w * y);
        assert!(close(fz, 0.2f64.sin()), "{fz}");
        let n = x * x + y * y + z * z + w * w;
        assert!(close(n, 1.0));
    }

    #[test]
    fn a_step_of_a_moving_boat() {
        let p = Params {
            origin: Some((43.825, -70.33)),
            ..Params::default()
        };
        let mut v = Vehicle::from_params(p, 100.0);
        v.handle_command(Command::DesiredThrust(60.0), 100.0)
            .unwrap();
        v.handle_command(Command::DesiredRudder(30.0), 100.0)
            .unwrap();
        let mut f = VehicleFrames::new("alpha");
        let mut t = 100.0;
        let mut last = None;
        for _ in 0..50 {
            t += 0.1;
            v.step(t);
            last = Some(f.step(&v.snapshot(), t));
        }
        let m = last.unwrap();
        let s = v.snapshot();
        assert_eq!(m.odom.header.frame_id, "alpha/odom");
        assert_eq!(m.odom.child_frame_id, "alpha/base_link");
        assert_eq!(m.odom.pose.position, [s.x, s.y, -s.depth]);
        assert!(close(heading_of(m.odom.pose.orientation), s.heading));
        // No drift: the speed over ground is nearly all forward (the track
        // lags the heading a little in the turn); turning to starboard
        // (clockwise) is a negative yaw rate.
        let [fwd, left, _] = m.odom.linear;
        assert!(close(fwd.hypot(left), s.sog), "{:?}", m.odom.linear);
        assert!(fwd > 0.0 && left.abs() < 0.05 * fwd, "{:?}", m.odom.linear);
        assert!(m.odom.angular[2] < 0.0, "{:?}", m.odom.angular);
        assert_eq!(m.tf.transforms[0].child_frame_id, "alpha/odom");
        assert_eq!(m.tf.transforms[1].translation, m.odom.pose.position);
        let fix = m.fix.unwrap();
        assert_eq!((fix.latitude, fix.longitude), (s.lat, s.lon));
        assert_eq!(m.stamp, Time::from_secs(t));
    }

    #[test]
    fn commands_take_the_checks_of_every_transport() {
        use super::super::msg::Message;
        let body = |m: &[u8]| m[4..].to_vec();
        let ok = command_from_cdr(
            "desired_rudder",
            &body(&Float64 { data: 12.0 }.to_cdr()),
            true,
        );
        assert_eq!(ok, Ok(Command::DesiredRudder(12.0)));
        let nan = command_from_cdr(
            "desired_rudder",
            &body(&Float64 { data: f64::NAN }.to_cdr()),
            true,
        );
        assert!(nan.unwrap_err().reason.contains("finite"));
        let s = StringMsg {
            data: "x=1,y=2".into(),
        };
        assert!(matches!(
            command_from_cdr("usm_reset", &body(&s.to_cdr()), true),
            Ok(Command::Reset(_))
        ));
        let short = command_from_cdr("desired_thrust", &[1, 2, 3], true).unwrap_err();
        assert!(short.reason.contains("not a std_msgs/Float64"), "{short:?}");
        let unknown = command_from_cdr("odom_x", &body(&Float64 { data: 1.0 }.to_cdr()), true);
        assert!(unknown.is_err());
        assert_eq!(command_type("DESIRED_THRUST"), Some("std_msgs/msg/Float64"));
        assert_eq!(command_type("USM_RESET"), Some("std_msgs/msg/String"));
    }
}
