"""A vehicle that lives only in a MOOS community (tests/moos_bridge.rs): a
pymoos client posts what uSimMarine and pNodeReporter would for a kayak
going straight at SPEED m/s on HEADING degrees: NAV_X, NAV_Y, NAV_SPEED,
NAV_HEADING, NAV_DEPTH, NAV_LAT, NAV_LONG (doubles) and NODE_REPORT_LOCAL
(pNodeReporter's string) every 0.25 s for DURATION seconds, and writes each
report it posted (t, x, y, lat, lon) as JSON lines to OUT.

Usage: moos_vehicle_peer.py PORT OUT.jsonl DURATION SPEED HEADING
"""
import json
import math
import sys
import time

import pymoos

PORT, OUT, DURATION = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
SPEED, HEADING = float(sys.argv[4]), float(sys.argv[5])
LAT0, LON0 = 43.825300, -70.330400
c = pymoos.comms()
c.set_quiet(True)
c.run("localhost", PORT, "pNodeReporter")
if not c.wait_until_connected(10000):
    sys.exit("not connected")
time.sleep(0.3)
out = open(OUT, "w")
t0 = pymoos.time()
end = time.time() + DURATION
while time.time() < end:
    t = pymoos.time()
    d = SPEED * (t - t0)
    x = d * math.sin(math.radians(HEADING))
    y = d * math.cos(math.radians(HEADING))
    lat = LAT0 + y / 111320.0
    lon = LON0 + x / (111320.0 * math.cos(math.radians(LAT0)))
    for var, v in [("NAV_X", x), ("NAV_Y", y), ("NAV_SPEED", SPEED), ("NAV_HEADING", HEADING),
                   ("NAV_DEPTH", 0.0), ("NAV_LAT", lat), ("NAV_LONG", lon)]:
        c.notify(var, v, t)
    c.notify("NODE_REPORT_LOCAL",
             "NAME=alpha,X=%.2f,Y=%.2f,SPD=%.2f,HDG=%.2f,DEP=0,LAT=%.8f,LON=%.8f,TIME=%.2f,TYPE=kayak,LENGTH=4"
             % (x, y, SPEED, HEADING, lat, lon, t), t)
    out.write(json.dumps({"t": round(t, 2), "x": x, "y": y, "lat": lat, "lon": lon}) + "\n")
    out.flush()
    time.sleep(0.25)
c.close(True)
print("posted until", pymoos.time())
