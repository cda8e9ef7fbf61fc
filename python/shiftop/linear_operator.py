"""shiftop's operators under the linear-operator protocols of SciPy and PyLops: one
scipy.sparse.linalg.LinearOperator for every family (Operator and its views, CirculantOperator,
the inverse problem's Hessian) and the PyLops protocol for the block Toeplitz operators.

SciPy's contract (scipy.sparse.linalg.LinearOperator): shape (M, N) and dtype; matvec takes
(N,) or (N, 1) and returns (M,) or (M, 1), matmat an (N, K) matrix, rmatvec/rmatmat the same with
the adjoint (conjugate transpose); a subclass implements _matvec or _matmat and, for the adjoint,
_adjoint (or _rmatvec). Every shiftop operator is real, so the transpose is the adjoint too.

Block Toeplitz actions and the Hessian act on flattened vectors: a vector of shape (blocks, Nt)
raveled in C order (shiftop's SOTI layout), so that x.reshape(blocks, Nt) is the shiftop vector
with no copy. A matrix of k columns, shape (blocks*Nt, k), goes through the core as one batch of k
right-hand sides (k = 0 included). Such an operator is real, hence complex-linear: a complex
input's real and imaginary parts go through the core as one batch of 2k real columns,
F x = F Re(x) + i F Im(x), as PyLops' clinear=True and scipy's LinearOperator expect.
"""

from __future__ import annotations

import functools

import numpy as np


def apply_columns(action, columns):
    """action @ each column of `columns` (rows blocks*Nt, or a single vector), as one batch, for
    an action on vectors of shape action.input_shape = (blocks, Nt)."""
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
        y = apply_columns(action, split)
        k = y.shape[1] // 2
        y = y[:, :k] + 1j * y[:, k:]
        return y.reshape(rows) if columns.ndim == 1 else y
    if columns.ndim == 1 or columns.shape[1] == 1:
        y = action @ columns.reshape(blocks, nt)
        return y.reshape(rows) if columns.ndim == 1 else y.reshape(rows, 1)
    k = columns.shape[1]
    batch = np.ascontiguousarray(columns.T).reshape(k, blocks, nt)
    return (action @ batch).reshape(k, rows).T


def matmul(action, columns):
    """action @ columns, for an action that takes a vector (N,) or a matrix (N, k) itself."""
    return action @ columns


@functools.cache
def _scipy_operator_class():
    """The one LinearOperator subclass of every family, made on first use: SciPy is optional, and
    only the conversion to its protocol needs it."""
    from scipy.sparse.linalg import LinearOperator

    class ScipyOperator(LinearOperator):
        """A shiftop operator as a scipy.sparse.linalg.LinearOperator of its shape and dtype."""

        def __init__(self, action, apply, adjoint):
            super().__init__(dtype=action.dtype, shape=action.shape)
            self._action, self._apply, self._adjoint_action = action, apply, adjoint

        def _matvec(self, x):
            return self._apply(self._action, x)

        def _matmat(self, X):
            return self._apply(self._action, X)

        def _rmatvec(self, x):
            return self._apply(self._adjoint_action, x)

        def _rmatmat(self, X):
            return self._apply(self._adjoint_action, X)

        def _adjoint(self):
            return ScipyOperator(self._adjoint_action, self._apply, self._action)

        _transpose = _adjoint  # a real operator: its transpose is its adjoint

        def __repr__(self):
            return f"<{self.shape[0]}x{self.shape[1]} scipy LinearOperator of {self._action!r}>"

    return ScipyOperator


def as_scipy(action, apply=apply_columns, adjoint=None):
    """action (with shape, dtype and, unless `adjoint` is given, H) as a
    scipy.sparse.linalg.LinearOperator. apply(action, x) is its product with a vector (N,) or
    (N, 1) or a matrix (N, k), all columns at once: apply_columns for actions on (blocks, Nt)
    vectors, matmul for those that take such columns themselves. `adjoint` is the action's
    adjoint, of the same kind (the action itself when it is self-adjoint); None: action.H."""
    return _scipy_operator_class()(action, apply, action.H if adjoint is None else adjoint)


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
        return apply_columns(self._action, x)

    def _rmatvec(self, x):
        return apply_columns(self._action.H, x)

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
