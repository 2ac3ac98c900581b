"""A pymoos client in a community with `usim moos` whose block has usim's
sensor keys: posts DESIRED_THRUST, then USM_SENSOR "gps=off" and later
"gps=on" (strings, as any MOOS app would), and records every NAV_* and
TRUE_* mail with its MOOS time, and the times of its own posts, to a JSON
file (tests/moos_app.rs checks them).

Usage: moos_sensor_check.py PORT OUT.json
"""
import json
import sys
import time

import pymoos

PORT, OUT = int(sys.argv[1]), sys.argv[2]
c = pymoos.comms()
c.set_quiet(True)


def on_connect():
    c.register("NAV_*", "*", 0)
    c.register("TRUE_*", "*", 0)
    return True


c.set_on_connect_callback(on_connect)
c.run("localhost", PORT, "sensor_tester")
if not c.wait_until_connected(10000):
    sys.exit("not connected")
mail, posts = [], {}


def drain():
    for m in c.fetch():
        if m.is_double():
            mail.append({"key": m.key(), "value": m.double(), "time": m.time(), "source": m.source()})


def sleep(s):
    end = time.time() + s
    while time.time() < end:
        drain()
        time.sleep(0.02)


t0 = time.time()
while not any(m["key"] == "NAV_X" for m in mail) and time.time() - t0 < 30:
    drain()
    time.sleep(0.05)
c.notify("DESIRED_THRUST", 60.0, pymoos.time())
sleep(3.0)
posts["off"] = pymoos.time()
c.notify("USM_SENSOR", "gps=off", posts["off"])
sleep(4.0)
posts["on"] = pymoos.time()
c.notify("USM_SENSOR", "gps=on", posts["on"])
sleep(3.0)
c.close(True)
json.dump({"posts": posts, "mail": mail}, open(OUT, "w"))
print("mail", len(mail))
