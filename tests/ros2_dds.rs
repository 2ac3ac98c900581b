//! usim's DDS participant (RustDDS) against a real ROS 2 node (rclpy with
//! Fast DDS, tests/py/ros2_peer.py), each test in a network namespace of
//! its own with only loopback (`unshare(CLONE_NEWNET)`, root): discovery
//! never leaves the machine and tests running at once do not meet.
//!
//! * `float64_both_ways`: the interoperation check of one topic,
//!   `std_msgs/Float64` RustDDS → Fast DDS and Fast DDS → RustDDS.
//! * `odometry_fix_pose_and_clock_reach_rclpy`: one vehicle's step messages
//!   as an rclpy subscriber with ROS's usual QoS gets them, numbers equal.
//! * `rclpy_commands_are_parsed_and_bad_ones_reported`: commands from
//!   rclpy become usim commands; refused ones come back on the error topic.
//! * `a_second_claim_of_a_vehicle_name_is_refused`.
#![cfg(feature = "ros2")]
mod ros2_util;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use usim::command::Command;
use usim::dds::vehicle::{Graph, VehiclePorts, DEFAULT_COMMANDS};
use usim::dds::{claim, Participant};
use usim::model::{Params, Vehicle};
use usim::ros2::msg::{Float64, Message, Time};
use usim::ros2::qos;

fn out_text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn float64_both_ways() {
    if !ros2_util::have_ros2_dds("float64_both_ways") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        let mut p = Participant::new(0).unwrap();
        // RustDDS → rclpy.
        let w = p
            .writer("/usim_probe/to_ros", Float64::NAME, qos::DEFAULT)
            .unwrap();
        let child = ros2_util::spawn_py(
            "ros2_peer.py",
            &["sub_float64", "/usim_probe/to_ros", "3", "15"],
        );
        let mut k = 0.0;
        let out = ros2_util::drive_until_exit(child, Duration::from_secs(20), || {
            w.publish(&Float64 { data: 0.5 + k }).unwrap();
            k += 1.0;
        });
        let (so, se) = out_text(&out);
        let got: Vec<f64> = so
            .lines()
            .filter_map(|l| l.strip_prefix("got ")?.parse().ok())
            .collect();
        assert!(got.len() >= 3, "rclpy got {got:?}\n{so}\n{se}");
        // Each value is one usim sent (0.5, 1.5, ...), in order.
        assert!(got.iter().all(|v| v.fract() == 0.5), "{got:?}");
        assert!(got.windows(2).all(|w| w[1] > w[0]), "{got:?}");

        // rclpy → RustDDS.
        let mut r = p
            .reader("/usim_probe/from_ros", Float64::NAME, qos::DEFAULT)
            .unwrap();
        let child = ros2_util::spawn_py(
            "ros2_peer.py",
            &["pub_float64", "/usim_probe/from_ros", "100.25", "15"],
        );
        let mut got = Vec::new();
        let mut child = Some(child);
        let t0 = Instant::now();
        while got.len() < 3 && t0.elapsed() < Duration::from_secs(15) {
            for m in r.take_messages::<Float64>() {
                got.push(m.unwrap().data);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(mut c) = child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        assert!(got.len() >= 3, "usim got {got:?}");
        assert!(
            got.iter().all(|v| v.fract() == 0.25 && *v >= 100.25),
            "{got:?}"
        );
    });
}

fn boat() -> Vehicle {
    let p = Params {
        origin: Some((43.825, -70.33)),
        ..Params::default()
    };
    let mut v = Vehicle::from_params(p, 500.0);
    v.handle_command(Command::DesiredThrust(50.0), 500.0)
        .unwrap();
    v.handle_command(Command::DesiredRudder(20.0), 500.0)
        .unwrap();
    v
}

fn f(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn odometry_fix_pose_and_clock_reach_rclpy() {
    if !ros2_util::have_ros2_dds("odometry_fix_pose_and_clock_reach_rclpy") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        let mut p = Participant::new(0).unwrap();
        let graph = Graph::open(&mut p).unwrap();
        let mut ports = VehiclePorts::open(&mut p, "alpha", DEFAULT_COMMANDS).unwrap();
        let mut v = boat();
        let mut t = 500.0;
        let mut sent = HashMap::new();
        let child = ros2_util::spawn_py("ros2_peer.py", &["vehicle", "alpha", "5", "20"]);
        let out = ros2_util::drive_until_exit(child, Duration::from_secs(25), || {
            t += 0.1;
            v.step(t);
            let m = ports.publish_step(&graph, &v.snapshot(), t).unwrap();
            graph.publish_clock(t).unwrap();
            sent.insert((m.stamp.sec, m.stamp.nanosec), m);
        });
        let (so, se) = out_text(&out);
        assert!(out.status.success(), "peer failed:\n{so}\n{se}");
        let lines: Vec<Value> = so
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let seen = lines.iter().find(|l| l["kind"] == "seen").unwrap();
        for k in ["odom", "fix", "pose", "clock"] {
            assert!(seen[k].as_u64().unwrap() > 0, "no {k}: {so}");
        }
        assert!(seen["odom"].as_u64().unwrap() >= 5, "{so}");
        let key = |s: &Value| {
            let a = s.as_array().unwrap();
            (a[0].as_i64().unwrap() as i32, a[1].as_u64().unwrap() as u32)
        };
        let mut checked = 0;
        for l in &lines {
            match l["kind"].as_str().unwrap() {
                "odom" => {
                    let m = &sent[&key(&l["stamp"])];
                    assert_eq!(l["frame"], "alpha/odom");
                    assert_eq!(l["child"], "alpha/base_link");
                    assert_eq!(f(&l["position"]), m.odom.pose.position.to_vec());
                    assert_eq!(f(&l["orientation"]), m.odom.pose.orientation.to_vec());
                    assert_eq!(f(&l["linear"]), m.odom.linear.to_vec());
                    assert_eq!(f(&l["angular"]), m.odom.angular.to_vec());
                    checked += 1;
                }
                "fix" => {
                    let m = sent[&key(&l["stamp"])].fix.as_ref().unwrap();
                    assert_eq!(l["lat"].as_f64().unwrap(), m.latitude);
                    assert_eq!(l["lon"].as_f64().unwrap(), m.longitude);
                    assert_eq!(l["status"], 0);
                    assert_eq!(l["frame"], "alpha/base_link");
                }
                "pose" => {
                    let m = &sent[&key(&l["stamp"])];
                    assert_eq!(l["frame"], "map");
                    assert_eq!(f(&l["position"]), m.pose.pose.position.to_vec());
                }
                "clock" => {
                    let c = key(&l["clock"]);
                    assert!(sent.contains_key(&c), "clock {c:?} never sent");
                }
                _ => {}
            }
        }
        assert!(checked >= 5);
        // The numbers are the model's: the last odometry's x is the
        // vehicle's x at that stamp (not a constant or a zero).
        let last = sent
            .values()
            .max_by_key(|m| (m.stamp.sec, m.stamp.nanosec))
            .unwrap();
        assert!(last.odom.pose.position[0] != 0.0 || last.odom.pose.position[1] != 0.0);
        assert_eq!(last.stamp, Time::from_secs(t));
    });
}

#[test]
fn rclpy_commands_are_parsed_and_bad_ones_reported() {
    if !ros2_util::have_ros2_dds("rclpy_commands_are_parsed_and_bad_ones_reported") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        let mut p = Participant::new(0).unwrap();
        let mut ports = VehiclePorts::open(&mut p, "bravo", DEFAULT_COMMANDS).unwrap();
        let mut v = boat();
        let child = ros2_util::spawn_py("ros2_peer.py", &["drive", "bravo", "20"]);
        let mut good = Vec::new();
        let mut bad = Vec::new();
        let out = ros2_util::drive_until_exit(child, Duration::from_secs(25), || {
            // As a live runtime does: parse (in the ports), then the
            // vehicle's own checks; a refusal of either is reported.
            for c in ports.poll_commands() {
                match c.and_then(|c| v.handle_command(c.clone(), 500.0).map(|_| c)) {
                    Ok(c) => good.push(c),
                    Err(e) => {
                        ports.report(&e).unwrap();
                        bad.push(e);
                    }
                }
            }
        });
        let (so, se) = out_text(&out);
        assert!(out.status.success(), "peer failed:\n{so}\n{se}");
        assert!(good.contains(&Command::DesiredRudder(12.5)), "{good:?}");
        assert!(
            good.iter()
                .any(|c| matches!(c, Command::Reset(s) if s == "x=10,y=-20")),
            "{good:?}"
        );
        assert!(
            bad.iter()
                .any(|e| e.var == "DESIRED_THRUST" && e.reason.contains("finite")),
            "{bad:?}"
        );
        // The peer heard the errors usim reported.
        let errors: Vec<&str> = so
            .lines()
            .filter_map(|l| l.strip_prefix("error "))
            .collect();
        assert!(
            errors.iter().any(|e| e.starts_with("DESIRED_THRUST=")),
            "{so}"
        );
        assert!(errors.iter().any(|e| e.starts_with("USM_RESET=")), "{so}");
        // The good reset moved the vehicle.
        let s = v.snapshot();
        assert_eq!((s.x, s.y), (10.0, -20.0));
    });
}

#[test]
fn a_second_claim_of_a_vehicle_name_is_refused() {
    if !ros2_util::have_netns("a_second_claim_of_a_vehicle_name_is_refused") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        use usim::live::claim::Claimant;
        let window = Duration::from_millis(2500);
        let mut p1 = Participant::new(0).unwrap();
        let me = Claimant {
            nonce: "aaaa0001".into(),
            rand: 7,
        };
        let mut owner = claim::claim_as(&mut p1, "charlie", &me, window).unwrap();
        // The owner answers from a thread of its own while the second
        // participant (another usim) claims the same name.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        let server = std::thread::spawn(move || {
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                owner.serve().unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let mut p2 = Participant::new(0).unwrap();
        let other = Claimant {
            nonce: "bbbb0002".into(),
            // A lower number than the owner's: only the owner's answer can
            // refuse it, not the race rule.
            rand: 1,
        };
        let e = claim::claim_as(&mut p2, "charlie", &other, window)
            .err()
            .expect("the second claim of charlie must be refused");
        assert!(e.0.contains("`charlie` is taken"), "{e}");
        // Another name is free.
        claim::claim_as(&mut p2, "delta", &other, window).unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        server.join().unwrap();
    });
}
