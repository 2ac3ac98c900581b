#!/usr/bin/env bash
# Every README command that no test runs and that is too slow for CI
# (release builds, benchmarks once each, profiling, the cold build, short
# runs of the soak and view benchmarks): run by hand, e.g. before README
# figures are re-measured. tests/readme.rs checks that each such README
# command has its line here (or in .ci/run). Needs what .ci/run installs,
# plus valgrind. Takes 30-40 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
cargo clippy --all-targets -- -D warnings
root=$(mktemp -d -t usim-ci.XXXXXX)
trap 'rm -rf "$root"' EXIT
CARGO_TARGET_DIR="$PWD/target" cargo install --path . --locked --root "$root"
"$root/bin/usim" --help >/dev/null
cargo uninstall --root "$root" usim
cargo bench -- --test
if ! command -v valgrind >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
fi
cargo build --release --example step_profile && RUDDER=20 valgrind --tool=callgrind --callgrind-out-file="$root/callgrind.out" target/release/examples/step_profile
RUDDER=0 valgrind --tool=callgrind --callgrind-out-file="$root/callgrind0.out" target/release/examples/step_profile
target/release/examples/step_profile 5000000
STRICT=0 scripts/bench_fleet.sh 5 5
STRICT=0 scripts/bench_fleet_live.sh 5 3 embedded
STRICT=0 scripts/bench_fleet_live.sh 5 3 mosquitto
scripts/soak.sh 0.5
scripts/bench_sweep.sh 200 1
STRICT=1 scripts/bench_record.sh 5 5
scripts/step_instructions.sh
scripts/fleet_instructions.sh none encounters
scripts/bench_fleet_rounds.sh 1 --measurement-time 1 --warm-up-time 1
scripts/bench_view.sh 5 3
scripts/cold_build.sh 1
scripts/env_figures.sh 1
