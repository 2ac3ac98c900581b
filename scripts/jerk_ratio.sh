#!/usr/bin/env bash
# The jerk-limited profile calculation (one DOF) of this build against
# another build (issue 26): the same results, then the speed.
#
# 1. Results: the Ruckig comparison set of scripts/compare_ruckig.py (its
#    seven modes, seeds 3, 5 and 7, N cases each) is written as batch CSVs
#    and planned by both builds' `usim profile --batch --at ...`; the
#    outputs (durations and the states at 16 times, shortest round-trip
#    digits) must be byte-identical.
# 2. Speed: criterion's mean of `jerk_profile/plan` from both builds' bench
#    binaries (benches/jerk_profile.rs), ROUNDS rounds interleaved (the
#    order alternating), then the median and range of base/new per round.
# 3. With CALLGRIND=1: instructions per calculation (callgrind, the
#    bench's `count_plans` over the 4096 cases), each build.
#
#   scripts/jerk_ratio.sh BASE_REPO [ROUNDS=5]
#
# BASE_REPO: the other build's worktree (its target/release/usim and bench
# binary are built if missing, as are this build's). Honours N (20000) and
# MEASURE (criterion --measurement-time, s; 4). Needs python3 (numpy-free);
# the case generator is compare_ruckig.py's, without Ruckig.
set -euo pipefail
base_repo=$(cd "$1" && pwd)
rounds=${2:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
n=${N:-20000}
measure=${MEASURE:-4}
py=${USIM_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bench_bin() { # the bench binary of the repository $1 (built if missing)
    (cd "$1" && cargo bench --bench jerk_profile --no-run 2>&1) |
        grep -o '[^ (]*target/release/deps/jerk_profile-[0-9a-f]*' | tail -n 1
}
for r in "$base_repo" "$repo"; do
    [[ -x $r/target/release/usim ]] || (cd "$r" && cargo build --release --quiet --bin usim)
done
b_base=$(bench_bin "$base_repo")
b_new=$(bench_bin "$repo")
[[ $b_base == /* ]] || b_base=$base_repo/$b_base
[[ $b_new == /* ]] || b_new=$repo/$b_new

# 1. Same results on the comparison set.
"$py" - "$here/compare_ruckig.py" "$tmp" "$n" <<'EOF'
import random, sys, types
src = open(sys.argv[1]).read()
# only the case generator (the Ruckig import is not needed for it)
start = src.index("def case(")
end = src.index("def ruckig_duration(")
m = types.ModuleType("gen")
exec(src[start:end], m.__dict__)
out, n = sys.argv[2], int(sys.argv[3])
for mode in ["gen", "zero", "vzero", "out", "tiny", "huge", "same"]:
    for seed in [3, 5, 7]:
        rng = random.Random(seed)
        with open(f"{out}/{mode}-{seed}.csv", "w") as f:
            f.write("p0,v0,a0,pf,vf,af,vmax,amax,jmax\n")
            for _ in range(n):
                f.write(",".join(repr(x) for x in m.case(rng, mode)) + "\n")
EOF
at=$(seq -s, 0.25 0.5 7.75)
same=0
total=0
for f in "$tmp"/*.csv; do
    "$base_repo/target/release/usim" profile --batch "$f" --at "$at" >"$f.base"
    "$repo/target/release/usim" profile --batch "$f" --at "$at" >"$f.new"
    total=$((total + 1))
    if cmp -s "$f.base" "$f.new"; then
        same=$((same + 1))
    else
        echo "DIFFERENT: $(basename "$f") ($(diff "$f.base" "$f.new" | grep -c '^<') rows)"
    fi
done
rows=$(cat "$tmp"/*.csv.new | wc -l)
echo "results: $same of $total case files byte-identical ($((rows - total)) motions, duration and 16 states each)"

# 2. Criterion, interleaved.
mean_ns() { # criterion's middle estimate of the plan bench, in ns
    "$1" --bench 'jerk_profile/plan' --warm-up-time 1 --measurement-time "$measure" --noplot 2>&1 |
        sed -n 's/.*time: *\[[^ ]* [^ ]* \([0-9.]*\) \([nµu]s\).*/\1 \2/p' | head -n 1 |
        awk '{v=$1; if ($2 != "ns") v *= 1000; print v}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
range() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
    if ((r % 2)); then order=(base new); else order=(new base); fi
    line="round $r:"
    for b in "${order[@]}"; do
        if [[ $b == base ]]; then bin=$b_base; else bin=$b_new; fi
        t=$(mean_ns "$bin")
        echo "$t" >>"$tmp/$b.ns"
        line+=" $b $t ns;"
    done
    echo "$(tail -n 1 "$tmp/base.ns") / $(tail -n 1 "$tmp/new.ns")" | bc -l >>"$tmp/ratio"
    echo "$line speed-up $(printf %.3f "$(tail -n 1 "$tmp/ratio")")"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "plan: base $(median <"$tmp/base.ns") ns ($(range <"$tmp/base.ns")), new $(median <"$tmp/new.ns") ns ($(range <"$tmp/new.ns")), speed-up $(median <"$tmp/ratio" | xargs printf %.3f) ($(range <"$tmp/ratio" | awk -F- '{printf "%.3f-%.3f", $1, $2}'))"

# 3. Instructions per calculation.
if [[ ${CALLGRIND:-0} == 1 ]]; then
    for b in base new; do
        if [[ $b == base ]]; then bin=$b_base; else bin=$b_new; fi
        ir=$(JERK_PROFILE_COUNT=1 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
            --toggle-collect='*count_plans*' "$bin" 2>&1 | sed -n 's/.*I *refs: *//p' | tr -d ,)
        echo "callgrind $b: $((ir / 4096)) instructions per plan"
    done
fi
