#!/usr/bin/env bash
# Make (or refresh) the Python 3.10 virtual environment the tests use as
# their real peers: pymoos 2022.1 (the C++ MOOS client library, wheels for
# CPython 3.8-3.10 only), pynmea2, pyais, mcap, paho-mqtt, numpy, gymnasium,
# maturin, pytest, hypothesis, pandas, kubernetes-validate, ruckig, tomli,
# wavespectra and scipy (the sea and gust oracle of tests/environment.rs);
# pettingzoo (the encounter env's API test) and commonocean-rules with
# commonocean-io (the COLREG judge; it needs shapely < 2.1 and brings
# numpy 1.x); dask[distributed] (the LocalCluster of usim_marine.sweep(backend="dask")).
#   scripts/py_env.sh [DIR]      (default: .venv beside this script's repo)
# Prints the venv's python on its last line.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/.venv}"
py=""
for c in "${USIM_PY310:-}" "$HOME/.pyenv/versions/3.10.13/bin/python" python3.10; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1; then py="$c"; break; fi
done
[ -n "$py" ] || { echo "py_env.sh: no CPython 3.10 found (set USIM_PY310=/path/to/python3.10)" >&2; exit 1; }
[ -x "$dir/bin/python" ] || "$py" -m venv "$dir"
dir="$(cd "$dir" && pwd)"   # absolute: callers may change directory
"$dir/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
"$dir/bin/python" -m pip install --quiet \
    'pymoos==2022.1' pynmea2 pyais mcap 'paho-mqtt>=2' numpy gymnasium maturin \
    pytest hypothesis pandas kubernetes-validate ruckig tomli wavespectra scipy \
    pettingzoo commonocean-rules commonocean-io 'shapely<2.1' 'dask[distributed]'
echo "$dir/bin/python"
