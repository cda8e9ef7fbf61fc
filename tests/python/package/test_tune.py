"""shiftop.tune against independent checks: each configuration's error recomputed with an Operator
made in that precision against FP64 on the tuner's own input, kappa(F^) from NumPy's FFT and SVD,
the eq. (6) bound evaluated here from the paper's formula and above the error against a dense
NumPy product for every configuration; plot.pareto drawing the result; bad arguments refused."""

import itertools
import math

import numpy as np
import pytest

import shiftop
from shiftop import plot

EPS = {"S": 2.0 ** -23, "D": 2.0 ** -52}  # machine epsilon, the paper's eps_s ~ 1e-7


def kernels(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def numpy_kappa(K):
    """kappa(F^): F^[w] = DFT of the kernels zero-padded to 2 Nt, w = 0..Nt (NumPy's FFT and SVD)."""
    nt = K.shape[2]
    spectrum = np.fft.fft(K, n=2 * nt, axis=2)[:, :, : nt + 1]
    sigma = np.concatenate([np.linalg.svd(spectrum[:, :, w], compute_uv=False)
                            for w in range(nt + 1)])
    return sigma.max() / sigma.min()


def eq6(precision, shape, op, kappa):
    """Eq. (6) with c_i = 1 on one process; c1, c5 = 1 where phases 1, 5 round to FP32."""
    nd, nm, nt = shape
    e = [EPS[c] for c in precision]
    rounds = [1.0 if c == "S" else 0.0 for c in precision]
    n = nm if op == "F" else nd
    return kappa * (rounds[0] * e[0] + (EPS["D"] + e[1] + e[3]) * math.log2(2 * nt) + e[2] * n
                    + rounds[4] * e[4])


def dense(K):
    """The (Nd Nt) x (Nm Nt) block lower-triangular Toeplitz matrix of K."""
    nd, nm, nt = K.shape
    A = np.zeros((nd * nt, nm * nt))
    for i, j, t, s in itertools.product(range(nd), range(nm), range(nt), range(nt)):
        if s <= t:
            A[i * nt + t, j * nt + s] = K[i, j, t - s]
    return A


@pytest.mark.parametrize("shape", [(3, 20, 16), (8, 5, 9)])
def test_tune_errors_and_bounds_against_independent_references(shape):
    K = kernels(shape, 5)
    result = shiftop.tune(K, repetitions=1, threads=1)
    kappa = numpy_kappa(K)
    assert result.kappa == pytest.approx(kappa, rel=1e-10)
    assert result.shape == shape and result.backend == "cpu"
    A = dense(K)
    for op in ("F", "Fadj"):
        t = result.ops[op]
        assert t.precision == ["".join(p) for p in itertools.product("DS", repeat=5)]
        assert t.median_ms.shape == t.relative_error.shape == t.error_bound.shape == (32,)
        assert t.pareto.dtype == bool and t.pareto[0]  # FP64 (error 0) is on the front
        fp64 = shiftop.Operator.from_kernels(K, threads=1).apply(t.input, op=op)
        exact = (A if op == "F" else A.T) @ t.input.ravel()
        for k, p in enumerate(t.precision):
            y = shiftop.Operator.from_kernels(K, precision=p, threads=1).apply(t.input, op=op)
            # The same arithmetic in a fresh operator; the FP32 errors compared are >= 1e-9.
            assert t.relative_error[k] == pytest.approx(
                np.linalg.norm(y - fp64) / np.linalg.norm(fp64), abs=1e-13), p
            assert t.error_bound[k] == pytest.approx(eq6(p, shape, op, result.kappa), rel=1e-12)
            assert np.linalg.norm(y.ravel() - exact) / np.linalg.norm(exact) <= t.error_bound[k]
            assert t.relative_error[k] <= t.error_bound[k]
        # The front: exactly the configurations no other beats in both time and error.
        for k in range(32):
            beaten = np.any((t.median_ms <= t.median_ms[k]) & (t.relative_error <= t.relative_error[k])
                            & ((t.median_ms < t.median_ms[k])
                               | (t.relative_error < t.relative_error[k])))
            assert t.pareto[k] == (not beaten)
        best = t.fastest_under(1e-7)
        assert t.relative_error[best] <= 1e-7
        assert t.median_ms[best] == t.median_ms[t.relative_error <= 1e-7].min()


def test_tune_on_an_operator_keeps_its_precision_and_gives_the_kernels_kappa():
    K = kernels((2, 6, 5), 7)
    op = shiftop.Operator.from_kernels(K, precision="DSSDD", threads=1)
    result = shiftop.tune(op, ops="Fadj", repetitions=1)
    assert list(result.ops) == ["Fadj"]
    assert op.precision == "DSSDD"
    assert result.kappa == pytest.approx(numpy_kappa(K), rel=1e-10)
    given = shiftop.tune(op, ops=["F"], repetitions=1, kappa=10.0)
    assert given.kappa == 10.0
    assert given.ops["F"].error_bound[-1] == pytest.approx(eq6("SSSSS", (2, 6, 5), "F", 10.0))


def test_pareto_draws_a_tune_result(tmp_path):
    result = shiftop.tune(kernels((2, 5, 6), 3), repetitions=1, threads=1)
    figure = plot.pareto(result, tmp_path / "front.png", tolerance=1e-6)
    assert (tmp_path / "front.png").read_bytes().startswith(b"\x89PNG")
    axes = figure.get_axes()
    assert len(axes) == 2 and axes[0].get_title().startswith("F on (Nd=2, Nm=5, Nt=6)")
    data = result.to_json(1e-6)
    assert data["tolerance"] == 1e-6
    best = result.ops["F"].fastest_under(1e-6)
    assert data["ops"]["F"]["fastest_under_tolerance"] == result.ops["F"].precision[best]
    assert [c["error_bound"] for c in data["ops"]["F"]["configurations"]] == \
        list(result.ops["F"].error_bound)


@pytest.mark.parametrize("kwargs, message", [
    ({"ops": ["FadjF"]}, "ops: expected 'F' or 'Fadj'"),
    ({"repetitions": 0}, "repetitions: expected a positive integer"),
    ({"kappa": 0.5}, "kappa: expected None or a number >= 1"),
])
def test_tune_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        shiftop.tune(kernels((2, 3, 4), 1), **kwargs)
