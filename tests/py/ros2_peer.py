"""A real ROS 2 node (rclpy, Fast DDS) for the DDS tests (tests/ros2_dds.rs).

Modes (each ends by itself: after what it waits for, or at its deadline):
  sub_float64 TOPIC N SECS   print each std_msgs/Float64 received ("got V"), stop after N
  pub_float64 TOPIC V SECS   publish V, V+1, ... every 50 ms for SECS seconds
  vehicle NAME N SECS        subscribe NAME's odom (default QoS), fix (sensor-data
                             QoS), pose and /clock (best effort, as use_sim_time
                             does); print one JSON line per message; stop after N
                             odometry messages and at least one of each other
  drive NAME SECS            publish commands to NAME (std_msgs/Float64 and
                             std_msgs/String, default QoS) every 100 ms and print
                             every line of NAME's /NAME/usim/errors ("error TEXT");
                             stop after two distinct errors
"""
import json
import math
import sys
import time

import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from std_msgs.msg import Float64, String


def stamp(h):
    return [h.stamp.sec, h.stamp.nanosec]


def spin_until(node, done, secs):
    t0 = time.time()
    while not done() and time.time() - t0 < secs:
        rclpy.spin_once(node, timeout_sec=0.05)


def sub_float64(node, topic, n, secs):
    got = []

    def cb(m):
        got.append(m.data)
        print(f"got {m.data!r}", flush=True)

    node.create_subscription(Float64, topic, cb, 10)
    spin_until(node, lambda: len(got) >= n, secs)


def pub_float64(node, topic, v, secs):
    p = node.create_publisher(Float64, topic, 10)
    t0 = time.time()
    i = 0
    while time.time() - t0 < secs:
        p.publish(Float64(data=v + i))
        i += 1
        rclpy.spin_once(node, timeout_sec=0.05)


def vehicle(node, name, n, secs):
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import NavSatFix

    seen = {"odom": 0, "fix": 0, "pose": 0, "clock": 0}

    def out(kind, d):
        seen[kind] += 1
        print(json.dumps({"kind": kind, **d}), flush=True)

    def odom(m):
        p, q, t = m.pose.pose.position, m.pose.pose.orientation, m.twist.twist
        out("odom", {
            "stamp": stamp(m.header), "frame": m.header.frame_id, "child": m.child_frame_id,
            "position": [p.x, p.y, p.z], "orientation": [q.x, q.y, q.z, q.w],
            "linear": [t.linear.x, t.linear.y, t.linear.z],
            "angular": [t.angular.x, t.angular.y, t.angular.z],
        })

    def fix(m):
        out("fix", {"stamp": stamp(m.header), "frame": m.header.frame_id,
                    "lat": m.latitude, "lon": m.longitude, "alt": m.altitude,
                    "status": m.status.status})

    def pose(m):
        p = m.pose.position
        out("pose", {"stamp": stamp(m.header), "frame": m.header.frame_id,
                     "position": [p.x, p.y, p.z]})

    def clock(m):
        out("clock", {"clock": [m.clock.sec, m.clock.nanosec]})

    node.create_subscription(Odometry, f"/{name}/odom", odom, 10)
    node.create_subscription(NavSatFix, f"/{name}/fix", fix, qos_profile_sensor_data)
    node.create_subscription(PoseStamped, f"/{name}/pose", pose, 10)
    node.create_subscription(
        Clock, "/clock", clock, QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
    )
    spin_until(node, lambda: seen["odom"] >= n and min(seen.values()) > 0, secs)
    print(json.dumps({"kind": "seen", **seen}), flush=True)


def drive(node, name, secs):
    errors = []

    def on_error(m):
        if m.data not in errors:
            errors.append(m.data)
            print(f"error {m.data}", flush=True)

    node.create_subscription(String, f"/{name}/usim/errors", on_error, 10)
    rudder = node.create_publisher(Float64, f"/{name}/desired_rudder", 10)
    thrust = node.create_publisher(Float64, f"/{name}/desired_thrust", 10)
    reset = node.create_publisher(String, f"/{name}/usm_reset", 10)
    t0 = time.time()
    while len(errors) < 2 and time.time() - t0 < secs:
        rudder.publish(Float64(data=12.5))
        thrust.publish(Float64(data=math.nan))
        reset.publish(String(data="x=10,y=-20"))
        reset.publish(String(data="x=oops"))
        spin_until(node, lambda: False, 0.1)


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    rclpy.init()
    node = rclpy.create_node("usim_test_peer")
    try:
        if mode == "sub_float64":
            sub_float64(node, args[0], int(args[1]), float(args[2]))
        elif mode == "pub_float64":
            pub_float64(node, args[0], float(args[1]), float(args[2]))
        elif mode == "vehicle":
            vehicle(node, args[0], int(args[1]), float(args[2]))
        elif mode == "drive":
            drive(node, args[0], float(args[1]))
        else:
            raise SystemExit(f"unknown mode {mode}")
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


main()
