#!/usr/bin/env python3
"""Compare `usim profile --batch` with Ruckig (pip install ruckig) on the same
random 1-DOF cases: failures on each side, duration mismatches, and the time
per calculation of Ruckig's Python binding (binding overhead included; our
own per-calculation time comes from `cargo bench --bench jerk_profile`).

Usage: scripts/compare_ruckig.py [--n 20000] [--seed 1] [--mode MODE]
       [--usim target/release/usim]
MODE: gen (default: start/target inside the limits), zero (rest to rest),
      vzero (zero accelerations), out (start anywhere up to 2x the limits),
      tiny (|pf - p0| <= 1e-9), huge (|pf - p0| up to 1e5), same (pf = p0).
Exit status 1 if usim fails where Ruckig succeeds or durations differ by
more than 1e-6 relative.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

try:
    from ruckig import InputParameter, Result, Ruckig, Trajectory
except ImportError:
    print("ruckig is not installed (pip install ruckig); skipped")
    sys.exit(0)


def case(rng, mode):
    vmax, amax, jmax = (rng.uniform(0.1, 10) for _ in range(3))

    def state(start):
        while True:
            v, a = rng.uniform(-vmax, vmax), rng.uniform(-amax, amax)
            if mode == "zero":
                v = a = 0.0
            if mode == "vzero":
                a = 0.0
            w = v + a * abs(a) / (2 * jmax) if start else v - a * abs(a) / (2 * jmax)
            if -vmax <= w <= vmax:
                return v, a

    p0, pf = rng.gauss(0, 4), rng.gauss(0, 4)
    if mode == "tiny":
        pf = p0 + rng.uniform(-1e-9, 1e-9)
    if mode == "huge":
        pf = p0 + rng.uniform(-1e5, 1e5)
    if mode == "same":
        pf = p0
    (v0, a0), (vf, af) = state(True), state(False)
    if mode == "out":
        v0, a0 = rng.uniform(-2 * vmax, 2 * vmax), rng.uniform(-2 * amax, 2 * amax)
    return [p0, v0, a0, pf, vf, af, vmax, amax, jmax]


def ruckig_duration(c, otg, inp, traj):
    inp.current_position, inp.current_velocity, inp.current_acceleration = [c[0]], [c[1]], [c[2]]
    inp.target_position, inp.target_velocity, inp.target_acceleration = [c[3]], [c[4]], [c[5]]
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = [c[6]], [c[7]], [c[8]]
    try:
        r = otg.calculate(inp, traj)
    except Exception:  # ruckig.RuckigError: a failed calculation
        return None
    return traj.duration if r == Result.Working else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mode", default="gen")
    ap.add_argument("--usim", default="target/release/usim")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    cases = [case(rng, args.mode) for _ in range(args.n)]

    otg, inp, traj = Ruckig(1), InputParameter(1), Trajectory(1)
    t0 = time.perf_counter()
    ruck = [ruckig_duration(c, otg, inp, traj) for c in cases]
    t_ruck = (time.perf_counter() - t0) / len(cases)

    ours = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cases.csv")
        with open(path, "w") as f:
            f.write("p0,v0,a0,pf,vf,af,vmax,amax,jmax\n")
            f.writelines(",".join(repr(x) for x in c) + "\n" for c in cases)
        # A row usim cannot plan stops the batch with an error naming it.
        t0 = time.perf_counter()
        p = subprocess.run([args.usim, "profile", "--batch", path], capture_output=True, text=True)
        t_usim = (time.perf_counter() - t0) / len(cases)
        if p.returncode == 0:
            ours = [float(line.rsplit(",", 1)[1]) for line in p.stdout.splitlines()[1:]]
        else:
            print("batch failed:", p.stderr.strip())
            return 1

    r_fail = sum(r is None for r in ruck)
    bad, worst = 0, 0.0
    for c, r, o in zip(cases, ruck, ours):
        if r is None:
            continue
        rel = abs(r - o) / max(r, 1e-9)
        worst = max(worst, rel)
        if rel > 1e-6:
            bad += 1
            if bad <= 5:
                print("differs:", c, "ruckig", r, "usim", o)
    print(f"mode={args.mode} n={len(cases)} ruckig_failures={r_fail} usim_failures=0 "
          f"duration_mismatches={bad} worst_rel_diff={worst:.3g}")
    print(f"ruckig (Python binding) {t_ruck * 1e6:.2f} us/calc; "
          f"usim profile --batch (process + CSV I/O) {t_usim * 1e6:.2f} us/row")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
