"""`shiftop matvec --aux G --op G|Gadj|GadjF|FGadj`: the operator pair of --operator F and a
second operator G (FFTMatvec's auxiliary matrix), from .npy kernels and from FFTMatvec matrix
directories written here by h5py (a p2o F with a p2q G, a prior-solved G of F's shape), against
dense NumPy products (G^T F m, F G^T q); the data marks FFTMatvec reads (qoi = 1 on a p2q map's
data); and every combination the pair cannot apply refused with one line and no output."""
import json

import numpy as np
import pytest
from test_fftmatvec_interop import dense, read_vec, shiftop, write_fftmatvec_dir, write_vector

NT = 6


def npy_problem(tmp_path, f_shape, g_shape, seed):
    rng = np.random.default_rng(seed)
    kf, kg = rng.standard_normal(f_shape), rng.standard_normal(g_shape)
    np.save(tmp_path / "F.npy", kf)
    np.save(tmp_path / "G.npy", kg)
    return rng, dense(kf), dense(kg)


def run_npy(tmp_path, op, x, *extra):
    np.save(tmp_path / "x.npy", x)
    shiftop("matvec", "--operator", tmp_path / "F.npy", "--aux", tmp_path / "G.npy", "--op", op,
            "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", *extra)
    return np.load(tmp_path / "y.npy")


def close(got, want):
    np.testing.assert_allclose(got.ravel(), want.ravel(), rtol=1e-12,
                               atol=1e-12 * np.abs(want).max())


# Nq = 2 != Nd = 3: G, G* and FG*; one vector and a batch of 3 (SOTI rows of each vector).
@pytest.mark.parametrize("nrhs", [None, 3])
def test_g_gadj_and_fgadj_of_a_qoi_map(tmp_path, nrhs):
    rng, f, g = npy_problem(tmp_path, (3, 4, NT), (2, 4, NT), 1)
    lead = () if nrhs is None else (nrhs,)
    m, q = rng.standard_normal(lead + (4, NT)), rng.standard_normal(lead + (2, NT))
    flat = lambda v: v.reshape(-1, v.shape[-2] * NT).T  # columns: the vectors
    close(run_npy(tmp_path, "G", m), (g @ flat(m)).T)
    close(run_npy(tmp_path, "Gadj", q), (g.T @ flat(q)).T)
    y = run_npy(tmp_path, "FGadj", q)
    assert y.shape == lead + (3, NT)
    close(y, (f @ (g.T @ flat(q))).T)


# G*F needs G's block rows to be F's; G's parameter space may differ (Nm' = 5 != Nm = 4). 17
# right-hand sides cross the tool's groups of 16.
def test_gadjf_maps_into_gs_parameter_space(tmp_path):
    rng, f, g = npy_problem(tmp_path, (3, 4, NT), (3, 5, NT), 2)
    m = rng.standard_normal((17, 4, NT))
    y = run_npy(tmp_path, "GadjF", m, "--json")
    assert y.shape == (17, 5, NT)
    close(y, (g.T @ (f @ m.reshape(17, -1).T)).T)
    # G from shiftop's .h5 (written by convert) gives the same numbers.
    shiftop("convert", tmp_path / "G.npy", tmp_path / "G.h5")
    shiftop("matvec", "--operator", tmp_path / "F.npy", "--aux", tmp_path / "G.h5", "--op", "GadjF",
            "--input", tmp_path / "x.npy", "--output", tmp_path / "y5.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "y5.npy"), y)


# FFTMatvec directories: a p2o F and a p2q G (Nq = 2). G's data carries qoi = 1, FG*'s output
# (F's data) none, and the JSON summary names both operators.
def test_fftmatvec_p2o_and_p2q_directories(tmp_path):
    rng = np.random.default_rng(3)
    kf, kg = rng.standard_normal((3, 4, NT)), rng.standard_normal((2, 4, NT))
    write_fftmatvec_dir(tmp_path / "F", kf, checksum=41)
    write_fftmatvec_dir(tmp_path / "Q", kg, prefix="p2q/vec_", p2q=1, checksum=41)
    m, q = rng.standard_normal((4, NT)), rng.standard_normal((2, NT))
    write_vector(tmp_path / "m.h5", m, "parameter", checksum=41)
    write_vector(tmp_path / "q.h5", q, "data", qoi=1)
    base = ("matvec", "--operator", tmp_path / "F", "--aux", tmp_path / "Q")
    shiftop(*base, "--op", "G", "--input", tmp_path / "m.h5", "--output", tmp_path / "g.h5")
    y, attrs, _, _ = read_vec(tmp_path / "g.h5")
    close(y, dense(kg) @ m.ravel())
    assert attrs["qoi"] == (1, np.int32) and attrs["n_obs"] == (2, np.int32)
    out = shiftop(*base, "--op", "FGadj", "--input", tmp_path / "q.h5", "--output",
                  tmp_path / "d.h5", "--json")
    y, attrs, _, _ = read_vec(tmp_path / "d.h5")
    close(y, dense(kf) @ (dense(kg).T @ q.ravel()))
    assert "qoi" not in attrs and attrs["n_obs"] == (3, np.int32)
    summary = json.loads(out.stdout)
    assert summary["aux_shape"] == {"nd": 2, "nm": 4, "nt": NT} and summary["aux_p2q"] is True
    assert summary["operator_format"] == summary["aux_format"] == "fftmatvec"


# A prior-solved G of F's shape (FFTMatvec's p2o_prior): both mixed products, FFTMatvec's
# matvec(full, aux) and transpose_matvec(full, aux).
def test_fftmatvec_prior_solved_aux(tmp_path):
    rng = np.random.default_rng(4)
    kf, kg = rng.standard_normal((3, 4, NT)), rng.standard_normal((3, 4, NT))
    write_fftmatvec_dir(tmp_path / "F", kf)
    write_fftmatvec_dir(tmp_path / "P", kg, extra={"prior_solved": np.int32(1)})
    m, d = rng.standard_normal((4, NT)), rng.standard_normal((3, NT))
    write_vector(tmp_path / "m.h5", m, "parameter")
    write_vector(tmp_path / "d.h5", d, "data")
    base = ("matvec", "--operator", tmp_path / "F", "--aux", tmp_path / "P")
    shiftop(*base, "--op", "GadjF", "--input", tmp_path / "m.h5", "--output", tmp_path / "a.h5")
    close(read_vec(tmp_path / "a.h5")[0], dense(kg).T @ (dense(kf) @ m.ravel()))
    shiftop(*base, "--op", "FGadj", "--input", tmp_path / "d.h5", "--output", tmp_path / "b.h5")
    close(read_vec(tmp_path / "b.h5")[0], dense(kf) @ (dense(kg).T @ d.ravel()))


def refused(tmp_path, args, message):
    out = shiftop("matvec", *args, "--output", tmp_path / "y.npy", check=False)
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shiftop: error: "), out.stderr
    assert message in lines[0], lines[0]
    assert not (tmp_path / "y.npy").exists()


def test_bad_combinations_are_refused(tmp_path):
    rng, _, _ = npy_problem(tmp_path, (3, 4, NT), (2, 5, NT), 5)
    np.save(tmp_path / "m.npy", rng.standard_normal((4, NT)))
    np.save(tmp_path / "q.npy", rng.standard_normal((2, NT)))
    np.save(tmp_path / "G7.npy", rng.standard_normal((3, 4, NT + 1)))
    F, G, m, q = (tmp_path / n for n in ("F.npy", "G.npy", "m.npy", "q.npy"))
    refused(tmp_path, ["--operator", F, "--op", "GadjF", "--input", m],
            "--op GadjF needs --aux, the second operator G of the pair")
    refused(tmp_path, ["--operator", F, "--aux", G, "--op", "F", "--input", m],
            "--op F with --aux: expected G, Gadj, GadjF or FGadj")
    refused(tmp_path, ["--operator", F, "--aux", G, "--op", "GadjF", "--input", m],
            "GadjF applies G* to F's output: G has 2 block rows and --operator")
    refused(tmp_path, ["--operator", F, "--aux", G, "--op", "FGadj", "--input", q],
            "FGadj applies F to G*'s output: G has Nm = 5 parameter blocks and --operator")
    refused(tmp_path, ["--operator", F, "--aux", tmp_path / "G7.npy", "--op", "G", "--input", m],
            f"has Nt = {NT + 1} time steps and --operator")
    refused(tmp_path, ["--operator", F, "--aux", G, "--op", "Gadj", "--input", m],
            "input of Gadj must have shape (2, 6) or (nrhs, 2, 6), got (4, 6)")
    refused(tmp_path, ["--operator", F, "--aux", G, "--op", "GadjF", "--input", m, "--grid", "1x1"],
            "--aux: the operator pair runs in one process")
    refused(tmp_path, ["--operator", F, "--aux", tmp_path / "missing", "--op", "G", "--input", m],
            "missing")


# FFTMatvec's own rules where the pair needs them: G*F only within one data space (p2o with p2o),
# the qoi mark of a p2q map's data, and one checksum for both matrices.
def test_fftmatvec_marks_are_checked(tmp_path):
    rng = np.random.default_rng(6)
    write_fftmatvec_dir(tmp_path / "F", rng.standard_normal((3, 4, NT)), checksum=7)
    write_fftmatvec_dir(tmp_path / "Q", rng.standard_normal((3, 4, NT)), p2q=1, checksum=7)
    write_fftmatvec_dir(tmp_path / "C", rng.standard_normal((3, 4, NT)), checksum=8)
    write_vector(tmp_path / "m.h5", rng.standard_normal((4, NT)), "parameter")
    write_vector(tmp_path / "d.h5", rng.standard_normal((3, NT)), "data")
    F, Q, C = tmp_path / "F", tmp_path / "Q", tmp_path / "C"
    refused(tmp_path, ["--operator", F, "--aux", Q, "--op", "GadjF", "--input", tmp_path / "m.h5"],
            "G is parameter-to-QoI and --operator")
    refused(tmp_path, ["--operator", F, "--aux", Q, "--op", "FGadj", "--input", tmp_path / "d.h5"],
            "no qoi = 1 mark: expected qoi = 1 for the data of G, a parameter-to-QoI operator")
    refused(tmp_path, ["--operator", F, "--aux", C, "--op", "G", "--input", tmp_path / "m.h5"],
            "checksum 8 differs from --operator")


# bench --op GadjF|FGadj: one call and two calls of the plans give the same numbers, and the JSON
# reports both times and the floor of F^ and G^ bytes over the measured bandwidth.
@pytest.mark.parametrize("op, nq", [("GadjF", 0), ("FGadj", 5)])
def test_bench_pair(op, nq):
    out = shiftop("bench", "--op", op, "--nd", 3, "--nq", nq, "--nm", 4, "--nt", 16, "--nrhs", 17,
                  "--reps", 2, "--warmup", 1, "--estimate", "--json")
    result = json.loads(out.stdout)
    assert result["relative_difference_one_vs_two"] == 0
    assert result["aux_shape"] == {"nd": nq or 3, "nm": 4, "nt": 16} and result["max_rhs"] == 16
    # Two groups of at most 16: F^ and G^ (17 frequencies of 3x4 and nq x 4, FP64) read twice.
    assert result["bytes"] == 2 * 17 * 16 * 4 * (3 + (nq or 3))
    assert result["one_call_ms"] > 0 and result["two_calls_ms"] > 0 and result["floor_ms"] > 0


def test_bench_pair_refusals(tmp_path):
    for args, message in ((["--op", "GadjF", "--nd", 3, "--nq", 2], "--nq 2 must equal --nd 3"),
                          (["--op", "F", "--nq", 2], "bench --nq 2: G's block rows"),
                          (["--op", "GadjF", "--grid", "1x1"], "the operator pair runs in one")):
        out = shiftop("bench", *args, "--nm", 4, "--nt", 8, check=False)
        assert out.returncode == 1 and message in out.stderr, out.stderr
