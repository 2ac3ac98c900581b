#!/usr/bin/env python3
"""MOOS figures of usim (docs/moos.md), with real pymoos clients.

  round-trip  DESIRED_RUDDER posted by pymoos -> first NAV_HEADING showing
              it, through `usim moosdb`, usim moos at AppTick 20: p50/p99.
  throughput  `usim moosdb` with N clients (default 50) each registered for
              20 variables, one writer posting them: deliveries per second
              counted by the clients, and moosdb RSS per client.
  fleet       one `usim moosdb` and N `usim moos` vehicles (default 100,
              distinct prefixes and names) at AppTick 20: CPU and RSS per
              vehicle.

Usage: scripts/bench_moos.py [--usim target/release/usim] [--rounds 3]
       [--clients 50] [--vehicles 100] [round-trip|throughput|fleet ...]
Prints one line per round and the median with the range. Quote the load
average printed at the start and the end: the figures depend on it.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import pymoos


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pss_kib(pid):
    """Proportional set size: shared pages (the binary) split among sharers."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(parts[11]) + int(parts[12])) / tick


def moosdb(usim, port, log):
    p = subprocess.Popen([usim, "moosdb", f"--moos_port={port}"], stdout=log, stderr=log)
    # Connecting to probe would make the DB log a failed handshake; poll instead.
    time.sleep(0.5)
    return p


def mission(d, name, port, block):
    path = os.path.join(d, f"{name}.moos")
    with open(path, "w") as f:
        f.write(f"ServerHost = localhost\nServerPort = {port}\nCommunity = {name}\nMOOSTimeWarp = 1\n"
                f"ProcessConfig = uSimMarine\n{{\n{block}}}\n")
    return path


def client(name, port, regs=()):
    c = pymoos.comms()
    c.set_quiet(True)

    def on_connect():
        for r in regs:
            c.register(r, 0)
        return True

    c.set_on_connect_callback(on_connect)
    c.run("localhost", port, name)
    if not c.wait_until_connected(10000):
        sys.exit(f"{name}: not connected")
    return c


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def round_trip(a, d):
    port = free_port()
    log = open(os.path.join(d, "rt.log"), "w")
    db = moosdb(a.usim, port, log)
    m = mission(d, "rt", port, "  AppTick = 20\n  start_speed = 2\n  start_heading = 0\n  prefix = NAV\n  turn_rate = 70\n  thrust_map = 0:0, 100:5\n")
    app = subprocess.Popen([a.usim, "moos", m], stdout=log, stderr=log)
    c = client("rt_probe", port, ["NAV_HEADING"])
    c.notify("DESIRED_THRUST", 40.0, -1)
    time.sleep(1.0)
    lat = []
    rudder = 50.0
    prev = None
    for _ in range(a.samples):
        c.fetch()
        rudder = -rudder
        t0 = time.time()
        c.notify("DESIRED_RUDDER", rudder, -1)
        got = None
        while time.time() - t0 < 2.0 and got is None:
            for msg in c.fetch():
                h = msg.double()
                if prev is not None:
                    dh = (h - prev + 540.0) % 360.0 - 180.0
                    if dh != 0 and (dh > 0) == (rudder > 0) and msg.time() >= t0:
                        got = time.time() - t0
                prev = h
            time.sleep(0.0005)
        if got is not None:
            lat.append(got * 1e3)
        time.sleep(0.2)
    c.close(True)
    app.terminate()
    db.terminate()
    app.wait()
    db.wait()
    return {"p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99), "n": len(lat)}


def throughput(a, d):
    port = free_port()
    log = open(os.path.join(d, "tp.log"), "w")
    db = moosdb(a.usim, port, log)
    base = rss_kib(db.pid)
    vars_ = [f"VAR_{i}" for i in range(20)]
    subs = [client(f"sub{i}", port, vars_) for i in range(a.clients)]
    time.sleep(1.0)
    with_clients = rss_kib(db.pid)
    w = client("writer", port)
    for c in subs:
        c.fetch()
    n = 0
    t0 = time.time()
    k = 0
    while time.time() - t0 < 5.0:
        for v in vars_:
            w.notify(v, float(k), -1)
        k += 1
        for c in subs:
            n += len(c.fetch())
        time.sleep(0.001)
    dt = time.time() - t0
    time.sleep(0.5)
    for c in subs:
        n += len(c.fetch())
    peak = rss_kib(db.pid)
    for c in subs + [w]:
        c.close(True)
    db.terminate()
    db.wait()
    return {"delivered_per_s": n / dt, "posted_per_s": k * 20 / dt,
            "rss_per_client_kib": (with_clients - base) / a.clients, "rss_peak_kib": peak}


def fleet(a, d):
    port = free_port()
    log = open(os.path.join(d, "fleet.log"), "w")
    db = moosdb(a.usim, port, log)
    procs = []
    for i in range(a.vehicles):
        m = mission(d, f"v{i}", port, f"  AppTick = 20\n  start_speed = 1\n  prefix = V{i}\n  thrust_map = 0:0, 100:5\n")
        procs.append(subprocess.Popen([a.usim, "moos", m, f"--alias=usim_v{i}"], stdout=log, stderr=log))
    time.sleep(5.0)
    c0 = [cpu_s(p.pid) for p in procs]
    d0 = cpu_s(db.pid)
    t0 = time.time()
    time.sleep(10.0)
    dt = time.time() - t0
    cpu = [(cpu_s(p.pid) - c) / dt for p, c in zip(procs, c0)]
    db_cpu = (cpu_s(db.pid) - d0) / dt
    rss = [rss_kib(p.pid) for p in procs]
    pss = [pss_kib(p.pid) for p in procs]
    db_rss = rss_kib(db.pid)
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()
    db.terminate()
    db.wait()
    return {"cpu_per_vehicle_pct": 100 * statistics.mean(cpu), "rss_per_vehicle_kib": statistics.mean(rss),
            "pss_per_vehicle_kib": statistics.mean(pss),
            "moosdb_cpu_pct": 100 * db_cpu, "moosdb_rss_kib": db_rss}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--usim", default="target/release/usim")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--vehicles", type=int, default=100)
    ap.add_argument("which", nargs="*", default=["round-trip", "throughput", "fleet"])
    a = ap.parse_args()
    print("load average at start:", os.getloadavg())
    fns = {"round-trip": round_trip, "throughput": throughput, "fleet": fleet}
    for name in a.which:
        rounds = []
        for r in range(a.rounds):
            with tempfile.TemporaryDirectory() as d:
                res = fns[name](a, d)
            print(f"{name} round {r + 1}: {res}", flush=True)
            rounds.append(res)
        for k in rounds[0]:
            xs = [x[k] for x in rounds]
            print(f"{name} {k}: median {statistics.median(xs):.4g} (range {min(xs):.4g}..{max(xs):.4g})")
    print("load average at end:", os.getloadavg())


if __name__ == "__main__":
    main()
