"""shiftop.DataSpaceHessian against a dense NumPy reference: K = Gamma_noise + F Gamma F^T, the
MAP point from the parameter-space normal equations (eq. 4 solved as written), posterior and QoI
variances from the diagonal of H^-1, samples from Matheron's rule with the same normals and their
statistics; the three priors, batches, progress, bad inputs; and (marked gpu) the same on a CUDA
operator against the CPU."""

import numpy as np
import pytest

import shiftop
from conftest import dense_matrix

SHAPE = (3, 4, 7)
NQ = 2


def _problem(kind, backend="cpu", seed=5, shape=SHAPE, nq=NQ):
    """Operators, noise, prior, mean and their dense matrices (SOTI rows and columns)."""
    rng = np.random.default_rng(seed)
    nd, nm, nt = shape
    K = rng.standard_normal(shape)
    Qk = rng.standard_normal((nq, nm, nt))
    opts = dict(backend=backend, planning="estimate", max_rhs=3)
    op = shiftop.Operator.from_kernels(K, **opts)
    qoi = shiftop.Operator.from_kernels(Qk, **opts)
    noise_var = 0.05 + rng.random(nd)
    prior_var = 0.3 + rng.random(nm)
    lag = np.abs(np.arange(nt)[:, None] - np.arange(nt)[None, :])
    if kind == "diagonal":
        prior = shiftop.DiagonalPrior(prior_var, nm, nt)
        G = np.kron(np.diag(prior_var), np.eye(nt))
    elif kind == "smoothing":
        steps = 2.5
        prior = shiftop.TimeSmoothingPrior(prior_var, nm, nt, correlation_steps=steps,
                                           backend=backend)
        G = np.kron(np.diag(prior_var), np.exp(-lag / steps))
    else:
        B = rng.standard_normal((nm, nm))
        A = 0.2 * (B @ B.T + np.eye(nm))
        c = np.exp(-np.arange(nt) ** 2 / 8.0)
        prior = shiftop.KernelPrior(A[:, :, None] * c[None, None, :], backend=backend)
        G = np.kron(A, np.exp(-lag ** 2 / 8.0))
    noise = shiftop.GaussianNoise(noise_var, nd, nt)
    mean = rng.standard_normal((nm, nt))
    dense = dict(F=dense_matrix(K), Q=dense_matrix(Qk), G=G,
                 noise=np.repeat(noise_var, nt))
    return op, qoi, noise, prior, mean, dense


def _reference(dense, mean, d):
    """K, H^-1 and m_map by the normal equations H m = F^T Gn^-1 d + G^-1 m_prior."""
    F, G, noise = dense["F"], dense["G"], dense["noise"]
    K = np.diag(noise) + F @ G @ F.T
    H = F.T @ (F / noise[:, None]) + np.linalg.inv(G)
    rhs = F.T @ (d.ravel() / noise) + np.linalg.solve(G, mean.ravel())
    return K, np.linalg.inv(H), np.linalg.solve(H, rhs)


@pytest.mark.parametrize("kind", ["diagonal", "smoothing", "kernels"])
def test_matches_dense_reference(kind):
    op, qoi, noise, prior, mean, dense = _problem(kind)
    nd, nm, nt = SHAPE
    seen = []
    h = shiftop.DataSpaceHessian(op, noise, prior, qoi, prior_mean=mean, rhs_per_apply=5,
                                 progress=lambda *p: seen.append(p))
    rng = np.random.default_rng(9)
    d = rng.standard_normal((3, nd, nt))
    K, post, _ = _reference(dense, mean, d[0])

    assert h.shape == (nd * nt, nd * nt) and not h.on_device
    assert np.abs(h.matrix - K).max() / np.abs(K).max() < 1e-14
    assert seen[-1] == ("qoi", NQ * nt, NQ * nt) and ("assembly", nd * nt, nd * nt) in seen

    m = h.map_point(d)  # a batch of 3 in one call
    assert m.shape == (3, nm, nt)
    for r in range(3):
        want = _reference(dense, mean, d[r])[2]
        assert np.linalg.norm(m[r].ravel() - want) / np.linalg.norm(want) < 1e-10
    np.testing.assert_allclose(h.map_point(d[1]), m[1], rtol=0, atol=1e-12)  # one vector

    idx = np.array([[0, 0], [nm - 1, nt - 1], [1, 3], [2, 5], [0, 6], [3, 1]])
    var = h.posterior_variance(idx)
    want = np.diag(post)[idx[:, 0] * nt + idx[:, 1]]
    assert np.abs(var - want).max() / want.max() < 1e-10

    Q = dense["Q"]
    q = h.qoi_map(d)
    for r in range(3):
        want = Q @ _reference(dense, mean, d[r])[2]
        assert np.linalg.norm(q[r].ravel() - want) / np.linalg.norm(want) < 1e-10
    qvar = np.diag(Q @ post @ Q.T)
    assert h.qoi_variance().shape == (NQ, nt)
    assert np.abs(h.qoi_variance().ravel() - qvar).max() / qvar.max() < 1e-9


@pytest.mark.parametrize("kind", ["diagonal", "smoothing"])
def test_samples_follow_matherons_rule(kind):
    op, qoi, noise, prior, mean, dense = _problem(kind, seed=6)
    nd, nm, nt = SHAPE
    h = shiftop.DataSpaceHessian(op, noise, prior, prior_mean=mean, rhs_per_apply=2)
    rng = np.random.default_rng(10)
    d = rng.standard_normal((nd, nt))
    xi1 = rng.standard_normal((3, nm, nt))
    xi2 = rng.standard_normal((3, nd, nt))
    F, G, gn = dense["F"], dense["G"], dense["noise"]
    K, _, m_map = _reference(dense, mean, d)
    # S: the prior's own factor, from its sqrt action on unit vectors (S S^T = Gamma checked).
    S = np.stack([prior.sqrt(e.reshape(nm, nt)).ravel() for e in np.eye(nm * nt)], axis=1)
    np.testing.assert_allclose(S @ S.T, G, atol=1e-12)
    samples = h.sample_from(d, xi1, xi2)
    for r in range(3):
        x = S @ xi1[r].ravel()
        y = F @ x + np.sqrt(gn) * xi2[r].ravel()
        want = m_map + x - G @ F.T @ np.linalg.solve(K, y)
        assert np.linalg.norm(samples[r].ravel() - want) / np.linalg.norm(want) < 1e-10

    a, b = h.sample(d, 4, seed=3), h.sample(d, 4, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, nm, nt)
    assert np.abs(h.sample(d, 4, seed=4) - a).max() > 0.1


def test_sample_statistics_match_posterior():
    """The sample covariance of seeded samples against H^-1 from the normal equations: entries of
    the correlation-scaled difference have standard deviation <= sqrt(2/n); bound 6 of them."""
    shape = (2, 2, 4)
    op, _, noise, prior, mean, dense = _problem("smoothing", seed=7, shape=shape, nq=1)
    h = shiftop.DataSpaceHessian(op, noise, prior, prior_mean=mean, rhs_per_apply=2500)
    d = np.random.default_rng(11).standard_normal((2, 4))
    n = 10000
    s = h.sample(d, n, seed=2024).reshape(n, -1)
    _, post, m_map = _reference(dense, mean, d)
    sd = np.sqrt(np.diag(post))
    assert np.abs(s.mean(axis=0) - m_map).max() / sd.min() < 5 / np.sqrt(n)
    cov = np.cov(s, rowvar=False)
    assert np.abs((cov - post) / np.outer(sd, sd)).max() < 6 * np.sqrt(2 / n)


def test_progress_printed_when_asked(capsys):
    # The smoothing prior assembles K by applies, group by group (a diagonal prior by one Gram
    # product, reported once).
    op, _, noise, prior, _, _ = _problem("smoothing")
    shiftop.DataSpaceHessian(op, noise, prior, rhs_per_apply=8, progress=True)
    err = capsys.readouterr().err
    assert "data-space Hessian: assembly 8/21 columns" in err
    assert err.endswith("assembly 21/21 columns\n")
    op, _, noise, prior, _, _ = _problem("diagonal")
    shiftop.DataSpaceHessian(op, noise, prior, rhs_per_apply=8, progress=True)
    assert capsys.readouterr().err == "\rdata-space Hessian: assembly 21/21 columns\n"
    shiftop.DataSpaceHessian(op, noise, prior, progress=False)
    assert capsys.readouterr().err == ""


def test_bad_inputs():
    op, qoi, noise, prior, mean, _ = _problem("kernels")
    nd, nm, nt = SHAPE
    with pytest.raises(TypeError, match="op: expected a shiftop.Operator"):
        shiftop.DataSpaceHessian("F", noise, prior)
    with pytest.raises(TypeError, match="noise: expected a shiftop.GaussianNoise"):
        shiftop.DataSpaceHessian(op, 0.1, prior)
    with pytest.raises(TypeError, match="prior: expected a shiftop prior"):
        shiftop.DataSpaceHessian(op, noise, None)
    with pytest.raises(ValueError, match=r"prior_mean has shape \(3, 7\)"):
        shiftop.DataSpaceHessian(op, noise, prior, prior_mean=np.zeros((3, nt)))
    with pytest.raises(ValueError, match="the noise has 2 sensors"):
        shiftop.DataSpaceHessian(op, shiftop.GaussianNoise(1.0, 2, nt), prior)
    with pytest.raises(TypeError, match="progress: expected"):
        shiftop.DataSpaceHessian(op, noise, prior, progress="yes")
    h = shiftop.DataSpaceHessian(op, noise, prior)
    with pytest.raises(ValueError, match=r"d has shape \(4, 7\): expected \(3, 7\)"):
        h.map_point(np.zeros((4, nt)))
    with pytest.raises(ValueError, match="qoi_map needs a QoI map"):
        h.qoi_map(np.zeros((nd, nt)))
    with pytest.raises(ValueError, match="qoi_variance needs a QoI map"):
        h.qoi_variance()
    with pytest.raises(ValueError, match=r"indices: expected integer \(block, t\) pairs"):
        h.posterior_variance([[0.5, 1.0]])
    with pytest.raises(ValueError, match=r"index 0 is \(block 4, t 0\)"):
        h.posterior_variance([[4, 0]])
    with pytest.raises(ValueError, match="the kernels prior has none"):
        h.sample(np.zeros((nd, nt)), 2)
    with pytest.raises(ValueError, match="n: expected a positive int"):
        h.sample(np.zeros((nd, nt)), 0)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["diagonal", "smoothing", "kernels"])
def test_gpu_equals_cpu(kind):
    cpu = _problem(kind, backend="cpu", seed=8)
    gpu = _problem(kind, backend="cuda", seed=8)
    nd, nm, nt = SHAPE
    hc = shiftop.DataSpaceHessian(cpu[0], cpu[2], cpu[3], cpu[1], prior_mean=cpu[4],
                                  rhs_per_apply=5)
    hg = shiftop.DataSpaceHessian(gpu[0], gpu[2], gpu[3], gpu[1], prior_mean=gpu[4],
                                  rhs_per_apply=5)
    assert hg.on_device and not hc.on_device
    d = np.random.default_rng(12).standard_normal((3, nd, nt))
    assert np.abs(hg.matrix - hc.matrix).max() / np.abs(hc.matrix).max() < 1e-12
    np.testing.assert_allclose(hg.map_point(d), hc.map_point(d), rtol=0, atol=1e-10)
    np.testing.assert_allclose(hg.qoi_map(d), hc.qoi_map(d), rtol=0, atol=1e-10)
    np.testing.assert_allclose(hg.qoi_variance(), hc.qoi_variance(), rtol=1e-10)
    idx = [[0, 0], [nm - 1, nt - 1]]
    np.testing.assert_allclose(hg.posterior_variance(idx), hc.posterior_variance(idx), rtol=1e-10)
    if kind != "kernels":
        np.testing.assert_allclose(hg.sample(d[0], 3, seed=1), hc.sample(d[0], 3, seed=1),
                                   rtol=0, atol=1e-10)


def test_the_operator_as_its_own_qoi_map_and_a_callback_that_uses_it():
    # Both once deadlocked on the operator's lock (taken twice by one thread).
    op, _, noise, prior, mean, dense = _problem("diagonal")
    d = np.random.default_rng(8).standard_normal((SHAPE[0], SHAPE[2]))
    H = shiftop.DataSpaceHessian(op, noise, prior, qoi=op, prior_mean=mean)
    np.testing.assert_allclose(H.qoi_map(d), op @ H.map_point(d), rtol=1e-10, atol=1e-12)
    misfits = []
    result = shiftop.map_point(op, d, noise, prior, m_prior=mean, tol=1e-10,
                               callback=lambda k, r: misfits.append(float(np.abs(op @ mean).max())))
    assert result.converged and len(misfits) == result.iterations


def test_non_finite_data_are_refused_by_name():
    op, _, noise, prior, mean, _ = _problem("diagonal")
    d = np.zeros((SHAPE[0], SHAPE[2]))
    d[1, 3] = np.nan
    H = shiftop.DataSpaceHessian(op, noise, prior)
    with pytest.raises(ValueError, match=r"map_point: data value 10 is nan"):
        H.map_point(d)
    with pytest.raises(ValueError, match=r"CG: data value 10 is nan"):
        shiftop.map_point(op, d, noise, prior)


def test_empty_batches_give_empty_results():
    op, qoi, noise, prior, mean, _ = _problem("diagonal")
    nd, nm, nt = SHAPE
    H = shiftop.DataSpaceHessian(op, noise, prior, qoi=qoi)
    assert H.map_point(np.zeros((0, nd, nt))).shape == (0, nm, nt)
    assert H.qoi_map(np.zeros((0, nd, nt))).shape == (0, NQ, nt)
    assert (shiftop.Hessian(op, noise, prior) @ np.zeros((0, nm, nt))).shape == (0, nm, nt)
