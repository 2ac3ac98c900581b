#!/usr/bin/env python3
"""Kill `usim record` with SIGKILL again and again and check every file.

    scripts/record_kill.py [--usim target/debug/usim] [--restarts 20]
                           [--every 0.5] [--format mcap|csv] [--keep DIR]

Starts the embedded broker (`usim broker`) and one vehicle reporting 20
times a second, and a paho-mqtt subscriber that notes the vehicle's `k`
as it arrives. Then, `--restarts` times: starts `usim record --vehicles
alpha -o rec-N.mcap`, waits until it says it is recording, lets it run
`--every` seconds, kills it with SIGKILL, notes the last `k` the
subscriber had seen, runs `usim record --recover` on the file and reads it
back (MCAP: with the Python `mcap` reader; CSV: with the csv module).

A file passes when it is readable, its `k` values are consecutive, and
its last `k` (or, if it holds none, the vehicle's `k` when the recorder
said it was ready) is at most one second of reports (20) behind the
vehicle's at the kill. Prints one line per file and a summary; exits 1 if any file
fails. Needs the Python packages mcap and paho-mqtt (scripts/py_env.sh).
`--keep DIR` also copies each killed file, before recovery, into DIR.
"""
import argparse
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

REPORTS_PER_S = 20


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, timeout=20):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_text(path, needle, timeout=30):
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            with open(path, errors="replace") as f:
                if needle in f.read():
                    return True
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    return False


def read_mcap(path):
    from mcap.reader import make_reader

    ks = []
    with open(path, "rb") as f:
        r = make_reader(f)
        for _schema, channel, message in r.iter_messages(log_time_order=False):
            if channel.topic == "/alpha/state":
                ks.append(json.loads(message.data)["k"])
    return ks


def read_csv(path):
    with open(path, newline="") as f:
        return [int(float(row["k"])) for row in csv.DictReader(f)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--usim", default=os.path.join(here, "target/debug/usim"))
    ap.add_argument("--restarts", type=int, default=20)
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("--format", choices=["mcap", "csv"], default="mcap")
    ap.add_argument("--keep", default=None)
    a = ap.parse_args()
    import paho.mqtt.client as mqtt

    tmp = tempfile.mkdtemp(prefix="usim-record-kill-")
    port = free_port()
    procs = []
    try:
        broker = subprocess.Popen(
            [a.usim, "broker", "--bind", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(tmp, "broker.log"), "w"),
        )
        procs.append(broker)
        if not wait_port(port):
            sys.exit("the broker did not start")
        cfg = os.path.join(tmp, "alpha.toml")
        with open(cfg, "w") as f:
            f.write(
                'name = "alpha"\nprefix = "NAV"\n'
                'start_pos = "x=0, y=0, heading=0, speed=0, depth=0"\n'
                f"app_tick = {REPORTS_PER_S}\n[mqtt]\n"
                f'broker = "mqtt://127.0.0.1:{port}"\ntopic_root = "usim"\n'
            )
        vehicle = subprocess.Popen(
            [a.usim, "run", cfg],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(tmp, "alpha.log"), "w"),
        )
        procs.append(vehicle)

        last_k = [None]
        lock = threading.Lock()

        def on_message(_c, _u, msg):
            try:
                k = json.loads(msg.payload)["k"]
            except (ValueError, KeyError, TypeError):
                return
            with lock:
                last_k[0] = k

        try:
            client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"kill-{os.getpid()}")
        except AttributeError:
            client = mqtt.Client(client_id=f"kill-{os.getpid()}")
        client.on_message = on_message
        client.on_connect = lambda c, *_: c.subscribe("usim/alpha/NODE_REPORT")
        client.connect("127.0.0.1", port)
        client.loop_start()
        t0 = time.time()
        while last_k[0] is None:
            if time.time() - t0 > 30:
                sys.exit("the vehicle does not report")
            time.sleep(0.05)

        failures = 0
        losses = []
        for i in range(a.restarts):
            out = os.path.join(tmp, f"rec-{i:02d}.{a.format}")
            log = os.path.join(tmp, f"rec-{i:02d}.log")
            rec = subprocess.Popen(
                [a.usim, "record", "--vehicles", "alpha", "-o", out,
                 "--broker", f"mqtt://127.0.0.1:{port}", "--topic-root", "usim"],
                stdout=subprocess.DEVNULL,
                stderr=open(log, "w"),
            )
            if not wait_text(log, "recording"):
                rec.kill()
                sys.exit(f"recorder {i} did not start: {open(log).read()}")
            with lock:
                k_ready = last_k[0]
            time.sleep(a.every)
            rec.send_signal(signal.SIGKILL)
            rec.wait()
            with lock:
                k_kill = last_k[0]
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                if os.path.exists(out):
                    shutil.copy(out, a.keep)
            exists = os.path.exists(out)
            size = os.path.getsize(out) if exists else 0
            r = subprocess.run([a.usim, "record", "--recover", out], capture_output=True, text=True)
            try:
                ks = read_mcap(out) if a.format == "mcap" else read_csv(out)
                readable = r.returncode == 0
            except Exception as e:  # the point: any failure to read is reported
                ks, readable = [], False
                print(f"  read error: {e!r}")
            consecutive = all(b == a_ + 1 for a_, b in zip(ks, ks[1:]))
            # Nothing recorded: all since the recorder was ready is lost.
            lost = (k_kill - (ks[-1] if ks else k_ready)) / REPORTS_PER_S
            ok = exists and readable and consecutive and lost <= 1.0
            failures += not ok
            losses.append(lost)
            print(
                f"{os.path.basename(out)}: {'ok ' if ok else 'BAD'} killed at {size} bytes, "
                f"{len(ks)} states k {ks[0] if ks else '-'}..{ks[-1] if ks else '-'}, "
                f"vehicle at k {k_kill}: lost {lost:.2f} s; recover: {r.stderr.strip()}"
            )
        client.loop_stop()
        good = a.restarts - failures
        print(
            f"{good} of {a.restarts} killed recordings readable with nothing lost but the last second; "
            f"loss per file: max {max(losses):.2f} s, median {sorted(losses)[len(losses) // 2]:.2f} s "
            f"(SIGKILL {a.every} s after ready, flush every 0.5 s)"
        )
        sys.exit(1 if failures else 0)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
