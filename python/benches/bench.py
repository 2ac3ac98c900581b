"""Figures of the Python package (docs/python.md): run with
scripts/bench_python.sh. Medians of rounds, with the range.

1. Fleet.step with 1,000 vehicles from Python: vehicle-steps/s, and the
   ratio to the same BatchFleet stepped from Rust alone (_bench_native).
2. The vector env with 1,000 sub-environments against Gymnasium's
   SyncVectorEnv over 1,000 single environments: env-steps/s and ratio.
3. usim_marine.replay of missions/long_survey.toml against `usim replay`
   to a CSV plus numpy.loadtxt / pandas.read_csv of it.
4. The cost of the history a Fleet keeps for pickle: Fleet.step with the
   default history against history_bytes=0, interleaved, for --n vehicles
   and for one; and the time to pickle and to load a fleet.
5. render(): frames per second of a 10-vessel scene (_render_scene, 400 x
   400, each vessel with a 1,500-point track, goals and CPA lines) and of
   WaypointFollow-v0's rgb_array render() mid-episode.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

import numpy as np

import usim_marine as usim

REPO = pathlib.Path(__file__).resolve().parents[2]
KAYAK = str(REPO / "configs" / "kayak.toml")


def med(xs):
    return statistics.median(xs), min(xs), max(xs)


def fmt(name, xs, unit):
    m, lo, hi = med(xs)
    print(f"{name}: median {m:,.0f} {unit} (range {lo:,.0f} – {hi:,.0f}, {len(xs)} rounds)")
    return m


def fleet(rounds, n, steps):
    f = usim.Fleet(KAYAK, n)
    a = np.column_stack([np.full(n, 60.0), (np.arange(n) % 200) - 100.0])
    py, nat = [], []
    for _ in range(rounds):
        f.reset()
        t0 = time.perf_counter()
        for _ in range(steps):
            f.step(a)
        py.append(n * steps / (time.perf_counter() - t0))
        nat.append(n * steps / usim._bench_native(KAYAK, n, steps))
    p = fmt(f"Fleet.step, {n} vehicles, from Python", py, "vehicle-steps/s")
    q = fmt(f"BatchFleet.step, {n} vehicles, Rust alone", nat, "vehicle-steps/s")
    ratios = [a / b for a, b in zip(py, nat)]
    m, lo, hi = med(ratios)
    print(f"  ratio Python / native: median {m:.1%} (range {lo:.1%} – {hi:.1%})")
    return p, q


def vector(rounds, n, steps):
    import gymnasium as gym
    from usim_marine.envs import WaypointFollowEnv, WaypointFollowVectorEnv

    ours = WaypointFollowVectorEnv(num_envs=n)
    sync = gym.vector.SyncVectorEnv([lambda: WaypointFollowEnv() for _ in range(n)])
    a = np.tile(np.array([[0.5, 0.1]], dtype=np.float32), (n, 1))
    res = {"vector env (Fleet)": [], "SyncVectorEnv": []}
    for _ in range(rounds):
        for name, env, k in (("vector env (Fleet)", ours, steps), ("SyncVectorEnv", sync, max(steps // 20, 5))):
            env.reset(seed=0)
            t0 = time.perf_counter()
            for _ in range(k):
                env.step(a)
            res[name].append(n * k / (time.perf_counter() - t0))
    x = fmt(f"vector env, {n} sub-envs", res["vector env (Fleet)"], "env-steps/s")
    y = fmt(f"SyncVectorEnv, {n} WaypointFollowEnv", res["SyncVectorEnv"], "env-steps/s")
    print(f"  ratio: {x / y:.0f}×")


def replay(rounds, cli):
    mission = REPO / "missions" / "long_survey.toml"
    ours, via_np, via_pd = [], [], []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "run.csv")
        for _ in range(rounds):
            t0 = time.perf_counter()
            run = usim.replay(mission)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([cli, "replay", str(mission), "-o", out, "-q"], check=True)
            t1 = time.perf_counter()
            np.loadtxt(out, delimiter=",", skiprows=1)
            via_np.append(time.perf_counter() - t0)
            try:
                import pandas as pd

                t2 = time.perf_counter()
                pd.read_csv(out)
                via_pd.append(t1 - t0 + time.perf_counter() - t2)
            except ImportError:
                pass
    ms = lambda xs: [x * 1e3 for x in xs]  # noqa: E731
    print(f"replay of long_survey.toml ({len(run)} rows):")
    a = fmt("  usim_marine.replay", ms(ours), "ms")
    b = fmt("  usim replay -o CSV + numpy.loadtxt", ms(via_np), "ms")
    print(f"    ratio {b / a:.1f}×")
    if via_pd:
        c = fmt("  usim replay -o CSV + pandas.read_csv", ms(via_pd), "ms")
        print(f"    ratio {c / a:.1f}×")


def history(rounds, n, steps):
    import pickle

    for m in (n, 1):
        k = steps if m > 1 else steps * 100
        a = np.column_stack([np.full(m, 60.0), (np.arange(m) % 200) - 100.0])
        res = {"with history": [], "history_bytes=0": []}
        for r in range(rounds):
            order = list(res) if r % 2 == 0 else list(res)[::-1]
            for name in order:
                f = usim.Fleet(KAYAK, m, history_bytes=0 if name == "history_bytes=0" else 256 << 20)
                f.reset()
                t0 = time.perf_counter()
                for _ in range(k):
                    f.step(a)
                res[name].append(m * k / (time.perf_counter() - t0))
        x = fmt(f"Fleet.step, {m} vehicles, with history", res["with history"], "vehicle-steps/s")
        y = fmt(f"Fleet.step, {m} vehicles, history_bytes=0", res["history_bytes=0"], "vehicle-steps/s")
        ratios = [p / q for p, q in zip(res["with history"], res["history_bytes=0"])]
        med_r, lo, hi = med(ratios)
        print(f"  ratio with / without: median {med_r:.1%} (range {lo:.1%} – {hi:.1%})")
    f = usim.Fleet(KAYAK, n)
    a = np.column_stack([np.full(n, 60.0), (np.arange(n) % 200) - 100.0])
    for _ in range(steps):
        f.step(a)
    dump, load = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        blob = pickle.dumps(f)
        dump.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        pickle.loads(blob)
        load.append((time.perf_counter() - t0) * 1e3)
    print(f"pickle of a {n}-vehicle fleet after {steps} steps ({len(blob):,} bytes):")
    fmt("  pickle.dumps", dump, "ms")
    fmt("  pickle.loads (replays the steps)", load, "ms")
    import copy

    for hist in (100, 10_000):
        v = usim.Vehicle(KAYAK)
        for k in range(hist):
            v.post("DESIRED_THRUST", 60.0)
            v.post("DESIRED_RUDDER", float(k % 50))
            v.step()
        us = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(1000):
                copy.deepcopy(v)
            us.append((time.perf_counter() - t0) * 1e3)
        m, lo, hi = med(us)
        print(f"copy.deepcopy(Vehicle) after {hist:,} posted steps: median {m:.2f} µs (range {lo:.2f} – {hi:.2f})")


def render(rounds, frames=200):
    from usim_marine import _usim

    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 1500)[:, None]
    vessels = []
    for i in range(10):
        a = rng.uniform(0, 2 * np.pi)
        start = rng.uniform(-400, 400, 2)
        track = start + t * 300 * np.array([np.sin(a), np.cos(a)]) + 20 * np.sin(8 * t)
        vessels.append((float(track[-1, 0]), float(track[-1, 1]), float(np.degrees(a)), 12.0, track))
    goals = [(float(x), float(y), 15.0, k == 0) for k, (x, y) in enumerate(rng.uniform(-500, 500, (10, 2)))]
    lines = [((vessels[k][0], vessels[k][1]), (vessels[k + 1][0], vessels[k + 1][1])) for k in range(0, 10, 2)]
    scene, env_fps = [], []
    try:
        import gymnasium as gym

        env = gym.make("usim/WaypointFollow-v0", render_mode="rgb_array")
        env.reset(seed=0)
        for _ in range(500):
            env.step(np.array([0.6, 0.2], dtype=np.float32))
    except ImportError:
        env = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(frames):
            _usim._render_scene(400, 400, (-600.0, -600.0, 600.0, 600.0), vessels, goals, lines)
        scene.append(frames / (time.perf_counter() - t0))
        if env is not None:
            t0 = time.perf_counter()
            for _ in range(frames):
                env.render()
            env_fps.append(frames / (time.perf_counter() - t0))
    fmt("_render_scene, 10 vessels, 400 x 400", scene, "frames/s")
    if env_fps:
        fmt("WaypointFollow-v0 render(), 400 x 400", env_fps, "frames/s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--cli", default=str(REPO / "target" / "release" / "usim"))
    ap.add_argument("--only", choices=["fleet", "vector", "replay", "history", "render"])
    a = ap.parse_args()
    print(f"load average: {os.getloadavg()}")
    if a.only in (None, "fleet"):
        fleet(a.rounds, a.n, a.steps)
    if a.only in (None, "vector"):
        vector(a.rounds, a.n, max(a.steps // 5, 20))
    if a.only in (None, "replay"):
        replay(a.rounds, a.cli)
    if a.only in (None, "history"):
        history(a.rounds, a.n, a.steps)
    if a.only in (None, "render"):
        render(a.rounds)
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
