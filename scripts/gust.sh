#!/usr/bin/env bash
# Simulate a gust on a live vehicle: a DRIFT_VECTOR_ADD ramp up and down, as
# in the uSimMarine manual (§7.2): N posts of "ANGLE, STEP", then N posts of
# "ANGLE, -STEP", one every INTERVAL seconds; the drift ends where it began.
#
#   scripts/gust.sh VEHICLE [ANGLE=137] [STEP=0.25] [N=5] [INTERVAL=1]
#
# Environment: USIM (usim binary), USIM_BROKER (default mqtt://127.0.0.1:1883),
# USIM_TOPIC_ROOT (default usim). Watch it with:
#   usim watch VEHICLE USM_DRIFT_SUMMARY NAV_X NAV_Y
set -euo pipefail
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usim=${USIM:-$(command -v usim || echo "$here/../target/release/usim")}
vehicle=$1 angle=${2:-137} step=${3:-0.25} n=${4:-5} interval=${5:-1}
post() {
    "$usim" post "$vehicle" DRIFT_VECTOR_ADD "$1" \
        --broker "${USIM_BROKER:-mqtt://127.0.0.1:1883}" \
        --topic-root "${USIM_TOPIC_ROOT:-usim}"
}
for sign in "" "-"; do
    for ((i = 1; i <= n; i++)); do
        echo "$(date +%T) $vehicle DRIFT_VECTOR_ADD = $angle, $sign$step"
        post "$angle, $sign$step"
        sleep "$interval"
    done
done
