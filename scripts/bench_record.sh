#!/usr/bin/env bash
# Recording benchmark: N live vehicles (`usim run`, one process each) at
# APP_TICK Hz on a private mosquitto, and two recorders for DURATION seconds:
# `usim record --all -o rec.csv` and `usim record --all -o rec.mcap`. Then
# every recorded state is counted per vehicle, and a dropped message is a
# gap in the vehicle's iteration counter k between its first and last
# recorded row. Target: 100 vehicles at 10 Hz, nothing dropped.
#
#   scripts/bench_record.sh [N=100] [DURATION=30]
#
# Needs mosquitto and python3 (the MCAP file is counted too when the Python
# mcap package is installed: pip install mcap); builds target/release/usim if
# it is missing. Uses 127.0.0.1 and a free port only; everything it starts is
# stopped on exit. Environment: USIM (binary), APP_TICK (default 10), KEEP=1
# keeps the work directory, STRICT=1 exits 1 if a message was dropped.
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

work=$(mktemp -d -t usim-record.XXXXXX)
pids=()
mpid=""
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    [[ -n $mpid ]] && kill -KILL "$mpid" 2>/dev/null || true
    wait 2>/dev/null || true
    if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/mosquitto.conf" <<EOF2
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 10000
set_tcp_nodelay true
EOF2
"$mosquitto" -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
mpid=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done

echo "starting $n vehicles at $app_tick Hz on mosquitto 127.0.0.1:$port ..." >&2
for ((i = 1; i <= n; i++)); do
    name=$(printf 'r%03d' "$i")
    cat >"$work/$name.toml" <<EOF2
name = "$name"
prefix = "NAV"
start_pos = "x=$((i * 10)), y=0, heading=0, speed=0, depth=0"
thrust_map = "-100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 100:5"
app_tick = $app_tick
[mqtt]
broker = "mqtt://127.0.0.1:$port"
topic_root = "bench"
EOF2
    "$usim" run "$work/$name.toml" 2>"$work/$name.log" &
    pids+=($!)
done
sleep 3 # all online

echo "recording for ${duration}s (CSV and MCAP at once) ..." >&2
"$usim" record --all --topic-root bench --broker "mqtt://127.0.0.1:$port" \
    -o "$work/rec.csv" --duration "$duration" 2>"$work/rec_csv.log" &
rc=$!
"$usim" record --all --topic-root bench --broker "mqtt://127.0.0.1:$port" \
    -o "$work/rec.mcap" --duration "$duration" 2>"$work/rec_mcap.log" &
rm_=$!
# Commands while recording: one DESIRED_THRUST per vehicle.
sleep 1
for ((i = 1; i <= n; i++)); do
    "$usim" post "$(printf 'r%03d' "$i")" DESIRED_THRUST 50 --topic-root bench \
        --broker "mqtt://127.0.0.1:$port" >/dev/null 2>&1 || true
done
wait $rc $rm_
tail -n 1 "$work/rec_csv.log" >&2
tail -n 1 "$work/rec_mcap.log" >&2

python3 - "$work" "$n" "$duration" "$app_tick" <<'PYEOF'
import csv, json, os, sys
from collections import defaultdict

work, n, duration, app_tick = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])

def gaps(ks):
    ks = sorted(ks)
    return sum(b - a - 1 for a, b in zip(ks, ks[1:]) if b > a + 1), len(ks)

def report(what, per_vehicle, commands):
    """commands: recorded commands (None for CSV, which holds none)."""
    total = sum(len(v) for v in per_vehicle.values())
    dropped = sum(gaps(v)[0] for v in per_vehicle.values())
    dup = sum(len(v) - len(set(v)) for v in per_vehicle.values())
    rate = total / duration
    ok = dropped == 0 and dup == 0 and len(per_vehicle) == n and commands in (None, n)
    cmds = "" if commands is None else f"{commands}/{n} commands, "
    print(f"  {what}: {len(per_vehicle)}/{n} vehicles, {total} states ({rate:.0f}/s; "
          f"{n * app_tick:.0f}/s expected), {cmds}dropped (k gaps) {dropped}, "
          f"duplicates {dup}   {'PASS' if ok else 'FAIL'}")
    return ok

per = defaultdict(list)
with open(os.path.join(work, "rec.csv"), newline="") as f:
    for row in csv.DictReader(f):
        per[row["vehicle"]].append(int(row["k"]))
print(f"\nusim record benchmark: {n} vehicles x {app_tick:g} Hz on mosquitto, {duration:g} s, "
      f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
ok = report("CSV ", per, None)  # a CSV holds no commands; counted in the MCAP
try:
    from mcap.reader import make_reader
except ImportError:
    print("  MCAP: not counted (pip install mcap)")
else:
    per = defaultdict(list)
    commands = 0
    with open(os.path.join(work, "rec.mcap"), "rb") as f:
        for _s, ch, m in make_reader(f).iter_messages():
            if ch.topic.endswith("/state"):
                per[ch.topic.split("/")[1]].append(json.loads(m.data)["k"])
            elif "/cmd/" in ch.topic:
                commands += 1
    ok = report("MCAP", per, commands) and ok
with open(os.path.join(work, "verdict"), "w") as f:
    f.write("PASS" if ok else "FAIL")
PYEOF
verdict=$(cat "$work/verdict" 2>/dev/null || echo FAIL)
echo "verdict: $verdict"
if [[ ${STRICT:-0} == 1 && $verdict != PASS ]]; then exit 1; fi
