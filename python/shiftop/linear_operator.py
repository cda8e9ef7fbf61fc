"""Adapters of shiftop operators to the linear-operator protocols of SciPy and PyLops.

Both act on flattened vectors: a vector of shape (blocks, Nt) raveled in C order (shiftop's SOTI
layout), so that x.reshape(blocks, Nt) is the shiftop vector with no copy. A matrix of k
columns, shape (blocks*Nt, k), goes through the core as one batch of k right-hand sides (k = 0
included). The operator is real, hence complex-linear: a complex input's real and imaginary parts
go through the core as one batch of 2k real columns, F x = F Re(x) + i F Im(x), as PyLops'
clinear=True and scipy's LinearOperator expect.
"""

from __future__ import annotations

import numpy as np


def _apply_columns(action, columns):
    """action @ each column of `columns` (rows blocks*Nt, or a single vector), as one batch."""
    columns = np.asarray(columns)
    blocks, nt = action.input_shape
    rows = action.shape[0]
    if columns.ndim not in (1, 2) or columns.shape[0] != blocks * nt:
        raise ValueError(
            f"expected a vector of {blocks * nt} values or a matrix of {blocks * nt} rows, "
            f"got shape {columns.shape}"
        )
    if np.iscomplexobj(columns):
        split = np.concatenate([columns.real, columns.imag], axis=-1) if columns.ndim == 2 \
            else np.stack([columns.real, columns.imag], axis=-1)
        y = _apply_columns(action, split)
        k = y.shape[1] // 2
        y = y[:, :k] + 1j * y[:, k:]
        return y.reshape(rows) if columns.ndim == 1 else y
    if columns.ndim == 1 or columns.shape[1] == 1:
        y = action @ columns.reshape(blocks, nt)
        return y.reshape(rows) if columns.ndim == 1 else y.reshape(rows, 1)
    k = columns.shape[1]
    batch = np.ascontiguousarray(columns.T).reshape(k, blocks, nt)
    return (action @ batch).reshape(k, rows).T


def as_scipy(action):
    """action (an Operator, op.H or a normal operator) as a scipy.sparse.linalg.LinearOperator
    with matvec, rmatvec, matmat and rmatmat in float64."""
    from scipy.sparse.linalg import LinearOperator

    class _ShiftopLinearOperator(LinearOperator):
        def __init__(self):
            super().__init__(dtype=np.float64, shape=action.shape)

        def _matvec(self, x):
            return _apply_columns(action, x)

        def _rmatvec(self, x):
            return _apply_columns(action.H, x)

        def _matmat(self, X):
            return _apply_columns(action, X)

        def _rmatmat(self, X):
            return _apply_columns(action.H, X)

        def _adjoint(self):
            return as_scipy(action.H)

        def __repr__(self):
            return f"<{self.shape[0]}x{self.shape[1]} scipy LinearOperator of {action!r}>"

    return _ShiftopLinearOperator()


class PyLopsOperator:
    """A shiftop operator under PyLops' LinearOperator protocol, without PyLops.

    dims (model) and dimsd (data) are the vectors' shapes (blocks, Nt); matvec/rmatvec take
    flattened vectors of shape (N,) or (N, 1), matmat/rmatmat matrices of N rows. Wrap it in
    ``pylops.LinearOperator(op.aspylops())`` to use PyLops' solvers and algebra; its _matvec calls
    our matmat, its _rmatvec our H.matvec.
    """

    def __init__(self, action):
        self._action = action
        self.shape = action.shape
        self.dtype = np.dtype(np.float64)
        self.dims = tuple(action.input_shape)
        self.dimsd = tuple(action.output_shape)
        self.clinear = True  # a real matrix: complex inputs go through as F Re(x) + i F Im(x)
        self.explicit = False  # no stored matrix A
        self.name = "shiftop"
        self.matvec_count = 0
        self.rmatvec_count = 0
        self.matmat_count = 0
        self.rmatmat_count = 0

    def _matvec(self, x):
        return _apply_columns(self._action, x)

    def _rmatvec(self, x):
        return _apply_columns(self._action.H, x)

    def matvec(self, x):
        """F x on a flattened model vector of shape (N,) or (N, 1)."""
        self.matvec_count += 1
        return self._check(x, self.shape[1], self._matvec)

    def rmatvec(self, x):
        """F* x on a flattened data vector of shape (M,) or (M, 1)."""
        self.rmatvec_count += 1
        return self._check(x, self.shape[0], self._rmatvec)

    def matmat(self, X):
        """F X for a matrix X of N rows, all columns in one batch."""
        self.matmat_count += 1
        return self._check_matrix(X, self.shape[1], self._matvec)

    def rmatmat(self, X):
        """F* X for a matrix X of M rows, all columns in one batch."""
        self.rmatmat_count += 1
        return self._check_matrix(X, self.shape[0], self._rmatvec)

    def dot(self, x):
        """As PyLops' dot: matvec for a vector (N,), matmat for a matrix (N, k); an array shaped
        like dims (a shiftop vector (blocks, Nt)) gives one shaped like dimsd, and dims plus a
        last axis of k columns gives dimsd plus that axis."""
        x = np.asarray(x)
        if x.shape == self.dims:
            return self.matvec(x.ravel()).reshape(self.dimsd)
        if x.ndim == len(self.dims) + 1 and x.shape[:-1] == self.dims:
            return self.matmat(x.reshape(-1, x.shape[-1])).reshape(*self.dimsd, x.shape[-1])
        return self.matvec(x) if x.ndim == 1 else self.matmat(x)

    __matmul__ = dot

    def adjoint(self):
        return PyLopsOperator(self._action.H)

    H = property(adjoint, doc="The adjoint, under the same protocol.")

    def transpose(self):
        return self.adjoint()  # a real operator: the transpose is the adjoint

    T = property(transpose, doc="The transpose (= H for this real operator).")

    def todense(self):
        """The dense matrix, column by column in batches (small operators only: it is
        shape[0] x shape[1] float64)."""
        return self.matmat(np.eye(self.shape[1]))

    @staticmethod
    def _check(x, n, apply):
        x = np.asarray(x)
        if x.shape not in ((n,), (n, 1)):
            raise ValueError(f"dimension mismatch: expected shape ({n},) or ({n}, 1), got {x.shape}")
        return apply(x)

    @staticmethod
    def _check_matrix(X, n, apply):
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] != n:
            raise ValueError(f"dimension mismatch: expected a matrix of {n} rows, got {X.shape}")
        return apply(X)

    def __repr__(self):
        return f"<PyLops-compatible {self.shape[0]}x{self.shape[1]} shiftop operator {self._action!r}>"


def as_pylops(action):
    """action as a PyLopsOperator."""
    return PyLopsOperator(action)
