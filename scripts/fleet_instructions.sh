#!/usr/bin/env bash
# Instructions per step of a 1,000-vehicle replay (the fleet benchmark's
# mission, examples/fleet_profile.rs), counted by valgrind's callgrind over
# all threads: with no output, with encounters on, and with a CSV row per
# vehicle per step. Repeatable on a loaded machine, unlike wall time. Each
# figure is the difference of a 150-step and a 50-step run over 100, so
# start-up (parsing the 1,000-vehicle mission) cancels.
#
#   scripts/fleet_instructions.sh [none encounters csv]
#
# Needs valgrind (apt-get install -y valgrind). Honours CARGO_TARGET_DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
cargo build --release --quiet --example fleet_profile
ex=${CARGO_TARGET_DIR:-$repo/target}/release/examples/fleet_profile
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One worker thread: the work itself, without rayon's idle spinning (which
# callgrind would count, and which varies from run to run).
export RAYON_NUM_THREADS=1
refs() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" 2>&1 |
        sed -n 's/.*I *refs: *//p' | tr -d ,
}
modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(none encounters csv)
for mode in "${modes[@]}"; do
    a=$(refs "$ex" 50 "$mode")
    b=$(refs "$ex" 150 "$mode")
    per=$(((b - a) / 100))
    echo "1000 vehicles, $mode: $per instructions/step ($((per / 1000)) per vehicle-step)"
done
