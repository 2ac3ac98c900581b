#!/usr/bin/env bash
# Rounds of `cargo bench --bench fleet` (1,000 vehicles × 100 steps: no
# output, encounters on, a CSV row per vehicle per step), each round's
# median time per iteration from criterion's samples, and over the rounds
# the median of those medians with their range; also encounters' cost over
# no output within each round, and the load average before each round
# (the machine may be shared: say so with the figures).
#
#   scripts/bench_fleet_rounds.sh [ROUNDS=3] [criterion options, default
#                                  --measurement-time 4 --warm-up-time 1]
#
# Honours CARGO_TARGET_DIR (criterion's results are under it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
rounds=${1:-3}
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
shift || true
opts=("$@")
[[ ${#opts[@]} -gt 0 ]] || opts=(--measurement-time 4 --warm-up-time 1)
crit=${CARGO_TARGET_DIR:-$repo/target}/criterion/fleet\ 1000\ vehicles\ x\ 100\ steps
cargo bench --bench fleet --no-run --quiet
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    cargo bench --bench fleet -- "${opts[@]}" --noplot >/dev/null 2>&1
    python3 - "$crit" "$r" "$load" >>"$out" <<'PY'
import json, os, sys, statistics
crit, r, load = sys.argv[1:4]
row = {"round": int(r), "load": float(load)}
for name in ("no output", "no output, encounters on", "CSV row per vehicle per step"):
    s = json.load(open(os.path.join(crit, name, "new", "sample.json")))
    per = [t / i / 1e6 for t, i in zip(s["times"], s["iters"])]  # ms per iteration
    row[name] = statistics.median(per)
print(json.dumps(row))
PY
    tail -1 "$out" >&2
done
python3 - "$out" <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{len(rows)} rounds, load average before each: {', '.join(str(r['load']) for r in rows)} ({__import__('os').cpu_count()} CPUs)")
for name in ("no output", "no output, encounters on", "CSV row per vehicle per step"):
    v = [r[name] for r in rows]
    m = statistics.median(v)
    print(f"  {name:30s} median {m:8.2f} ms per 100 steps (range {min(v):.2f}-{max(v):.2f}), "
          f"{100.0 / m:.2f} M vehicle-steps/s")
over = [100 * (r["no output, encounters on"] / r["no output"] - 1) for r in rows]
print(f"  encounters over no output, same round: median {statistics.median(over):+.1f} % "
      f"(range {min(over):+.1f} to {max(over):+.1f} %)")
PY
