"""`shiftop circ matvec` and `shiftop circ info` against SciPy, and `shiftop info` and `shiftop convert`
on a block-circulant file: files written here with h5py (the
format of issue 17: datasets indptr, indices, data, the CSR of the first block row A; attributes
mB, nB, k), products compared with SciPy's product by C assembled block by block with
scipy.sparse.bmat (block (i, j) = A_{(j-i) mod k}), FP32 and FP64, one and many right-hand sides,
every CPU kernel, the transpose; info's counts against NumPy; every bad input refused with one
line and no output left behind. The tests marked gpu compare --backend cuda with the CPU."""
import io
import json
import subprocess

import h5py
import numpy as np
import pytest
import scipy.sparse
from test_fftmatvec_interop import SHIFTOP, shiftop
from test_svd_cli import gpu_run, have_gpu, refused  # noqa: F401 (gpu_run is a fixture)

KERNELS = ["auto", "block-spmv", "mm", "mm2", "mm2s"]


def random_row(rng, k, mb, nb, dtype, density=0.3):
    """A random first block row A (mb x k*nb, CSR) with an empty row and an empty block."""
    a = scipy.sparse.random(mb, k * nb, density=density, random_state=rng, format="lil")
    if mb > 1:
        a[mb // 2, :] = 0
    if k > 1:
        a[:, nb:2 * nb] = 0
    return scipy.sparse.csr_matrix(a, dtype=dtype)


def assembled(a, k):
    """C from A by SciPy alone: block (i, j) = A_{(j-i) mod k} (Romero et al., eq. 1)."""
    nb = a.shape[1] // k
    blocks = [a[:, d * nb:(d + 1) * nb] for d in range(k)]
    return scipy.sparse.bmat([[blocks[(j - i) % k] for j in range(k)] for i in range(k)]).tocsr()


def write_row(path, a, k, index_dtype=np.int64):
    with h5py.File(path, "w") as f:
        f.create_dataset("indptr", data=a.indptr.astype(index_dtype))
        f.create_dataset("indices", data=a.indices.astype(index_dtype))
        f.create_dataset("data", data=a.data)
        f.attrs["mB"] = a.shape[0]
        f.attrs["nB"] = a.shape[1] // k
        f.attrs["k"] = k


def matvec(tmp_path, x, *extra):
    np.save(tmp_path / "x.npy", x)
    done = shiftop("circ", "matvec", "--operator", tmp_path / "A.h5", "--input", tmp_path / "x.npy",
                   "--output", tmp_path / "y.npy", *extra)
    return np.load(tmp_path / "y.npy"), done


def rel_err(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-300))


# Measured worst relative errors (max |y - y_scipy| / max |y_scipy|) over these cases and every
# kernel: FP64 8.7e-16, FP32 4.4e-7; bounds about 6x and 9x that.
TOL = {np.float64: 5e-15, np.float32: 4e-6}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k,mb,nb", [(1, 5, 4), (2, 3, 7), (3, 6, 5), (150, 3, 2)])
@pytest.mark.parametrize("transpose", [False, True])
def test_matvec_equals_scipy(tmp_path, dtype, k, mb, nb, transpose):
    rng = np.random.default_rng(k * 100 + mb)
    a = random_row(rng, k, mb, nb, dtype)
    write_row(tmp_path / "A.h5", a, k)
    c = assembled(a.astype(np.float64), k)
    c = c.T.tocsr() if transpose else c
    extra = ["--transpose"] if transpose else []
    x = rng.standard_normal(c.shape[1]).astype(dtype)
    y, _ = matvec(tmp_path, x, *extra)
    assert y.dtype == dtype and y.shape == (c.shape[0],)
    assert rel_err(y, c @ x.astype(np.float64)) <= TOL[dtype]
    xs = rng.standard_normal((3, c.shape[1])).astype(dtype)
    ys, _ = matvec(tmp_path, xs, *extra)
    assert ys.dtype == dtype and ys.shape == (3, c.shape[0])
    assert rel_err(ys, (c @ xs.astype(np.float64).T).T) <= TOL[dtype]


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel(tmp_path, kernel):
    rng = np.random.default_rng(5)
    k, mb, nb = 7, 9, 11
    a = random_row(rng, k, mb, nb, np.float64, density=0.2)
    write_row(tmp_path / "A.h5", a, k, np.int32)
    c = assembled(a, k)
    x = rng.standard_normal((2, k * nb))
    y, done = matvec(tmp_path, x, "--kernel", kernel, "--json")
    assert rel_err(y, (c @ x.T).T) <= TOL[np.float64]
    # no probe for one product: auto is mm2s with s = 8
    want = "cpu mm2s s=8" if kernel in ("auto", "mm2s") else f"cpu {kernel}"
    assert json.loads(done.stdout)["choices"] == want
    yt, _ = matvec(tmp_path, y, "--kernel", kernel, "--transpose")
    assert rel_err(yt, (c.T @ y.T).T) <= TOL[np.float64]


def test_json_and_text(tmp_path):
    rng = np.random.default_rng(6)
    a = random_row(rng, 4, 3, 5, np.float32)
    write_row(tmp_path / "A.h5", a, 4)
    _, done = matvec(tmp_path, np.ones(20, np.float32), "--json")
    out = json.loads(done.stdout)
    assert out["op"] == "C" and out["dtype"] == "float32" and out["nrhs"] == 1
    assert out["shape"] == {"k": 4, "mb": 3, "nb": 5, "rows": 12, "cols": 20}
    assert out["nnz"] == a.nnz and {"read_ms", "create_ms", "apply_ms", "write_ms"} <= out.keys()
    _, done = matvec(tmp_path, np.ones(12, np.float32), "--transpose")
    assert done.stdout.startswith("C^T on k=4 mb=3 nb=5 (12 x 20)")


def test_output_to_standard_output(tmp_path):
    rng = np.random.default_rng(11)
    a = random_row(rng, 3, 4, 5, np.float64)
    write_row(tmp_path / "A.h5", a, 3)
    x = rng.standard_normal((2, 15))
    np.save(tmp_path / "x.npy", x)
    run = subprocess.run([SHIFTOP, "circ", "matvec", "--operator", tmp_path / "A.h5", "--input",
                          tmp_path / "x.npy", "--output", "-"], capture_output=True, check=True)
    y = np.load(io.BytesIO(run.stdout))
    assert rel_err(y, (assembled(a, 3) @ x.T).T) <= TOL[np.float64]
    assert run.stderr.decode().startswith("C on k=3 mb=4 nb=5")


def test_info_counts(tmp_path):
    rng = np.random.default_rng(7)
    k, mb, nb = 5, 8, 6
    a = random_row(rng, k, mb, nb, np.float64)
    write_row(tmp_path / "A.h5", a, k, np.int32)
    out = json.loads(shiftop("circ", "info", tmp_path / "A.h5", "--json").stdout)
    per_row = np.diff(a.indptr)
    per_col = np.bincount(a.indices % nb, minlength=nb)
    c = assembled(a, k)
    assert (out["k"], out["mb"], out["nb"], out["nnz"]) == (k, mb, nb, a.nnz)
    assert out["nnz_of_C"] == c.nnz == k * a.nnz
    assert out["value_type"] == "float64" and out["index_type"] == "int32"
    # The rows of C and of C^T (C's columns), counted in the assembled C: k*mb and k*nb of them.
    c_rows, ct_rows = np.diff(c.indptr), np.diff(c.tocsc().indptr)
    assert out["nnz_per_row_C"] == {"min": int(c_rows.min()), "mean": c_rows.mean(),
                                    "max": int(c_rows.max()), "empty": int((c_rows == 0).sum())}
    assert out["nnz_per_row_C"]["empty"] == k * (per_row == 0).sum() > 0
    assert out["nnz_per_row_Ct"] == {"min": int(ct_rows.min()), "mean": ct_rows.mean(),
                                     "max": int(ct_rows.max()), "empty": int((ct_rows == 0).sum())}
    assert out["nnz_per_row_Ct"]["max"] == per_col.max()
    assert out["empty_blocks"] == 1
    assert out["bytes_A"] == a.nnz * 12 + (mb + 1) * 4
    assert out["bytes_C_explicit"] == c.nnz * 12 + (k * mb + 1) * 4
    text = shiftop("circ", "info", tmp_path / "A.h5").stdout
    assert f"A: {a.nnz} nonzeros (float64 values, int32 indices), 1 of 5 blocks empty" in text
    assert f"({(c_rows == 0).sum()} rows empty)" in text


def test_matvec_reads_fortran_order_as_svd_does(tmp_path):
    """A Fortran-order (nrhs, k*nb) file holds the same vectors as its C-order twin."""
    rng = np.random.default_rng(12)
    a = random_row(rng, 3, 4, 5, np.float64)
    write_row(tmp_path / "A.h5", a, 3)
    x = rng.standard_normal((3, 15))
    y_c, _ = matvec(tmp_path, x)
    y_f, done = matvec(tmp_path, np.asfortranarray(x))
    assert done.returncode == 0, done.stderr
    assert np.isfortran(np.load(tmp_path / "x.npy", mmap_mode="r"))  # as it was written
    np.testing.assert_array_equal(y_f, y_c)
    assert rel_err(y_f, (assembled(a, 3) @ x.T).T) <= TOL[np.float64]


def test_help():
    assert "Usage:" in shiftop("circ", "matvec", "--help").stdout
    assert "Usage:" in shiftop("circ", "info", "--help").stdout
    assert "matvec" in shiftop("circ", "--help").stdout


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(8)
    write_row(tmp_path / "A.h5", random_row(rng, 3, 4, 5, np.float64), 3)
    write_row(tmp_path / "A32.h5", random_row(rng, 3, 4, 5, np.float32), 3)
    np.save(tmp_path / "x.npy", np.ones(15))
    return tmp_path


def circ_matvec(tmp, *args, operator="A.h5", input="x.npy"):
    return ("circ", "matvec", "--operator", tmp / operator, "--input", tmp / input, "--output",
            tmp / "out.npy", *args)


@pytest.mark.parametrize("make,message", [
    (lambda: np.ones(14), "shape (14,): expected (15,) or (nrhs, 15), k*nb = 3*5 values for C"),
    (lambda: np.ones((2, 12)), "shape (2, 12): expected (15,) or (nrhs, 15)"),
    (lambda: np.ones((1, 3, 5)), "shape (1, 3, 5): expected (15,)"),
    (lambda: np.ones(15, np.float32), "float32 values: expected float64"),
    (lambda: np.ones(15, np.int64), "not supported"),
    (lambda: np.r_[np.ones(14), np.nan], "NaN at vector 0, entry 14: expected finite values"),
])
def test_bad_vectors(files, make, message):
    np.save(files / "bad.npy", make())
    line = refused(files, *circ_matvec(files, input="bad.npy"))
    assert message in line
    assert not list(files.glob("*out.npy*"))


def test_bad_files_and_options(files):
    assert "nope.h5" in refused(files, *circ_matvec(files, operator="nope.h5"))
    assert "nope.npy" in refused(files, *circ_matvec(files, input="nope.npy"))
    assert "float64 values: expected float32" in refused(files,
                                                         *circ_matvec(files, operator="A32.h5"))
    assert "shape (15,): expected (12,) or (nrhs, 12), k*mb = 3*4 values for C^T" in refused(
        files, *circ_matvec(files, "--transpose"))
    assert "--kernel: expected auto, block-spmv, mm, mm2 or mm2s, got 'fast'" in refused(
        files, *circ_matvec(files, "--kernel", "fast"))
    # without a GPU --backend cuda is refused by name; with one, a CPU kernel for it is
    cuda = refused(files, *circ_matvec(files, "--backend", "cuda", "--kernel", "mm"))
    assert ("--kernel mm: chooses among the CPU products" if have_gpu() else "--backend cuda") \
        in cuda
    assert "--backend: expected cpu or cuda, got 'gpu'" in refused(
        files, *circ_matvec(files, "--backend", "gpu"))
    assert "x.npy" in refused(files, "circ", "matvec", "--operator", files / "A.h5", "--input",
                              files / "x.npy", "--output", files / "x.npy")
    np.save(files / "x.npy", np.ones(15))
    assert "x.npy" in refused(files, "circ", "info", files / "x.npy")
    assert not list(files.glob("*out.npy*"))


def test_bad_operator_file(files):
    a = random_row(np.random.default_rng(9), 3, 4, 5, np.float64)
    a.indices[0] = 15  # k*nb = 15: one past the last column
    write_row(files / "B.h5", a, 3)
    line = refused(files, *circ_matvec(files, operator="B.h5"))
    assert "B.h5" in line and "15" in line
    assert not list(files.glob("*out.npy*"))


@pytest.mark.parametrize("dtype,index_dtype", [(np.float64, np.int32), (np.float32, np.int64)])
def test_info_describes_a_circulant_file(tmp_path, dtype, index_dtype):
    """`shiftop info`, which describes every kind of file, from the attributes and dataset headers:
    the shape, the nonzeros, the value and index types and the bytes of what h5py wrote."""
    k, mb, nb = 4, 6, 5
    a = random_row(np.random.default_rng(21), k, mb, nb, dtype)
    path = tmp_path / "A.h5"
    write_row(path, a, k, index_dtype)
    stored = (mb + 1 + a.nnz) * np.dtype(index_dtype).itemsize + a.nnz * np.dtype(dtype).itemsize
    value, index = np.dtype(dtype).name, np.dtype(index_dtype).name
    assert json.loads(shiftop("info", path, "--json").stdout) == {
        "file": str(path), "format": "shiftop", "kind": "circulant",
        "shape": {"k": k, "mb": mb, "nb": nb, "rows": k * mb, "cols": k * nb}, "nnz": a.nnz,
        "dtype": value, "index_type": index, "bytes": stored}
    assert shiftop("info", path).stdout == (
        f"{path}: shiftop block-circulant operator k=4 mb=6 nb=5 (24 x 20), first block row of "
        f"{a.nnz} nonzeros ({value} values, {index} indices), {stored} bytes\n")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_convert_copies_a_circulant_file(tmp_path, dtype):
    """The one format of a block-circulant operator, copied: the same shape, CSR and values (float32
    stays float32), indices written as int32 since they fit, an existing output replaced as for
    the other kinds; the copy's products equal the original's."""
    k = 3
    a = random_row(np.random.default_rng(22), k, 4, 5, dtype)
    source, target = tmp_path / "A.h5", tmp_path / "B.h5"
    write_row(source, a, k, np.int64)
    target.write_bytes(b"replaced")
    done = shiftop("convert", source, target)
    assert done.stdout == (f"{target}: wrote the block-circulant operator k=3 mb=4 nb=5 (12 x 15) "
                           f"({a.nnz} nonzeros, {np.dtype(dtype).name}) from {source}\n")
    with h5py.File(source, "r") as f, h5py.File(target, "r") as g:
        assert {n: int(g.attrs[n]) for n in ("k", "mB", "nB")} == {"k": 3, "mB": 4, "nB": 5}
        assert g["data"].dtype == dtype and g["indptr"].dtype == g["indices"].dtype == np.int32
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(g[name][()], f[name][()])
    assert json.loads(shiftop("info", target, "--json").stdout)["kind"] == "circulant"
    x = np.random.default_rng(23).standard_normal(15).astype(dtype)
    np.save(tmp_path / "x.npy", x)
    for operator, output in ((source, "ya.npy"), (target, "yb.npy")):
        shiftop("circ", "matvec", "--operator", operator, "--input", tmp_path / "x.npy",
                "--output", tmp_path / output)
    np.testing.assert_array_equal(np.load(tmp_path / "yb.npy"), np.load(tmp_path / "ya.npy"))


def test_convert_refuses_what_a_circulant_file_cannot_become(files):
    source = files / "A.h5"
    for args, message in [
        (("B.npy",), "output '" + str(files / "B.npy") + "': ends in '.npy': expected"),
        (("B.h5", "--to", "npy"), f"--to npy: {source} is a block-circulant operator, which "
         "shiftop stores only in its own .h5 (the CSR of its first block row): expected --to auto "
         "or shiftop"),
        (("B", "--to", "fftmatvec"), "--to fftmatvec: " + str(source) + " is a block-circulant"),
        (("B.h5", "--rows", "0:1"), "--rows/--cols select part of a block Toeplitz operator: "
         f"{source} is a block-circulant operator"),
        (("B.h5", "--space", "data"), "--space names the space of a vector: "),
        (("B.h5", "--allow-nonfinite"), f"--allow-nonfinite: {source} is a block-circulant "
         "operator, whose values shiftop keeps finite"),
    ]:
        line = refused(files, "convert", source, files / args[0], *args[1:])
        assert message in line, line
    assert sorted(p.name for p in files.iterdir()) == ["A.h5", "A32.h5", "x.npy"]


def test_info_names_every_kind_it_reads(tmp_path):
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f.create_dataset("values", data=np.ones(3))
    assert refused(tmp_path, "info", tmp_path / "other.h5").endswith(
        "expected dataset 'kernels' (an operator), 'vector' (a shiftop vector), 'vec' (an "
        "FFTMatvec vector) or 'indptr' (a block-circulant operator); it has values")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transpose", [False, True])
def test_cuda_equals_scipy(tmp_path, gpu_run, dtype, transpose):  # noqa: F811
    rng = np.random.default_rng(10)
    k, mb, nb = 150, 7, 5
    a = random_row(rng, k, mb, nb, dtype, density=0.1)
    write_row(tmp_path / "A.h5", a, k)
    c = assembled(a.astype(np.float64), k)
    c = c.T.tocsr() if transpose else c
    x = rng.standard_normal((2, c.shape[1])).astype(dtype)
    y, _ = matvec(tmp_path, x, "--backend", "cuda", *(["--transpose"] if transpose else []))
    assert rel_err(y, (c @ x.astype(np.float64).T).T) <= 10 * TOL[dtype]
