"""shiftop.gsvd against independent references: pairs F = U diag(sigma_f) X, G = V diag(sigma_g) X
built in NumPy with prescribed generalized singular values (thesis section 3.4) and
scipy.linalg.eigh(F^H F, G^H G) (LAPACK dsygv/zhegv); the factorisation's residuals and
orthogonality; stacks equal to one pair at a time bit for bit; dtypes, layouts, every variant and
strategy; every bad input refused by name; non-convergence as LinAlgError. The tests marked gpu
(backend='cuda' against the CPU) run on the device machine only."""

import numpy as np
import pytest
import scipy.linalg

import shiftop

EPS = np.finfo(np.float64).eps


def haar(rng, rows, cols, complex_):
    a = rng.standard_normal((rows, cols))
    if complex_:
        a = a + 1j * rng.standard_normal((rows, cols))
    q, r = np.linalg.qr(a)
    return q * (np.diag(r) / np.abs(np.diag(r)))


def prescribed_pair(rng, m, p, n, gamma, complex_=False, cond_x=10.0):
    """(F, G) whose generalized singular values are gamma (n values >= 0; with m < n the last
    n - m must be 0), X of condition cond_x."""
    gamma = np.asarray(gamma, dtype=np.float64)
    k = min(m, n)
    assert np.all(gamma[k:] == 0)
    sigma_f = gamma / np.sqrt(1 + gamma**2)
    sigma_g = 1 / np.sqrt(1 + gamma**2)
    u = np.zeros((m, n), np.complex128 if complex_ else np.float64)
    u[:, :k] = haar(rng, m, k, complex_)
    v = haar(rng, p, n, complex_)
    x = (haar(rng, n, n, complex_) * np.logspace(0, -np.log10(cond_x), n)) @ haar(rng, n, n,
                                                                                   complex_)
    return (u * sigma_f) @ x, (v * sigma_g) @ x


def reference_values(F, G):
    """sqrt of the eigenvalues of (F^H F, G^H G), nonincreasing (LAPACK's generalized eigh; its
    error is normwise in the squares)."""
    w = scipy.linalg.eigh(F.conj().T @ F, G.conj().T @ G, eigvals_only=True)
    return np.sqrt(np.clip(w[::-1], 0, None))


def check_factorisation(F, G, r, tol):
    """F = u sigma_f x, G = v sigma_g x, sigma_f^2 + sigma_g^2 = 1, v orthonormal, u orthonormal
    where sigma_f > 0, values nonincreasing; tol relative (norms)."""
    n = F.shape[-1]
    assert r.sigma_f.shape == r.sigma_g.shape == r.values.shape == (n,)
    assert r.u.shape == F.shape and r.v.shape == G.shape and r.x.shape == (n, n)
    assert np.all(np.diff(r.values) <= 0)
    assert np.all(r.sigma_g > 0) and np.all(r.sigma_f >= 0)
    # From the analysis: sigma = (a, b) / hypot(a, b), hypot within 1 ulp, so the squares sum to
    # 1 within 2 eps (hypot) + 1 eps (the divisions) + 1 eps (this sum's roundings); measured
    # 1.5 eps.
    assert np.max(np.abs(r.sigma_f**2 + r.sigma_g**2 - 1)) <= 4 * EPS
    assert np.linalg.norm(F - (r.u * r.sigma_f) @ r.x) <= tol * np.linalg.norm(F)
    assert np.linalg.norm(G - (r.v * r.sigma_g) @ r.x) <= tol * np.linalg.norm(G)
    assert np.linalg.norm(r.v.conj().T @ r.v - np.eye(n)) <= tol
    # Columns of u where sigma_f is numerically nonzero (m < n leaves n - m values of about 1e-35
    # here, their columns of u normalised but not orthogonal: at most m columns can be).
    live = r.sigma_f > n * EPS * r.sigma_f.max()
    uu = r.u[:, live]
    assert np.linalg.norm(uu.conj().T @ uu - np.eye(int(live.sum()))) <= tol


# m < n (3, 8, 6): F has n - m zero generalized values.
SHAPES = [(1, 1, 1), (2, 3, 2), (5, 4, 3), (7, 9, 7), (3, 8, 6), (20, 17, 17), (40, 45, 33)]
CASES = [(*shape, c) for shape in SHAPES for c in (False, True)]


@pytest.mark.parametrize("spread", [2, 3])
@pytest.mark.parametrize("m,p,n,complex_", CASES)
def test_values_match_the_prescribed_ones_and_the_pencil(
        rng, m, p, n, complex_, spread):
    """gamma from 10^-spread to 10^spread (X of condition 10; zeros where m < n) against the
    prescribed gamma (the C++ suite's pairs are formed in long double; here the pair's own
    rounding in double is part of the error). Measured over the native and portable builds
    (these shapes): 95 eps at spread 2, 2207 eps (4.9e-13) at spread 3; bound 12 * 10^spread eps,
    at least 4x that (4 * 10^spread before, 1.8x). The zeros come out below 1e-30. LAPACK's
    generalized eigh of the pencil agrees to its normwise accuracy (squares within
    1e-8 gamma_max^2; measured 6.5e-10)."""
    k = min(m, n)
    gamma = np.zeros(n)
    gamma[:k] = np.logspace(spread, -spread, k) if k > 1 else [2.5]
    F, G = prescribed_pair(rng, m, p, n, gamma, complex_)
    values = shiftop.gsvd(F, G)
    assert values.shape == (n,) and values.dtype == np.float64
    assert np.all(np.diff(values) <= 0)
    tol = 12 * 10.0**spread * EPS
    live = gamma > 0
    assert np.max(np.abs(values[live] - gamma[live]) / gamma[live]) <= tol
    assert np.all(np.abs(values[~live]) <= 1e-30)
    ref = reference_values(F, G)
    assert np.max(np.abs(values**2 - ref**2)) <= 1e-8 * ref[0] ** 2  # measured 6.5e-10


@pytest.mark.parametrize("m,p,n,complex_", CASES)
def test_vectors_factor_the_pair(rng, m, p, n, complex_):
    F, G = prescribed_pair(rng, m, p, n, np.r_[np.logspace(1, -1, min(m, n)),
                                               np.zeros(n - min(m, n))], complex_)
    r = shiftop.gsvd(F, G, vectors=True)
    assert isinstance(r, shiftop.GsvdResult)
    assert r.u.dtype == r.v.dtype == r.x.dtype == F.dtype
    check_factorisation(F, G, r, 32 * max(F.shape + G.shape) * EPS)
    assert np.array_equal(r.values, shiftop.gsvd(F, G)), "vectors do not change the values"


@pytest.mark.parametrize("complex_", [False, True])
def test_stacks_equal_one_pair_at_a_time_bit_for_bit(rng, complex_):
    pairs = [prescribed_pair(rng, 6, 7, 5, np.logspace(2, -2, 5), complex_) for _ in range(6)]
    F = np.stack([f for f, _ in pairs]).reshape(2, 3, 6, 5)
    G = np.stack([g for _, g in pairs]).reshape(2, 3, 7, 5)
    r = shiftop.gsvd(F, G, vectors=True, threads=2)
    assert r.values.shape == (2, 3, 5) and r.u.shape == (2, 3, 6, 5)
    assert r.stats["converged"].shape == (2, 3) and r.stats["converged"].all()
    for b, (f, g) in enumerate(pairs):
        one = shiftop.gsvd(f, g, vectors=True, threads=1)
        i, j = divmod(b, 3)
        for name in ("sigma_f", "sigma_g", "values", "u", "v", "x"):
            assert np.array_equal(getattr(r, name)[i, j], getattr(one, name)), name
    # A G shared by every pair broadcasts.
    shared = shiftop.gsvd(F, pairs[0][1])
    for b, (f, _) in enumerate(pairs):
        assert np.array_equal(shared[divmod(b, 3)], shiftop.gsvd(f, pairs[0][1]))


def test_results_do_not_depend_on_the_thread_count(rng):
    F, G = prescribed_pair(rng, 30, 34, 29, np.logspace(3, -3, 29))
    one = shiftop.gsvd(F, G, vectors=True, threads=1)
    # Up to 3 (an uneven split of the pairs) where the machine has the threads: Python refuses
    # more than the hardware threads (test_threads.py); the C++ tests oversubscribe.
    for threads in range(2, min(3, shiftop._core.hardware_threads()) + 1):
        r = shiftop.gsvd(F, G, vectors=True, threads=threads)
        assert np.array_equal(r.x, one.x) and np.array_equal(r.values, one.values)


def test_layouts_and_dtypes(rng):
    """C, Fortran, strided and negative-stride inputs give the same bits (the same column-major
    copy); float32/integers compute in float64 of the cast values, complex64 in complex128, a
    real F with a complex G in complex128; the inputs are not modified."""
    F, G = prescribed_pair(rng, 9, 8, 6, np.logspace(1, -1, 6))
    want = shiftop.gsvd(F, G)
    before = (F.copy(), G.copy())
    for f, g in [(np.asfortranarray(F), np.asfortranarray(G)),
                 (np.ascontiguousarray(F), np.ascontiguousarray(G)),
                 (np.repeat(F, 2, axis=1)[:, ::2], np.repeat(G, 2, axis=0)[::2]),
                 (F[::-1][::-1], G[:, ::-1][:, ::-1])]:
        assert np.array_equal(shiftop.gsvd(f, g), want)
    assert np.array_equal(F, before[0]) and np.array_equal(G, before[1])

    f32, g32 = F.astype(np.float32), G.astype(np.float32)
    assert np.array_equal(shiftop.gsvd(f32, g32),
                          shiftop.gsvd(f32.astype(np.float64), g32.astype(np.float64)))
    fi, gi = np.round(F * 10).astype(np.int32), np.round(G * 10).astype(np.int64)
    assert np.array_equal(shiftop.gsvd(fi, gi), shiftop.gsvd(fi * 1.0, gi * 1.0))
    r = shiftop.gsvd(F.astype(np.complex64), G, vectors=True)
    assert r.x.dtype == np.complex128 and r.values.dtype == np.float64
    assert np.array_equal(r.values, shiftop.gsvd(F.astype(np.complex64).astype(np.complex128),
                                                 G.astype(np.complex128)))
    with pytest.raises(TypeError, match="longdouble|float128"):
        shiftop.gsvd(F.astype(np.longdouble), G)
    with pytest.raises(TypeError, match="real or complex numeric"):
        shiftop.gsvd(F.astype(object), G)


@pytest.mark.parametrize("variant,strategy,width", [
    ("pointwise", "modmod", None), ("pointwise", "rc", None),
    ("pointwise", "rc-closest-rev", None), ("block-oriented", "modmod", 4),
    ("full-block", "modmod", 4), ("full-block", "rc-closest-rev", 5),
    ("block-oriented", "modmod", None), ("full-block", "modmod", None)])
def test_variants_and_strategies_agree(rng, variant, strategy, width):
    """n = 37 crosses block widths 4 and 5 with a ragged last block."""
    n = 37
    gamma = np.logspace(3, -3, n)
    F, G = prescribed_pair(rng, 40, 41, n, gamma)
    r = shiftop.gsvd(F, G, vectors=True, variant=variant, strategy=strategy, block_width=width)
    # Against the prescribed gamma (the pair rounded in double): at least 4x the worst measured
    # over the native and portable builds (1176 eps; the same bound as the values test above).
    assert np.max(np.abs(r.values - gamma) / gamma) <= 12e3 * EPS
    check_factorisation(F, G, r, 32 * 41 * EPS)


def test_full_output_reports_the_statistics(rng):
    F, G = prescribed_pair(rng, 12, 12, 10, np.logspace(2, -2, 10))
    r = shiftop.gsvd(F, G, full_output=True)
    assert r.u is None and r.v is None and r.x is None
    assert r.stats["converged"].dtype == bool and bool(r.stats["converged"])
    assert int(r.stats["sweeps"]) >= 2
    assert 0 < int(r.stats["proper_transformations"]) <= int(r.stats["transformations"])


def test_non_convergence_raises_linalgerror_unless_full_output(rng):
    F, G = prescribed_pair(rng, 12, 12, 10, np.logspace(2, -2, 10))
    with pytest.raises(np.linalg.LinAlgError, match="did not converge in 1 sweeps"):
        shiftop.gsvd(F, G, max_sweeps=1)
    r = shiftop.gsvd(F, G, max_sweeps=1, full_output=True)
    assert not bool(r.stats["converged"]) and int(r.stats["sweeps"]) == 1


def test_empty_stacks_give_empty_results():
    assert shiftop.gsvd(np.zeros((0, 3, 2)), np.zeros((0, 4, 2))).shape == (0, 2)
    r = shiftop.gsvd(np.zeros((2, 0, 3, 2)), np.zeros((4, 2)), vectors=True)
    assert r.u.shape == (2, 0, 3, 2) and r.x.shape == (2, 0, 2, 2)


@pytest.mark.parametrize("call,error,message", [
    (lambda F, G: shiftop.gsvd(F[0], G), ValueError, "at least 2 dimensions"),
    (lambda F, G: shiftop.gsvd(F[:, :0], G[:, :0]), ValueError, "non-empty"),
    (lambda F, G: shiftop.gsvd(F, G[:, :3]), ValueError, "same number of columns"),
    (lambda F, G: shiftop.gsvd(F, G[:3]), ValueError, "full column rank"),
    (lambda F, G: shiftop.gsvd(np.where(np.eye(5, 4) > 0, np.nan, F), G), ValueError,
     r"F\[0, 0\] is nan"),
    (lambda F, G: shiftop.gsvd(F, np.where(np.eye(6, 4) > 0, np.inf, G)), ValueError,
     r"G\[0, 0\] is inf"),
    (lambda F, G: shiftop.gsvd(F, G * np.array([1, 0, 1, 1])), ValueError, "rank"),
    (lambda F, G: shiftop.gsvd(F, np.c_[G[:, :3], G[:, 1]]), ValueError, "rank"),
    (lambda F, G: shiftop.gsvd(F, G, variant="blocked"), ValueError, "variant 'blocked'"),
    (lambda F, G: shiftop.gsvd(F, G, strategy="x"), ValueError, "strategy 'x'"),
    (lambda F, G: shiftop.gsvd(F, G, threads=0), ValueError, "threads"),
    (lambda F, G: shiftop.gsvd(F, G, max_sweeps=-1), ValueError, "max_sweeps"),
    (lambda F, G: shiftop.gsvd(F, G, block_width=0), ValueError, "block_width"),
    (lambda F, G: shiftop.gsvd(F, G, backend="gpu"), ValueError, "backend 'gpu'"),
    (lambda F, G: shiftop.gsvd(F, G, device=0), ValueError, "needs backend='cuda'"),
    (lambda F, G: shiftop.gsvd(np.zeros((2, 5, 4)), np.zeros((3, 6, 4))), ValueError,
     "do not broadcast"),
])
def test_bad_input_is_refused_by_name(rng, call, error, message):
    F, G = prescribed_pair(rng, 5, 6, 4, [3.0, 2.0, 1.0, 0.5])
    with pytest.raises(error, match=message):
        call(F, G)


def test_the_core_refuses_layouts_it_cannot_read(rng):
    F = np.ones((1, 4, 3))
    with pytest.raises(ValueError, match="column-major"):
        shiftop._core.gsvd_batched(np.ascontiguousarray(F) + np.eye(4, 3), np.asfortranarray(
            np.eye(3)[None]))


@pytest.mark.gpu
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("m,p,n,batch", [(6, 7, 5, 9), (20, 17, 17, 3), (1, 1, 1, 4)])
def test_backend_cuda_equals_the_cpu(rng, m, p, n, batch, complex_):
    """The GPU twin: values within 4e3 eps (relative, the bound against the prescribed values
    above) of the CPU's, the same factorisation. Measured on an H200: 1392 eps at (6, 7, 5), on
    the values near 1e-3, where both differ from the prescribed ones by as much."""
    k = min(m, n)
    gamma = np.r_[np.logspace(3, -3, k), np.zeros(n - k)]
    pairs = [prescribed_pair(rng, m, p, n, gamma, complex_) for _ in range(batch)]
    F = np.stack([f for f, _ in pairs])
    G = np.stack([g for _, g in pairs])
    cpu = shiftop.gsvd(F, G, vectors=True)
    gpu = shiftop.gsvd(F, G, vectors=True, backend="cuda")
    live = cpu.values > 0
    assert np.max(np.abs(gpu.values - cpu.values)[live] / cpu.values[live]) <= 4e3 * EPS
    for b in range(batch):
        one = shiftop.GsvdResult(*(getattr(gpu, k)[b] for k in
                                   ("sigma_f", "sigma_g", "values", "u", "v", "x")), stats={})
        check_factorisation(F[b], G[b], one, 32 * max(m, p) * EPS)


@pytest.mark.parametrize("variant,width", [("pointwise", None), ("block-oriented", 4),
                                           ("full-block", 4), ("full-block", 2)])
@pytest.mark.parametrize("complex_", [False, True])
def test_wide_pairs_converge_in_every_variant(variant, width, complex_):
    """m < n: n - m generalized values are 0 (sigma_f = 0). Eight random pairs (3, 8, 6) per
    case (before a fix at 14:30, the complex ones and the real blocked ones of width 4 did not
    converge in 50 sweeps: their zero values ping-ponged near 1e-49)."""
    for seed in range(8):
        F, G = prescribed_pair(np.random.default_rng(seed), 3, 8, 6,
                               np.r_[np.logspace(2, -2, 3), np.zeros(3)], complex_)
        r = shiftop.gsvd(F, G, variant=variant, block_width=width, full_output=True)
        assert bool(r.stats["converged"]), seed
        assert np.max(np.abs(r.values[:3] - np.logspace(2, -2, 3)) / np.logspace(2, -2, 3)) \
            <= 400 * EPS
        assert np.all(r.values[3:] <= 1e-30)
