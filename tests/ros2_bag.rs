//! `usim replay MISSION -o run.mcap --ros2`: a ROS 2 bag (MCAP, profile
//! `ros2`, `ros2msg` schemas, CDR). Read back by the `mcap` crate (every
//! odometry equals the CSV replay of the same mission: position, heading,
//! stamp), by rosbags and by mcap-ros2-support (tests/py/check_ros2_bag.py:
//! every message decodes, with both), and byte-identical across runs.
mod ros2_util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use usim::ros2::convert::heading_of;
use usim::ros2::msg::{Message, NavSatFix, Odometry, TfMessage};

fn usim() -> &'static str {
    env!("CARGO_BIN_EXE_usim")
}

fn mission(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("missions")
        .join(name)
}

fn replay(mission: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(usim())
        .arg("replay")
        .arg(mission)
        .arg("-o")
        .arg(out)
        .arg("-q")
        .args(extra)
        .output()
        .unwrap()
}

fn replay_ok(mission: &Path, out: &Path, extra: &[&str]) {
    let o = replay(mission, out, extra);
    assert!(
        o.status.success(),
        "replay {}: {}",
        mission.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// CSV rows as maps column name -> number (NaN for an empty cell).
fn read_csv(path: &Path) -> Vec<BTreeMap<String, f64>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.parse().unwrap_or(f64::NAN)))
                .collect()
        })
        .collect()
}

/// topic -> (schema name, schema encoding, message encoding) and
/// topic -> messages (log time, bytes).
type Bag = (
    BTreeMap<String, (String, String, String)>,
    BTreeMap<String, Vec<(u64, Vec<u8>)>>,
);

fn read_bag(path: &Path) -> Bag {
    let bytes = std::fs::read(path).unwrap();
    let summary = mcap::read::Summary::read(&bytes).unwrap().unwrap();
    let mut channels = BTreeMap::new();
    for ch in summary.channels.values() {
        let s = ch.schema.as_ref().unwrap();
        channels.insert(
            ch.topic.clone(),
            (
                s.name.clone(),
                s.encoding.clone(),
                ch.message_encoding.clone(),
            ),
        );
    }
    let mut msgs: BTreeMap<String, Vec<(u64, Vec<u8>)>> = BTreeMap::new();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        msgs.entry(m.channel.topic.clone())
            .or_default()
            .push((m.log_time, m.data.to_vec()));
    }
    (channels, msgs)
}

/// The odometry of every step is the CSV row of that step: ENU position
/// (z = −depth), the heading back from the quaternion, the stamp = the
/// mission clock; the fix carries the CSV's lat/lon.
fn check_against_csv(bag: &Bag, vehicle: &str, rows: &[BTreeMap<String, f64>], start: f64) {
    let (channels, msgs) = bag;
    let odom_topic = format!("/{vehicle}/odom");
    assert_eq!(
        channels[&odom_topic],
        (
            "nav_msgs/msg/Odometry".to_string(),
            "ros2msg".to_string(),
            "cdr".to_string()
        )
    );
    let odoms = &msgs[&odom_topic];
    assert_eq!(
        odoms.len(),
        rows.len(),
        "{vehicle}: one odometry per CSV row"
    );
    for ((log_time, data), row) in odoms.iter().zip(rows) {
        let o = Odometry::from_cdr(data).unwrap();
        assert_eq!(o.header.frame_id, format!("{vehicle}/odom"));
        assert_eq!(o.child_frame_id, format!("{vehicle}/base_link"));
        assert_eq!(o.pose.position[0], row["x"]);
        assert_eq!(o.pose.position[1], row["y"]);
        assert_eq!(o.pose.position[2], -row["depth"]);
        let h = heading_of(o.pose.orientation);
        let dh = (h - row["heading"] + 180.0).rem_euclid(360.0) - 180.0;
        assert!(dh.abs() < 1e-9, "heading {h} vs CSV {}", row["heading"]);
        let clock = start + row["t"];
        assert_eq!(o.header.stamp, usim::ros2::msg::Time::from_secs(clock));
        assert_eq!(*log_time, o.header.stamp.nanos());
    }
    if let Some(fixes) = msgs.get(&format!("/{vehicle}/fix")) {
        assert_eq!(fixes.len(), rows.len());
        let f = NavSatFix::from_cdr(&fixes.last().unwrap().1).unwrap();
        let last = rows.last().unwrap();
        assert_eq!((f.latitude, f.longitude), (last["lat"], last["lon"]));
    }
}

#[test]
fn a_ros2_bag_carries_the_replay_of_one_vehicle() {
    let dir = tempfile::tempdir().unwrap();
    let m = mission("harbour_turns.toml");
    let (bag, csv) = (dir.path().join("run.mcap"), dir.path().join("run.csv"));
    replay_ok(&m, &bag, &["--ros2"]);
    replay_ok(&m, &csv, &[]);
    let rows = read_csv(&csv);
    let b = read_bag(&bag);
    let mission = usim::mission::load(&m).unwrap();
    check_against_csv(&b, "kayak", &rows, mission.start_time);
    let (channels, msgs) = &b;
    for (topic, ty) in [
        ("/clock", "rosgraph_msgs/msg/Clock"),
        ("/tf", "tf2_msgs/msg/TFMessage"),
        ("/kayak/pose", "geometry_msgs/msg/PoseStamped"),
        ("/kayak/fix", "sensor_msgs/msg/NavSatFix"),
        ("/kayak/nav_x", "std_msgs/msg/Float64"),
        ("/kayak/desired_rudder", "std_msgs/msg/Float64"),
    ] {
        assert_eq!(channels[topic].0, ty, "{topic}");
    }
    // One clock per output step; every mission post of DESIRED_RUDDER is
    // on its command topic.
    assert_eq!(msgs["/clock"].len(), rows.len());
    let posts = std::fs::read_to_string(&m)
        .unwrap()
        .matches("\"DESIRED_RUDDER\"")
        .count();
    assert_eq!(msgs["/kayak/desired_rudder"].len(), posts);
    // Each /tf message: map → kayak/odom, kayak/odom → kayak/base_link.
    let tf = TfMessage::from_cdr(&msgs["/tf"][0].1).unwrap();
    let frames: Vec<(&str, &str)> = tf
        .transforms
        .iter()
        .map(|t| (t.header.frame_id.as_str(), t.child_frame_id.as_str()))
        .collect();
    assert_eq!(
        frames,
        [("map", "kayak/odom"), ("kayak/odom", "kayak/base_link")]
    );
}

#[test]
fn a_fleet_bag_has_every_vehicle_and_is_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let m = mission("two_boats_crossing.toml");
    let (a, b) = (dir.path().join("a.mcap"), dir.path().join("b.mcap"));
    replay_ok(&m, &a, &["--ros2"]);
    replay_ok(&m, &b, &["--ros2"]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let csv_dir = dir.path().join("csv/");
    std::fs::create_dir(&csv_dir).unwrap();
    replay_ok(&m, &csv_dir, &[]);
    let bag = read_bag(&a);
    let mission = usim::mission::load(&m).unwrap();
    for v in ["west", "south"] {
        let rows = read_csv(&csv_dir.join(format!("{v}.csv")));
        check_against_csv(&bag, v, &rows, mission.start_time);
    }
    // Two vehicles, one /tf message each per step.
    assert_eq!(bag.1["/tf"].len(), 2 * bag.1["/west/odom"].len());
}

#[test]
fn rosbags_and_mcap_ros2_decode_every_message() {
    if !ros2_util::have_python(
        "rosbags_and_mcap_ros2_decode_every_message",
        "rosbags,mcap_ros2",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, vehicles) in [
        ("two_boats_crossing.toml", &["west", "south"][..]),
        ("reset_tour.toml", &["kayak"][..]),
    ] {
        let m = mission(name);
        let bag = dir.path().join(name.replace(".toml", ".mcap"));
        replay_ok(&m, &bag, &["--ros2"]);
        let (_, msgs) = read_bag(&bag);
        let out = ros2_util::run_py(
            "check_ros2_bag.py",
            &[bag.to_str().unwrap()],
            Duration::from_secs(120),
        );
        let said = ros2_util::assert_ok(&out, "check_ros2_bag.py");
        let v: serde_json::Value = serde_json::from_str(said.trim()).unwrap();
        assert_eq!(v["profile"], "ros2");
        // Both readers decoded every message of every topic.
        for (topic, list) in &msgs {
            for reader in ["rosbags", "mcap_ros2"] {
                assert_eq!(
                    v[reader][topic].as_u64(),
                    Some(list.len() as u64),
                    "{name}: {reader} on {topic}"
                );
            }
        }
        for r in ["rosbags", "mcap_ros2"] {
            assert_eq!(v[r].as_object().unwrap().len(), msgs.len(), "{name}: {r}");
        }
        // rosbags' last odometry is usim's.
        for veh in vehicles {
            let topic = format!("/{veh}/odom");
            let Some(last) = msgs.get(&topic).and_then(|l| l.last()) else {
                let names: Vec<_> = msgs.keys().collect();
                panic!("{name}: no {topic} in {names:?}");
            };
            let o = Odometry::from_cdr(&last.1).unwrap();
            let r = &v["last_odom"][&topic];
            let pos: Vec<f64> = r["position"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            assert_eq!(pos, o.pose.position.to_vec(), "{name} {topic}");
            assert_eq!(r["log_time"].as_u64(), Some(last.0));
            assert_eq!(r["frame"], format!("{veh}/odom"));
        }
    }
}

#[test]
fn ros2_bags_refuse_names_and_outputs_they_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    // A vehicle name with `-` is a usim name but not a ROS name.
    let m = dir.path().join("m.toml");
    std::fs::write(
        &m,
        "[mission]\ndt = 0.1\nduration = 2.0\n\n[[vehicle]]\nname = \"alpha-1\"\n",
    )
    .unwrap();
    let out = dir.path().join("x.mcap");
    replay_ok(&m, &dir.path().join("x.csv"), &[]);
    let o = replay(&m, &out, &["--ros2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("--ros2: vehicle `alpha-1`") && err.contains("ROS 2 vehicle name"),
        "{err}"
    );
    assert!(!out.exists(), "no half file");
    // --ros2 with CSV output.
    let o = replay(
        &mission("dive.toml"),
        &dir.path().join("x.csv"),
        &["--ros2"],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--ros2") && err.contains(".mcap"), "{err}");
}
