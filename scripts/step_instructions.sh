#!/usr/bin/env bash
# Instructions per model step, counted by valgrind's callgrind (repeatable on
# a loaded machine, unlike wall time): the kayak turning
# (examples/step_profile.rs) and the V22 boat and UUV with the embedded PID
# and a heading setpoint that keeps the rudder moving
# (examples/pid_step_profile.rs). Each figure is the difference of a
# 150,000-step and a 50,000-step run over 100,000, so start-up cancels.
#
#   scripts/step_instructions.sh
#
# Needs valgrind (apt-get install -y valgrind). Honours CARGO_TARGET_DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
cargo build --release --quiet --example step_profile --example pid_step_profile
ex=${CARGO_TARGET_DIR:-$repo/target}/release/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
refs() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" 2>&1 |
        sed -n 's/.*I *refs: *//p' | tr -d ,
}
per_step() {
    local a b
    a=$(refs "$@" 50000)
    b=$(refs "$@" 150000)
    echo $(((b - a) / 100000))
}
echo "kayak turning (rudder 20, drift): $(per_step "$ex/step_profile") instructions/step"
for w in boat uuv; do
    a=$(refs "$ex/pid_step_profile" 50000 "$w")
    b=$(refs "$ex/pid_step_profile" 150000 "$w")
    echo "V22 $w with the embedded PID: $(((b - a) / 100000)) instructions/step"
done
