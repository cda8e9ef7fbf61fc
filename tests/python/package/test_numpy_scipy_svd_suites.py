"""The installed numpy's and scipy's own SVD tests, run with numpy.linalg.svd and scipy.linalg.svd
routed to shiftop.svd (svd_suites_plugin.py): numpy's TestSVD and TestSVDHermitian (SVDCases,
SVDBaseTests; numpy/linalg/tests/test_linalg.py) and scipy's TestSVD_GESDD and TestSVD_GESVD
(scipy/linalg/tests/test_decomp.py). Each runs in a pytest subprocess, so that the routing never
reaches this process, on the test module where it is installed: none of their code is copied.
Their conftest files are not loaded (numpy's needs hypothesis; the SVD tests use none of them)."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import shiftop

SUITES = {
    "numpy": ("numpy.linalg.tests.test_linalg", ("TestSVD", "TestSVDHermitian")),
    "scipy": ("scipy.linalg.tests.test_decomp", ("TestSVD_GESDD", "TestSVD_GESVD")),
}


@pytest.mark.parametrize("library", sorted(SUITES))
def test_the_installed_svd_suite_passes_with_svd_routed_to_shiftop(library, tmp_path):
    pytest.importorskip(library)
    module, classes = SUITES[library]
    spec = importlib.util.find_spec(module)
    if spec is None:
        pytest.skip(f"{library} is installed without its tests ({module})")
    # The plugin, and the shiftop this process imported (PYTHONPATH may be relative to its cwd).
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).parent), str(Path(shiftop.__file__).parent.parent)])
    # The results do not depend on the thread count (test_svd.py checks it bit for bit); one
    # thread spares the suites' thousands of small stacked calls an OpenMP team each (numpy's
    # took 40 s instead of 4 on two loaded cores).
    env["OMP_NUM_THREADS"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "svd_suites_plugin", "-p", "no:cacheprovider",
         "--noconftest", "-q", "-rfEX", "--rootdir", str(tmp_path),
         *(f"{spec.origin}::{name}" for name in classes)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-30000:]
    # The routing was in effect: the suites called shiftop.svd (a few hundred times).
    calls = re.search(r"shiftop\.svd calls through the routing: (\d+)", output)
    assert calls is not None and int(calls.group(1)) >= 50, output[-3000:]
