#!/usr/bin/env python3
"""Agent-steps per second of the encounter env (docs/benchmarks.md):
1,000 agents in 250 four-ship encounters (the Imazu problems 12-22 in
turn), stepped through the array interface (`EncounterEnv.core.step`) and
through PettingZoo's dicts (`EncounterEnv.step`), random actions.
    taskset -c 0 python scripts/bench_encounters.py [--rounds 5] [--steps 200]
(one core; `taskset -c 0,1` for two). Prints the median and range."""
import argparse
import statistics
import time

import numpy as np

from usim_marine.encounters import EncounterEnv

p = argparse.ArgumentParser()
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--steps", type=int, default=200)
a = p.parse_args()
imazu4 = [f"imazu_{k:02d}" for k in range(12, 23)]
names = [imazu4[i % len(imazu4)] for i in range(250)]
env = EncounterEnv(names, max_steps=10**6)
n = len(env.possible_agents)
assert n == 1000, n
rng = np.random.default_rng(0)
acts = rng.uniform(-1, 1, (a.steps, n, 2))
res = {"array": [], "dict": []}
for _ in range(a.rounds):
    env.reset(seed=1)
    t0 = time.perf_counter()
    for k in range(a.steps):
        env.core.step(acts[k])
    res["array"].append(n * a.steps / (time.perf_counter() - t0))
    env.reset(seed=1)
    d = [{ag: acts[k, i] for i, ag in enumerate(env.possible_agents)} for k in range(a.steps)]
    t0 = time.perf_counter()
    for k in range(a.steps):
        env.step(d[k])
    res["dict"].append(n * a.steps / (time.perf_counter() - t0))
for k, v in res.items():
    print(f"{k}: median {statistics.median(v) / 1e6:.3f} M agent-steps/s "
          f"(range {min(v) / 1e6:.3f}-{max(v) / 1e6:.3f} M; {a.rounds} rounds of {a.steps} env steps, "
          f"frame_skip {env.core.frame_skip})")
