"""Type stubs of the native module (units: m, m/s, degrees, radians, percent, s)."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

ConfigSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]
CSV_HEADER: str

class ConfigError(ValueError):
    """A config, mission or sweep file that could not be loaded (FILE:LINE: key `KEY`: why)."""

    path: str
    line: Optional[int]
    key: Optional[str]

class MessageError(ValueError):
    """A message or setpoint the vehicle refuses (names the variable)."""

    var: str
    payload: str
    reason: str

class SetpointWarning(UserWarning):
    """A thrust setpoint outside the nominal ±100 percent (DESIRED_THRUST used unclipped, _L/_R clipped)."""

class State:
    """A vehicle's state after its last step (the CSV columns)."""

    names: List[str]
    k: int
    t: float  # s
    x: float  # m, east
    y: float  # m, north
    speed: float  # m/s
    heading: float  # degrees
    depth: float  # m
    altitude: float  # m (NaN until set)
    pitch: float  # rad
    yaw: float  # rad
    sog: float  # m/s
    hog: float  # degrees
    nav_speed: float  # m/s
    nav_heading: float  # degrees
    lat: float  # degrees
    lon: float  # degrees
    drift_x: float  # m/s
    drift_y: float  # m/s
    rudder: float  # percent
    thrust: float  # percent
    elevator: float  # percent
    gt_x: float  # m
    gt_y: float  # m
    thrust_l: float  # percent
    thrust_r: float  # percent
    current_x: float  # m/s
    current_y: float  # m/s

class Vehicle:
    """One vehicle stepped by hand (classic or V22 with its PID)."""

    def __init__(
        self,
        config: ConfigSource,
        *,
        start_time: float = 0.0,
        dt: float = 0.1,
        math: Optional[str] = None,
        history_bytes: int = ...,
    ) -> None: ...
    @staticmethod
    def from_mission(
        mission: ConfigSource, vehicle: Union[int, str, None] = None, *, math: Optional[str] = None
    ) -> "Vehicle": ...
    def post(
        self, var: str, value: Union[str, float, int, bool], *, check: bool = True
    ) -> None: ...
    def step(self, dt: Optional[float] = None) -> None: ...
    def step_to(self, t: float) -> None: ...
    def run_until(self, t: float, dt: Optional[float] = None) -> None: ...
    @property
    def state(self) -> State: ...
    def values(self) -> npt.NDArray[np.float64]: ...
    def publications(self) -> List[Tuple[str, Union[float, str]]]: ...
    def environment(self) -> Dict[str, Any]: ...
    def wave_elevation(self, x: float, y: float, t: float) -> float: ...
    @property
    def dropped(self) -> List[str]: ...
    @property
    def k(self) -> int: ...
    @property
    def t(self) -> float: ...
    @property
    def dt(self) -> float: ...
    @property
    def is_v22(self) -> bool: ...
    def __copy__(self) -> "Vehicle": ...
    def __deepcopy__(self, memo: Any) -> "Vehicle": ...
    def __reduce__(self) -> Tuple[Any, ...]: ...

class Fleet:
    """n vehicles stepped together from an (n, k) setpoint array."""

    def __init__(
        self,
        config: Union[ConfigSource, Sequence[ConfigSource]],
        n: Optional[int] = None,
        *,
        dt: float = 0.1,
        start_time: float = 0.0,
        actions: Optional[Sequence[str]] = None,
        state: Optional[Sequence[str]] = None,
        math: Optional[str] = None,
        max_bytes: int = ...,
        history_bytes: int = ...,
    ) -> None: ...
    def step(
        self, actions: npt.ArrayLike, out: Optional[npt.NDArray[np.float64]] = None
    ) -> npt.NDArray[np.float64]: ...
    def reset(
        self,
        seed: Optional[int] = None,
        indices: Optional[Sequence[int]] = None,
        *,
        start: Optional[npt.NDArray[np.float64]] = None,
        drift: Optional[npt.NDArray[np.float64]] = None,
        start_radius: float = 0.0,
        heading_spread: float = 0.0,
        max_drift: float = 0.0,
    ) -> npt.NDArray[np.float64]: ...
    def post(
        self, i: int, var: str, value: Union[str, float, int, bool], *, check: bool = True
    ) -> None: ...
    def set_drift(self, drift: npt.NDArray[np.float64]) -> None: ...
    def vehicle_state(self, i: int) -> State: ...
    def vehicle_environment(self, i: int) -> Dict[str, Any]: ...
    def wave_elevation(self, i: int, x: float, y: float, t: float) -> float: ...
    @property
    def state(self) -> npt.NDArray[np.float64]: ...
    @property
    def n(self) -> int: ...
    def __len__(self) -> int: ...
    @property
    def dt(self) -> float: ...
    @property
    def action_names(self) -> List[str]: ...
    @property
    def state_names(self) -> List[str]: ...
    @property
    def iterations(self) -> npt.NDArray[np.int64]: ...
    @property
    def history_bytes(self) -> int: ...
    def __copy__(self) -> "Fleet": ...
    def __deepcopy__(self, memo: Any) -> "Fleet": ...
    def __reduce__(self) -> Tuple[Any, ...]: ...

def _replay(
    mission: ConfigSource,
    *,
    math: Optional[str] = None,
    posts: bool = False,
    encounters: bool = False,
    max_bytes: int = ...,
) -> tuple: ...
def _mission_info(mission: ConfigSource, math: Optional[str] = None) -> dict: ...
def _sweep(spec: str) -> str: ...
def _bench_native(config: ConfigSource, n: int, steps: int) -> float: ...
def _sweep_total(spec: str) -> int: ...
def _sweep_shard(spec: str, index: int, count: int) -> str: ...
def _sweep_merge(parts: List[Tuple[str, str]]) -> str: ...
def _encounter_obs(
    state: npt.NDArray[np.float64],
    goal: npt.NDArray[np.float64],
    starts: npt.NDArray[np.int64],
    k: int,
    near_miss: float,
    scales: Tuple[float, float, float, float],
) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
