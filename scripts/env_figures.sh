#!/usr/bin/env bash
# The environment layer's figures (docs/model.md §24): 1,000 kayaks at
# 10 Hz in calm water, in a 260-component directional sea with a gusty
# wind ("sea"), and in that sea and wind with sensor noise ("full", issue
# 40's Figure B) (examples/env_fleet.rs).
#  1. vehicle-steps/s on 2 threads, ROUNDS interleaved rounds (calm, sea, full);
#  2. instructions per vehicle-step by valgrind's callgrind (one thread; the
#     difference of a 60- and a 20-step run over 40, so set-up cancels),
#     and the cost of sea + wind (+ sensors) over calm water.
#
#   scripts/env_figures.sh [ROUNDS=5]
#
# Needs valgrind for part 2 (skipped without it). Honours CARGO_TARGET_DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
rounds=${1:-5}
cargo build --release --quiet --example env_fleet
ex=${CARGO_TARGET_DIR:-$repo/target}/release/examples/env_fleet
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
    "$ex" 300 calm 2
    "$ex" 300 sea 2
    "$ex" 300 full 2
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
command -v valgrind >/dev/null || { echo "SKIPPED: valgrind missing (callgrind counts)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
refs() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" 2>&1 |
        sed -n 's/.*I *refs: *//p' | tr -d ,
}
declare -A per
for mode in calm sea full; do
    a=$(refs "$ex" 20 "$mode" 1)
    b=$(refs "$ex" 60 "$mode" 1)
    per[$mode]=$(((b - a) / 40 / 1000))
    echo "1000 vehicles, $mode: ${per[$mode]} instructions per vehicle-step"
done
echo "sea + gusty wind over calm water: $((per[sea] - per[calm])) instructions per vehicle-step"
echo "sea + gusty wind + sensor noise over calm water: $((per[full] - per[calm])) instructions per vehicle-step"
