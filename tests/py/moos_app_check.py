"""A pymoos client in a community with `usim moos`: posts DESIRED_THRUST and
DESIRED_RUDDER (doubles) at chosen times and records every NAV_*/USM_*
mail it gets, with type, value, time and source, to a JSON file.

Usage: moos_app_check.py PORT OUT.json WARP
"""
import json
import sys
import time

import pymoos

PORT, OUT, WARP = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
pymoos.set_moos_timewarp(WARP)
c = pymoos.comms()
c.set_quiet(True)


def on_connect():
    c.register("NAV_*", "*", 0)
    c.register("USM_*", "*", 0)
    return True


c.set_on_connect_callback(on_connect)
c.run("localhost", PORT, "tester")
if not c.wait_until_connected(10000):
    sys.exit("not connected")
mail, posts = [], []


def drain():
    for m in c.fetch():
        mail.append({
            "key": m.key(),
            "double": m.is_double(),
            "value": m.double() if m.is_double() else m.string(),
            "time": m.time(),
            "source": m.source(),
        })


def moos_sleep(s):
    end = time.time() + s / WARP
    while time.time() < end:
        drain()
        time.sleep(0.02)


# Wait for the vehicle's first NAV_X (it is running).
t0 = time.time()
while not any(m["key"] == "NAV_X" for m in mail) and time.time() - t0 < 30:
    drain()
    time.sleep(0.05)
moos_sleep(1.0)
for var, val, pause in [("DESIRED_THRUST", 50.0, 3.0), ("DESIRED_RUDDER", 30.0, 4.0), ("DESIRED_RUDDER", -20.0, 3.0)]:
    now = pymoos.time()
    c.notify(var, val, now)
    posts.append({"var": var, "value": val, "time": now})
    moos_sleep(pause)
drain()
c.close(True)
json.dump({"posts": posts, "mail": mail}, open(OUT, "w"))
print("posts", len(posts), "mail", len(mail))
