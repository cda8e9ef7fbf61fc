"""Adversarial probes of `shiftop gsvd` and `shiftop regpath` (issue 18): odd dtypes and shapes,
--threads -1, an output in a missing directory or colliding with an input or another output
(the input must survive), the --alphas grammar at its edges, and a path at extreme alphas whose
curves must stay finite (alpha^2 over- and underflows in double)."""
import json

import numpy as np
import pytest
from test_fftmatvec_interop import shiftop
from test_gsvd_cli import outputs_absent, prescribed_pair
from test_regpath_cli import ND, NT, write_problem
from test_svd_cli import refused


def save_pair(tmp_path, F, G):
    np.save(tmp_path / "F.npy", F)
    np.save(tmp_path / "G.npy", G)
    return ["gsvd", "--f", tmp_path / "F.npy", "--g", tmp_path / "G.npy"]


@pytest.mark.parametrize("make,message", [
    (lambda F: F.astype(np.int32), "dtype '<i4' is not supported"),
    (lambda F: F > 0, "is not supported"),
    (lambda F: F.reshape(5, 2, 2), "expected a 2-D array (a matrix), got shape (5, 2, 2)"),
    (lambda F: np.zeros((5, 0)), "the matrix is empty (5 x 0)"),
    (lambda F: np.array(3.0), "expected a 2-D array"),
])
def test_gsvd_bad_f_is_refused(tmp_path, make, message):
    F, G = prescribed_pair(5, 6, 4, [3.0, 2.0, 1.0, 0.5])
    args = save_pair(tmp_path, make(F), G)
    line = refused(tmp_path, *args, "--output", tmp_path / "s.npy", "--vectors", tmp_path / "vec")
    assert message in line and str(tmp_path / "F.npy") in line, line
    assert outputs_absent(tmp_path)


def test_gsvd_threads_and_output_paths(tmp_path):
    F, G = prescribed_pair(5, 6, 4, [3.0, 2.0, 1.0, 0.5])
    args = save_pair(tmp_path, F, G)
    assert "--threads" in refused(tmp_path, *args, "--output", tmp_path / "s.npy",
                                  "--threads", "-1")
    line = refused(tmp_path, *args, "--output", tmp_path / "missing" / "s.npy")
    assert "--output" in line and "missing" in line, line
    # An output reached through another spelling of an input's path.
    line = refused(tmp_path, *args, "--output", tmp_path / "sub" / ".." / "G.npy")
    assert "--output" in line or "missing" in line or "sub" in line, line
    assert np.array_equal(np.load(tmp_path / "G.npy"), G)
    # A --vectors file that is the input F.
    np.save(tmp_path / "vec_u.npy", F)
    line = refused(tmp_path, "gsvd", "--f", tmp_path / "vec_u.npy", "--g", tmp_path / "G.npy",
                   "--output", tmp_path / "s.npy", "--vectors", tmp_path / "vec")
    assert "--vectors" in line, line
    assert np.array_equal(np.load(tmp_path / "vec_u.npy"), F)
    # --output one of the --vectors files: two outputs to one file.
    line = refused(tmp_path, *args, "--output", tmp_path / "w_x.npy", "--vectors", tmp_path / "w")
    assert "w_x.npy" in line, line
    assert not (tmp_path / "w_x.npy").exists()
    # Threads 1 and 2 give identical files.
    outs = []
    for t in (1, 2):
        shiftop(*args, "--output", tmp_path / f"s{t}.npy", "--threads", t)
        outs.append(np.load(tmp_path / f"s{t}.npy"))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_gsvd_one_by_one_and_complex_imaginary(tmp_path):
    args = save_pair(tmp_path, np.array([[3.0]]), np.array([[-4.0]]))
    shiftop(*args, "--output", tmp_path / "s.npy")
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"), [0.75], rtol=1e-15)
    args = save_pair(tmp_path, np.array([[2j]]), np.array([[-1j]]))
    shiftop(*args, "--output", tmp_path / "s.npy")
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"), [2.0], rtol=1e-15)


@pytest.mark.parametrize("alphas,message", [
    ("LOG:1:0:5", "expected 0 < MIN <= MAX"),
    ("1,,2", "'' is not a number"),
    ("nan", "expected positive finite numbers"),
    ("-1", "expected positive finite numbers"),
    ("LOG:1e-3:1e3:0", "expected COUNT an integer"),
    ("LOG:1e-3:1e3:1", "COUNT 1 needs MIN = MAX"),
    ("LOG:0:1:3", "expected 0 < MIN <= MAX"),
    ("inf", "expected positive finite numbers"),
    ("1,1", "expected increasing values"),
])
def test_regpath_alphas_grammar(tmp_path, alphas, message):
    op, *_ = write_problem(tmp_path)
    run = shiftop("regpath", op, tmp_path / "d.npy", "-o", tmp_path / "m.npy", "--alphas", alphas,
                  check=False)
    assert run.returncode == 1, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert message in run.stderr, run.stderr
    assert not (tmp_path / "m.npy").exists()


def test_regpath_threads_output_dir_and_one_alpha(tmp_path):
    op, *_ = write_problem(tmp_path)
    d = tmp_path / "d.npy"
    run = shiftop("regpath", op, d, "--threads", "-1", check=False)
    assert run.returncode != 0 and "--threads" in run.stderr, run.stderr
    run = shiftop("regpath", op, d, "-o", tmp_path / "nodir" / "m.npy", check=False)
    assert run.returncode != 0 and "--output" in run.stderr, run.stderr
    done = shiftop("regpath", op, d, "--alphas", "0.5", "--json", "-o", tmp_path / "m.npy")
    out = json.loads(done.stdout)
    assert out["chosen"] == 0
    assert np.all(np.isfinite(np.load(tmp_path / "m.npy")))


def test_regpath_extreme_alphas_stay_finite(tmp_path):
    # alpha^2 overflows at 1e200 and underflows at 1e-200: the curves must not become NaN.
    op, column, row, d = write_problem(tmp_path)
    alphas = "1e-300,1e-200,1e-3,1,1e200,1e300"
    done = shiftop("regpath", op, tmp_path / "d.npy", "--reg", "dt1", "--json", "--alphas",
                   alphas, "-o", tmp_path / "m.npy")
    out = json.loads(done.stdout)
    curves = out["curves"] if "curves" in out else out
    res = np.array(curves["residual_norms"], dtype=float)
    semi = np.array(curves["seminorms"], dtype=float)
    assert np.all(np.isfinite(res)) and np.all(np.isfinite(semi)), (res, semi)
    # alpha -> infinity: m -> 0 and the residual is ||d||.
    np.testing.assert_allclose(res[-1], np.linalg.norm(d), rtol=1e-12)
    assert np.all(np.isfinite(np.load(tmp_path / "m.npy")))
    # Its L-curve: repeated points at the small end, zero seminorms at the large end: no corner,
    # and --choose lcurve says so in one line instead of choosing an end.
    assert out["lcurve_corner"] is None
    run = shiftop("regpath", op, tmp_path / "d.npy", "--reg", "dt1", "--alphas", alphas,
                  "--choose", "lcurve", check=False)
    assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "--choose lcurve: the L-curve of these 6 alphas has no corner" in run.stderr


def test_regpath_zero_data(tmp_path):
    op, *_ = write_problem(tmp_path)
    np.save(tmp_path / "z.npy", np.zeros((ND, NT)))
    done = shiftop("regpath", op, tmp_path / "z.npy", "--json", "--alphas", "0.1,1,10", "-o",
                   tmp_path / "m.npy")
    out = json.loads(done.stdout)
    curves = out["curves"] if "curves" in out else out
    assert curves["residual_norms"] == [0.0, 0.0, 0.0]
    assert not np.any(np.load(tmp_path / "m.npy"))
