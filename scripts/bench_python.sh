#!/usr/bin/env bash
# Figures of the Python package (docs/python.md): Fleet.step vs native,
# the vector env vs SyncVectorEnv, replay vs CLI + CSV parsing.
# Usage: scripts/bench_python.sh [--rounds N] [--n VEHICLES] [--steps S] [--only fleet|vector|replay|history|render]
# Needs the package installed (pip install ./python) and, for the replay
# figure, the release CLI (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
py="${USIM_PYTHON:-python3}"
[ -x target/release/usim ] || cargo build --release --quiet --bin usim
exec "$py" python/benches/bench.py "$@"
