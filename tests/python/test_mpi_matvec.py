"""`shiftop matvec` under mpiexec on 2x1 and 1x2 process grids (every rank reads its slice of the
operator, rank 0 writes the output) against the dense block Toeplitz product built with numpy.

A shiftop built with MPI must be tested with it: a missing mpiexec, or a tool that says it was
built without MPI, fails. Only SHIFTOP_WITH_MPI=0 (set by CMake for a build without MPI) skips."""
import os
import shutil
import subprocess

import numpy as np
import pytest

from test_matvec_cli import apply_dense, dense

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")
MPIEXEC = shutil.which("mpiexec")
WITH_MPI = os.environ.get("SHIFTOP_WITH_MPI", "1") != "0"


def mpiexec(ranks):
    version = subprocess.run([MPIEXEC, "--version"], capture_output=True, text=True).stdout
    oversubscribe = ["--oversubscribe"] if "Open MPI" in version or "OpenRTE" in version else []
    return [MPIEXEC, "-n", str(ranks), *oversubscribe]


@pytest.mark.skipif(not WITH_MPI, reason="shiftop was built without MPI (SHIFTOP_WITH_MPI=0)")
@pytest.mark.parametrize("grid", ["1x2", "2x1"])
@pytest.mark.parametrize("op", ["F", "Fadj", "FadjF", "FFadj"])
def test_matvec_on_a_process_grid_matches_dense(tmp_path, grid, op):
    assert MPIEXEC is not None, "shiftop was built with MPI but mpiexec is not on PATH"
    rng = np.random.default_rng(11)
    nd, nm, nt, nrhs = 3, 5, 7, 3  # both split unevenly over two ranks
    col = rng.standard_normal((nd, nm, nt))
    nin = nm if op in ("F", "FadjF") else nd
    x = rng.standard_normal((nrhs, nin, nt))
    np.save(tmp_path / "K.npy", col)
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    out = subprocess.run(mpiexec(2) + [SHIFTOP, "matvec", "--operator", str(tmp_path / "K.npy"),
                                       "--input", str(tmp_path / "x.npy"), "--output",
                                       str(tmp_path / "y.npy"), "--op", op, "--grid", grid],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr  # also when the tool says it was built without MPI
    assert out.stdout.count("over 2 ranks, grid " + grid) == 1  # rank 0 alone reports
    y = np.load(tmp_path / "y.npy")
    a = dense(col, None)
    want = np.stack([apply_dense(a, op, v) for v in x.reshape(nrhs, -1)]).reshape(y.shape)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
