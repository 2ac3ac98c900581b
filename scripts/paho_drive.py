#!/usr/bin/env python3
"""Drive a live usim vehicle around a square with paho-mqtt: a tiny helm.

It reads the vehicle's NAV_X / NAV_Y / NAV_HEADING / NAV_SPEED, steers
towards the next corner with a proportional rudder on the heading error, and
posts DESIRED_THRUST / DESIRED_RUDDER a few times a second, looping over the
corners until --laps laps or --duration seconds are done; then it stops the
thrust. Works with paho-mqtt 1.x (Debian's python3-paho-mqtt) and 2.x.

    usim up configs/kayak.toml &            # or: usim broker & usim run ...
    python3 scripts/paho_drive.py kayak --side 60 --laps 2

The publication prefix must be NAV (prefix = "NAV" in the config), or give
--prefix.
"""
import argparse
import json
import math
import sys
import threading
import time
from urllib.parse import urlparse

try:
    import paho.mqtt.client as mqtt
except ImportError:  # pragma: no cover - a message for people
    sys.exit("paho-mqtt is missing: apt-get install python3-paho-mqtt, or pip install paho-mqtt")


def make_client(client_id):
    """A paho client with the current callback API (paho 2.x, VERSION2);
    paho 1.x, which has only the old API, still works."""
    if hasattr(mqtt, "CallbackAPIVersion"):
        return mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
    return mqtt.Client(client_id=client_id)


def connect_failed(reason_code):
    """True if a CONNACK refused the connection (a ReasonCode in paho 2.x,
    an int in 1.x)."""
    if hasattr(reason_code, "is_failure"):
        return reason_code.is_failure
    return reason_code != 0


def angle180(a):
    """Wrap degrees to (-180, 180]."""
    a = math.fmod(a, 360.0)
    if a <= -180.0:
        a += 360.0
    if a > 180.0:
        a -= 360.0
    return a


def bearing(x0, y0, x1, y1):
    """Marine bearing (0 = north, 90 = east) from (x0, y0) to (x1, y1)."""
    return math.degrees(math.atan2(x1 - x0, y1 - y0)) % 360.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vehicle")
    ap.add_argument("--broker", default="mqtt://127.0.0.1:1883")
    ap.add_argument("--topic-root", default="usim")
    ap.add_argument("--prefix", default="NAV")
    ap.add_argument("--side", type=float, default=50.0, help="square side, m")
    ap.add_argument("--thrust", type=float, default=60.0, help="percent")
    ap.add_argument("--gain", type=float, default=1.5, help="rudder per degree of heading error")
    ap.add_argument("--capture", type=float, default=8.0, help="waypoint capture radius, m")
    ap.add_argument("--laps", type=int, default=1)
    ap.add_argument("--duration", type=float, default=300.0, help="give up after, s")
    ap.add_argument("--rate", type=float, default=4.0, help="helm updates per second")
    args = ap.parse_args()

    url = urlparse(args.broker if "://" in args.broker else "mqtt://" + args.broker)
    base = f"{args.topic_root}/{args.vehicle}/"
    nav = {}
    lock = threading.Lock()
    connected = threading.Event()

    def on_connect(client, userdata, flags, reason_code, properties=None):
        if connect_failed(reason_code):
            print(f"broker refused the connection: {reason_code}", file=sys.stderr)
            return
        for var in ("X", "Y", "HEADING", "SPEED"):
            client.subscribe(f"{base}{args.prefix}_{var}")
        client.subscribe(base + "status")
        connected.set()

    def on_message(client, userdata, msg):
        var = msg.topic[len(base):]
        text = msg.payload.decode("utf-8", "replace")
        with lock:
            if var == "status":
                nav["status"] = text
            else:
                try:
                    nav[var] = float(text)
                except ValueError:
                    pass

    client = make_client(f"paho-drive-{args.vehicle}-{int(time.time())}")
    client.on_connect = on_connect
    client.on_message = on_message
    if url.scheme in ("mqtts", "ssl"):
        client.tls_set()
    try:
        client.connect(url.hostname or "127.0.0.1", url.port or 1883, keepalive=10)
    except OSError as e:
        sys.exit(f"cannot reach the broker at {args.broker}: {e} (start one: usim broker)")
    client.loop_start()
    if not connected.wait(5):
        sys.exit(f"no connection to {args.broker} within 5 s")

    def post(var, value):
        client.publish(base + var, str(value), qos=1)

    px, py, ph = (f"{args.prefix}_{v}" for v in ("X", "Y", "HEADING"))
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5:
        with lock:
            if px in nav and py in nav and ph in nav:
                break
        time.sleep(0.1)
    else:
        sys.exit(f"no {px}/{py}/{ph} from {args.vehicle}: is it running with prefix {args.prefix}?")

    with lock:
        x0, y0 = nav[px], nav[py]
    s = args.side
    corners = [(x0, y0 + s), (x0 + s, y0 + s), (x0 + s, y0), (x0, y0)]
    print(f"driving {args.vehicle} around a {s:.0f} m square from ({x0:.1f}, {y0:.1f})")
    lap, i = 0, 0
    period = 1.0 / args.rate
    try:
        while lap < args.laps and time.monotonic() - t0 < args.duration:
            with lock:
                x, y, h = nav[px], nav[py], nav[ph]
                spd = nav.get(f"{args.prefix}_SPEED", float("nan"))
            wx, wy = corners[i]
            dist = math.hypot(wx - x, wy - y)
            if dist < args.capture:
                print(f"  reached corner {i + 1} ({wx:.0f}, {wy:.0f})")
                i = (i + 1) % len(corners)
                if i == 0:
                    lap += 1
                continue
            err = angle180(bearing(x, y, wx, wy) - h)
            rudder = max(-100.0, min(100.0, args.gain * err))
            post("DESIRED_RUDDER", round(rudder, 2))
            post("DESIRED_THRUST", args.thrust)
            print(f"x={x:8.1f} y={y:8.1f} hdg={h:6.1f} spd={spd:4.2f} "
                  f"-> corner {i + 1} dist={dist:6.1f} rudder={rudder:6.1f}")
            time.sleep(period)
    except KeyboardInterrupt:
        pass
    finally:
        post("DESIRED_THRUST", 0)
        post("DESIRED_RUDDER", 0)
        time.sleep(0.3)
        client.loop_stop()
        client.disconnect()
    print(json.dumps({"vehicle": args.vehicle, "laps": lap}))


if __name__ == "__main__":
    main()
