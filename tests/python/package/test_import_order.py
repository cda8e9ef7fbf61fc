"""The import order of shiftop and mpi4py does not matter (FFTMatvec's pybind module fails when
imported after mpi4py), and `import shiftop` loads neither PyTorch, CuPy, mpi4py nor an MPI
library. Each case runs in a fresh interpreter, under `mpiexec -n 2` where MPI is involved."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from shiftop import _distributed_config

needs_mpi = pytest.mark.skipif(not _distributed_config.BUILT_WITH_MPI,
                               reason="this shiftop was built without MPI")


def run(code, ranks=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    command = [sys.executable, "-c", code]
    if ranks is not None:
        runner = shutil.which("mpiexec")
        assert runner is not None, "shiftop was built with MPI but mpiexec is not on PATH"
        version = subprocess.run([runner, "--version"], capture_output=True, text=True).stdout
        extra = ["--oversubscribe"] if "Open MPI" in version or "OpenRTE" in version else []
        command = [runner, "-n", str(ranks), *extra] + command
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def test_import_shiftop_loads_no_torch_cupy_or_mpi():
    out = run(
        "import sys, shiftop\n"
        "print(sorted(m for m in ('torch', 'cupy', 'mpi4py', 'shiftop._distributed') "
        "if m in sys.modules))\n"
        "print(any('libmpi' in line for line in open('/proc/self/maps')))\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["[]", "False"], out.stdout


APPLY = (
    "import numpy as np\n"
    "comm = MPI.COMM_WORLD\n"
    "op = shiftop.distributed.read({path!r}, comm, '1x2', threads=1, planning='estimate')\n"
    "K = np.load({path!r})\n"
    "x = np.arange(5 * 6, dtype=float).reshape(5, 6)\n"
    "r = op.input_blocks('F')\n"
    "y = op.apply(x[r.start:r.stop], 'F')\n"
    "want = shiftop.Operator.from_kernels(K, threads=1, planning='estimate') @ x\n"
    "o = op.output_blocks('F')\n"
    "assert np.allclose(y, want[o.start:o.stop], rtol=1e-13, atol=1e-12), (y, want)\n"
    "done = comm.gather(comm.rank)\n"
    "if comm.rank == 0:\n"
    "    print('applied on ranks', done)\n"
)


@needs_mpi
@pytest.mark.parametrize("order", ["mpi4py first", "shiftop first", "shiftop.distributed first"])
def test_either_import_order_works_on_two_ranks(tmp_path, order):
    path = str(tmp_path / "K.npy")
    np.save(path, np.random.default_rng(5).standard_normal((2, 5, 6)))
    imports = {
        "mpi4py first": "from mpi4py import MPI\nimport shiftop, shiftop.distributed\n",
        "shiftop first": "import shiftop\nfrom mpi4py import MPI\nimport shiftop.distributed\n",
        "shiftop.distributed first": "import shiftop, shiftop.distributed\nfrom mpi4py import MPI\n",
    }[order]
    out = run(imports + APPLY.format(path=path), ranks=2)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "applied on ranks [0, 1]", out.stdout


@needs_mpi
def test_shiftop_neither_initialises_nor_finalises_mpi():
    # Importing shiftop and shiftop.distributed leaves MPI alone; mpi4py initialises it, and MPI
    # is still usable after shiftop's objects are gone.
    out = run(
        "import shiftop, shiftop.distributed, shiftop._distributed\n"
        "import mpi4py\n"
        "mpi4py.rc.initialize = False\n"
        "from mpi4py import MPI\n"
        "before = MPI.Is_initialized()\n"
        "MPI.Init_thread(MPI.THREAD_FUNNELED)\n"
        "states = MPI.COMM_WORLD.gather((before, MPI.Is_initialized(), MPI.COMM_WORLD.size))\n"
        "if MPI.COMM_WORLD.rank == 0:\n"
        "    print(states)\n"
        "MPI.Finalize()\n",
        ranks=2,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    # Rank 0 prints every rank's state: mpiexec may split and interleave the ranks' own lines
    # (seen on this project's 2-core machine: 'TrueTrue 2\n 2\n').
    assert out.stdout == "[(False, True, 2), (False, True, 2)]\n", out.stdout


@needs_mpi
def test_read_refuses_mpi_below_thread_funneled(tmp_path):
    path = str(tmp_path / "K.npy")
    np.save(path, np.ones((1, 1, 3)))
    out = run(
        "import mpi4py\n"
        "mpi4py.rc.thread_level = 'single'\n"
        "from mpi4py import MPI\n"
        "import shiftop.distributed\n"
        "try:\n"
        f"    shiftop.distributed.read({path!r}, grid='1x1')\n"
        "except ValueError as e:\n"
        "    print(e)\n"
    )
    assert out.returncode == 0, out.stderr
    assert "needs at least MPI_THREAD_FUNNELED" in out.stdout, out.stdout
