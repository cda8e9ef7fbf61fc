"""The linear Gaussian inverse problem d = F m + e (mixed-precision-block-toeplitz-matvec, section
2.2, eqs. 3-4): the noise e ~ N(0, Gamma_noise), the priors m ~ N(m_prior, Gamma_prior), the
Hessian H = F* Gamma_noise^-1 F + Gamma_prior^-1 and the MAP point by preconditioned CG.

    op = shiftop.Operator.from_kernels(K)                     # (Nd, Nm, Nt)
    noise = shiftop.GaussianNoise(0.01, nd, nt)               # one variance, or one per sensor
    prior = shiftop.TimeSmoothingPrior(1.0, nm, nt, correlation_steps=10)
    result = shiftop.map_point(op, d, noise, prior, preconditioner="circulant")
    result.m, result.iterations, result.residual_history, result.converged

Vectors are float64 arrays of shape (blocks, Nt), or (nrhs, blocks, Nt) for several at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _core
from ._locks import holding, new_lock
from ._threads import thread_count
from .operator import Operator, _as_float64

__all__ = ["GaussianNoise", "DiagonalPrior", "TimeSmoothingPrior", "KernelPrior", "Hessian",
           "MapResult", "map_point"]


def _variances(name, variances, blocks):
    """One positive variance per block from a scalar (every block) or a 1-D array of `blocks`."""
    v = np.asarray(variances, dtype=np.float64)
    if v.ndim == 0:
        if blocks is None:
            raise ValueError(f"{name}: a single variance needs the number of blocks")
        return [float(v)] * int(blocks)
    if v.ndim != 1 or (blocks is not None and v.shape[0] != blocks):
        raise ValueError(f"{name}: expected a scalar or {blocks} values (one per block), "
                         f"got shape {v.shape}")
    return [float(x) for x in v]


def _apply(method, blocks, nt, x, name):
    """method(x, y, nrhs) of the core on x of shape (blocks, Nt) or (nrhs, blocks, Nt)."""
    x = _as_float64(name, x)
    if x.shape[-2:] != (blocks, nt) or x.ndim not in (2, 3):
        raise ValueError(f"{name} has shape {x.shape}: expected ({blocks}, {nt}) or "
                         f"(nrhs, {blocks}, {nt})")
    y = np.empty_like(x)
    if x.size:  # an empty batch (0, blocks, Nt) gives an empty one, as Operator does
        method(x, y, 1 if x.ndim == 2 else x.shape[0])
    return y


class GaussianNoise:
    """Gamma_noise = diag(variance_i) kron I_Nt: independent in time, one variance per sensor.

    variances: a scalar (every sensor) or Nd values, positive; blocks: Nd (needed with a scalar).
    """

    def __init__(self, variances, blocks: int | None = None, nt: int | None = None):
        if nt is None:
            raise ValueError("GaussianNoise: nt (time steps) is required")
        self._core = _core.GaussianNoise(_variances("noise variances", variances, blocks), nt)

    @property
    def blocks(self) -> int:
        return self._core.blocks

    @property
    def nt(self) -> int:
        return self._core.nt

    @property
    def variances(self) -> np.ndarray:
        return np.array(self._core.variances)

    def __matmul__(self, x):
        """Gamma_noise x."""
        return _apply(self._core.apply, self.blocks, self.nt, x, "x")

    def inverse(self, x):
        """Gamma_noise^-1 x."""
        return _apply(self._core.apply_inverse, self.blocks, self.nt, x, "x")

    def sqrt(self, x):
        """Gamma_noise^(1/2) x."""
        return _apply(self._core.apply_sqrt, self.blocks, self.nt, x, "x")


class _Prior:
    """What the priors share: Gamma_prior x (`@`), the precision and the factor where they exist.
    Calls on one prior are serialised by a lock (priors with a plan use its workspaces)."""

    __array_ufunc__ = None

    def __init__(self, core):
        self._core = core
        self._lock = new_lock()

    @property
    def blocks(self) -> int:
        return self._core.blocks

    @property
    def nt(self) -> int:
        return self._core.nt

    @property
    def has_precision(self) -> bool:
        return self._core.has_precision

    @property
    def has_sqrt(self) -> bool:
        return self._core.has_sqrt

    def _run(self, method, x):
        with self._lock:
            return _apply(method, self.blocks, self.nt, x, "x")

    def __matmul__(self, x):
        """Gamma_prior x."""
        return self._run(self._core.apply_covariance, x)

    def precision(self, x):
        """Gamma_prior^-1 x (diagonal and smoothing priors; a kernel prior raises ValueError)."""
        return self._run(self._core.apply_precision, x)

    def sqrt(self, x):
        """S x with Gamma_prior = S S^T (diagonal and smoothing priors), for samples S xi."""
        return self._run(self._core.apply_sqrt, x)


class DiagonalPrior(_Prior):
    """Gamma_prior = diag(variance_j) kron I_Nt. variances: a scalar or Nm values."""

    def __init__(self, variances, blocks: int | None = None, nt: int | None = None):
        if nt is None:
            raise ValueError("DiagonalPrior: nt (time steps) is required")
        super().__init__(_core.DiagonalPrior(_variances("prior variances", variances, blocks), nt))


class TimeSmoothingPrior(_Prior):
    """Gamma_prior = diag(variance_j) kron T, T_st = exp(-|s-t| / correlation_steps): each block
    an AR(1) (Ornstein-Uhlenbeck) series in time. variances: a scalar or Nm values."""

    def __init__(self, variances, blocks: int | None = None, nt: int | None = None, *,
                 correlation_steps: float, backend: str = "cpu", device: int = 0,
                 threads: int | None = None):
        if nt is None:
            raise ValueError("TimeSmoothingPrior: nt (time steps) is required")
        super().__init__(_core.TimeSmoothingPrior(
            _variances("prior variances", variances, blocks), float(correlation_steps), nt,
            backend=backend, device=device, threads=thread_count(threads)))

    @property
    def rho(self) -> float:
        """exp(-1/correlation_steps), the correlation of neighbouring time steps."""
        return self._core.rho


class KernelPrior(_Prior):
    """A symmetric block Toeplitz covariance from its first block column: kernels of shape
    (Nm, Nm, Nt), lag k = kernels[:, :, k], lag -k its transpose. It must be positive definite;
    it has no closed-form precision or factor (use the prior preconditioner)."""

    def __init__(self, kernels, *, backend: str = "cpu", device: int = 0,
                 threads: int | None = None):
        k = _as_float64("kernels", kernels)
        if k.ndim != 3:
            raise ValueError(f"kernels has shape {k.shape}: expected (Nm, Nm, Nt)")
        super().__init__(_core.KernelPrior(k, backend=backend, device=device,
                                           threads=thread_count(threads)))


def _check_operator(op):
    if not isinstance(op, Operator):
        raise TypeError(f"expected a shiftop.Operator, got {type(op).__name__}")


def _check_sizes(op, noise, prior):
    _check_operator(op)
    if not isinstance(noise, GaussianNoise):
        raise TypeError(f"noise: expected a shiftop.GaussianNoise, got {type(noise).__name__}")
    if not isinstance(prior, _Prior):
        raise TypeError(f"prior: expected a shiftop prior (DiagonalPrior, TimeSmoothingPrior, "
                        f"KernelPrior), got {type(prior).__name__}")


class Hessian:
    """H = F* Gamma_noise^-1 F + Gamma_prior^-1 on parameter vectors (Nm, Nt) or (nrhs, Nm, Nt):
    ``H @ m``. ``aslinearoperator()`` gives it to scipy's solvers on flattened vectors. The
    product needs the prior's precision (not a KernelPrior's); ``misfit(m)`` is the first term."""

    __array_ufunc__ = None

    def __init__(self, op: Operator, noise: GaussianNoise, prior):
        _check_sizes(op, noise, prior)
        self._op, self._noise, self._prior = op, noise, prior
        self._core = _core.Hessian(op._plan, noise._core, prior._core)
        nd, nm, nt = op.kernel_shape
        self._vector_shape = (nm, nt)

    @property
    def input_shape(self) -> tuple[int, int]:
        """(Nm, Nt): the shape of one parameter vector, H's input and output."""
        return self._vector_shape

    @property
    def shape(self) -> tuple[int, int]:
        n = self._core.size
        return (n, n)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.float64)

    def _run(self, method, x):
        with holding(self._op, self._prior):  # F's plan and the prior's plan are used
            return _apply(method, *self._vector_shape, x, "m")

    def __matmul__(self, x):
        return self._run(self._core.apply, x)

    def misfit(self, x):
        """F* Gamma_noise^-1 F x."""
        return self._run(self._core.apply_misfit, x)

    def aslinearoperator(self):
        """H as a scipy.sparse.linalg.LinearOperator on flattened (C order) parameter vectors,
        self-adjoint; a matrix of k columns is applied as one batch of k vectors."""
        from .linear_operator import as_scipy

        return as_scipy(self, adjoint=self)


@dataclass
class MapResult:
    """m: the MAP point (Nm, Nt); residual_history: the relative residual in the preconditioner
    norm after each iteration, 1.0 at iteration 0."""

    m: np.ndarray
    iterations: int
    residual_history: np.ndarray
    converged: bool
    setup_seconds: float
    iteration_seconds: float


def map_point(op: Operator, d, noise: GaussianNoise, prior, m_prior=None, *, tol: float = 1e-8,
              maxiter: int = 1000, preconditioner: str = "prior", callback=None,
              threads: int | None = None) -> MapResult:
    """The MAP point m = H^-1 (F* Gamma_noise^-1 d + Gamma_prior^-1 m_prior) by preconditioned
    CG from m_prior (eq. 4). preconditioner: "prior" (Gamma_prior; every prior) or "circulant"
    (the circulant approximation of H^-1; diagonal and smoothing priors). callback(iteration,
    relative_residual) is called after every iteration. Stops when the relative residual in the
    preconditioner norm is below tol, or after maxiter iterations (converged False)."""
    workers = thread_count(threads)
    hessian = Hessian(op, noise, prior)
    nd, nm, nt = op.kernel_shape
    d = _as_float64("d", d)
    if d.shape != (nd, nt):
        raise ValueError(f"d has shape {d.shape}: expected ({nd}, {nt})")
    if m_prior is None:
        m_prior = np.empty((0,))
    else:
        m_prior = _as_float64("m_prior", m_prior)
        if m_prior.shape != (nm, nt):
            raise ValueError(f"m_prior has shape {m_prior.shape}: expected ({nm}, {nt})")
    if preconditioner not in ("prior", "circulant"):
        raise ValueError(f"preconditioner '{preconditioner}': expected 'prior' or 'circulant'")
    if callback is not None and not callable(callback):
        raise TypeError("callback: expected a callable (iteration, relative_residual)")
    with holding(op, prior):  # reentrant: the callback may use op
        r = _core.map_cg(hessian._core, d, m_prior, float(tol), int(maxiter), preconditioner,
                         callback, workers)
    return MapResult(m=r["m"].reshape(nm, nt), iterations=r["iterations"],
                     residual_history=r["residual_history"], converged=r["converged"],
                     setup_seconds=r["setup_seconds"], iteration_seconds=r["iteration_seconds"])
