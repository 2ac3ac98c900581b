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
//!   docs/ros2.md's table, its type, the reliability of usim's side and
//!   the usim node that owns it.
//! * `rclpy_lists_each_vehicle_node_with_its_namespace`: `ros2 node list`
//!   (from usim's `ros_discovery_info`) shows `/usim` and one
//!   `/NAME/usim` per vehicle.
//! * `the_reset_service_puts_the_boat_back_at_its_start_pose`: rclpy's
//!   client calls `/kayak/usim/reset` (`std_srvs/srv/Trigger`) and gets
//!   the reply; the boat is back at its configured start.
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

/// docs/ros2.md's topic table for vehicle `kayak`, as `ros2 topic list -t`
/// should show it: topic, type, whether usim writes (`w`) or reads (`r`)
/// it, the reliability of usim's side, and the node (namespace) that owns
/// the endpoint (`/kayak` for the vehicle's node `/kayak/usim`, `/` for
/// the process's node `/usim`). Shared by the graph and node-list tests.
const KAYAK_TOPICS: &[(&str, &str, char, &str, &str)] = &[
    ("/kayak/odom", "nav_msgs/msg/Odometry", 'w', REL, "/kayak"),
    (
        "/kayak/pose",
        "geometry_msgs/msg/PoseStamped",
        'w',
        REL,
        "/kayak",
    ),
    ("/kayak/fix", "sensor_msgs/msg/NavSatFix", 'w', BE, "/kayak"),
    ("/tf", "tf2_msgs/msg/TFMessage", 'w', REL, "/"),
    ("/clock", "rosgraph_msgs/msg/Clock", 'w', REL, "/"),
    ("/kayak/usim/errors", STR, 'w', REL, "/kayak"),
    ("/kayak/usim/claim", STR, 'w', REL, "/kayak"),
    ("/kayak/desired_thrust", F64, 'r', REL, "/kayak"),
    ("/kayak/desired_rudder", F64, 'r', REL, "/kayak"),
    ("/kayak/desired_elevator", F64, 'r', REL, "/kayak"),
    ("/kayak/desired_thrust_l", F64, 'r', REL, "/kayak"),
    ("/kayak/desired_thrust_r", F64, 'r', REL, "/kayak"),
    ("/kayak/desired_heading", F64, 'r', REL, "/kayak"),
    ("/kayak/desired_speed", F64, 'r', REL, "/kayak"),
    ("/kayak/desired_depth", F64, 'r', REL, "/kayak"),
    ("/kayak/usm_reset", STR, 'r', REL, "/kayak"),
    ("/kayak/drift_vector_add", STR, 'r', REL, "/kayak"),
    ("/kayak/set", STR, 'r', REL, "/kayak"),
    // usim's postings.
    ("/kayak/nav_x", F64, 'w', REL, "/kayak"),
    ("/kayak/nav_heading", F64, 'w', REL, "/kayak"),
];
const REL: &str = "RELIABLE";
const BE: &str = "BEST_EFFORT";
const STR: &str = "std_msgs/msg/String";
const F64: &str = "std_msgs/msg/Float64";

/// Run `usim ros2 ARGS` in a fresh namespace with the peer's `graph` mode
/// watching vehicle `watch`; the peer's JSON line.
fn graph_of(args: Vec<String>, watch: &'static str) -> Value {
    ros2_util::in_netns_thread(move || {
        let node = usim()
            .arg("ros2")
            .args(&args)
            .args(["--claim-window", "0.5", "--duration", "30"])
            .spawn()
            .unwrap();
        let po = wait(
            ros2_util::spawn_py("ros2_live_peer.py", &["graph", watch, "20"]),
            Duration::from_secs(25),
        );
        let mut node = node;
        let _ = node.kill();
        let uo = node.wait_with_output().unwrap();
        let so = text(&po.stdout);
        assert!(
            po.status.success(),
            "peer: {so}\n{}\nusim: {}",
            text(&po.stderr),
            text(&uo.stderr)
        );
        serde_json::from_str(so.lines().last().unwrap()).unwrap()
    })
}

#[test]
fn rclpy_discovers_every_documented_topic_with_its_type_and_qos() {
    if !ros2_util::have_ros2_dds("rclpy_discovers_every_documented_topic_with_its_type_and_qos") {
        return;
    }
    let g = graph_of(vec![kayak().display().to_string()], "kayak");
    let topics = &g["topics"];
    for (topic, ty, side, rel, ns) in KAYAK_TOPICS {
        let t = &topics[*topic];
        assert_eq!(t["types"], serde_json::json!([ty]), "{topic}: {g}");
        let ends = if *side == 'w' {
            &t["publishers"]
        } else {
            &t["subscribers"]
        };
        let ends = ends.as_array().unwrap();
        assert!(!ends.is_empty(), "{topic} has no usim {side}: {g}");
        assert!(
            ends.iter()
                .all(|e| e["reliability"] == *rel && e["durability"] == "VOLATILE"),
            "{topic}: {ends:?}"
        );
        // The endpoint belongs to usim's node (from ros_discovery_info;
        // without it rclpy names the node `_NODE_NAME_UNKNOWN_`).
        assert!(
            ends.iter()
                .all(|e| e["node"] == serde_json::json!(["usim", ns])),
            "{topic}: {ends:?}"
        );
    }
    // Lock-step topics are read only with --lockstep.
    assert!(topics.get("/usim/step").is_none(), "{g}");
    assert!(topics.get("/kayak/usim/ack").is_none(), "{g}");
}

#[test]
fn rclpy_lists_each_vehicle_node_with_its_namespace() {
    if !ros2_util::have_ros2_dds("rclpy_lists_each_vehicle_node_with_its_namespace") {
        return;
    }
    let config = kayak().display().to_string();
    let args = ["--spawn", "2", "--config", &config, "--no-postings"];
    let g = graph_of(args.map(String::from).to_vec(), "kayak_0002");
    // `ros2 node list`: /usim, /kayak_0001/usim, /kayak_0002/usim (and the
    // peer's own node).
    let nodes = g["nodes"].as_array().unwrap();
    for (name, ns) in [
        ("usim", "/"),
        ("usim", "/kayak_0001"),
        ("usim", "/kayak_0002"),
    ] {
        let want = serde_json::json!([name, ns]);
        assert_eq!(
            nodes.iter().filter(|n| **n == want).count(),
            1,
            "node {ns}/{name} once: {nodes:?}"
        );
    }
    assert_eq!(nodes.len(), 4, "{nodes:?}");
    // Each vehicle's topics are its own node's.
    for v in ["kayak_0001", "kayak_0002"] {
        let odom = &g["topics"][format!("/{v}/odom")]["publishers"];
        assert_eq!(
            odom[0]["node"],
            serde_json::json!(["usim", format!("/{v}")]),
            "{odom}"
        );
    }
}

/// configs/kayak.toml with start pose `start` (a `start_pos` value).
fn kayak_starting_at(dir: &Path, start: &str) -> PathBuf {
    let text = std::fs::read_to_string(kayak()).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("start_pos"))
        .expect("kayak.toml has a start_pos line");
    let out = dir.join("kayak.toml");
    std::fs::write(&out, text.replace(line, &format!("start_pos = {start:?}"))).unwrap();
    out
}

#[test]
fn the_reset_service_puts_the_boat_back_at_its_start_pose() {
    if !ros2_util::have_ros2_dds("the_reset_service_puts_the_boat_back_at_its_start_pose")
        || !ros2_util::have_python(
            "the_reset_service_puts_the_boat_back_at_its_start_pose",
            "std_srvs.srv",
        )
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = kayak_starting_at(dir.path(), "x=30, y=-20, heading=45, speed=0");
    let g: Value = ros2_util::in_netns_thread(move || {
        let mut node = usim()
            .arg("ros2")
            .arg(&config)
            .args(["--time-warp", "4", "--claim-window", "0.5"])
            .args(["--duration", "40"])
            .spawn()
            .unwrap();
        let po = wait(
            ros2_util::spawn_py("ros2_live_peer.py", &["reset", "kayak", "30"]),
            Duration::from_secs(35),
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
        serde_json::from_str(so.lines().last().unwrap()).unwrap()
    });
    // rclpy's client got usim's reply to its own request.
    let reply = &g["reply"];
    assert_eq!(reply["success"], true, "{g}");
    let msg = reply["message"].as_str().unwrap();
    assert!(
        msg.starts_with("USM_RESET x=30,y=-20,heading=45,speed=0,depth=0"),
        "{msg}"
    );
    // The boat had left its start (3 m at least) ...
    let before = g["before"].as_array().unwrap();
    let (bx, by) = (before[0].as_f64().unwrap(), before[1].as_f64().unwrap());
    assert!((bx - 30.0).hypot(by + 20.0) > 3.0, "{g}");
    // ... and the reset put it back (docs/model.md §14: x, y, heading, speed
    // from the start pose): an odometry after the reply is within one
    // tick's travel at the reset speed 0 of the start, heading 45°.
    let after = g["after"].as_array().unwrap();
    let back = after.iter().find(|o| {
        let x = o[0].as_f64().unwrap();
        let y = o[1].as_f64().unwrap();
        (x - 30.0).hypot(y + 20.0) < 0.1
    });
    let back = back.unwrap_or_else(|| panic!("never back at (30, -20): {g}"));
    assert!((back[2].as_f64().unwrap() - 45.0).abs() < 1.0, "{back}");
}
