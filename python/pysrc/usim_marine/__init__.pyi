import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ._usim import CSV_HEADER as CSV_HEADER
from ._usim import ConfigError as ConfigError
from ._usim import Fleet as Fleet
from ._usim import MessageError as MessageError
from ._usim import SetpointWarning as SetpointWarning
from ._usim import State as State
from ._usim import Vehicle as Vehicle

__version__: str

class Run:
    vehicles: List[str]
    posts_csv: Optional[str]
    encounters_csv: Optional[str]
    posts: Optional[Dict[str, Any]]
    encounters: Optional[Dict[str, Any]]
    dropped: List[Tuple[int, int, str]]
    @property
    def columns(self) -> List[str]: ...
    def __getitem__(self, name: str) -> npt.NDArray[Any]: ...
    def __getattr__(self, name: str) -> npt.NDArray[Any]: ...
    def __len__(self) -> int: ...
    def as_array(self) -> npt.NDArray[np.float64]: ...
    def to_pandas(self) -> Any: ...

class SweepResult:
    csv: str
    columns: Dict[str, Any]
    def __getitem__(self, name: str) -> Any: ...
    def __len__(self) -> int: ...
    def to_pandas(self) -> Any: ...

def replay(
    mission: Any,
    *,
    math: Optional[str] = None,
    posts: bool = False,
    encounters: bool = False,
    max_bytes: int = ...,
) -> Run: ...
def mission_info(mission: Any, math: Optional[str] = None) -> Dict[str, Any]: ...
def sweep(
    spec: "str | os.PathLike[str]",
    backend: str = ...,
    *,
    client: Any = ...,
    shards: Optional[int] = ...,
) -> SweepResult: ...
