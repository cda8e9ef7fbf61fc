"""`shiftop gsvd` against pairs with prescribed generalized singular values built in NumPy (F = U
diag(sigma_f) X, G = V diag(sigma_g) X, thesis section 3.4) and scipy's generalized eigh of
(F^H F, G^H G): the values file, the --vectors files (residuals, orthogonality), .npy of every
dtype and order and HDF5 inputs, the JSON keys, and every bad input refused with one line, a
non-zero exit and no output left behind. The tests marked gpu compare --backend cuda with the CPU
on a GPU (the device check runs them)."""
import json

import h5py
import numpy as np
import pytest
import scipy.linalg
from test_fftmatvec_interop import shiftop
from test_svd_cli import gpu_run, have_gpu, refused  # noqa: F401 (gpu_run is a fixture)

EPS = np.finfo(np.float64).eps


def haar(rng, rows, cols, complex_):
    a = rng.standard_normal((rows, cols))
    if complex_:
        a = a + 1j * rng.standard_normal((rows, cols))
    q, r = np.linalg.qr(a)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def prescribed_pair(m, p, n, gamma, complex_=False, seed=5):
    rng = np.random.default_rng(seed)
    gamma = np.asarray(gamma, dtype=np.float64)
    k = min(m, n)
    sigma_f, sigma_g = gamma / np.hypot(1, gamma), 1 / np.hypot(1, gamma)
    u = np.zeros((m, n), np.complex128 if complex_ else np.float64)
    u[:, :k] = haar(rng, m, k, complex_)
    x = (haar(rng, n, n, complex_) * np.logspace(0, -1, n)) @ haar(rng, n, n, complex_)
    return (u * sigma_f) @ x, (haar(rng, p, n, complex_) * sigma_g) @ x


def run_gsvd(tmp_path, F, G, *extra, order="C", vectors=True):
    for name, a in (("F.npy", F), ("G.npy", G)):
        np.save(tmp_path / name, np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a))
    args = ["gsvd", "--f", tmp_path / "F.npy", "--g", tmp_path / "G.npy", "--output",
            tmp_path / "s.npy"]
    if vectors:
        args += ["--vectors", tmp_path / "vec"]
    done = shiftop(*args, *extra)
    return np.load(tmp_path / "s.npy"), done


def load_vectors(tmp_path):
    return {k: np.load(tmp_path / f"vec_{k}.npy") for k in ("u", "v", "x", "sigma_f", "sigma_g")}


def check_vectors(F, G, s, vec):
    n = F.shape[1]
    tol = 32 * max(F.shape + G.shape) * EPS
    assert vec["u"].shape == F.shape and vec["v"].shape == G.shape and vec["x"].shape == (n, n)
    np.testing.assert_array_equal(vec["sigma_f"] / vec["sigma_g"], s)
    # From the analysis (as in package/test_gsvd.py): 4 eps; measured 1.5 eps.
    assert np.max(np.abs(vec["sigma_f"] ** 2 + vec["sigma_g"] ** 2 - 1)) <= 4 * EPS
    assert np.linalg.norm(F - (vec["u"] * vec["sigma_f"]) @ vec["x"]) <= tol * np.linalg.norm(F)
    assert np.linalg.norm(G - (vec["v"] * vec["sigma_g"]) @ vec["x"]) <= tol * np.linalg.norm(G)
    assert np.linalg.norm(vec["v"].conj().T @ vec["v"] - np.eye(n)) <= tol


@pytest.mark.parametrize("m,p,n", [(1, 1, 1), (5, 4, 3), (9, 11, 9), (3, 7, 5), (30, 26, 25)])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_values_and_vectors(tmp_path, m, p, n, order, complex_):
    """gamma from 1e-3 to 1e3: values within 12e3 eps relative of the prescribed ones (the pair
    rounded in double: at least 4x the worst measured over the native and portable builds, 2630
    eps; against a 40-digit reference of the rounded pair the package tests measured 745 eps),
    zeros below 1e-30, scipy's
    generalized eigh of the pencil to its normwise accuracy in the squares; the vectors factor
    the pair."""
    k = min(m, n)
    gamma = np.r_[np.logspace(3, -3, k) if k > 1 else [0.7], np.zeros(n - k)]
    F, G = prescribed_pair(m, p, n, gamma, complex_)
    s, done = run_gsvd(tmp_path, F, G, order=order)
    assert s.dtype == np.float64 and s.shape == (n,) and np.all(np.diff(s) <= 0)
    live = gamma > 0
    assert np.max(np.abs(s[live] - gamma[live]) / gamma[live]) <= 12e3 * EPS
    assert np.all(np.abs(s[~live]) <= 1e-30)
    ev = scipy.linalg.eigh(F.conj().T @ F, G.conj().T @ G, eigvals_only=True)[::-1]
    assert np.max(np.abs(s**2 - np.clip(ev, 0, None))) <= 1e-8 * s[0] ** 2
    vec = load_vectors(tmp_path)
    assert vec["x"].dtype == (np.complex128 if complex_ else np.float64)
    check_vectors(F, G, s, vec)
    assert "converged in" in done.stdout and "sweeps" in done.stdout
    assert ("complex128" if complex_ else "float64") in done.stdout


def test_float32_is_promoted_and_the_pair_is_complex_if_either_is(tmp_path):
    F, G = prescribed_pair(6, 7, 5, np.logspace(2, -2, 5))
    s32, done = run_gsvd(tmp_path, F.astype(np.float32), G.astype(np.float32), vectors=False)
    s64, _ = run_gsvd(tmp_path, F.astype(np.float32).astype(np.float64),
                      G.astype(np.float32).astype(np.float64), vectors=False)
    assert s32.dtype == np.float64 and np.array_equal(s32, s64)
    assert "computed in float64" in done.stdout
    s, done = run_gsvd(tmp_path, F.astype(np.complex64), G)
    assert "computed in complex128" in done.stdout
    assert load_vectors(tmp_path)["u"].dtype == np.complex128
    want, _ = run_gsvd(tmp_path, F.astype(np.complex64).astype(np.complex128),
                       G.astype(np.complex128), vectors=False)
    assert np.array_equal(s, want)


def test_hdf5_inputs_and_json(tmp_path):
    F, G = prescribed_pair(8, 9, 6, np.logspace(1, -1, 6))
    with h5py.File(tmp_path / "F.h5", "w") as f:
        f["F"] = F
    with h5py.File(tmp_path / "G.h5", "w") as f:
        f["a"] = G
        f["b"] = G * 2
    done = shiftop("gsvd", "--f", tmp_path / "F.h5", "--g", tmp_path / "G.h5", "--g-dataset",
                   "b", "--output", tmp_path / "s.npy", "--json", "--variant", "pointwise",
                   "--threads", 1)
    out = json.loads(done.stdout)
    assert {"m": 8, "p": 9, "n": 6, "computed_in": "float64", "converged": True,
            "backend": "cpu", "variant": "pointwise", "strategy": "modmod"}.items() <= out.items()
    assert out["sweeps"] >= 2 and 0 < out["proper_transformations"] <= out["transformations"]
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"), np.logspace(1, -1, 6) / 2,
                               rtol=4e3 * EPS)


@pytest.mark.parametrize("args", [["--variant", "full-block", "--block-width", "4"],
                                  ["--variant", "block-oriented", "--block-width", "3"],
                                  ["--strategy", "rc-closest-rev"], ["--strategy", "rc"]])
def test_variants_and_strategies(tmp_path, args):
    n = 23
    gamma = np.logspace(3, -3, n)
    F, G = prescribed_pair(25, 24, n, gamma)
    s, _ = run_gsvd(tmp_path, F, G, *args)
    # As in test_values_and_vectors (measured here at most 1028 eps).
    assert np.max(np.abs(s - gamma) / gamma) <= 12e3 * EPS
    check_vectors(F, G, s, load_vectors(tmp_path))


def outputs_absent(tmp_path):
    names = {p.name for p in tmp_path.iterdir()}
    return not ({"s.npy"} | {f"vec_{k}.npy" for k in ("u", "v", "x", "sigma_f", "sigma_g")}) \
        & names


@pytest.mark.parametrize("make,message", [
    (lambda F, G: (F, G[:, :3]), "--g {G}: G has 3 columns but F ({F}) has 4"),
    (lambda F, G: (F, G[:3]), "G must have full column rank, so at least as many rows"),
    (lambda F, G: (np.where(np.eye(5, 4) > 0, np.nan, F), G),
     "--f {F}: NaN at (row 0, column 0): expected finite"),
    (lambda F, G: (F, np.where(np.eye(6, 4) > 0, np.inf, G)),
     "--g {G}: infinity at (row 0, column 0)"),
    (lambda F, G: (F, G * np.array([1, 0, 1, 1])), "rank"),
    (lambda F, G: (F, np.c_[G[:, :3], G[:, 1]]), "rank"),
    (lambda F, G: (np.zeros((0, 4)), G), "--f {F}: the matrix is empty (0 x 4)"),
    (lambda F, G: (F[0], G), "{F}"),
])
def test_bad_pairs_are_refused_with_one_line_and_no_output(tmp_path, make, message):
    F, G = prescribed_pair(5, 6, 4, [3.0, 2.0, 1.0, 0.5])
    f, g = make(F, G)
    np.save(tmp_path / "F.npy", f)
    np.save(tmp_path / "G.npy", g)
    line = refused(tmp_path, "gsvd", "--f", tmp_path / "F.npy", "--g", tmp_path / "G.npy",
                   "--output", tmp_path / "s.npy", "--vectors", tmp_path / "vec")
    assert message.format(F=tmp_path / "F.npy", G=tmp_path / "G.npy") in line, line
    assert outputs_absent(tmp_path)


@pytest.mark.parametrize("args,message", [
    (["--variant", "blocked"], "variant: expected auto, pointwise"),
    (["--strategy", "zigzag"], "zigzag"),
    (["--max-sweeps", "-1"], "--max-sweeps"),
    (["--block-width", "x"], "--block-width"),
    (["--backend", "foo"], "--backend: expected cpu or cuda, got 'foo'"),
])
def test_bad_options_are_refused(tmp_path, args, message):
    F, G = prescribed_pair(5, 6, 4, [3.0, 2.0, 1.0, 0.5])
    np.save(tmp_path / "F.npy", F)
    np.save(tmp_path / "G.npy", G)
    assert message in refused(tmp_path, "gsvd", "--f", tmp_path / "F.npy", "--g",
                              tmp_path / "G.npy", "--output", tmp_path / "s.npy", *args)
    assert outputs_absent(tmp_path)


def test_missing_inputs_and_an_output_that_is_an_input(tmp_path):
    F, G = prescribed_pair(5, 6, 4, [3.0, 2.0, 1.0, 0.5])
    np.save(tmp_path / "F.npy", F)
    line = refused(tmp_path, "gsvd", "--f", tmp_path / "F.npy", "--g", tmp_path / "G.npy",
                   "--output", tmp_path / "s.npy")
    assert f"{tmp_path / 'G.npy'}: cannot open for reading" in line
    np.save(tmp_path / "G.npy", G)
    line = refused(tmp_path, "gsvd", "--f", tmp_path / "F.npy", "--g", tmp_path / "G.npy",
                   "--output", tmp_path / "F.npy")
    assert "--output" in line
    assert np.array_equal(np.load(tmp_path / "F.npy"), F)
    assert outputs_absent(tmp_path)


def test_a_result_that_did_not_converge_is_refused(tmp_path):
    F, G = prescribed_pair(12, 12, 10, np.logspace(2, -2, 10))
    np.save(tmp_path / "F.npy", F)
    np.save(tmp_path / "G.npy", G)
    line = refused(tmp_path, "gsvd", "--f", tmp_path / "F.npy", "--g", tmp_path / "G.npy",
                   "--output", tmp_path / "s.npy", "--vectors", tmp_path / "vec",
                   "--max-sweeps", "1")
    assert "did not converge in 1 sweeps" in line and "--max-sweeps" in line
    assert outputs_absent(tmp_path)


def test_help_says_float32_is_promoted():
    text = shiftop("gsvd", "--help").stdout
    assert "float32 is promoted to float64" in text and "PREFIX_sigma_f.npy" in text


def test_backend_cuda_without_a_gpu_exits_1(tmp_path):
    if have_gpu():
        pytest.skip("a GPU is visible: --backend cuda runs (test_backend_cuda_equals_cpu)")
    F, G = prescribed_pair(5, 6, 4, [3.0, 2.0, 1.0, 0.5])
    np.save(tmp_path / "F.npy", F)
    np.save(tmp_path / "G.npy", G)
    line = refused(tmp_path, "gsvd", "--f", tmp_path / "F.npy", "--g", tmp_path / "G.npy",
                   "--output", tmp_path / "s.npy", "--backend", "cuda")
    assert "--backend cuda" in line
    assert outputs_absent(tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("m,p,n,complex_", [(9, 11, 9, False), (30, 26, 25, True),
                                            (3, 7, 5, False)])
def test_backend_cuda_equals_cpu(tmp_path, gpu_run, m, p, n, complex_):  # noqa: F811
    k = min(m, n)
    gamma = np.r_[np.logspace(3, -3, k), np.zeros(n - k)]
    F, G = prescribed_pair(m, p, n, gamma, complex_)
    s_cpu, _ = run_gsvd(tmp_path, F, G)
    s, done = run_gsvd(tmp_path, F, G, "--backend", "cuda", "--device", "0", "--json")
    live = gamma > 0
    assert np.max(np.abs(s - s_cpu)[live] / s_cpu[live]) <= 4e3 * EPS
    check_vectors(F, G, s, load_vectors(tmp_path))
    out = json.loads(done.stdout)
    assert out["backend"] == "cuda" and out["converged"] is True
