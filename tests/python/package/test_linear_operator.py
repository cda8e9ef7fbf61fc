"""The SciPy LinearOperator and the PyLops-protocol adapter against the dense reference, and
scipy's CG through them."""

import numpy as np
import pytest
from conftest import dense_matrix, random_general, rel_err

import shiftop

FP64_TOL = 1e-13  # as in test_operator.py (measured <= 2e-15)


@pytest.fixture
def operator(rng):
    K, R = random_general(rng, (3, 4, 9))
    return shiftop.Operator.from_kernels(K, R, planning="estimate", max_rhs=2), dense_matrix(K, R)


def test_scipy_linear_operator_matches_dense(rng, operator):
    op, A = operator
    L = op.aslinearoperator()
    assert L.shape == (27, 36) and L.dtype == np.float64
    m, d = rng.standard_normal(36), rng.standard_normal(27)
    assert rel_err(L.matvec(m), A @ m) < FP64_TOL
    assert rel_err(L.rmatvec(d), A.T @ d) < FP64_TOL
    assert L.matvec(m[:, None]).shape == (27, 1)
    X, Y = rng.standard_normal((36, 5)), rng.standard_normal((27, 5))  # 5 columns: 3 groups of 2
    assert rel_err(L.matmat(X), A @ X) < FP64_TOL
    assert rel_err(L.rmatmat(Y), A.T @ Y) < FP64_TOL
    assert rel_err(L.H.matvec(d), A.T @ d) < FP64_TOL
    assert rel_err((L @ X), A @ X) < FP64_TOL
    assert rel_err(op.H.aslinearoperator().matvec(d), A.T @ d) < FP64_TOL
    N = op.normal().aslinearoperator()
    assert rel_err(N.matvec(m), A.T @ (A @ m)) < FP64_TOL
    with pytest.raises(ValueError):
        L.matvec(np.ones(27))


def test_scipy_cg_on_the_regularised_normal_equations(rng, operator):
    from scipy.sparse.linalg import LinearOperator, cg

    op, A = operator
    N = op.normal().aslinearoperator()
    n = N.shape[0]
    H = LinearOperator((n, n), matvec=lambda v: N.matvec(v) + v, dtype=np.float64)  # F*F + I
    b = rng.standard_normal(n)
    expected = np.linalg.solve(A.T @ A + np.eye(n), b)
    x, info = cg(H, b, rtol=1e-13, atol=0.0, maxiter=500)
    assert info == 0
    # Measured ~1e-14; CG stops at a relative residual of 1e-13 on a matrix of condition ~1e2.
    assert rel_err(x, expected) < 1e-10


def test_pylops_protocol(rng, operator):
    op, A = operator
    P = op.aspylops()
    assert P.shape == (27, 36) and P.dtype == np.float64
    assert P.dims == (4, 9) and P.dimsd == (3, 9)
    assert P.clinear is True and P.explicit is False and isinstance(P.name, str)
    m, d = rng.standard_normal(36), rng.standard_normal(27)
    assert rel_err(P.matvec(m), A @ m) < FP64_TOL and P.matvec(m).shape == (27,)
    assert P.matvec(m[:, None]).shape == (27, 1)
    assert rel_err(P.rmatvec(d), A.T @ d) < FP64_TOL
    # What pylops.LinearOperator(Op=P) calls: Op.matmat(x.reshape(-1, 1)) and Op.H.matvec(x).
    assert rel_err(P.matmat(m.reshape(-1, 1)).ravel(), A @ m) < FP64_TOL
    assert rel_err(P.H.matvec(d), A.T @ d) < FP64_TOL
    assert P.H.dims == (3, 9) and P.H.dimsd == (4, 9) and P.H.shape == (36, 27)
    assert rel_err(P._matvec(m), A @ m) < FP64_TOL and rel_err(P._rmatvec(d), A.T @ d) < FP64_TOL
    X = rng.standard_normal((36, 3))
    assert rel_err(P.matmat(X), A @ X) < FP64_TOL and rel_err(P @ X, A @ X) < FP64_TOL
    assert rel_err(P.rmatmat(A @ X), A.T @ (A @ X)) < FP64_TOL
    assert rel_err(P.dot(m), A @ m) < FP64_TOL and rel_err(P.T.matvec(d), A.T @ d) < FP64_TOL
    assert rel_err(P.todense(), A) < FP64_TOL
    assert (P.matvec_count, P.rmatvec_count) == (4, 1)  # matvec x3 and dot; rmatvec x1
    with pytest.raises(ValueError, match=r"dimension mismatch: expected shape \(36,\) or \(36, 1\), got \(27,\)"):
        P.matvec(d)
    with pytest.raises(ValueError, match=r"dimension mismatch: expected a matrix of 27 rows, got \(36, 3\)"):
        P.rmatmat(X)


def test_zero_columns_give_empty_products(operator):
    op, A = operator
    L, P = op.aslinearoperator(), op.aspylops()
    for product in (L.matmat, P.matmat):
        y = product(np.zeros((36, 0)))
        assert y.shape == (27, 0) and y.dtype == np.float64
    for product in (L.rmatmat, P.rmatmat):
        assert product(np.zeros((27, 0))).shape == (36, 0)


def test_complex_inputs_are_applied_complex_linearly(rng, operator):
    """P.clinear is True: F (a + ib) = F a + i F b, for vectors, columns and matrices, in both
    adapters (the real and imaginary parts go through the core as one batch)."""
    op, A = operator
    L, P = op.aslinearoperator(), op.aspylops()
    x = rng.standard_normal(36) + 1j * rng.standard_normal(36)
    X = rng.standard_normal((36, 3)) + 1j * rng.standard_normal((36, 3))
    d = rng.standard_normal(27) + 1j * rng.standard_normal(27)
    for apply in (L.matvec, P.matvec):
        assert apply(x).shape == (27,) and rel_err(apply(x), A @ x) < FP64_TOL
        assert apply(x[:, None]).shape == (27, 1)
        assert rel_err(apply(x[:, None]).ravel(), A @ x) < FP64_TOL
    for apply in (L.matmat, P.matmat):
        assert rel_err(apply(X), A @ X) < FP64_TOL
    assert rel_err(P.rmatvec(d), A.T @ d) < FP64_TOL and rel_err(L.rmatvec(d), A.T @ d) < FP64_TOL


def test_pylops_products_of_arrays_shaped_like_dims(rng, operator):
    """PyLops' dot: x of shape dims gives dimsd; dims plus a column axis gives dimsd plus it."""
    op, A = operator
    P = op.aspylops()
    m = rng.standard_normal((4, 9))
    y = P @ m
    assert y.shape == (3, 9) and rel_err(y.ravel(), A @ m.ravel()) < FP64_TOL
    assert rel_err(y, op @ m) < FP64_TOL
    M = rng.standard_normal((4, 9, 2))
    Y = P @ M
    assert Y.shape == (3, 9, 2) and rel_err(Y.reshape(27, 2), A @ M.reshape(36, 2)) < FP64_TOL
    d = rng.standard_normal((3, 9))
    assert (P.H @ d).shape == (4, 9) and rel_err((P.H @ d).ravel(), A.T @ d.ravel()) < FP64_TOL
    with pytest.raises(ValueError, match="dimension mismatch"):
        P @ np.ones((3, 9))  # dimsd, not dims


def _circulant(rng):
    """A 3 x 3 block circulant of 4 x 2 blocks (float32) and its assembled dense matrix (float64)."""
    import scipy.sparse

    first_row = scipy.sparse.random(4, 3 * 2, density=0.6, random_state=rng, format="csr",
                                    dtype=np.float32)
    C = shiftop.CirculantOperator(first_row, 3)
    return C, C.to_scipy().toarray().astype(np.float64)


def test_every_family_has_the_one_scipy_linear_operator(rng, operator):
    """Operator and its views, CirculantOperator and the Hessian convert through one class, and
    each keeps scipy's contract (shape, dtype, matvec on (N,) and (N, 1), matmat, rmatvec,
    rmatmat, .H, .T) against its dense matrix; the Hessian's is F^T F / v + I / p."""
    op, A = operator
    C, dense_c = _circulant(rng)
    noise, prior = 0.5, 2.0
    H = shiftop.Hessian(op, shiftop.GaussianNoise(noise, 3, 9), shiftop.DiagonalPrior(prior, 4, 9))
    cases = [(op.aslinearoperator(), A, np.float64, FP64_TOL),
             (op.H.aslinearoperator(), A.T, np.float64, FP64_TOL),
             (op.normal().aslinearoperator(), A.T @ A, np.float64, FP64_TOL),
             (C.aslinearoperator(), dense_c, np.float32, 1e-6),  # FP32: a few units of 6e-8
             (H.aslinearoperator(), A.T @ A / noise + np.eye(36) / prior, np.float64, FP64_TOL)]
    assert len({type(L) for L, *_ in cases}) == 1
    for L, dense, dtype, tol in cases:
        m, n = dense.shape
        assert L.shape == (m, n) and L.dtype == dtype, repr(L)
        x, y = rng.standard_normal(n), rng.standard_normal(m)
        X, Y = rng.standard_normal((n, 3)), rng.standard_normal((m, 3))
        assert rel_err(L.matvec(x), dense @ x) < tol, repr(L)
        assert L.matvec(x[:, None]).shape == (m, 1)
        assert rel_err(L.matmat(X), dense @ X) < tol, repr(L)
        assert rel_err(L.rmatvec(y), dense.T @ y) < tol, repr(L)
        assert rel_err(L.rmatmat(Y), dense.T @ Y) < tol, repr(L)
        assert rel_err(L.H.matvec(y), dense.T @ y) < tol, repr(L)
        assert rel_err(L.T.matvec(y), dense.T @ y) < tol, repr(L)
        assert "scipy LinearOperator" in repr(L)
        with pytest.raises(ValueError):
            L.matvec(np.ones(n + 1))
