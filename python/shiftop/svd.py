"""shiftop.svd and shiftop.spectrum: the one-sided Jacobi SVD (and hyperbolic SVD) of NumPy arrays,
PyTorch CUDA tensors and CuPy arrays, and the spectrum of a block Toeplitz operator, over the
compiled core (svd/jacobi.hpp, svd/jacobi_gpu.hpp, svd/spectrum.hpp; jacobi-svd-gsvd-gpu-thesis,
chapter 2), on the CPU or on a GPU.

Jacobi computes every singular value to high *relative* accuracy: on graded matrices (rows or
columns of very different scales) the small singular values keep their leading digits where
numpy.linalg.svd (LAPACK gesdd) keeps only an absolute error of about eps * sigma_max.
"""

from __future__ import annotations

import contextlib
import operator
from dataclasses import dataclass

import numpy as np

from . import _core, _device_arrays
from ._numpy_svd import SVDResult, empty_results, full_factors, package
from ._progress import sweep_reporter
from ._threads import thread_count

_VARIANTS = ("auto", "pointwise", "block-oriented", "full-block")
_STRATEGIES = ("rc-closest-rev", "rc-closest", "modmod")
_BACKENDS = (None, "cpu", "cuda")
_REAL = {"float32": "float32", "complex64": "float32", "float64": "float64",
         "complex128": "float64"}


def _working_dtype(dtype):
    """The dtype the computation runs in, as numpy.linalg.svd chooses it: float32, float64,
    complex64 and complex128 as they are, integers and booleans as float64. float16 and the
    extended types (longdouble) are refused, as NumPy's linalg refuses them."""
    if dtype.type in (np.float32, np.float64, np.complex64, np.complex128):
        return np.dtype(dtype.type)  # native byte order
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype.kind in "fc":
        # float64 (complex128) keeps the most of an extended type's precision that shiftop has
        wider = np.complex128 if dtype.kind == "c" else np.float64
        raise TypeError(f"a has dtype {dtype}: shiftop.svd computes in float32, float64, "
                        f"complex64 or complex128; cast it first (a.astype(np.{wider.__name__}))")
    raise TypeError(f"a has dtype {dtype}: expected a real or complex numeric array")


def _gpu_of(x):
    """The CUDA device index of a PyTorch CUDA tensor or a CuPy array; None for anything else."""
    library = _device_arrays.library_of(x)
    if library == "cupy":
        return x.device.id
    if library == "torch" and x.device.type == "cuda":
        return x.device.index
    return None


def _placement(x, name, backend, device):
    """('cpu', None) or ('cuda', the GPU's index) for x as backend and device ask: a device array
    computes on its own GPU, anything else on the CPU unless backend='cuda' (then on GPU `device`,
    0 by default)."""
    if backend not in _BACKENDS:
        raise ValueError(f"backend {backend!r}: expected None, 'cpu' or 'cuda'")
    if device is not None:
        if isinstance(device, bool) or operator.index(device) < 0:
            raise ValueError(f"device must be None or a CUDA device index >= 0, got {device!r}")
        device = operator.index(device)
    gpu = _gpu_of(x)
    if gpu is not None:
        what = "a CuPy array" if _device_arrays.library_of(x) == "cupy" else "a CUDA tensor"
        if backend == "cpu":
            raise TypeError(f"{name} is {what} on GPU {gpu}: backend='cpu' computes on NumPy "
                            "arrays; copy it to the host first, or leave backend=None to compute "
                            "on its GPU")
        if device is not None and device != gpu:
            raise ValueError(f"{name} is on GPU {gpu} but device={device}: a device array is "
                             "computed on its own GPU; move it there or leave device=None")
        return "cuda", gpu
    if backend == "cuda":
        if _device_arrays.library_of(x) == "torch":
            raise TypeError(f"{name} is a CPU tensor: backend='cuda' takes CUDA tensors (computed "
                            "on their GPU) or NumPy arrays (copied to GPU `device` and back); "
                            f"pass {name}.cuda() or {name}.numpy()")
        return "cuda", 0 if device is None else device
    if device is not None:
        raise ValueError(f"device={device} needs backend='cuda' (or {name} on a GPU)")
    return "cpu", None


def _in_place(a3, column_major_only):
    """Whether the core can read the batch (batch, m, n) where it is: unit stride along the
    columns of each matrix (Fortran order) or, unless column_major_only, along its rows (C order),
    and matrices that do not overlap. (The core checks the same and refuses otherwise.)"""
    item = a3.itemsize
    if any(s % item for s in a3.strides):
        return False
    batch, m, n = a3.shape
    sb, sr, sc = (s // item for s in a3.strides)
    if sr == 1 and (n == 1 or sc >= m):
        lda, cols = (m if n == 1 else sc), n
    elif not column_major_only and sc == 1 and (m == 1 or sr >= n):
        lda, cols = (n if m == 1 else sr), m
    else:
        return False
    return batch == 1 or sb >= lda * cols


def _first_nonfinite(a):
    where = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
    return where, a[where]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, *, hyperbolic=None,
        variant="auto", strategy="rc-closest-rev", rank_tolerance=0.0, threads=None,
        full_output=False, backend=None, device=None, progress=None):
    """The singular value decomposition of a matrix or a stack of matrices by the one-sided
    (Hestenes) Jacobi method, every singular value to high relative accuracy.

    A drop-in for numpy.linalg.svd (same signature, results, shapes, dtypes and errors; numpy's
    own TestSVD runs against it, tests/python/package/test_numpy_scipy_svd_suites.py), with
    shiftop's options keyword-only after numpy's::

        U, S, Vh = shiftop.svd(a)          # U (..., m, m), Vh (..., n, n), k = min(m, n):
                                           # a == (U[..., :k] * S[..., None, :]) @ Vh[..., :k, :]
        u, s, vh = shiftop.svd(a, False)   # thin: a == (u * s[..., None, :]) @ vh
        s = shiftop.svd(a, compute_uv=False)
        u, s, vh = shiftop.svd(torch_cuda_tensor, False)  # on its GPU, results on that GPU

    a: array_like of shape (..., m, n), m < n allowed; a stack (any number of leading dimensions)
        is computed in one call, the matrices in parallel. It is read in place when each matrix
        has unit stride along its columns (Fortran order) or, without hyperbolic, along its rows
        (C order: the core is given the column-major n x m matrix a^T, no copy); copied
        otherwise (negative or zero strides, other strides). A PyTorch CUDA tensor or a CuPy
        array is computed on its own GPU and the results are arrays of the same library on that
        GPU (a C- or Fortran-order copy of a in the working dtype is made there first unless a
        already is one); the work is queued on the library's current stream, as its own
        operations are, and the call returns once it is done. Tensors that require grad are
        refused (the SVD is not differentiable here). Empty matrices (m or n = 0) and empty
        stacks give numpy's results: empty arrays, and with full_matrices the identity as U
        (m x m) or Vh (n x n).
    dtype: float64, float32, complex128 and complex64 are computed in their own precision (S in
        the matching real type); integers and booleans are cast to float64; float16 and longdouble
        are refused with TypeError (as numpy.linalg refuses them).
    full_matrices: True (numpy's default): U is (..., m, m) and Vh (..., n, n); the Jacobi
        method gives the thin factors (k = min(m, n) columns), and the other m - k (or n - k)
        are completed to an orthonormal basis by the complete Householder QR of the thin factor
        (numpy.linalg.qr; orthogonal to the thin columns to about m * eps, as LAPACK's own).
        False: U (..., m, k), Vh (..., k, n). On the GPU the completion runs on the host (the
        thin factor is copied there and the full one back).
    compute_uv: False returns S alone.
    hermitian: numpy's hint that a is Hermitian, which lets numpy compute the SVD from an
        eigendecomposition of a's lower triangle. shiftop computes the SVD of a itself either
        way: for a Hermitian a the same decomposition (to high relative accuracy), for any other
        a still its SVD (numpy's answer then belongs to the Hermitian matrix of a's lower
        triangle).
    hyperbolic: None for the SVD; an integer n_plus (0 <= n_plus <= n, needs m >= n) for the
        hyperbolic SVD with the signature J = diag(I_{n_plus}, -I_{n - n_plus}) on the columns:
        a = u[..., :n] @ diag(s) @ inv(v), returned as a tuple (u, s, v) -- v itself, not its
        inverse or conjugate transpose -- with u orthonormal columns ((..., m, m) with
        full_matrices, its first n columns the thin u; (..., m, n) without), v (..., n, n)
        J-unitary (v^H J v = J), and s ordered as J: the n_plus values of the positive part
        first, then the others, each part descending. The eigenvalues of a J a^H are then
        s**2 * diag(J) (and zeros).
    variant: 'auto', 'pointwise', 'block-oriented' or 'full-block' (thesis section 2.1).
    strategy: the parallel pivot strategy: 'rc-closest-rev' (the thesis' recommendation),
        'rc-closest' or 'modmod' (modified modulus, for comparison).
    rank_tolerance: 0 (default) keeps every singular value, tiny ones to high relative
        accuracy; a positive value (e.g. sqrt(n) * eps, LAPACK dgejsv's JOBA='A') treats the
        matrix as numerically rank deficient: singular values the column-pivoted QR finds below
        rank_tolerance * sigma_max (roughly) are returned as exactly 0.
    progress: a callable called after every sweep on the CPU with a shiftop.SweepProgress
        (matrix, sweep, max_sweeps, rotations), from the calling thread; what it raises ends the
        call. The GPU runs every sweep in one launch and does not call it.
    threads: OpenMP threads over the matrices of a stack, or over the disjoint pivot pairs of a
        single matrix: None (OpenMP's default) or 1 up to the hardware threads this process may
        run on. The results do not depend on it, bit for bit. Checked, then ignored, on the GPU.
    backend: None (the default): 'cuda' for a CUDA tensor or a CuPy array, 'cpu' otherwise;
        'cuda' with a NumPy array (array_like) computes on GPU `device` (copied there and back,
        results in NumPy); 'cpu' with a device array is a TypeError. The GPU computes one matrix
        per thread block, equal to the CPU's results within rounding (not bit for bit), except
        for matrices whose min(m, n)^2 entries exceed a thread block's shared memory (about
        160^2 in float64) in stacks of fewer than two matrices per multiprocessor: those take its
        blocked method, on a itself without the QR preprocessing (the relative accuracy of
        column-scaled, not row-scaled, matrices; 'sweeps' counts block-sweeps). It runs variant
        'auto' or 'pointwise' and rank_tolerance 0 only (others raise ValueError).
    device: the CUDA device index for NumPy input with backend='cuda' (None: 0); a device array
        runs on its own GPU (a different device is a ValueError).
    full_output: also return a dict of per-matrix statistics, each an array of the stack's shape
        (...,): 'sweeps', 'rotations', 'proper_rotations' (rotations with cos != 1), 'converged'
        (bool), 'rank' (the columns the QR preprocessing kept, see rank_tolerance); returned as
        the tuple (U, S, Vh, info) or (S, info). NumPy arrays, also for device arrays.

    Returns numpy's SVDResult (U, S, Vh), a named tuple, with S (..., k) descending (a tuple
    (u, s, v) for the hyperbolic SVD); U and Vh may be views with Fortran-order matrices (no copy
    of the core's result); on the GPU they are arrays of a's library on a's GPU, Vh = conj(V).T
    per matrix as numpy's.

    Raises numpy.linalg.LinAlgError (a ValueError), as numpy does, for fewer than 2 dimensions,
    NaN or infinity (naming the first such entry) and a matrix that does not converge (also a
    hyperbolic SVD that does not exist, rank(a J a^H) < rank(a)) unless full_output: then the
    results come back with info['converged'] saying which did not. Raises ValueError (or
    shiftop.Error, a ValueError) for hyperbolic out of range or m < n with hyperbolic, and
    unknown variant or strategy names.
    """
    backend, device = _placement(a, "a", backend, device)
    workers = thread_count(threads)
    full_matrices, compute_uv = bool(full_matrices), bool(compute_uv)
    if _gpu_of(a) is not None:
        return _svd_device(a, full_matrices, compute_uv, hyperbolic, variant, strategy,
                           rank_tolerance, full_output, device)
    a = np.asarray(a)
    *stack, m, n = _check_shape(a.shape)
    a = a.astype(_working_dtype(a.dtype), copy=False)
    n_plus = _n_plus(hyperbolic, variant, strategy, a.shape)
    if not np.isfinite(a).all():
        where, value = _first_nonfinite(a)
        raise np.linalg.LinAlgError(f"a{list(where)} is {value}: the SVD needs finite entries")

    real = np.finfo(a.dtype).dtype
    batch = int(np.prod(stack, dtype=np.int64))
    if batch == 0 or min(m, n) == 0:
        return empty_results(stack, m, n, a.dtype, real, full_matrices, compute_uv, n_plus >= 0,
                             full_output)

    a3 = a.reshape(batch, m, n)
    # a^T (a C-order matrix read in place) is as good as a: the core's preprocessing sorts the
    # rows before its column-pivoted QR (dgejsv's row pivoting), so a row-graded matrix keeps the
    # relative accuracy of a column-graded one. The hyperbolic SVD must see a itself (J acts on
    # its columns).
    if not _in_place(a3, column_major_only=n_plus >= 0):
        a3 = np.ascontiguousarray(a3.swapaxes(1, 2)).swapaxes(1, 2)
    out = _core.jacobi_batched(a3, compute_uv=compute_uv, n_plus=n_plus, variant=variant,
                               strategy=strategy, rank_tolerance=float(rank_tolerance),
                               threads=workers, device=device,
                               progress=sweep_reporter(progress))
    return _results(out, stack, compute_uv, n_plus >= 0, full_output,
                    lambda x: np.conjugate(x, out=x), full_factors if full_matrices else None)


def _check_shape(shape):
    if len(shape) < 2:
        raise np.linalg.LinAlgError(f"a must have at least 2 dimensions (..., m, n), got shape "
                                    f"{tuple(shape)}")
    return tuple(shape)


def _n_plus(hyperbolic, variant, strategy, shape):
    """The core's n_plus (-1: the SVD) after checking the options against a's shape."""
    m, n = shape[-2:]
    if variant not in _VARIANTS:
        raise ValueError(f"variant {variant!r}: expected one of {', '.join(_VARIANTS)}")
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy {strategy!r}: expected one of {', '.join(_STRATEGIES)}")
    if hyperbolic is None:
        return -1
    if isinstance(hyperbolic, bool):
        raise TypeError("hyperbolic must be None or an integer n_plus, got a bool")
    n_plus = operator.index(hyperbolic)
    if not 0 <= n_plus <= n:
        raise ValueError(f"hyperbolic (n_plus) must be in 0..{n} (the columns of a), "
                         f"got {n_plus}")
    if m < n:
        raise ValueError(f"the hyperbolic SVD needs m >= n, got a of shape {tuple(shape)}: "
                         "J acts on the columns, so a wide a cannot be transposed")
    return n_plus


def _results(out, stack, compute_uv, hyperbolic_svd, full_output, conjugate_in_place, full):
    """What svd returns, from the core's dict (sigma, u, v and transposed as jacobi_batched gives
    them, stats): the convergence check, the stack's shape, u and vh (or v), made full by
    full(u, v_part, hyperbolic_svd) unless it is None."""
    converged = out["stats"]["converged"].astype(bool)
    if not full_output and not converged.all():
        first = np.unravel_index(int(np.argmin(converged)), stack) if stack else ()
        raise np.linalg.LinAlgError(
            f"the Jacobi {'hyperbolic ' if hyperbolic_svd else ''}SVD of matrix {first} did not "
            f"converge in {int(out['stats']['sweeps'][np.argmin(converged)])} sweeps"
            + (" (it exists only when rank(a J a^H) = rank(a))" if hyperbolic_svd else "")
            + "; full_output=True returns the results with the statistics instead")
    sigma = out["sigma"]
    s = sigma.reshape(*stack, sigma.shape[-1])
    factors = None
    if compute_uv:
        u, v_part = _vectors(out, hyperbolic_svd, conjugate_in_place)
        factors = (u.reshape(*stack, *u.shape[1:]), v_part.reshape(*stack, *v_part.shape[1:]))
        if full is not None:
            factors = full(*factors, hyperbolic_svd)
    return package(s, factors, hyperbolic_svd, _info(out["stats"], stack) if full_output else None)


class _Torch:
    """What _svd_device needs of PyTorch, for a CUDA tensor x."""

    def __init__(self, x):
        import torch

        if x.requires_grad:
            raise ValueError("a requires grad: shiftop.svd is not differentiable; pass a.detach()")
        self.torch, self.device = torch, x.device
        self.dtype = str(x.dtype).removeprefix("torch.")

    def cast(self, x, dtype):
        # A lazily conjugated or negated view (x.conj(), z.conj().imag) has the unconjugated
        # values at data_ptr(): materialise it, or the core would read conj(a) or -a.
        return x.to(getattr(self.torch, dtype)).resolve_conj().resolve_neg()

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=getattr(self.torch, dtype), device=self.device)

    def c_order(self, x):
        return x.contiguous()

    def is_c_order(self, x):
        return x.is_contiguous()

    def address(self, x):
        return x.data_ptr()

    def stream(self):
        return self.torch.cuda.current_stream(self.device).cuda_stream

    def all_finite(self, x):
        return bool(self.torch.isfinite(x).all())

    def first_nonfinite(self, x):
        where = tuple(int(i) for i in self.torch.nonzero(~self.torch.isfinite(x))[0])
        return where, x[where].item()

    def conjugate_in_place(self, x):
        x.conj_physical_()

    def to_host(self, x):
        return x.resolve_conj().resolve_neg().cpu().numpy()

    def from_host(self, x):
        return self.torch.from_numpy(np.ascontiguousarray(x)).to(self.device)


class _CuPy:
    """What _svd_device needs of CuPy, for an array x (used under `with x.device`)."""

    def __init__(self, x):
        import cupy

        self.cupy, self.device = cupy, x.device
        self.dtype = x.dtype.name

    def cast(self, x, dtype):
        return x.astype(dtype, copy=False)

    def empty(self, shape, dtype):
        return self.cupy.empty(shape, dtype=dtype)

    def c_order(self, x):
        return self.cupy.ascontiguousarray(x)

    def is_c_order(self, x):
        return x.flags.c_contiguous

    def address(self, x):
        return x.data.ptr

    def stream(self):
        return self.cupy.cuda.get_current_stream().ptr

    def all_finite(self, x):
        return bool(self.cupy.isfinite(x).all())

    def first_nonfinite(self, x):
        where = tuple(int(i) for i in self.cupy.argwhere(~self.cupy.isfinite(x))[0])
        return where, x[where].item()

    def conjugate_in_place(self, x):
        self.cupy.conjugate(x, out=x)

    def to_host(self, x):
        return self.cupy.asnumpy(x)

    def from_host(self, x):
        return self.cupy.asarray(x)


def _device_dtype(name):
    """The working dtype of a device array by name, as _working_dtype chooses it for NumPy."""
    if name in _REAL:
        return name
    if name == "bool" or name.startswith(("int", "uint")):
        return "float64"
    raise TypeError(f"a has dtype {name}: shiftop.svd computes in float32, float64, complex64 or "
                    "complex128; cast it first")


def _svd_device(a, full_matrices, compute_uv, hyperbolic, variant, strategy, rank_tolerance,
                full_output, device):
    """svd of a CUDA tensor or CuPy array on its GPU `device`, the results its library's arrays
    there. The core is given a contiguous batch of column-major matrices: a^T read from a
    C-order copy (or a itself), or a from a Fortran-order one (the hyperbolic SVD, or an a that
    already is one), as jacobi_batched reads NumPy arrays. What numpy's conventions add (the
    full matrices' completion, the identities of empty matrices) is computed on the host and
    copied to the GPU."""
    if _device_arrays.library_of(a) == "torch":
        lib, scope = _Torch(a), contextlib.nullcontext()
    else:
        lib = _CuPy(a)
        scope = lib.device
    *stack, m, n = _check_shape(tuple(a.shape))
    dtype = _device_dtype(lib.dtype)
    n_plus = _n_plus(hyperbolic, variant, strategy, a.shape)
    k = min(m, n)
    batch = int(np.prod(stack, dtype=np.int64))
    with scope:
        if batch == 0 or k == 0:
            return _on_device(lib, empty_results(stack, m, n, np.dtype(dtype), _REAL[dtype],
                                                 full_matrices, compute_uv, n_plus >= 0,
                                                 full_output))
        a3 = lib.cast(a.reshape(batch, m, n), dtype)
        if not lib.all_finite(a3):
            where, value = lib.first_nonfinite(a)
            raise np.linalg.LinAlgError(f"a{list(where)} is {value}: the SVD needs finite "
                                        "entries")
        columns = a3.swapaxes(1, 2)  # C order of a^T: a column-major
        transposed = not (n_plus >= 0 or (lib.is_c_order(columns) and not lib.is_c_order(a3)))
        given = lib.c_order(a3 if transposed else columns)
        rows, cols = (n, m) if transposed else (m, n)
        out = {"transposed": transposed, "sigma": lib.empty((batch, k), _REAL[dtype])}
        if compute_uv:
            out["u"] = lib.empty((batch, k, rows), dtype)
            out["v"] = lib.empty((batch, k, cols), dtype)
        out["stats"] = _core.jacobi_batched_device(
            dtype, lib.address(given), batch, rows, cols, lib.address(out["sigma"]),
            lib.address(out["u"]) if compute_uv else 0,
            lib.address(out["v"]) if compute_uv else 0, compute_uv=compute_uv, n_plus=n_plus,
            variant=variant, strategy=strategy, rank_tolerance=float(rank_tolerance),
            stream=lib.stream(), device=device)

        def full_on_host(u, v_part, hyperbolic_svd):
            return tuple(lib.from_host(x) for x in
                         full_factors(lib.to_host(u), lib.to_host(v_part), hyperbolic_svd))

        return _results(out, stack, compute_uv, n_plus >= 0, full_output,
                        lib.conjugate_in_place, full_on_host if full_matrices else None)


def _on_device(lib, result):
    """svd's result (NumPy arrays) with its arrays copied to lib's GPU; info stays NumPy."""
    if isinstance(result, np.ndarray):
        return lib.from_host(result)
    moved = [lib.from_host(x) if isinstance(x, np.ndarray) else x for x in result]
    return type(result)(*moved) if isinstance(result, SVDResult) else tuple(moved)


def _vectors(out, hyperbolic_svd, conjugate_in_place):
    """(u, vh) -- (u, v) for the hyperbolic SVD -- from the core's U^T and V^T (C-order views of
    its column-major U and V) of the matrix it was given: a, or a^T when 'transposed'."""
    ut, vt = out["u"], out["v"]  # (batch, k, rows), (batch, k, cols) of what the core saw
    if hyperbolic_svd:
        return ut.swapaxes(1, 2), vt.swapaxes(1, 2)  # u = U, v = V (the core saw a)
    conjugate_in_place(vt)  # a no-op on real arrays
    if out["transposed"]:
        # a^T = U' S V'^H, so a = conj(V') S U'^T: u = conj(V'), vh = U'^T.
        return vt.swapaxes(1, 2), ut
    return ut.swapaxes(1, 2), vt  # a = U S V^H: vh = conj(V^T)


def _info(stats, stack):
    info = {key: value.reshape(stack) for key, value in stats.items()}
    info["converged"] = info["converged"].astype(bool)
    return info


@dataclass(frozen=True)
class Spectrum:
    """The spectrum of a block Toeplitz operator's block-circulant embedding (period 2 Nt).

    sigma: (Nt+1, min(Nd, Nm)) float64, row w the singular values of F^[w], descending (the
        embedding's singular values are these and, for 0 < w < Nt, each once more for the
        conjugate frequency 2 Nt - w).
    sigma_max, sigma_min: the largest and smallest of all; sigma_min is 0 when some F^[w] is
        rank deficient.
    kappa: sigma_max / sigma_min (inf when sigma_min is 0); it enters the mixed-precision error
        bound of the applies.
    rank: the singular values > tolerance * sigma_max, over all frequencies (each w once).
    tolerance: the relative rank tolerance used.
    converged: every frequency's Jacobi SVD converged; max_sweeps: the most sweeps any needed.
    Read-only, sigma too (the other fields are derived from it).
    """

    sigma: np.ndarray
    sigma_max: float
    sigma_min: float
    kappa: float
    rank: int
    tolerance: float
    converged: bool
    max_sweeps: int

    def __repr__(self):
        frequencies, per = self.sigma.shape
        return (f"<shiftop.Spectrum {frequencies} frequencies x {per} values: sigma_max "
                f"{self.sigma_max:.6g}, sigma_min {self.sigma_min:.6g}, kappa {self.kappa:.6g}, "
                f"rank {self.rank} at {self.tolerance:.3g}, "
                f"{'converged' if self.converged else 'NOT converged'}>")


def _rank_tolerance(rank_tolerance):
    if rank_tolerance is None:
        return 0.0
    value = float(rank_tolerance)
    if not value > 0 or not np.isfinite(value):
        raise ValueError(f"rank_tolerance must be None (max(Nd, Nm) * eps) or a positive "
                         f"number, got {rank_tolerance!r}")
    return value


def spectrum(K, first_row=None, *, rank_tolerance=None, threads=None, backend=None,
             device=None) -> Spectrum:
    """The singular values of every F^[w] = sum_t K[:, :, t] exp(-2 pi i w t / (2 Nt)),
    w = 0..Nt (with the first block row's lags wrapped to the end for a general operator), by
    the batched Jacobi SVD: the spectrum of the block-circulant embedding of F.

    K: kernels (Nd, Nm, Nt) as Operator.from_kernels takes them (cast to float64); a CUDA tensor
        or CuPy array is copied to the host (F^ is formed there, by FFTW);
    first_row: the first block row of a general block Toeplitz operator, same shape, or None.
    rank_tolerance: relative; the rank counts values > rank_tolerance * sigma_max (None:
        max(Nd, Nm) * eps).
    threads: OpenMP threads forming F^ and, on the CPU, over the frequencies' SVDs (None:
        OpenMP's default).
    backend: where the Nt+1 SVDs run: None (the default): 'cuda' when K is a CUDA tensor or a
        CuPy array (on its GPU), else 'cpu'; 'cuda' runs them on GPU `device` (None: 0), equal to
        the CPU's values within rounding. 'cpu' with a device K is a TypeError.

    Memory: F^ ((Nt+1) Nd Nm complex values, twice the kernels) plus the SVD's workspace, freed
    on return (on the GPU: F^ once more there). See Operator.spectrum for an operator without
    its kernels at hand.
    """
    backend, device = _placement(K, "K", backend, device)
    column = _kernels("K", _on_host(K))
    row = None if first_row is None else _kernels("first_row", _on_host(first_row))
    if row is not None and row.shape != column.shape:
        raise ValueError(f"first_row must have the shape of K {column.shape}, got {row.shape}")
    out = _core.spectrum(column, row, rank_tolerance=_rank_tolerance(rank_tolerance),
                         threads=thread_count(threads), device=device)
    out["sigma"].setflags(write=False)  # sigma_max, sigma_min, kappa and rank are derived from it
    return Spectrum(sigma=out["sigma"], sigma_max=out["sigma_max"], sigma_min=out["sigma_min"],
                    kappa=out["kappa"], rank=out["rank"], tolerance=out["rank_tolerance"],
                    converged=out["converged"], max_sweeps=out["max_sweeps"])


def _on_host(x):
    """x itself, or a NumPy copy of a PyTorch tensor or CuPy array."""
    library = _device_arrays.library_of(x)
    if library == "torch":
        return x.detach().cpu().numpy()
    if library == "cupy":
        return x.get()
    return x


def _kernels(name, a):
    a = np.asarray(a)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} has dtype {a.dtype}: expected real kernels (float64)")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 3 or a.size == 0:
        raise ValueError(f"{name} must have shape (Nd, Nm, Nt) with no empty size, "
                         f"got shape {a.shape}")
    if not np.isfinite(a).all():
        where, value = _first_nonfinite(a)
        raise ValueError(f"{name}{list(where)} is {value}: the spectrum needs finite kernels")
    return a


def operator_kernels(op):
    """The kernels (K, first_row or None) of a shiftop.Operator, recovered from its plan (which
    keeps F^, not the kernels) by applying it, in FP64, to min(Nd, Nm) unit impulses: column t
    of F e_j(0) is K[:, j, t], and F* e_i(Nt-1) holds K[i, :, Nt-1-s] at step s (F* e_i(0) and
    F e_j(Nt-1) give the first block row the same way). Exact up to the FFT's rounding (about
    1e-16 relative to each kernel's norm); the impulses and the result take at most twice the
    kernels' memory, for the call only."""
    nd, nm, nt = op.kernel_shape
    last = nt - 1

    def responses(action, blocks_in, step):
        """(blocks_in, blocks_out, Nt): the response of `action` to an impulse at `step` in
        each input block."""
        impulses = np.zeros((blocks_in, blocks_in, nt))
        impulses[np.arange(blocks_in), np.arange(blocks_in), step] = 1.0
        return op.apply(impulses, op=action, precision="DDDDD")

    if nd <= nm:  # F*: K[i, j, t] = (F* e_i(Nt-1))_j[Nt-1-t]
        column = responses("Fadj", nd, last)[:, :, ::-1]
    else:  # F: K[i, j, t] = (F e_j(0))_i[t]
        column = responses("F", nm, 0).transpose(1, 0, 2)
    column = np.ascontiguousarray(column)
    if op.triangular:
        return column, None
    if nm <= nd:  # F: row[i, j, s] = (F e_j(Nt-1))_i[Nt-1-s]
        row = responses("F", nm, last).transpose(1, 0, 2)[:, :, ::-1]
    else:  # F*: row[i, j, s] = (F* e_i(0))_j[s]
        row = responses("Fadj", nd, 0)
    row = np.ascontiguousarray(row)
    row[:, :, 0] = column[:, :, 0]  # the shared lag 0, equal up to rounding: make it exact
    return column, row
