#!/usr/bin/env bash
# Run every cargo-fuzz target of fuzz/ for MINUTES minutes each and print
# executions and crashes per target.
#
#   scripts/fuzz.sh MINUTES            # all targets, JOBS at a time (default 2)
#   TARGETS="message set" scripts/fuzz.sh 5
#   RUNS=10000000 scripts/fuzz.sh 120  # stop each at 10M executions (or 120 min)
#   MAX_LEN=2048 scripts/fuzz.sh 10    # longest input (default 8192 bytes)
#   TIMEOUT=60 scripts/fuzz.sh 10      # seconds one input may take (default 10;
#                                      # raise it on a loaded machine)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On stable Rust it sets
# RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags). Targets are built without
# a sanitizer (usim has no unsafe code of its own; the checks are panics
# and the invariants of usim::fuzz_entry), which runs several times faster.
# New inputs go to fuzz/target/work/<target>/ (not committed); the seed
# corpus fuzz/corpus/<target>/ is only read. Crashes, timeouts and OOMs are
# written to fuzz/artifacts/<target>/: fix them, keep the file there (it is
# replayed by `cargo test --test fuzz_corpus`) and commit it.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

MINUTES=${1:?usage: scripts/fuzz.sh MINUTES}
JOBS=${JOBS:-2}
RUNS=${RUNS:--1}
MAX_LEN=${MAX_LEN:-8192}
TIMEOUT=${TIMEOUT:-10}
ALL=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^usim-fuzz$')
TARGETS=${TARGETS:-$ALL}
SECONDS_EACH=$(awk "BEGIN { printf \"%d\", $MINUTES * 60 }")
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$PWD/target"

command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz missing: cargo install cargo-fuzz" >&2; exit 1; }
cargo fuzz build --sanitizer none

mkdir -p target/logs
# The binaries are run directly: `cargo fuzz run` would rebuild each one
# if a source file changed meanwhile.
BIN="target/$(rustc -vV | sed -n 's/^host: //p')/release"
run_one() {
    local t=$1
    mkdir -p "target/work/$t" "artifacts/$t"
    "$BIN/$t" -artifact_prefix="$PWD/artifacts/$t/" \
        -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
        -max_len="$MAX_LEN" -runs="$RUNS" -print_final_stats=1 "target/work/$t" "corpus/$t" \
        >"target/logs/$t.log" 2>&1 || true
}
running=0
for t in $TARGETS; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

printf '%-15s %14s %10s %8s\n' target executions exec/s crashes
total_crashes=0
for t in $TARGETS; do
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "target/logs/$t.log" | tail -n1)
    secs=$(sed -n 's/^stat::total_time_sec.*: *//p;s/.*Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "target/logs/$t.log" | tail -n1)
    crashes=$(find "artifacts/$t" -type f | wc -l)
    total_crashes=$((total_crashes + crashes))
    rate=$(awk "BEGIN { if (${secs:-0} > 0) printf \"%d\", ${runs:-0} / ${secs:-1}; else print 0 }")
    printf '%-15s %14s %10s %8s\n' "$t" "${runs:-0}" "$rate" "$crashes"
done
echo "logs: fuzz/target/logs/; artifacts: fuzz/artifacts/"
[ "$total_crashes" -eq 0 ]
