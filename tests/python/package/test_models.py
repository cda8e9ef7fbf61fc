"""shiftop.models: the heat2d/wave2d p2o maps from Python against the tool's `shiftop model` files
(kernels, true source, noisy data), against time stepping (the kernels are F's impulse responses;
F and F^T by the PDE agree with the FFT operator and are adjoint), and the refusals."""

import os
import subprocess

import numpy as np
import pytest

import shiftop
from shiftop import models

SHIFTOP = os.environ.get("SHIFTOP_BIN", "")
needs_tool = pytest.mark.skipif(not SHIFTOP, reason="SHIFTOP_BIN: the tool is not built")

# (model, n, sources, sensors, nt, substeps): odd sizes, several substeps.
CASES = [("heat2d", 9, 5, 3, 17, 2), ("wave2d", 14, 6, 4, 23, 3)]


def make(name, n, sources, sensors, nt, substeps, **options):
    return getattr(models, name)(n, sources, sensors, nt, substeps, **options)


@needs_tool
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_kernels_truth_and_data_equal_the_tools(tmp_path, case):
    name, n, ns, nd, nt, substeps = case
    noise, seed = 0.05, 7
    subprocess.run([SHIFTOP, "model", name, "--grid", str(n), "--sources", str(ns), "--sensors",
                    str(nd), "--nt", str(nt), "--substeps", str(substeps), "-o",
                    str(tmp_path / "K.npy"), "--truth", str(tmp_path / "m.npy"), "--data",
                    str(tmp_path / "d.npy"), "--noise", str(noise), "--seed", str(seed)],
                   check=True, capture_output=True)
    model = make(name, n, ns, nd, nt, substeps)
    assert model.shape == (nd, ns, nt)
    np.testing.assert_array_equal(model.kernels, np.load(tmp_path / "K.npy"))
    m_true = model.true_source()
    np.testing.assert_array_equal(m_true, np.load(tmp_path / "m.npy"))
    d, sigma = model.data(m_true, noise=noise, seed=seed, return_std=True)
    # The same plan options and the same generator: equal to the last bits (measured: 0).
    np.testing.assert_allclose(d, np.load(tmp_path / "d.npy"), rtol=0, atol=1e-15 * sigma)
    np.testing.assert_array_equal(model.data(noise=noise, seed=seed), d)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_kernels_are_the_impulse_responses_of_time_stepping(case):
    model = make(*case)
    nd, nm, nt = model.shape
    K = model.kernels
    for j in range(nm):
        impulse = np.zeros((nm, nt))
        impulse[j, 0] = 1.0
        response = model.forward(impulse)
        np.testing.assert_allclose(response, K[:, j, :], rtol=0, atol=1e-13 * np.abs(K).max())


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_time_stepping_equals_the_fft_operator_and_is_adjoint(case):
    model = make(*case)
    nd, nm, nt = model.shape
    rng = np.random.default_rng(3)
    m, d = rng.standard_normal((nm, nt)), rng.standard_normal((nd, nt))
    F = model.operator()
    scale = np.abs(model.kernels).max() * nm * nt
    np.testing.assert_allclose(model.forward(m), F @ m, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(model.adjoint(d), F.H @ d, rtol=0, atol=1e-13 * scale)
    lhs, rhs = np.vdot(model.forward(m), d), np.vdot(m, model.adjoint(d))
    assert abs(lhs - rhs) <= 1e-13 * abs(lhs) + 1e-300


def test_geometry_of_the_default_layout():
    model = models.heat2d(n=12, sources=8, sensors=3, nt=5)
    h = 1 / 13
    assert model.sources.shape == (8,) and model.sensors.shape == (3,)
    p = model.sources[0]
    np.testing.assert_allclose(model.source_positions[0], [(p % 12 + 1) * h, (p // 12 + 1) * h])
    assert np.all(model.source_positions[:, 0] < 0.5) and np.all(model.sensor_positions[:, 0] > 0.5)
    assert model.dt == pytest.approx(0.9 * h**2 / 4)
    assert model.observation_interval == pytest.approx(model.dt)
    assert isinstance(model.operator(), shiftop.Operator)
    assert model.operator().shape == (3 * 5, 8 * 5)
    assert not model.kernels.flags.writeable


def test_explicit_points_and_physical_options():
    heat = models.heat2d(n=10, sources=[0, 11, 22], sensors=[99], nt=6, kappa=2.0)
    assert heat.sources.tolist() == [0, 11, 22] and heat.sensors.tolist() == [99]
    assert heat.dt == pytest.approx(0.9 * (1 / 11) ** 2 / 8)
    slow = models.wave2d(n=16, sources=4, sensors=2, nt=8)
    fast = models.wave2d(n=16, sources=4, sensors=2, nt=8, layers=[(8, 3.0)])
    assert fast._core.max_speed == 3.0 and fast.dt == pytest.approx(slow.dt / 3)
    assert slow._core.sponge_width == 4
    assert not np.array_equal(fast.kernels, slow.kernels)


def test_noise_is_seeded_and_of_the_asked_size():
    model = models.heat2d(n=12, sources=6, sensors=4, nt=400)
    clean = model.data(noise=0.0)
    d, sigma = model.data(noise=0.1, seed=5, return_std=True)
    assert sigma == pytest.approx(0.1 * np.sqrt(np.mean(clean**2)), rel=1e-12)
    assert np.std(d - clean) == pytest.approx(sigma, rel=0.05)  # 1600 samples: 1.8% expected
    np.testing.assert_array_equal(model.data(noise=0.1, seed=5), d)
    assert not np.array_equal(model.data(noise=0.1, seed=6), d)


@pytest.mark.parametrize("call,error,message", [
    (lambda: models.heat2d(n=8.0), TypeError, "n: expected an integer"),
    (lambda: models.heat2d(n=8, sources=True), TypeError, "sources: expected a count or"),
    (lambda: models.heat2d(n=8, sources=[1, 2.5]), TypeError, r"sources\[1\]: expected an integer"),
    (lambda: models.heat2d(n=8, sources=1000), ValueError, "heat2d: default layout"),
    (lambda: models.heat2d(n=8, sources=[64]), ValueError, "64"),
    (lambda: models.heat2d(n=8, kappa=-1.0), ValueError, "kappa"),
    (lambda: models.heat2d(n=8, dt=1.0), ValueError, "dt"),
    (lambda: models.wave2d(n=16, layers=[(4,)]), TypeError, r"layers\[0\]: expected a pair"),
    (lambda: models.wave2d(n=16, layers=[(4, 0.0)]), ValueError, "speed"),
    (lambda: models.wave2d(n=16, sponge_width=9), ValueError, "sponge_width"),
    (lambda: models.heat2d(n=8, nt=4).forward(np.zeros((4, 32))), ValueError,
     r"m must have shape \(32, 4\), got shape \(4, 32\)"),
    (lambda: models.heat2d(n=8, nt=4).adjoint(np.zeros((3, 4))), ValueError,
     r"d must have shape \(4, 4\)"),
    (lambda: models.heat2d(n=8, nt=4).data(noise=-0.1), ValueError, "relative noise"),
    (lambda: models.heat2d(n=8, nt=4).data(seed=-1), ValueError, "seed: expected a non-negative"),
    (lambda: models.heat2d(n=8, nt=4).data(noise="big"), TypeError, "noise: expected a number"),
])
def test_bad_input_is_refused_in_one_line(call, error, message):
    with pytest.raises(error, match=message) as caught:
        call()
    assert "\n" not in str(caught.value)
