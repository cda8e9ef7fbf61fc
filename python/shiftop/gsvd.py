"""shiftop.gsvd: the generalized singular value decomposition of a pair of NumPy matrices (or of
stacks of pairs) by the implicit Hari-Zimmermann method (jacobi-svd-gsvd-gpu-thesis, chapter 3),
over the compiled core (svd/gsvd.hpp, on the CPU or a GPU), in FP64, real or complex.

For F (m x n) and G (p x n) with G of full column rank::

    F = u @ diag(sigma_f) @ x,    G = v @ diag(sigma_g) @ x,    sigma_f**2 + sigma_g**2 = 1,

v with orthonormal columns, u with orthonormal columns where sigma_f > 0, x nonsingular. The
generalized singular values sigma_f / sigma_g are the square roots of the eigenvalues of the
pencil (F^H F, G^H G): scipy.linalg.eigh(F^H F, G^H G) gives their squares, less accurately.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from . import _core
from ._checks import require_finite
from ._progress import sweep_reporter
from ._threads import thread_count

__all__ = ["gsvd", "GsvdResult"]

_VARIANTS = ("auto", "pointwise", "block-oriented", "full-block")
_STRATEGIES = ("modmod", "rc-closest-rev", "rc-closest", "rc")
_BACKENDS = (None, "cpu", "cuda")


@dataclass
class GsvdResult:
    """The GSVD of a pair (or of each pair of a stack, the leading dimensions ...).

    sigma_f, sigma_g: (..., n) real, sigma_f**2 + sigma_g**2 = 1, sigma_g > 0, ordered so that
        values = sigma_f / sigma_g does not increase.
    u: (..., m, n), v: (..., p, n), x: (..., n, n) with F = (u * sigma_f[..., None, :]) @ x and
        G = (v * sigma_g[..., None, :]) @ x; v has orthonormal columns, u orthonormal columns
        where sigma_f > 0 (zero columns where sigma_f = 0). None unless vectors=True.
    values: (..., n) the generalized singular values sigma_f / sigma_g, nonincreasing.
    stats: dict of arrays of the stack's shape (...,): 'sweeps', 'transformations',
        'proper_transformations' (those that were not the identity), 'converged' (bool).
    """

    sigma_f: np.ndarray
    sigma_g: np.ndarray
    values: np.ndarray
    u: np.ndarray | None
    v: np.ndarray | None
    x: np.ndarray | None
    stats: dict


def _working_dtype(name, dtype):
    """float64 or complex128: real inputs (floats, integers, booleans) promote to float64, complex
    ones to complex128; extended precision (longdouble) is refused rather than silently rounded."""
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype.kind == "f" and dtype.itemsize <= 8:
        return np.dtype(np.float64)
    if dtype.kind == "c" and dtype.itemsize <= 16:
        return np.dtype(np.complex128)
    if dtype.kind in "fc":
        raise TypeError(f"{name} has dtype {dtype}: shiftop.gsvd computes in float64 or "
                        f"complex128; cast it first ({name}.astype(np.float64))")
    raise TypeError(f"{name} has dtype {dtype}: expected a real or complex numeric array")


def _positive_or_none(name, value, what):
    if value is None:
        return 0
    if isinstance(value, bool) or operator.index(value) < 1:
        raise ValueError(f"{name} must be None ({what}) or a positive integer, got {value!r}")
    return operator.index(value)


def _device(backend, device):
    if backend not in _BACKENDS:
        raise ValueError(f"backend {backend!r}: expected None, 'cpu' or 'cuda'")
    if device is not None:
        if isinstance(device, bool) or operator.index(device) < 0:
            raise ValueError(f"device must be None or a CUDA device index >= 0, got {device!r}")
        if backend != "cuda":
            raise ValueError(f"device={device} needs backend='cuda'")
        return operator.index(device)
    return 0 if backend == "cuda" else None


def _column_major(a3):
    """a3 (batch, r, c) itself when the core can read it in place (each matrix column-major, the
    matrices apart), else a copy that is."""
    item = a3.itemsize
    batch, r, c = a3.shape
    if all(s % item == 0 and s >= 0 for s in a3.strides):
        sb, sr, sc = (s // item for s in a3.strides)
        if (sr == 1 or r == 1) and (c == 1 or sc >= r):
            ld = r if c == 1 else sc
            if batch == 1 or sb >= ld * c:
                return a3
    return np.ascontiguousarray(a3.swapaxes(1, 2)).swapaxes(1, 2)


def gsvd(F, G, *, vectors=False, variant="auto", strategy="modmod", block_width=None,
         threads=None, max_sweeps=None, backend=None, device=None, full_output=False,
         progress=None):
    """The generalized singular value decomposition of the pair (F, G) by the implicit
    Hari-Zimmermann method (Jacobi-type: every value to high relative accuracy in the pair's
    column scaling)::

        gamma = shiftop.gsvd(F, G)                  # sigma_f / sigma_g, nonincreasing
        r = shiftop.gsvd(F, G, vectors=True)        # a GsvdResult
        F ~= (r.u * r.sigma_f) @ r.x;  G ~= (r.v * r.sigma_g) @ r.x

    F: array_like (..., m, n); G: array_like (..., p, n) of full column rank (so p >= n); the
        leading (stack) dimensions broadcast, each pair is solved independently (a stack of more
        than one pair runs gsvd_hz_batched: OpenMP over the pairs). Any order; copied to
        column-major matrices unless they already are.
    dtype: any real dtype is computed in float64, any complex one (or a real one paired with a
        complex one) in complex128: float32 and complex64 are promoted, not computed in single
        precision. longdouble is refused (TypeError).
    vectors: also u, v and x (see GsvdResult); returns a GsvdResult instead of the values.
    variant: 'auto' (pointwise for small n, blocked above), 'pointwise' (Algorithm 5),
        'block-oriented' or 'full-block' (Algorithm 8).
    strategy: the outer pivot strategy: 'modmod' (modified modulus, the thesis' choice, Table
        3.2), 'rc-closest-rev', 'rc-closest' or 'rc' (row-cyclic, sequential).
    block_width: columns per block column of the blocked variants (None: chosen from n).
    threads: OpenMP threads: None (OpenMP's default) or 1 up to the hardware threads; the
        results do not depend on it.
    progress: as shiftop.svd's: called after every (block-)sweep on the CPU with a
        shiftop.SweepProgress (its rotations are the sweep's transformations).
    max_sweeps: (block-)sweeps before giving up (None: 50).
    backend: None or 'cpu': on the CPU; 'cuda': the GPU twin (svd/gsvd.hpp) on GPU `device`
        (None: 0), copied there and back, equal to the CPU's within rounding.
    full_output: return the GsvdResult (u, v, x None without vectors) and do not raise when a
        pair did not converge (stats['converged'] says which).

    Raises numpy.linalg.LinAlgError when a pair does not converge in max_sweeps (unless
    full_output); ValueError (shiftop.Error is one) for fewer than 2 dimensions, empty matrices,
    column counts that differ, non-finite entries (naming the first), a G that is not of full
    column rank (p < n, a zero column, or numerically rank deficient), unknown option names.
    """
    F = np.asarray(F)
    G = np.asarray(G)
    for name, a in (("F", F), ("G", G)):
        if a.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., rows, n), got shape "
                             f"{a.shape}")
        if a.shape[-2] == 0 or a.shape[-1] == 0:
            raise ValueError(f"{name} must have non-empty matrices, got shape {a.shape}")
    if F.shape[-1] != G.shape[-1]:
        raise ValueError(f"F and G must have the same number of columns, got F of shape "
                         f"{F.shape} and G of shape {G.shape}")
    if variant not in _VARIANTS:
        raise ValueError(f"variant {variant!r}: expected one of {', '.join(_VARIANTS)}")
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy {strategy!r}: expected one of {', '.join(_STRATEGIES)}")
    width = _positive_or_none("block_width", block_width, "chosen from n")
    workers = thread_count(threads)
    sweeps = _positive_or_none("max_sweeps", max_sweeps, "50")
    gpu = _device(backend, device)

    dtype = np.result_type(_working_dtype("F", F.dtype), _working_dtype("G", G.dtype))
    try:
        stack = np.broadcast_shapes(F.shape[:-2], G.shape[:-2])
    except ValueError:
        raise ValueError(f"the stacks of F {F.shape[:-2]} and G {G.shape[:-2]} do not "
                         "broadcast") from None
    m, n = F.shape[-2:]
    p = G.shape[-2]
    F = np.broadcast_to(F, (*stack, m, n)).astype(dtype, copy=False)
    G = np.broadcast_to(G, (*stack, p, n)).astype(dtype, copy=False)
    require_finite("F", F, "the GSVD needs finite entries")
    require_finite("G", G, "the GSVD needs finite entries")
    if p < n:
        raise ValueError(f"G must have full column rank, so at least as many rows as columns: "
                         f"got G of shape {G.shape} (p = {p} < n = {n})")

    batch = int(np.prod(stack, dtype=np.int64))
    real = np.float64
    if batch == 0:
        sf, sg = np.empty((*stack, n), real), np.empty((*stack, n), real)
        stats = {k: np.empty(stack, np.int64) for k in
                 ("sweeps", "transformations", "proper_transformations")}
        stats["converged"] = np.empty(stack, bool)
        if not (vectors or full_output):
            return sf.copy()
        return GsvdResult(sf, sg, sf.copy(), *(
            (np.empty((*stack, r, n), dtype) for r in (m, p, n)) if vectors else (None,) * 3),
            stats)

    f3 = _column_major(F.reshape(batch, m, n))
    g3 = _column_major(G.reshape(batch, p, n))
    out = _core.gsvd_batched(f3, g3, compute_vectors=bool(vectors), variant=variant,
                             strategy=strategy, block_width=width, threads=workers,
                             max_sweeps=sweeps, device=gpu, progress=sweep_reporter(progress))
    converged = out["stats"]["converged"].astype(bool)
    if not full_output and not converged.all():
        first = int(np.argmin(converged))
        which = f" of pair {np.unravel_index(first, stack)}" if stack else ""
        raise np.linalg.LinAlgError(
            f"the GSVD{which} did not converge in {int(out['stats']['sweeps'][first])} sweeps "
            "(max_sweeps); full_output=True returns the results with the statistics instead")
    sigma_f = out["sigma_f"].reshape(*stack, n)
    sigma_g = out["sigma_g"].reshape(*stack, n)
    values = sigma_f / sigma_g
    if not (vectors or full_output):
        return values
    stats = {k: v.reshape(stack) for k, v in out["stats"].items()}
    stats["converged"] = stats["converged"].astype(bool)
    u = v = x = None
    if vectors:
        # The core's column-major matrices, seen as C-order (batch, n, rows): transposed views.
        u = out["u"].swapaxes(1, 2).reshape(*stack, m, n)
        v = out["v"].swapaxes(1, 2).reshape(*stack, p, n)
        x = out["x"].swapaxes(1, 2).reshape(*stack, n, n)
    return GsvdResult(sigma_f=sigma_f, sigma_g=sigma_g, values=values, u=u, v=v, x=x,
                      stats=stats)
