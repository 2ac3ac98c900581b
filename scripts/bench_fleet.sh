#!/usr/bin/env bash
# Fleet benchmark: N vehicles (`usim run`, one process each) on a private
# mosquitto for DURATION seconds, then a report of
#   * resident memory per process (peak VmHWM) and CPU per process,
#   * tick lateness p50 / p99 / max over all ticks of all vehicles (from
#     each vehicle's `usim run --stats FILE`),
#   * command-to-effect latency: from posting DESIRED_THRUST (a new value
#     each time, to one vehicle at a time, round robin) to the first
#     NODE_REPORT of that vehicle whose `thrust` shows it, p50 / p99 / max,
# and the targets: RSS <= 8 MiB each, lateness p99 <= 10 ms, latency
# p99 <= one tick + 5 ms.
#
#   scripts/bench_fleet.sh [N=100] [DURATION=30]
#
# Needs mosquitto and python3 with paho-mqtt (apt-get install -y mosquitto
# python3-paho-mqtt); builds target/release/usim if it is missing. Uses
# 127.0.0.1 and a free port only; everything it starts is stopped on exit.
# Environment: USIM (binary), APP_TICK (default 10), PROBE_EVERY_MS (default
# 25), KEEP=1 keeps the work directory, STRICT=1 exits 1 if a target is missed.
set -euo pipefail
n=${1:-100}
duration=${2:-30}
app_tick=${APP_TICK:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
usim=${USIM:-$repo/target/release/usim}
if [[ ! -x $usim ]]; then
    echo "building $usim ..." >&2
    (cd "$repo" && cargo build --release --quiet)
fi
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
[[ -x $mosquitto ]] || { echo "mosquitto not found: apt-get install -y mosquitto" >&2; exit 2; }
py=""
for cand in python3 /usr/bin/python3; do
    if "$cand" -c 'import paho.mqtt.client' 2>/dev/null; then py=$cand; break; fi
done
[[ -n $py ]] || { echo "python3 with paho-mqtt not found: apt-get install -y python3-paho-mqtt" >&2; exit 2; }

work=$(mktemp -d -t usim-bench.XXXXXX)
pids=()
mpid=""
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    [[ -n $mpid ]] && kill -KILL "$mpid" 2>/dev/null || true
    wait 2>/dev/null || true
    if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/mosquitto.conf" <<EOF
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 1000
set_tcp_nodelay true
EOF
"$mosquitto" -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
mpid=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done

echo "starting $n vehicles at $app_tick Hz on mosquitto 127.0.0.1:$port for ${duration}s ..." >&2
for ((i = 1; i <= n; i++)); do
    name=$(printf 'b%03d' "$i")
    cat >"$work/$name.toml" <<EOF
name = "$name"
prefix = "NAV"
start_pos = "x=$((i * 10)), y=0, heading=0, speed=0, depth=0"
thrust_map = "-100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 100:5"
app_tick = $app_tick
[mqtt]
broker = "mqtt://127.0.0.1:$port"
topic_root = "bench"
EOF
    "$usim" run "$work/$name.toml" --stats "$work/$name.stats.json" 2>"$work/$name.log" &
    pids+=($!)
done

"$py" - "$work" "$port" "$n" "$duration" "$app_tick" "$mpid" "${PROBE_EVERY_MS:-25}" "${pids[@]}" <<'PYEOF'
import json, os, sys, threading, time
import paho.mqtt.client as mqtt

work, port, n, duration, app_tick, mpid, probe_ms = sys.argv[1:8]
port, n, duration, app_tick, probe_every = int(port), int(n), float(duration), float(app_tick), float(probe_ms) / 1000
pids = [int(p) for p in sys.argv[8:]]
names = ["b%03d" % (i + 1) for i in range(n)]
clk = os.sysconf("SC_CLK_TCK")

def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / clk

def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0

pending = {}          # vehicle -> (value, t_post)
lat = []              # seconds
lock = threading.Lock()
online = set()
connected = threading.Event()

def client():
    if hasattr(mqtt, "CallbackAPIVersion"):
        return mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-probe")
    return mqtt.Client(client_id="bench-probe")

def on_connect(c, u, f, rc, properties=None):
    c.subscribe("bench/+/NODE_REPORT", qos=0)
    c.subscribe("bench/+/status", qos=1)
    connected.set()

def on_message(c, u, msg):
    now = time.monotonic()
    _, name, var = msg.topic.split("/", 2)
    if var == "status":
        if msg.payload == b"online":
            online.add(name)
        return
    with lock:
        p = pending.get(name)
        if p is None:
            return
        try:
            thrust = json.loads(msg.payload)["thrust"]
        except (ValueError, KeyError):
            return
        if thrust is not None and abs(thrust - p[0]) < 1e-9:
            lat.append(now - p[1])
            del pending[name]

c = client()
c.on_connect = on_connect
c.on_message = on_message
c.connect("127.0.0.1", port, keepalive=30)
c.loop_start()
if not connected.wait(10):
    sys.exit("probe: no connection to mosquitto")
t_wait = time.monotonic()
while len(online) < n and time.monotonic() - t_wait < 30:
    time.sleep(0.1)
print(f"{len(online)}/{n} vehicles online after {time.monotonic() - t_wait:.1f} s", file=sys.stderr)
time.sleep(2.0)  # warm-up

cpu0 = {p: cpu_s(p) for p in pids}
mcpu0 = cpu_s(int(mpid))
t0 = time.monotonic()
k = 0
timeouts = 0
next_probe = t0
while time.monotonic() - t0 < duration:
    now = time.monotonic()
    with lock:
        for name, (v, tp) in list(pending.items()):
            if now - tp > 2.0:
                timeouts += 1
                del pending[name]
    if now >= next_probe:
        name = names[k % n]
        with lock:
            busy = name in pending
        if not busy:
            value = 20.0 + (k % 61)   # consecutive probes to one vehicle differ
            with lock:
                pending[name] = (value, time.monotonic())
            c.publish(f"bench/{name}/DESIRED_THRUST", str(value), qos=0)
        k += 1
        next_probe += probe_every
    time.sleep(0.002)
wall = time.monotonic() - t0
time.sleep(0.5)
cpu = {p: (cpu_s(p) - cpu0[p]) / wall * 100 for p in pids}
mcpu = (cpu_s(int(mpid)) - mcpu0) / wall * 100
rss = {p: status_kib(p, "VmHWM") / 1024 for p in pids}
rss_now = {p: status_kib(p, "VmRSS") / 1024 for p in pids}
mrss = status_kib(int(mpid), "VmRSS") / 1024
c.loop_stop()
c.disconnect()

# Stop the vehicles cleanly so each writes its --stats file.
for p in pids:
    try:
        os.kill(p, 15)
    except ProcessLookupError:
        pass
deadline = time.monotonic() + 20
stats = {}
while time.monotonic() < deadline and len(stats) < n:
    for name in names:
        path = os.path.join(work, name + ".stats.json")
        if name not in stats and os.path.exists(path):
            try:
                with open(path) as f:
                    stats[name] = json.load(f)
            except ValueError:
                pass
    time.sleep(0.1)

def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(q * len(xs) + 0.999999) - 1))]

hist = {}
ticks = skipped = pub_dropped = 0
for s in stats.values():
    ticks += s["ticks"]
    skipped += s["skipped"]
    pub_dropped += s["publish_dropped"]
    for edge, count in s["lateness_histogram_us"]:
        hist[edge] = hist.get(edge, 0) + count
def hist_q(q):
    total = sum(hist.values())
    if total == 0:
        return float("nan")
    rank, seen = q * total, 0
    for edge in sorted(hist):
        seen += hist[edge]
        if seen >= rank:
            return edge / 1000
    return max(hist) / 1000
late_max = max((s["lateness_max_ms"] for s in stats.values()), default=float("nan"))

rss_v, cpu_v = list(rss.values()), list(cpu.values())
lat_ms = [x * 1000 for x in lat]
tick_ms = 1000 / app_tick
l50, l99 = hist_q(0.5), hist_q(0.99)
c50, c99 = pct(lat_ms, 0.5), pct(lat_ms, 0.99)
ok_rss = max(rss_v) <= 8.0
ok_late = l99 <= 10.0
ok_lat = c99 <= tick_ms + 5.0 and timeouts == 0

print()
print(f"usim fleet benchmark: {n} vehicles x {app_tick:g} Hz on mosquitto, {wall:.0f} s measured, "
      f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
print(f"  vehicle RSS peak (VmHWM) MiB : median {pct(rss_v, .5):.2f}  max {max(rss_v):.2f}   (now: max {max(rss_now.values()):.2f})"
      f"   target <= 8      {'PASS' if ok_rss else 'FAIL'}")
print(f"  vehicle CPU %                : median {pct(cpu_v, .5):.2f}  max {max(cpu_v):.2f}  total {sum(cpu_v):.1f}"
      f"   (mosquitto {mcpu:.1f} %, {mrss:.1f} MiB)")
print(f"  tick lateness ms             : p50 {l50:.2f}  p99 {l99:.2f}  max {late_max:.2f}   over {ticks} ticks,"
      f" {skipped} skipped   target p99 <= 10   {'PASS' if ok_late else 'FAIL'}")
print(f"  DESIRED_THRUST -> NODE_REPORT ms: p50 {c50:.1f}  p99 {c99:.1f}  max {max(lat_ms, default=float('nan')):.1f}"
      f"   {len(lat_ms)} probes, {timeouts} lost   target p99 <= {tick_ms + 5:.0f}   {'PASS' if ok_lat else 'FAIL'}")
print(f"  stats files {len(stats)}/{n}, publications dropped {pub_dropped}")
with open(os.path.join(work, "verdict"), "w") as f:
    f.write("PASS" if ok_rss and ok_late and ok_lat else "FAIL")
PYEOF
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
verdict=$(cat "$work/verdict" 2>/dev/null || echo FAIL)
echo "verdict: $verdict"
if [[ ${STRICT:-0} == 1 && $verdict != PASS ]]; then exit 1; fi
