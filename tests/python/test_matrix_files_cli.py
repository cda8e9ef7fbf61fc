"""Matrix inputs of `shiftop svd`, `gsvd` and `regpath --laplacian` (io::read_matrix<T>) written by
NumPy and h5py, not by shiftop: the extension picks the reader (.npy, .h5 or .hdf5, any case);
h5py's complex datasets (a compound of "r" and "i") are read; the same matrix in either format
gives byte-identical outputs; any other extension is refused in one line, leaving no output."""
import json

import h5py
import numpy as np
import pytest
from test_fftmatvec_interop import shiftop
from test_gsvd_cli import prescribed_pair
from test_regpath_cli import NM, path_laplacian, write_problem
from test_svd_cli import EPS32, EPS64, check_factorisation, random_matrix, refused


def svd_outputs(tmp_path, name, *extra):
    """`shiftop svd --input tmp_path/name` with vectors: (s, U, V) as loaded and as bytes."""
    shiftop("svd", "--input", tmp_path / name, "--output", tmp_path / "s.npy", "--vectors",
            tmp_path / "vec", *extra)
    files = [tmp_path / "s.npy", tmp_path / "vec_U.npy", tmp_path / "vec_V.npy"]
    return [np.load(f) for f in files], [f.read_bytes() for f in files]


@pytest.mark.parametrize("dtype,eps", [(np.complex128, EPS64), (np.complex64, EPS32),
                                       (np.float32, EPS32), (np.float64, EPS64)])
@pytest.mark.parametrize("extension", [".h5", ".hdf5", ".H5"])
def test_svd_of_an_h5py_dataset_equals_numpy_and_the_npy_run(tmp_path, dtype, eps, extension):
    """h5py stores complex as a compound {r, i}; shiftop refused it before ("stores compound
    values"). The values are checked against numpy.linalg.svd (check_factorisation's bounds),
    and every output is the same bytes as from the same matrix saved by numpy.save."""
    a = random_matrix((7, 5), dtype)
    with h5py.File(tmp_path / f"A{extension}", "w") as f:
        f.create_dataset("a", data=a)
    (s, u, v), from_h5 = svd_outputs(tmp_path, f"A{extension}")
    assert s.dtype == (np.float32 if eps == EPS32 else np.float64) and u.dtype == a.dtype
    check_factorisation(a, s, u, v, eps)
    np.save(tmp_path / "A.npy", np.asfortranarray(a))
    assert svd_outputs(tmp_path, "A.npy")[1] == from_h5


def test_an_upper_case_npy_extension_is_read_as_npy(tmp_path):
    """"A.NPY" was read as HDF5 ("not an HDF5 file"); outputs' extensions were already compared
    case-insensitively."""
    a = random_matrix((4, 3), np.float64)
    with open(tmp_path / "A.NPY", "wb") as f:
        np.save(f, a)
    (s, u, v), _ = svd_outputs(tmp_path, "A.NPY")
    check_factorisation(a, s, u, v, EPS64)


def test_gsvd_reads_h5py_and_numpy_files_alike(tmp_path):
    """F from h5py (.hdf5, complex128 compound), G from numpy (.npy, float32, promoted): the
    same bytes as with both from numpy.save, and the JSON says the pair was complex."""
    F, G = prescribed_pair(6, 5, 4, [3.0, 2.0, 1.0, 0.5], complex_=True)
    G = G.real.astype(np.float32)
    with h5py.File(tmp_path / "F.hdf5", "w") as f:
        f.create_dataset("F", data=F)
    np.save(tmp_path / "F.npy", F)
    np.save(tmp_path / "G.npy", G)
    outputs = []
    for f_name in ("F.hdf5", "F.npy"):
        done = shiftop("gsvd", "--f", tmp_path / f_name, "--g", tmp_path / "G.npy", "--output",
                       tmp_path / f"s_{f_name}.npy", "--vectors", tmp_path / f"v_{f_name}",
                       "--json")
        assert json.loads(done.stdout)["computed_in"] == "complex128"
        outputs.append([(tmp_path / f"{prefix}_{f_name}{suffix}").read_bytes()
                        for prefix, suffix in [("s", ".npy"), ("v", "_u.npy"), ("v", "_x.npy")]])
    assert outputs[0] == outputs[1]


def test_regpath_reads_an_h5py_laplacian(tmp_path):
    """--laplacian read only .npy (any name); an h5py .h5 Laplacian now gives the same path."""
    op, *_ = write_problem(tmp_path)
    lap = path_laplacian(NM)
    np.save(tmp_path / "lap.npy", lap)
    with h5py.File(tmp_path / "lap.h5", "w") as f:
        f.create_dataset("L", data=lap)
    runs = []
    for name in ("lap.npy", "lap.h5"):
        done = shiftop("regpath", op, tmp_path / "d.npy", "--laplacian", tmp_path / name,
                       "--alphas", "0.1,1", "-o", tmp_path / f"m_{name}.npy", "--json")
        runs.append((json.loads(done.stdout)["residual_norms"], (tmp_path / f"m_{name}.npy").read_bytes()))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name", ["A.txt", "A", "A.npz"])
def test_other_extensions_are_refused_naming_the_file(tmp_path, name):
    """Any name but .npy was read as HDF5 ("not an HDF5 file", even for an .npy under another
    name); now the extension picks the reader and any other is refused as such."""
    with open(tmp_path / name, "wb") as f:
        np.save(f, np.eye(3))
    line = refused(tmp_path, "svd", "--input", tmp_path / name, "--output", tmp_path / "s.npy")
    assert f"{tmp_path / name}: " in line, line
    assert "expected a matrix file named .npy, .h5 or .hdf5" in line, line
    line = refused(tmp_path, "gsvd", "--f", tmp_path / name, "--g", tmp_path / name, "--output",
                   tmp_path / "s.npy")
    assert "expected a matrix file named .npy, .h5 or .hdf5" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
