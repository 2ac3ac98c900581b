#!/usr/bin/env python3
"""Figures of `usim ros2` against real rclpy nodes (docs/ros2.md, "Figures").

  ros2_figures.py lockstep [N=100] [STEPS=300] [BUF=0]
      N vehicles in one `usim ros2 --lockstep ack` process, one rclpy
      controller per vehicle (heading hold: reads the odometry, publishes
      DESIRED_RUDDER, acknowledges the stamp), all in one rclpy process:
      simulated seconds per wall second, messages lost (odometry stamps
      a controller never received), CPU seconds of usim and of the rclpy
      process. BUF > 0 gives the rclpy process's Fast DDS sockets BUF-byte
      buffers (an XML profile; 0: Fast DDS's default, the OS default of
      about 208 KiB, which a burst of 100 odometry samples overflows).
  ros2_figures.py latency [SECS=30]
      one vehicle live at 10 Hz: from publishing USM_RESET x=K to the first
      odometry with x = K, p50 / p99 / max (ms and ticks).
  ros2_figures.py load [N=100] [SECS=20]
      N vehicles live at 10 Hz with no subscriber: CPU (user+system) and
      resident memory of the usim process, per vehicle.

Run with the ROS 2 venv's Python (scripts/ros2_env.sh DIR; DIR/bin/python),
as root: it re-runs itself in a loopback-only network namespace (unshare
-n). USIM (default target/release/usim) is the binary.
"""
import json
import math
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
USIM = os.environ.get("USIM", os.path.join(REPO, "target/release/usim"))
KAYAK = os.path.join(REPO, "configs/kayak.toml")


def netns():
    if os.environ.get("USIM_FIG_NETNS") == "1":
        return
    env = dict(os.environ, USIM_FIG_NETNS="1")
    cmd = ["unshare", "-n", "sh", "-c",
           "ip link set lo up && ip link set lo multicast on && "
           "ip route add 224.0.0.0/4 dev lo && exec \"$0\" \"$@\"",
           sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
    os.execvpe("unshare", cmd, env)


def start_usim(args):
    env = dict(os.environ, ROS_DOMAIN_ID="0")
    return subprocess.Popen([USIM, "ros2"] + args, env=env,
                            stdout=subprocess.DEVNULL, stderr=open(os.environ.get("USIM_FIG_LOG", os.devnull), "w"))


def proc_cpu_rss(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    cpu = (int(parts[11]) + int(parts[12])) / tick
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return cpu, rss


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(math.ceil(q * len(xs))) - 1)]


FASTDDS_XML = """<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com"><profiles>
  <participant profile_name="usim_fig" is_default_profile="true"><rtps>
    <sendSocketBufferSize>{0}</sendSocketBufferSize>
    <listenSocketBufferSize>{0}</listenSocketBufferSize>
  </rtps></participant>
</profiles></dds>
"""


def lockstep(n, steps, buf):
    if buf > 0:
        import tempfile
        f = tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False)
        f.write(FASTDDS_XML.format(buf))
        f.close()
        os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] = f.name
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from nav_msgs.msg import Odometry
    from std_msgs.msg import Float64

    names = [f"kayak_{i + 1:04d}" for i in range(n)]
    usim = start_usim(["--spawn", str(n), "--config", KAYAK, "--lockstep", "ack",
                       "--no-postings", "--start-time", "0", "--claim-window", "0",
                       "--steps", str(steps), "--duration", "600"])
    rclpy.init()
    node = rclpy.create_node("usim_fig_lockstep")
    # One executor for the whole run: rclpy.spin_once(node) adds and
    # removes the node on every call, which rebuilds the wait set of all
    # 300 endpoints for each callback.
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    got = {v: set() for v in names}
    first = [None]
    last = [None]

    def controller(v, rudder, ack):
        def cb(m):
            t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
            q = m.pose.pose.orientation
            heading = (90.0 - math.degrees(2.0 * math.atan2(q.z, q.w))) % 360.0
            err = (45.0 - heading + 540.0) % 360.0 - 180.0
            if t not in got[v]:
                got[v].add(t)
                if first[0] is None and t > 0:
                    # Iteration 1: every controller has acknowledged 0
                    # (discovery is over).
                    first[0] = time.time()
                last[0] = time.time()
                rudder.publish(Float64(data=max(-30.0, min(30.0, err))))
            ack.publish(Float64(data=t))
        return cb

    for v in names:
        rudder = node.create_publisher(Float64, f"/{v}/desired_rudder", 10)
        ack = node.create_publisher(Float64, f"/{v}/usim/ack", 10)
        node.create_subscription(Odometry, f"/{v}/odom", controller(v, rudder, ack), 10)
    t0 = time.time()
    while usim.poll() is None and time.time() - t0 < 600:
        ex.spin_once(timeout_sec=0.05)
        if all(len(s) >= steps + 1 for s in got.values()):
            break
    usim.wait(timeout=30)
    own = resource.getrusage(resource.RUSAGE_SELF)
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = (last[0] or 0) - (first[0] or 0)
    received = sum(min(len(s), steps + 1) for s in got.values())
    sim = (steps - 1) * 0.1
    print(json.dumps({
        "figure": "lockstep", "vehicles": n, "steps": steps, "fastdds_buffer": buf,
        "sim_s": round(sim, 3),
        "wall_s": round(wall, 3), "sim_per_wall": round(sim / wall, 2) if wall > 0 else None,
        "odometry_expected": n * (steps + 1), "odometry_lost": n * (steps + 1) - received,
        "usim_cpu_s": round(child.ru_utime + child.ru_stime, 2),
        "rclpy_cpu_s": round(own.ru_utime + own.ru_stime, 2),
        "load": os.getloadavg(),
    }))


def latency(secs):
    import rclpy
    from nav_msgs.msg import Odometry
    from std_msgs.msg import String

    usim = start_usim([KAYAK, "--app-tick", "10", "--claim-window", "0", "--no-postings",
                       "--duration", str(secs + 10)])
    rclpy.init()
    node = rclpy.create_node("usim_fig_latency")
    pub = node.create_publisher(String, "/kayak/usm_reset", 10)
    sent = {}
    lat = []

    def cb(m):
        x = m.pose.pose.position.x
        k = int(round(x))
        if k in sent and abs(x - k) < 1e-9:
            lat.append(time.time() - sent.pop(k))

    node.create_subscription(Odometry, "/kayak/odom", cb, 10)
    t0 = time.time()
    k = 0
    nxt = t0 + 3.0  # discovery first
    while time.time() - t0 < secs:
        now = time.time()
        if now >= nxt:
            k += 1
            sent[k] = time.time()
            pub.publish(String(data=f"x={k},y=0"))
            nxt = now + 0.237  # not a multiple of the tick
        rclpy.spin_once(node, timeout_sec=0.005)
    usim.terminate()
    usim.wait(timeout=10)
    ms = [x * 1e3 for x in lat]
    print(json.dumps({
        "figure": "latency", "samples": len(ms), "lost": k - len(ms),
        "p50_ms": round(quantile(ms, 0.5), 1), "p99_ms": round(quantile(ms, 0.99), 1),
        "max_ms": round(max(ms), 1) if ms else None,
        "p99_ticks": round(quantile(ms, 0.99) / 100.0, 2), "load": os.getloadavg(),
    }))


def load(n, secs):
    usim = start_usim(["--spawn", str(n), "--config", KAYAK, "--app-tick", "10",
                       "--claim-window", "0", "--duration", str(secs + 30)])
    time.sleep(5.0)  # start-up: endpoints
    c0, _ = proc_cpu_rss(usim.pid)
    t0 = time.time()
    time.sleep(secs)
    c1, rss = proc_cpu_rss(usim.pid)
    wall = time.time() - t0
    usim.terminate()
    usim.wait(timeout=10)
    cpu = (c1 - c0) / wall
    print(json.dumps({
        "figure": "load", "vehicles": n, "cpu_percent": round(100 * cpu, 1),
        "cpu_percent_per_vehicle": round(100 * cpu / n, 3), "rss_mib": round(rss / 1024, 1),
        "rss_kib_per_vehicle": round(rss / n, 1), "load": os.getloadavg(),
    }))


def main():
    netns()
    os.environ["FASTDDS_BUILTIN_TRANSPORTS"] = "UDPv4"
    mode = sys.argv[1] if len(sys.argv) > 1 else "lockstep"
    a = sys.argv[2:]
    if mode == "lockstep":
        lockstep(int(a[0]) if a else 100, int(a[1]) if len(a) > 1 else 300,
                 int(a[2]) if len(a) > 2 else 0)
    elif mode == "latency":
        latency(float(a[0]) if a else 30.0)
    elif mode == "load":
        load(int(a[0]) if a else 100, float(a[1]) if len(a) > 1 else 20.0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
