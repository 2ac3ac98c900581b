"""usim as a Python library: the uSimMarine-compatible marine vehicle model
at native speed, with the exact numbers of the ``usim`` command line.

* :func:`replay` runs a mission like ``usim replay`` and returns numpy
  columns (the same floats as the CSV), the posts log and encounters.
* :class:`Vehicle` is one vehicle stepped by hand (classic or V22/PID),
  fed with messages parsed exactly as MQTT payloads.
* :class:`Fleet` steps ``n`` vehicles from an ``(n, k)`` setpoint array and
  returns an ``(n, m)`` state array (reinforcement learning, Monte Carlo).
* :func:`sweep` runs a sweep file in-process: the summary of ``usim sweep``.
* ``usim/WaypointFollow-v0``, ``usim/StationKeeping-v0``,
  ``usim/PathFollowing-v0`` and ``usim/Docking-v0`` (Gymnasium, with
  ``pip install usim-marine[gym]``) are registered on import, each with a
  vector version on :class:`Fleet`.

Units: x east and y north in m, speeds in m/s, headings in marine degrees
(0 = north, 90 = east, clockwise), pitch and yaw in radians, actuators in
percent. Errors: :class:`ConfigError` (file:line: key) and
:class:`MessageError` (the variable) are both ``ValueError``;
:class:`SetpointWarning` (a ``UserWarning``) flags a thrust past ±100 %.
``Vehicle`` and ``Fleet`` pickle and deep-copy (bit for bit).
"""

# The namespace holds only the package's own names (``dir(usim_marine)``):
# the typing helpers and modules it uses are imported under private names.
import csv as _csv
import io as _io
import os as _os
from typing import Any as _Any, Dict as _Dict, List as _List, Optional as _Optional

import numpy as _np

from ._usim import (  # noqa: F401
    CSV_HEADER,
    ConfigError,
    Fleet,
    MessageError,
    SetpointWarning,
    State,
    Vehicle,
    _mission_info,
    _replay,
    _sweep,
    _bench_native,
)

__all__ = [
    "replay",
    "Run",
    "Vehicle",
    "Fleet",
    "State",
    "sweep",
    "SweepResult",
    "mission_info",
    "ConfigError",
    "MessageError",
    "SetpointWarning",
    "CSV_HEADER",
]

__version__ = "0.1.0"


def _table(text: _Optional[str]) -> _Optional[_Dict[str, _Any]]:
    """Columns of a CSV text: numeric columns as float64 arrays, the others
    as lists of str (None for no text)."""
    if text is None:
        return None
    rows = list(_csv.reader(_io.StringIO(text)))
    if not rows:
        return {}
    header, body = rows[0], rows[1:]
    out: _Dict[str, _Any] = {}
    for j, name in enumerate(header):
        col = [r[j] if j < len(r) else "" for r in body]
        try:
            out[name] = _np.array([float(v) for v in col], dtype=_np.float64)
        except ValueError:
            out[name] = col
    return out


class Run:
    """The result of :func:`replay`: one numpy array per CSV column.

    ``run["x"]`` (or ``run.x``) is the ``x`` column, m; ``run.columns`` lists
    the names in CSV order (``vehicle`` first for a multi-vehicle mission,
    as an int64 index into ``run.vehicles``); ``k`` is int64, every other
    column float64 with exactly the numbers ``usim replay`` prints (``t``
    rounded to the microsecond as the CSV does, NaN where the CSV says
    ``nan``). ``posts`` and ``encounters`` are dicts of columns when asked
    for (``posts_csv``/``encounters_csv``: the exact text of ``--posts`` /
    ``--encounters``); ``dropped`` lists ``(k, line, reason)`` of messages
    the vehicle dropped.
    """

    def __init__(self, raw: tuple) -> None:
        names, k, vehicle, values, vnames, posts_csv, enc_csv, dropped = raw
        self.vehicles: _List[str] = list(vnames)
        self._cols: _Dict[str, _np.ndarray] = {}
        if len(self.vehicles) > 1:
            self._cols["vehicle"] = vehicle
        self._cols["k"] = k
        for n, v in zip(names, values):
            self._cols[n] = v
        self.posts_csv: _Optional[str] = posts_csv
        self.encounters_csv: _Optional[str] = enc_csv
        self.posts = _table(posts_csv)
        self.encounters = _table(enc_csv)
        self.dropped = list(dropped)

    @property
    def columns(self) -> _List[str]:
        """Column names, in CSV order."""
        return list(self._cols)

    def __getitem__(self, name: str) -> _np.ndarray:
        return self._cols[name]

    def __getattr__(self, name: str) -> _np.ndarray:
        cols = self.__dict__.get("_cols", {})
        if name in cols:
            return cols[name]
        raise AttributeError(name)

    def __len__(self) -> int:
        return len(self._cols["k"])

    def as_array(self) -> _np.ndarray:
        """The float columns after ``k`` as one ``(rows, 26)`` float64 array."""
        return _np.column_stack([self._cols[n] for n in State.names])

    def to_pandas(self):
        """The run as a ``pandas.DataFrame`` (needs ``usim-marine[pandas]``);
        a multi-vehicle run's ``vehicle`` column holds the names."""
        import pandas as pd

        data = dict(self._cols)
        if "vehicle" in data:
            data["vehicle"] = _np.array(self.vehicles, dtype=object)[data["vehicle"]]
        return pd.DataFrame(data)

    def __repr__(self) -> str:
        return f"Run(rows={len(self)}, vehicles={self.vehicles})"


def replay(
    mission: _Any,
    *,
    math: _Optional[str] = None,
    posts: bool = False,
    encounters: bool = False,
    max_bytes: int = 4 << 30,
) -> Run:
    """Run ``mission`` exactly as ``usim replay`` does and return a :class:`Run`.

    mission: a mission file path, its TOML text, or a dict of its tables
    (relative paths in text and dicts are relative to the working directory).
    math: ``"libm"`` or ``"fast"`` overrides every vehicle's trigonometry
    (``"libm"`` is bit-identical to the C++ uSimMarine on the golden runs).
    posts / encounters: also return the posts log / the encounters.
    max_bytes: refuse (``ValueError``) before running a replay whose rows
    would need more memory than this.

    Raises :class:`ConfigError` (file, line, key) for a bad mission. The
    GIL is released while it runs; Ctrl-C stops it (``KeyboardInterrupt``).
    """
    return Run(
        _replay(mission, math=math, posts=posts, encounters=encounters, max_bytes=max_bytes)
    )


def mission_info(mission: _Any, math: _Optional[str] = None) -> _Dict[str, _Any]:
    """A mission's timing (``start_time``, ``dt`` or ``dt_pattern`` in s,
    ``steps``, ``output_every``), its ``vehicles`` (names) and ``posts`` as
    ``(t, var, value, vehicle_index, line)`` in file order: what a
    :class:`Vehicle` needs to reproduce a replay by hand."""
    return _mission_info(mission, math)


class SweepResult:
    """The summary of :func:`sweep`: ``csv`` is the exact text ``usim sweep
    SPEC -o SUMMARY.csv`` writes; ``columns`` maps each column name to a
    float64 array (a list of str for non-numeric columns); ``result[name]``
    is one column."""

    def __init__(self, text: str) -> None:
        self.csv = text
        self.columns: _Dict[str, _Any] = _table(text) or {}

    def __getitem__(self, name: str):
        return self.columns[name]

    def __len__(self) -> int:
        return max((len(v) for v in self.columns.values()), default=0)

    def to_pandas(self):
        """The summary as a ``pandas.DataFrame``."""
        import pandas as pd

        return pd.read_csv(_io.StringIO(self.csv))

    def __repr__(self) -> str:
        return f"SweepResult(runs={len(self)}, columns={list(self.columns)})"


def _sweep_shard_task(path: str, index: int, count: int) -> str:
    """One Dask task of :func:`sweep`: shard ``index``/``count``'s part text
    (pickled by reference: the workers import usim_marine)."""
    from . import _usim

    return _usim._sweep_shard(path, index, count)


def sweep(
    spec: "str | _os.PathLike[str]",
    backend: str = "local",
    *,
    client: _Any = None,
    shards: "int | None" = None,
) -> SweepResult:
    """Run the sweep file ``spec`` (docs/sweeps.md) and return its summary
    (identical to ``usim sweep``'s).

    ``backend="local"``: in-process, every run, on all cores.
    ``backend="dask"``: ``shards`` tasks (default: twice the workers) on the
    Dask cluster of ``client`` (a ``distributed.Client``; default: the
    current one), each the part ``usim sweep SPEC --shard I/N`` writes,
    joined as ``usim sweep merge`` joins them (checksums, every shard
    once): a byte-identical summary. The workers read ``spec`` and its
    mission by path (a shared file system, as with Slurm)."""
    path = _os.fspath(spec)
    if backend == "local":
        return SweepResult(_sweep(path))
    if backend != "dask":
        raise ValueError(f"backend={backend!r}: 'local' or 'dask'")
    from . import _usim

    total = _usim._sweep_total(path)  # a bad file raises here, not on a worker
    if client is None:
        from distributed import get_client

        client = get_client()
    if shards is None:
        shards = 2 * max(1, len(client.scheduler_info().get("workers", {})))
    shards = max(1, min(int(shards), max(total, 1)))
    futs = [client.submit(_sweep_shard_task, path, i, shards, pure=False) for i in range(shards)]
    parts = client.gather(futs)
    return SweepResult(_usim._sweep_merge([(f"shard {i}/{shards}", t) for i, t in enumerate(parts)]))


try:  # Gymnasium environments, when gymnasium is installed ([gym] extra)
    from . import envs as _envs
    from . import tasks as _tasks

    _envs.register()
    _tasks.register()
except ImportError:  # pragma: no cover - gymnasium missing
    pass


def _restore_vehicle(state):
    """Rebuild a pickled :class:`Vehicle` (``pickle`` calls this)."""
    return Vehicle._restore(state)


def _restore_fleet(state):
    """Rebuild a pickled :class:`Fleet` (``pickle`` calls this)."""
    return Fleet._restore(state)
