#!/usr/bin/env bash
# Launch a fleet: N generated vehicles (v001..vNNN, spread on a line, each
# with its own start pose), or the given configs, with `usim up`: an embedded
# broker (or the broker given with -b) plus one `usim run` process per
# vehicle, logs prefixed with the vehicle name. Ctrl-C stops them all.
#
#   scripts/launch_fleet.sh [-b BROKER_URL] [-w TIME_WARP] N
#   scripts/launch_fleet.sh [-b BROKER_URL] [-w TIME_WARP] CONFIG...
#
# Examples:
#   scripts/launch_fleet.sh 5                          # embedded broker on 127.0.0.1:1883
#   scripts/launch_fleet.sh -b mqtt://127.0.0.1:1883 20   # a running mosquitto
#   scripts/launch_fleet.sh configs/kayak.toml configs/uuv.toml
# Generated configs go to $FLEET_DIR (kept), or to a temporary directory
# that is removed when the fleet stops.
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usim=${USIM:-$(command -v usim || echo "$here/../target/release/usim")}
up_args=()
while getopts "b:w:h" opt; do
    case $opt in
        b) up_args+=(--broker "$OPTARG") ;;
        w) up_args+=(--time-warp "$OPTARG") ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[[ $# -ge 1 ]] || usage
if [[ $# -eq 1 && $1 =~ ^[0-9]+$ ]]; then
    n=$1
    if [[ -n ${FLEET_DIR:-} ]]; then
        dir=$FLEET_DIR
    else
        # our own temporary directory: removed when the fleet stops
        dir=$(mktemp -d -t usim-fleet.XXXXXX)
        trap 'rm -rf "$dir"' EXIT
    fi
    mkdir -p "$dir"
    configs=()
    for ((i = 1; i <= n; i++)); do
        name=$(printf 'v%03d' "$i")
        cat >"$dir/$name.toml" <<CFG
name = "$name"
prefix = "NAV"
start_pos = "x=$((i * 20)), y=0, heading=0, speed=0, depth=0"
thrust_map = "-100:-3.5, -75:-3.2, -10:-2, 20:2.4, 50:4.2, 80:4.8, 100:5"
max_acceleration = 0.5
max_deceleration = 0.5
app_tick = 10
CFG
        configs+=("$dir/$name.toml")
    done
    echo "fleet of $n vehicles, configs in $dir" >&2
else
    configs=("$@")
fi
# Not `exec`: the EXIT trap must run after `usim up` ends. Ctrl-C (or a
# SIGTERM to the process group) reaches `usim up`, which stops the fleet;
# this shell only waits for it (a no-op trap, reset to the default in the
# child), then removes its temporary directory.
trap ':' INT TERM
status=0
"$usim" up ${up_args[@]+"${up_args[@]}"} "${configs[@]}" || status=$?
exit "$status"
