"""shiftop.CirculantOperator: a sparse block-circulant matrix C for NumPy and SciPy users.

C has k x k blocks of mb x nb, and block (i, j) is A_{(j-i) mod k} (Romero et al., eq. 1), so
C is (k*mb) x (k*nb) and is fully given by its first block row A = (A_0 ... A_{k-1}), a sparse
mb x (k*nb) matrix whose column c is column c mod nb of block c // nb. Vectors are block-major:
x = [x_0, ..., x_{k-1}] with each x_j of length nb. Only A is stored; products run in the
compiled core (circ::Operator) as the sparse x dense product Y = A X (eq. 3), and C^T through a
transposed index into A's own values, so C.T is C's exact transpose.
"""

from __future__ import annotations

import os

import numpy as np

from . import _core
from ._locks import new_lock
from ._threads import thread_count

_CORE = {np.dtype(np.float32): _core.CircOperatorF32, np.dtype(np.float64): _core.CircOperatorF64}
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def _values(name, a):
    """a as a C-contiguous float32 or float64 1-D array: float32 kept, other real numbers cast to
    float64; complex and non-numeric arrays refused."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        raise TypeError(f"{name} is complex ({a.dtype}): block-circulant operators are real")
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{name} has dtype {a.dtype}: expected real numbers (float32 or float64)")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float32 if a.dtype == np.float32 else np.float64)


def _index(name, a, dtype):
    """a as a C-contiguous 1-D integer array of `dtype` (int32 or int64), refusing non-integers
    and values that the cast would change."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} has dtype {a.dtype}: expected integers (int32 or int64)")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    out = np.ascontiguousarray(a, dtype=dtype)
    if a.size and (a.min() < np.iinfo(dtype).min or a.max() > np.iinfo(dtype).max):
        raise ValueError(f"{name} holds values outside {np.dtype(dtype).name}")
    return out


def _is_sparse(a):
    return hasattr(a, "tocsr") and hasattr(a, "nnz")


def _once(name, positional, keyword):
    """A size given positionally, refused when the keyword gives it too."""
    if keyword is not None:
        raise TypeError(f"CirculantOperator got {name} twice: positionally ({positional!r}) and "
                        f"as {name}={keyword!r}")
    return positional


class CirculantOperator:
    """A sparse block-circulant matrix C of shape (k*mb, k*nb), prepared once, applied many times.

    Make one from the CSR arrays of its first block row A (mb x k*nb)::

        C = shiftop.CirculantOperator(indptr, indices, data, k, mb, nb)
        C = shiftop.CirculantOperator(A, k)          # A: a scipy.sparse matrix, mb x (k*nb)
        C = shiftop.CirculantOperator.from_file("A.h5")

    then, as for a scipy matrix, with vectors of length n = k*nb and m = k*mb::

        y = C @ x            # (n,) -> (m,);  (n, p) -> (m, p): the columns are right-hand sides
        x = C.T @ y          # C^T, exact: (m,) -> (n,), (m, p) -> (n, p)
        L = C.aslinearoperator()   # scipy.sparse.linalg.LinearOperator (lsqr, cg, ...)
        S = C.to_scipy()           # the assembled CSR of C (small sizes)

    dtype is the values' dtype: float32 data make a float32 operator (products accumulate in
    float32, as the paper's), anything else real float64. Inputs are cast to the operator's dtype
    (a float64 vector is rounded for a float32 operator) and copied when not C-contiguous; complex
    inputs are refused. indices of int32 or int64 are used as they are, other integers as int64.

    Options: backend 'cpu' or 'cuda' (device: the CUDA index); planning 'measure' (time the CPU
    kernels on A at creation and keep the fastest) or 'estimate'; kernel 'auto', 'block-spmv',
    'mm', 'mm2' or 'mm2s' (the CPU product, Romero et al. section 3.1), maxpy_width s of 'mm2s'
    (0: chosen); transpose 'auto', 'index' or 'atomic' (how the GPU applies C^T); max_rhs
    right-hand sides per pass; threads CPU threads (None: OpenMP's default; at most the
    hardware threads).

    The operator keeps a read-only copy of A's arrays (for to_scipy and save). Products on one
    operator (and its .T) are serialised by a lock and run with the GIL released.
    """

    # NumPy defers `x @ C` to __rmatmul__ instead of treating C as an object array.
    __array_ufunc__ = None

    def __init__(self, *args, k=None, mb=None, nb=None, backend="cpu", device=0,
                 planning="measure", kernel="auto", maxpy_width=0, transpose="auto",
                 max_rhs=None, threads=None):
        if len(args) >= 1 and _is_sparse(args[0]):
            if len(args) > 2:
                raise TypeError("CirculantOperator(A, k): A sparse (mb x k*nb) and the block count")
            a = args[0].tocsr()
            if len(args) == 2:
                k = _once("k", args[1], k)
            if k is None:
                raise TypeError("CirculantOperator(A, k): k, the number of blocks, is missing")
            if not isinstance(k, (int, np.integer)) or k <= 0:
                raise ValueError(f"k must be a positive integer, got {k!r}")
            rows, cols = a.shape
            if cols % k:
                raise ValueError(f"A has {cols} columns: expected k*nb, a multiple of k = {k}")
            # mb and nb come from A's shape: a keyword that says otherwise is a mistake.
            for name, given, implied in (("mb", mb, rows), ("nb", nb, cols // k)):
                if given is not None and given != implied:
                    raise ValueError(f"{name}={given!r} conflicts with A of shape {a.shape} and "
                                     f"k = {k}, which give {name} = {implied}; leave it out")
            indptr, indices, data, mb, nb = a.indptr, a.indices, a.data, rows, cols // k
        elif len(args) == 6:
            indptr, indices, data = args[:3]
            k, mb, nb = (_once(name, value, given) for name, value, given in
                         zip(("k", "mb", "nb"), args[3:], (k, mb, nb)))
        elif len(args) == 3:
            indptr, indices, data = args
        else:
            raise TypeError(
                "CirculantOperator(indptr, indices, data, k, mb, nb) or CirculantOperator(A, k) "
                f"with A a scipy.sparse matrix; got {len(args)} positional arguments"
            )
        for name, value in (("k", k), ("mb", mb), ("nb", nb)):
            if value is None:
                raise TypeError(f"{name} is missing: CirculantOperator(indptr, indices, data, k, "
                                "mb, nb)")
            if not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        data = _values("data", data)
        itype = np.int32 if np.asarray(indptr).dtype == np.int32 and \
            np.asarray(indices).dtype == np.int32 else np.int64
        indptr, indices = _index("indptr", indptr, itype), _index("indices", indices, itype)
        self._csr = tuple(np.array(a, copy=True) for a in (indptr, indices, data))
        for a in self._csr:
            a.setflags(write=False)
        self._block_shape = (int(k), int(mb), int(nb))
        options = dict(backend=backend, device=device, planning=planning, kernel=kernel,
                       maxpy_width=maxpy_width, transpose=transpose,
                       threads=thread_count(threads))
        if max_rhs is not None:  # else the library's default
            options["max_rhs"] = max_rhs
        self._core = _CORE[data.dtype].create(*self._csr, *self._block_shape, **options)
        self._lock = new_lock()
        self._transposed = _Transposed(self)

    @classmethod
    def from_file(cls, path, **options) -> CirculantOperator:
        """The operator stored at path (HDF5: datasets indptr, indices, data, the CSR of A;
        attributes mB, nB, k; see read_circulant), in the file's value type; options as for the
        constructor."""
        return cls(*read_circulant(path), **options)

    def save(self, path, overwrite: bool = False) -> None:
        """Writes A to path as the HDF5 file that from_file and ``shiftop circ`` read (values in
        this dtype), atomically; an existing file is replaced only with overwrite=True."""
        write = getattr(_core, "circ_write_" + _SUFFIX[self.dtype])
        write(os.fspath(path), *self._csr, *self._block_shape, bool(overwrite))

    # --- sizes -------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        """(k*mb, k*nb)."""
        k, mb, nb = self._block_shape
        return (k * mb, k * nb)

    @property
    def block_shape(self) -> tuple[int, int, int]:
        """(k, mb, nb): k x k blocks, each mb x nb."""
        return self._block_shape

    @property
    def dtype(self) -> np.dtype:
        """float32 or float64: the values', the vectors' and the accumulation's type."""
        return self._csr[2].dtype

    @property
    def nnz(self) -> int:
        """Nonzeros stored: those of A (C has k times as many)."""
        return self._core.nnz

    @property
    def csr(self):
        """(indptr, indices, data) of A, read-only."""
        return self._csr

    @property
    def memory_bytes(self) -> int:
        """Bytes the compiled operator holds: A's layout, the transposed index, workspaces (not
        the copy of A's arrays kept here)."""
        return self._core.memory_bytes

    @property
    def choices(self) -> dict:
        """What creation chose: backend, cpu_kernel, maxpy_width, transpose, probe (candidate
        name, median seconds) and summary."""
        return self._core.choices

    @property
    def backend(self) -> str:
        """'cpu' or 'cuda'."""
        return self.choices["backend"]

    @property
    def T(self) -> _Transposed:
        """C^T as a view sharing this operator: C.T @ y; C.T.T is C."""
        return self._transposed

    H = T  # real: the adjoint is the transpose

    # --- products ----------------------------------------------------------------------------
    def __matmul__(self, x):
        """C @ x for x of shape (k*nb,) or (k*nb, p)."""
        return self._apply("C", x)

    def __rmatmul__(self, x):
        """x @ C = (C^T x^T)^T for x of shape (k*mb,) or (p, k*mb)."""
        return _transpose_result(self._apply("Ct", _transpose_input(x)))

    def matvec(self, x):
        """C @ x."""
        return self._apply("C", x)

    def rmatvec(self, y):
        """C^T @ y."""
        return self._apply("Ct", y)

    def _apply(self, op, x):
        if hasattr(x, "__cuda_array_interface__") or (
            not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__")
        ):
            raise TypeError("CirculantOperator applies to NumPy arrays (copy device arrays to the "
                            "host first)")
        x = np.asarray(x)
        if np.iscomplexobj(x):
            raise TypeError(f"x is complex ({x.dtype}): the operator is real ({self.dtype})")
        if x.dtype.kind not in "fiu":
            raise TypeError(f"x has dtype {x.dtype}: expected real numbers")
        rows, cols = self.shape
        n, m = (cols, rows) if op == "C" else (rows, cols)
        name = "C" if op == "C" else "C.T"
        if x.ndim not in (1, 2) or x.shape[0] != n:
            raise ValueError(f"{name} @ x: x must have shape ({n},) or ({n}, p), got {x.shape}")
        p = 1 if x.ndim == 1 else x.shape[1]
        # The core takes right-hand sides one after another: the columns of x, as rows.
        batch = np.ascontiguousarray(x.T if x.ndim == 2 else x, dtype=self.dtype)
        y = np.empty((p, m) if x.ndim == 2 else (m,), dtype=self.dtype)
        if p > 0:
            with self._lock:
                self._core.apply(op, batch.reshape(-1), y.reshape(-1), p)
        return y.T if x.ndim == 2 else y

    # --- conversions -------------------------------------------------------------------------
    def aslinearoperator(self):
        """C as a scipy.sparse.linalg.LinearOperator (matvec, rmatvec, matmat, rmatmat, .T, .H)
        of this operator's dtype, for scipy's iterative solvers (lsqr, cg on C^T C, ...)."""
        from .linear_operator import as_scipy, matmul

        return as_scipy(self, matmul)

    def to_scipy(self, max_entries: int = 10_000_000):
        """The assembled C as a scipy.sparse.csr_matrix of shape (k*mb, k*nb) and this dtype
        (k*nnz entries, each row's columns ascending, repeated columns summed); refused above
        max_entries entries."""
        import scipy.sparse

        assemble = getattr(_core, "circ_assemble_" + _SUFFIX[self.dtype])
        indptr, indices, data = assemble(*self._csr, *self._block_shape, max_entries)
        return scipy.sparse.csr_matrix((data, indices, indptr), shape=self.shape)

    def __repr__(self):
        k, mb, nb = self._block_shape
        return (f"<shiftop.CirculantOperator {self.shape[0]}x{self.shape[1]} (k={k}, mb={mb}, "
                f"nb={nb}), {self.nnz} nonzeros in A, {self.dtype}, {self.choices['summary']}>")


def read_circulant(path):
    """(indptr, indices, data, k, mb, nb) of the circulant file at path: the CSR of A with int64
    indices and float32 or float64 data as stored. Bad files raise shiftop.Error naming them."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such circulant file")
    value_type = _core.circ_inspect(path)["value_type"]
    return getattr(_core, "circ_read_" + _SUFFIX[np.dtype(value_type)])(path)


class _Transposed:
    """C^T, a view on a CirculantOperator: C.T @ y maps (k*mb,) to (k*nb,); C.T.T is C."""

    __array_ufunc__ = None

    def __init__(self, base: CirculantOperator):
        self._base = base

    @property
    def shape(self) -> tuple[int, int]:
        """(k*nb, k*mb)."""
        return self._base.shape[::-1]

    @property
    def dtype(self) -> np.dtype:
        """The operator's dtype."""
        return self._base.dtype

    @property
    def T(self) -> CirculantOperator:
        """C itself."""
        return self._base

    H = T

    def __matmul__(self, y):
        """C^T @ y for y of shape (k*mb,) or (k*mb, p)."""
        return self._base._apply("Ct", y)

    def __rmatmul__(self, x):
        """x @ C^T = (C x^T)^T for x of shape (k*nb,) or (p, k*nb)."""
        return _transpose_result(self._base._apply("C", _transpose_input(x)))

    def __repr__(self):
        return f"<transpose of {self._base!r}>"


def _transpose_input(x):
    x = np.asarray(x)
    return x.T if x.ndim == 2 else x


def _transpose_result(y):
    return y.T if y.ndim == 2 else y
