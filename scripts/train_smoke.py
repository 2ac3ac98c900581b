#!/usr/bin/env python3
"""A short training smoke (a benchmark script, not a test): the cross-entropy
method (CEM, in numpy) on a linear policy for a usim Gymnasium task, every
candidate of a generation run in one vector env (one Fleet call a step).
It prints the population's mean and best return per generation, so one
sees whether the return improves over a few thousand env steps.

    scripts/train_smoke.py [--env usim/WaypointFollow-v0] [--generations 12]
                           [--population 32] [--steps 150] [--seed 0]

Needs usim_marine installed with the [gym] extra (pip install './python[gym]').
"""

import argparse
import time

import numpy as np
import gymnasium as gym

import usim_marine  # noqa: F401  (registers the environments)


def evaluate(env_id, weights, steps, seed):
    """Return of each candidate (rows of ``weights``, (pop, 2, obs + 1)) over
    its first episode of at most ``steps`` env steps, all from the same
    seeded starts (common random numbers)."""
    pop = len(weights)
    venv = gym.make_vec(env_id, num_envs=pop, vectorization_mode="vector_entry_point",
                        max_steps=steps)
    obs, _ = venv.reset(seed=seed)
    ret = np.zeros(pop)
    alive = np.ones(pop, dtype=bool)
    for _ in range(steps):
        x = np.concatenate([obs, np.ones((pop, 1), dtype=np.float32)], axis=1)
        act = np.tanh(np.einsum("pij,pj->pi", weights, x)).astype(np.float32)
        obs, r, term, trunc, _ = venv.step(act)
        ret += np.where(alive, r, 0.0)
        alive &= ~(term | trunc)
        if not alive.any():
            break
    venv.close()
    return ret


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="usim/WaypointFollow-v0")
    ap.add_argument("--generations", type=int, default=12)
    ap.add_argument("--population", type=int, default=32)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--elite", type=float, default=0.25)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    probe = gym.make(a.env)
    shape = (2, probe.observation_space.shape[0] + 1)
    rng = np.random.default_rng(a.seed)
    mean, std = np.zeros(shape), np.full(shape, 0.5)
    n_elite = max(2, int(a.elite * a.population))
    t0, total = time.perf_counter(), 0
    print(f"{a.env}: CEM, population {a.population}, {a.steps} steps an episode")
    for g in range(a.generations):
        w = mean + std * rng.standard_normal((a.population, *shape))
        ret = evaluate(a.env, w, a.steps, a.seed + g)
        total += a.population * a.steps
        elite = w[np.argsort(ret)[-n_elite:]]
        mean, std = elite.mean(axis=0), elite.std(axis=0) + 0.02
        print(f"gen {g:2d}: mean return {ret.mean():8.2f}  best {ret.max():8.2f}  "
              f"(at most {total} env steps so far)")
    final = evaluate(a.env, np.repeat(mean[None], 8, axis=0), a.steps, a.seed + 1000)
    print(f"the mean policy on new seeds: {final.mean():.2f}; "
          f"{time.perf_counter() - t0:.1f} s wall")


if __name__ == "__main__":
    main()
