"""shiftop.regpath against a dense NumPy solve of the circulant-embedded normal equations on tiny
operators: the block circulant C_F of period L = 2 Nt built entry by entry from the kernels, the
regulariser C_R = [mass I; time_weight D^k; space_weight Lap (x) I] with D the circular first
difference, then (C_F^T C_F + alpha^2 C_R^T C_R) m = C_F^T [d; 0] solved densely; the residual
norm, seminorm and GCV from the dense influence matrix; the generalized values of each frequency
pair from scipy's generalized eigh. Also: the exact (Toeplitz) Tikhonov solve the docstring shows
(map_point), the plot (matplotlib's Figure API, no display), and bad input."""

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
from conftest import dense_matrix, random_general

import shiftop


def lag_blocks(K, first_row):
    """The blocks C_0..C_{L-1} (L, Nd, Nm) of the block circulant embedding of period 2 Nt."""
    nd, nm, nt = K.shape
    blocks = np.zeros((2 * nt, nd, nm))
    blocks[:nt] = K.transpose(2, 0, 1)
    if first_row is not None:
        for k in range(1, nt):
            blocks[2 * nt - k] = first_row[:, :, k]
    return blocks


def embedded_operator(K, first_row):
    """C_F, (Nd L) x (Nm L), SOTI order (index block * L + step)."""
    nd, nm, nt = K.shape
    L = 2 * nt
    blocks = lag_blocks(K, first_row)
    C = np.zeros((nd, L, nm, L))
    for s in range(L):
        for r in range(L):
            C[:, s, :, r] = blocks[(s - r) % L]
    return C.reshape(nd * L, nm * L)


def embedded_regulariser(nm, nt, mass, k, time_weight, laplacian, space_weight):
    L = 2 * nt
    D = np.eye(L) - np.roll(np.eye(L), 1, axis=0)  # (D m)_s = m_s - m_{s-1 mod L}
    rows = [mass * np.eye(nm * L)]
    if k > 0:
        rows.append(time_weight * np.kron(np.eye(nm), np.linalg.matrix_power(D, k)))
    if laplacian is not None:
        rows.append(space_weight * np.kron(laplacian, np.eye(L)))
    return np.vstack(rows)


def dense_path(K, first_row, d, alphas, **reg):
    """(solutions (Nm, Nt), residual norms, seminorms, gcv) of the embedded problem."""
    nd, nm, nt = K.shape
    L = 2 * nt
    CF = embedded_operator(K, first_row)
    CR = embedded_regulariser(nm, nt, **reg)
    dpad = np.zeros((nd, L))
    dpad[:, :nt] = d
    dpad = dpad.ravel()
    out = []
    for alpha in alphas:
        A = CF.T @ CF + alpha**2 * CR.T @ CR
        m = np.linalg.solve(A, CF.T @ dpad)
        r = CF @ m - dpad
        influence = CF @ np.linalg.solve(A, CF.T)
        gcv = (r @ r) / np.trace(np.eye(nd * L) - influence) ** 2
        out.append((m.reshape(nm, L)[:, :nt], np.linalg.norm(r), np.linalg.norm(CR @ m), gcv))
    return out


def path_laplacian(nm):
    """The graph Laplacian of a path through the nm parameter points."""
    A = np.diag(np.ones(nm - 1), 1)
    A = A + A.T
    return np.diag(A.sum(axis=1)) - A


CASES = [
    dict(reg="identity"),
    dict(reg="dt1", mass=0.5, time_weight=2.0),
    dict(reg="dt2", mass=0.3, time_weight=0.7),
    dict(reg="dt1", mass=0.2, time_weight=1.0, laplacian=True, space_weight=1.5),
    dict(reg="identity", mass=2.0, laplacian=True, space_weight=0.5),
]


@pytest.mark.parametrize("general", [False, True])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", [(3, 2, 4), (1, 1, 1), (2, 2, 7), (4, 3, 3), (2, 3, 5)])
def test_path_equals_the_dense_embedded_solve(rng, shape, case, general):
    """Solutions, residual norms, seminorms and GCV against the dense solve, relative. Measured
    over these cases (alpha down to 1e-2, where the residual cancels): solution 3.3e-11, residual
    1.9e-10, seminorm 6.6e-12, GCV 1.2e-11; bounds 1e-9, 5e-9, 1e-9, 1e-9."""
    K, R = random_general(rng, shape)
    row = R if general else None
    nd, nm, nt = shape
    d = rng.standard_normal((nd, nt))
    lap = path_laplacian(nm) if case.get("laplacian") else None
    kwargs = {k: v for k, v in case.items() if k not in ("reg", "laplacian")}
    alphas = np.array([1e-2, 0.1, 1.0, 10.0])
    path = shiftop.regpath(K, d, reg=case["reg"], laplacian=lap, alphas=alphas, first_row=row,
                           **kwargs)
    k = {"identity": 0, "dt1": 1, "dt2": 2}[case["reg"]]
    want = dense_path(K, row, d, alphas, mass=kwargs.get("mass", 1.0), k=k,
                      time_weight=kwargs.get("time_weight", 1.0), laplacian=lap,
                      space_weight=kwargs.get("space_weight", 1.0))
    assert np.array_equal(path.alphas, alphas)
    for i, (m, res, semi, gcv) in enumerate(want):
        got = path.solve(alphas[i])
        assert got.shape == (nm, nt)
        assert np.max(np.abs(got - m)) <= 1e-9 * np.abs(m).max()
        assert abs(path.residual_norms[i] - res) <= 5e-9 * res
        assert abs(path.seminorms[i] - semi) <= 1e-9 * semi
        assert abs(path.gcv[i] - gcv) <= 1e-9 * gcv
    gcv = [w[3] for w in want]
    assert gcv[path.gcv_choice] <= min(gcv) * (1 + 1e-9)  # ties (Nt = 1) within rounding
    # Four alphas are too few for an L-curve corner (5 at least): none, and no alpha for it.
    assert path.lcurve_corner is None and path.alpha_lcurve is None


def test_generalized_values_are_those_of_each_frequency_pair(rng):
    K, R = random_general(rng, (3, 2, 4))
    nd, nm, nt = K.shape
    L = 2 * nt
    lap = path_laplacian(nm)
    path = shiftop.regpath(K, rng.standard_normal((nd, nt)), reg="dt1", mass=0.5,
                           time_weight=2.0, laplacian=lap, space_weight=0.3, first_row=R)
    blocks = lag_blocks(K, R)
    for w in range(nt + 1):
        phase = np.exp(-2j * np.pi * w * np.arange(L) / L)
        Fw = np.tensordot(phase, blocks, axes=1)
        delta = 1 - np.exp(-2j * np.pi * w / L)
        Rw = np.vstack([0.5 * np.eye(nm), 2.0 * delta * np.eye(nm), 0.3 * lap])
        ev = scipy.linalg.eigh(Fw.conj().T @ Fw, Rw.conj().T @ Rw, eigvals_only=True)
        want = np.sqrt(np.clip(ev[::-1], 0, None))
        got = path.generalized_values(w)
        assert got.shape == (nm,) and np.all(np.diff(got) <= 0)
        assert np.max(np.abs(got - want)) <= 1e-12 * want[0]
    with pytest.raises(ValueError, match="w: expected a frequency index 0..4"):
        path.generalized_values(nt + 1)


def test_an_operator_gives_the_path_of_its_kernels_and_the_default_alphas(rng):
    K, R = random_general(rng, (3, 2, 6))
    d = rng.standard_normal((3, 6))
    op = shiftop.Operator.from_kernels(K, first_row=R)
    by_op = shiftop.regpath(op, d, reg="dt2", mass=0.5)
    by_kernels = shiftop.regpath(K, d, reg="dt2", mass=0.5, first_row=R)
    assert by_op.alphas.size == 40 and np.all(np.diff(by_op.alphas) > 0)
    np.testing.assert_allclose(by_op.alphas, by_kernels.alphas, rtol=1e-12)
    np.testing.assert_allclose(by_op.gcv, by_kernels.gcv, rtol=1e-9)
    gamma = np.concatenate([by_kernels.generalized_values(w) for w in range(7)])
    assert by_kernels.alphas[0] >= gamma.min() * (1 - 1e-12)
    assert by_kernels.alphas[-1] == pytest.approx(gamma.max(), rel=1e-12)
    np.testing.assert_allclose(by_op.solve(), by_kernels.solve(by_kernels.alpha_gcv),
                               rtol=1e-8, atol=1e-10 * np.abs(by_kernels.solve()).max())
    assert "GCV alpha" in repr(by_op)


def test_the_exact_solve_of_the_docstring_is_the_toeplitz_tikhonov_solution(rng):
    """map_point with unit noise and prior variance 1/(alpha mass)^2 solves the Toeplitz problem
    min ||F m - d||^2 + alpha^2 mass^2 ||m||^2 (dense check), which the circulant approximation
    is close to but does not equal."""
    K = rng.standard_normal((3, 2, 6))
    nd, nm, nt = K.shape
    d = rng.standard_normal((nd, nt))
    alpha, mass = 0.3, 1.5
    op = shiftop.Operator.from_kernels(K)
    exact = shiftop.map_point(op, d, shiftop.GaussianNoise(1.0, nd, nt=nt),
                              shiftop.DiagonalPrior(1.0 / (alpha * mass) ** 2, nm, nt=nt),
                              preconditioner="circulant", tol=1e-12).m
    A = dense_matrix(K)
    want = np.linalg.solve(A.T @ A + (alpha * mass) ** 2 * np.eye(nm * nt), A.T @ d.ravel())
    assert np.max(np.abs(exact.ravel() - want)) <= 1e-8 * np.abs(want).max()
    approx = shiftop.regpath(op, d, mass=mass, alphas=[alpha]).solve(alpha)
    gap = np.abs(approx - exact).max() / np.abs(exact).max()
    assert 1e-6 < gap < 1.0, gap


def test_plot_draws_the_l_curve_and_gcv(rng, tmp_path):
    K = rng.standard_normal((2, 2, 5))
    path = shiftop.regpath(K, rng.standard_normal((2, 5)), reg="dt1", mass=0.5)
    figure = path.plot(out=tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lcurve, gcv = figure.axes[:2]
    assert lcurve.get_xscale() == lcurve.get_yscale() == "log" and gcv.get_xscale() == "log"
    np.testing.assert_allclose(lcurve.lines[0].get_xdata(), path.residual_norms)
    np.testing.assert_allclose(gcv.lines[0].get_ydata(), path.gcv)
    assert f"{path.alpha_gcv:.4g}" in " ".join(t.get_text() for t in gcv.get_legend().texts)
    # The JSON route the tool takes: python -m shiftop.plot regpath JSON -o OUT.
    (tmp_path / "p.json").write_text(json.dumps(path.to_json()))
    done = subprocess.run([sys.executable, "-m", "shiftop.plot", "regpath", tmp_path / "p.json",
                           "-o", tmp_path / "q.svg"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "q.svg").read_text().lstrip().startswith("<?xml")
    bad = dict(path.to_json(), gcv_choice=99)
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    done = subprocess.run([sys.executable, "-m", "shiftop.plot", "regpath",
                           tmp_path / "bad.json", "-o", tmp_path / "r.png"],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "field 'gcv_choice' = 99 is not an index" in done.stderr
    assert not (tmp_path / "r.png").exists()
    with pytest.raises(ValueError, match="'seminorms' has 1 values, expected"):
        shiftop.plot.regpath(dict(path.to_json(), seminorms=[1.0]), tmp_path / "s.png")


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(mass=0.0), ValueError, "mass: expected a positive"),
    (dict(reg="dt3"), ValueError, "reg 'dt3'"),
    (dict(reg="dt1", time_weight=-1.0), ValueError, "time_weight"),
    # Keywords that the other options make meaningless are refused, not ignored.
    (dict(time_weight=5.0), ValueError, r"time_weight=5\.0 weights the time block of reg 'dt1' "
                                        "or 'dt2'; reg 'identity' has none"),
    (dict(reg="dt2", space_weight=2.0), ValueError, "space_weight=2.0 weights the laplacian's "
                                                    "block; no laplacian was given"),
    # Complex values are refused, not cast with a ComplexWarning that drops their imaginary part.
    (dict(laplacian=np.eye(2) * (1 + 1j)), TypeError, r"laplacian is complex"),
    (dict(alphas=[1.0 + 1j]), TypeError, r"alphas is complex"),
    (dict(laplacian=np.ones((3, 3))), ValueError, r"laplacian has shape \(3, 3\)"),
    (dict(laplacian=np.triu(np.ones((2, 2)))), ValueError, "symmetric"),
    # The core's one check (inverse::require_laplacian), naming the argument and the entry: exact
    # symmetry (the path is that of the matrix as given), finite entries.
    (dict(laplacian=np.array([[1.0, -1.0], [-1.0 + 1e-15, 1.0]])), ValueError,
     r"laplacian is not symmetric: \(1, 0\) = -0\.999"),
    (dict(laplacian=np.array([[np.nan, 0.0], [0.0, 1.0]])), ValueError,
     r"laplacian: entry \(0, 0\) is nan: expected finite numbers"),
    (dict(alphas=[1.0, -1.0]), ValueError, "alphas: expected positive"),
    (dict(alphas=[]), ValueError, "at least one"),
    (dict(backend="gpu"), ValueError, "backend 'gpu'"),
    (dict(threads=0), ValueError, "threads"),
    (dict(variant="x"), ValueError, "variant"),
])
def test_bad_input_is_refused_by_name(rng, kwargs, error, message):
    K = rng.standard_normal((3, 2, 4))
    with pytest.raises(error, match=message):
        shiftop.regpath(K, rng.standard_normal((3, 4)), **kwargs)


def test_bad_data_and_kernels_are_refused(rng):
    K = rng.standard_normal((3, 2, 4))
    with pytest.raises(TypeError, match=r"data is complex \(complex128\)"):
        shiftop.regpath(K, np.ones((3, 4)) * (1 + 1j))
    with pytest.raises(TypeError, match=r"kernels K\) has dtype complex128"):
        shiftop.regpath(K * 1j, np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"data has shape \(4, 3\): expected \(Nd, Nt\)"):
        shiftop.regpath(K, np.zeros((4, 3)))
    d = np.zeros((3, 4))
    d[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"data\[1, 2\] is nan"):
        shiftop.regpath(K, d)
    with pytest.raises(ValueError, match=r"\(Nd, Nm, Nt\)"):
        shiftop.regpath(K[0], np.zeros((3, 4)))
    with pytest.raises(ValueError, match="first_row is for kernels"):
        shiftop.regpath(shiftop.Operator.from_kernels(K), np.zeros((3, 4)), first_row=K)


def test_plot_draws_on_given_axes(rng):
    from matplotlib.figure import Figure

    path = shiftop.regpath(rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 4)))
    figure = Figure()
    axes = figure.subplots(1, 2)
    assert path.plot(ax=axes) is figure
    assert axes[0].get_xlabel().startswith("residual norm") and axes[1].get_xlabel() == "alpha"
    with pytest.raises(ValueError, match="two matplotlib Axes"):
        path.plot(ax=[axes[0]])


@pytest.mark.gpu
@pytest.mark.parametrize("reg,laplacian", [("identity", False), ("dt2", True)])
def test_backend_cuda_equals_the_cpu(rng, reg, laplacian):
    """The GSVDs on the GPU (backend cuda): the same curves and solution within 1e-10 relative
    (the CPU path agrees with the dense solve to 1.9e-10 at worst)."""
    K, R = random_general(rng, (4, 3, 9))
    d = rng.standard_normal((4, 9))
    lap = path_laplacian(3) if laplacian else None
    cpu = shiftop.regpath(K, d, reg=reg, mass=0.5, laplacian=lap, first_row=R)
    gpu = shiftop.regpath(K, d, reg=reg, mass=0.5, laplacian=lap, first_row=R, backend="cuda")
    np.testing.assert_allclose(gpu.alphas, cpu.alphas, rtol=1e-10)
    for name in ("residual_norms", "seminorms", "gcv"):
        np.testing.assert_allclose(getattr(gpu, name), getattr(cpu, name), rtol=1e-10)
    m = cpu.solve(cpu.alpha_gcv)
    assert np.abs(gpu.solve(cpu.alpha_gcv) - m).max() <= 1e-10 * np.abs(m).max()


def test_results_are_read_only(rng):
    """alpha_gcv and alpha_lcurve index into alphas: neither the attributes nor the arrays can
    change under them."""
    path = shiftop.regpath(rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 4)))
    chosen, alphas = path.alpha_gcv, path.alphas.copy()
    for name in ("alphas", "residual_norms", "seminorms", "gcv"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(path, name)[0] = 1.0
        with pytest.raises(AttributeError):
            setattr(path, name, np.ones(3))
    for name in ("gcv_choice", "lcurve_corner", "shape"):
        with pytest.raises(AttributeError):
            setattr(path, name, 0)
    assert path.alpha_gcv == chosen and np.array_equal(path.alphas, alphas)
    curves = path.evaluate([1.0, 2.0])  # the caller's own arrays
    curves["alphas"][0] = 3.0
