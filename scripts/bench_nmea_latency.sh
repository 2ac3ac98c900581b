#!/usr/bin/env bash
# Latency of `usim nmea`: a NODE_REPORT (and the USM_TIME a vehicle posts
# right after it) published on MQTT → its AIS sentence received on UDP. One report at a time (ping-pong): the
# publisher (paho-mqtt) publishes a report of vehicle `lat` (an AIS target
# reported on every report: --ais-interval 0.001 and t stepping by 1 s) and
# waits for the datagram; N rounds, p50/p90/p99/max in ms.
#
#   scripts/bench_nmea_latency.sh [N=2000]
#
# Uses the embedded broker (`usim broker`) on a free loopback port; needs
# python3 with paho-mqtt (scripts/py_env.sh). Builds target/release/usim if
# missing. Environment: USIM (binary), PYTHON (default: $USIM_PYTHON or python3).
set -euo pipefail
n=${1:-2000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
usim=${USIM:-$repo/target/release/usim}
py=${PYTHON:-${USIM_PYTHON:-python3}}
if [[ ! -x $usim ]]; then
    echo "building $usim ..." >&2
    (cd "$repo" && cargo build --release --quiet)
fi
work=$(mktemp -d -t usim-nmea-lat.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
free() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mport=$(free)
uport=$(free)
"$usim" broker --bind "127.0.0.1:$mport" >"$work/broker.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$mport") 2>/dev/null && break; sleep 0.05; done
"$usim" nmea --vehicles lat --udp "127.0.0.1:$uport" --ais-interval 0.001 --static-interval 1e9 \
    --broker "mqtt://127.0.0.1:$mport" --topic-root bench >"$work/nmea.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q "NMEA/AIS of" "$work/nmea.log" && break; sleep 0.05; done
"$py" - "$mport" "$uport" "$n" <<'PY'
import json, socket, sys, time
import paho.mqtt.client as mqtt
mport, uport, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", uport))
u.settimeout(2.0)
try:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
except AttributeError:
    c = mqtt.Client()
c.connect("127.0.0.1", mport)
c.loop_start()
time.sleep(0.5)
lat = []
lost = 0
for i in range(n + 50):
    rep = {"k": i, "t": float(i), "lat": 42.0 + i * 1e-6, "lon": -71.0, "sog": 2.0, "hog": 90.0, "heading": 90.0, "depth": 0.0}
    t0 = time.perf_counter()
    c.publish("bench/lat/NODE_REPORT", json.dumps(rep), qos=0)
    # As a vehicle does: its clock right after the report (the bridge
    # holds a report for it once it has seen one).
    c.publish("bench/lat/USM_TIME", str(1.7e9 + i), qos=0)
    try:
        while True:
            d = u.recv(2048)
            if d.startswith(b"!AIVDM,1,1"):
                break
    except socket.timeout:
        lost += 1
        continue
    if i >= 50:  # warm-up
        lat.append((time.perf_counter() - t0) * 1e3)
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print(f"{len(lat)} reports, {lost} lost: latency p50 {q(0.5):.3f} ms, p90 {q(0.9):.3f} ms, p99 {q(0.99):.3f} ms, max {lat[-1]:.3f} ms")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
