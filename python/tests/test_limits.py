"""Issue 37 items 18 and 19: a fleet too large for memory is refused before
it is allocated (an exception, never an abort of the interpreter), and a
fleet refuses a step past the largest clock a setpoint can carry (1e12 s)
as a single Vehicle does, instead of ignoring its setpoints."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import usim_marine as usim
from conftest import REPO

KAYAK = REPO / "configs" / "kayak.toml"

# Run under a 4 GiB address-space limit, in a child: a failed allocation
# there would abort (SIGABRT) the child, not the test run.
LIMITED = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import usim_marine as usim
    cfg = sys.argv[1]
    try:
        usim.Fleet(cfg, 10_000_000)
        print("built")
    except ValueError as e:
        print("refused:", e)
    try:
        usim.Fleet(cfg, 10_000_000, max_bytes=1 << 50)
        print("built")
    except MemoryError as e:
        print("memory:", e)
    f = usim.Fleet(cfg, 1000)
    f.step(f.state[:, :2] * 0.0)
    print("small fleet ok", f.n)
    """
)


def test_a_10_million_vehicle_fleet_raises_under_a_4_gib_limit():
    p = subprocess.run(
        [sys.executable, "-c", LIMITED, str(KAYAK)],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    lines = p.stdout.splitlines()
    assert lines[0].startswith("refused:") and "GiB" in lines[0] and "max_bytes" in lines[0], lines
    # Past the estimate (max_bytes raised), the allocation itself fails
    # cleanly: MemoryError, the interpreter lives on.
    assert lines[1].startswith("memory:") and "does not fit in memory" in lines[1], lines
    assert lines[2] == "small fleet ok 1000", lines


def test_the_size_check_is_the_documented_bound():
    with pytest.raises(ValueError, match="max_bytes"):
        usim.Fleet(KAYAK, 1000, max_bytes=1000)
    assert usim.Fleet(KAYAK, 10, max_bytes=10 << 20).n == 10
    with pytest.raises(ValueError, match="n must be in"):
        usim.Fleet(KAYAK, 10_000_001)


def test_a_fleet_past_1e12_s_refuses_the_step_as_a_vehicle_does():
    start = 1e12 - 0.25
    f = usim.Fleet(KAYAK, 2, dt=0.1, start_time=start, state=["t", "speed"])
    v = usim.Vehicle(KAYAK, dt=0.1, start_time=start)
    a = np.array([[100.0, 0.0], [100.0, 0.0]])
    for _ in range(2):
        s = f.step(a).copy()
        v.post("DESIRED_THRUST", 100.0)
        v.post("DESIRED_RUDDER", 0.0)
        v.step()
        # The setpoints are read up to the bound: the same speed as the
        # single vehicle, bit for bit, and above zero.
        assert s[0, 1].tobytes() == np.float64(v.state.speed).tobytes()
        assert s[0, 1] > 0.0
    with pytest.raises(ValueError):
        v.step()
    with pytest.raises(usim.MessageError, match=r"vehicle 0.*1000000000000"):
        f.step(a)
    assert np.array_equal(f.state, s), "a refused step changes nothing"
    assert f.iterations.tolist() == [2, 2]
    # A reset restarts the clock; the other vehicle still refuses.
    f.reset(indices=[0])
    with pytest.raises(usim.MessageError, match="vehicle 1"):
        f.step(a)
    f.reset()
    f.step(a)
    assert f.iterations.tolist() == [1, 1]


def test_start_times_beyond_1e12_are_refused_by_both():
    for t in (1e12 + 1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            usim.Fleet(KAYAK, 2, start_time=t)
        with pytest.raises(ValueError):
            usim.Vehicle(KAYAK, start_time=t)
