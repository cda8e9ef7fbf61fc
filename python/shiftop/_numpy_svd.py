"""numpy.linalg.svd's conventions beyond the Jacobi SVD itself, for shiftop.svd: the SVDResult
named tuple, the full matrices (the thin factors completed to unitary ones) and the results of
empty matrices."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

try:
    from numpy.linalg._linalg import SVDResult  # numpy >= 2: what numpy.linalg.svd returns
except ImportError:  # numpy 1.x returns a plain tuple; the same fields by name
    SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])

_STATS = ("sweeps", "rotations", "proper_rotations", "rank")


def complete_basis(q):
    """q (..., m, k) with orthonormal columns, k <= m, extended to a unitary (..., m, m): q's own
    columns first, then the last m - k columns of the complete Householder QR of q
    (numpy.linalg.qr: LAPACK geqrf and orgqr/ungqr). Householder QR is backward stable: its Q is
    orthogonal to about m * eps and q = Q[:, :k] R up to about m * eps, so the new columns are
    orthogonal to q's to about m * eps, as LAPACK's own full U is."""
    m, k = q.shape[-2:]
    if k == m:
        return q
    q_full = np.linalg.qr(q, mode="complete")[0]
    return np.concatenate([q, q_full[..., k:]], axis=-1)


def full_factors(u, v_part, hyperbolic):
    """The factors of full_matrices=True from the thin ones: u (..., m, k) completed to
    (..., m, m); vh (..., k, n) to (..., n, n) by completing the columns of its conjugate
    transpose (the hyperbolic SVD's v is square already). The thin factors stay the leading
    columns (rows of vh) exactly."""
    u = complete_basis(u)
    if not hyperbolic:
        v_part = complete_basis(v_part.conj().swapaxes(-1, -2)).conj().swapaxes(-1, -2)
    return u, v_part


def package(s, factors, hyperbolic, info):
    """What shiftop.svd returns: SVDResult(U, S, Vh), the tuple (u, s, v) of the hyperbolic SVD,
    or s alone (factors None); with info (full_output) a plain tuple with info last."""
    if factors is None:
        result = (s,)
    else:
        u, v_part = factors
        result = (u, s, v_part) if hyperbolic else SVDResult(u, s, v_part)
    if info is not None:
        return (*result, info)
    return s if factors is None else result


def empty_results(stack, m, n, dtype, real, full_matrices, compute_uv, hyperbolic, full_output):
    """numpy.linalg.svd's results where there is nothing to compute (an empty stack, m = 0 or
    n = 0), as NumPy arrays: empty arrays of the results' shapes, and with full_matrices the
    identity as U (m x m) and Vh (n x n) -- the unitary completion of empty thin factors. The
    statistics of an empty matrix: no sweeps, converged, rank 0."""
    k = min(m, n)
    s = np.zeros((*stack, n if hyperbolic else k), real)
    factors = None
    if compute_uv:
        cols = m if full_matrices else (n if hyperbolic else k)
        last = (n, n) if hyperbolic or full_matrices else (k, n)
        u = np.zeros((*stack, m, cols), dtype)
        v_part = np.zeros((*stack, *last), dtype)
        if full_matrices or hyperbolic:  # the hyperbolic SVD's v is square: the identity too
            u[..., :, :] = np.eye(m, cols, dtype=dtype)
            v_part[..., :, :] = np.eye(*last, dtype=dtype)
        factors = (u, v_part)
    info = None
    if full_output:
        info = {key: np.zeros(stack, dtype=np.int64) for key in _STATS}
        info["converged"] = np.ones(stack, dtype=bool)
    return package(s, factors, hyperbolic, info)
