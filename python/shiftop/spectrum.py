"""shiftop.spectrum: the spectrum of a block Toeplitz operator, the singular values of every
F^[w] of its block-circulant embedding by the batched Jacobi SVD of the compiled core
(svd/spectrum.hpp), on the CPU or on a GPU. Operator.spectrum computes it from an operator's plan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _core
from ._checks import kernel_array, require_finite
from ._placement import on_host, placement
from ._threads import thread_count


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
    backend, device = placement(K, "K", backend, device)
    column = _kernels("K", on_host(K))
    row = None if first_row is None else _kernels("first_row", on_host(first_row))
    if row is not None and row.shape != column.shape:
        raise ValueError(f"first_row must have the shape of K {column.shape}, got {row.shape}")
    out = _core.spectrum(column, row, rank_tolerance=_rank_tolerance(rank_tolerance),
                         threads=thread_count(threads), device=device)
    out["sigma"].setflags(write=False)  # sigma_max, sigma_min, kappa and rank are derived from it
    return Spectrum(sigma=out["sigma"], sigma_max=out["sigma_max"], sigma_min=out["sigma_min"],
                    kappa=out["kappa"], rank=out["rank"], tolerance=out["rank_tolerance"],
                    converged=out["converged"], max_sweeps=out["max_sweeps"])


def _kernels(name, a):
    a = kernel_array(name, a)
    require_finite(name, a, "the spectrum needs finite kernels")
    return a
