#!/usr/bin/env bash
# Throughput of `usim nmea`: a fleet of N vehicles (`usim fleet --spawn N`,
# NODE_REPORT only) at APP_TICK Hz on the embedded broker, and the bridge
# sending one AIS position report per NODE_REPORT (--ais-interval below the
# tick: the worst case; the class A rules send 10-30x less) plus the own
# ship's sentences to a UDP counter for DURATION seconds. Prints sentences/s
# received and the bridge's CPU (user+system, % of one core), scaled to
# 1,000 vehicles.
#
#   scripts/bench_nmea.sh [N=1000] [DURATION=30]
#
# Needs python3; builds target/release/usim if missing. Environment: USIM
# (binary), APP_TICK (default 10), PYTHON.
set -euo pipefail
n=${1:-1000}
duration=${2:-30}
app_tick=${APP_TICK:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
usim=${USIM:-$repo/target/release/usim}
py=${PYTHON:-${USIM_PYTHON:-python3}}
if [[ ! -x $usim ]]; then
    echo "building $usim ..." >&2
    (cd "$repo" && cargo build --release --quiet)
fi
work=$(mktemp -d -t usim-nmea.XXXXXX)
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
cat >"$work/boat.toml" <<EOF2
name = "boat"
prefix = "NAV"
start_pos = "x=0, y=0, heading=45, speed=2"
thrust_map = "20:0.5, 50:1.2, 80:1.8, 100:2.0"
lat_origin = 42.358456
lon_origin = -71.087589
app_tick = $app_tick
[mqtt]
broker = "mqtt://127.0.0.1:$mport"
topic_root = "bench"
publish = "report"
EOF2
"$usim" broker --bind "127.0.0.1:$mport" >"$work/broker.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$mport") 2>/dev/null && break; sleep 0.05; done
"$usim" nmea --all --udp "127.0.0.1:$uport" --ais-interval 0.01 --max-rate 1e9 \
    --broker "mqtt://127.0.0.1:$mport" --topic-root bench >"$work/nmea.log" 2>&1 &
npid=$!
pids+=($npid)
for _ in $(seq 200); do grep -q "NMEA/AIS of" "$work/nmea.log" && break; sleep 0.05; done
"$usim" fleet --spawn "$n" --config "$work/boat.toml" --publish report >"$work/fleet.log" 2>&1 &
pids+=($!)
sleep 5 # all running
"$py" - "$uport" "$duration" "$npid" "$n" <<'PY'
import os, socket, sys, time
uport, duration, pid, n = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
u.bind(("127.0.0.1", uport))
u.settimeout(0.2)
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
# The bridge sends only after this socket exists: skip the first second.
t_end = time.time() + 1.0
while time.time() < t_end:
    try: u.recv(4096)
    except socket.timeout: pass
c0, t0, count = cpu(), time.time(), 0
while time.time() - t0 < duration:
    try:
        u.recv(4096)
        count += 1
    except socket.timeout:
        pass
c1, t1 = cpu(), time.time()
rate = count / (t1 - t0)
pct = 100 * (c1 - c0) / (t1 - t0)
print(f"{n} vehicles: {rate:.0f} sentences/s received, bridge CPU {pct:.1f} % of a core ({pct * 1000 / n:.1f} % per 1,000 vehicles)")
PY
grep -o "[0-9]* ticks late" "$work/fleet.log" | tail -1 || true
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
