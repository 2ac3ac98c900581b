#!/usr/bin/env bash
# Cold release build time: `cargo build --release --locked` into a fresh,
# empty target directory, ROUNDS times (default 3); prints each wall time
# and the median with the range. The machine's load average is printed
# too: other jobs on the machine slow the build down.
#
#   scripts/cold_build.sh [ROUNDS]
set -euo pipefail
rounds=${1:-3}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
times=()
for ((r = 1; r <= rounds; r++)); do
    dir=$(mktemp -d -t usim-cold.XXXXXX)
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    CARGO_TARGET_DIR="$dir" cargo build --release --locked --quiet
    end=$(date +%s.%N)
    rm -rf "$dir"
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    times+=("$t")
    printf 'round %d: %.1f s (load average at start %s, %d CPUs)\n' "$r" "$t" "$load" "$(nproc)"
done
printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
    printf "cold release build: median %.1f s, range %.1f-%.1f s over %d round(s)\n", m, a[1], a[NR], NR }'
