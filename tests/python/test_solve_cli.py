"""`shiftop solve`: the MAP point of d = F m + noise (eq. 4 of mixed-precision-block-toeplitz-
matvec) from .npy files, against a dense NumPy solve of H m = F^T Gamma_noise^-1 d +
Gamma_prior^-1 m_prior for the three priors, by CG with both preconditioners and by the
data-space Hessian (--method dense); the JSON summary (residual history from 1.0), --progress on
stderr, --truth; bad inputs refused with one line and no output."""
import json

import numpy as np
import pytest
from test_fftmatvec_interop import dense, shiftop

ND, NM, NT = 2, 3, 7


def write_problem(tmp_path, seed=1):
    rng = np.random.default_rng(seed)
    kernels = rng.standard_normal((ND, NM, NT)) * 0.8 ** np.arange(NT)
    d = rng.standard_normal((ND, NT))
    m_prior = rng.standard_normal((NM, NT))
    np.save(tmp_path / "F.npy", kernels)
    np.save(tmp_path / "d.npy", d)
    np.save(tmp_path / "m0.npy", m_prior)
    return kernels, d, m_prior


def covariance(prior, variance, steps=None, kernels=None):
    lag = np.abs(np.arange(NT)[:, None] - np.arange(NT)[None, :])
    if prior == "diagonal":
        return variance * np.eye(NM * NT)
    if prior == "smoothing":
        return np.kron(variance * np.eye(NM), np.exp(-1.0 / steps) ** lag)
    signed = np.arange(NT)[:, None] - np.arange(NT)[None, :]
    c = np.zeros((NM, NT, NM, NT))
    for i in range(NM):
        for j in range(NM):
            c[i, :, j, :] = np.where(signed >= 0, kernels[i, j][np.abs(signed)],
                                     kernels[j, i][np.abs(signed)])
    return c.reshape(NM * NT, NM * NT)


def dense_map(kernels, d, m_prior, noise_variance, gamma):
    f = dense(kernels)
    precision = np.linalg.inv(gamma)
    h = f.T @ f / noise_variance + precision
    return np.linalg.solve(h, f.T @ d.ravel() / noise_variance + precision @ m_prior.ravel())


def kernel_prior(tmp_path):
    a = np.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.2], [0.1, 0.2, 1.0]])
    k = a[:, :, None] * 0.6 ** np.arange(NT)
    np.save(tmp_path / "C.npy", k)
    return k


@pytest.mark.parametrize("prior,preconditioner", [
    ("diagonal", "prior"), ("diagonal", "circulant"), ("smoothing", "prior"),
    ("smoothing", "circulant"), ("kernels", "prior")])
def test_map_point_equals_the_dense_solve(tmp_path, prior, preconditioner):
    kernels, d, m_prior = write_problem(tmp_path)
    extra, steps, ck = [], None, None
    if prior == "smoothing":
        steps = 2.5
        extra = ["--correlation-steps", steps]
    if prior == "kernels":
        ck = kernel_prior(tmp_path)
        extra = ["--prior-kernels", tmp_path / "C.npy"]
    shiftop("solve", "--operator", tmp_path / "F.npy", "--data", tmp_path / "d.npy",
            "--noise-variance", 0.3, "--prior", prior, "--prior-variance", 1.7,
            "--prior-mean", tmp_path / "m0.npy", "--preconditioner", preconditioner, "--tol",
            1e-13, "-o", tmp_path / "m.npy", "--json", tmp_path / "s.json", *extra)
    gamma = covariance(prior, 1.7, steps, ck)
    want = dense_map(kernels, d, m_prior, 0.3, gamma)
    got = np.load(tmp_path / "m.npy")
    assert got.shape == (NM, NT)
    assert np.linalg.norm(got.ravel() - want) <= 1e-10 * np.linalg.norm(want)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["command"] == "solve" and summary["method"] == "cg"
    assert summary["preconditioner"] == preconditioner and summary["prior"] == prior
    assert summary["converged"] is True
    history = summary["residual_history"]
    assert history[0] == 1.0 and len(history) == summary["iterations"] + 1
    assert history[-1] < 1e-13
    assert summary["shape"] == {"nd": ND, "nm": NM, "nt": NT}
    assert set(summary["seconds"]) >= {"plan", "iterations"}


@pytest.mark.parametrize("prior", ["smoothing", "kernels"])
def test_dense_method_equals_the_dense_solve(tmp_path, prior):
    kernels, d, m_prior = write_problem(tmp_path)
    ck = kernel_prior(tmp_path)
    extra = (["--correlation-steps", 2.5] if prior == "smoothing"
             else ["--prior-kernels", tmp_path / "C.npy"])
    run = shiftop("solve", "--method", "dense", "--operator", tmp_path / "F.npy", "--data",
                  tmp_path / "d.npy", "--noise-variance", 0.3, "--prior", prior,
                  "--prior-variance", 1.7, "--prior-mean", tmp_path / "m0.npy", "-o",
                  tmp_path / "m.npy", "--json", tmp_path / "s.json", *extra)
    assert "data-space Hessian of order 14" in run.stdout
    want = dense_map(kernels, d, m_prior, 0.3, covariance(prior, 1.7, 2.5, ck))
    got = np.load(tmp_path / "m.npy")
    assert np.linalg.norm(got.ravel() - want) <= 1e-10 * np.linalg.norm(want)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["method"] == "dense" and summary["preconditioner"] is None
    assert summary["iterations"] == 0 and summary["residual_history"] == []
    assert set(summary["seconds"]) >= {"assembly", "factor", "map"}


def test_progress_and_truth(tmp_path):
    kernels, d, m_prior = write_problem(tmp_path)
    np.save(tmp_path / "truth.npy", m_prior)
    run = shiftop("solve", "--operator", tmp_path / "F.npy", "--data", tmp_path / "d.npy",
                  "--noise-std", 0.5, "--progress", "--truth", tmp_path / "truth.npy", "-o",
                  tmp_path / "m.h5")
    lines = [line for line in run.stderr.replace("\r", "\n").splitlines() if line]
    assert lines[0].startswith("CG iteration 1: relative residual")
    assert "converged after" in run.stdout and "relative error to --truth" in run.stdout
    # Not a terminal and no --progress: nothing on stderr.
    quiet = shiftop("solve", "--operator", tmp_path / "F.npy", "--data", tmp_path / "d.npy",
                    "--noise-std", 0.5, "-o", tmp_path / "m2.h5")
    assert quiet.stderr == ""


@pytest.mark.parametrize("json_summary", [True, False])
def test_maxiter_reports_not_converged_and_fails(tmp_path, json_summary):
    """Not converged was exit status 0 (issue 28: regpath's exact `shiftop solve` command ended
    "NOT converged after 1000 iterations" and succeeded): now 1, the outputs written."""
    write_problem(tmp_path)
    extra = ["--json", tmp_path / "s.json"] if json_summary else []
    run = shiftop("solve", "--operator", tmp_path / "F.npy", "--data", tmp_path / "d.npy",
                  "--noise-variance", 1e-4, "--maxiter", 1, "--tol", 1e-14, "-o",
                  tmp_path / "m.npy", *extra, check=False)
    assert run.returncode == 1
    assert "NOT converged after 1 iterations" in run.stdout
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "shiftop: error: --maxiter 1: CG did not converge: relative residual "), run.stderr
    assert f"the last iterate is written to {tmp_path / 'm.npy'}" in lines[0]
    assert np.load(tmp_path / "m.npy").shape == (NM, NT)
    if json_summary:
        assert json.loads((tmp_path / "s.json").read_text())["converged"] is False


@pytest.mark.parametrize("args,message", [
    ([], "expected exactly one of --noise-variance and --noise-std"),
    (["--noise-variance", 1, "--noise-std", 1], "expected exactly one of"),
    (["--noise-variance", -1], "--noise-variance -1: expected a positive number"),
    (["--noise-variance", -1, "--noise-std", 0.1], "expected exactly one of"),
    (["--noise-std", "nan"], "--noise-std nan: expected a positive number"),
    (["--noise-std", 1, "--truth", "zero_m.npy"], "all values are zero"),
    (["--noise-std", 1, "--prior-mean", "nan_m.npy"], "nan"),
    (["--noise-std", 1, "--tol", 0], "--tol: expected a number in (0, 1)"),
    (["--noise-std", 1, "--prior", "smoothing"], "--prior smoothing needs --correlation-steps"),
    (["--noise-std", 1, "--prior", "kernels"], "--prior kernels needs --prior-kernels FILE"),
    (["--noise-std", 1, "--prior-variance", 0], "--prior-variance: expected a positive number"),
    (["--noise-std", 1, "--prior", "kernels", "--prior-kernels", "F.npy"],
     "expected the first block column of shape (Nm=3, Nm=3, Nt=7)"),
    (["--noise-std", 1, "--prior", "kernels", "--prior-kernels", "C.npy", "--preconditioner",
      "circulant"], "the kernels prior has none: use the prior preconditioner"),
    (["--noise-std", 1, "--prior-mean", "d.npy"],
     "d.npy: expected one parameter vector of 3 blocks x 7 steps"),
    (["--noise-std", 1, "--preconditioner", "jacobi"], "--preconditioner"),
    (["--noise-std", 1, "--method", "dense", "--tol", 1e-3],
     "--preconditioner, --tol and --maxiter are options of --method cg, not --method dense"),
    (["--noise-std", 1, "--method", "lu"], "--method"),
])
def test_bad_inputs_are_refused(tmp_path, args, message):
    _, _, m_prior = write_problem(tmp_path)
    kernel_prior(tmp_path)
    np.save(tmp_path / "zero_m.npy", np.zeros_like(m_prior))
    m_prior[1, 2] = np.nan
    np.save(tmp_path / "nan_m.npy", m_prior)
    files = [tmp_path / a if str(a).endswith(".npy") else a for a in args]
    run = shiftop("solve", "--operator", tmp_path / "F.npy", "--data", tmp_path / "d.npy", "-o",
                  tmp_path / "m.npy", *files, check=False)
    assert run.returncode != 0
    assert message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m.npy").exists()


def test_data_of_the_wrong_shape_is_refused(tmp_path):
    write_problem(tmp_path)
    run = shiftop("solve", "--operator", tmp_path / "F.npy", "--data", tmp_path / "m0.npy",
                  "--noise-std", 1, "-o", tmp_path / "m.npy", check=False)
    assert run.returncode == 1
    assert "expected one data vector of 2 blocks x 7 steps, got 1 vector(s) of 3 x 7" in run.stderr
