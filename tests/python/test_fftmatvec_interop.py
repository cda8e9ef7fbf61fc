"""FFTMatvec interoperability of `shiftop`: matrix directories and vector files written here by an
independent h5py script, in the layout FFTMatvec reads (binary/meta_adj + one HDF5 file per block
row), give the dense-reference results of F, F* and F*F, and the files shiftop writes carry exactly
the attributes FFTMatvec writes. FFTMatvec's own files work unchanged: eight-line meta_adj files
(as in FFTMatvec's test data), and attributes FFTMatvec ignores, carried through conversions."""
import json
import os
import re
import subprocess

import h5py  # required: a missing h5py fails the suite (the README's install provides it)
import numpy as np
import pytest

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")
ND, NM, NT = 3, 5, 7


def write_fftmatvec_dir(root, kernels, prefix="adj/vec_", p2q=0, checksum=0, attr_type=np.int32,
                        extra=None, checksum_line=True):
    """FFTMatvec's matrix directory: meta_adj's nine lines (eight without the checksum line, as in
    FFTMatvec's test/data/test_mat*/binary/meta_adj) and block row i in binary/<prefix><i:06d>.h5,
    dataset 'vec' = kernels[i].ravel() (SOTI: block outer, time inner). `extra` maps attribute
    names to a value, or to a function of the row giving one."""
    nd, nm, nt = kernels.shape
    binary = root / "binary"
    (binary / prefix).parent.mkdir(parents=True, exist_ok=True)
    last = f"{checksum}\n" if checksum_line else ""
    (binary / "meta_adj").write_text(f"{nd}\n{nm}\n{nt}\n{prefix}\n.h5\n1\n{p2q}\n1\n{last}")
    for i in range(nd):
        with h5py.File(binary / f"{prefix}{i:06d}.h5", "w") as f:
            d = f.create_dataset("vec", data=kernels[i].reshape(-1))
            d.attrs["reindex"] = attr_type(1)
            d.attrs["n_param"] = attr_type(nm)
            d.attrs["param_steps"] = attr_type(nt)
            if checksum:
                d.attrs["checksum"] = attr_type(checksum)
            for key, value in (extra or {}).items():
                d.attrs[key] = value(i) if callable(value) else value


def write_vector(path, values, space, attr_type=np.int32, qoi=None, checksum=None, extra=None):
    """An FFTMatvec vector: 1-D 'vec' with n_param/param_steps or n_obs/obs_steps and reindex."""
    blocks, nt = values.shape
    with h5py.File(path, "w") as f:
        d = f.create_dataset("vec", data=values.reshape(-1))
        names = ("n_param", "param_steps") if space == "parameter" else ("n_obs", "obs_steps")
        d.attrs[names[0]] = attr_type(blocks)
        d.attrs[names[1]] = attr_type(nt)
        d.attrs["reindex"] = attr_type(1)
        if qoi is not None:
            d.attrs["qoi"] = attr_type(qoi)
        if checksum is not None:
            d.attrs["checksum"] = attr_type(checksum)
        for key, value in (extra or {}).items():
            d.attrs[key] = value


def dense(kernels):
    """The explicit (Nd*Nt) x (Nm*Nt) block lower-triangular Toeplitz matrix, SOTI ordering."""
    nd, nm, nt = kernels.shape
    lag = np.arange(nt)[:, None] - np.arange(nt)[None, :]
    a = np.zeros((nd, nt, nm, nt))
    for i in range(nd):
        for j in range(nm):
            a[i, :, j, :] = np.where(lag >= 0, kernels[i, j][np.clip(lag, 0, nt - 1)], 0.0)
    return a.reshape(nd * nt, nm * nt)


def shiftop(*args, check=True):
    return subprocess.run([SHIFTOP, *map(str, args)], check=check, capture_output=True, text=True)


def read_vec(path):
    with h5py.File(path, "r") as f:
        d = f["vec"]
        attrs = {k: (int(v), v.dtype) for k, v in d.attrs.items()}
        return d[...], attrs, list(f.keys()), dict(f.attrs)


@pytest.fixture
def problem(tmp_path):
    rng = np.random.default_rng(11)
    kernels = rng.standard_normal((ND, NM, NT))
    write_fftmatvec_dir(tmp_path / "F", kernels)
    m = rng.standard_normal((NM, NT))
    d = rng.standard_normal((ND, NT))
    write_vector(tmp_path / "m.h5", m, "parameter")
    write_vector(tmp_path / "d.h5", d, "data")
    return tmp_path, kernels, m, d


@pytest.mark.parametrize("op", ["F", "Fadj", "FadjF"])
def test_directory_gives_the_dense_reference(problem, op):
    tmp, kernels, m, d = problem
    a = dense(kernels)
    x, want, space = {"F": (m, a @ m.ravel(), "data"),
                      "Fadj": (d, a.T @ d.ravel(), "parameter"),
                      "FadjF": (m, a.T @ (a @ m.ravel()), "parameter")}[op]
    inp = tmp / ("m.h5" if x is m else "d.h5")
    shiftop("matvec", "--operator", tmp / "F", "--input", inp, "--output", tmp / "y.h5", "--op", op)
    y, attrs, datasets, root_attrs = read_vec(tmp / "y.h5")
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    # Exactly what FFTMatvec's Vector::save writes for this space: C ints, nothing else.
    blocks = ND if space == "data" else NM
    names = ("n_obs", "obs_steps") if space == "data" else ("n_param", "param_steps")
    assert attrs == {names[0]: (blocks, np.int32), names[1]: (NT, np.int32), "reindex": (1, np.int32)}
    assert datasets == ["vec"] and root_attrs == {}


def test_float_and_extra_attributes_are_accepted(tmp_path):
    rng = np.random.default_rng(12)
    kernels = rng.standard_normal((ND, NM, NT))
    write_fftmatvec_dir(tmp_path / "F", kernels, attr_type=np.float64,
                        extra={"solver": "MFEM", "time": 12.5, "flags": np.arange(3)})
    m = rng.standard_normal((NM, NT))
    write_vector(tmp_path / "m.h5", m, "parameter", attr_type=np.float32)
    shiftop("matvec", "--operator", tmp_path / "F", "--input", tmp_path / "m.h5", "--output",
            tmp_path / "y.h5")
    y, _, _, _ = read_vec(tmp_path / "y.h5")
    want = dense(kernels) @ m.ravel()
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_parameter_to_qoi_data_is_marked(tmp_path):
    rng = np.random.default_rng(13)
    kernels = rng.standard_normal((ND, NM, NT))
    write_fftmatvec_dir(tmp_path / "Q", kernels, prefix="p2q/vec_", p2q=1)
    write_vector(tmp_path / "m.h5", rng.standard_normal((NM, NT)), "parameter")
    shiftop("matvec", "--operator", tmp_path / "Q", "--input", tmp_path / "m.h5", "--output",
            tmp_path / "q.h5")
    _, attrs, _, _ = read_vec(tmp_path / "q.h5")
    assert attrs["qoi"] == (1, np.int32)
    # F* of QoI data: FFTMatvec requires the qoi mark on its input.
    write_vector(tmp_path / "plain.h5", rng.standard_normal((ND, NT)), "data")
    out = shiftop("matvec", "--operator", tmp_path / "Q", "--input", tmp_path / "plain.h5",
                  "--output", tmp_path / "never.h5", "--op", "Fadj", check=False)
    assert out.returncode != 0 and "expected qoi = 1" in out.stderr
    assert not (tmp_path / "never.h5").exists()
    shiftop("matvec", "--operator", tmp_path / "Q", "--input", tmp_path / "q.h5", "--output",
            tmp_path / "mq.h5", "--op", "Fadj")


def test_checksums_tie_vectors_to_their_operator(tmp_path):
    rng = np.random.default_rng(14)
    kernels = rng.standard_normal((ND, NM, NT))
    write_fftmatvec_dir(tmp_path / "C", kernels, checksum=4242)
    write_vector(tmp_path / "ok.h5", rng.standard_normal((NM, NT)), "parameter", checksum=4242)
    write_vector(tmp_path / "bad.h5", rng.standard_normal((NM, NT)), "parameter", checksum=7)
    shiftop("matvec", "--operator", tmp_path / "C", "--input", tmp_path / "ok.h5", "--output",
            tmp_path / "y.h5")
    out = shiftop("matvec", "--operator", tmp_path / "C", "--input", tmp_path / "bad.h5",
                  "--output", tmp_path / "never.h5", check=False)
    assert out.returncode != 0
    assert "checksum 7 does not match the operator's checksum 4242" in out.stderr


def test_partial_read_and_conversions_are_exact(problem):
    tmp, kernels, _, _ = problem
    shiftop("convert", tmp / "F", tmp / "part.npy", "--rows", "1:3", "--cols", ":4")
    np.testing.assert_array_equal(np.load(tmp / "part.npy"), kernels[1:3, :4])
    shiftop("convert", tmp / "F", tmp / "F.h5")
    with h5py.File(tmp / "F.h5", "r") as f:
        np.testing.assert_array_equal(f["kernels"][...], kernels)
        assert (f.attrs["nd"], f.attrs["nm"], f.attrs["nt"]) == (ND, NM, NT)
    np.save(tmp / "K.npy", kernels)
    shiftop("convert", tmp / "K.npy", tmp / "G")
    assert (tmp / "G" / "binary" / "meta_adj").read_text() == \
        (tmp / "F" / "binary" / "meta_adj").read_text()
    for i in range(ND):
        with h5py.File(tmp / "G" / "binary" / "adj" / f"vec_{i:06d}.h5", "r") as f:
            np.testing.assert_array_equal(f["vec"][...], kernels[i].ravel())
            assert {k: int(v) for k, v in f["vec"].attrs.items()} == \
                {"reindex": 1, "n_param": NM, "param_steps": NT}


def test_bad_input_leaves_no_output(problem):
    tmp, kernels, _, _ = problem
    bad = kernels.copy()
    bad[2, 1, 3] = np.nan
    write_fftmatvec_dir(tmp / "N", bad)
    before = sorted(p.name for p in tmp.iterdir())
    for out_name in ("y.h5", "y.npy"):
        out = shiftop("matvec", "--operator", tmp / "N", "--input", tmp / "m.h5", "--output",
                      tmp / out_name, check=False)
        assert out.returncode == 1 and out.stdout == ""
        assert "NaN at (row 2, parameter block 1, time 3)" in out.stderr
        assert out.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp.iterdir()) == before
    out = shiftop("matvec", "--operator", tmp / "N", "--input", tmp / "m.h5", "--output",
                  tmp / "y.h5", "--allow-nonfinite")
    assert np.isnan(read_vec(tmp / "y.h5")[0]).any()


def vec_attributes(path):
    """Every attribute of 'vec', as h5py reads it."""
    with h5py.File(path, "r") as f:
        return dict(f["vec"].attrs.items())


def assert_same_attributes(got, want):
    """Same names and values, integers still integers, floats still floats, strings strings."""
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        g, w = np.asarray(got[key]), np.asarray(value)
        assert g.shape == w.shape, key
        if w.dtype.kind in "iub":
            assert g.dtype.kind in "iu", key
        elif w.dtype.kind == "f":
            assert g.dtype.kind == "f", key
        np.testing.assert_array_equal(g, w, err_msg=key)


def test_eight_line_meta_adj_as_in_fftmatvecs_test_data(tmp_path):
    rng = np.random.default_rng(15)
    kernels = rng.standard_normal((ND, NM, NT))
    write_fftmatvec_dir(tmp_path / "F", kernels, checksum_line=False)
    assert (tmp_path / "F" / "binary" / "meta_adj").read_text().count("\n") == 8
    m = rng.standard_normal((NM, NT))
    write_vector(tmp_path / "m.h5", m, "parameter")
    shiftop("matvec", "--operator", tmp_path / "F", "--input", tmp_path / "m.h5", "--output",
            tmp_path / "y.h5")
    want = dense(kernels) @ m.ravel()
    np.testing.assert_allclose(read_vec(tmp_path / "y.h5")[0], want, rtol=1e-12,
                               atol=1e-12 * np.abs(want).max())
    info = json.loads(shiftop("info", tmp_path / "F", "--json").stdout)
    assert info["details"]["checksum"] == 0 and info["details"]["p2q"] is False
    # The p2q twin of FFTMatvec's test_mat_qoi: eight lines, p2q = 1.
    write_fftmatvec_dir(tmp_path / "Q", kernels, prefix="adj/vec_", p2q=1, checksum_line=False)
    assert json.loads(shiftop("info", tmp_path / "Q", "--json").stdout)["details"]["p2q"] is True


# What a solver's script writes beside FFTMatvec's attributes: Python ints (int64), floats, text,
# numpy arrays, a numpy bool, values that differ from row to row, and a 2-D array shiftop cannot hold.
EXTRA = {"prior_solved": np.bool_(True), "n_iterations": 17, "dt": 0.025, "solver": "MFEM",
         "t_grid": np.linspace(0.0, 1.0, 4), "grid_shape": np.array([64, 32]),
         "sensor_x": lambda i: 0.5 * i, "mesh": np.ones((2, 2))}


def test_round_trip_keeps_every_attribute(tmp_path):
    rng = np.random.default_rng(16)
    kernels = rng.standard_normal((ND, NM, NT))
    write_fftmatvec_dir(tmp_path / "A", kernels, checksum=31, extra=EXTRA)
    for target in ("A.h5", "A.npy"):
        out = shiftop("convert", tmp_path / "A", tmp_path / target).stdout
        # 'mesh' cannot be carried anywhere; .npy holds none of them; the summary names them.
        assert "FFTMatvec attribute mesh (of a type shiftop cannot hold)" in out
        assert ("FFTMatvec attribute prior_solved" in out) == (target == "A.npy")
    shiftop("convert", tmp_path / "A.h5", tmp_path / "B")
    assert (tmp_path / "B" / "binary" / "meta_adj").read_text() == \
        (tmp_path / "A" / "binary" / "meta_adj").read_text()
    for i in range(ND):
        row = f"binary/adj/vec_{i:06d}.h5"
        want = vec_attributes(tmp_path / "A" / row)
        del want["mesh"]
        assert want["sensor_x"] == 0.5 * i
        assert_same_attributes(vec_attributes(tmp_path / "B" / row), want)
        with h5py.File(tmp_path / "B" / row, "r") as f:
            np.testing.assert_array_equal(f["vec"][...], kernels[i].ravel())
    # A slice keeps the attributes of its rows.
    shiftop("convert", tmp_path / "A.h5", tmp_path / "S", "--rows", "1:3")
    assert vec_attributes(tmp_path / "S" / "binary/adj/vec_000000.h5")["sensor_x"] == 0.5


def test_vector_round_trip_keeps_every_attribute(tmp_path):
    values = np.random.default_rng(17).standard_normal((ND, NT))
    extra = {"qoi": 1, "t_final": 2.5, "units": "Pa", "sensor_ids": np.array([4, 8, 15])}
    write_vector(tmp_path / "d.h5", values, "data", extra=extra)
    shiftop("convert", tmp_path / "d.h5", tmp_path / "via.h5")
    shiftop("convert", tmp_path / "via.h5", tmp_path / "back.h5", "--to", "fftmatvec")
    assert_same_attributes(vec_attributes(tmp_path / "back.h5"), vec_attributes(tmp_path / "d.h5"))
    with h5py.File(tmp_path / "back.h5", "r") as f:
        np.testing.assert_array_equal(f["vec"][...], values.ravel())
    out = shiftop("convert", tmp_path / "d.h5", tmp_path / "d.npy").stdout
    assert "dropped: space, qoi, FFTMatvec attribute t_final, FFTMatvec attribute units, " \
           "FFTMatvec attribute sensor_ids" in out


def test_later_shiftop_layout_is_refused(tmp_path):
    kernels = np.random.default_rng(18).standard_normal((ND, NM, NT))
    with h5py.File(tmp_path / "v2.h5", "w") as f:
        f.create_dataset("kernels", data=kernels)
        f.attrs["shiftop_format"] = "operator"
        f.attrs["format_version"] = 2
    for args in (("convert", tmp_path / "v2.h5", tmp_path / "out.npy"), ("info", tmp_path / "v2.h5")):
        out = shiftop(*args, check=False)
        assert out.returncode == 1 and out.stdout == "" and out.stderr.count("\n") == 1
        assert f"{tmp_path / 'v2.h5'}: attribute 'format_version' is 2: expected 1" in out.stderr
    assert not (tmp_path / "out.npy").exists()


def test_info_json_uses_numbers_and_booleans(problem):
    """No value of info --json is a number or flag spelled as text, for every file kind."""
    tmp, kernels, m, _ = problem
    write_vector(tmp / "q.h5", np.ones((ND, NT)), "data", qoi=1)
    write_vector(tmp / "c.h5", m, "parameter", checksum=7)
    shiftop("convert", tmp / "F", tmp / "F.h5")
    shiftop("convert", tmp / "m.h5", tmp / "ms.h5")
    with h5py.File(tmp / "F.h5", "a") as f:
        f.require_group("metadata").attrs["scale"] = 2.5
    np.save(tmp / "K.npy", kernels)
    expected = {"F": {"p2q": False, "checksum": 0, "first_missing_block_row": None},
                "F.h5": {"format_version": 1, "fftmatvec_p2q": 0, "fftmatvec_checksum": 0,
                         "scale": 2.5},
                "q.h5": {"qoi": True}, "c.h5": {"checksum": 7},
                "ms.h5": {}, "m.h5": {}, "K.npy": None}
    numeric_text = re.compile(r"^\s*(-?\d+(\.\d*)?(e-?\d+)?|true|false|null)\b", re.I)

    def strings(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)
        elif isinstance(value, str):
            yield value

    for name, details in expected.items():
        info = json.loads(shiftop("info", tmp / name, "--json").stdout)
        assert not [s for s in strings(info) if numeric_text.match(s)], (name, info)
        if details is not None:
            assert {k: info["details"][k] for k in details} == details, name
        if "triangular" in info:
            assert info["triangular"] is True and info["bytes"] == 8 * ND * NM * NT
