"""shiftop.OperatorPair against the independent dense NumPy reference (conftest.dense_matrix):
G, G*, G*F and FG* with Nq != Nd (FG* only) and G's Nm != F's Nm (G*F only), a general F, batches
across max_rhs groups, out=, the two-step products of the operators, dtypes, bad inputs with
their messages, and a CUDA pair (marked gpu) against the CPU."""

import numpy as np
import pytest
from conftest import dense_matrix, random_general, rel_err

import shiftop

# Measured max rel_err over these tests: 8.9e-16; the bound keeps a ~100x margin.
FP64_TOL = 1e-13
NT = 9


def make(K, first_row=None, **options):
    options.setdefault("planning", "estimate")
    return shiftop.Operator.from_kernels(K, first_row, **options)


def reference(op, F, G, x):
    """op applied to each vector of the batch x by the dense matrices F and G."""
    A = {"G": lambda: G, "Gadj": lambda: G.T, "GadjF": lambda: G.T @ F,
         "FGadj": lambda: F @ G.T}[op]()
    flat = x.reshape(-1, A.shape[1])
    return (flat @ A.T).reshape(x.shape[:-2] + (-1, NT))


CASES = {  # F shape, G shape, general F
    "both": ((4, 5, NT), (4, 5, NT), False),
    "gadjf_only": ((3, 4, NT), (3, 6, NT), False),
    "fgadj_only": ((2, 5, NT), (4, 5, NT), False),
    "ones": ((1, 1, NT), (1, 1, NT), False),
    "general_f": ((3, 2, NT), (3, 2, NT), True),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("nrhs", [None, 1, 5])
def test_every_action_matches_dense(rng, case, nrhs):
    f_shape, g_shape, general = CASES[case]
    KF, RF = random_general(rng, f_shape) if general else (rng.standard_normal(f_shape), None)
    KG = rng.standard_normal(g_shape)
    pair = shiftop.OperatorPair(make(KF, RF), make(KG), max_rhs=2)
    F, G = dense_matrix(KF, RF), dense_matrix(KG)
    lead = () if nrhs is None else (nrhs,)
    for op in ("G", "Gadj", "GadjF", "FGadj"):
        blocks_in = {"G": g_shape[1], "Gadj": g_shape[0], "GadjF": f_shape[1],
                     "FGadj": g_shape[0]}[op]
        x = rng.standard_normal(lead + (blocks_in, NT))
        if not pair.supports(op):
            with pytest.raises(ValueError, match="applies"):
                pair.apply(x, op=op)
            continue
        y = pair.apply(x, op=op)
        assert rel_err(y, reference(op, F, G, x)) < FP64_TOL, (case, op)
    if pair.supports("GadjF"):
        m = rng.standard_normal(lead + (f_shape[1], NT))
        assert rel_err(pair.GadjF @ m, reference("GadjF", F, G, m)) < FP64_TOL


# The views and the operators: pair.F and pair.G are the Operators themselves (pair.G @ m,
# pair.G.H @ q), and one call equals the two steps through them.
def test_views_and_two_steps(rng):
    KF, KG = rng.standard_normal((3, 4, NT)), rng.standard_normal((3, 4, NT))
    F, G = make(KF), make(KG)
    pair = shiftop.OperatorPair(F, G)
    m, d = rng.standard_normal((6, 4, NT)), rng.standard_normal((6, 3, NT))
    assert pair.F is F and pair.G is G
    np.testing.assert_array_equal(pair.GadjF @ m, G.H @ (F @ m))
    np.testing.assert_array_equal(pair.FGadj @ d, F @ (G.H @ d))
    np.testing.assert_array_equal(pair.apply(d, op="Gadj"), G.H @ d)
    assert pair.GadjF.shape == (4 * NT, 4 * NT) and pair.FGadj.input_shape == (3, NT)
    assert pair.max_rhs == 16 and "OperatorPair" in repr(pair)


def test_out_and_dtypes(rng):
    KF, KG = rng.standard_normal((2, 3, NT)), rng.standard_normal((2, 3, NT))
    pair = shiftop.OperatorPair(make(KF), make(KG))
    m = rng.standard_normal((3, NT))
    want = pair.apply(m)
    out = np.full((3, NT), np.nan)
    assert pair.apply(m, op="GadjF", out=out) is out
    np.testing.assert_array_equal(out, want)
    # float32 is converted (a real cast), Fortran order copied to C order.
    m32 = m.astype(np.float32)
    assert rel_err(pair.apply(m32), pair.apply(m32.astype(np.float64))) == 0
    assert rel_err(pair.apply(np.asfortranarray(m)), want) == 0
    with pytest.raises(TypeError, match="complex"):
        pair.apply(m + 1j)


def test_bad_inputs(rng):
    F, G = make(rng.standard_normal((2, 3, NT))), make(rng.standard_normal((4, 3, NT)))
    pair = shiftop.OperatorPair(F, G)
    with pytest.raises(ValueError, match="op 'F': expected one of 'G', 'Gadj', 'GadjF', 'FGadj'"):
        pair.apply(np.zeros((3, NT)), op="F")
    with pytest.raises(ValueError, match="G has Nq = 4 block rows and F has Nd = 2"):
        pair.apply(np.zeros((3, NT)), op="GadjF")
    with pytest.raises(ValueError, match=r"input of FGadj must have shape \(4, 9\)"):
        pair.apply(np.zeros((3, NT)), op="FGadj")
    with pytest.raises(ValueError, match=r"out of G must have shape \(4, 9\)"):
        pair.apply(np.zeros((3, NT)), op="G", out=np.zeros((3, NT)))
    with pytest.raises(ValueError, match="G has Nt = 8 time steps and F has Nt = 9"):
        shiftop.OperatorPair(F, make(rng.standard_normal((2, 3, NT - 1))))
    with pytest.raises(TypeError, match="G must be a shiftop.Operator"):
        shiftop.OperatorPair(F, np.zeros((2, 3, NT)))
    with pytest.raises(ValueError, match="invalid max_rhs 0"):
        shiftop.OperatorPair(F, G, max_rhs=0)
    with pytest.raises(TypeError, match="max_rhs must be an integer"):
        shiftop.OperatorPair(F, G, max_rhs=2.5)

    class DeviceArray:  # what a CuPy array or CUDA tensor shows: refused, not misread
        __cuda_array_interface__ = {}

    with pytest.raises(TypeError, match="OperatorPair takes NumPy arrays"):
        pair.apply(DeviceArray(), op="G")


@pytest.mark.gpu
def test_cuda_pair_matches_the_cpu(rng):
    KF, KG = rng.standard_normal((3, 5, 16)), rng.standard_normal((3, 5, 16))
    cpu = shiftop.OperatorPair(make(KF), make(KG))
    gpu = shiftop.OperatorPair(make(KF, backend="cuda"), make(KG, backend="cuda"), max_rhs=2)
    for op, blocks in (("GadjF", 5), ("FGadj", 3), ("G", 5), ("Gadj", 3)):
        x = rng.standard_normal((5, blocks, 16))
        assert rel_err(gpu.apply(x, op=op), cpu.apply(x, op=op)) < 1e-12, op
    with pytest.raises(ValueError, match="expected one backend"):
        shiftop.OperatorPair(make(KF), make(KG, backend="cuda"))
