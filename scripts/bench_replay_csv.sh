#!/usr/bin/env bash
# Replay to CSV: rows per second of `usim replay` writing
# missions/long_survey.toml stretched to 360,000 steps (360,001 rows), this
# build against BASE_BIN (another build, e.g. of the commit issue 26 starts
# from), interleaved: each round runs both, the order alternating, and
# checks that both wrote the same bytes (sha256). Prints each round, then
# the median and range of rows/s for each binary and of the ratio; also the
# rows per CPU second (user + system time of the process, from GNU time):
# on a loaded machine the wall time also counts the time spent waiting for
# a core, which the CPU time does not.
# `usim replay -o FILE` runs on two threads (src/replay/threaded.rs): the
# CPU time is that of both, so the rows per CPU second show the work, the
# rows per second what a user waits for.
#
#   scripts/bench_replay_csv.sh BASE_BIN [ROUNDS=5]
#
# CALLGRIND=1 also counts instructions per row (valgrind's callgrind, on
# the 36,000-step mission: repeatable on a loaded machine). Environment:
# USIM (this build; default target/release/usim, built if missing), STEPS
# (default 360000).
set -euo pipefail
base=${1:?usage: bench_replay_csv.sh BASE_BIN [ROUNDS]}
rounds=${2:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
usim=${USIM:-${CARGO_TARGET_DIR:-$repo/target}/release/usim}
steps=${STEPS:-360000}
if [[ ! -x $usim ]]; then
    (cd "$repo" && cargo build --release --quiet)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The mission, with its vehicle path made absolute and its steps stretched.
sed -e "s|^vehicle = \"../|vehicle = \"$repo/|" -e "s|^steps = .*|steps = $steps|" \
    "$repo/missions/long_survey.toml" >"$tmp/survey.toml"
rows=$((steps + 1))

now() { date +%s.%N; }
run() { # BIN OUT -> wall seconds; CPU seconds (user + system) into $tmp/cpu
    local t0 t1
    t0=$(now)
    /usr/bin/time -o "$tmp/time" -f '%U %S' "$1" replay "$tmp/survey.toml" -o "$2" >/dev/null 2>&1
    t1=$(now)
    awk '{print $1 + $2}' "$tmp/time" >"$tmp/cpu"
    echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
range() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/base.rates"; : >"$tmp/new.rates"; : >"$tmp/ratios"
: >"$tmp/base.cpu"; : >"$tmp/new.cpu"; : >"$tmp/cpu.ratios"
for r in $(seq 1 "$rounds"); do
    if ((r % 2)); then order="base new"; else order="new base"; fi
    for which in $order; do
        bin=$base; [[ $which == new ]] && bin=$usim
        s=$(run "$bin" "$tmp/$which.csv")
        printf '%.0f\n' "$(echo "$rows / $s" | bc -l)" >>"$tmp/$which.rates"
        printf '%.0f\n' "$(echo "$rows / $(cat "$tmp/cpu")" | bc -l)" >>"$tmp/$which.cpu"
    done
    a=$(sha256sum <"$tmp/base.csv" | cut -d' ' -f1)
    b=$(sha256sum <"$tmp/new.csv" | cut -d' ' -f1)
    if [[ $a != "$b" ]]; then
        echo "round $r: OUTPUTS DIFFER (base $a, new $b)" >&2
        exit 1
    fi
    rb=$(tail -n 1 "$tmp/base.rates"); rn=$(tail -n 1 "$tmp/new.rates")
    echo "scale=3; $rn / $rb" | bc -l >>"$tmp/ratios"
    cb=$(tail -n 1 "$tmp/base.cpu"); cn=$(tail -n 1 "$tmp/new.cpu")
    echo "scale=3; $cn / $cb" | bc -l >>"$tmp/cpu.ratios"
    echo "round $r: base $rb rows/s, new $rn rows/s, ratio $(tail -n 1 "$tmp/ratios"); per CPU second: base $cb, new $cn, ratio $(tail -n 1 "$tmp/cpu.ratios"); sha256 equal ($a)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "base: median $(median <"$tmp/base.rates") rows/s (range $(range <"$tmp/base.rates"))"
echo "new:  median $(median <"$tmp/new.rates") rows/s (range $(range <"$tmp/new.rates"))"
echo "ratio new/base: median $(median <"$tmp/ratios") (range $(range <"$tmp/ratios")) over $rounds rounds, $rows rows"
echo "rows per CPU second: base median $(median <"$tmp/base.cpu") (range $(range <"$tmp/base.cpu")), new median $(median <"$tmp/new.cpu") (range $(range <"$tmp/new.cpu")), ratio median $(median <"$tmp/cpu.ratios") (range $(range <"$tmp/cpu.ratios"))"

if [[ ${CALLGRIND:-0} == 1 ]]; then
    sed -e "s|^steps = .*|steps = 36000|" "$tmp/survey.toml" >"$tmp/short.toml"
    for which in base new; do
        bin=$base; [[ $which == new ]] && bin=$usim
        n=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
            "$bin" replay "$tmp/short.toml" -o "$tmp/cg.csv" 2>&1 |
            sed -n 's/.*I *refs: *//p' | tr -d ,)
        echo "callgrind $which: $((n / 36001)) instructions/row (36,001 rows, start-up included)"
    done
fi
