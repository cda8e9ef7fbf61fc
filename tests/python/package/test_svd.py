"""shiftop.svd, shiftop.spectrum / Operator.spectrum and shiftop.plot.spectrum against independent
references: numpy.linalg.svd (LAPACK gesdd), LAPACK dgejsv for graded matrices, numpy's eigvalsh
for the hyperbolic SVD's G J G^H, and the SVD of the stacked F^ = rfft(kernels padded to 2 Nt)
for the spectrum. backend='cuda' (NumPy arrays, PyTorch CUDA tensors, CuPy arrays) against the
CPU's results: the tests marked gpu run on the device machine only (`-m gpu`) and fail there
when PyTorch, CuPy or a GPU is missing."""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.linalg import lapack

import shiftop
from shiftop import plot

svd_module = sys.modules["shiftop.svd"]  # shiftop.svd is the function

DTYPES = [np.float64, np.float32, np.complex128, np.complex64]
# Shapes crossing the boundaries: 1 x 1, one row/column, odd, square, tall, wide.
SHAPES = [(1, 1), (1, 4), (4, 1), (5, 3), (3, 5), (17, 17), (40, 9), (9, 40)]
PNG = b"\x89PNG\r\n\x1a\n"


def eps(dtype):
    return float(np.finfo(dtype).eps)


def tolerance(shape, dtype):
    """The bound of check_svd's errors (numpy's own error in the values included): at least 4x
    the worst measured over the native and the portable build, 1.42 max(m, n) eps (8.5 eps at
    max(m, n) = 6; 21 eps at 37 x 35; 0.58 eps at 1 x 1)."""
    return max(8, 6 * max(shape[-2:])) * eps(dtype)


def random_matrix(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def reconstruct(u, s, vh):
    return (u * s[..., None, :]) @ vh


def unitarity(q):
    """max |Q^H Q - I| over a stack of matrices with orthonormal columns."""
    k = q.shape[-1]
    return float(np.abs(q.conj().swapaxes(-1, -2) @ q - np.eye(k)).max())


def check_svd(a, u, s, vh, tolerance):
    """u s vh against a and numpy's singular values; orthonormal u and vh^H."""
    a64 = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    reference = np.linalg.svd(a64, compute_uv=False)
    scale = np.abs(a64).max()
    assert np.abs(s - reference).max() <= tolerance * reference.max()
    assert np.abs(reconstruct(u, s, vh) - a64).max() <= tolerance * scale
    assert unitarity(u) <= tolerance
    assert unitarity(vh.conj().swapaxes(-1, -2)) <= tolerance
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending


# --- the SVD ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_matches_numpy_and_reconstructs(rng, dtype, shape):
    a = random_matrix(rng, shape, dtype)
    u, s, vh = shiftop.svd(a, full_matrices=False)
    m, n = shape
    k = min(m, n)
    assert u.shape == (m, k) and s.shape == (k,) and vh.shape == (k, n)
    assert u.dtype == dtype and vh.dtype == dtype
    assert s.dtype == np.finfo(dtype).dtype
    check_svd(a, u, s, vh, tolerance(shape, dtype))
    s_only = shiftop.svd(a, compute_uv=False)
    assert np.array_equal(s_only, s)


@pytest.mark.parametrize("shape", [(2, 3, 6, 4), (2, 3, 4, 6)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_stacks_equal_one_matrix_at_a_time_bit_for_bit(rng, shape, dtype):
    a = random_matrix(rng, shape, dtype)
    u, s, vh = shiftop.svd(a, full_matrices=False)
    assert u.shape == (*shape[:-1], min(shape[-2:]))
    assert vh.shape == (*shape[:2], min(shape[-2:]), shape[-1])
    check_svd(a, u, s, vh, tolerance(shape, dtype))
    for index in np.ndindex(*shape[:2]):
        u1, s1, vh1 = shiftop.svd(a[index], full_matrices=False, threads=1)
        assert np.array_equal(s1, s[index])
        assert np.array_equal(u1, u[index]) and np.array_equal(vh1, vh[index])


def test_results_do_not_depend_on_the_thread_count(rng):
    stack = random_matrix(rng, (7, 12, 10), np.float64)
    one = shiftop.svd(stack, full_matrices=False, threads=1)
    two = shiftop.svd(stack, full_matrices=False, threads=2)
    big = random_matrix(rng, (70, 66), np.complex128)  # one matrix: threads over pivot pairs
    for first, second in (
            (one, two), (shiftop.svd(big, full_matrices=False, threads=1),
                           shiftop.svd(big, full_matrices=False, threads=2))):
        for x, y in zip(first, second):
            assert np.array_equal(x, y)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_layouts_are_read_in_place_or_copied_and_give_the_same_svd(rng, dtype):
    base = random_matrix(rng, (3, 14, 22), dtype)
    views = {
        "C": base,
        "Fortran": np.asfortranarray(base),
        "transposed": base.swapaxes(1, 2),
        "strided": base[:, ::2, ::3],
        "negative": base[::-1, ::-1, :],
        "negative columns": base[:, :, ::-1],
        "broadcast": np.broadcast_to(base[0], (2, 14, 22)),
    }
    for name, a in views.items():
        u, s, vh = shiftop.svd(a, full_matrices=False)
        check_svd(np.array(a), u, s, vh, tolerance(a.shape, dtype))
        same_layout = shiftop.svd(np.ascontiguousarray(a), full_matrices=False)
        if name in ("C", "strided", "negative", "negative columns", "broadcast"):
            for x, y in zip((u, s, vh), same_layout):  # copied to C order: the same computation
                assert np.array_equal(x, y), name
    in_place = svd_module._in_place
    assert in_place(base, column_major_only=False)  # A^T, no copy (m != n)
    assert not in_place(base, column_major_only=True)  # the HSVD needs A itself
    assert in_place(base.swapaxes(1, 2), column_major_only=True)
    assert not in_place(base[:, ::2, ::3], column_major_only=False)
    assert not in_place(base[::-1], column_major_only=False)  # negative batch stride
    assert not in_place(np.broadcast_to(base[0], (2, 14, 22)), column_major_only=False)
    assert in_place(base[:, :, ::-1][:, :, ::-1], column_major_only=False)


def test_input_is_not_modified(rng):
    a = random_matrix(rng, (2, 9, 5), np.complex128)
    kept = a.copy()
    shiftop.svd(a)
    shiftop.svd(a.swapaxes(1, 2))
    assert np.array_equal(a, kept)


def test_dtype_rules_follow_numpy():
    ints = np.arange(12).reshape(4, 3) ** 2
    u, s, vh = shiftop.svd(ints, full_matrices=False)
    assert u.dtype == s.dtype == vh.dtype == np.float64
    check_svd(ints, u, s, vh, tolerance(ints.shape, np.float64))
    assert shiftop.svd([[3.0, 0.0], [0.0, -4.0]], compute_uv=False).tolist() == [4.0, 3.0]
    assert shiftop.svd(np.eye(3, dtype=bool), compute_uv=False).dtype == np.float64
    big_endian = np.arange(6.0).reshape(3, 2).astype(">f8")
    assert np.allclose(shiftop.svd(big_endian, compute_uv=False),
                       np.linalg.svd(big_endian, compute_uv=False), rtol=1e-14)
    with pytest.raises(TypeError, match="float16.*cast it first"):
        shiftop.svd(np.eye(2, dtype=np.float16))
    with pytest.raises(TypeError, match="longdouble|float128|cast it first"):
        shiftop.svd(np.eye(2, dtype=np.longdouble))
    with pytest.raises(TypeError, match="real or complex numeric"):
        shiftop.svd(np.array([["a", "b"]]))


def graded_matrix(rng, m, n):
    """B D: B Gaussian (well conditioned), D = diag(10^0 .. 10^-12) shuffled: kappa ~ 1e12,
    every singular value determined to high relative accuracy by the entries (Demmel-Veselic)."""
    d = np.logspace(0, -12, n)
    rng.shuffle(d)
    return rng.standard_normal((m, n)) * d


def accurate_singular_values(a):
    """LAPACK dgejsv (Drmac-Veselic; m >= n), the accuracy anchor: against mpmath at 50 digits
    it was within 4e-15 relative on every value of such matrices. Its values are scaled by
    work[0] / work[1] (1 unless they would overflow)."""
    sva, _, _, work, _, info = lapack.dgejsv(a)
    assert info == 0
    return sva * (work[0] / work[1])


def test_graded_matrices_keep_high_relative_accuracy_where_gesdd_does_not(rng):
    worst_jacobi = worst_numpy = 0.0
    for m, n in ((9, 7), (12, 12), (16, 11)):
        for _ in range(3):
            a = graded_matrix(rng, m, n)
            reference = accurate_singular_values(a)
            numpy = np.linalg.svd(a, compute_uv=False)
            worst_numpy = max(worst_numpy, float(np.max(np.abs(numpy - reference) / reference)))
            for layout in (a, np.asfortranarray(a)):  # C order: the core sees a^T, row-graded
                jacobi = shiftop.svd(layout, compute_uv=False)
                worst_jacobi = max(worst_jacobi,
                                   float(np.max(np.abs(jacobi - reference) / reference)))
    # Measured against dgejsv: Jacobi at most 1.4e-15 (6.5 eps; 1.1e-15 against mpmath at 50
    # digits), numpy's gesdd 5.0e-7: it keeps an absolute error of about eps * sigma_max. Before
    # the core sorted rows ahead of its pivoted QR, a square C-order matrix (seen as a^T, graded
    # by rows) measured 1.5e-4.
    assert worst_jacobi <= 60 * eps(np.float64)
    assert worst_numpy >= 1e-9
    assert worst_numpy >= 1e5 * worst_jacobi


# --- the hyperbolic SVD -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("m, n, n_plus", [(6, 4, 2), (9, 9, 4), (12, 7, 0), (12, 7, 7), (1, 1, 1),
                                          (8, 5, 3)])
def test_hyperbolic_svd_gives_the_eigenvalues_of_g_j_gh(rng, dtype, m, n, n_plus):
    g = random_matrix(rng, (m, n), dtype)
    j = np.diag(np.r_[np.ones(n_plus), -np.ones(n - n_plus)])
    u, s, v = shiftop.svd(g, full_matrices=False, hyperbolic=n_plus)
    assert u.shape == (m, n) and s.shape == (n,) and v.shape == (n, n)
    assert u.dtype == v.dtype == dtype
    # Measured over these cases: every error below at most 2.6e-15 (relative as written).
    bound = 1e-14
    scale = np.abs(g).max()
    assert np.abs(u * s @ np.linalg.inv(v) - g).max() <= bound * scale
    assert np.abs(v.conj().T @ j @ v - j).max() <= bound * np.abs(v).max() ** 2
    assert unitarity(u) <= bound
    # The parts of J each descending, J's partition kept: eigenvalues s^2 * J_ii (and m - n zeros).
    assert np.all(np.diff(s[:n_plus]) <= 0) and np.all(np.diff(s[n_plus:]) <= 0)
    expected = np.sort(np.r_[s**2 * np.diag(j), np.zeros(m - n)])
    eigenvalues = np.linalg.eigvalsh(g @ j @ g.conj().T)
    assert np.abs(expected - eigenvalues).max() <= bound * np.abs(eigenvalues).max()
    if n_plus == n:  # J = I: the ordinary SVD
        assert np.allclose(s, shiftop.svd(g, compute_uv=False), rtol=1e-13, atol=0)


def test_hyperbolic_svd_of_c_order_stacks_copies_to_column_major(rng):
    g = random_matrix(rng, (2, 7, 5), np.float64)
    u, s, v = shiftop.svd(g, full_matrices=False, hyperbolic=3)
    for b in range(2):
        u1, s1, v1 = shiftop.svd(np.asfortranarray(g[b]), full_matrices=False, hyperbolic=3)
        assert np.array_equal(s[b], s1) and np.array_equal(v[b], v1)
    s_only = shiftop.svd(g, hyperbolic=3, compute_uv=False)
    assert np.array_equal(s_only, s)


# --- statistics, empty stacks, bad input --------------------------------------------------------

def test_full_output_reports_sweeps_rotations_and_rank(rng):
    a = random_matrix(rng, (2, 3, 8, 6), np.float64)
    a[1, 2] = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 6))  # rank 2
    u, s, vh, info = shiftop.svd(a, full_matrices=False, full_output=True)
    assert set(info) == {"sweeps", "rotations", "proper_rotations", "converged", "rank"}
    assert all(value.shape == (2, 3) for value in info.values())
    assert info["converged"].dtype == bool and info["converged"].all()
    assert np.all(info["sweeps"] >= 1)
    assert np.all(info["rotations"] >= info["proper_rotations"])
    assert np.all(info["rank"] == 6)  # by default only exact zeros of R are dropped
    *_, cut = shiftop.svd(a, full_matrices=False, rank_tolerance=np.sqrt(6) * eps(np.float64),
                          full_output=True)
    assert cut["rank"][1, 2] == 2  # dgejsv's JOBA = 'A' cut: the rank-2 matrix found
    assert np.all(np.delete(cut["rank"].ravel(), 5) == 6)
    s_only, info_s = shiftop.svd(a, compute_uv=False, full_output=True)
    assert np.array_equal(s_only, s)
    assert np.array_equal(info_s["sweeps"], info["sweeps"])


def test_empty_stacks_give_empty_results():
    u, s, vh = shiftop.svd(np.zeros((0, 3, 5)), full_matrices=False)
    assert u.shape == (0, 3, 3) and s.shape == (0, 3) and vh.shape == (0, 3, 5)
    u, s, v, info = shiftop.svd(np.zeros((2, 0, 5, 3), np.complex64), full_matrices=False,
                                hyperbolic=1, full_output=True)
    assert u.shape == (2, 0, 5, 3) and v.shape == (2, 0, 3, 3) and s.dtype == np.float32
    assert info["rank"].shape == (2, 0)


# --- numpy.linalg.svd's conventions (numpy's own suite: test_numpy_scipy_svd_suites.py) -------

def test_the_result_and_the_signature_are_numpys(rng):
    a = random_matrix(rng, (5, 3), np.float64)
    result, reference = shiftop.svd(a), np.linalg.svd(a)
    assert type(result) is type(reference)  # numpy's SVDResult (a named tuple in numpy 1.x)
    assert result._fields == ("U", "S", "Vh")
    assert result.U.shape == (5, 5) and result.S.shape == (3,) and result.Vh.shape == (3, 3)
    thin = shiftop.svd(a, False)  # numpy's second argument: full_matrices
    assert thin.U.shape == (5, 3) and thin.Vh.shape == (3, 3)
    assert np.array_equal(shiftop.svd(a, False, False), thin.S)  # the third: compute_uv
    assert np.array_equal(shiftop.svd(a, full_matrices=True, compute_uv=False), thin.S)
    # hermitian=True is numpy's hint; shiftop computes the SVD of a itself either way.
    h = a.T @ a
    for x, y in zip(shiftop.svd(h, hermitian=True), shiftop.svd(h)):
        assert np.array_equal(x, y)
    u, s, vh = shiftop.svd(a[:3], False, True, True)  # not Hermitian: still a's SVD
    check_svd(a[:3], u, s, vh, tolerance((3, 3), np.float64))


def completion_tolerance(shape, dtype):
    """The bound of the full factors' unitarity and reconstruction errors: tolerance()'s, the
    thin factors' (whose error the completion keeps); the completion's own, LAPACK's Householder
    QR (numpy's, the same in either build of shiftop), stays within it: the full factors measured
    at most 1.2 max(m, n) eps (5 random matrices per shape and dtype of
    test_full_matrices_complete_the_thin_factors_to_unitary_ones, native build), 5x below."""
    return tolerance(shape, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 4), (4, 1), (5, 3), (3, 5), (40, 9), (9, 40), (100, 3),
                                   (2, 3, 7, 4), (2, 4, 7)])
def test_full_matrices_complete_the_thin_factors_to_unitary_ones(rng, dtype, shape):
    a = random_matrix(rng, shape, dtype)
    u, s, vh = shiftop.svd(a)
    thin = shiftop.svd(a, full_matrices=False)
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape == (*shape[:-2], m, m) and vh.shape == (*shape[:-2], n, n)
    assert u.dtype == dtype and vh.dtype == dtype and np.array_equal(s, thin.S)
    # The thin factors lead, exactly; the completion is orthogonal to them.
    assert np.array_equal(u[..., :k], thin.U) and np.array_equal(vh[..., :k, :], thin.Vh)
    bound = completion_tolerance(shape, dtype)
    assert unitarity(u) <= bound
    assert unitarity(vh.conj().swapaxes(-1, -2)) <= bound
    sigma = np.zeros((*shape[:-2], m, n), s.dtype)
    sigma[..., range(k), range(k)] = s
    assert np.abs(u @ sigma @ vh - a).max() <= bound * np.abs(a).max()


def test_full_matrices_of_rank_deficient_and_hyperbolic_svds(rng):
    zero = shiftop.svd(np.zeros((6, 2)))  # the thin U of zero singular values is orthonormal
    assert unitarity(zero.U) <= completion_tolerance((6, 2), np.float64)
    g = random_matrix(rng, (7, 4), np.float64)
    u, s, v = shiftop.svd(g, hyperbolic=2)  # u completed to 7 x 7, v square already
    thin_u, thin_s, thin_v = shiftop.svd(g, full_matrices=False, hyperbolic=2)
    assert u.shape == (7, 7) and v.shape == (4, 4)
    assert np.array_equal(u[:, :4], thin_u) and np.array_equal(v, thin_v)
    assert unitarity(u) <= completion_tolerance((7, 4), np.float64)


@pytest.mark.parametrize("shape", [(0, 0), (0, 4), (4, 0), (2, 0, 3), (2, 3, 0), (0, 3, 2),
                                   (3, 0, 0)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32])
def test_empty_matrices_give_numpys_results(shape, dtype):
    a = np.zeros(shape, dtype)
    for full_matrices in (True, False):
        ours = shiftop.svd(a, full_matrices)
        theirs = np.linalg.svd(a, full_matrices)
        for x, y in zip(ours, theirs):  # the identity as U or Vh of full matrices
            assert x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y)
    s = shiftop.svd(a, compute_uv=False)
    reference = np.linalg.svd(a, compute_uv=False)
    assert s.shape == reference.shape and s.dtype == reference.dtype


def test_empty_matrices_of_the_hyperbolic_svd_and_their_statistics():
    u, s, v, info = shiftop.svd(np.zeros((2, 4, 0)), hyperbolic=0, full_output=True)
    assert np.array_equal(u, np.broadcast_to(np.eye(4), (2, 4, 4)))
    assert s.shape == (2, 0) and v.shape == (2, 0, 0)
    assert info["converged"].tolist() == [True, True] and info["sweeps"].tolist() == [0, 0]
    assert shiftop.svd(np.zeros((4, 0)), full_matrices=False, hyperbolic=0)[0].shape == (4, 0)


@pytest.mark.parametrize("call, error, message", [
    # numpy raises LinAlgError (a ValueError) for these: so does shiftop.svd.
    (lambda: shiftop.svd(np.ones(4)), np.linalg.LinAlgError, r"at least 2 dimensions.*\(4,\)"),
    (lambda: shiftop.svd(3.0), np.linalg.LinAlgError, "at least 2 dimensions"),
    (lambda: shiftop.svd(np.array([[1.0, 2.0], [np.nan, 1.0]])), np.linalg.LinAlgError,
     r"a\[1, 0\] is nan"),
    (lambda: shiftop.svd(np.array([[[1.0, np.inf]]])), np.linalg.LinAlgError,
     r"a\[0, 0, 1\] is inf"),
    (lambda: shiftop.svd(np.ones((4, 3)), hyperbolic=4), ValueError, r"in 0\.\.3.*got 4"),
    (lambda: shiftop.svd(np.ones((4, 3)), hyperbolic=-1), ValueError, r"in 0\.\.3.*got -1"),
    (lambda: shiftop.svd(np.ones((3, 4)), hyperbolic=1), ValueError, "needs m >= n"),
    (lambda: shiftop.svd(np.ones((4, 3)), hyperbolic=True), TypeError, "bool"),
    (lambda: shiftop.svd(np.ones((4, 3)), hyperbolic=1.5), TypeError, "as an integer"),
    (lambda: shiftop.svd(np.ones((4, 3)), variant="blocked"), ValueError,
     "variant 'blocked'.*full-block"),
    (lambda: shiftop.svd(np.ones((4, 3)), strategy="cyclic"), ValueError,
     "strategy 'cyclic'.*modmod"),
    (lambda: shiftop.svd(np.ones((4, 3)), threads=0), ValueError, "threads"),
    # numpy's options come first, shiftop's are keyword-only.
    (lambda: shiftop.svd(np.ones((4, 3)), True, True, False, 2), TypeError, "positional"),
])
def test_bad_input_is_refused_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_core_refuses_layouts_it_cannot_read():
    with pytest.raises(shiftop.Error, match="unit stride"):
        shiftop._core.jacobi_batched(np.ones((2, 6, 6))[:, ::2, ::2])
    with pytest.raises(shiftop.Error, match="columns \\(Fortran order\\)"):
        shiftop._core.jacobi_batched(np.ones((1, 4, 3)), n_plus=1)
    with pytest.raises(shiftop.Error, match="overlap"):
        shiftop._core.jacobi_batched(np.broadcast_to(np.ones((4, 3)), (2, 4, 3)))


@pytest.mark.parametrize("variant", ["pointwise", "block-oriented", "full-block"])
@pytest.mark.parametrize("strategy", ["rc-closest", "modmod"])
def test_variants_and_strategies_agree(rng, variant, strategy):
    a = random_matrix(rng, (2, 37, 35), np.float64)
    u, s, vh = shiftop.svd(a, full_matrices=False, variant=variant, strategy=strategy)
    check_svd(a, u, s, vh, tolerance(a.shape, np.float64))


# --- the spectrum -------------------------------------------------------------------------------

def stacked_fhat(K, first_row=None):
    """F^[w] for w = 0..Nt: rfft along time of the kernels zero-padded to 2 Nt, the first row's
    lags -1..-(Nt-1) wrapped to the end of the period."""
    nd, nm, nt = K.shape
    series = np.zeros((nd, nm, 2 * nt))
    series[:, :, :nt] = K
    if first_row is not None:
        series[:, :, nt + 1:] = first_row[:, :, :0:-1]
    return np.fft.rfft(series, axis=2).transpose(2, 0, 1)


@pytest.mark.parametrize("shape", [(3, 5, 7), (5, 3, 4), (4, 4, 1), (1, 1, 6), (2, 9, 12)])
@pytest.mark.parametrize("general", [False, True])
def test_operator_spectrum_equals_the_svd_of_the_stacked_fhat(rng, shape, general):
    K = rng.standard_normal(shape)
    R = None
    if general:
        R = rng.standard_normal(shape)
        R[:, :, 0] = K[:, :, 0]
    op = shiftop.Operator.from_kernels(K, R, precision="DSSDD")  # recovery runs in FP64
    spectrum = op.spectrum()
    reference = np.linalg.svd(stacked_fhat(K, R), compute_uv=False)
    nt = shape[2]
    assert spectrum.sigma.shape == (nt + 1, min(shape[:2]))
    # Measured: at most 4.9e-16 relative to sigma_max, from the kernels or recovered from the
    # plan by impulse applies (whose FFT rounding is below the SVDs').
    assert np.abs(spectrum.sigma - reference).max() <= 1e-14 * reference.max()
    assert spectrum.sigma_max == spectrum.sigma.max() and spectrum.sigma_min == spectrum.sigma.min()
    assert spectrum.kappa == pytest.approx(spectrum.sigma_max / spectrum.sigma_min, rel=1e-15)
    assert spectrum.tolerance == pytest.approx(max(shape[:2]) * eps(np.float64))
    threshold = spectrum.tolerance * spectrum.sigma_max
    assert spectrum.rank == np.count_nonzero(spectrum.sigma > threshold)
    assert spectrum.converged and spectrum.max_sweeps >= 1
    assert op.precision == "DSSDD"
    exact = shiftop.spectrum(K, R)
    assert np.abs(exact.sigma - spectrum.sigma).max() <= 1e-14 * reference.max()
    assert np.abs(exact.sigma - reference).max() <= 1e-14 * reference.max()


def test_spectrum_rank_counts_values_above_the_tolerance(rng):
    K = np.zeros((3, 4, 5))
    K[:, :2, :] = rng.standard_normal((3, 2, 5))  # two zero parameter blocks: rank <= 2 per w
    spectrum = shiftop.spectrum(K, threads=1)
    assert spectrum.rank == 2 * 6
    assert spectrum.sigma_min < 1e-14 * spectrum.sigma_max
    loose = shiftop.spectrum(K, rank_tolerance=0.5)
    assert loose.tolerance == 0.5
    assert loose.rank == np.count_nonzero(loose.sigma > 0.5 * loose.sigma_max)
    assert "rank" in repr(loose) and "kappa" in repr(loose)
    with pytest.raises(ValueError, match="read-only"):  # sigma_max and rank are derived from it
        loose.sigma[0, 0] = 1.0


def test_spectrum_refuses_bad_input(rng):
    K = rng.standard_normal((2, 3, 4))
    op = shiftop.Operator.from_kernels(K)
    with pytest.raises(ValueError, match="rank_tolerance"):
        op.spectrum(rank_tolerance=-1.0)
    with pytest.raises(ValueError, match="threads"):
        op.spectrum(threads=0)
    bad = K.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match=r"K\[1, 2, 3\] is nan"):
        shiftop.spectrum(bad)
    with pytest.raises(ValueError, match="shape \\(Nd, Nm, Nt\\)"):
        shiftop.spectrum(K[0])
    with pytest.raises(ValueError, match="first_row must have the shape"):
        shiftop.spectrum(K, K[:, :, :2])
    with pytest.raises(TypeError, match="real kernels"):
        shiftop.spectrum(K.astype(complex))


# --- the plot -----------------------------------------------------------------------------------

def test_spectrum_plot_draws_every_rank_position_and_kappa(rng, tmp_path):
    spectrum = shiftop.spectrum(rng.standard_normal((3, 4, 9)))
    figure = plot.spectrum(spectrum, tmp_path / "s.png", tolerance=1e-3)
    assert (tmp_path / "s.png").read_bytes().startswith(PNG)
    ax = figure.axes[0]
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 10]
    assert len(lines) == 3  # min(Nd, Nm) rank positions over w = 0..9
    assert np.array_equal(lines[0].get_ydata(), spectrum.sigma[:, 0])
    assert ax.get_yscale() == "log"
    assert f"kappa = {spectrum.kappa:.4g}" in figure._suptitle.get_text()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"sigma_max = {spectrum.sigma_max:.4g}" in t for t in legend)
    assert any("rank tolerance" in t for t in legend)


def test_spectrum_plot_draws_zeros_at_a_floor_and_refuses_bad_input(tmp_path):
    sigma = np.array([[2.0, 1.0], [1.5, 0.0]])
    figure = plot.spectrum(sigma, tmp_path / "z.svg")
    assert "kappa = inf" in figure._suptitle.get_text()
    assert "exact (0)" in [t.get_text() for t in figure.axes[0].get_yticklabels()]
    for bad, message in ((np.ones(3), "shape"), (np.zeros((2, 2)), "every singular value is 0"),
                         ([[1.0, np.nan]], "NaN"), ([[1.0, -1.0]], "negative")):
        with pytest.raises(ValueError, match=message):
            plot.spectrum(bad, tmp_path / "b.png")
    with pytest.raises(ValueError, match="tolerance"):
        plot.spectrum(sigma, tmp_path / "b.png", tolerance=0)
    with pytest.raises(ValueError, match=".png, .svg or .pdf"):
        plot.spectrum(sigma, tmp_path / "b.txt")


def test_spectrum_plot_command_line(rng, tmp_path):
    sigma = shiftop.spectrum(rng.standard_normal((2, 2, 5))).sigma
    source = tmp_path / "sigma-temporary"  # the tool may pass a name without .npy
    with open(source, "wb") as file:
        np.save(file, sigma)
    out = tmp_path / "plot-out"
    run = subprocess.run([sys.executable, "-m", "shiftop.plot", "spectrum", str(source), "-o",
                          str(out), "--format", "png", "--title", "F of test", "--tolerance",
                          "1e-6"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes().startswith(PNG)
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    run = subprocess.run([sys.executable, "-m", "shiftop.plot", "spectrum",
                          str(tmp_path / "bad.npy"), "-o", str(tmp_path / "b.png")],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("shiftop.plot: error: ")


def test_a_hyperbolic_svd_that_does_not_exist_raises_or_reports():
    # ones((8, 8)) with J = diag(I4, -I4): a J a^T = 0 has rank 0 < rank(a) = 1, so there is no
    # HSVD; the rotations overflow. numpy's convention: LinAlgError, not infinities in v.
    a = np.ones((8, 8))
    for dtype in (np.float64, np.float32):
        with pytest.raises(np.linalg.LinAlgError, match="exists only when rank"):
            shiftop.svd(a.astype(dtype), hyperbolic=4)
        *_, info = shiftop.svd(a.astype(dtype), full_matrices=False, hyperbolic=4, full_output=True)
        assert not info["converged"]


def test_tiny_singular_values_keep_their_relative_accuracy():
    # The default keeps every nonzero R_kk of the pivoted QR (an earlier default cut at
    # sqrt(n) eps and returned 0 here); numpy's gesdd agrees on a diagonal matrix.
    for dtype, values in ((np.float64, [1.0, 1e-17, 1e-20]), (np.float32, [1.0, 1e-7, 1e-8])):
        s = shiftop.svd(np.diag(np.array(values, dtype=dtype)), compute_uv=False)
        assert np.allclose(s, values, rtol=4 * eps(dtype), atol=0)
    with pytest.raises(ValueError, match="rank_tolerance"):
        shiftop.svd(np.eye(2), rank_tolerance=-1.0)


# --- backend and device ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda: shiftop.svd(np.ones((3, 3)), backend="gpu"), ValueError,
     "backend 'gpu': expected None, 'cpu' or 'cuda'"),
    (lambda: shiftop.svd(np.ones((3, 3)), device=0), ValueError, "device=0 needs backend='cuda'"),
    (lambda: shiftop.svd(np.ones((3, 3)), backend="cuda", device=-1), ValueError,
     "device must be None or a CUDA device index >= 0, got -1"),
    (lambda: shiftop.svd(np.ones((3, 3)), backend="cuda", device=True), ValueError, "device"),
    (lambda: shiftop.spectrum(np.ones((2, 2, 3)), backend="GPU"), ValueError, "backend 'GPU'"),
    (lambda: shiftop.Operator.from_kernels(np.ones((2, 2, 3))).spectrum(backend="x"),
     ValueError, "backend 'x'"),
])
def test_bad_backends_and_devices_are_refused_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_numpy_with_backend_cuda_runs_on_gpu_0_or_says_why_not(rng):
    """Without a GPU (CI, a build without CUDA) the core's one-line reason; with one (the device
    machine's full run), the CPU's values."""
    a = random_matrix(rng, (6, 4), np.float64)
    try:
        s = shiftop.svd(a, compute_uv=False, backend="cuda")
    except shiftop.Error as error:
        assert ("built without CUDA" in str(error)
                or "CUDA device 0 is not available (0 visible)" in str(error)), str(error)
    else:
        assert np.abs(s - shiftop.svd(a, compute_uv=False)).max() <= tolerance(a.shape,
                                                                              a.dtype) * s[0]


# --- on the GPU (marked gpu) ----------------------------------------------------------------------

GPU_SHAPES = [(3, 40, 25), (17, 33)]  # a stack of tall matrices, a wide one


def require_torch_gpu():
    import torch  # an ImportError fails the device run

    assert torch.cuda.is_available(), "the gpu tests need a CUDA device"
    return torch


def require_cupy_gpu():
    import cupy  # an ImportError fails the device run

    assert cupy.cuda.runtime.getDeviceCount() > 0, "the gpu tests need a CUDA device"
    return cupy


def check_against_cpu(a, u, s, vh):
    """The GPU's u, s, vh (NumPy) against a and the CPU's singular values, within the bound that
    the CPU's own results meet against LAPACK (each side about 1.2 max(m, n) eps from the exact
    values): values relative to the largest, a - u diag(s) vh relative to max |a|, and the
    orthonormality of u and vh^H."""
    tol = tolerance(a.shape, a.dtype)
    cpu = shiftop.svd(a, compute_uv=False)
    assert s.shape == cpu.shape and s.dtype == cpu.dtype
    assert np.abs(s - cpu).max() <= tol * cpu.max()
    check_svd(a, u, s, vh, tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", GPU_SHAPES)
def test_numpy_on_backend_cuda_equals_the_cpu(rng, dtype, shape):
    a = random_matrix(rng, shape, dtype)
    u, s, vh = shiftop.svd(a, full_matrices=False, backend="cuda", device=0)
    assert all(isinstance(x, np.ndarray) for x in (u, s, vh))
    assert u.dtype == dtype and vh.dtype == dtype
    check_against_cpu(a, u, s, vh)
    # Fortran-order matrices are given to the core as they are (not transposed): same values.
    s_f = shiftop.svd(np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2),
                      compute_uv=False, backend="cuda")
    assert np.abs(s_f - s).max() <= tolerance(shape, dtype) * s.max()


@pytest.mark.gpu
def test_full_and_empty_matrices_of_device_arrays_are_numpys_on_their_gpu(rng):
    """The completion (and the identities of empty matrices) run on the host and come back to the
    array's GPU, as its library's arrays."""
    torch, cupy = require_torch_gpu(), require_cupy_gpu()
    a = random_matrix(rng, (2, 6, 3), np.complex128)
    for x, host in ((torch.from_numpy(a).cuda(), lambda t: t.cpu().numpy()),
                    (cupy.asarray(a), cupy.asnumpy)):
        u, s, vh = shiftop.svd(x)
        assert type(u) is type(x) and u.device == x.device and u.shape == (2, 6, 6)
        u, s, vh = host(u), host(s), host(vh)
        assert vh.shape == (2, 3, 3) and unitarity(u) <= completion_tolerance(a.shape, a.dtype)
        sigma = np.zeros(a.shape, s.dtype)
        sigma[..., range(3), range(3)] = s
        assert np.abs(u @ sigma @ vh - a).max() <= completion_tolerance(a.shape, a.dtype) * \
            np.abs(a).max()
    empty = shiftop.svd(torch.zeros((3, 0), device="cuda"))
    assert empty.U.is_cuda and torch.equal(empty.U.cpu(), torch.eye(3))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", GPU_SHAPES)
def test_torch_cuda_tensors_give_tensors_on_their_gpu(rng, dtype, shape):
    torch = require_torch_gpu()
    a = random_matrix(rng, shape, dtype)
    x = torch.from_numpy(a).cuda()
    u, s, vh = shiftop.svd(x, full_matrices=False)  # backend None: 'cuda' for a CUDA tensor
    for t, want in ((u, x.dtype), (vh, x.dtype), (s, torch.from_numpy(a.real).dtype)):
        assert isinstance(t, torch.Tensor) and t.device == x.device and t.dtype == want
    check_against_cpu(a, u.cpu().numpy(), s.cpu().numpy(), vh.cpu().numpy())
    s_only, info = shiftop.svd(x.mT.contiguous().mT, compute_uv=False, full_output=True)
    assert isinstance(s_only, torch.Tensor) and info["converged"].all()
    assert info["converged"].shape == shape[:-2]
    assert np.abs(s_only.cpu().numpy() - s.cpu().numpy()).max() <= tolerance(shape, dtype) * \
        float(s.max())


@pytest.mark.gpu
def test_torch_conjugate_and_negative_views_give_the_svd_of_their_values(rng):
    """x.conj() of a complex tensor and z.conj().imag are lazy views (PyTorch's conj and neg bits)
    over memory that holds the unconjugated values; the SVD must be that of the values they show."""
    torch = require_torch_gpu()
    a = random_matrix(rng, (2, 12, 7), np.complex128)
    views = (torch.from_numpy(a).cuda().conj(), torch.from_numpy(a).cuda().conj().imag)
    assert views[0].is_conj() and views[1].is_neg()
    for x, shown in zip(views, (np.conj(a), -a.imag)):
        u, s, vh = shiftop.svd(x, full_matrices=False)
        check_svd(shown, u.cpu().numpy(), s.cpu().numpy(), vh.cpu().numpy(),
                  tolerance(shown.shape, shown.dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", GPU_SHAPES)
def test_cupy_arrays_give_cupy_arrays_on_their_gpu(rng, dtype, shape):
    cupy = require_cupy_gpu()
    a = random_matrix(rng, shape, dtype)
    x = cupy.asarray(a)
    u, s, vh = shiftop.svd(x, full_matrices=False)
    for c, want in ((u, a.dtype), (vh, a.dtype), (s, np.finfo(dtype).dtype)):
        assert isinstance(c, cupy.ndarray) and c.device.id == x.device.id and c.dtype == want
    check_against_cpu(a, cupy.asnumpy(u), cupy.asnumpy(s), cupy.asnumpy(vh))


@pytest.mark.gpu
def test_device_arrays_reuse_their_shapes_plans(rng):
    """Device arrays run on a plan kept per shape (python/src/gpu_plan_cache.hpp, 4 kept): six
    shapes and option sets cycled twice (so plans are evicted and made again), and a kept plan on
    new data, each give exactly the first call's results on the same matrix (the same kernels on
    the same data), and every result is the CPU's within the tolerance."""
    cupy = require_cupy_gpu()
    cases = [((3, 20, 12), True), ((3, 20, 12), False), ((1, 40, 40), True), ((2, 12, 20), True),
             ((5, 8, 8), False), ((1, 300, 200), True)]  # the last on the blocked method
    matrices = [random_matrix(rng, shape, np.float64) for shape, _ in cases]
    first = []
    for _ in range(2):
        for (shape, vectors), a in zip(cases, matrices):
            got = shiftop.svd(cupy.asarray(a), full_matrices=False, compute_uv=vectors)
            got = [cupy.asnumpy(g) for g in (got if vectors else [got])]
            if len(first) < len(cases):
                first.append(got)
                if vectors:
                    check_against_cpu(a, *got)
            else:
                want = first[cases.index((shape, vectors))]
                assert all(np.array_equal(g, w) for g, w in zip(got, want)), (shape, vectors)
    fresh = random_matrix(rng, cases[0][0], np.float64)  # the most recent plan, new data
    u, s, vh = (cupy.asnumpy(g) for g in shiftop.svd(cupy.asarray(fresh), full_matrices=False))
    check_against_cpu(fresh, u, s, vh)


@pytest.mark.gpu
def test_torch_svd_is_ordered_on_the_current_stream_and_casts_integers(rng):
    torch = require_torch_gpu()
    a = random_matrix(rng, (5, 30, 20), np.float64)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.from_numpy(a).cuda(non_blocking=True) * 3.0  # queued on `stream`
        u, s, vh = shiftop.svd(x, full_matrices=False)  # must wait for it
        y = (u * s[..., None, :]) @ vh  # and be done before this, on `stream` again
    stream.synchronize()
    assert np.abs(y.cpu().numpy() - 3.0 * a).max() <= tolerance(a.shape, a.dtype) * 3.0 * \
        np.abs(a).max()
    ints = torch.arange(12, device="cuda").reshape(4, 3) ** 2
    s_int = shiftop.svd(ints, compute_uv=False)
    assert s_int.dtype == torch.float64
    want = np.linalg.svd(ints.cpu().numpy().astype(np.float64), compute_uv=False)
    assert np.abs(s_int.cpu().numpy() - want).max() <= 1e-13 * want.max()


@pytest.mark.gpu
def test_threads_sharing_a_gpu_get_their_own_results(rng):
    """The calls on one GPU share its context, one thread at a time: from 4 threads, each call's
    values equal the same call made alone, bit for bit (NumPy arrays, and CUDA tensors queued on
    each thread's own stream)."""
    torch = require_torch_gpu()
    matrices = [random_matrix(rng, (3, 40, 24), np.float64) for _ in range(8)]

    def run(k):
        if k % 2 == 0:
            return shiftop.svd(matrices[k], compute_uv=False, backend="cuda")
        with torch.cuda.stream(torch.cuda.Stream()):
            return shiftop.svd(torch.from_numpy(matrices[k]).cuda(), compute_uv=False).cpu().numpy()

    alone = [run(k) for k in range(len(matrices))]
    calls = list(range(len(matrices))) * 3
    with ThreadPoolExecutor(4) as pool:
        for k, got in zip(calls, pool.map(run, calls)):
            np.testing.assert_array_equal(got, alone[k])


@pytest.mark.gpu
@pytest.mark.parametrize("n_plus", [0, 3, 5])
def test_hyperbolic_svd_of_a_cuda_tensor_equals_the_cpu(rng, n_plus):
    torch = require_torch_gpu()
    a = random_matrix(rng, (2, 9, 5), np.float64)
    u, s, v = shiftop.svd(torch.from_numpy(a).cuda(), full_matrices=False, hyperbolic=n_plus)
    cu, cs, cv = shiftop.svd(a, full_matrices=False, hyperbolic=n_plus)
    assert tuple(u.shape) == cu.shape and tuple(v.shape) == cv.shape
    tol = 1e-13
    assert np.abs(s.cpu().numpy() - cs).max() <= tol * cs.max()
    a_v = a @ v.cpu().numpy()
    assert np.abs(a_v - u.cpu().numpy() * s.cpu().numpy()[..., None, :]).max() <= \
        tol * np.abs(a_v).max()


@pytest.mark.gpu
def test_device_arrays_refusals():
    torch = require_torch_gpu()
    x = torch.ones((4, 3), dtype=torch.float64, device="cuda")
    with pytest.raises(TypeError, match="a is a CUDA tensor on GPU 0: backend='cpu' computes on "
                                        "NumPy arrays"):
        shiftop.svd(x, backend="cpu")
    with pytest.raises(TypeError, match="a is a CPU tensor: backend='cuda' takes CUDA tensors"):
        shiftop.svd(x.cpu(), backend="cuda")
    with pytest.raises(ValueError, match="a is on GPU 0 but device=1"):
        shiftop.svd(x, device=1)
    with pytest.raises(ValueError, match="requires grad"):
        shiftop.svd(x.clone().requires_grad_())
    with pytest.raises(TypeError, match="dtype float16"):
        shiftop.svd(x.half())
    bad = x.clone()
    bad[2, 1] = float("nan")
    with pytest.raises(ValueError, match=r"a\[2, 1\] is nan"):
        shiftop.svd(bad)
    # the blocked variants run on the GPU's blocked method (issue 30), not refused
    s = shiftop.svd(x + torch.eye(4, 3, dtype=torch.float64, device="cuda"), compute_uv=False,
                    variant="full-block")
    want = np.linalg.svd(np.ones((4, 3)) + np.eye(4, 3), compute_uv=False)
    assert np.abs(s.cpu().numpy() - want).max() <= 8 * 4 * np.finfo(np.float64).eps * want[0]
    with pytest.raises(ValueError, match="rank_tolerance.*GPU"):  # the core's refusal
        shiftop.svd(x, rank_tolerance=1e-8)
    with pytest.raises(TypeError, match="K is a CUDA tensor on GPU 0: backend='cpu'"):
        shiftop.spectrum(torch.ones((2, 2, 3), dtype=torch.float64, device="cuda"),
                         backend="cpu")
    cupy = require_cupy_gpu()
    with pytest.raises(TypeError, match="a is a CuPy array on GPU 0: backend='cpu'"):
        shiftop.svd(cupy.ones((4, 3)), backend="cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("shape, general", [((3, 5, 7), False), ((6, 4, 9), True)])
def test_spectrum_on_the_gpu_equals_the_cpu(rng, shape, general):
    torch = require_torch_gpu()
    K = rng.standard_normal(shape)
    R = None
    if general:
        R = rng.standard_normal(shape)
        R[:, :, 0] = K[:, :, 0]
    cpu = shiftop.spectrum(K, R)
    reference = np.linalg.svd(stacked_fhat(K, R), compute_uv=False)
    # The CPU measured at most 4.9e-16 relative to sigma_max against numpy (see above).
    tol = 1e-14 * reference.max()
    on_cuda = shiftop.spectrum(K, R, backend="cuda")
    from_tensor = shiftop.spectrum(torch.from_numpy(K).cuda(),
                                   None if R is None else torch.from_numpy(R).cuda())
    op = shiftop.Operator.from_kernels(K, R, backend="cuda", device=0)
    for got in (on_cuda, from_tensor, op.spectrum()):
        assert isinstance(got.sigma, np.ndarray) and got.sigma.shape == cpu.sigma.shape
        assert np.abs(got.sigma - reference).max() <= tol
        assert got.rank == cpu.rank and got.converged
        assert got.kappa == pytest.approx(cpu.kappa, rel=1e-10)
    # A CPU operator's SVDs can go to the GPU, and a GPU operator's to the CPU.
    assert np.abs(shiftop.Operator.from_kernels(K, R).spectrum(backend="cuda").sigma
                  - reference).max() <= tol
    assert np.abs(op.spectrum(backend="cpu").sigma - cpu.sigma).max() <= tol
