"""shiftop.svd and shiftop.spectrum: the one-sided Jacobi SVD (and hyperbolic SVD) of NumPy arrays,
and the spectrum of a block Toeplitz operator, over the compiled core (svd/jacobi.hpp,
svd/spectrum.hpp; jacobi-svd-gsvd-gpu-thesis, chapter 2).

Jacobi computes every singular value to high *relative* accuracy: on graded matrices (rows or
columns of very different scales) the small singular values keep their leading digits where
numpy.linalg.svd (LAPACK gesdd) keeps only an absolute error of about eps * sigma_max.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from . import _core

_VARIANTS = ("auto", "pointwise", "block-oriented", "full-block")
_STRATEGIES = ("rc-closest-rev", "rc-closest", "modmod")


def _working_dtype(dtype):
    """The dtype the computation runs in, as numpy.linalg.svd chooses it: float32, float64,
    complex64 and complex128 as they are, integers and booleans as float64. float16 and the
    extended types (longdouble) are refused, as NumPy's linalg refuses them."""
    if dtype.type in (np.float32, np.float64, np.complex64, np.complex128):
        return np.dtype(dtype.type)  # native byte order
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype.kind in "fc":
        raise TypeError(f"a has dtype {dtype}: shiftop.svd computes in float32, float64, "
                        "complex64 or complex128; cast it first (a.astype(np.float32))")
    raise TypeError(f"a has dtype {dtype}: expected a real or complex numeric array")


def _threads(threads):
    if threads is None:
        return 0
    if isinstance(threads, bool) or operator.index(threads) < 1:
        raise ValueError(f"threads must be None (OpenMP's default) or a positive integer, "
                         f"got {threads!r}")
    return operator.index(threads)


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


def svd(a, compute_uv=True, hyperbolic=None, variant="auto", strategy="rc-closest-rev",
        rank_tolerance=0.0, threads=None, full_output=False):
    """The singular value decomposition of a matrix or a stack of matrices by the one-sided
    (Hestenes) Jacobi method, every singular value to high relative accuracy.

    Called like numpy.linalg.svd(a, full_matrices=False)::

        u, s, vh = shiftop.svd(a)            # a == (u * s[..., None, :]) @ vh
        s = shiftop.svd(a, compute_uv=False)

    a: array_like of shape (..., m, n), m < n allowed; a stack (any number of leading dimensions)
        is computed in one call, the matrices in parallel. It is read in place when each matrix
        has unit stride along its columns (Fortran order) or, without hyperbolic, along its rows
        (C order: the core is given the column-major n x m matrix a^T, no copy); copied
        otherwise (negative or zero strides, other strides).
    dtype: float64, float32, complex128 and complex64 are computed in their own precision (s in
        the matching real type); integers and booleans are cast to float64; float16 and longdouble
        are refused with TypeError (as numpy.linalg refuses them).
    compute_uv: False returns s alone.
    hyperbolic: None for the SVD; an integer n_plus (0 <= n_plus <= n, needs m >= n) for the
        hyperbolic SVD with the signature J = diag(I_{n_plus}, -I_{n - n_plus}) on the columns:
        a = u @ diag(s) @ inv(v), returned as (u, s, v) -- v itself, not its inverse or
        conjugate transpose -- with u (..., m, n) orthonormal columns, v (..., n, n)
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
    threads: OpenMP threads over the matrices of a stack, or over the disjoint pivot pairs of a
        single matrix (None: OpenMP's default). The results do not depend on it, bit for bit.
    full_output: also return a dict of per-matrix statistics, each an array of the stack's shape
        (...,): 'sweeps', 'rotations', 'proper_rotations' (rotations with cos != 1), 'converged'
        (bool), 'rank' (the columns the QR preprocessing kept, see rank_tolerance); appended last:
        (u, s, vh, info) or (s, info).

    Returns (u, s, vh) with u (..., m, k), s (..., k) descending, vh (..., k, n), k = min(m, n);
    u and vh may be views with Fortran-order matrices (no copy of the core's result).

    Raises numpy.linalg.LinAlgError when a matrix does not converge (a hyperbolic SVD that does
    not exist, rank(a J a^H) < rank(a)), unless full_output: then the results come back with
    info['converged'] saying which did not.
    Raises ValueError (or shiftop.Error, a ValueError) for fewer than 2 dimensions, empty
    matrices, NaN or infinity (naming the first such entry), hyperbolic out of range or m < n
    with hyperbolic, and unknown variant or strategy names; an empty stack (0, m, n) gives empty
    results.
    """
    a = np.asarray(a)
    if a.ndim < 2:
        raise ValueError(f"a must have at least 2 dimensions (..., m, n), got shape {a.shape}")
    *stack, m, n = a.shape
    if m == 0 or n == 0:
        raise ValueError(f"a must have non-empty matrices (m, n >= 1), got shape {a.shape}")
    a = a.astype(_working_dtype(a.dtype), copy=False)
    if variant not in _VARIANTS:
        raise ValueError(f"variant {variant!r}: expected one of {', '.join(_VARIANTS)}")
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy {strategy!r}: expected one of {', '.join(_STRATEGIES)}")
    n_plus = -1
    if hyperbolic is not None:
        if isinstance(hyperbolic, bool):
            raise TypeError("hyperbolic must be None or an integer n_plus, got a bool")
        n_plus = operator.index(hyperbolic)
        if not 0 <= n_plus <= n:
            raise ValueError(f"hyperbolic (n_plus) must be in 0..{n} (the columns of a), "
                             f"got {n_plus}")
        if m < n:
            raise ValueError(f"the hyperbolic SVD needs m >= n, got a of shape {a.shape}: "
                             "J acts on the columns, so a wide a cannot be transposed")
    workers = _threads(threads)
    if not np.isfinite(a).all():
        where, value = _first_nonfinite(a)
        raise ValueError(f"a{list(where)} is {value}: the SVD needs finite entries")

    real = np.finfo(a.dtype).dtype
    k = min(m, n)
    batch = int(np.prod(stack, dtype=np.int64))
    if batch == 0:
        return _empty(stack, m, n, k, a.dtype, real, compute_uv, n_plus, full_output)

    a3 = a.reshape(batch, m, n)
    hyperbolic_svd = n_plus >= 0
    # a^T (a C-order matrix read in place) is as good as a: the core's preprocessing sorts the
    # rows before its column-pivoted QR (dgejsv's row pivoting), so a row-graded matrix keeps the
    # relative accuracy of a column-graded one. The hyperbolic SVD must see a itself (J acts on
    # its columns).
    if not _in_place(a3, column_major_only=hyperbolic_svd):
        a3 = np.ascontiguousarray(a3.swapaxes(1, 2)).swapaxes(1, 2)
    out = _core.jacobi_batched(a3, compute_uv=compute_uv, n_plus=n_plus, variant=variant,
                               strategy=strategy, rank_tolerance=float(rank_tolerance),
                               threads=workers)
    converged = out["stats"]["converged"].astype(bool)
    if not full_output and not converged.all():
        first = np.unravel_index(int(np.argmin(converged)), stack) if stack else ()
        raise np.linalg.LinAlgError(
            f"the Jacobi {'hyperbolic ' if hyperbolic_svd else ''}SVD of matrix {first} did not "
            f"converge in {int(out['stats']['sweeps'][np.argmin(converged)])} sweeps"
            + (" (it exists only when rank(a J a^H) = rank(a))" if hyperbolic_svd else "")
            + "; full_output=True returns the results with the statistics instead")
    s = out["sigma"].reshape(*stack, k)
    if compute_uv:
        u, v_part = _vectors(out, hyperbolic_svd)
        result = (u.reshape(*stack, *u.shape[1:]), s, v_part.reshape(*stack, *v_part.shape[1:]))
    else:
        result = (s,)
    if full_output:
        result = (*result, _info(out["stats"], stack))
    return result if len(result) > 1 else result[0]


def _vectors(out, hyperbolic_svd):
    """(u, vh) -- (u, v) for the hyperbolic SVD -- from the core's U^T and V^T (C-order views of
    its column-major U and V) of the matrix it was given: a, or a^T when 'transposed'."""
    ut, vt = out["u"], out["v"]  # (batch, k, rows), (batch, k, cols) of what the core saw
    if hyperbolic_svd:
        return ut.swapaxes(1, 2), vt.swapaxes(1, 2)  # u = U, v = V (the core saw a)
    if out["transposed"]:
        # a^T = U' S V'^H, so a = conj(V') S U'^T: u = conj(V'), vh = U'^T.
        np.conjugate(vt, out=vt)
        return vt.swapaxes(1, 2), ut
    np.conjugate(vt, out=vt)  # a = U S V^H: vh = conj(V^T)
    return ut.swapaxes(1, 2), vt


def _info(stats, stack):
    info = {key: value.reshape(stack) for key, value in stats.items()}
    info["converged"] = info["converged"].astype(bool)
    return info


def _empty(stack, m, n, k, dtype, real, compute_uv, n_plus, full_output):
    s = np.empty((*stack, k), dtype=real)
    if compute_uv:
        cols = n if n_plus >= 0 else k
        last = (n, n) if n_plus >= 0 else (k, n)
        result = (np.empty((*stack, m, cols), dtype=dtype), s, np.empty((*stack, *last), dtype))
    else:
        result = (s,)
    if full_output:
        info = {key: np.empty(stack, dtype=np.int64)
                for key in ("sweeps", "rotations", "proper_rotations", "rank")}
        info["converged"] = np.empty(stack, dtype=bool)
        result = (*result, info)
    return result if len(result) > 1 else result[0]


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


def spectrum(K, first_row=None, *, rank_tolerance=None, threads=None) -> Spectrum:
    """The singular values of every F^[w] = sum_t K[:, :, t] exp(-2 pi i w t / (2 Nt)),
    w = 0..Nt (with the first block row's lags wrapped to the end for a general operator), by
    the batched Jacobi SVD: the spectrum of the block-circulant embedding of F.

    K: kernels (Nd, Nm, Nt) as Operator.from_kernels takes them (cast to float64);
    first_row: the first block row of a general block Toeplitz operator, same shape, or None.
    rank_tolerance: relative; the rank counts values > rank_tolerance * sigma_max (None:
        max(Nd, Nm) * eps).
    threads: OpenMP threads over the frequencies (None: OpenMP's default).

    Memory: F^ ((Nt+1) Nd Nm complex values, twice the kernels) plus the SVD's workspace, freed
    on return. See Operator.spectrum for an operator without its kernels at hand.
    """
    column = _kernels("K", K)
    row = None if first_row is None else _kernels("first_row", first_row)
    if row is not None and row.shape != column.shape:
        raise ValueError(f"first_row must have the shape of K {column.shape}, got {row.shape}")
    out = _core.spectrum(column, row, rank_tolerance=_rank_tolerance(rank_tolerance),
                         threads=_threads(threads))
    return Spectrum(sigma=out["sigma"], sigma_max=out["sigma_max"], sigma_min=out["sigma_min"],
                    kappa=out["kappa"], rank=out["rank"], tolerance=out["rank_tolerance"],
                    converged=out["converged"], max_sweeps=out["max_sweeps"])


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
