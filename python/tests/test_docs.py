"""Every Python example of docs/python.md runs as written: the ```python
blocks in page order, in one namespace (later examples use earlier names,
as a reader typing them into one session would), from the repository
root, in a child interpreter."""

import re
import subprocess
import sys

import pytest

from conftest import REPO

PAGE = REPO / "docs/python.md"


def blocks():
    return re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(), flags=re.S | re.M)


def test_the_page_has_its_examples():
    found = blocks()
    assert len(found) >= 7, len(found)
    assert not any("```" in b for b in found)


def test_every_python_example_runs_as_written():
    pytest.importorskip("gymnasium")
    pytest.importorskip("pandas")
    runner = (
        "import sys\n"
        "ns = {'__name__': '__main__'}\n"
        "page, blocks = sys.argv[1], sys.argv[2:]\n"
        "for i, b in enumerate(blocks):\n"
        "    print(f'--- example {i + 1}', flush=True)\n"
        "    exec(compile(b, f'{page} example {i + 1}', 'exec'), ns)\n"
    )
    page = str(PAGE.relative_to(REPO))
    p = subprocess.run([sys.executable, "-c", runner, page, *blocks()], cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = p.stdout
    # What the examples print and say in their comments.
    assert "['k', 't', 'x', 'y', 'speed', 'heading']" in out
    assert "DESIRED_HEADING refused:" in out
    assert "SetpointWarning" in out
    assert "True\nTrue\nTrue\n" in out
