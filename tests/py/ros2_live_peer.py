"""Real ROS 2 nodes (rclpy, Fast DDS) driving `usim ros2` (tests/ros2_live.rs,
scripts/ros2_figures.py).

Modes (each ends by itself: after what it waits for, or at its deadline):
  follow NAME N SECS     lock-step controller (`usim ros2 --lockstep ack`): on
                         each new odometry stamp of NAME, send the commands of
                         that step (stamp 0: DESIRED_THRUST 50 and DESIRED_RUDDER
                         20; stamp 19: DESIRED_RUDDER -10), then acknowledge the
                         stamp on /NAME/usim/ack; print one JSON line per odom,
                         fix and tf message; stop after N+1 distinct stamps
  heading NAME TARGET SECS  a heading controller with use_sim_time: a 10 Hz
                         timer on the ROS clock (/clock) reads the heading from
                         NAME's odometry and steers DESIRED_RUDDER (P gain),
                         DESIRED_THRUST 60; print a JSON line with the clock,
                         the heading and the timer calls at the end (held
                         within 3 degrees for 3 s of sim time, or the deadline)
  step NAME SECS         `--lockstep step`: ask for 7 iterations on /usim/step (and
                         1.5, refused), then 3 more; print the odometry stamps
  errors NAME SECS       print every line of /NAME/usim/errors ("error TEXT")
                         for SECS seconds, then "errors N"
  graph NAME SECS        what `ros2 topic list -t` / `ros2 topic info -v` see:
                         wait until NAME's odometry has a publisher (and 2 s
                         more), then print one JSON line with every topic and
                         its types, and per topic the publishers' and
                         subscribers' reliability and durability and the
                         node (name, namespace) of each; and the node names
                         and namespaces (`ros2 node list`), waiting until
                         NAME's node /NAME/usim is among them
  reset NAME SECS        drive NAME (DESIRED_THRUST 100) until it is 3 m from
                         its first odometry, call the std_srvs/Trigger service
                         /NAME/usim/reset with rclpy's client, stop the thrust,
                         and print one JSON line: the reply, the position
                         before the call and the odometry after the reply
                         (x, y, heading, stamp)
"""
import json
import math
import sys
import time

import rclpy
from rclpy.qos import qos_profile_sensor_data
from std_msgs.msg import Float64, String


def secs(stamp):
    return stamp.sec + stamp.nanosec * 1e-9


def heading_of(q):
    """usim heading (degrees clockwise from north) of an ENU yaw quaternion."""
    yaw = math.degrees(2.0 * math.atan2(q.z, q.w))
    return (90.0 - yaw) % 360.0


def follow_main(name, n, secs_limit):
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import NavSatFix

    node = rclpy.create_node("usim_follow")
    thrust = node.create_publisher(Float64, f"/{name}/desired_thrust", 10)
    rudder = node.create_publisher(Float64, f"/{name}/desired_rudder", 10)
    ack = node.create_publisher(Float64, f"/{name}/usim/ack", 10)
    seen = []
    t0 = [None]

    def odom(m):
        t = secs(m.header.stamp)
        p, q = m.pose.pose.position, m.pose.pose.orientation
        print(json.dumps({
            "kind": "odom", "stamp": [m.header.stamp.sec, m.header.stamp.nanosec],
            "x": p.x, "y": p.y, "z": p.z, "q": [q.x, q.y, q.z, q.w],
            "frame": m.header.frame_id, "child": m.child_frame_id,
        }), flush=True)
        if seen and t <= seen[-1]:
            ack.publish(Float64(data=t))
            return
        if t0[0] is None:
            t0[0] = t
        seen.append(t)
        k = len(seen) - 1
        if k == 0:
            thrust.publish(Float64(data=50.0))
            rudder.publish(Float64(data=20.0))
        elif k == 19:
            rudder.publish(Float64(data=-10.0))
        ack.publish(Float64(data=t))

    def fix(m):
        print(json.dumps({
            "kind": "fix", "stamp": [m.header.stamp.sec, m.header.stamp.nanosec],
            "lat": m.latitude, "lon": m.longitude,
        }), flush=True)

    def nav_x(m):
        print(json.dumps({"kind": "nav_x", "data": m.data}), flush=True)

    node.create_subscription(Odometry, f"/{name}/odom", odom, 10)
    node.create_subscription(NavSatFix, f"/{name}/fix", fix, qos_profile_sensor_data)
    node.create_subscription(Float64, f"/{name}/nav_x", nav_x, 10)
    t_start = time.time()
    while len(seen) < n + 1 and time.time() - t_start < secs_limit:
        rclpy.spin_once(node, timeout_sec=0.05)
    print(json.dumps({"kind": "done", "stamps": len(seen)}), flush=True)


def heading_main(name, target, secs_limit):
    from nav_msgs.msg import Odometry
    from rclpy.parameter import Parameter

    node = rclpy.create_node(
        "usim_heading",
        parameter_overrides=[Parameter("use_sim_time", Parameter.Type.BOOL, True)],
    )
    thrust = node.create_publisher(Float64, f"/{name}/desired_thrust", 10)
    rudder = node.create_publisher(Float64, f"/{name}/desired_rudder", 10)
    state = {"heading": None, "calls": 0, "held_since": None, "done": False,
             "first_clock": None}

    def odom(m):
        state["heading"] = heading_of(m.pose.pose.orientation)

    def control():
        now = node.get_clock().now().nanoseconds * 1e-9
        if state["first_clock"] is None:
            state["first_clock"] = now
        state["calls"] += 1
        h = state["heading"]
        if h is None:
            return
        err = (target - h + 540.0) % 360.0 - 180.0
        thrust.publish(Float64(data=60.0))
        rudder.publish(Float64(data=max(-40.0, min(40.0, 2.0 * err))))
        if abs(err) < 3.0:
            if state["held_since"] is None:
                state["held_since"] = now
            elif now - state["held_since"] >= 3.0:
                state["done"] = True
        else:
            state["held_since"] = None

    node.create_subscription(Odometry, f"/{name}/odom", odom, 10)
    node.create_timer(0.1, control)
    t0 = time.time()
    while not state["done"] and time.time() - t0 < secs_limit:
        rclpy.spin_once(node, timeout_sec=0.05)
    now = node.get_clock().now().nanoseconds * 1e-9
    print(json.dumps({
        "kind": "heading", "clock": now, "first_clock": state["first_clock"],
        "wall": time.time(), "heading": state["heading"], "calls": state["calls"],
        "done": state["done"], "use_sim_time": node.get_parameter("use_sim_time").value,
    }), flush=True)


def step_main(name, secs_limit):
    from nav_msgs.msg import Odometry

    node = rclpy.create_node("usim_step")
    step = node.create_publisher(Float64, "/usim/step", 10)
    stamps = []

    def odom(m):
        stamps.append(secs(m.header.stamp))

    sub = node.create_subscription(Odometry, f"/{name}/odom", odom, 10)
    t0 = time.time()

    def spin_for(s):
        t = time.time()
        while time.time() - t < s:
            rclpy.spin_once(node, timeout_sec=0.02)

    while (step.get_subscription_count() < 1 or sub.get_publisher_count() < 1) \
            and time.time() - t0 < secs_limit:
        spin_for(0.05)
    spin_for(0.5)
    before = len(stamps)
    step.publish(Float64(data=7.0))
    step.publish(Float64(data=1.5))  # refused: not a whole number
    spin_for(2.0)
    after7 = len(stamps)
    step.publish(Float64(data=3.0))
    spin_for(2.0)
    print(json.dumps({"kind": "step", "before": before, "after7": after7,
                      "stamps": stamps}), flush=True)


def errors_main(name, secs_limit):
    node = rclpy.create_node("usim_errors")
    got = []

    def cb(m):
        got.append(m.data)
        print(f"error {m.data}", flush=True)

    node.create_subscription(String, f"/{name}/usim/errors", cb, 10)
    t0 = time.time()
    while time.time() - t0 < secs_limit:
        rclpy.spin_once(node, timeout_sec=0.05)
    print(f"errors {len(got)}", flush=True)


def graph_main(name, secs_limit):
    node = rclpy.create_node("usim_graph")
    t0 = time.time()
    while not node.get_publishers_info_by_topic(f"/{name}/odom") \
            and time.time() - t0 < secs_limit:
        rclpy.spin_once(node, timeout_sec=0.1)
    while ("usim", f"/{name}") not in node.get_node_names_and_namespaces() \
            and time.time() - t0 < secs_limit:
        rclpy.spin_once(node, timeout_sec=0.1)
    t1 = time.time()
    while time.time() - t1 < 2.0:
        rclpy.spin_once(node, timeout_sec=0.1)

    def info(ends):
        return [{"reliability": e.qos_profile.reliability.name,
                 "durability": e.qos_profile.durability.name,
                 "type": e.topic_type,
                 "node": [e.node_name, e.node_namespace]} for e in ends]

    topics = {}
    for topic, types in node.get_topic_names_and_types():
        topics[topic] = {
            "types": types,
            "publishers": info(node.get_publishers_info_by_topic(topic)),
            "subscribers": info(node.get_subscriptions_info_by_topic(topic)),
        }
    print(json.dumps({"kind": "graph", "topics": topics,
                      "nodes": node.get_node_names_and_namespaces()}), flush=True)


def reset_main(name, secs_limit):
    from nav_msgs.msg import Odometry
    from std_srvs.srv import Trigger

    node = rclpy.create_node("usim_reset")
    thrust = node.create_publisher(Float64, f"/{name}/desired_thrust", 10)
    client = node.create_client(Trigger, f"/{name}/usim/reset")
    state = {"first": None, "last": None, "after": [], "replied": False}

    def odom(m):
        p, q = m.pose.pose.position, m.pose.pose.orientation
        state["last"] = [p.x, p.y]
        if state["first"] is None:
            state["first"] = [p.x, p.y]
        if state["replied"]:
            state["after"].append([p.x, p.y, heading_of(q), secs(m.header.stamp)])

    node.create_subscription(Odometry, f"/{name}/odom", odom, 10)
    t0 = time.time()
    if not client.wait_for_service(timeout_sec=secs_limit):
        sys.exit("the reset service never appeared")

    def moved():
        f, l = state["first"], state["last"]
        return f is not None and math.hypot(l[0] - f[0], l[1] - f[1]) > 3.0

    while not moved() and time.time() - t0 < secs_limit:
        thrust.publish(Float64(data=100.0))
        rclpy.spin_once(node, timeout_sec=0.05)
    before = state["last"]
    for _ in range(3):
        thrust.publish(Float64(data=0.0))
    future = client.call_async(Trigger.Request())
    rclpy.spin_until_future_complete(node, future, timeout_sec=max(1.0, secs_limit - (time.time() - t0)))
    reply = future.result()
    state["replied"] = True
    t1 = time.time()
    while time.time() - t1 < 2.0:
        rclpy.spin_once(node, timeout_sec=0.05)
    print(json.dumps({
        "kind": "reset", "before": before, "after": state["after"],
        "reply": None if reply is None else {"success": reply.success, "message": reply.message},
    }), flush=True)


def main():
    rclpy.init()
    mode = sys.argv[1]
    if mode == "follow":
        follow_main(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif mode == "heading":
        heading_main(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    elif mode == "step":
        step_main(sys.argv[2], float(sys.argv[3]))
    elif mode == "errors":
        errors_main(sys.argv[2], float(sys.argv[3]))
    elif mode == "graph":
        graph_main(sys.argv[2], float(sys.argv[3]))
    elif mode == "reset":
        reset_main(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(f"unknown mode {mode}")
    rclpy.shutdown()


if __name__ == "__main__":
    main()
