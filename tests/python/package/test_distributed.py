"""shiftop.distributed under `mpiexec -n 2` (this file run as a script in worker mode) against the
single-process shiftop.Operator and the dense NumPy reference, on 1x2, 2x1 and 'auto' grids, for
all four actions, one vector and a batch crossing max_rhs; and its refusals (a grid that does not
match the ranks, bad local input on one rank raised on every rank, a non-mpi4py communicator, a
build without MPI).

A shiftop built with MPI (shiftop._distributed_config.BUILT_WITH_MPI) must be tested with it: a
missing mpiexec or mpi4py fails, it does not skip."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from shiftop import _distributed_config

WITH_MPI = _distributed_config.BUILT_WITH_MPI
HERE = os.path.abspath(__file__)
needs_mpi = pytest.mark.skipif(not WITH_MPI, reason="this shiftop was built without MPI")


def mpiexec(ranks):
    runner = shutil.which("mpiexec")
    assert runner is not None, "shiftop was built with MPI but mpiexec is not on PATH"
    version = subprocess.run([runner, "--version"], capture_output=True, text=True).stdout
    oversubscribe = ["--oversubscribe"] if "Open MPI" in version or "OpenRTE" in version else []
    return [runner, "-n", str(ranks), *oversubscribe]


def run_workers(ranks, *args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    return subprocess.run(mpiexec(ranks) + [sys.executable, HERE, *args], capture_output=True,
                          text=True, env=env, timeout=300)


@needs_mpi
@pytest.mark.parametrize("grid", ["1x2", "2x1", "auto"])
def test_two_ranks_match_one_process_and_dense(tmp_path, grid):
    out = run_workers(2, "match", str(tmp_path), grid)
    assert out.returncode == 0, out.stdout + out.stderr
    # Every (rank, action, batch) case reports its error; the bound is asserted in the worker.
    assert out.stdout.count("ok ") == 2 * 4 * 2, out.stdout


@needs_mpi
def test_refusals_reach_every_rank(tmp_path):
    out = run_workers(2, "refusals", str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("refused ") == 2 * 4, out.stdout


def test_without_mpi_the_module_imports_and_read_says_why():
    # A build without MPI: _distributed_config says so and there is no shiftop._distributed.
    code = (
        "import sys; import shiftop._distributed_config as c; c.BUILT_WITH_MPI = False\n"
        "sys.modules['shiftop._distributed'] = None\n"
        "import shiftop.distributed\n"
        "try:\n"
        "    shiftop.distributed.read('F.h5')\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "built without it (SHIFTOP_ENABLE_MPI=OFF)" in out.stdout


# ---- worker mode: one process per rank under mpiexec -------------------------------------------

def _dense(K):
    from conftest import dense_matrix

    return dense_matrix(K)


def _worker_match(folder, grid):
    from mpi4py import MPI

    import shiftop
    import shiftop.distributed

    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(7)
    nd, nm, nt = 3, 5, 7  # split unevenly over two ranks
    K = rng.standard_normal((nd, nm, nt))
    path = os.path.join(folder, "K.npy")
    if comm.rank == 0:
        np.save(path, K)
    comm.Barrier()
    op = shiftop.distributed.read(path, comm, grid, max_rhs=2, threads=1, planning="estimate")
    assert op.grid == ({"1x2": (1, 2), "2x1": (2, 1)}.get(grid, op.grid))
    single = shiftop.Operator.from_kernels(K, threads=1, planning="estimate")
    A = _dense(K)
    matrices = {"F": A, "Fadj": A.T, "FadjF": A.T @ A, "FFadj": A @ A.T}
    report = []
    for action, M in matrices.items():
        for batch in (None, 5):  # 5 vectors: groups of max_rhs = 2, the last one short
            blocks_in = nm if action in ("F", "FadjF") else nd
            shape = (blocks_in, nt) if batch is None else (batch, blocks_in, nt)
            x = rng.standard_normal(shape)
            r, o = op.input_blocks(action), op.output_blocks(action)
            local = x[..., r.start:r.stop, :] if len(r) else None
            y = op.apply(local, action)
            want = single.apply(x, action)
            dense = (x.reshape(-1, blocks_in * nt) @ M.T).reshape(want.shape)
            assert y.shape == want[..., o.start:o.stop, :].shape, (y.shape, want.shape)
            if len(o):
                scale = np.abs(dense).max()
                e_single = np.abs(y - want[..., o.start:o.stop, :]).max() / scale
                e_dense = np.abs(y - dense[..., o.start:o.stop, :]).max() / scale
                assert e_single < 1e-13 and e_dense < 1e-13, (action, batch, e_single, e_dense)
            report.append(f"ok {comm.rank} {grid} {action} {batch}")
    _print_on_rank_0(comm, report)


def _worker_refusals(folder):
    from mpi4py import MPI

    import shiftop.distributed

    comm = MPI.COMM_WORLD
    K = np.random.default_rng(3).standard_normal((2, 3, 4))
    path = os.path.join(folder, "K.npy")
    if comm.rank == 0:
        np.save(path, K)
    comm.Barrier()
    report = []

    def refused(what, error, call):
        try:
            call()
        except error as e:
            report.append(f"refused {comm.rank} {what}: {e}")
            return
        raise AssertionError(f"{what} was accepted")

    refused("grid", ValueError, lambda: shiftop.distributed.read(path, comm, "2x2"))
    refused("comm", TypeError, lambda: shiftop.distributed.read(path, "world", "1x2"))
    op = shiftop.distributed.read(path, comm, "1x2", threads=1, planning="estimate")
    r = op.input_blocks("F")
    # Rank 1 passes one block too many: both ranks raise (none waits in the plan's collectives).
    bad = np.zeros((len(r) + comm.rank, 4))
    refused("shape on rank 1", ValueError, lambda: op.apply(bad, "F"))
    # The ranks disagree on the number of right-hand sides.
    refused("nrhs", ValueError, lambda: op.apply(np.zeros((1 + comm.rank, len(r), 4)), "F"))
    _print_on_rank_0(comm, report)


def _print_on_rank_0(comm, report):
    # One print, on rank 0: mpiexec may split the ranks' own lines and interleave the pieces.
    reports = comm.gather(report)
    if comm.rank == 0:
        print("\n".join(line for lines in reports for line in lines), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))
    mode, *rest = sys.argv[1:]
    {"match": _worker_match, "refusals": _worker_refusals}[mode](*rest)
