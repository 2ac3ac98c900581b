"""A pymoos client in a community with `usim moos` that has obstacles (a
uFldObstacleSim block, docs/obstacles.md): records VIEW_POLYGON,
KNOWN_OBSTACLE, GIVEN_OBSTACLE, OBSTACLE_HIT and NAV_Y, posts
DESIRED_THRUST once the vehicle runs, waits for OBSTACLE_HIT, then a
little longer, and writes the mail (key, value, source) to a JSON file.

Usage: moos_obstacles_check.py PORT OUT.json
"""
import json
import sys
import time

import pymoos

PORT, OUT = int(sys.argv[1]), sys.argv[2]
c = pymoos.comms()
c.set_quiet(True)
KEYS = ["VIEW_POLYGON", "KNOWN_OBSTACLE", "GIVEN_OBSTACLE", "OBSTACLE_HIT", "NAV_Y"]


def on_connect():
    for k in KEYS:
        c.register(k, 0)
    return True


c.set_on_connect_callback(on_connect)
c.run("localhost", PORT, "obstacle_watcher")
if not c.wait_until_connected(10000):
    sys.exit("not connected")
mail = []


def drain():
    for m in c.fetch():
        mail.append({
            "key": m.key(),
            "value": m.double() if m.is_double() else m.string(),
            "source": m.source(),
        })


def wait_for(key, seconds):
    end = time.time() + seconds
    while time.time() < end:
        drain()
        if any(m["key"] == key for m in mail):
            return True
        time.sleep(0.02)
    return False


if not wait_for("NAV_Y", 30):
    sys.exit("no NAV_Y: the vehicle is not running")
# refresh_interval = 1: the obstacles come again within a second or two
wait_for("KNOWN_OBSTACLE", 10)
c.notify("DESIRED_THRUST", 40.0, pymoos.time())
wait_for("OBSTACLE_HIT", 60)
end = time.time() + 1.5
while time.time() < end:
    drain()
    time.sleep(0.02)
with open(OUT, "w") as f:
    json.dump(mail, f)
print("mail:", len(mail))
