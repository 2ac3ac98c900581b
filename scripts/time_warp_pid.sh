#!/usr/bin/env bash
# Highest time warp a live V22 vehicle with the embedded PID holds: for each
# warp W, `usim run configs/v22_pid_boat.toml --time-warp W` runs against
# the embedded broker (`usim broker`) for DURATION wall seconds, steered
# by DESIRED_HEADING / DESIRED_SPEED setpoints (a new heading every second
# of wall time, so the PID keeps turning), and its `--stats` file gives the
# tick lateness p50 / p99 / max and the skipped ticks. Just before each new
# heading, NAV_HEADING is read (`usim watch --once`): "on course" counts the
# readings within 5 degrees of the heading asked for one wall second before
# (at 1000x that is 1000 s of vehicle time to turn and settle). A warp
# "holds" when p99 <= 10 ms and every reading is on course. Ticks run at
# app_tick x warp, at most 1 kHz (a step then covers warp/1000 s of vehicle
# time); skipped deadlines (late wake-ups) make the next step longer.
# ROUNDS rounds per warp; the median p99 and its range are printed.
#
#   scripts/time_warp_pid.sh [DURATION=10] [WARPS="300 1000 3000 10000"]
#
# Environment: USIM (binary; default target/release/usim, built if missing),
# ROUNDS (default 3), KEEP=1 keeps the work directory. Loopback only;
# everything it starts is stopped on exit.
set -euo pipefail
duration=${1:-10}
warps=${2:-"300 1000 3000 10000"}
rounds=${ROUNDS:-3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
usim=${USIM:-$repo/target/release/usim}
if [[ ! -x $usim ]]; then
    echo "building $usim ..." >&2
    (cd "$repo" && cargo build --release --quiet)
fi
work=$(mktemp -d -t usim-warp.XXXXXX)
bpid=""
vpid=""
cleanup() {
    [[ -n $vpid ]] && kill -TERM "$vpid" 2>/dev/null || true
    [[ -n $bpid ]] && kill -TERM "$bpid" 2>/dev/null || true
    wait 2>/dev/null || true
    if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="mqtt://127.0.0.1:$port"
"$usim" broker --bind "127.0.0.1:$port" >"$work/broker.log" 2>&1 &
bpid=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
done

printf '%8s %6s %8s %8s %8s %8s %8s %10s %s\n' warp round ticks p50_ms p99_ms max_ms skipped on_course holds
summary=()
for w in $warps; do
    p99s=()
    for ((r = 1; r <= rounds; r++)); do
        stats="$work/w$w.r$r.json"
        "$usim" run "$repo/configs/v22_pid_boat.toml" --broker "$url" --time-warp "$w" \
            --stats "$stats" >"$work/w$w.r$r.log" 2>&1 &
        vpid=$!
        sleep 0.5
        "$usim" post boat DESIRED_SPEED 2 --broker "$url" >/dev/null
        on=0
        seen=0
        want=""
        for ((s = 0; s < duration; s++)); do
            if [[ -n $want ]]; then
                h=$("$usim" watch boat NAV_HEADING --once --broker "$url" 2>/dev/null | awk '{print $2}')
                seen=$((seen + 1))
                if python3 -c "import sys; d=abs(($h - $want + 180) % 360 - 180); sys.exit(0 if d <= 5 else 1)" 2>/dev/null; then
                    on=$((on + 1))
                fi
            fi
            want=$(((s * 97 + 45) % 360))
            "$usim" post boat DESIRED_HEADING "$want" --broker "$url" >/dev/null
            sleep 1
        done
        kill -TERM "$vpid"
        wait "$vpid" || true
        vpid=""
        read -r ticks p50 p99 max skipped < <(python3 - "$stats" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(s.get("ticks", 0), s["lateness_p50_ms"], s["lateness_p99_ms"], s["lateness_max_ms"], s.get("skipped", s.get("ticks_skipped", 0)))
PY
)
        holds=$(python3 -c "print('yes' if $p99 <= 10 and $on == $seen else 'no')")
        printf '%8s %6s %8s %8.2f %8.2f %8.2f %8s %10s %s\n' "$w" "$r" "$ticks" "$p50" "$p99" "$max" "$skipped" "$on/$seen" "$holds"
        p99s+=("$p99")
    done
    med=$(printf '%s\n' "${p99s[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    lo=$(printf '%s\n' "${p99s[@]}" | sort -g | head -1)
    hi=$(printf '%s\n' "${p99s[@]}" | sort -g | tail -1)
    summary+=("warp $w: p99 median $med ms (range $lo-$hi)")
done
printf '%s\n' "${summary[@]}"
