#!/usr/bin/env bash
# `usim view` with stalled WebSocket clients: N clients complete the
# WebSocket handshake and then never read, while V made-up vehicles (long
# names: frames of tens of KB) report at 5 Hz through the embedded broker.
# (NAME_LEN, default 16, characters per name: longer names, larger frames).
# Samples the view's RSS every 0.5 s for DURATION seconds and reports the
# baseline, median and peak RSS, and the server's counters (pages dropped
# for not keeping up, frames skipped). Target (issue 20): peak < 100 MB
# with 1,000 stalled clients.
#
#   scripts/bench_view_stalled.sh [N=1000] [DURATION=30] [V=300]
#
# Needs Python 3 with paho-mqtt (scripts/py_env.sh; USIM_PYTHON chooses
# the interpreter). Uses target/release/usim if built (else builds it;
# BIN=path overrides). 127.0.0.1 and free ports only; everything it starts
# is stopped on exit.
set -euo pipefail
n=${1:-1000}
duration=${2:-30}
vehicles=${3:-300}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
py=${USIM_PYTHON:-python3}
if [[ -n ${BIN:-} ]]; then
    usim=$BIN
else
    (cd "$repo" && cargo build --release --quiet --bin usim)
    usim=$target/release/usim
fi
"$py" -c 'import paho.mqtt.client' 2>/dev/null || { echo "paho-mqtt missing for $py (scripts/py_env.sh)" >&2; exit 2; }

work=$(mktemp -d -t usim-bench-stalled.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 0.5
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

port=$(free_port)
"$usim" broker --bind "127.0.0.1:$port" >"$work/broker.log" 2>&1 &
pids+=($!)
"$usim" view --broker "mqtt://127.0.0.1:$port" --topic-root bench --bind 127.0.0.1:0 \
    --max-connections $((n + 64)) >"$work/view.out" 2>"$work/view.log" &
vpid=$!
pids+=($vpid)
for _ in $(seq 200); do grep -q 'open http' "$work/view.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's|^usim view: open \(http://.*\)$|\1|p' "$work/view.out")
[[ -n $url ]] || { echo "usim view printed no URL:" >&2; cat "$work/view.log" >&2; exit 1; }
echo "usim view at $url; $n stalled clients, $vehicles vehicles, ${duration}s (load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs)" >&2

"$py" - "$url" "$port" "$vpid" "$n" "$duration" "$vehicles" "${NAME_LEN:-16}" <<'PY'
import json, resource, socket, statistics, sys, time, urllib.request
import paho.mqtt.client as mqtt

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, int(sys.argv[4]) + 256)), hard))

url, port, pid, n, duration, nveh = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
hostport = url.split("//", 1)[1].split("/", 1)[0]
token = url.split("token=", 1)[1] if "token=" in url else ""
host, hp = hostport.split(":")

def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

def status():
    with urllib.request.urlopen(f"http://{hostport}/status.json?token={token}", timeout=10) as r:
        return json.load(r)

pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-stalled-{pid}")
pub.connect("127.0.0.1", port)
pub.loop_start()
names = [("v" * max(int(sys.argv[7]) - 4, 0)) + f"{i:04d}" for i in range(nveh)]
def publish(t):
    for i, name in enumerate(names):
        pub.publish(f"bench/{name}/NODE_REPORT", json.dumps({"k": 1, "t": t, "x": i, "y": t, "speed": 1, "heading": 0, "depth": 0,
                                                            "lat": 43.8, "lon": -70.3, "thrust": 50, "rudder": 0, "platform_type": "kayak", "platform_length": 4}))

publish(0.0)
time.sleep(1.0)
base = rss_kib()
socks = []
for i in range(n):
    s = socket.create_connection((host, int(hp)))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall((f"GET /ws?token={token} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    socks.append(s)
samples = []
t0 = time.time()
while time.time() - t0 < duration:
    publish(time.time() - t0)
    samples.append(rss_kib())
    time.sleep(0.5)
st = status()
print(f"stalled clients {n}, vehicles {nveh}, names of {len(names[0]) if names else 0} characters")
print(f"RSS baseline {base / 1024:.1f} MiB, median {statistics.median(samples) / 1024:.1f} MiB, peak {max(samples) / 1024:.1f} MiB over {len(samples)} samples")
print("RSS every 2 s, MiB: " + " ".join(f"{x / 1024:.0f}" for x in samples[::4]))
print(f"server: clients {st['clients']}, dropped {st['dropped_clients']}, skipped frames {st['skipped_frames']}, rejected connections {st['rejected_connections']}")
for s in socks:
    s.close()
pub.loop_stop()
PY
