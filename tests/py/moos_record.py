"""A pymoos client (the C++ MOOS client library) that records mail and
posts values at chosen times: the MOOS peer of tests/moos_antler.rs and
tests/moos_appcast.rs.

Usage: moos_record.py PORT OUT.json WARP SECONDS [options]
  --name NAME          client name (default: recorder)
  --register PATTERN   a variable glob to register for (repeat; default *)
  --post T:VAR=VALUE   post VALUE (a double if it parses, else a string) at
                       T real seconds after the first mail of --wait-for
                       (repeat; T may repeat)
  --wait-for VAR       start the clock when VAR first arrives (default: at
                       connection); fail if it never comes within 30 s

Writes {"mail": [{key, double, value, time, source, community, recv}],
"posts": [{var, value, time, recv}]} where `time` is
the message's MOOS time and `recv` the real time it was fetched.
"""
import argparse
import json
import sys
import time

import pymoos

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("out")
ap.add_argument("warp", type=float)
ap.add_argument("seconds", type=float)
ap.add_argument("--name", default="recorder")
ap.add_argument("--register", action="append", default=[])
ap.add_argument("--post", action="append", default=[])
ap.add_argument("--wait-for", default=None)
a = ap.parse_args()

pymoos.set_moos_timewarp(a.warp)
c = pymoos.comms()
c.set_quiet(True)
patterns = a.register or ["*"]


def on_connect():
    for p in patterns:
        c.register(p, "*", 0)
    return True


c.set_on_connect_callback(on_connect)
c.run("localhost", a.port, a.name)
if not c.wait_until_connected(20000):
    sys.exit("not connected")
mail, posts = [], []


def drain():
    now = time.time()
    for m in c.fetch():
        mail.append({
            "key": m.key(),
            "double": m.is_double(),
            "value": m.double() if m.is_double() else m.string(),
            "time": m.time(),
            "source": m.source(),
            "community": m.community(),
            "recv": now,
        })


t0 = time.time()
if a.wait_for:
    while not any(m["key"] == a.wait_for for m in mail):
        if time.time() - t0 > 30:
            json.dump({"mail": mail, "posts": posts}, open(a.out, "w"))
            sys.exit("no %s within 30 s" % a.wait_for)
        drain()
        time.sleep(0.02)
start = time.time()
plan = []
for p in a.post:
    t, rest = p.split(":", 1)
    var, val = rest.split("=", 1)
    plan.append((float(t), var, val))
plan.sort(key=lambda x: x[0])
while time.time() - start < a.seconds:
    now = time.time() - start
    while plan and plan[0][0] <= now:
        _, var, val = plan.pop(0)
        try:
            v = float(val)
        except ValueError:
            v = val
        mt = pymoos.time()
        c.notify(var, v, mt)
        posts.append({"var": var, "value": v, "time": mt, "recv": time.time()})
    drain()
    time.sleep(0.01)
drain()
c.close(True)
json.dump({"mail": mail, "posts": posts}, open(a.out, "w"))
print("mail", len(mail), "posts", len(posts))
