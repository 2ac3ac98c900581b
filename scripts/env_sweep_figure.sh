#!/usr/bin/env bash
# Issue 40's Figure A: the 10,000-run sweep of missions/sweeps/env.toml
# (sea state x wind x GPS dropout, one simulated minute at 10 Hz each, a
# 260-component sea), summary only, on THREADS threads (default 2).
#
#   scripts/env_sweep_figure.sh [ROUNDS=3] [THREADS=2]
#
# Prints the load, each round's wall time and rows, the median and range,
# and checks every round's summary has the same sha256. Honours
# CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
threads=${2:-2}
cargo build --release --quiet --bin usim
bin=${CARGO_TARGET_DIR:-target}/release/usim
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
times=()
sums=()
for i in $(seq "$rounds"); do
  echo "load before round $i: $(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s.%N)
  "$bin" sweep missions/sweeps/env.toml -q --threads "$threads" -o "$dir/summary.csv"
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc -l)
  times+=("$t")
  sums+=("$(sha256sum < "$dir/summary.csv" | cut -c1-16)")
  printf 'round %d: %.2f s (%d rows, sha256 %s)\n' "$i" "$t" \
    "$(($(wc -l < "$dir/summary.csv") - 1))" "${sums[-1]}"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$(printf '%s\n' "${sums[@]}" | sort -u | wc -l)" = 1 ] || { echo "summaries differ between rounds"; exit 1; }
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | sed -n "$(( (rounds + 1) / 2 ))p")
printf '10,000 runs x 600 steps on %s threads: median %.2f s, range %.2f-%.2f s (%d rounds)\n' \
  "$threads" "$median" "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)" "$rounds"
