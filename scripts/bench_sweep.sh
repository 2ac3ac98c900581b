#!/usr/bin/env bash
# Time a sweep of 10,000 runs × 10 simulated minutes at 10 Hz (6,000 steps
# each: 60 M vehicle-steps), summary only (docs/sweeps.md).
#
#   scripts/bench_sweep.sh [RUNS] [ROUNDS]
#
# Builds the release binary, runs the sweep ROUNDS times (default 3) and
# prints each wall time, the median and the range.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000}
rounds=${2:-3}
cargo build --release --quiet --bin usim
bin=${CARGO_TARGET_DIR:-target}/release/usim
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/mission.toml" <<MISSION
[mission]
vehicle = "$PWD/configs/kayak.toml"
dt = 0.1
duration = 600.0
output_every = 10

[[post]]
t = 1.0
var = "DESIRED_THRUST"
value = 60.0

[[post]]
t = 60.0
var = "DESIRED_RUDDER"
value = 15.0

[[post]]
t = 90.0
var = "DESIRED_RUDDER"
value = 0.0
MISSION
cat > "$dir/sweep.toml" <<SWEEP
[sweep]
mission = "mission.toml"
seed = 1
runs = $runs
reach = { x = 200.0, y = 300.0, radius = 20.0 }

[[var]]
name = "thrust"
kind = "uniform"
target = "post.1.value"
min = 30.0
max = 90.0

[[var]]
name = "turn_t"
kind = "uniform"
target = "post.2.t"
min = 30.0
max = 120.0

[[var]]
name = "start"
kind = "polygon"
target = "kayak.start"
points = [[0.0, 0.0], [50.0, 0.0], [50.0, 50.0], [0.0, 50.0]]

[[var]]
name = "drift"
kind = "normal"
target = "kayak.drift_x"
mean = 0.0
std = 0.05
SWEEP
times=()
for i in $(seq "$rounds"); do
  start=$(date +%s.%N)
  "$bin" sweep "$dir/sweep.toml" -q -o "$dir/summary.csv"
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc -l)
  times+=("$t")
  printf 'round %d: %.2f s (%d rows)\n' "$i" "$t" "$(($(wc -l < "$dir/summary.csv") - 1))"
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | sed -n "$(( (rounds + 1) / 2 ))p")
printf '%d runs x 6000 steps: median %.2f s, range %.2f-%.2f s, %.1f M vehicle-steps/s (nproc %s)\n' \
  "$runs" "$median" "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)" \
  "$(echo "$runs * 6000 / $median / 1000000" | bc -l)" "$(nproc)"
