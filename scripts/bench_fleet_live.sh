#!/usr/bin/env bash
# Live fleet benchmark: `usim fleet --spawn N` (N vehicles in ONE process on
# one MQTT connection, publish = "report", 10 Hz) on a private broker for
# DURATION seconds, then a report of
#   * tick lateness p50 / p99 / max and the time one iteration of the whole
#     fleet takes (the fleet's own `--stats FILE`),
#   * resident memory per vehicle: the fleet process's peak (VmHWM) / N,
#     with nothing subtracted (runtime, broker connection and buffers are
#     charged to the vehicles),
#   * command-to-effect latency: from posting DESIRED_THRUST (a new value
#     each time, every PROBE_EVERY_MS, round robin over PROBED vehicles
#     spread evenly over the fleet; default all of them) to the first
#     NODE_REPORT of that vehicle showing it, p50 / p99 / max. The reports
#     are received the way `usim view` receives them, on one wildcard
#     subscription `bench/+/NODE_REPORT` (all N vehicles, 10 N messages/s),
#     by mosquitto_sub, which stamps each message on arrival (`-F %U`) into
#     a file; the posts are matched to the stamps after the run, so the
#     probe's own speed does not enter the figure,
# and the targets: lateness p99 <= 20 ms, RSS <= 200 KiB per vehicle,
# command-to-effect p99 <= one tick + 20 ms.
#
#   scripts/bench_fleet_live.sh [N=1000] [DURATION=30] [BROKER=embedded|mosquitto]
#
# BROKER=embedded runs `usim broker` (rumqttd) as its own process, so its
# memory is not the fleet's. Needs python3 with paho-mqtt (apt-get install
# -y python3-paho-mqtt), mosquitto_sub (mosquitto-clients) and, for
# BROKER=mosquitto, mosquitto; builds
# target/release/usim if it is missing. 127.0.0.1 and a free port only;
# everything it starts is stopped on exit.
# Environment: USIM (binary), APP_TICK (default 10), PROBE_EVERY_MS (default
# 25), PROBED (default N), PICK=random picks the PROBED vehicles at random
# (seed SEED, default 1) instead of evenly, SUB=probed subscribes only to
# the probed vehicles' NODE_REPORTs (one topic each) instead of the
# wildcard (at 10,000 vehicles the wildcard is 100,000 messages/s for the
# broker to fan out and for mosquitto_sub to stamp: a figure of its own),
# KEEP=1 keeps the work directory, STRICT=1 exits 1 if a target is missed.
set -euo pipefail
n=${1:-1000}
duration=${2:-30}
broker=${3:-embedded}
app_tick=${APP_TICK:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
usim=${USIM:-$repo/target/release/usim}
case $broker in embedded|mosquitto) ;; *) echo "BROKER must be embedded or mosquitto, got $broker" >&2; exit 2 ;; esac
if [[ ! -x $usim ]]; then
    echo "building $usim ..." >&2
    (cd "$repo" && cargo build --release --quiet --bin usim)
fi
py=""
for cand in python3 /usr/bin/python3; do
    if "$cand" -c 'import paho.mqtt.client' 2>/dev/null; then py=$cand; break; fi
done
[[ -n $py ]] || { echo "python3 with paho-mqtt not found: apt-get install -y python3-paho-mqtt" >&2; exit 2; }
command -v mosquitto_sub >/dev/null || { echo "mosquitto_sub not found: apt-get install -y mosquitto-clients" >&2; exit 2; }

work=$(mktemp -d -t usim-bench-live.XXXXXX)
fpid=""
bpid=""
cleanup() {
    [[ -n $fpid ]] && kill -KILL "$fpid" 2>/dev/null || true
    [[ -n $bpid ]] && kill -KILL "$bpid" 2>/dev/null || true
    wait 2>/dev/null || true
    if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [[ $broker == mosquitto ]]; then
    mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
    [[ -x $mosquitto ]] || { echo "mosquitto not found: apt-get install -y mosquitto" >&2; exit 2; }
    cat >"$work/mosquitto.conf" <<EOF
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 10000
set_tcp_nodelay true
EOF
    "$mosquitto" -c "$work/mosquitto.conf" >"$work/broker.log" 2>&1 &
else
    "$usim" broker --bind "127.0.0.1:$port" >"$work/broker.log" 2>&1 &
fi
bpid=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done

cat >"$work/bench.toml" <<EOF
name = "b"
prefix = "NAV"
start_pos = "x=0, y=0, heading=0, speed=0, depth=0"
thrust_map = "-100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 100:5"
app_tick = $app_tick
[mqtt]
broker = "mqtt://127.0.0.1:$port"
topic_root = "bench"
publish = "report"
EOF
cmd=("$usim" fleet --spawn "$n" --config "$work/bench.toml" --stats "$work/stats.json")
echo "starting: ${cmd[*]}  (broker: $broker on 127.0.0.1:$port, ${duration}s)" >&2
"${cmd[@]}" 2>"$work/fleet.log" &
fpid=$!

"$py" - "$work" "$port" "$n" "$duration" "$app_tick" "$fpid" "$bpid" "${PROBE_EVERY_MS:-25}" "${PROBED:-$n}" "$broker" "${PICK:-even}" "${SUB:-wildcard}" "${SEED:-1}" <<'PYEOF'
import json, os, random, subprocess, sys, threading, time
import paho.mqtt.client as mqtt

work, port, n, duration, app_tick, fpid, bpid, probe_ms, probed, broker, pick, sub_mode, seed = sys.argv[1:14]
port, n, duration, app_tick = int(port), int(n), float(duration), float(app_tick)
fpid, bpid, probe_every, probed = int(fpid), int(bpid), float(probe_ms) / 1000, int(probed)
width = max(4, len(str(n)))
names_all = ["b-%0*d" % (width, i + 1) for i in range(n)]
probed = max(1, min(probed, n))
if pick == "random":
    idx = sorted(random.Random(int(seed)).sample(range(n), probed))
else:
    idx = sorted({round(i * (n - 1) / max(1, probed - 1)) for i in range(probed)})
names = [names_all[i] for i in idx]
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

fleet_online = threading.Event()
connected = threading.Event()

def client():
    if hasattr(mqtt, "CallbackAPIVersion"):
        return mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-live-probe")
    return mqtt.Client(client_id="bench-live-probe")

def on_connect(c, u, f, rc, properties=None):
    c.subscribe("bench/fleet/status", qos=1)
    connected.set()

def on_message(c, u, msg):
    if msg.payload == b"online":
        fleet_online.set()

# The reports: one wildcard subscription, stamped on arrival by
# mosquitto_sub and written to a file (no reader can slow it down); the
# posts are matched to the stamps after the run.
reports = os.path.join(work, "reports.txt")
if sub_mode == "probed":
    topics = [a for name in names for a in ("-t", f"bench/{name}/NODE_REPORT")]
else:
    topics = ["-t", "bench/+/NODE_REPORT"]
sub = subprocess.Popen(
    ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-i", "bench-live-sub"] + topics + ["-F", "%U %t %p"],
    stdout=open(reports, "w"))
c = client()
c.on_connect = on_connect
c.on_message = on_message
c.connect("127.0.0.1", port, keepalive=30)
c.loop_start()
if not connected.wait(10):
    sys.exit("probe: no connection to the broker")
t_wait = time.monotonic()
while not fleet_online.is_set() and time.monotonic() - t_wait < 60:
    time.sleep(0.1)
print(f"fleet online after {time.monotonic() - t_wait:.1f} s", file=sys.stderr)
time.sleep(2.0)  # warm-up

cpu0, bcpu0, scpu0 = cpu_s(fpid), cpu_s(bpid), cpu_s(sub.pid)
load0 = os.getloadavg()[0]
t0 = time.monotonic()
k = 0
posts = []            # (vehicle, value, wall-clock time of the post)
last = {}             # vehicle -> (time of its last post, number of posts)
next_probe = t0
while time.monotonic() - t0 < duration:
    now = time.monotonic()
    if now >= next_probe:
        # Round robin; a vehicle posted to less than 1 s ago is skipped (small
        # fleets), so each post's effect is seen before the next one's.
        for _ in range(len(names)):
            name = names[k % len(names)]
            k += 1
            tp, m = last.get(name, (-1e9, 0))
            if now - tp >= 1.0:
                value = 20.0 + (m % 61)   # consecutive posts to one vehicle differ
                last[name] = (now, m + 1)
                posts.append((name, value, time.time()))
                c.publish(f"bench/{name}/DESIRED_THRUST", str(value), qos=0)
                break
        next_probe += probe_every
    time.sleep(0.002)
wall = time.monotonic() - t0
scpu = (cpu_s(sub.pid) - scpu0) / wall * 100
load1 = os.getloadavg()[0]
time.sleep(2.5)
sub.terminate()
sub.wait()

# Match: a post's latency is the stamp of the first report of its vehicle,
# after the post, that shows its value (within 2 s).
queue = {}
for name, value, tp in posts:
    queue.setdefault(name, []).append((value, tp))
lat = []
timeouts = 0
with open(reports, errors="replace") as f:
    for line in f:
        parts = line.split(" ", 2)
        if len(parts) < 3:
            continue
        name = parts[1][6:-12]          # bench/NAME/NODE_REPORT
        q = queue.get(name)
        if not q:
            continue
        stamp = float(parts[0])
        value, tp = q[0]
        if stamp <= tp:
            continue
        if stamp - tp > 2.0:
            timeouts += 1
            q.pop(0)
            continue
        i = parts[2].find('"thrust":')
        if i < 0:
            continue
        j = i + 9
        e = j
        while e < len(parts[2]) and parts[2][e] not in ",}":
            e += 1
        try:
            thrust = float(parts[2][j:e])
        except ValueError:
            continue
        if abs(thrust - value) < 1e-9:
            lat.append(stamp - tp)
            q.pop(0)
timeouts += sum(len(q) for q in queue.values())
cpu = (cpu_s(fpid) - cpu0) / wall * 100
bcpu = (cpu_s(bpid) - bcpu0) / wall * 100
hwm = status_kib(fpid, "VmHWM")
rss_now = status_kib(fpid, "VmRSS")
brss = status_kib(bpid, "VmRSS")
c.loop_stop()
c.disconnect()

os.kill(fpid, 15)
path = os.path.join(work, "stats.json")
deadline = time.monotonic() + 30
stats = None
while time.monotonic() < deadline and stats is None:
    if os.path.exists(path):
        try:
            with open(path) as f:
                stats = json.load(f)
        except ValueError:
            pass
    time.sleep(0.1)
if stats is None:
    sys.exit("the fleet wrote no stats file (see its log)")

def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(q * len(xs) + 0.999999) - 1))]

lat_ms = [x * 1000 for x in lat]
tick_ms = 1000 / app_tick
kib_per_vehicle = hwm / n
l50, l99, lmax = stats["lateness_p50_ms"], stats["lateness_p99_ms"], stats["lateness_max_ms"]
c50, c99 = pct(lat_ms, 0.5), pct(lat_ms, 0.99)
ok_rss = kib_per_vehicle <= 200.0
ok_late = l99 <= 20.0
ok_lat = c99 <= tick_ms + 20.0 and timeouts == 0 and len(lat_ms) > 0

print()
print(f"usim fleet live benchmark: {n} vehicles x {app_tick:g} Hz in one process, publish = report, "
      f"broker {broker}, {wall:.0f} s measured, {os.cpu_count()} CPUs, load average {load0:.2f} -> {load1:.2f}")
print(f"  RSS per vehicle KiB (VmHWM/N)   : {kib_per_vehicle:.1f}   (peak {hwm / 1024:.1f} MiB, now {rss_now / 1024:.1f} MiB)"
      f"   target <= 200   {'PASS' if ok_rss else 'FAIL'}")
print(f"  CPU %                           : fleet {cpu:.1f}   broker {bcpu:.1f} ({brss / 1024:.1f} MiB)"
      f"   probe's mosquitto_sub {scpu:.1f} ({'wildcard' if sub_mode != 'probed' else f'{len(names)} topics'})")
print(f"  tick lateness ms                : p50 {l50:.2f}  p99 {l99:.2f}  max {lmax:.2f}   over {stats['ticks']} ticks,"
      f" {stats['skipped']} skipped   target p99 <= 20   {'PASS' if ok_late else 'FAIL'}")
print(f"  iteration of the fleet ms       : p50 {stats['work_p50_ms']:.1f}  p99 {stats['work_p99_ms']:.1f}  max {stats['work_max_ms']:.1f}")
if "cpu_p50_ms" in stats:
    print(f"  iteration CPU time ms           : p50 {stats['cpu_p50_ms']:.1f}  p99 {stats['cpu_p99_ms']:.1f}   (the fleet thread's CPU clock: without the waits of a loaded machine)")
print(f"  DESIRED_THRUST -> NODE_REPORT ms: p50 {c50:.1f}  p99 {c99:.1f}  max {max(lat_ms, default=float('nan')):.1f}"
      f"   {len(lat_ms)} probes over {len(names)} vehicles ({pick}), {timeouts} lost   target p99 <= {tick_ms + 20:.0f}   {'PASS' if ok_lat else 'FAIL'}")
print(f"  publications dropped {stats['publish_dropped']}, mail dropped {stats['mail_dropped']}, bad messages {stats['bad_messages']}")
with open(os.path.join(work, "verdict"), "w") as f:
    f.write("PASS" if ok_rss and ok_late and ok_lat else "FAIL")
PYEOF
wait "$fpid" 2>/dev/null || true
fpid=""
verdict=$(cat "$work/verdict" 2>/dev/null || echo FAIL)
echo "verdict: $verdict"
if [[ ${STRICT:-0} == 1 && $verdict != PASS ]]; then exit 1; fi
