"""The MOOS side of the bridge test: a pymoos client in the community posts
NAV_X (double), DEPLOY (string) and a MOOS NODE_REPORT for vehicle
`alpha`, re-posting the report every 0.5 s, and records every DEPLOY and
SPEED_REQ mail for DURATION seconds, to a JSON file.

Usage: moos_bridge_peer.py PORT OUT.json DURATION
"""
import json
import sys
import time

import pymoos

PORT, OUT, DURATION = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
c = pymoos.comms()
c.set_quiet(True)


def on_connect():
    c.register("DEPLOY", 0)
    c.register("SPEED_REQ", 0)
    return True


c.set_on_connect_callback(on_connect)
c.run("localhost", PORT, "peer")
if not c.wait_until_connected(10000):
    sys.exit("not connected")
time.sleep(0.5)
c.notify("NAV_X", 1.5, -1)
c.notify("DEPLOY", "false", -1)
mail = []
end = time.time() + DURATION
last = 0.0
while time.time() < end:
    if time.time() - last > 0.5:
        last = time.time()
        c.notify("NODE_REPORT", "NAME=alpha,X=12.5,Y=-30,SPD=1.2,HDG=90,DEP=0,TYPE=kayak,TIME=%.2f" % pymoos.time(), -1)
    for m in c.fetch():
        mail.append({"key": m.key(), "double": m.is_double(),
                     "value": m.double() if m.is_double() else m.string(), "source": m.source()})
    time.sleep(0.05)
c.close(True)
json.dump(mail, open(OUT, "w"))
print("mail", len(mail))
