"""shiftop.Operator against the independent dense NumPy reference (conftest.dense_matrix): every
action, general operators, batches across max_rhs groups, dtypes, memory layouts, out=, per-call
and per-operator precision, bad inputs (with their messages), views and help()."""

import pydoc
import threading

import numpy as np
import pytest
from conftest import dense_action, dense_matrix, random_general, rel_err

import shiftop

# Measured max relative errors (rel_err) over these tests: FP64 <= 2e-15, FP32 phases ('DSSDD',
# 'SSSSS') <= 3e-7; the bounds keep a ~50x margin and stay far below the other precision's error.
FP64_TOL = 1e-13
FP32_TOL = 2e-5
ACTIONS = ("F", "Fadj", "FadjF", "FFadj")
SHAPES = [(1, 1, 1), (3, 4, 10), (2, 5, 7), (4, 1, 16), (1, 3, 33)]


def in_blocks(action, shape):
    nd, nm, _ = shape
    return nm if action in ("F", "FadjF") else nd


def out_blocks(action, shape):
    nd, nm, _ = shape
    return nd if action in ("F", "FFadj") else nm


def make(K, first_row=None, **options):
    options.setdefault("planning", "estimate")
    return shiftop.Operator.from_kernels(K, first_row, **options)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("general", [False, True], ids=["triangular", "general"])
def test_every_action_matches_dense(rng, shape, general):
    K, R = random_general(rng, shape) if general else (rng.standard_normal(shape), None)
    op = make(K, R)
    A = dense_matrix(K, R)
    assert op.triangular == (not general)
    nt = shape[2]
    views = {"F": op, "Fadj": op.H, "FadjF": op.normal(), "FFadj": op.H.normal()}
    for action in ACTIONS:
        x = rng.standard_normal((in_blocks(action, shape), nt))
        expected = dense_action(A, action) @ x.ravel()
        y = views[action] @ x
        assert y.shape == (out_blocks(action, shape), nt) and y.dtype == np.float64
        assert rel_err(y.ravel(), expected) < FP64_TOL
        assert rel_err(op.apply(x, op=action).ravel(), expected) < FP64_TOL
        assert rel_err(views[action].apply(x).ravel(), expected) < FP64_TOL


@pytest.mark.parametrize("nrhs", [1, 2, 4, 5, 9])
@pytest.mark.parametrize("action", ACTIONS)
def test_batches_across_max_rhs_groups(rng, nrhs, action):
    # max_rhs = 4: nrhs 5 and 9 end in a partial group, 4 fills one exactly.
    shape = (3, 2, 11)
    K, R = random_general(rng, shape)
    op = make(K, R, max_rhs=4)
    M = dense_action(dense_matrix(K, R), action)
    x = rng.standard_normal((nrhs, in_blocks(action, shape), shape[2]))
    y = op.apply(x, op=action)
    assert y.shape == (nrhs, out_blocks(action, shape), shape[2])
    for r in range(nrhs):
        assert rel_err(y[r].ravel(), M @ x[r].ravel()) < FP64_TOL


def test_empty_batch_gives_empty_output(rng):
    op = make(rng.standard_normal((2, 3, 5)))
    assert (op @ np.zeros((0, 3, 5))).shape == (0, 2, 5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8, np.float16])
def test_real_dtypes_are_cast(rng, dtype):
    shape = (2, 3, 6)
    K = rng.integers(-4, 5, shape)  # integer kernels: cast too
    op = make(K.astype(dtype) if dtype != np.uint8 else np.abs(K).astype(dtype))
    Kf = (K if dtype != np.uint8 else np.abs(K)).astype(np.float64)
    x = rng.integers(0, 7, (3, 6)).astype(dtype)
    expected = dense_matrix(Kf) @ x.astype(np.float64).ravel()
    assert rel_err((op @ x).ravel(), expected) < FP64_TOL
    # A list of numbers is an array too.
    assert rel_err((op @ x.astype(np.float64).tolist()).ravel(), expected) < FP64_TOL


def test_complex_and_non_numeric_inputs_are_refused(rng):
    op = make(rng.standard_normal((2, 3, 4)))
    with pytest.raises(TypeError, match=r"x is complex \(complex128\): shiftop operators are real"):
        op @ (np.ones((3, 4)) + 1j)
    with pytest.raises(TypeError, match="x has dtype bool: expected a real numeric array"):
        op @ np.ones((3, 4), dtype=bool)
    with pytest.raises(TypeError, match="x has dtype <U1"):
        op @ np.full((3, 4), "a")
    with pytest.raises(TypeError, match=r"K is complex \(complex64\)"):
        make(np.ones((2, 3, 4), np.complex64))
    with pytest.raises(TypeError, match="first_row has dtype object"):
        make(np.ones((2, 3, 4)), np.full((2, 3, 4), None, dtype=object))


def test_layouts_give_the_same_answer(rng):
    shape = (3, 4, 9)
    K = rng.standard_normal(shape)
    op = make(K)
    A = dense_matrix(K)
    base = rng.standard_normal((2, 4, 18))
    inputs = {
        "fortran": np.asfortranarray(base[0, :, :9]),
        "strided": base[0, :, ::2],
        "negative": base[0, ::-1, ::-2],
        "transposed": rng.standard_normal((9, 4)).T,
    }
    for name, x in inputs.items():
        assert not x.flags.c_contiguous, name
        assert rel_err((op @ x).ravel(), A @ np.ascontiguousarray(x).ravel()) < FP64_TOL, name
    batch = np.asfortranarray(rng.standard_normal((3, 4, 9)))
    y = op @ batch
    for r in range(3):
        assert rel_err(y[r].ravel(), A @ batch[r].ravel()) < FP64_TOL
    # Kernels in Fortran order and as a strided view.
    Kf = np.asfortranarray(K)
    assert rel_err((make(Kf) @ inputs["fortran"]).ravel(), (op @ inputs["fortran"]).ravel()) == 0
    Kbig = rng.standard_normal((3, 4, 18))
    Ks = Kbig[:, :, ::2]
    x = rng.standard_normal((4, 9))
    assert rel_err((make(Ks) @ x).ravel(), dense_matrix(np.ascontiguousarray(Ks)) @ x.ravel()) < FP64_TOL


def test_out_is_written_in_place_and_fully(rng):
    shape = (3, 2, 8)
    K = rng.standard_normal(shape)
    op = make(K, max_rhs=2)
    A = dense_matrix(K)
    x = rng.standard_normal((5, 2, 8))
    out = np.full((5, 3, 8), np.nan)  # NaN-poisoned: every entry must be overwritten
    address = out.__array_interface__["data"][0]
    y = op.apply(x, out=out)
    assert y is out and out.__array_interface__["data"][0] == address
    assert np.isfinite(out).all()
    for r in range(5):
        assert rel_err(out[r].ravel(), A @ x[r].ravel()) < FP64_TOL
    adj = np.full((2, 8), np.nan)
    d = rng.standard_normal((3, 8))
    assert op.H.apply(d, out=adj) is adj
    assert rel_err(adj.ravel(), A.T @ d.ravel()) < FP64_TOL


def test_c_contiguous_input_reaches_the_core_without_a_copy(rng):
    # The core refuses overlapping input and output; it can only see the overlap if it received
    # the caller's own buffer for x (a copy would not overlap out).
    op = make(rng.standard_normal((3, 3, 6)))
    x = rng.standard_normal((3, 6))
    with pytest.raises(ValueError, match="input and output of FadjF overlap in memory"):
        op.normal().apply(x, out=x)


def test_bad_out_arrays_are_refused(rng):
    op = make(rng.standard_normal((3, 2, 8)))
    x = rng.standard_normal((2, 8))
    with pytest.raises(TypeError, match="out has dtype float32: expected float64"):
        op.apply(x, out=np.empty((3, 8), np.float32))
    with pytest.raises(ValueError, match=r"out of F must have shape \(3, 8\), got \(8, 3\)"):
        op.apply(x, out=np.empty((8, 3)))
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        op.apply(x, out=np.empty((3, 8), order="F"))
    read_only = np.empty((3, 8))
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        op.apply(x, out=read_only)
    with pytest.raises(TypeError, match="out must be a NumPy array, got list"):
        op.apply(x, out=[0.0] * 24)


def test_wrong_shapes_and_ops_are_refused_with_the_expected_shape(rng):
    op = make(rng.standard_normal((3, 2, 8)))
    with pytest.raises(ValueError, match=r"input of F must have shape \(2, 8\) or \(nrhs, 2, 8\), got \(3, 8\)"):
        op @ np.ones((3, 8))
    with pytest.raises(ValueError, match=r"input of Fadj must have shape \(3, 8\) or \(nrhs, 3, 8\), got \(16,\)"):
        op.H @ np.ones(16)
    with pytest.raises(ValueError, match=r"got \(1, 1, 2, 8\)"):
        op @ np.ones((1, 1, 2, 8))
    with pytest.raises(ValueError, match="op 'G': expected one of 'F', 'Fadj', 'FadjF', 'FFadj'"):
        op.apply(np.ones((2, 8)), op="G")
    with pytest.raises(TypeError, match=r"x @ op is not defined: apply the adjoint, op.H @ x"):
        np.ones((3, 8)) @ op


def test_bad_kernels_and_options_are_refused(rng):
    K = rng.standard_normal((2, 3, 4))
    with pytest.raises(ValueError, match=r"K must have shape \(Nd, Nm, Nt\), got shape \(3, 4\)"):
        make(K[0])
    with pytest.raises(ValueError, match=r"first_row must have the shape of K \(2, 3, 4\), got shape \(2, 3, 5\)"):
        make(K, np.ones((2, 3, 5)))
    R = rng.standard_normal(K.shape)
    with pytest.raises(shiftop.Error, match="disagree at lag 0"):
        make(K, R)
    bad = K.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match=r"K\[1, 2, 3\] is nan: kernels must be finite \(pass allow_nonfinite=True"):
        make(bad)
    assert np.isnan(make(bad, allow_nonfinite=True) @ np.ones((3, 4))).any()
    with pytest.raises(ValueError, match="backend: expected cpu or cuda, got 'gpu'"):
        make(K, backend="gpu")
    with pytest.raises(ValueError, match="planning: expected estimate or measure, got 'fast'"):
        make(K, planning="fast")
    with pytest.raises(ValueError, match="invalid max_rhs 0: expected at least 1"):
        make(K, max_rhs=0)
    with pytest.raises(ValueError, match=r"threads=-1: expected None \(OpenMP's default\)"):
        make(K, threads=-1)
    with pytest.raises(ValueError, match="precision"):
        make(K, precision="DDXDD")
    with pytest.raises(TypeError):
        make(K, "DSSDD")  # options are keyword-only: a string is not a first block row


def test_shiftop_errors_are_value_errors():
    assert shiftop.Error is shiftop._core.Error and issubclass(shiftop.Error, ValueError)


def test_nonfinite_input_propagates(rng):
    # Documented behaviour: like NumPy's @, no check; a NaN reaches every time step of the
    # outputs it touches through the FFT.
    op = make(rng.standard_normal((2, 3, 8)))
    x = rng.standard_normal((3, 8))
    x[1, 5] = np.nan
    assert np.isnan(op @ x).all()
    x[1, 5] = np.inf
    assert not np.isfinite(op @ x).any()


@pytest.mark.parametrize("precision", ["DSSDD", "SSSSS", "dsdsd"])
def test_precision_setting_and_per_call_precision(rng, precision):
    shape = (3, 4, 32)
    K, R = random_general(rng, shape)
    op = make(K, R)
    A = dense_matrix(K, R)
    x = rng.standard_normal((4, 32))
    expected = A @ x.ravel()
    fp64 = rel_err((op @ x).ravel(), expected)
    per_call = rel_err(op.apply(x, precision=precision).ravel(), expected)
    assert op.precision == "DDDDD"  # switched back
    assert fp64 < FP64_TOL and 10 * FP64_TOL < per_call < FP32_TOL
    op.precision = precision
    assert op.precision == precision.upper()
    assert rel_err((op @ x).ravel(), expected) == per_call
    assert rel_err(op.apply(x, precision="DDDDD").ravel(), expected) == fp64
    assert op.precision == precision.upper()


def test_bad_precision_leaves_the_operator_unchanged(rng):
    op = make(rng.standard_normal((2, 2, 4)), precision="DSSDD")
    with pytest.raises(ValueError, match="DDSX"):
        op.precision = "DDSX"
    with pytest.raises(ValueError, match="SSSSSS"):
        op.apply(np.ones((2, 4)), precision="SSSSSS")
    with pytest.raises(TypeError, match="precision must be a string"):
        op.precision = 5
    with pytest.raises(TypeError, match="precision must be a string"):
        op.apply(np.ones((2, 4)), precision=5)
    assert op.precision == "DSSDD"


def test_properties_and_views(rng):
    op = make(rng.standard_normal((3, 4, 10)), max_rhs=3)
    assert op.shape == (30, 40) and op.kernel_shape == (3, 4, 10)
    assert op.dtype == np.float64 and op.backend == "cpu" and op.device is None
    assert op.memory_bytes > 0
    assert op.H.shape == (40, 30) and op.H.H is op and op.H is op.H
    assert op.normal().shape == (40, 40) and op.H.normal().shape == (30, 30)
    assert op.normal().H == op.normal() and op.normal() != op.H.normal()
    assert op.H.input_shape == (3, 10) and op.H.output_shape == (4, 10)
    op @ np.ones((4, 10))
    times = op.phase_times
    assert set(times) == {"pad", "fft", "layout", "gemv", "ifft", "unpad"}
    assert all(t >= 0 for t in times.values()) and sum(times.values()) > 0
    text = repr(op)
    assert "(Nd, Nm, Nt) = (3, 4, 10)" in text and "DDDDD" in text and "cpu" in text
    assert "F*" in repr(op.H) and "F*F" in repr(op.normal()) and "FF*" in repr(op.H.normal())
    with pytest.raises(TypeError, match="wraps a shiftop._core.Plan, got ndarray"):
        shiftop.Operator(np.ones((3, 4, 10)))


def test_threads_sharing_one_operator_get_correct_results(rng):
    K = rng.standard_normal((4, 5, 64))
    op = make(K, max_rhs=2)
    A = dense_matrix(K)
    xs = rng.standard_normal((8, 3, 5, 64))
    results = [None] * len(xs)

    def work(i):
        for _ in range(5):
            results[i] = op @ xs[i]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, y in zip(xs, results):
        for r in range(3):
            assert rel_err(y[r].ravel(), A @ x[r].ravel()) < FP64_TOL


def test_help_documents_the_api():
    text = pydoc.render_doc(shiftop.Operator, renderer=pydoc.plaintext)
    for name in ("from_kernels", "from_file", "apply", "normal", "precision", "kernel_shape",
                 "aslinearoperator", "aspylops", "phase_times", "memory_bytes"):
        assert name in text
    public = [n for n in dir(shiftop.Operator) if not n.startswith("_")]
    for name in public:
        assert getattr(shiftop.Operator, name).__doc__, f"Operator.{name} has no docstring"
    assert shiftop.__doc__ and shiftop._core.Plan.__doc__


def write_fftmatvec_dir(root, K):
    """FFTMatvec's matrix directory, written independently with h5py: binary/meta_adj (Nd, Nm,
    Nt, prefix, extension, reindex, p2q, and two more flags) and block row i in
    binary/adj/vec_<i:06d>.h5, dataset 'vec' = K[i].ravel()."""
    import h5py

    nd, nm, nt = K.shape
    binary = root / "binary"
    (binary / "adj").mkdir(parents=True)
    (binary / "meta_adj").write_text(f"{nd}\n{nm}\n{nt}\nadj/vec_\n.h5\n1\n0\n1\n0\n")
    for i in range(nd):
        with h5py.File(binary / f"adj/vec_{i:06d}.h5", "w") as f:
            vec = f.create_dataset("vec", data=K[i].reshape(-1))
            vec.attrs["reindex"] = np.int32(1)
            vec.attrs["n_param"] = np.int32(nm)
            vec.attrs["param_steps"] = np.int32(nt)
    return root


def test_from_file_reads_every_format_the_tool_reads(rng, tmp_path):
    import h5py

    shape = (3, 2, 7)
    K, R = random_general(rng, shape)
    np.save(tmp_path / "K.npy", K)
    np.save(tmp_path / "K32.npy", K.astype(np.float32))
    with h5py.File(tmp_path / "F.h5", "w") as f:
        f["kernels"] = K
    with h5py.File(tmp_path / "G.h5", "w") as f:
        f["kernels"] = K
        f["first_row"] = R
    write_fftmatvec_dir(tmp_path / "dir", K)
    cases = {
        "K.npy": dense_matrix(K),
        "K32.npy": dense_matrix(K.astype(np.float32).astype(np.float64)),
        "F.h5": dense_matrix(K),
        "G.h5": dense_matrix(K, R),
        "dir": dense_matrix(K),
    }
    for name, A in cases.items():
        op = shiftop.Operator.from_file(tmp_path / name, planning="estimate", max_rhs=2)
        assert op.kernel_shape == shape and op.triangular == (name != "G.h5"), name
        x = rng.standard_normal((3, 2, 7))
        y = op @ x
        for r in range(3):
            assert rel_err(y[r].ravel(), A @ x[r].ravel()) < FP64_TOL, name
        d = rng.standard_normal((3, 7))
        assert rel_err((op.H @ d).ravel(), A.T @ d.ravel()) < FP64_TOL, name
    op = shiftop.Operator.from_file(str(tmp_path / "K.npy"), precision="DSSDD", planning="estimate")
    assert op.precision == "DSSDD"


def test_from_file_refuses_missing_and_bad_files(rng, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothere.h5: no such operator file or directory"):
        shiftop.Operator.from_file(tmp_path / "nothere.h5")
    (tmp_path / "text.h5").write_text("not HDF5")
    with pytest.raises(ValueError, match="text.h5"):
        shiftop.Operator.from_file(tmp_path / "text.h5")
    np.save(tmp_path / "two_d.npy", np.ones((3, 4)))
    with pytest.raises(ValueError, match="two_d.npy"):
        shiftop.Operator.from_file(tmp_path / "two_d.npy")
    K = rng.standard_normal((2, 2, 3))
    K[0, 1, 2] = np.inf
    np.save(tmp_path / "inf.npy", K)
    with pytest.raises(ValueError, match="inf.npy"):
        shiftop.Operator.from_file(tmp_path / "inf.npy")
    op = shiftop.Operator.from_file(tmp_path / "inf.npy", allow_nonfinite=True, planning="estimate")
    assert op.kernel_shape == (2, 2, 3)
    with pytest.raises(ValueError, match="backend: expected cpu or cuda, got 'tpu'"):
        shiftop.Operator.from_file(tmp_path / "inf.npy", backend="tpu")
