#!/usr/bin/env bash
# `usim view` benchmark: N vehicles (`usim run`, one process each) at
# APP_TICK Hz on a private mosquitto, one `usim view` watching them, and
# one page-like WebSocket client (examples/view_probe.rs) for DURATION
# seconds after a 3 s warm-up. Reports
#   * the view server's CPU (% of one core) and memory (RSS, peak),
#   * frames/s and bytes/s sent to the page,
#   * NODE_REPORT -> page latency p50 / p99 / max: from a vehicle's
#     NODE_REPORT reaching another subscriber of the same broker to the
#     frame carrying that iteration reaching the WebSocket client
#     (target p99 <= 100 ms).
#
#   scripts/bench_view.sh [N=200] [DURATION=30]
#
# Needs mosquitto; builds target/release/usim and the probe. Uses 127.0.0.1
# and free ports only; everything it starts is stopped on exit.
# Environment: APP_TICK (default 10), FPS (default: usim view's), KEEP=1
# keeps the work directory.
set -euo pipefail
n=${1:-200}
duration=${2:-30}
app_tick=${APP_TICK:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
(cd "$repo" && cargo build --release --quiet --bin usim --example view_probe)
usim=$target/release/usim
probe=$target/release/examples/view_probe
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)
[[ -x $mosquitto ]] || { echo "mosquitto not found: apt-get install -y mosquitto" >&2; exit 2; }

work=$(mktemp -d -t usim-bench-view.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 0.5
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
cat >"$work/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 10000
set_tcp_nodelay true
CONF
"$mosquitto" -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done

echo "starting $n vehicles at $app_tick Hz on mosquitto 127.0.0.1:$port ..." >&2
for ((i = 1; i <= n; i++)); do
    name=$(printf 'v%03d' "$i")
    cat >"$work/$name.toml" <<CONF
name = "$name"
prefix = "NAV"
start_pos = "x=$(( (i % 20) * 15 )), y=$(( (i / 20) * 15 )), heading=$(( i * 37 % 360 )), speed=0, depth=0"
app_tick = $app_tick
[mqtt]
broker = "mqtt://127.0.0.1:$port"
topic_root = "bench"
CONF
    "$usim" run "$work/$name.toml" 2>"$work/$name.log" &
    pids+=($!)
done
# Give them thrust and rudder so every report changes (circles).
sleep 2
for ((i = 1; i <= n; i++)); do
    name=$(printf 'v%03d' "$i")
    mosquitto_pub -p "$port" -t "bench/$name/DESIRED_THRUST" -m 40 2>/dev/null || true
    mosquitto_pub -p "$port" -t "bench/$name/DESIRED_RUDDER" -m 10 2>/dev/null || true
done

fps_args=()
[[ -n ${FPS:-} ]] && fps_args=(--fps "$FPS")
"$usim" view --broker "mqtt://127.0.0.1:$port" --topic-root bench --bind 127.0.0.1:0 --no-token "${fps_args[@]}" \
    >"$work/view.out" 2>"$work/view.log" &
vpid=$!
pids+=($vpid)
for _ in $(seq 100); do grep -q 'open http' "$work/view.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's|^usim view: open http://\([^/]*\)/.*|\1|p' "$work/view.out")
[[ -n $url ]] || { echo "usim view printed no URL:" >&2; cat "$work/view.log" >&2; exit 1; }
echo "usim view on http://$url, measuring ${duration}s (load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) CPUs) ..." >&2
"$probe" "ws://$url/ws" "$port" bench "$duration" "$vpid"
