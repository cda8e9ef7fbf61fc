"""shiftop.Operator: a block Toeplitz operator F for NumPy users.

F maps a parameter vector m of shape (Nm, Nt) to a data vector d = F m of shape (Nd, Nt); block
(i, j) of F is the Nt x Nt lower-triangular Toeplitz matrix of the kernel K[i, j, :] (or a full
Toeplitz matrix when a first block row is given). Products run through the FFT of a circulant
embedding (Venkat et al., Algorithms 1-3) in the compiled core, shiftop._core.Plan.
"""

from __future__ import annotations

import os

import numpy as np

from . import _core
from ._checks import require_finite
from ._locks import new_lock
from ._threads import thread_count

_ACTIONS = ("F", "Fadj", "FadjF", "FFadj")
# (input blocks, output blocks) of each action, as indices into (Nd, Nm).
_BLOCKS = {"F": (1, 0), "Fadj": (0, 1), "FadjF": (1, 1), "FFadj": (0, 0)}


def _vector_shapes(kernel_shape, action):
    """The shapes (blocks, Nt) of one input and one output vector of `action`."""
    nd, nm, nt = kernel_shape
    into, out = _BLOCKS[action]
    return ((nd, nm)[into], nt), ((nd, nm)[out], nt)


def _as_float64(name, a):
    """a as a C-contiguous float64 NumPy array: a real cast of ints and float32, no copy when it
    already is one; complex and non-numeric arrays are refused."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        raise TypeError(f"{name} is complex ({a.dtype}): shiftop operators are real (float64)")
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{name} has dtype {a.dtype}: expected a real numeric array (float64)")
    return np.ascontiguousarray(a, dtype=np.float64)


def _is_device_array(x):
    return not isinstance(x, np.ndarray) and (
        hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__")
    )


class _Action:
    """What Operator and its views (op.H, op.normal()) share: one action of one plan."""

    # NumPy defers `x @ op` to us (and we refuse it) instead of treating op as an object array.
    __array_ufunc__ = None

    def __init__(self, base: Operator, action: str):
        self._base = base
        self._action = action

    # --- sizes -------------------------------------------------------------------------------
    @property
    def input_shape(self) -> tuple[int, int]:
        """Shape (blocks, Nt) of one input vector of this action."""
        return _vector_shapes(self._base.kernel_shape, self._action)[0]

    @property
    def output_shape(self) -> tuple[int, int]:
        """Shape (blocks, Nt) of one output vector of this action."""
        return _vector_shapes(self._base.kernel_shape, self._action)[1]

    @property
    def shape(self) -> tuple[int, int]:
        """The matrix shape (rows, columns) of this action on flattened vectors."""
        (bo, nt), (bi, _) = self.output_shape, self.input_shape
        return (bo * nt, bi * nt)

    @property
    def dtype(self) -> np.dtype:
        """float64: inputs are cast to it, outputs are float64."""
        return np.dtype(np.float64)

    # --- products ----------------------------------------------------------------------------
    def __matmul__(self, x):
        """self @ x: this action applied to a vector (blocks, Nt) or a batch (nrhs, blocks, Nt)."""
        return self._base._apply(self._action, x, None)

    def __rmatmul__(self, x):
        raise TypeError(
            "x @ op is not defined: apply the adjoint, op.H @ x, for the product with F*"
        )

    def aslinearoperator(self):
        """This action as a scipy.sparse.linalg.LinearOperator on flattened vectors (SOTI order:
        the (blocks, Nt) array raveled in C order), for scipy's iterative solvers."""
        from .linear_operator import as_scipy

        return as_scipy(self)

    def aspylops(self):
        """This action as an object following PyLops' LinearOperator protocol (shape, dtype,
        dims, dimsd, matvec, rmatvec, matmat, rmatmat, H, ...); PyLops itself is not needed."""
        from .linear_operator import as_pylops

        return as_pylops(self)


class Operator(_Action):
    """A block Toeplitz operator F of shape (Nd*Nt, Nm*Nt), planned once, applied many times.

    Make one with :meth:`from_kernels` (kernel array K of shape (Nd, Nm, Nt)) or
    :meth:`from_file` (any operator file the ``shiftop`` tool reads). Then::

        d = op @ m              # m: (Nm, Nt) -> d: (Nd, Nt); or (nrhs, Nm, Nt) -> (nrhs, Nd, Nt)
        m2 = op.H @ d           # the adjoint F*
        g = op.normal() @ m     # F*F (op.H.normal() is FF*)
        op.apply(m, op="F", out=buffer)   # into a preallocated C-contiguous float64 array

    Vectors are float64 NumPy arrays; other real dtypes are cast, complex ones refused. A batch
    (nrhs, blocks, Nt) goes through the core in one call, max_rhs vectors per pass. Non-finite
    values (NaN, inf) in an input are not checked: like NumPy's @, they propagate, and through the
    FFT they reach every time step of every output series they touch.

    Applies on one Operator (and its views) are serialised by a lock and run with the GIL
    released, so threads may share an operator; for parallel applies use one operator per thread.
    """

    def __init__(self, plan: _core.Plan, device: int | None = None):
        """Wraps an existing shiftop._core.Plan; use from_kernels or from_file to make one.
        device: the CUDA device index a 'cuda' plan was made on (None: not known)."""
        if not isinstance(plan, _core.Plan):
            raise TypeError(
                f"Operator wraps a shiftop._core.Plan, got {type(plan).__name__}: "
                "use Operator.from_kernels or Operator.from_file"
            )
        super().__init__(self, "F")
        self._plan = plan
        self._device = device if plan.backend == "cuda" else None
        self._lock = new_lock()
        self._adjoint = AdjointOperator(self)

    @classmethod
    def from_kernels(
        cls,
        K,
        first_row=None,
        *,
        precision: str = "DDDDD",
        backend: str = "cpu",
        device: int = 0,
        max_rhs: int = 16,
        threads: int | None = None,
        planning: str = "measure",
        allow_nonfinite: bool = False,
    ) -> Operator:
        """The operator with kernels K of shape (Nd, Nm, Nt): K[i, j, t] is entry (i, j) of
        block lag t of the first block column, so (F m)_i[t] = sum_j sum_{s<=t} K[i,j,t-s] m_j[s].

        first_row: for a general (not lower-triangular) block Toeplitz operator, its first block
            row, same shape: first_row[i, j, k] is entry (i, j) of the block at lag -k;
            first_row[:, :, 0] must equal K[:, :, 0].
        precision: five letters 'S'/'D' for the phases pad, FFT, GEMV, IFFT, unpad (the
            mixed-precision paper's section 3.2); 'DDDDD' is full FP64.
        backend: 'cpu' or 'cuda' (device: the CUDA device index).
        max_rhs: right-hand sides transformed per pass; the workspace grows linearly with it.
        threads: CPU threads: None (OpenMP's default) or 1 up to the hardware threads.
        planning: 'measure' (time the candidates: slower to plan, faster to apply) or 'estimate'.
        allow_nonfinite: accept NaN/inf in the kernels (refused by default, naming the entry).
        """
        column = _as_float64("K", K)
        if column.ndim != 3:
            raise ValueError(f"K must have shape (Nd, Nm, Nt), got shape {column.shape}")
        row = None
        if first_row is not None:
            row = _as_float64("first_row", first_row)
            if row.shape != column.shape:
                raise ValueError(
                    f"first_row must have the shape of K {column.shape}, got shape {row.shape}"
                )
        if not allow_nonfinite:
            for name, a in (("K", column), ("first_row", row)):
                if a is not None:
                    require_finite(name, a, "kernels must be finite (pass allow_nonfinite=True "
                                   "to accept it)")
        plan = _core.Plan.create(
            column,
            row,
            precision=precision,
            backend=backend,
            device=device,
            max_rhs=max_rhs,
            threads=thread_count(threads),
            planning=planning,
        )
        return cls(plan, device)

    @classmethod
    def from_file(
        cls,
        path,
        *,
        precision: str = "DDDDD",
        backend: str = "cpu",
        device: int = 0,
        max_rhs: int = 16,
        threads: int | None = None,
        planning: str = "measure",
        allow_nonfinite: bool = False,
    ) -> Operator:
        """The operator stored at path, in any format the ``shiftop`` tool reads: shiftop's HDF5
        file (.h5/.hdf5, triangular or general), an FFTMatvec matrix directory, or a .npy kernel
        array of shape (Nd, Nm, Nt). Options as in :meth:`from_kernels`."""
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such operator file or directory")
        plan = _core.Plan.read(
            path,
            allow_nonfinite=allow_nonfinite,
            precision=precision,
            backend=backend,
            device=device,
            max_rhs=max_rhs,
            threads=thread_count(threads),
            planning=planning,
        )
        return cls(plan, device)

    # --- properties --------------------------------------------------------------------------
    @property
    def kernel_shape(self) -> tuple[int, int, int]:
        """(Nd, Nm, Nt): observation blocks, parameter blocks, time steps (the shape of K)."""
        return self._plan.shape

    @property
    def triangular(self) -> bool:
        """True for a block lower-triangular operator (made without first_row)."""
        return self._plan.triangular

    @property
    def precision(self) -> str:
        """The five-phase precision string, e.g. 'DDDDD'; set it to change later applies."""
        with self._lock:  # not the temporary one of another thread's apply(precision=...)
            return self._plan.precision

    @precision.setter
    def precision(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"precision must be a string such as 'DSSDD', got {value!r}")
        with self._lock:
            self._plan.precision = value

    @property
    def backend(self) -> str:
        """'cpu' or 'cuda'."""
        return self._plan.backend

    @property
    def device(self) -> int | None:
        """The CUDA device index of a 'cuda' operator; None on the CPU."""
        return self._device

    @property
    def memory_bytes(self) -> int:
        """Bytes the plan holds: the kernels' spectrum F^ (and its FP32 copy), workspaces."""
        return self._plan.memory_bytes

    @property
    def phase_times(self) -> dict[str, float]:
        """Seconds per phase (pad, fft, layout, gemv, ifft, unpad) of the last apply."""
        return self._plan.phase_times

    @property
    def H(self) -> AdjointOperator:
        """The adjoint F* (a view sharing this plan): op.H @ d, op.H.H is op."""
        return self._adjoint

    def normal(self) -> NormalOperator:
        """F*F, the Gauss-Newton Hessian of the misfit, as a view: op.normal() @ m."""
        return NormalOperator(self, "FadjF")

    def apply(self, x, op: str = "F", out=None, precision: str | None = None):
        """op(F) x for op in 'F', 'Fadj', 'FadjF', 'FFadj'.

        x: one vector (blocks, Nt) or a batch (nrhs, blocks, Nt), blocks = Nm for 'F' and
            'FadjF', Nd for 'Fadj' and 'FFadj'; cast to float64 (copied to C order if needed).
        out: optional C-contiguous float64 array of the output's shape, written in place and
            returned (it must not overlap x).
        precision: this call's five-phase precision (e.g. 'DSSDD'), None for op.precision. The
            operator switches to it and back under its lock, so other threads applying this
            Operator wait and never see it; but when the GEMV letter changes, each such call
            converts F^ to FP32 and frees it again (a pass over F^): for many calls in one
            precision, set op.precision instead. Refused for device arrays, whose applies run
            asynchronously after the call returns.
        """
        if op not in _ACTIONS:
            raise ValueError(f"op {op!r}: expected one of 'F', 'Fadj', 'FadjF', 'FFadj'")
        return self._apply(op, x, out, precision)

    def _apply(self, action, x, out, precision=None):
        if _is_device_array(x):
            if precision is not None:
                raise ValueError(
                    "precision= applies to NumPy arrays only: set op.precision for device arrays"
                )
            from . import _device_arrays

            with self._lock:  # queued work shares the plan's workspaces and F^ with other calls
                return _device_arrays.apply(self._plan, action, x, out, device=self._device,
                                            lock=self._lock)
        x = _as_float64("x", x)
        (blocks_in, nt), one_output = _vector_shapes(self.kernel_shape, action)
        if x.shape == (blocks_in, nt):
            nrhs, out_shape = 1, one_output
        elif x.ndim == 3 and x.shape[1:] == (blocks_in, nt):
            nrhs, out_shape = x.shape[0], (x.shape[0], *one_output)
        else:
            raise ValueError(
                f"input of {action} must have shape ({blocks_in}, {nt}) or "
                f"(nrhs, {blocks_in}, {nt}), got {x.shape}"
            )
        y = self._output(out, out_shape, action)
        if precision is not None and not isinstance(precision, str):
            raise TypeError(f"precision must be a string such as 'DSSDD', got {precision!r}")
        with self._lock:
            saved = self._plan.precision
            if precision is not None:
                self._plan.precision = precision
            try:
                if nrhs > 0:
                    self._plan.apply(action, x, y, nrhs)
            finally:
                if self._plan.precision != saved:
                    self._plan.precision = saved
        return y

    @staticmethod
    def _output(out, shape, action):
        if out is None:
            return np.empty(shape)
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
        if out.dtype != np.float64:
            raise TypeError(f"out has dtype {out.dtype}: expected float64")
        if out.shape != shape:
            raise ValueError(f"out of {action} must have shape {shape}, got {out.shape}")
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous (it is written in place)")
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        return out

    def spectrum(self, rank_tolerance=None, threads=None, backend=None):
        """The spectrum of F's block-circulant embedding: the singular values of the Nt+1
        matrices F^[w] (Nd x Nm, the DFT of the kernels zero-padded to 2 Nt) by the batched
        Jacobi SVD, with sigma_max, sigma_min, kappa and the numerical rank: a
        shiftop.Spectrum (see shiftop.spectrum for its fields and the options).

        backend: where the SVDs run: None (the default) on this operator's backend (a 'cuda'
        operator on its GPU), or 'cpu' or 'cuda'. The plan keeps F^ (possibly of another FFT
        length), not the kernels: they are recovered by applying F or F* in FP64 to
        min(Nd, Nm) unit impulses (on this operator's backend), exact up to the FFT's rounding,
        about 1e-16 relative to sigma_max, and F^ is formed from them on the CPU. Memory for the
        call: the kernels, once more at most for the impulse responses, and F^ (twice the
        kernels). With the kernels at hand, shiftop.spectrum(K) skips the recovery."""
        from .spectrum import spectrum

        backend = self.backend if backend is None else backend
        device = self._device if backend == "cuda" and self.backend == "cuda" else None
        column, row = self._kernels()
        return spectrum(column, row, rank_tolerance=rank_tolerance, threads=threads,
                        backend=backend, device=device)

    def _kernels(self):
        """(K, first_row or None): the kernels the plan was made from (it keeps F^, not them),
        recovered by the core from FP64 impulse responses (btt::recover_kernels), exact up to
        the FFT round trip's rounding; the impulses and their responses take at most twice the
        kernels' memory, for the call only. Under the lock: recovery uses the plan's
        workspaces and switches it to FP64 for the call."""
        with self._lock:
            return self._plan.recover_kernels()

    def __repr__(self):
        nd, nm, nt = self.kernel_shape
        kind = "triangular" if self.triangular else "general"
        where = self.backend if self._device is None else f"cuda:{self._device}"
        return (
            f"<shiftop.Operator (Nd, Nm, Nt) = ({nd}, {nm}, {nt}), {kind}, "
            f"precision {self.precision}, {where}, {self.memory_bytes} bytes>"
        )


class AdjointOperator(_Action):
    """F*, the adjoint of an Operator (a view on its plan): op.H @ d maps (Nd, Nt) to (Nm, Nt);
    op.H.H is op; op.H.normal() is FF*."""

    def __init__(self, base: Operator):
        super().__init__(base, "Fadj")

    @property
    def H(self) -> Operator:
        """The operator F itself."""
        return self._base

    def normal(self) -> NormalOperator:
        """FF* as a view: op.H.normal() @ d maps (Nd, Nt) to (Nd, Nt)."""
        return NormalOperator(self._base, "FFadj")

    def apply(self, x, out=None, precision=None):
        """F* x; x, out and precision as in Operator.apply."""
        return self._base._apply(self._action, x, out, precision)

    def __repr__(self):
        return f"<shiftop adjoint F* of {self._base!r}>"


class NormalOperator(_Action):
    """F*F (op.normal()) or FF* (op.H.normal()) as a view on an Operator's plan: symmetric
    positive semi-definite, applied in one pass of the core (no intermediate round trip)."""

    @property
    def H(self) -> NormalOperator:
        """Itself: the normal operators are self-adjoint."""
        return self

    def apply(self, x, out=None, precision=None):
        """The normal operator applied to x; x, out and precision as in Operator.apply."""
        return self._base._apply(self._action, x, out, precision)

    def __eq__(self, other):
        return (
            isinstance(other, NormalOperator)
            and other._base is self._base
            and other._action == self._action
        )

    def __hash__(self):
        return hash((id(self._base), self._action))

    def __repr__(self):
        name = "F*F" if self._action == "FadjF" else "FF*"
        return f"<shiftop normal operator {name} of {self._base!r}>"
