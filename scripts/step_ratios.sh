#!/usr/bin/env bash
# The V22 PID step against the classic turning step OF THE SAME BUILD (the
# ratio is what carries from one machine to another): ns/step of
# examples/step_profile.rs (the kayak turning, rudder 20, drift) and of
# examples/pid_step_profile.rs (the V22 boat, or uuv, with the embedded PID
# and a heading setpoint that keeps the rudder moving), ROUNDS interleaved
# rounds, for this build and, if given, the examples of another build
# (BASE_EXAMPLES: a target/release/examples directory), the order
# alternating. Prints per-round figures, then the median and range of each
# ratio. With CALLGRIND=1 also instructions per step (valgrind's callgrind,
# the difference of a 150,000- and a 50,000-step run over 100,000).
#
# With PAIR=1 instead: examples/step_pair.rs, both workloads in ONE process
# in alternating blocks of 10,000 steps (300 pairs per run), ROUNDS runs,
# alternating with BASE_EXAMPLES' step_pair when that build has one. Its
# minimum over the blocks is the quiet machine's figure: on a shared VM the
# separate processes above meet slow phases that add about the same time
# to both steps, which pulls their ratio towards 1.
#
#   scripts/step_ratios.sh [ROUNDS=5] [BASE_EXAMPLES] [boat|uuv]
#
# Honours CARGO_TARGET_DIR; builds the examples if missing.
set -euo pipefail
rounds=${1:-5}
base=${2:-}
which=${3:-boat}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
ex=${CARGO_TARGET_DIR:-$repo/target}/release/examples
if [[ ${PAIR:-0} == 1 ]]; then
    if [[ ! -x $ex/step_pair ]]; then
        (cd "$repo" && cargo build --release --quiet --example step_pair)
    fi
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    for r in $(seq 1 "$rounds"); do
        if [[ -n $base && -x $base/step_pair ]]; then
            echo "base: $("$base/step_pair" 300 10000 "$which")"
        fi
        echo "new:  $("$ex/step_pair" 300 10000 "$which")"
    done
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
if [[ ! -x $ex/step_profile || ! -x $ex/pid_step_profile ]]; then
    (cd "$repo" && cargo build --release --quiet --example step_profile --example pid_step_profile)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=${STEPS:-2000000}
ns() { "$@" | sed -n 's/.*: \([0-9.]*\) ns\/step.*/\1/p'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
range() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }
builds=(new)
[[ -n $base ]] && builds=(base new)
dir_of() { if [[ $1 == base ]]; then echo "$base"; else echo "$ex"; fi; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
    order=("${builds[@]}")
    if ((r % 2 == 0)) && [[ ${#builds[@]} == 2 ]]; then order=(new base); fi
    line="round $r:"
    for b in "${order[@]}"; do
        d=$(dir_of "$b")
        c=$(ns "$d/step_profile" "$n")
        p=$(ns "$d/pid_step_profile" "$n" "$which")
        echo "$c" >>"$tmp/$b.classic"; echo "$p" >>"$tmp/$b.pid"
        echo "scale=3; $p / $c" | bc -l >>"$tmp/$b.ratio"
        line+=" $b classic $c ns, PID $p ns, ratio $(tail -n 1 "$tmp/$b.ratio");"
    done
    echo "$line"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "${builds[@]}"; do
    echo "$b: classic $(median <"$tmp/$b.classic") ns ($(range <"$tmp/$b.classic")), V22 $which PID $(median <"$tmp/$b.pid") ns ($(range <"$tmp/$b.pid")), ratio $(median <"$tmp/$b.ratio") ($(range <"$tmp/$b.ratio"))"
done
if [[ ${CALLGRIND:-0} == 1 ]]; then
    refs() {
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" 2>&1 |
            sed -n 's/.*I *refs: *//p' | tr -d ,
    }
    for b in "${builds[@]}"; do
        d=$(dir_of "$b")
        c=$((($(refs "$d/step_profile" 150000) - $(refs "$d/step_profile" 50000)) / 100000))
        p=$((($(refs "$d/pid_step_profile" 150000 "$which") - $(refs "$d/pid_step_profile" 50000 "$which")) / 100000))
        echo "callgrind $b: classic $c, V22 $which PID $p instructions/step, ratio $(echo "scale=3; $p / $c" | bc -l)"
    done
fi
