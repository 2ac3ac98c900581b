//! Fleets on MQTT (docs/fleets.md): a fleet split over two real mosquitto
//! brokers joined by mosquitto's own bridge — a command posted on broker B
//! moves a vehicle connected to broker A — and `[mqtt] publish = "report"`
//! (only NODE_REPORT and USM_TIME) on the embedded broker.
mod mqtt_util;

use std::time::Duration;

use mqtt_util::*;

/// Deadline for anything that should take a tick or two (returned from as
/// soon as it happens): generous, as CI runs many tests on two cores.
const WAIT: Duration = Duration::from_secs(30);

#[test]
fn command_posted_on_bridged_broker_b_moves_vehicle_on_a() {
    let Some(a) = Broker::start(BrokerKind::Mosquitto) else {
        return;
    };
    // B bridges the whole topic tree both ways to A (mosquitto's
    // `connection` bridge, the way docs/fleets.md sets it up).
    let bridge = format!(
        "connection to_a\naddress 127.0.0.1:{}\ntopic {ROOT}/# both 0\n\
         cleansession true\ntry_private false\nrestart_timeout 1\n",
        a.port
    );
    let Some(b) = Broker::start_with(BrokerKind::Mosquitto, &bridge) else {
        return;
    };
    let cfg = write_config(a.dir.path(), "bravo", &a.url(), "max_acceleration = 0.5");
    let on_a = Watcher::vehicle(a.port, "bravo");
    let on_b = Watcher::vehicle(b.port, "bravo");
    let _v = spawn_vehicle(&cfg, &[]);
    let speed = topic("bravo", "NAV_SPEED");
    // The vehicle, connected to A, is seen on B through the bridge.
    on_b.wait_num(0, &speed, WAIT, |s| s == 0.0)
        .expect("NAV_SPEED of the vehicle on A did not reach B over the bridge");
    let (ma, mb) = (on_a.mark(), on_b.mark());
    // The bridge's subscription on A may lag its connection: post until the
    // vehicle reacts (each post is the same command).
    let mut moved = None;
    for _ in 0..10 {
        on_b.post("bravo", "DESIRED_THRUST", "100");
        moved = on_a.wait_num(ma, &speed, Duration::from_millis(1500), |s| s >= 0.5);
        if moved.is_some() {
            break;
        }
    }
    moved.expect("DESIRED_THRUST posted on B did not move the vehicle on A");
    on_b.wait_num(mb, &speed, WAIT, |s| s >= 0.5)
        .expect("B did not see the vehicle speed up");
}

#[test]
fn publish_report_sends_only_node_report_and_time() {
    let Some(broker) = Broker::start(BrokerKind::Embedded) else {
        return;
    };
    let cfg = write_config(broker.dir.path(), "rep", &broker.url(), "")
        .to_str()
        .unwrap()
        .to_string();
    let text = std::fs::read_to_string(&cfg).unwrap() + "publish = \"report\"\n";
    std::fs::write(&cfg, text).unwrap();
    let w = Watcher::vehicle(broker.port, "rep");
    let _v = spawn_vehicle(std::path::Path::new(&cfg), &[]);
    w.wait_after(0, &topic("rep", "status"), WAIT, |p| p == "online")
        .expect("online");
    let m = w.mark();
    w.post("rep", "DESIRED_THRUST", "100");
    let report = w
        .wait_after(m, &topic("rep", "NODE_REPORT"), WAIT, |p| {
            node_report(p)["speed"].as_f64().is_some_and(|s| s > 0.1)
        })
        .expect("NODE_REPORT shows the thrust");
    assert!(node_report(&report.payload)["x"].is_number());
    assert!(w.latest_num(&topic("rep", "USM_TIME")).is_some());
    for var in ["NAV_X", "NAV_SPEED", "NAV_HEADING"] {
        assert!(
            w.latest(&topic("rep", var)).is_none(),
            "{var} was published"
        );
    }
}
