//! usim's ROS 2 CDR codecs against ROS 2's own serializer: every message
//! type usim publishes or reads, from hand-made edge values and from a
//! real vehicle run through the REP 103/105 mapping, must serialize to the
//! bytes `rclpy.serialization.serialize_message` gives for the same fields
//! (rosbags' serializer for tf2_msgs, which has no PyPI wheel), and rclpy
//! must decode usim's bytes into the same fields (tests/py/ros2_cdr_oracle.py).
//! That includes the node-graph message `rmw_dds_common/msg/ParticipantEntitiesInfo`
//! and the `std_srvs/srv/Trigger` response of the reset service.
mod ros2_util;

use serde_json::{json, Value};
use std::time::Duration;
use usim::model::{Params, Vehicle};
use usim::ros2::convert::{self, VehicleFrames};
use usim::ros2::msg::*;

fn time(t: &Time) -> Value {
    json!({"sec": t.sec, "nanosec": t.nanosec})
}
fn header(h: &Header) -> Value {
    json!({"stamp": time(&h.stamp), "frame_id": h.frame_id})
}
fn xyz(v: &[f64; 3]) -> Value {
    json!({"x": v[0], "y": v[1], "z": v[2]})
}
fn quat(q: &[f64; 4]) -> Value {
    json!({"x": q[0], "y": q[1], "z": q[2], "w": q[3]})
}
fn pose(p: &Pose) -> Value {
    json!({"position": xyz(&p.position), "orientation": quat(&p.orientation)})
}
fn odometry(m: &Odometry) -> Value {
    json!({
        "header": header(&m.header),
        "child_frame_id": m.child_frame_id,
        "pose": {"pose": pose(&m.pose), "covariance": m.pose_covariance.to_vec()},
        "twist": {"twist": {"linear": xyz(&m.linear), "angular": xyz(&m.angular)},
                  "covariance": m.twist_covariance.to_vec()},
    })
}
fn fix(m: &NavSatFix) -> Value {
    json!({
        "header": header(&m.header),
        "status": {"status": m.status, "service": m.service},
        "latitude": m.latitude, "longitude": m.longitude, "altitude": m.altitude,
        "position_covariance": m.position_covariance.to_vec(),
        "position_covariance_type": m.position_covariance_type,
    })
}
fn transform(t: &TransformStamped) -> Value {
    json!({
        "header": header(&t.header),
        "child_frame_id": t.child_frame_id,
        "transform": {"translation": xyz(&t.translation), "rotation": quat(&t.rotation)},
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A case for the oracle: the type, its fields, usim's bytes and where in
/// them the alignment padding lies (rclpy leaves padding unset: those
/// bytes are not compared).
fn case<M: Message>(m: &M, fields: Value) -> Value {
    let cdr = m.to_cdr();
    let mut w = usim::ros2::cdr::Writer::with_padding(0xa5);
    m.write(&mut w);
    let marked = w.finish();
    assert_eq!(marked.len(), cdr.len());
    let padding: Vec<usize> = (0..cdr.len()).filter(|&i| cdr[i] != marked[i]).collect();
    assert!(padding.iter().all(|&i| cdr[i] == 0), "usim pads with zeros");
    json!({"type": M::NAME, "fields": fields, "cdr": hex(&cdr), "padding": padding})
}

fn step_cases(out: &mut Vec<Value>, s: &StepMessagesView) {
    out.push(case(s.odom, odometry(s.odom)));
    out.push(case(
        s.pose,
        json!({"header": header(&s.pose.header), "pose": pose(&s.pose.pose)}),
    ));
    out.push(case(
        s.tf,
        json!({"transforms": s.tf.transforms.iter().map(transform).collect::<Vec<_>>()}),
    ));
    if let Some(f) = s.fix {
        out.push(case(f, fix(f)));
    }
}

struct StepMessagesView<'a> {
    odom: &'a Odometry,
    pose: &'a PoseStamped,
    tf: &'a TfMessage,
    fix: Option<&'a NavSatFix>,
}

fn cases() -> Vec<Value> {
    let mut out = Vec::new();
    // Edge values: empty and non-ASCII strings, odd alignments, extremes.
    for (d, s) in [
        (0.0, ""),
        (-0.0, "a"),
        (1e308, "ab"),
        (-5e-324, "abc"),
        (12.5, "x=1,y=2,heading=90"),
        (f64::MIN_POSITIVE, "Grüße ⚓"),
    ] {
        out.push(case(&Float64 { data: d }, json!({ "data": d })));
        out.push(case(&StringMsg { data: s.into() }, json!({ "data": s })));
    }
    for t in [
        Time::default(),
        Time {
            sec: i32::MAX,
            nanosec: 999_999_999,
        },
        Time {
            sec: -7,
            nanosec: 3,
        },
    ] {
        out.push(case(&Clock { clock: t }, json!({ "clock": time(&t) })));
        out.push(case(&t, time(&t)));
    }
    let mut odd = Odometry {
        header: Header {
            stamp: Time { sec: 1, nanosec: 2 },
            frame_id: "odd".into(),
        },
        child_frame_id: String::new(),
        pose: Pose {
            position: [1.0, -2.0, 3.5],
            orientation: [0.1, 0.2, 0.3, 0.9],
        },
        pose_covariance: [0.0; 36],
        linear: [1.0, 2.0, 3.0],
        angular: [-1.0, -2.0, -3.0],
        twist_covariance: [0.0; 36],
    };
    for (i, c) in odd.pose_covariance.iter_mut().enumerate() {
        *c = i as f64 * 0.5;
    }
    odd.twist_covariance = odd.pose_covariance.map(|c| -c);
    out.push(case(&odd, odometry(&odd)));
    let f = NavSatFix {
        header: Header {
            stamp: Time::default(),
            frame_id: "gps_antenna".into(),
        },
        status: -1,
        service: 0xffff,
        latitude: -89.5,
        longitude: 179.25,
        altitude: 12.0,
        position_covariance: [1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0],
        position_covariance_type: 2,
    };
    out.push(case(&f, fix(&f)));
    out.push(case(&TfMessage::default(), json!({"transforms": []})));

    // A boat turning with an origin, through the mapping, as usim sends it.
    let p = Params {
        origin: Some((43.825, -70.33)),
        ..Params::default()
    };
    let mut v = Vehicle::from_params(p, 1000.0);
    for (var, x) in [("DESIRED_THRUST", 70.0), ("DESIRED_RUDDER", -40.0)] {
        let cmd = usim::command::parse(var, &usim::command::Payload::Number(x)).unwrap();
        v.handle_command(cmd, 1000.0).unwrap();
    }
    let mut frames = VehicleFrames::new("alpha");
    let mut t = 1000.0;
    for k in 0..30 {
        t += 0.25;
        v.step(t);
        let m = frames.step(&v.snapshot(), t);
        if k % 10 == 9 {
            step_cases(
                &mut out,
                &StepMessagesView {
                    odom: &m.odom,
                    pose: &m.pose,
                    tf: &m.tf,
                    fix: m.fix.as_ref(),
                },
            );
        }
    }
    let c = convert::clock(t);
    out.push(case(&c, json!({"clock": time(&c.clock)})));

    // The node graph (`ros_discovery_info`) and the reset service's reply.
    let gid = |b: u8| Gid([b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0, 1, 0xc1]);
    let info = ParticipantEntitiesInfo {
        gid: gid(1),
        node_entities_info_seq: vec![
            NodeEntitiesInfo {
                node_namespace: "/".into(),
                node_name: "usim".into(),
                reader_gid_seq: vec![],
                writer_gid_seq: vec![gid(2), gid(3)],
            },
            NodeEntitiesInfo {
                node_namespace: "/kayak".into(),
                node_name: "usim".into(),
                reader_gid_seq: vec![gid(4)],
                writer_gid_seq: vec![],
            },
        ],
    };
    let gj = |g: &Gid| json!({"data": g.0.to_vec()});
    out.push(case(
        &info,
        json!({
            "gid": gj(&info.gid),
            "node_entities_info_seq": info.node_entities_info_seq.iter().map(|n| json!({
                "node_namespace": n.node_namespace,
                "node_name": n.node_name,
                "reader_gid_seq": n.reader_gid_seq.iter().map(gj).collect::<Vec<_>>(),
                "writer_gid_seq": n.writer_gid_seq.iter().map(gj).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }),
    ));
    out.push(case(
        &ParticipantEntitiesInfo::default(),
        json!({"gid": gj(&Gid::default()), "node_entities_info_seq": []}),
    ));
    for (success, message) in [(true, "USM_RESET x=0,y=0"), (false, "")] {
        out.push(case(
            &TriggerResponse {
                success,
                message: message.into(),
            },
            json!({"success": success, "message": message}),
        ));
    }
    out
}

#[test]
fn cdr_matches_rclpy_serialization() {
    if !ros2_util::have_python(
        "cdr_matches_rclpy_serialization",
        "rclpy,std_msgs.msg,nav_msgs.msg,sensor_msgs.msg,geometry_msgs.msg,rosgraph_msgs.msg,rmw_dds_common.msg,std_srvs.srv,rosbags",
    ) {
        return;
    }
    let cases = cases();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases.json");
    std::fs::write(&path, serde_json::to_vec(&cases).unwrap()).unwrap();
    let out = ros2_util::run_py(
        "ros2_cdr_oracle.py",
        &[path.to_str().unwrap()],
        Duration::from_secs(60),
    );
    let said = ros2_util::assert_ok(&out, "ros2_cdr_oracle.py");
    assert!(
        said.contains(&format!("ok {}", cases.len())),
        "the oracle checked {said:?}, expected {} cases",
        cases.len()
    );
}
