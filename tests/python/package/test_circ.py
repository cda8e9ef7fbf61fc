"""shiftop.CirculantOperator against SciPy's product with C assembled block by block by
scipy.sparse.bmat (block (i, j) = A_{(j-i) mod k}, Romero et al. eq. 1) on random block-circulant
matrices with empty rows and empty blocks, FP32 and FP64, k in {1, 2, 3, 150}: C @ x, C.T @ y,
x @ C, many right-hand sides, every CPU kernel; aslinearoperator with scipy's lsqr and cg;
to_scipy; the file round trip (and a file written by h5py); bad inputs; and shiftop.ct: the
scanner's row sums against the closed-form chord lengths, MLEM's likelihood, SIRT and CGLS."""

import h5py
import numpy as np
import pytest
import scipy.sparse
from scipy.sparse.linalg import cg, lsqr

import shiftop
from shiftop import ct

# Measured worst relative errors (max |y - y_scipy| / max |y_scipy|) over these cases and every
# kernel: FP64 1.0e-15, FP32 3.5e-7; bounds 5x and 11x that.
TOL = {np.float64: 5e-15, np.float32: 4e-6}
KERNELS = ["block-spmv", "mm", "mm2", "mm2s"]


def random_row(rng, k, mb, nb, dtype, density=0.3):
    """A random first block row A (mb x k*nb, CSR): row mb//2 and block 1 empty."""
    a = scipy.sparse.random(mb, k * nb, density=density, random_state=rng, format="lil")
    if mb > 1:
        a[mb // 2, :] = 0
    if k > 1:
        a[:, nb:2 * nb] = 0
    return scipy.sparse.csr_matrix(a, dtype=dtype)


def assembled(a, k):
    """C from A by SciPy alone (eq. 1), in float64."""
    a = a.astype(np.float64)
    nb = a.shape[1] // k
    blocks = [a[:, d * nb:(d + 1) * nb] for d in range(k)]
    return scipy.sparse.bmat([[blocks[(j - i) % k] for j in range(k)] for i in range(k)]).tocsr()


def rel_err(got, want):
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


CASES = [(1, 5, 4), (2, 3, 7), (3, 6, 5), (150, 3, 2)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k,mb,nb", CASES)
def test_products_equal_scipy(dtype, k, mb, nb):
    rng = np.random.default_rng(k + 10 * mb)
    a = random_row(rng, k, mb, nb, dtype)
    C = shiftop.CirculantOperator(a.indptr, a.indices, a.data, k, mb, nb, planning="estimate")
    S = assembled(a, k)
    assert C.shape == S.shape == (k * mb, k * nb) and C.dtype == dtype and C.nnz == a.nnz
    x, y = rng.standard_normal(k * nb), rng.standard_normal(k * mb)
    X, Y = rng.standard_normal((k * nb, 3)), rng.standard_normal((k * mb, 4))
    x32, X32 = x.astype(dtype).astype(np.float64), X.astype(dtype).astype(np.float64)
    y32, Y32 = y.astype(dtype).astype(np.float64), Y.astype(dtype).astype(np.float64)
    for got, want, shape in [(C @ x, S @ x32, (k * mb,)), (C @ X, S @ X32, (k * mb, 3)),
                             (C.T @ y, S.T @ y32, (k * nb,)), (C.T @ Y, S.T @ Y32, (k * nb, 4)),
                             (y @ C, S.T @ y32, (k * nb,)), (Y.T @ C, (S.T @ Y32).T, (4, k * nb)),
                             (X.T @ C.T, (S @ X32).T, (3, k * mb))]:
        assert got.shape == shape and got.dtype == dtype
        assert rel_err(got, want) <= TOL[dtype]
    # the empty row gives exact zeros in every output block (nothing left unwritten)
    if mb > 1:
        assert np.all((C @ x).reshape(k, mb)[:, mb // 2] == 0)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_kernel(kernel, dtype):
    rng = np.random.default_rng(3)
    k, mb, nb = 9, 17, 13  # sizes crossing the MAXPY widths' multiples
    a = random_row(rng, k, mb, nb, dtype, density=0.25)
    C = shiftop.CirculantOperator(a, k, kernel=kernel, planning="estimate", max_rhs=2)
    assert C.choices["cpu_kernel"] == kernel
    S = assembled(a, k)
    X = rng.standard_normal((k * nb, 5)).astype(dtype)
    Y = rng.standard_normal((k * mb, 5)).astype(dtype)
    assert rel_err(C @ X, S @ X.astype(np.float64)) <= TOL[dtype]
    assert rel_err(C.T @ Y, S.T @ Y.astype(np.float64)) <= TOL[dtype]


def test_adjoint_identity_and_views(rng):
    k, mb, nb = 7, 11, 6
    a = random_row(rng, k, mb, nb, np.float64)
    C = shiftop.CirculantOperator(a, k)
    x, y = rng.standard_normal(k * nb), rng.standard_normal(k * mb)
    lhs, rhs = np.dot(C @ x, y), np.dot(x, C.T @ y)
    # measured at most 9.5e-17 over 20 seeds
    assert abs(lhs - rhs) <= 1e-15 * np.linalg.norm(C @ x) * np.linalg.norm(y)
    assert C.T.T is C and C.H is C.T and C.T.shape == (k * nb, k * mb)
    assert C.block_shape == (k, mb, nb) and C.memory_bytes > 0
    assert "CirculantOperator" in repr(C) and "transpose" in repr(C.T)


def test_duplicate_columns_add(rng):
    # row 0 holds column 3 twice and row 1 is empty: C's entry is the sum
    indptr, indices = np.array([0, 3, 3, 4]), np.array([3, 0, 3, 5])
    data = np.array([1.5, 2.0, 0.25, -1.0])
    C = shiftop.CirculantOperator(indptr, indices, data, 2, 3, 3)
    S = assembled(scipy.sparse.csr_matrix((data, indices, indptr), shape=(3, 6)), 2)
    assert np.array_equal(C.to_scipy().toarray(), S.toarray())
    x = rng.standard_normal(6)
    assert rel_err(C @ x, S @ x) <= TOL[np.float64]


@pytest.mark.parametrize("itype", [np.int32, np.int64, np.uint16])
def test_index_types_and_scipy_constructor(rng, itype):
    k, mb, nb = 3, 4, 5
    a = random_row(rng, k, mb, nb, np.float64)
    C = shiftop.CirculantOperator(a.indptr.astype(itype), a.indices.astype(itype), a.data,
                                  k=k, mb=mb, nb=nb)
    D = shiftop.CirculantOperator(a, k)
    x = rng.standard_normal(k * nb)
    assert np.array_equal(C @ x, D @ x)
    assert C.csr[0].dtype == (np.int32 if itype == np.int32 else np.int64)
    assert not C.csr[2].flags.writeable


def test_to_scipy(rng):
    for dtype in (np.float64, np.float32):
        k, mb, nb = 4, 5, 3
        a = random_row(rng, k, mb, nb, dtype)
        S = shiftop.CirculantOperator(a, k).to_scipy()
        assert S.dtype == dtype and S.shape == (k * mb, k * nb) and S.nnz == k * a.nnz
        assert np.array_equal(S.toarray(), assembled(a, k).toarray().astype(dtype))
        assert all(np.all(np.diff(S.indices[S.indptr[r]:S.indptr[r + 1]]) > 0)
                   for r in range(S.shape[0]))
    with pytest.raises(shiftop.Error, match="100"):
        shiftop.CirculantOperator(random_row(rng, 150, 3, 2, np.float64), 150).to_scipy(
            max_entries=100)


def test_linear_operator_lsqr_and_cg(rng):
    k, mb, nb = 5, 8, 3  # tall blocks: C (40 x 15) has full column rank
    a = random_row(rng, k, mb, nb, np.float64, density=0.6)
    C = shiftop.CirculantOperator(a, k)
    S = assembled(a, k).toarray()
    L = C.aslinearoperator()
    assert L.shape == (40, 15) and L.dtype == np.float64
    x, y = rng.standard_normal(15), rng.standard_normal(40)
    assert rel_err(L.matvec(x), S @ x) <= TOL[np.float64]
    assert rel_err(L.rmatvec(y), S.T @ y) <= TOL[np.float64]
    assert L.matvec(x[:, None]).shape == (40, 1)
    X = rng.standard_normal((15, 3))
    assert rel_err(L.matmat(X), S @ X) <= TOL[np.float64]
    assert rel_err(L.H.matvec(y), S.T @ y) <= TOL[np.float64]
    assert rel_err(L.T.matvec(y), S.T @ y) <= TOL[np.float64]
    want = np.linalg.lstsq(S, y, rcond=None)[0]
    got = lsqr(L, y, atol=1e-14, btol=1e-14, iter_lim=500)[0]
    assert rel_err(got, want) < 1e-12  # measured 9.8e-15 (condition of S 11)
    N = L.H @ L
    got, info = cg(N, S.T @ y, rtol=1e-13, atol=0.0, maxiter=500)
    assert info == 0 and rel_err(got, want) < 1e-12  # measured 6.9e-15


def test_file_round_trip(tmp_path, rng):
    for dtype in (np.float64, np.float32):
        k, mb, nb = 3, 4, 5
        C = shiftop.CirculantOperator(random_row(rng, k, mb, nb, dtype), k)
        C.save(tmp_path / "A.h5", overwrite=True)
        D = shiftop.CirculantOperator.from_file(tmp_path / "A.h5")
        assert D.dtype == dtype and D.block_shape == (k, mb, nb)
        for u, v in zip(C.csr, D.csr):
            assert np.array_equal(u, v)
        with pytest.raises(shiftop.Error, match="A.h5"):
            C.save(tmp_path / "A.h5")
    # a file written by h5py alone, int32 indices
    a = random_row(rng, 3, 4, 5, np.float64)
    with h5py.File(tmp_path / "B.h5", "w") as f:
        f["indptr"], f["indices"], f["data"] = a.indptr, a.indices, a.data
        f.attrs["mB"], f.attrs["nB"], f.attrs["k"] = 4, 5, 3
    indptr, indices, data, k, mb, nb = shiftop.read_circulant(tmp_path / "B.h5")
    assert (k, mb, nb) == (3, 4, 5) and np.array_equal(data, a.data)
    x = rng.standard_normal(15)
    B = shiftop.CirculantOperator.from_file(tmp_path / "B.h5")
    assert rel_err(B @ x, assembled(a, 3) @ x) <= TOL[np.float64]
    with pytest.raises(FileNotFoundError):
        shiftop.CirculantOperator.from_file(tmp_path / "nope.h5")


def test_inputs_cast_copied_or_refused(rng):
    k, mb, nb = 3, 4, 5
    a = random_row(rng, k, mb, nb, np.float32)
    C = shiftop.CirculantOperator(a, k)
    S = assembled(a, k)
    X = rng.standard_normal((k * nb, 6))
    # non-contiguous (a strided view, Fortran order) and other real dtypes are handled
    for x in (X[:, ::2], np.asfortranarray(X), X[::-1], np.arange(k * nb), X.astype(np.float16)):
        want = S @ np.asarray(x).astype(np.float32).astype(np.float64)
        assert rel_err(C @ x, want) <= TOL[np.float32]
    assert (C @ np.zeros((k * nb, 0))).shape == (k * mb, 0)
    with pytest.raises(ValueError, match=r"x must have shape \(15,\) or \(15, p\), got \(12,\)"):
        C @ np.ones(12)
    with pytest.raises(ValueError, match=r"C.T @ x: x must have shape \(12,\)"):
        C.T @ np.ones(15)
    with pytest.raises(ValueError):
        C @ np.ones((15, 2, 2))
    with pytest.raises(TypeError, match="complex"):
        C @ (np.ones(15) + 1j)
    with pytest.raises(TypeError, match="dtype"):
        C @ np.array(["a"] * 15)


def test_bad_construction(rng):
    a = random_row(rng, 3, 4, 5, np.float64)
    with pytest.raises(shiftop.Error):  # a column past k*nb
        shiftop.CirculantOperator(a.indptr, a.indices + 15, a.data, 3, 4, 5)
    with pytest.raises(shiftop.Error):  # indptr of the wrong length
        shiftop.CirculantOperator(a.indptr[:-1], a.indices, a.data, 3, 4, 5)
    with pytest.raises(shiftop.Error):  # a NaN value
        shiftop.CirculantOperator(a.indptr, a.indices, np.full(a.nnz, np.nan), 3, 4, 5)
    with pytest.raises(ValueError, match="multiple of k"):
        shiftop.CirculantOperator(a, 4)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        shiftop.CirculantOperator(a, 0)
    with pytest.raises(TypeError, match="complex"):
        shiftop.CirculantOperator(a.indptr, a.indices, a.data + 1j, 3, 4, 5)
    with pytest.raises(TypeError, match="integers"):
        shiftop.CirculantOperator(a.indptr.astype(float), a.indices, a.data, 3, 4, 5)
    with pytest.raises(TypeError):
        shiftop.CirculantOperator(a.indptr, a.indices)
    with pytest.raises(shiftop.Error, match="kernel"):
        shiftop.CirculantOperator(a, 3, kernel="fast")
    with pytest.raises(shiftop.Error, match="backend"):
        shiftop.CirculantOperator(a, 3, backend="gpu")


def test_sizes_given_twice_or_against_a_are_refused(rng):
    """A sparse A fixes mb and nb (with k): a keyword that says otherwise, or a size given both
    positionally and by keyword, is a mistake to report, not to ignore."""
    a = random_row(rng, 3, 4, 5, np.float64)  # 4 x 15: k = 3, mb = 4, nb = 5
    with pytest.raises(ValueError, match=r"mb=5 conflicts with A of shape \(4, 15\) and k = 3, "
                                         "which give mb = 4"):
        shiftop.CirculantOperator(a, 3, mb=5)
    with pytest.raises(ValueError, match="nb=3 conflicts"):
        shiftop.CirculantOperator(a, 3, nb=3)
    with pytest.raises(TypeError, match=r"got k twice: positionally \(3\) and as k=4"):
        shiftop.CirculantOperator(a, 3, k=4)
    with pytest.raises(TypeError, match="got mb twice"):
        shiftop.CirculantOperator(a.indptr, a.indices, a.data, 3, 4, 5, mb=4)
    same = shiftop.CirculantOperator(a, 3, mb=4, nb=5, planning="estimate")  # agreeing: fine
    assert same.block_shape == (3, 4, 5)
    assert shiftop.CirculantOperator(a, k=3, planning="estimate").block_shape == (3, 4, 5)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transpose", ["auto", "index", "atomic"])
def test_cuda_equals_scipy(dtype, transpose):
    rng = np.random.default_rng(12)
    k, mb, nb = 150, 7, 5
    a = random_row(rng, k, mb, nb, dtype, density=0.1)
    C = shiftop.CirculantOperator(a, k, backend="cuda", transpose=transpose)
    assert C.backend == "cuda"
    S = assembled(a, k)
    X = rng.standard_normal((k * nb, 3)).astype(dtype)
    Y = rng.standard_normal((k * mb, 3)).astype(dtype)
    # the GPU sums in another order (atomics: in any order): 10x the CPU's bounds
    assert rel_err(C @ X, S @ X.astype(np.float64)) <= 10 * TOL[dtype]
    assert rel_err(C.T @ Y, S.T @ Y.astype(np.float64)) <= 10 * TOL[dtype]


# --- the scanner and the reconstructions --------------------------------------------------------

def test_scanner_rows_are_chord_lengths():
    """Each row of C sums the ray's lengths in the voxels: the chord of the field of view, 2
    sqrt(R^2 - d^2) with d = source_distance * |sin(gamma_b)| the ray's distance from the centre
    (ct2d.hpp's fan angles)."""
    g = ct.Geometry(positions=6, rings=5, sectors=24, detectors=16, radius=1.0,
                    source_distance=2.5)
    C = ct.system_matrix(g)
    assert C.block_shape == (6, 16, 20) and C.shape == (96, 120)
    fan = 2 * np.arcsin(1.0 / 2.5)
    gamma = (np.arange(16) + 0.5 - 8) * fan / 16
    chord = 2 * np.sqrt(1.0 - (2.5 * np.sin(gamma)) ** 2)
    sums = (C @ np.ones(120)).reshape(6, 16)
    assert np.abs(sums - chord).max() <= 5e-15  # measured 3.3e-16


def test_mlem_sirt_cgls_on_a_phantom():
    g = ct.Geometry(positions=12, rings=8, sectors=48, detectors=32)
    C = ct.system_matrix(g)
    x = ct.shepp_logan(g, samples=2)
    assert x.shape == (g.image_size,) and x.min() >= -1e-15 and x.max() > 0  # sums of ellipses
    b = C @ x
    seen = []
    image, history = ct.mlem(C, b, iterations=30, callback=seen.append)
    assert image.shape == x.shape and len(history) == 30 and seen == history
    nll = np.array([p.neg_log_likelihood for p in history])
    assert np.all(np.diff(nll) <= 1e-12 * np.abs(nll[:-1]))  # MLEM never increases it
    res = [p.relative_residual for p in history]
    assert res[-1] < 0.5 * res[0] and image.min() >= 0
    noisy = ct.poisson_noise(b, counts=1e3, seed=1)
    assert noisy.shape == b.shape and np.all(noisy >= 0) and not np.array_equal(noisy, b)
    assert np.array_equal(noisy, ct.poisson_noise(b, counts=1e3, seed=1))
    for method in (ct.sirt, ct.cgls):
        image, history = method(C, b, iterations=15)
        assert history[-1].relative_residual < history[0].relative_residual
    picture = ct.to_cartesian(g, x, pixels=32)
    assert picture.shape == (32, 32) and picture[0, 0] == 0 and picture.max() > 0
    with pytest.raises(ValueError, match="sinogram must have shape"):
        ct.mlem(C, np.ones(5))
    with pytest.raises(shiftop.Error, match="expected counts >= 0"):
        ct.mlem(C, -b)

    def stop(progress):
        raise RuntimeError(f"stopped at {progress.iteration}")

    with pytest.raises(RuntimeError, match="stopped at 1"):  # the callback's exception ends the run
        ct.sirt(C, b, iterations=5, callback=stop)
    with pytest.raises(shiftop.Error):
        ct.Geometry(positions=7, sectors=48)  # sectors not a multiple of positions
    C32 = ct.system_matrix(g, dtype=np.float32)
    image32, _ = ct.mlem(C32, b, iterations=5)
    assert image32.dtype == np.float32
