"""The data-space Hessian K = Gamma_noise + F Gamma_prior F* of the linear Gaussian inverse
problem, assembled and Cholesky-factored once (offline), then used for every new data vector
(online): the MAP point, the MAP of quantities of interest q = Q m, posterior variances and
posterior samples (mixed-precision-block-toeplitz-matvec, section 2.3; the offline/online split
of the tsunami digital twin it cites).

    op = shiftop.Operator.from_kernels(K)                       # (Nd, Nm, Nt)
    noise = shiftop.GaussianNoise(0.01, nd, nt)
    prior = shiftop.TimeSmoothingPrior(1.0, nm, nt, correlation_steps=10)
    h = shiftop.DataSpaceHessian(op, noise, prior, qoi=Q)       # offline: K, its factor, W
    m = h.map_point(d)                                          # online, for each new d
    q, q_var = h.qoi_map(d), h.qoi_variance()

K has (Nd*Nt)^2 entries: this is the method for few sensors (it does not grow with Nm). On a CUDA
operator K lives on the GPU (the prior and Q must be CUDA too).
"""

from __future__ import annotations

import sys

import numpy as np

from . import _core
from ._locks import holding
from .inverse import GaussianNoise, _Prior
from .operator import Operator, _as_float64

__all__ = ["DataSpaceHessian"]


def _terminal_progress(stage, done, total):
    """Progress on stderr: one line rewritten in place, ended when a stage completes."""
    end = "\n" if done == total else ""
    print(f"\rdata-space Hessian: {stage} {done}/{total} columns", end=end, file=sys.stderr,
          flush=True)


class DataSpaceHessian:
    """K = Gamma_noise + F Gamma_prior F* and its Cholesky factor, built when constructed.

    op: the shiftop.Operator F (Nd, Nm, Nt); noise: shiftop.GaussianNoise (Nd sensors); prior: a
    shiftop prior (Nm blocks); qoi: an optional shiftop.Operator Q (Nq, Nm, Nt) mapping
    parameters to quantities of interest, for qoi_map and qoi_variance; prior_mean: m_prior of
    shape (Nm, Nt) (zero when None); rhs_per_apply: identity columns pushed through F*,
    Gamma_prior and F together (0 chooses 64); progress: None prints the assembly's progress on
    stderr when it is a terminal, True always, False never, or a callable(stage, done, total).

    Calls are serialised with the operators' and the prior's locks (their plans are used)."""

    def __init__(self, op: Operator, noise: GaussianNoise, prior, qoi: Operator | None = None, *,
                 prior_mean=None, rhs_per_apply: int = 0, progress=None):
        if not isinstance(op, Operator):
            raise TypeError(f"op: expected a shiftop.Operator, got {type(op).__name__}")
        if not isinstance(noise, GaussianNoise):
            raise TypeError(f"noise: expected a shiftop.GaussianNoise, got {type(noise).__name__}")
        if not isinstance(prior, _Prior):
            raise TypeError(f"prior: expected a shiftop prior (DiagonalPrior, TimeSmoothingPrior, "
                            f"KernelPrior), got {type(prior).__name__}")
        if qoi is not None and not isinstance(qoi, Operator):
            raise TypeError(f"qoi: expected a shiftop.Operator or None, got {type(qoi).__name__}")
        nd, nm, nt = op.kernel_shape
        self._op, self._prior, self._qoi = op, prior, qoi
        self._data_shape, self._parameter_shape = (nd, nt), (nm, nt)
        self._qoi_shape = (qoi.kernel_shape[0], nt) if qoi is not None else None
        if prior_mean is None:
            mean = np.empty((0,))
        else:
            mean = _as_float64("prior_mean", prior_mean)
            if mean.shape != (nm, nt):
                raise ValueError(f"prior_mean has shape {mean.shape}: expected ({nm}, {nt})")
        if progress is None:
            progress = _terminal_progress if sys.stderr.isatty() else False
        elif progress is True:
            progress = _terminal_progress
        if progress is not False and not callable(progress):
            raise TypeError("progress: expected None, True, False or a callable(stage, done, "
                            "total)")
        if isinstance(rhs_per_apply, bool) or not isinstance(rhs_per_apply, (int, np.integer)):
            raise TypeError(f"rhs_per_apply: expected an int, got {type(rhs_per_apply).__name__}")
        with self._locks():
            self._core = _core.DataSpaceHessian(
                op._plan, noise._core, prior._core, qoi._plan if qoi is not None else None, mean,
                int(rhs_per_apply), op.device or 0, progress or None)

    def _locks(self):
        return holding(self._op, self._qoi, self._prior)

    @property
    def shape(self) -> tuple[int, int]:
        """The shape of K, (Nd*Nt, Nd*Nt)."""
        n = self._core.size
        return (n, n)

    @property
    def matrix(self) -> np.ndarray:
        """A copy of K on the host, (Nd*Nt, Nd*Nt), rows and columns in SOTI order."""
        return self._core.matrix()

    @property
    def on_device(self) -> bool:
        """Whether K lives on a GPU."""
        return self._core.on_device

    @property
    def memory_bytes(self) -> int:
        """Bytes held for K, W and the workspaces."""
        return self._core.memory_bytes

    @property
    def times(self) -> dict[str, float]:
        """Seconds of the offline phase: assembly, factor, qoi."""
        return self._core.times

    def _batch(self, name, x, shape):
        x = _as_float64(name, x)
        if x.shape[-2:] != shape or x.ndim not in (2, 3):
            raise ValueError(f"{name} has shape {x.shape}: expected {shape} or (nrhs, {shape[0]}, "
                             f"{shape[1]})")
        return x, (1 if x.ndim == 2 else x.shape[0])

    def map_point(self, d) -> np.ndarray:
        """m_map = m_prior + Gamma_prior F* K^-1 (d - F m_prior) for d of shape (Nd, Nt) (gives
        (Nm, Nt)) or a batch (nrhs, Nd, Nt) (gives (nrhs, Nm, Nt))."""
        d, nrhs = self._batch("d", d, self._data_shape)
        m = np.empty(d.shape[:-2] + self._parameter_shape)
        if nrhs == 0:  # an empty batch gives an empty one, as Operator does
            return m
        with self._locks():
            self._core.map_point(d, m, nrhs)
        return m

    def qoi_map(self, d) -> np.ndarray:
        """q_map = Q m_map for d of shape (Nd, Nt) or (nrhs, Nd, Nt): one product with the
        precomputed W = K^-1 F Gamma_prior Q* (no solve). Needs qoi."""
        if self._qoi is None:
            raise ValueError("qoi_map needs a QoI map: pass qoi= when building the Hessian")
        d, nrhs = self._batch("d", d, self._data_shape)
        q = np.empty(d.shape[:-2] + self._qoi_shape)
        if nrhs == 0:  # an empty batch gives an empty one, as Operator does
            return q
        with self._locks():
            self._core.qoi_map(d, q, nrhs)
        return q

    def qoi_variance(self) -> np.ndarray:
        """The posterior variance of every QoI entry, diag(Q Gamma_post Q*), shape (Nq, Nt);
        computed offline (it does not depend on the data). Needs qoi."""
        if self._qoi is None:
            raise ValueError("qoi_variance needs a QoI map: pass qoi= when building the Hessian")
        return self._core.qoi_variance().reshape(self._qoi_shape)

    def posterior_variance(self, indices) -> np.ndarray:
        """diag(Gamma_post) at parameter entries given as (block, t) pairs: an array of shape
        (k, 2) (or one pair); returns k variances."""
        idx = np.asarray(indices)
        if idx.ndim == 1:
            idx = idx.reshape(1, -1)
        if idx.ndim != 2 or idx.shape[1] != 2 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"indices: expected integer (block, t) pairs of shape (k, 2), got "
                             f"shape {np.shape(indices)} of {idx.dtype}")
        with self._locks():
            return self._core.posterior_variance(idx[:, 0].tolist(), idx[:, 1].tolist())

    def sample(self, d, n: int = 1, seed: int = 0) -> np.ndarray:
        """n samples of the posterior N(m_map(d), Gamma_post), shape (n, Nm, Nt), from standard
        normals of a generator seeded with seed (the same samples on every platform and on the
        GPU). Needs a prior with a square root (not a KernelPrior)."""
        d = _as_float64("d", d)
        if d.shape != self._data_shape:
            raise ValueError(f"d has shape {d.shape}: expected {self._data_shape}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n: expected a positive int, got {n!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed: expected a non-negative int, got {seed!r}")
        out = np.empty((int(n),) + self._parameter_shape)
        with self._locks():
            self._core.sample(d, int(n), int(seed), out)
        return out

    def sample_from(self, d, xi_parameter, xi_data) -> np.ndarray:
        """Posterior samples from given standard normals (Matheron's rule): xi_parameter of shape
        (n, Nm, Nt) and xi_data of shape (n, Nd, Nt) give n samples
        m_map + S xi_1 - Gamma_prior F* K^-1 (F S xi_1 + Gamma_noise^(1/2) xi_2)."""
        d = _as_float64("d", d)
        if d.shape != self._data_shape:
            raise ValueError(f"d has shape {d.shape}: expected {self._data_shape}")
        xi_parameter, n = self._batch("xi_parameter", xi_parameter, self._parameter_shape)
        xi_data, n_data = self._batch("xi_data", xi_data, self._data_shape)
        if n != n_data:
            raise ValueError(f"xi_parameter holds {n} samples but xi_data {n_data}")
        out = np.empty(xi_parameter.shape)
        with self._locks():
            self._core.sample_from(d, xi_parameter, xi_data, out, n)
        return out

    def __repr__(self):
        where = "GPU" if self.on_device else "CPU"
        return (f"DataSpaceHessian(K {self.shape[0]}x{self.shape[1]} on the {where}, "
                f"qoi={'yes' if self._qoi is not None else 'no'})")
