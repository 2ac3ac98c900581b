//! `usim ros2` (the binary) against real ROS 2 nodes (rclpy with Fast DDS,
//! tests/py/ros2_live_peer.py), each test in a loopback-only network
//! namespace of its own (tests/ros2_util).
//!
//! * `lockstep_odometry_and_fix_equal_a_replay_of_the_same_commands`: an
//!   rclpy controller in `--lockstep ack` sends commands at two steps and
//!   acknowledges each; every odometry, fix and `NAV_X` it receives equals
//!   the CSV row of `usim replay` of a mission posting the same commands.
//! * `an_rclpy_heading_controller_on_sim_time_closes_the_loop`: a node with
//!   `use_sim_time` runs its timer on usim's `/clock` (time warp 4) and
//!   steers the boat onto a heading.
//! * `bad_cdr_wrong_types_and_a_flood_are_logged_and_bounded`: malformed
//!   CDR, the wrong message type and 20,000 commands in a burst: log lines,
//!   answers on the error topic at most 20 a second, memory bounded,
//!   usim keeps running and stops cleanly on SIGTERM.
//! * `lockstep_step_runs_the_iterations_asked_for_on_usim_step`.
//! * `a_second_usim_with_the_same_vehicle_is_refused`.
//! * `rclpy_discovers_every_documented_topic_with_its_type_and_qos`: what
//!   `ros2 topic list -t` and `ros2 topic info -v` show: every topic of
//!   docs/ros2.md's table, its type, and the reliability of usim's side.
#![cfg(feature = "ros2")]
mod ros2_util;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn usim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_usim"));
    c.env("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")
        .env("ROS_DOMAIN_ID", "0")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn kayak() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/kayak.toml")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Wait for `child` to end by itself within `timeout` (killed after).
fn wait(child: Child, timeout: Duration) -> std::process::Output {
    let mut child = child;
    let t0 = Instant::now();
    while child.try_wait().ok().flatten().is_none() && t0.elapsed() < timeout {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

/// usim heading (degrees) of an ENU yaw quaternion [x, y, z, w].
fn heading_of(q: &[f64]) -> f64 {
    (90.0 - (2.0 * q[2].atan2(q[3])).to_degrees()).rem_euclid(360.0)
}

#[test]
fn lockstep_odometry_and_fix_equal_a_replay_of_the_same_commands() {
    if !ros2_util::have_ros2_dds("lockstep_odometry_and_fix_equal_a_replay_of_the_same_commands") {
        return;
    }
    // The replay: the same commands at the iterations the controller's
    // land in (sent after stamp k, applied at iteration k + 1).
    let dir = tempfile::tempdir().unwrap();
    let mission = dir.path().join("m.toml");
    std::fs::write(
        &mission,
        format!(
            "[mission]\nname = \"ls\"\nvehicle = {:?}\nstart_time = 100.0\ndt = 0.1\nduration = 4.0\noutput_every = 1\n\
             [[post]]\nt = 0.1\nvar = \"DESIRED_THRUST\"\nvalue = 50.0\n\
             [[post]]\nt = 0.1\nvar = \"DESIRED_RUDDER\"\nvalue = 20.0\n\
             [[post]]\nt = 2.0\nvar = \"DESIRED_RUDDER\"\nvalue = -10.0\n",
            kayak().display().to_string()
        ),
    )
    .unwrap();
    let csv = dir.path().join("m.csv");
    let out = usim()
        .arg("replay")
        .arg(&mission)
        .arg("-o")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<Vec<String>> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let col = |name: &str| rows[0].iter().position(|c| c == name).unwrap();
    let (cx, cy, ch, clat, clon) = (col("x"), col("y"), col("heading"), col("lat"), col("lon"));
    let steps = 40;
    ros2_util::in_netns_thread(move || {
        let node = usim()
            .arg("ros2")
            .arg(kayak())
            .args([
                "--lockstep",
                "ack",
                "--start-time",
                "100",
                "--claim-window",
                "0.5",
            ])
            .args(["--steps", &steps.to_string(), "--duration", "60"])
            .spawn()
            .unwrap();
        let peer = ros2_util::spawn_py(
            "ros2_live_peer.py",
            &["follow", "kayak", &steps.to_string(), "50"],
        );
        let po = wait(peer, Duration::from_secs(55));
        let uo = wait(node, Duration::from_secs(10));
        let so = text(&po.stdout);
        assert!(po.status.success(), "peer: {so}\n{}", text(&po.stderr));
        assert!(uo.status.success(), "usim: {}", text(&uo.stderr));
        let lines: Vec<Value> = so
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let done = lines.iter().find(|l| l["kind"] == "done").unwrap();
        assert_eq!(done["stamps"], steps + 1, "{so}");
        let mut odoms = std::collections::BTreeSet::new();
        let mut fixes = 0;
        // NAV_X (a usim posting, std_msgs/Float64, no stamp): each value
        // is the x of one of the replay's rows.
        let xs: Vec<f64> = rows[1..].iter().map(|r| r[cx].parse().unwrap()).collect();
        let nav_x: Vec<f64> = lines
            .iter()
            .filter(|l| l["kind"] == "nav_x")
            .map(|l| l["data"].as_f64().unwrap())
            .collect();
        assert!(nav_x.len() >= steps / 2, "{so}");
        assert!(nav_x.iter().all(|x| xs.contains(x)), "{nav_x:?}");
        assert!(nav_x.iter().any(|x| *x > 0.1), "{nav_x:?}");
        for l in &lines {
            let kind = l["kind"].as_str().unwrap();
            if kind != "odom" && kind != "fix" {
                continue;
            }
            let st = l["stamp"].as_array().unwrap();
            let t = st[0].as_f64().unwrap() + st[1].as_f64().unwrap() * 1e-9;
            let k = ((t - 100.0) * 10.0).round() as usize;
            let row = &rows[1 + k];
            let num = |c: usize| row[c].parse::<f64>().unwrap();
            if kind == "odom" {
                assert_eq!(l["frame"], "kayak/odom");
                assert_eq!(l["child"], "kayak/base_link");
                assert_eq!(l["x"].as_f64().unwrap(), num(cx), "x at k={k}");
                assert_eq!(l["y"].as_f64().unwrap(), num(cy), "y at k={k}");
                let q: Vec<f64> = l["q"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                let dh = (heading_of(&q) - num(ch) + 540.0).rem_euclid(360.0) - 180.0;
                assert!(dh.abs() < 1e-9, "heading at k={k}: {dh}");
                odoms.insert(k);
            } else {
                assert_eq!(l["lat"].as_f64().unwrap(), num(clat), "lat at k={k}");
                assert_eq!(l["lon"].as_f64().unwrap(), num(clon), "lon at k={k}");
                fixes += 1;
            }
        }
        // Every iteration 0..=steps reached the controller; the turn to
        // port at step 20 is in the numbers (heading falls after it).
        assert_eq!(odoms.len(), steps + 1);
        assert!(fixes > 0);
        let h = |k: usize| rows[1 + k][ch].parse::<f64>().unwrap();
        assert!(
            h(19) > h(18) && h(21) < h(20),
            "{} {} {} {}",
            h(18),
            h(19),
            h(20),
            h(21)
        );
    });
}

#[test]
fn an_rclpy_heading_controller_on_sim_time_closes_the_loop() {
    if !ros2_util::have_ros2_dds("an_rclpy_heading_controller_on_sim_time_closes_the_loop") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        let mut node = usim()
            .arg("ros2")
            .arg(kayak())
            .args([
                "--time-warp",
                "4",
                "--start-time",
                "1000",
                "--claim-window",
                "0.5",
            ])
            .args(["--duration", "40", "--no-postings"])
            .spawn()
            .unwrap();
        let peer = ros2_util::spawn_py("ros2_live_peer.py", &["heading", "kayak", "90", "35"]);
        let po = wait(peer, Duration::from_secs(38));
        let _ = node.kill();
        let uo = node.wait_with_output().unwrap();
        let so = text(&po.stdout);
        assert!(
            po.status.success(),
            "peer: {so}\n{}\nusim: {}",
            text(&po.stderr),
            text(&uo.stderr)
        );
        let r: Value = serde_json::from_str(so.lines().last().unwrap()).unwrap();
        assert_eq!(r["use_sim_time"], true);
        assert_eq!(r["done"], true, "never held 90°: {so}");
        let h = r["heading"].as_f64().unwrap();
        assert!((h - 90.0).abs() < 3.0, "{so}");
        // The node's clock is usim's /clock (from 1000 s, 4× real time),
        // not the wall clock: the timer ran on sim time.
        let first = r["first_clock"].as_f64().unwrap();
        let clock = r["clock"].as_f64().unwrap();
        assert!((1000.0..1200.0).contains(&first), "{so}");
        assert!(clock > first + 3.0 && clock < 1000.0 + 4.0 * 40.0, "{so}");
        let calls = r["calls"].as_f64().unwrap();
        // 10 Hz on sim time: about 10 calls per simulated second.
        let sim = clock - first;
        assert!(
            calls > 5.0 * sim && calls < 15.0 * sim + 5.0,
            "{calls} calls in {sim} s: {so}"
        );
    });
}

#[test]
fn lockstep_step_runs_the_iterations_asked_for_on_usim_step() {
    if !ros2_util::have_ros2_dds("lockstep_step_runs_the_iterations_asked_for_on_usim_step") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        let node = usim()
            .arg("ros2")
            .arg(kayak())
            .args([
                "--lockstep",
                "step",
                "--start-time",
                "50",
                "--claim-window",
                "0.5",
            ])
            .args(["--duration", "12", "--no-postings"])
            .spawn()
            .unwrap();
        let peer = ros2_util::spawn_py("ros2_live_peer.py", &["step", "kayak", "20"]);
        let po = wait(peer, Duration::from_secs(25));
        let uo = wait(node, Duration::from_secs(30));
        let so = text(&po.stdout);
        let se = text(&uo.stderr);
        assert!(po.status.success(), "peer: {so}\n{}", text(&po.stderr));
        assert!(uo.status.success(), "usim: {se}");
        let r: Value = serde_json::from_str(so.lines().last().unwrap()).unwrap();
        assert_eq!(r["before"], 0, "{so}");
        assert_eq!(r["after7"], 7, "{so}");
        let stamps: Vec<f64> = r["stamps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(stamps.len(), 10, "{so}");
        for (k, t) in stamps.iter().enumerate() {
            assert!(
                (t - (50.0 + 0.1 * (k + 1) as f64)).abs() < 1e-6,
                "{stamps:?}"
            );
        }
        assert!(se.contains("a step request is a whole number"), "{se}");
        assert!(se.contains("stopped after 10 iterations"), "{se}");
    });
}

fn rss_kb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn bad_cdr_wrong_types_and_a_flood_are_logged_and_bounded() {
    if !ros2_util::have_ros2_dds("bad_cdr_wrong_types_and_a_flood_are_logged_and_bounded") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        use usim::dds::Participant;
        use usim::ros2::cdr::HEADER_CDR_LE;
        use usim::ros2::msg::{Float64, Message, StringMsg};
        use usim::ros2::qos;

        let mut node = usim()
            .arg("ros2")
            .arg(kayak())
            .args(["--claim-window", "0.5", "--duration", "60"])
            .spawn()
            .unwrap();
        let peer = ros2_util::spawn_py("ros2_live_peer.py", &["errors", "kayak", "12"]);
        let mut p = Participant::new(0).unwrap();
        let rudder = p
            .writer("/kayak/desired_rudder", Float64::NAME, qos::DEFAULT)
            .unwrap();
        let reset = p
            .writer("/kayak/usm_reset", StringMsg::NAME, qos::DEFAULT)
            .unwrap();
        // Discovery, then the usim process's own start-up.
        std::thread::sleep(Duration::from_secs(3));
        let rss0 = rss_kb(node.id());
        let t0 = Instant::now();
        for _ in 0..3 {
            // Malformed: a Float64 body cut short.
            let mut b = HEADER_CDR_LE.to_vec();
            b.extend_from_slice(&[1, 2, 3]);
            rudder.publish_cdr(&b).unwrap();
            // The wrong type on the topic: a String where a Float64 goes.
            rudder
                .publish(&StringMsg {
                    data: "hello there".into(),
                })
                .unwrap();
            // A string whose length runs past the message.
            let mut b = HEADER_CDR_LE.to_vec();
            b.extend_from_slice(&0x7fff_ffffu32.to_le_bytes());
            reset.publish_cdr(&b).unwrap();
            // Well-formed, refused by usim's checks.
            rudder.publish(&Float64 { data: f64::NAN }).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        }
        // A flood: 20,000 commands in a burst, half of them bad.
        for i in 0..20_000 {
            let v = if i % 2 == 0 {
                f64::INFINITY
            } else {
                f64::from(i % 30)
            };
            let _ = rudder.publish(&Float64 { data: v });
        }
        let flood_s = t0.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_secs(2));
        assert!(
            node.try_wait().unwrap().is_none(),
            "usim stopped under the flood"
        );
        let rss1 = rss_kb(node.id());
        let po = wait(peer, Duration::from_secs(20));
        // SIGTERM: a clean stop.
        unsafe {
            libc::kill(node.id() as i32, libc::SIGTERM);
        }
        let uo = wait(node, Duration::from_secs(10));
        let se = text(&uo.stderr);
        assert!(uo.status.success(), "usim: {:?}\n{se}", uo.status);
        let so = text(&po.stdout);
        assert!(
            se.contains("dropped message on /kayak/desired_rudder"),
            "{se}"
        );
        assert!(se.contains("not a std_msgs/Float64: malformed CDR"), "{se}");
        assert!(
            se.contains("/kayak/usm_reset") && se.contains("not a std_msgs/String"),
            "{se}"
        );
        assert!(se.contains("finite"), "{se}");
        assert!(!se.contains("panicked"), "{se}");
        let errors: Vec<&str> = so
            .lines()
            .filter_map(|l| l.strip_prefix("error "))
            .collect();
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("DESIRED_RUDDER=") && e.contains("malformed CDR")),
            "{so}"
        );
        assert!(errors.iter().any(|e| e.starts_with("USM_RESET=")), "{so}");
        // At most 20 answers a second (the flood's bad half is 10,000).
        let span = flood_s + 12.0;
        assert!(
            (errors.len() as f64) <= 20.0 * (span + 1.0),
            "{} answers",
            errors.len()
        );
        // Memory: bounded queues, not a copy of the flood.
        assert!(rss1 < rss0 + 30_000, "RSS {rss0} kB -> {rss1} kB");
    });
}

#[test]
fn a_second_usim_with_the_same_vehicle_is_refused() {
    if !ros2_util::have_netns("a_second_usim_with_the_same_vehicle_is_refused") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        let first = usim()
            .arg("ros2")
            .arg(kayak())
            .args(["--claim-window", "1", "--duration", "12", "--no-postings"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(2));
        let second = usim()
            .arg("ros2")
            .arg(kayak())
            .args(["--claim-window", "3", "--duration", "5", "--no-postings"])
            .output()
            .unwrap();
        let se = text(&second.stderr);
        assert!(!second.status.success(), "{se}");
        assert!(se.contains("vehicle name `kayak` is taken"), "{se}");
        let uo = wait(first, Duration::from_secs(15));
        assert!(uo.status.success(), "{}", text(&uo.stderr));
    });
}

#[test]
fn rclpy_discovers_every_documented_topic_with_its_type_and_qos() {
    if !ros2_util::have_ros2_dds("rclpy_discovers_every_documented_topic_with_its_type_and_qos") {
        return;
    }
    ros2_util::in_netns_thread(|| {
        let mut node = usim()
            .arg("ros2")
            .arg(kayak())
            .args(["--claim-window", "0.5", "--duration", "30"])
            .spawn()
            .unwrap();
        let po = wait(
            ros2_util::spawn_py("ros2_live_peer.py", &["graph", "kayak", "20"]),
            Duration::from_secs(25),
        );
        let _ = node.kill();
        let uo = node.wait_with_output().unwrap();
        let so = text(&po.stdout);
        assert!(
            po.status.success(),
            "peer: {so}\n{}\nusim: {}",
            text(&po.stderr),
            text(&uo.stderr)
        );
        let g: Value = serde_json::from_str(so.lines().last().unwrap()).unwrap();
        let topics = &g["topics"];
        // What `ros2 topic list -t` shows: docs/ros2.md's table. usim
        // writes (w) or reads (r) each; the reliability of usim's side.
        let table: &[(&str, &str, char, &str)] = &[
            ("/kayak/odom", "nav_msgs/msg/Odometry", 'w', "RELIABLE"),
            (
                "/kayak/pose",
                "geometry_msgs/msg/PoseStamped",
                'w',
                "RELIABLE",
            ),
            (
                "/kayak/fix",
                "sensor_msgs/msg/NavSatFix",
                'w',
                "BEST_EFFORT",
            ),
            ("/tf", "tf2_msgs/msg/TFMessage", 'w', "RELIABLE"),
            ("/clock", "rosgraph_msgs/msg/Clock", 'w', "RELIABLE"),
            ("/kayak/usim/errors", "std_msgs/msg/String", 'w', "RELIABLE"),
            ("/kayak/usim/claim", "std_msgs/msg/String", 'w', "RELIABLE"),
            (
                "/kayak/desired_thrust",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            (
                "/kayak/desired_rudder",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            (
                "/kayak/desired_elevator",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            (
                "/kayak/desired_thrust_l",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            (
                "/kayak/desired_thrust_r",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            (
                "/kayak/desired_heading",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            (
                "/kayak/desired_speed",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            (
                "/kayak/desired_depth",
                "std_msgs/msg/Float64",
                'r',
                "RELIABLE",
            ),
            ("/kayak/usm_reset", "std_msgs/msg/String", 'r', "RELIABLE"),
            (
                "/kayak/drift_vector_add",
                "std_msgs/msg/String",
                'r',
                "RELIABLE",
            ),
            ("/kayak/set", "std_msgs/msg/String", 'r', "RELIABLE"),
            // usim's postings.
            ("/kayak/nav_x", "std_msgs/msg/Float64", 'w', "RELIABLE"),
            (
                "/kayak/nav_heading",
                "std_msgs/msg/Float64",
                'w',
                "RELIABLE",
            ),
        ];
        for (topic, ty, side, rel) in table {
            let t = &topics[*topic];
            assert_eq!(t["types"], serde_json::json!([ty]), "{topic}: {so}");
            let ends = if *side == 'w' {
                &t["publishers"]
            } else {
                &t["subscribers"]
            };
            let ends = ends.as_array().unwrap();
            assert!(!ends.is_empty(), "{topic} has no usim {side}: {so}");
            assert!(
                ends.iter()
                    .all(|e| e["reliability"] == *rel && e["durability"] == "VOLATILE"),
                "{topic}: {ends:?}"
            );
        }
        // Lock-step topics are read only with --lockstep.
        assert!(topics.get("/usim/step").is_none(), "{so}");
        assert!(topics.get("/kayak/usim/ack").is_none(), "{so}");
    });
}
