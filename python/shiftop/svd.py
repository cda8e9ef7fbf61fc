"""shiftop.svd: the one-sided Jacobi SVD (and hyperbolic SVD) of NumPy arrays, PyTorch CUDA tensors
and CuPy arrays over the compiled core (svd/jacobi.hpp, svd/jacobi_gpu.hpp;
jacobi-svd-gsvd-gpu-thesis, chapter 2), on the CPU or on a GPU (_array_adapters.py speaks to
PyTorch and CuPy there).

Jacobi computes every singular value to high *relative* accuracy: on graded matrices (rows or
columns of very different scales) the small singular values keep their leading digits where
numpy.linalg.svd (LAPACK gesdd) keeps only an absolute error of about eps * sigma_max.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _core
from ._array_adapters import adapter
from ._checks import first_nonfinite
from ._numpy_svd import SVDResult, empty_results, full_factors, package
from ._placement import gpu_of, placement
from ._progress import sweep_reporter
from ._threads import thread_count

_VARIANTS = ("auto", "pointwise", "block-oriented", "full-block")
_STRATEGIES = ("rc-closest-rev", "rc-closest", "modmod")
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
    backend, device = placement(a, "a", backend, device)
    workers = thread_count(threads)
    full_matrices, compute_uv = bool(full_matrices), bool(compute_uv)
    if gpu_of(a) is not None:
        return _svd_device(a, full_matrices, compute_uv, hyperbolic, variant, strategy,
                           rank_tolerance, full_output, device)
    a = np.asarray(a)
    *stack, m, n = _check_shape(a.shape)
    a = a.astype(_working_dtype(a.dtype), copy=False)
    n_plus = _n_plus(hyperbolic, variant, strategy, a.shape)
    if not np.isfinite(a).all():
        where, value = first_nonfinite(a)
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
    lib, scope = adapter(a)
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
