"""Runs of the encounter set judged by an outside COLREG monitor: export to
CommonOcean scenario and solution files, evaluation by PyPI's
``commonocean-rules`` (with ``commonocean-io``; ``pip install
usim-marine[colreg]``), and per-run metrics (docs/benchmarks.md).

* :func:`tracks_of_run` / :meth:`EncounterCore.tracks
  <usim_marine.encounters.EncounterCore.tracks>`: a run as ship tracks
  (x, y m; heading and speed over ground, degrees and m/s).
* :func:`metrics`: least range between any two ships and when, the
  collisions, each ship's path deviation (largest distance from the
  straight line from its start to its goal, m).
* :func:`write_commonocean`: the own ship as the planning problem and the
  solution (``solution_ID.xml``), every other ship a dynamic obstacle of
  the scenario (``ID.xml``), sampled every 10 s (the monitor's step).
* :func:`judge`: read both files back with commonocean-io's readers and
  let commonocean-rules evaluate every ship: rules R_G1 (safe distance),
  R_G2 (safe speed), R_G3 (crossing), R_G4 (head-on), R_G5 (overtaking),
  R_G6 (stand-on), per other ship.
* ``python -m usim_marine.colreg [--set all|canonical|imazu] [--policy
  give-way|hold] [-o summary.csv]``: the whole set in one command, one
  row per scenario.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import math
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import scenarios as _sc

#: CommonOcean time step of the exported files, s (commonocean-rules'
#: temporal operators count steps of 10 s).
CO_DT = 10.0
#: Planning-problem id of the own ship (the solution's id).
EGO_ID = 1


def tracks_of_run(run: Any) -> Dict[str, np.ndarray]:
    """A :func:`usim_marine.replay` run of a multi-vehicle mission as
    tracks: ``t`` (s) and per vehicle a (T, 4) array of x, y, hog, sog."""
    names = run.vehicles
    vid = run["vehicle"] if len(names) > 1 else np.zeros(len(run), dtype=np.int64)
    out: Dict[str, np.ndarray] = {}
    for i, n in enumerate(names):
        sel = vid == i
        out[n] = np.stack([run["x"][sel], run["y"][sel], run["hog"][sel], run["sog"][sel]], axis=1)
        out["t"] = run["t"][sel]
    return out


def resample(tracks: Dict[str, np.ndarray], dt: float = CO_DT) -> Dict[str, np.ndarray]:
    """Tracks at every ``dt`` s from the first time (linear in x, y, speed;
    along the shorter turn in heading)."""
    t = tracks["t"]
    grid = np.arange(t[0], t[-1] + 1e-9, dt)
    out: Dict[str, np.ndarray] = {"t": grid}
    for n, a in tracks.items():
        if n == "t":
            continue
        h = np.degrees(np.unwrap(np.radians(a[:, 2])))
        out[n] = np.stack(
            [np.interp(grid, t, a[:, 0]), np.interp(grid, t, a[:, 1]), np.interp(grid, t, h) % 360.0, np.interp(grid, t, a[:, 3])],
            axis=1,
        )
    return out


def path_deviation(track: np.ndarray, start: Sequence[float], goal: Sequence[float]) -> float:
    """Largest distance of a track (x, y columns, m) from the straight line
    through ``start`` and ``goal``, m."""
    s, g = np.asarray(start, dtype=float), np.asarray(goal, dtype=float)
    d = g - s
    L = math.hypot(d[0], d[1])
    if L == 0:
        return float(np.max(np.hypot(track[:, 0] - s[0], track[:, 1] - s[1])))
    cross = (track[:, 0] - s[0]) * d[1] - (track[:, 1] - s[1]) * d[0]
    return float(np.max(np.abs(cross)) / L)


def metrics(tracks: Dict[str, np.ndarray], scenario: Optional[str] = None) -> Dict[str, Any]:
    """Per-run metrics: ``min_range`` (m, over all pairs) with ``t_min`` (s)
    and ``closest`` (the pair), ``collisions`` (pairs that came within
    one hull length), ``path_dev`` per ship (m, from its start to its goal
    in the scenario, or to its last position)."""
    names = [n for n in tracks if n != "t"]
    t = tracks["t"]
    best = (math.inf, 0.0, "")
    hits = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            r = np.hypot(tracks[a][:, 0] - tracks[b][:, 0], tracks[a][:, 1] - tracks[b][:, 1])
            k = int(np.argmin(r))
            if r[k] < best[0]:
                best = (float(r[k]), float(t[k]), f"{a}-{b}")
            if r[k] < _sc.COLLISION:
                hits.append(f"{a}-{b}")
    goals = {v.name: v.goal for v in _sc.vessels(scenario)} if scenario else {}
    dev = {}
    for n in names:
        tr = tracks[n]
        dev[n] = path_deviation(tr, tr[0, :2], goals.get(n, tr[-1, :2]))
    return {"min_range": best[0], "t_min": best[1], "closest": best[2], "collisions": hits, "path_dev": dev}


# ---------------------------------------------------------------- CommonOcean


def _states(a: np.ndarray, first_step: int = 0):
    from commonocean.scenario.state import YPState

    # CommonOcean: orientation in rad counter-clockwise from east (x).
    return [
        YPState(
            position=np.array([row[0], row[1]]),
            orientation=math.radians(90.0 - row[2]) % (2 * math.pi),
            velocity=float(row[3]),
            time_step=first_step + k,
        )
        for k, row in enumerate(a)
    ]


def write_commonocean(
    tracks: Dict[str, np.ndarray],
    directory: "str | os.PathLike[str]",
    name: str,
    ego: str = "own",
    goal: Optional[Sequence[float]] = None,
) -> Dict[str, Any]:
    """Write a run as CommonOcean files in ``directory``: the scenario
    ``NAME.xml`` (every ship but ``ego`` a dynamic obstacle, the ego's
    planning problem: its start, a goal box of 2 hull lengths around
    ``goal`` or its last position) and ``solution_NAME.xml`` (the ego's
    trajectory, vessel type Vessel1). Tracks are resampled every 10 s.
    Returns ``{"scenario": path, "solution": path, "ids": {obstacle id:
    ship}}``."""
    from commonocean.common.file_writer import CommonOceanFileWriter, OverwriteExistingFile
    from commonocean.common.solution import (
        CommonOceanSolutionWriter,
        CostFunction,
        PlanningProblemSolution,
        Solution,
        VesselModel,
        VesselType,
    )
    from commonocean.planning.goal import GoalRegion
    from commonocean.planning.planning_problem import PlanningProblem, PlanningProblemSet
    from commonocean.prediction.prediction import TrajectoryPrediction
    from commonocean.scenario.obstacle import DynamicObstacle, ObstacleType
    from commonocean.scenario.scenario import Scenario, ScenarioID, Tag
    from commonocean.scenario.state import InitialState
    from commonroad.scenario.state import CustomState
    from commonocean.scenario.trajectory import Trajectory
    from commonroad.common.util import Interval
    from commonroad.geometry.shape import Rectangle

    tr = resample(tracks)
    if ego not in tr:
        raise ValueError(f"no ship {ego!r} in the run (ships: {', '.join(n for n in tr if n != 't')})")
    os.makedirs(directory, exist_ok=True)
    sid = ScenarioID(country_id="ZAM", map_name="usim", map_id=1)
    sid.obstacle_behavior = "T"
    scenario = Scenario(CO_DT, sid, author="usim", affiliation="usim", source="usim_marine", tags={Tag.OPENSEA})
    ids = {EGO_ID: ego}
    shape = Rectangle(_sc.LENGTH, _sc.BEAM)
    oid = EGO_ID + 1
    for n, a in tr.items():
        if n in ("t", ego):
            continue
        st = _states(a)
        traj = Trajectory(1, st[1:])
        scenario.add_objects(DynamicObstacle(oid, ObstacleType.MOTORVESSEL, shape, st[0], TrajectoryPrediction(traj, shape)))
        ids[oid] = n
        oid += 1
    e = tr[ego]
    gx, gy = (e[-1, 0], e[-1, 1]) if goal is None else (float(goal[0]), float(goal[1]))
    init = InitialState(
        position=np.array([e[0, 0], e[0, 1]]),
        orientation=math.radians(90.0 - e[0, 2]) % (2 * math.pi),
        velocity=float(e[0, 3]),
        time_step=0,
    )
    box = Rectangle(4 * _sc.LENGTH, 4 * _sc.LENGTH, center=np.array([gx, gy]))
    region = GoalRegion([CustomState(position=box, time_step=Interval(0, len(e) - 1))])
    pps = PlanningProblemSet([PlanningProblem(EGO_ID, init, region)])
    scen_path = os.path.join(os.fspath(directory), f"{name}.xml")
    with contextlib.redirect_stdout(io.StringIO()):  # it prints "Replace file ..."
        CommonOceanFileWriter(scenario, pps).write_to_file(scen_path, OverwriteExistingFile.ALWAYS)
    sol = Solution(
        sid,
        [PlanningProblemSolution(EGO_ID, VesselModel.YP, VesselType.Vessel1, CostFunction.JB1, Trajectory(0, _states(e)))],
    )
    sol_name = f"solution_{name}.xml"
    CommonOceanSolutionWriter(sol).write_to_file(os.fspath(directory), sol_name, overwrite=True)
    return {"scenario": scen_path, "solution": os.path.join(os.fspath(directory), sol_name), "ids": ids}


def judge(scenario_path: str, solution_path: str, ids: Optional[Dict[int, str]] = None) -> Dict[str, Dict[str, bool]]:
    """Evaluate a written run with commonocean-rules: both files are read
    back with commonocean-io's readers, the solution's vessel joins the
    scenario's obstacles, and every ship is judged against every other.
    Returns ``{ship: {rule: satisfied}}`` with rules named ``R_G2`` (own
    speed) and ``R_Gn/OTHER`` for the pairwise ones (``ids`` names the
    obstacle ids; without it ships are named by id)."""
    import rules as _rules
    from commonocean.common.file_reader import CommonOceanFileReader
    from commonocean.common.solution import CommonOceanSolutionReader
    from rules.common.commonocean_evaluation_ship import CommonOceanObstacleEvaluation

    scenario, _pps = CommonOceanFileReader(scenario_path).open()
    sol = CommonOceanSolutionReader.open(solution_path)
    for ob in sol.create_dynamic_obstacle().values():
        scenario.add_objects(ob)
    ev = CommonOceanObstacleEvaluation(os.path.dirname(_rules.__file__) + os.sep)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = ev.evaluate_scenario(scenario, flag_print=False)
    if result is None:
        raise RuntimeError(f"commonocean-rules could not evaluate {scenario_path}: {buf.getvalue().strip()}")
    name = (lambda i: (ids or {}).get(i, str(i)))
    out: Dict[str, Dict[str, bool]] = {}
    for oid, res in result:
        row = {}
        for rule, ok in res.items():
            parts = rule.split("_veh_")
            row[parts[0] if len(parts) == 1 else f"{parts[0]}/{name(int(parts[1]))}"] = bool(ok)
        out[name(oid)] = row
    return out


def violations(judged: Dict[str, Dict[str, bool]]) -> List[str]:
    """The broken rules of a :func:`judge` result, as ``SHIP:RULE``."""
    return [f"{s}:{r}" for s, rs in judged.items() for r, ok in rs.items() if not ok]


# ---------------------------------------------------------------- the summary


def run_scenario(name: str, policy: str = "give-way", controlled: str = "all", max_steps: int = 600):
    """Run scenario ``name`` in the encounter env under a scripted policy
    (``give-way``: :meth:`EncounterCore.give_way_actions`; ``hold``: nobody
    gives way) and return the env's core (with its recorded tracks)."""
    from .encounters import EncounterCore

    core = EncounterCore([name], controlled=controlled, max_steps=max_steps, record=True)
    core.reset(0)
    for _ in range(max_steps):
        a = core.give_way_actions() if policy == "give-way" else core.hold_actions()
        core.step(a)
        if core.done[core.agent_idx].all():
            break
    return core


SUMMARY_COLUMNS = [
    "scenario",
    "policy",
    "ships",
    "min_range_m",
    "t_min_s",
    "closest",
    "collisions",
    "own_path_dev_m",
    "max_path_dev_m",
    "violations",
]


def summary(which: str = "all", policy: str = "give-way", controlled: str = "all", xml_dir: Optional[str] = None, judge_rules: bool = True) -> List[Dict[str, Any]]:
    """One row per scenario of set ``which`` (:data:`SUMMARY_COLUMNS`);
    with ``judge_rules`` each run is written to CommonOcean files (in
    ``xml_dir`` or a temporary directory) and judged."""
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = xml_dir or tmp
        for n in _sc.names(which):
            core = run_scenario(n, policy, controlled)
            tr = core.tracks(0)
            m = metrics(tr, n)
            viol = ""
            if judge_rules:
                own_goal = _sc.vessels(n)[0].goal
                files = write_commonocean(tr, out_dir, f"{n}_{policy}", goal=own_goal)
                viol = " ".join(violations(judge(files["scenario"], files["solution"], files["ids"])))
            rows.append(
                {
                    "scenario": n,
                    "policy": policy,
                    "ships": len(tr) - 1,
                    "min_range_m": round(m["min_range"], 1),
                    "t_min_s": m["t_min"],
                    "closest": m["closest"],
                    "collisions": " ".join(m["collisions"]),
                    "own_path_dev_m": round(m["path_dev"]["own"], 1),
                    "max_path_dev_m": round(max(m["path_dev"].values()), 1),
                    "violations": viol,
                }
            )
    return rows


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m usim_marine.colreg", description="Run and judge the encounter scenario set (docs/benchmarks.md).")
    p.add_argument("--set", default="all", choices=["all", "canonical", "imazu"])
    p.add_argument("--policy", default="give-way", choices=["give-way", "hold"])
    p.add_argument("--controlled", default="all", choices=["all", "own"], help="which ships follow the policy (the others hold course)")
    p.add_argument("--no-judge", action="store_true", help="metrics only (no commonocean-rules)")
    p.add_argument("--xml", metavar="DIR", help="keep the CommonOcean files in DIR")
    p.add_argument("-o", "--output", metavar="CSV", help="write the summary here (default: stdout)")
    a = p.parse_args(argv)
    rows = summary(a.set, a.policy, a.controlled, a.xml, not a.no_judge)
    f = open(a.output, "w", newline="") if a.output else sys.stdout
    try:
        w = csv.DictWriter(f, SUMMARY_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    finally:
        if a.output:
            f.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
