"""The encounter scenario set (docs/benchmarks.md): the canonical
two-ship encounters and the 22 Imazu problems, as usim fleet missions with
each pair's COLREG situation and stand-on / give-way roles.

Geometry (every scenario): the own ship ``own`` heads north (0°) at
:data:`SPEED` m/s and every target ship ``ts1``, ``ts2``, ... is placed so
that all of them would reach the origin at the same time :data:`TCPA` s
after the start if nobody gave way (a collision course, CPA 0 m). Each
vessel's goal is where its straight course would take it after
``2 · TCPA``, i.e. as far beyond the origin as it started before it.
Overtaken target ships sail at :data:`SLOW` m/s.

The Imazu problems (Imazu 1987, as laid out by Sawada et al. 2021): 1–4
one target, 5–11 two, 12–22 three; the target headings (degrees, 0 =
north, clockwise) are in :data:`IMAZU`.

``python -m usim_marine.scenarios DIR`` writes every scenario as
``DIR/NAME.toml`` (a mission ``usim replay`` runs: every ship holds its
course and speed, the unmitigated encounter) and ``DIR/index.toml`` (the
roles); the repository's copies are in ``missions/encounters/``.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Dict, List, Sequence, Tuple

#: Own-ship speed and the target ships' usual speed, m/s (about 10 kn).
SPEED = 5.0
#: Speed of a ship that is overtaken, m/s.
SLOW = 2.0
#: Time from the start to the common CPA at the origin, s.
TCPA = 600.0
#: Hull length and beam, m: CommonOcean's ``Vessel1`` (the vessel type
#: of the solution files, commonocean-io's ``vessel_parameters``).
LENGTH = 175.0
BEAM = 25.4
#: Encounter ranges of the missions, m: closer than NEAR_MISS is a near
#: miss, closer than COLLISION (one hull length) a collision.
NEAR_MISS = 1000.0
COLLISION = 175.0
#: Mission step and length, s; rows are written every 10 s (the
#: CommonOcean time step).
DT = 0.5
DURATION = 2 * TCPA
OUTPUT_EVERY = 20

#: The ship all scenarios use: a classic uSimMarine vehicle whose thrust
#: map gives 8 m/s at 100 % (5 m/s at 62.5 %), turning at
#: rudder · 0.1 · thrust/50 deg/s (2.5 deg/s at 20 % rudder and 5 m/s,
#: losing 17 % of its speed in the turn: docs/model.md §7, §8).
SHIP: Dict[str, object] = {
    "name": "ship",
    "prefix": "NAV",
    "start_pos": "x=0, y=0, heading=0, speed=0",
    "thrust_map": "0:0, 100:8",
    "turn_rate": 10,
    "max_acceleration": 0.1,
    "max_deceleration": 0.2,
    "max_rudder_degs_per_sec": 10,
}

#: Thrust (percent) that holds a speed (m/s) on :data:`SHIP`'s thrust map.
def thrust_for(speed: float) -> float:
    return 100.0 * speed / 8.0


#: The canonical encounters: target heading (degrees), its speed, the own
#: ship's speed (m/s).
CANONICAL: Dict[str, Tuple[float, float, float]] = {
    "head_on": (180.0, SPEED, SPEED),
    "crossing_starboard": (270.0, SPEED, SPEED),
    "crossing_port": (90.0, SPEED, SPEED),
    "overtaking": (0.0, SLOW, SPEED),
    "overtaken": (0.0, SPEED, SLOW),
}

#: Imazu problem number → target headings (degrees); the targets marked
#: in :data:`IMAZU_SLOW` are the slow ships the own ship overtakes.
IMAZU: Dict[int, Tuple[float, ...]] = {
    1: (180,),
    2: (270,),
    3: (0,),
    4: (45,),
    5: (180, 270),
    6: (350, 315),
    7: (0, 315),
    8: (180, 270),
    9: (330, 270),
    10: (270, 15),
    11: (90, 330),
    12: (180, 315, 350),
    13: (180, 10, 45),
    14: (350, 315, 270),
    15: (0, 315, 270),
    16: (45, 90, 270),
    17: (0, 10, 315),
    18: (225, 345, 330),
    19: (15, 345, 225),
    20: (0, 345, 270),
    21: (345, 15, 270),
    22: (0, 315, 270),
}
IMAZU_SLOW = {3: {0}, 7: {0}, 15: {0}, 17: {0}, 20: {0}, 22: {0}}


class Vessel:
    """One ship of a scenario: start (x, y m, heading degrees, speed m/s)
    and goal (x, y m)."""

    __slots__ = ("name", "x", "y", "heading", "speed", "goal")

    def __init__(self, name: str, heading: float, speed: float) -> None:
        self.name = name
        self.heading = float(heading) % 360.0
        self.speed = float(speed)
        s, c = math.sin(math.radians(self.heading)), math.cos(math.radians(self.heading))
        run = self.speed * TCPA
        # Clean zeros: -0.0 and 1e-13 would print badly in the mission.
        self.x = _tidy(-run * s)
        self.y = _tidy(-run * c)
        self.goal = (_tidy(run * s), _tidy(run * c))


def _tidy(v: float) -> float:
    r = round(v, 6)
    return 0.0 if r == 0 else r


def situation(own: Vessel, other: Vessel) -> Tuple[str, str, str]:
    """The COLREG situation of a pair at the start and the two roles:
    (``head-on`` | ``crossing`` | ``overtaking``, role of ``own``, role of
    ``other``), roles ``give-way`` or ``stand-on``. Head-on (Rule 14):
    each sees the other within 6° of its bow on a reciprocal course, both
    give way. Overtaking (Rule 13): one is more than 22.5° abaft the
    other's beam (a bearing in (112.5°, 247.5°) from its heading) and
    faster; it gives way. Crossing (Rule 15): the ship that has the other
    on her starboard side gives way."""
    b_own = _rel_bearing(own, other)  # where other is, seen from own
    b_other = _rel_bearing(other, own)
    ahead = lambda b: b < 6.0 or b > 354.0  # noqa: E731
    astern = lambda b: 112.5 < b < 247.5  # noqa: E731
    if ahead(b_own) and ahead(b_other):
        return "head-on", "give-way", "give-way"
    if astern(b_other) and own.speed > other.speed:
        return "overtaking", "give-way", "stand-on"
    if astern(b_own) and other.speed > own.speed:
        return "overtaking", "stand-on", "give-way"
    if 0.0 < b_own < 180.0:
        return "crossing", "give-way", "stand-on"
    return "crossing", "stand-on", "give-way"


def _rel_bearing(a: Vessel, b: Vessel) -> float:
    """Bearing of b from a relative to a's heading, degrees in [0, 360)."""
    brg = math.degrees(math.atan2(b.x - a.x, b.y - a.y))
    return (brg - a.heading) % 360.0


def vessels(name: str) -> List[Vessel]:
    """The ships of scenario ``name`` (see :func:`names`), own ship first."""
    if name in CANONICAL:
        h, v, own_v = CANONICAL[name]
        return [Vessel("own", 0.0, own_v), Vessel("ts1", h, v)]
    if name.startswith("imazu_"):
        try:
            k = int(name[len("imazu_") :])
            heads = IMAZU[k]
        except (ValueError, KeyError):
            raise KeyError(f"unknown scenario {name!r}: one of {', '.join(names())}") from None
        slow = IMAZU_SLOW.get(k, set())
        out = [Vessel("own", 0.0, SPEED)]
        for i, h in enumerate(heads):
            out.append(Vessel(f"ts{i + 1}", h, SLOW if i in slow else SPEED))
        return out
    raise KeyError(f"unknown scenario {name!r}: one of {', '.join(names())}")


def names(which: str = "all") -> List[str]:
    """Scenario names: ``canonical`` (5), ``imazu`` (22) or ``all``."""
    can = list(CANONICAL)
    imz = [f"imazu_{k:02d}" for k in IMAZU]
    if which == "canonical":
        return can
    if which == "imazu":
        return imz
    if which == "all":
        return can + imz
    raise ValueError(f"scenario set {which!r}: one of canonical, imazu, all")


def pairs(name: str) -> List[Tuple[str, str, str, str, str]]:
    """Every pair of scenario ``name`` with the own ship: (own, other,
    situation, own's role, other's role), as :func:`situation` judges them
    at the start."""
    vs = vessels(name)
    return [(vs[0].name, o.name) + situation(vs[0], o) for o in vs[1:]]


def mission_toml(name: str) -> str:
    """Scenario ``name`` as a usim fleet mission (TOML text): every ship
    holds its course at constant thrust from t = 0."""
    vs = vessels(name)
    lines = [
        f"# Encounter scenario {name} (docs/benchmarks.md), written by",
        "# `python -m usim_marine.scenarios missions/encounters`: do not edit.",
        "# Every ship holds course and speed (no one gives way): all would",
        f"# meet at the origin at t = {TCPA:g} s. Roles (own ship's pairs):",
    ]
    for own, other, sit, r1, r2 in pairs(name):
        lines.append(f"#   {own}-{other}: {sit}, {own} {r1}, {other} {r2}")
    lines += [
        "[mission]",
        f'name = "{name}"',
        f'description = "encounter {name}: {len(vs)} ships on a collision course"',
        f"dt = {DT}",
        f"duration = {DURATION}",
        f"output_every = {OUTPUT_EVERY}",
        f"near_miss = {NEAR_MISS}",
        f"collision = {COLLISION}",
    ]
    for v in vs:
        lines += ["", "[[vehicle]]", f'name = "{v.name}"']
        for key, val in SHIP.items():
            if key == "name":
                continue
            if key == "start_pos":
                val = f"x={v.x:g}, y={v.y:g}, heading={v.heading:g}, speed={v.speed:g}"
            lines.append(f"{key} = {_toml(val)}")
    for v in vs:
        lines += [
            "",
            "[[post]]",
            f'vehicle = "{v.name}"',
            "t = 0.0",
            'var = "DESIRED_THRUST"',
            f"value = {thrust_for(v.speed)!r}",
        ]
    return "\n".join(lines) + "\n"


def _toml(v: object) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    return repr(v)


def index_toml(which: str = "all") -> str:
    """The index of the scenario set: per scenario its file, ships (start,
    goal) and the own ship's pairs with their roles."""
    out = [
        "# The encounter scenario set (docs/benchmarks.md), written by",
        "# `python -m usim_marine.scenarios missions/encounters`: do not edit.",
        f"tcpa = {TCPA}",
        f"length = {LENGTH}",
        "",
    ]
    for n in names(which):
        out += [f"[{n}]", f'mission = "{n}.toml"']
        out.append(
            "ships = ["
            + ", ".join(
                f'{{ name = "{v.name}", x = {v.x!r}, y = {v.y!r}, heading = {v.heading!r}, '
                f"speed = {v.speed!r}, goal = [{v.goal[0]!r}, {v.goal[1]!r}] }}"
                for v in vessels(n)
            )
            + "]"
        )
        out.append(
            "pairs = ["
            + ", ".join(
                f'{{ a = "{a}", b = "{b}", situation = "{s}", role_a = "{ra}", role_b = "{rb}" }}'
                for a, b, s, ra, rb in pairs(n)
            )
            + "]"
        )
        out.append("")
    return "\n".join(out)


def write_missions(directory: "str | os.PathLike[str]") -> List[str]:
    """Write every scenario's mission and the index into ``directory``;
    returns the paths written."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for n in names():
        p = os.path.join(directory, f"{n}.toml")
        with open(p, "w") as f:
            f.write(mission_toml(n))
        paths.append(p)
    p = os.path.join(directory, "index.toml")
    with open(p, "w") as f:
        f.write(index_toml())
    paths.append(p)
    return paths


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python -m usim_marine.scenarios DIR", file=sys.stderr)
        return 2
    for p in write_missions(argv[0]):
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
