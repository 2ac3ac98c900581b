#!/usr/bin/env bash
# Fleet replay scaling: vehicle-steps per second on ONE core (one rayon
# thread) from 10 to 100,000 vehicles, without and with encounter tracking
# (examples/fleet_profile.rs: kayaks on a 50 m lattice, near miss 20 m),
# ROUNDS interleaved rounds (median and range), plus the time to build and
# parse the mission (which must grow linearly too). The rate is given twice:
# of the whole replay (making the vehicles, stepping them, dropping them)
# and of the steps alone (also per second of the process's CPU time,
# steadier on a shared machine), with the set-up (making the vehicles and
# the blocked loop's records) in microseconds per vehicle apart: at 100,000
# vehicles the run is only 20 steps, so the whole-run rate counts making
# each vehicle against 20 of its steps. With CALLGRIND=1 also
# instructions per vehicle-step (valgrind's callgrind; the difference of an
# S-step and a 2S-step run, so loading cancels), repeatable under load.
#
#   scripts/fleet_scaling.sh [ROUNDS=5] [SIZES="10 100 1000 10000 100000"]
#
# Needs a release build of the example (built if missing); valgrind for
# CALLGRIND=1. Honours CARGO_TARGET_DIR. The work per size is about
# 2,000,000 vehicle-steps (at least MIN_STEPS steps, default 10; from 100
# steps a fleet of 2,700 vehicles or more asks for huge pages, see
# HUGE_PAGE_STEPS in src/replay/mod.rs: MIN_STEPS=100 measures that).
set -euo pipefail
rounds=${1:-5}
sizes=${2:-10 100 1000 10000 100000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
ex=${CARGO_TARGET_DIR:-$repo/target}/release/examples/fleet_profile
if [[ ! -x $ex ]]; then
    (cd "$repo" && cargo build --release --quiet --example fleet_profile)
fi
export RAYON_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
range() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
    for n in $sizes; do
        steps=$((2000000 / n)); ((steps < ${MIN_STEPS:-10})) && steps=${MIN_STEPS:-10}
        for mode in none encounters; do
            line=$("$ex" "$steps" "$mode" "$n" 2>/dev/null)
            echo "$line" | sed -n 's/.*ms per 100 steps, \([0-9]*\) vehicle-steps.*/\1/p' >>"$tmp/$n.$mode.rate"
            echo "$line" | sed -n 's/.*parsed in \([0-9.]*\) s.*/\1/p' >>"$tmp/$n.$mode.load"
            echo "$line" | sed -n 's/.*steps alone \([0-9]*\) vehicle-steps.*/\1/p' >>"$tmp/$n.$mode.steps"
            echo "$line" | sed -n 's/.*(\([0-9]*\) per CPU second).*/\1/p' >>"$tmp/$n.$mode.cpu"
            echo "$line" | sed -n 's/.*set-up \([0-9.]*\) us.*/\1/p' >>"$tmp/$n.$mode.setup"
        done
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%8s  %-11s %28s %28s %28s %24s %28s\n' vehicles mode "whole run vehicle-steps/s" "steps alone vehicle-steps/s" "steps alone per CPU s" "set-up us/vehicle" "mission load s"
for n in $sizes; do
    for mode in none encounters; do
        printf '%8s  %-11s %10s (%s) %10s (%s) %10s (%s) %8s (%s) %8s (%s)\n' "$n" "$mode" \
            "$(median <"$tmp/$n.$mode.rate")" "$(range <"$tmp/$n.$mode.rate")" \
            "$(median <"$tmp/$n.$mode.steps")" "$(range <"$tmp/$n.$mode.steps")" \
            "$(median <"$tmp/$n.$mode.cpu")" "$(range <"$tmp/$n.$mode.cpu")" \
            "$(median <"$tmp/$n.$mode.setup")" "$(range <"$tmp/$n.$mode.setup")" \
            "$(median <"$tmp/$n.$mode.load")" "$(range <"$tmp/$n.$mode.load")"
    done
done
echo "(medians over $rounds rounds, ranges in brackets; one rayon thread)"
if [[ ${CALLGRIND:-0} == 1 ]]; then
    refs() {
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" 2>&1 |
            sed -n 's/.*I *refs: *//p' | tr -d ,
    }
    for n in $sizes; do
        s=$((200000 / n)); ((s < 4)) && s=4
        for mode in none encounters; do
            a=$(refs "$ex" "$s" "$mode" "$n")
            b=$(refs "$ex" $((2 * s)) "$mode" "$n")
            echo "callgrind $n vehicles, $mode: $(((b - a) / (s * n))) instructions/vehicle-step"
        done
    done
fi
