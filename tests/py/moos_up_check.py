"""Count each community's NAV_X under MOOSTimeWarp with pymoos clients.

Usage: moos_up_check.py WARP SECONDS PORT... ; prints one JSON object:
{port: {"count": n, "first": t, "last": t, "max_clock_diff": s}}
(times in MOOS seconds; clock diff = |message time - our MOOS time|).
"""
import json
import sys
import time

import pymoos

WARP, SECONDS = float(sys.argv[1]), float(sys.argv[2])
PORTS = [int(p) for p in sys.argv[3:]]
pymoos.set_moos_timewarp(WARP)
clients = {}
for p in PORTS:
    c = pymoos.comms()
    c.set_quiet(True)
    c.set_on_connect_callback(lambda c=c: c.register("NAV_X", 0))
    c.run("localhost", p, "counter%d" % p)
    clients[p] = c
for p, c in clients.items():
    if not c.wait_until_connected(10000):
        sys.exit("not connected to %d" % p)
res = {p: {"count": 0, "first": None, "last": None, "max_clock_diff": 0.0} for p in PORTS}
time.sleep(0.5)
for c in clients.values():
    c.fetch()
end = time.time() + SECONDS
while time.time() < end:
    for p, c in clients.items():
        now = pymoos.time()
        for m in c.fetch():
            if m.key() != "NAV_X":
                continue
            r = res[p]
            r["count"] += 1
            r["first"] = m.time() if r["first"] is None else r["first"]
            r["last"] = m.time()
            r["max_clock_diff"] = max(r["max_clock_diff"], abs(m.time() - now))
    time.sleep(0.02)
for c in clients.values():
    c.close(True)
print(json.dumps(res))
