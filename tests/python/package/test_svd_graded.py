"""shiftop.svd on row- and column-graded matrices in both memory orders (issue 28): the values to
their relative accuracy against a one-sided Jacobi in 60-digit decimal arithmetic (an independent
reference: the standard library's decimal module, nothing of shiftop's), U and V orthonormal.

Before the fix a Fortran-order D B (rows scaled 1 .. 1e-24) stopped after one sweep, "converged",
with values 2-6 % wrong and V^T V - I at 0.23, while the C-order copy was right."""

from decimal import Decimal, getcontext

import numpy as np
import pytest

import shiftop


def decimal_singular_values(a):
    """The singular values of the real matrix a, descending, by the textbook one-sided Jacobi in
    60-digit decimal arithmetic on the columns of whichever of a, a.T has the grading in its
    columns (the caller passes that one); accurate far beyond double."""
    getcontext().prec = 60
    m, n = a.shape
    g = [[Decimal(float(a[i, j])) for i in range(m)] for j in range(n)]  # columns, exact
    tolerance = Decimal(10) ** -50
    for _ in range(100):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                alpha = sum(x * x for x in g[p])
                beta = sum(x * x for x in g[q])
                gamma = sum(x * y for x, y in zip(g[p], g[q]))
                if abs(gamma) <= tolerance * (alpha * beta).sqrt():
                    continue
                rotated = True
                zeta = (beta - alpha) / (2 * gamma)
                t = (1 if zeta >= 0 else -1) / (abs(zeta) + (1 + zeta * zeta).sqrt())
                c = 1 / (1 + t * t).sqrt()
                s = c * t
                g[p], g[q] = ([c * x - s * y for x, y in zip(g[p], g[q])],
                              [s * x + c * y for x, y in zip(g[p], g[q])])
        if not rotated:
            break
    return np.array(sorted((float(sum(x * x for x in col).sqrt()) for col in g), reverse=True))


def graded(rng, m, n, rows, decades):
    scales = 10.0 ** -np.linspace(0, decades, m if rows else n)
    rng.shuffle(scales)
    b = rng.standard_normal((m, n))
    return scales[:, None] * b if rows else b * scales


def check(a, want, n_eps):
    u, s, vh = shiftop.svd(a)
    eps = np.finfo(np.float64).eps
    assert np.max(np.abs(s - want) / want) <= n_eps * eps
    k = min(a.shape)
    u, vh = u[:, :k], vh[:k]  # the thin factors, also where full_matrices completes them
    assert np.max(np.abs(u.T @ u - np.eye(k))) <= 16 * max(a.shape) * eps
    assert np.max(np.abs(vh @ vh.T - np.eye(k))) <= 16 * max(a.shape) * eps


def test_the_issues_matrix_in_both_orders():
    rng = np.random.default_rng(1)
    a = np.diag([1, 1e-8, 1e-16, 1e-24]) @ rng.standard_normal((4, 4))
    want = decimal_singular_values(a.T)
    # The values the issue gives for the correct answer.
    assert want[2] == pytest.approx(3.822e-17, rel=1e-3)
    assert want[3] == pytest.approx(6.469e-25, rel=1e-3)
    for order in (np.asfortranarray(a), np.ascontiguousarray(a)):
        # The bound: the relative perturbation theory's O(n eps) kappa of the equilibrated
        # matrix, kappa < 100 here (measured worst 1.5 eps).
        check(order, want, 64 * 4 * 100)


@pytest.mark.parametrize("rows", [True, False], ids=["D B", "B D"])
@pytest.mark.parametrize("shape", [(2, 2), (4, 4), (5, 5), (5, 3), (3, 5), (8, 8)])
def test_graded_matrices_in_both_orders(rows, shape):
    rng = np.random.default_rng(sum(shape) + rows)
    for decades in (8, 16, 24):
        a = graded(rng, *shape, rows, decades)
        m, n = shape
        # The reference on the matrix whose columns carry the grading (one-sided Jacobi is
        # relatively accurate there).
        want = decimal_singular_values(a.T if rows else a)[: min(m, n)]
        scaled = a / np.linalg.norm(a, axis=1 if rows else 0, keepdims=True)
        kappa = np.linalg.cond(scaled)
        for order in (np.asfortranarray(a), np.ascontiguousarray(a)):
            check(order, want, 16 * max(shape) * kappa)


def test_a_subnormal_matrix_is_scaled_into_the_normal_range():
    # Entries 1e-310 and 1e-320 (subnormal): before, the sweeps ran in the subnormal range and
    # did not converge. The decimal reference reads the same (exactly represented) entries.
    a = (np.full((4, 3), 1e-10) + np.eye(4, 3)) * 1e-310
    assert 0 < np.abs(a).max() < np.finfo(np.float64).tiny
    want = decimal_singular_values(a)
    s = shiftop.svd(a, compute_uv=False)
    # Relative accuracy, plus the rounding of the results themselves to the subnormal grid (half
    # the smallest subnormal, absolute).
    bound = 16 * 4 * np.finfo(np.float64).eps + np.finfo(np.float64).smallest_subnormal / want
    assert np.all(np.abs(s - want) / want <= bound)


def test_a_singular_value_beyond_the_range_is_refused_as_such():
    # sqrt(6) 1e308 from finite entries: before, "did not converge in 1 sweeps".
    with pytest.raises(ValueError, match="a singular value exceeds the largest finite float64"):
        shiftop.svd(np.full((3, 2), 1e308) * [1, -1])
