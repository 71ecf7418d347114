"""The README's Python quick tour runs as written, right after `make demo`."""

import contextlib
import io
import os
import re
import subprocess

from conftest import ROOT

README = (ROOT / "README.md").read_text()


def quick_tour() -> str:
    block = README.split("<!-- python-quick-tour -->", 1)[1]
    return re.search(r"```python\n(.*?)```", block, re.S).group(1)


def test_make_demo_installs_the_python_package():
    """Issue 18, point 1: `make demo` leaves `import gpudiag` working in .venv."""
    plan = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    assert re.search(r"\.venv/bin/pip install .*\"\.\[test\]\"", plan), plan
    assert ".venv/bin/python -c 'import gpudiag; print(repr(gpudiag.diagnose(" in plan


def test_the_python_quick_tour_runs_as_written():
    """Issue 18, point 1: run from the project's root, every line works and
    the values its comments show are the values it gives."""
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(quick_tour(), "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    d = namespace["d"]
    assert f"# {d!r}" in quick_tour()
    assert f"# {(d.class_, d.owner, d.confidence)!r}" in quick_tour()
    for line in quick_tour().splitlines():
        if line.split("#", 1)[-1].strip().startswith("True"):
            os.chdir(ROOT)
            try:
                assert eval(line.split("#", 1)[0], namespace) is True, line
            finally:
                os.chdir(cwd)
