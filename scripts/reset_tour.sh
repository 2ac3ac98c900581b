#!/usr/bin/env bash
# Put a live vehicle through several start poses in turn with USM_RESET,
# DWELL seconds at each (ROUNDS times over the list; 0 = forever).
#
#   scripts/reset_tour.sh VEHICLE [DWELL=5] [ROUNDS=1]
#
# Environment: USIM (usim binary), USIM_BROKER (default mqtt://127.0.0.1:1883),
# USIM_TOPIC_ROOT (default usim). Give the vehicle some thrust first to see it
# sail off from each pose: usim post VEHICLE DESIRED_THRUST 40
set -euo pipefail
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usim=${USIM:-$(command -v usim || echo "$here/../target/release/usim")}
vehicle=$1 dwell=${2:-5} rounds=${3:-1}
poses=(
    "x=0, y=0, heading=0, speed=0, depth=0"
    "x=100, y=0, heading=90, speed=1"
    "x=100, y=100, heading=180, speed=2"
    "x=0, y=100, heading=270, speed=0.5, depth=5"
    "x=-50, y=-50, heading=45, speed=0, depth=0"
)
round=0
while ((rounds == 0 || round < rounds)); do
    round=$((round + 1))
    for pose in "${poses[@]}"; do
        echo "$(date +%T) $vehicle USM_RESET = $pose"
        "$usim" post "$vehicle" USM_RESET "$pose" \
            --broker "${USIM_BROKER:-mqtt://127.0.0.1:1883}" \
            --topic-root "${USIM_TOPIC_ROOT:-usim}"
        sleep "$dwell"
    done
done
