"""shiftop.GaussianNoise, the priors, shiftop.Hessian and shiftop.map_point (python/shiftop/
inverse.py) against dense NumPy references built here: the covariances entry by entry, H =
F^T Gamma_noise^-1 F + Gamma_prior^-1, the MAP point by np.linalg.solve (1e-10) for every prior
and both preconditioners, and scipy.sparse.linalg.cg on shiftop.Hessian; bad inputs raise
ValueError/TypeError naming what was expected."""

import numpy as np
import pytest
import scipy.sparse.linalg
from conftest import dense_matrix, random_general

import shiftop

ND, NM, NT = 2, 3, 7


def lag_matrix(nt):
    return np.abs(np.arange(nt)[:, None] - np.arange(nt)[None, :])


def kernel_covariance(C):
    """Symmetric block Toeplitz: block (i, j) at lag t - s is C[i, j, t-s] for t >= s and
    C[j, i, s-t] otherwise."""
    nm, _, nt = C.shape
    return dense_matrix(C, np.transpose(C, (1, 0, 2)))


def definite_kernels(nm, nt):
    a = np.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.2], [0.1, 0.2, 1.0]])[:nm, :nm]
    return a[:, :, None] * 0.6 ** np.arange(nt)


def make_prior(kind, variances):
    if kind == "diagonal":
        return shiftop.DiagonalPrior(variances, nt=NT), np.kron(np.diag(variances), np.eye(NT))
    if kind == "smoothing":
        prior = shiftop.TimeSmoothingPrior(variances, nt=NT, correlation_steps=2.5)
        return prior, np.kron(np.diag(variances), np.exp(-1 / 2.5) ** lag_matrix(NT))
    C = definite_kernels(NM, NT)
    return shiftop.KernelPrior(C), kernel_covariance(C)


@pytest.fixture
def problem():
    rng = np.random.default_rng(3)
    K = rng.standard_normal((ND, NM, NT)) * 0.8 ** np.arange(NT)
    return rng, K, shiftop.Operator.from_kernels(K, planning="estimate")


def test_noise_matches_its_dense_covariance(problem):
    rng = problem[0]
    variances = np.array([0.3, 2.0])
    noise = shiftop.GaussianNoise(variances, nt=NT)
    gamma = np.kron(np.diag(variances), np.eye(NT))
    x = rng.standard_normal((4, ND, NT))
    flat = x.reshape(4, -1).T
    np.testing.assert_allclose((noise @ x).reshape(4, -1).T, gamma @ flat, rtol=1e-15)
    np.testing.assert_allclose(noise.inverse(noise @ x), x, rtol=1e-15)
    np.testing.assert_allclose(noise.sqrt(noise.sqrt(x[0])), noise @ x[0], rtol=1e-15)
    assert shiftop.GaussianNoise(0.5, ND, NT).variances.tolist() == [0.5, 0.5]


@pytest.mark.parametrize("kind", ["diagonal", "smoothing", "kernels"])
def test_priors_match_their_dense_covariance(problem, kind):
    rng = problem[0]
    prior, gamma = make_prior(kind, np.array([0.5, 1.0, 2.0]))
    x = rng.standard_normal((3, NM, NT))
    got = (prior @ x).reshape(3, -1).T
    np.testing.assert_allclose(got, gamma @ x.reshape(3, -1).T, rtol=1e-13, atol=1e-14)
    if kind == "kernels":
        assert not prior.has_precision and not prior.has_sqrt
        with pytest.raises(ValueError, match="no closed-form precision"):
            prior.precision(x[0])
        return
    identity = np.stack([prior.precision(prior @ e.reshape(NM, NT)).ravel()
                         for e in np.eye(NM * NT)])
    np.testing.assert_allclose(identity, np.eye(NM * NT), atol=1e-13)
    s = np.stack([prior.sqrt(e.reshape(NM, NT)).ravel() for e in np.eye(NM * NT)]).T
    np.testing.assert_allclose(s @ s.T, gamma, atol=1e-14)


def dense_hessian(K, noise_variance, gamma):
    F = dense_matrix(K)
    return F.T @ F / noise_variance + np.linalg.inv(gamma)


@pytest.mark.parametrize("kind", ["diagonal", "smoothing"])
def test_hessian_matches_the_dense_hessian_and_scipy_cg_solves_with_it(problem, kind):
    rng, K, op = problem
    noise = shiftop.GaussianNoise(0.3, ND, NT)
    prior, gamma = make_prior(kind, np.array([0.5, 1.0, 2.0]))
    H = shiftop.Hessian(op, noise, prior)
    h = dense_hessian(K, 0.3, gamma)
    assert H.shape == (NM * NT, NM * NT)
    x = rng.standard_normal((2, NM, NT))
    np.testing.assert_allclose((H @ x).reshape(2, -1).T, h @ x.reshape(2, -1).T, rtol=1e-12)
    b = rng.standard_normal(NM * NT)
    solution, info = scipy.sparse.linalg.cg(H.aslinearoperator(), b, rtol=1e-12, maxiter=500)
    assert info == 0
    want = np.linalg.solve(h, b)
    assert np.linalg.norm(solution - want) <= 1e-9 * np.linalg.norm(want)


@pytest.mark.parametrize("kind,preconditioner", [
    ("diagonal", "prior"), ("diagonal", "circulant"), ("smoothing", "prior"),
    ("smoothing", "circulant"), ("kernels", "prior")])
def test_map_point_equals_the_dense_solve(problem, kind, preconditioner):
    rng, K, op = problem
    noise = shiftop.GaussianNoise([0.3, 0.7], nt=NT)
    prior, gamma = make_prior(kind, np.array([0.5, 1.0, 2.0]))
    d, m_prior = rng.standard_normal((ND, NT)), rng.standard_normal((NM, NT))
    seen = []
    result = shiftop.map_point(op, d, noise, prior, m_prior, tol=1e-13, maxiter=500,
                               preconditioner=preconditioner,
                               callback=lambda k, r: seen.append((k, r)))
    F = dense_matrix(K)
    w = np.diag(np.repeat([1 / 0.3, 1 / 0.7], NT))
    precision = np.linalg.inv(gamma)
    want = np.linalg.solve(F.T @ w @ F + precision, F.T @ w @ d.ravel() + precision @ m_prior.ravel())
    assert result.m.shape == (NM, NT)
    assert np.linalg.norm(result.m.ravel() - want) <= 1e-10 * np.linalg.norm(want)
    assert result.converged and result.residual_history[0] == 1.0
    assert len(result.residual_history) == result.iterations + 1
    assert [k for k, _ in seen] == list(range(1, result.iterations + 1))
    np.testing.assert_array_equal([r for _, r in seen], result.residual_history[1:])


def test_map_point_from_zero_prior_mean_and_unconverged(problem):
    rng, K, op = problem
    noise, prior = shiftop.GaussianNoise(1e-4, ND, NT), shiftop.DiagonalPrior(1.0, NM, NT)
    result = shiftop.map_point(op, rng.standard_normal((ND, NT)), noise, prior, tol=1e-14,
                               maxiter=2)
    assert not result.converged and result.iterations == 2


def test_bad_inputs_are_refused(problem):
    rng, K, op = problem
    noise, prior = shiftop.GaussianNoise(1.0, ND, NT), shiftop.DiagonalPrior(1.0, NM, NT)
    d = np.zeros((ND, NT))
    with pytest.raises(ValueError, match="noise variance of sensor 1 is -1"):
        shiftop.GaussianNoise([1.0, -1.0], nt=NT)
    with pytest.raises(ValueError, match="a single variance needs the number of blocks"):
        shiftop.DiagonalPrior(1.0, nt=NT)
    with pytest.raises(ValueError, match=r"expected a scalar or 3 values"):
        shiftop.DiagonalPrior([1.0, 2.0], 3, NT)
    with pytest.raises(ValueError, match="correlation steps 0"):
        shiftop.TimeSmoothingPrior(1.0, NM, NT, correlation_steps=0)
    with pytest.raises(ValueError, match="lag-0 block is not symmetric"):
        shiftop.KernelPrior(np.arange(2 * 2 * 3, dtype=float).reshape(2, 2, 3) + 1)
    with pytest.raises(ValueError, match=r"expected \(Nm, Nm, Nt\)"):
        shiftop.KernelPrior(np.ones((2, 2)))
    with pytest.raises(ValueError, match="the noise covers 3 sensors"):
        shiftop.Hessian(op, shiftop.GaussianNoise(1.0, 3, NT), prior)
    with pytest.raises(TypeError, match="expected a shiftop.Operator"):
        shiftop.Hessian(K, noise, prior)
    with pytest.raises(TypeError, match="prior: expected a shiftop prior"):
        shiftop.map_point(op, d, noise, np.eye(3))
    with pytest.raises(ValueError, match=r"d has shape \(3, 7\): expected \(2, 7\)"):
        shiftop.map_point(op, np.zeros((3, NT)), noise, prior)
    with pytest.raises(ValueError, match=r"m_prior has shape"):
        shiftop.map_point(op, d, noise, prior, np.zeros((ND, NT)))
    with pytest.raises(ValueError, match="preconditioner 'jacobi'"):
        shiftop.map_point(op, d, noise, prior, preconditioner="jacobi")
    with pytest.raises(ValueError, match="use the prior preconditioner"):
        shiftop.map_point(op, d, noise, shiftop.KernelPrior(definite_kernels(NM, NT)),
                          preconditioner="circulant")
    with pytest.raises(ValueError, match="CG tolerance 0"):
        shiftop.map_point(op, d, noise, prior, tol=0)
    with pytest.raises(TypeError, match="complex"):
        shiftop.map_point(op, d + 1j, noise, prior)
    with pytest.raises(ValueError, match=r"expected \(3, 7\) or \(nrhs, 3, 7\)"):
        prior @ np.zeros((2, NT))
    with pytest.raises(ValueError, match="Hessian::apply|no closed-form precision"):
        shiftop.Hessian(op, noise, shiftop.KernelPrior(definite_kernels(NM, NT))) @ np.zeros(
            (NM, NT))


def test_a_callback_error_propagates(problem):
    rng, K, op = problem

    def stop(k, r):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        shiftop.map_point(op, rng.standard_normal((ND, NT)), shiftop.GaussianNoise(1.0, ND, NT),
                          shiftop.DiagonalPrior(1.0, NM, NT), callback=stop)
