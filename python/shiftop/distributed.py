"""shiftop.distributed: a block Toeplitz operator on a pr x pc grid of MPI ranks (Venkat et al.,
sections 3.2-3.5, Algorithms 2-3), from mpi4py::

    from mpi4py import MPI
    import shiftop.distributed
    op = shiftop.distributed.read("F.h5", MPI.COMM_WORLD, grid="auto")
    rows = op.input_blocks("F")              # the parameter blocks this rank holds (a range)
    d_local = op.apply(m[rows.start:rows.stop])   # this rank's blocks of d = F m

Every rank reads only its slice of the operator. Parameter vectors live on grid row 0 and data
vectors on grid column 0 (eqs. 13-14): each rank passes the blocks of the input it holds (an
array with 0 blocks, or None, where it holds none) and gets the blocks of the output it holds.

shiftop never initialises or finalises MPI: mpi4py does, when ``mpi4py.MPI`` is imported. The
communicator goes to C++ as its Fortran handle (``comm.py2f()``), so shiftop needs no mpi4py
headers and ``import shiftop`` and ``import mpi4py`` work in either order. The compiled half,
shiftop._distributed, is a separate module that links MPI; ``import shiftop`` does not load it.
"""

from __future__ import annotations

import os

import numpy as np

from . import _distributed_config
from ._threads import thread_count

__all__ = ["read", "DistributedOperator"]

_ACTIONS = ("F", "Fadj", "FadjF", "FFadj")


def _module():
    """shiftop._distributed, or a clear error where this build has none."""
    if not _distributed_config.BUILT_WITH_MPI:
        raise RuntimeError(
            "shiftop.distributed needs MPI: this shiftop was built without it "
            "(SHIFTOP_ENABLE_MPI=OFF); rebuild with an MPI library installed"
        )
    from . import _distributed

    return _distributed


def _communicator(comm):
    """comm (an mpi4py communicator; None: MPI.COMM_WORLD) and its Fortran handle, after checking
    that mpi4py runs on the MPI library this module was built with (the handle means nothing to
    another library)."""
    core = _module()
    from mpi4py import MPI  # initialises MPI if nobody has

    if comm is None:
        comm = MPI.COMM_WORLD
    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"comm must be an mpi4py communicator, got {type(comm).__name__}")
    if comm == MPI.COMM_NULL:
        raise ValueError("comm is MPI.COMM_NULL: expected a communicator of the ranks to use")
    ours, theirs = core.mpi_library_version().strip(), MPI.Get_library_version().strip()
    if ours != theirs:
        raise RuntimeError(
            f"mpi4py runs on '{theirs.splitlines()[0]}' but shiftop was built with "
            f"'{ours.splitlines()[0]}': install mpi4py for the same MPI library"
        )
    return comm, comm.py2f()


def read(
    path,
    comm=None,
    grid: str = "auto",
    *,
    precision: str = "DDDDD",
    backend: str = "cpu",
    max_rhs: int = 16,
    threads: int | None = None,
    planning: str = "measure",
) -> DistributedOperator:
    """Collective over comm: every rank reads its slice of the operator file `path` (shiftop .h5,
    FFTMatvec matrix directory or .npy, as the tool reads them) onto a process grid.

    comm: an mpi4py communicator (None: MPI.COMM_WORLD); MPI needs at least
        MPI_THREAD_FUNNELED (mpi4py's default is MPI_THREAD_MULTIPLE).
    grid: 'PRxPC' with PR * PC = comm.size, or 'auto' (Algorithm 4: the grid of least modelled
        communication for this shape and the ranks per node), or a tuple (PR, PC).
    precision, max_rhs, threads, planning: as for shiftop.Operator.from_file. backend: 'cpu', or
        'cuda' (built with NCCL: each rank drives the GPU of its node rank).
    Errors are raised on every rank (shiftop._core.Error, a ValueError, for bad input).
    """
    comm, handle = _communicator(comm)
    if isinstance(grid, tuple):
        if len(grid) != 2 or not all(isinstance(n, int) for n in grid):
            raise ValueError(f"grid {grid!r}: expected (rows, cols) of two integers")
        grid = f"{grid[0]}x{grid[1]}"
    if not isinstance(grid, str):
        raise TypeError(f"grid must be 'PRxPC', 'auto' or (PR, PC), got {type(grid).__name__}")
    plan = _module().DistributedPlan.read(
        os.fspath(path),
        handle,
        grid,
        precision=precision,
        backend=backend,
        max_rhs=max_rhs,
        threads=thread_count(threads),
        planning=planning,
    )
    return DistributedOperator(plan, comm)


class DistributedOperator:
    """F on a process grid; made by :func:`read`. Every method is collective over the grid."""

    def __init__(self, plan, comm):
        self._plan = plan
        self._comm = comm

    @property
    def kernel_shape(self) -> tuple[int, int, int]:
        """(Nd, Nm, Nt) of the whole operator."""
        return self._plan.shape

    @property
    def grid(self) -> tuple[int, int]:
        """(pr, pc): grid rows (split Nd) and columns (split Nm)."""
        return self._plan.grid

    @property
    def coordinates(self) -> tuple[int, int]:
        """(i, j): this rank's grid row and column."""
        return self._plan.coordinates

    @property
    def precision(self) -> str:
        """The five-phase precision string; setting it is collective."""
        return self._plan.precision

    @precision.setter
    def precision(self, value: str) -> None:
        self._plan.precision = value

    @property
    def backend(self) -> str:
        return self._plan.backend

    def input_blocks(self, op: str = "F") -> range:
        """The global blocks of op's input this rank holds (empty off grid row 0 for F and F*F,
        off grid column 0 for F* and FF*)."""
        return range(*self._plan.input_blocks(_checked(op)))

    def output_blocks(self, op: str = "F") -> range:
        """The global blocks of op's output this rank holds."""
        return range(*self._plan.output_blocks(_checked(op)))

    def __matmul__(self, x):
        return self.apply(x, "F")

    def apply(self, x, op: str = "F"):
        """Collective: this rank's blocks of op(F) x, from this rank's blocks of x.

        x: (blocks, Nt) or (nrhs, blocks, Nt) with blocks = len(input_blocks(op)); None (or 0
            blocks) on ranks that hold none of the input. Cast to float64 like Operator.apply.
        Returns (len(output_blocks(op)), Nt) or (nrhs, ..., Nt): 0 blocks where the rank holds
        none of the output. All ranks holding input must agree on nrhs and on the batch axis;
        an error on any rank is raised on every rank (no rank is left waiting).
        """
        op = _checked(op)
        nt = self.kernel_shape[2]
        blocks_in = len(self.input_blocks(op))
        blocks_out = len(self.output_blocks(op))
        error, layout = None, None
        try:
            x, layout = _local_input(x, blocks_in, nt, op)
        except (TypeError, ValueError) as e:
            error = f"{type(e).__name__}: {e}"
        # One collective before the plan's: every rank learns every rank's error and layout.
        reports = self._comm.allgather((error, layout))
        failed = [(rank, e) for rank, (e, _) in enumerate(reports) if e is not None]
        if failed:
            rank, message = failed[0]
            raise ValueError(f"rank {rank}: {message}")
        layouts = {lay for _, lay in reports if lay is not None}
        if len(layouts) > 1:
            raise ValueError(f"the ranks holding input of {op} disagree on its batch: {sorted(layouts)}")
        batched, nrhs = layouts.pop() if layouts else (False, 1)
        if x is None:
            x = np.empty((nrhs, 0, nt))
        y = np.empty((nrhs, blocks_out, nt))
        if nrhs > 0:
            self._plan.apply(op, x, y, nrhs)
        return y if batched else y[0]

    def __repr__(self):
        nd, nm, nt = self.kernel_shape
        pr, pc = self.grid
        i, j = self.coordinates
        return (
            f"<shiftop.distributed.DistributedOperator (Nd, Nm, Nt) = ({nd}, {nm}, {nt}) on grid "
            f"{pr}x{pc}, rank ({i}, {j}), precision {self.precision}, {self.backend}>"
        )


def _checked(op: str) -> str:
    if op not in _ACTIONS:
        raise ValueError(f"op {op!r}: expected one of 'F', 'Fadj', 'FadjF', 'FFadj'")
    return op


def _local_input(x, blocks, nt, op):
    """(x as C-contiguous float64 (nrhs, blocks, Nt) or None, (batched, nrhs) or None) for a rank
    whose share of op's input is `blocks` blocks."""
    if x is None:
        if blocks > 0:
            raise ValueError(f"input of {op}: this rank holds {blocks} blocks, got None")
        return None, None
    x = np.asarray(x)
    if np.iscomplexobj(x) or x.dtype.kind not in "fiu":
        raise TypeError(f"input of {op} has dtype {x.dtype}: expected a real array (float64)")
    if x.ndim == 2 and x.shape == (blocks, nt):
        batched, x = False, x[None]
    elif x.ndim == 3 and x.shape[1:] == (blocks, nt):
        batched = True
    else:
        raise ValueError(
            f"input of {op} on this rank must have shape ({blocks}, {nt}) or "
            f"(nrhs, {blocks}, {nt}) (its blocks {blocks} of the vector), got {x.shape}"
        )
    if blocks == 0:
        return None, (batched, x.shape[0]) if batched else None
    return np.ascontiguousarray(x, dtype=np.float64), (batched, x.shape[0])
