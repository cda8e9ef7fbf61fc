"""One rule for every file the tool writes (issue 28, section 5): the name's extension decides the
format, in every command, or the name is refused with the extensions the command writes, before
any work and with nothing written; a FIFO or a device takes the formats written front to back
(.npy, PNG, JSON) in every command and is refused for HDF5; a prefix ending in '/' and an empty
name are refused like any other bad name. What is written is checked by reading it back: .npy by
numpy.load, HDF5 by h5py, PNG by its signature."""
import json
import os
import stat
import subprocess

import h5py
import numpy as np
import pytest
from test_outputs import device  # noqa: F401 (a fixture)

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")
CT = ("--positions", 4, "--rings", 3, "--sectors", 8, "--detectors", 6)


def shiftop(*args, cwd):
    return subprocess.run([SHIFTOP, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def snapshot(directory):
    return sorted(p.name for p in directory.iterdir())


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(28)
    np.save(tmp_path / "a.npy", rng.standard_normal((5, 4)))
    np.save(tmp_path / "g.npy", rng.standard_normal((6, 4)))
    np.save(tmp_path / "K.npy", rng.standard_normal((2, 3, 4)))
    np.save(tmp_path / "d.npy", rng.standard_normal((2, 4)))
    assert shiftop("model", "ct2d", "-o", "A.h5", *CT, cwd=tmp_path).returncode == 0
    np.save(tmp_path / "x.npy", np.ones(3 * 8, np.float32))  # k*nb = rings*sectors
    return tmp_path


# Each command with an output named for another format: (command line with OUT for the name,
# a name of another format, the option, the extensions the refusal lists).
WRONG_NAMES = [
    (("svd", "--input", "a.npy", "--output", "OUT"), "o.h5", "--output", "expected a name ending "
     "in .npy"),
    (("gsvd", "--f", "a.npy", "--g", "g.npy", "--output", "OUT"), "o.h5", "--output",
     "expected a name ending in .npy"),
    (("spectrum", "K.npy", "--output", "OUT"), "s.h5", "--output", "expected a name ending in "
     ".npy"),
    (("circ", "matvec", "--operator", "A.h5", "--input", "x.npy", "--output", "OUT"), "y.h5",
     "--output", "expected a name ending in .npy"),
    (("ct-recon", *CT, "--iterations", 1, "-o", "r.npy", "--png", "OUT"), "w.jpg", "--png",
     "expected a name ending in .png"),
    (("ct-recon", *CT, "--iterations", 1, "-o", "OUT"), "r.h5", "--output",
     "expected a name ending in .npy"),
    (("ct-recon", *CT, "--iterations", 1, "-o", "r.npy", "--json", "OUT"), "s.txt", "--json",
     "expected a name ending in .json"),
    (("model", "ct2d", *CT, "-o", "OUT"), "B.npy", "-o", "expected a name ending in .h5 or .hdf5"),
    (("model", "heat2d", "--grid", 4, "--nt", 4, "-o", "OUT"), "B.json", "-o",
     "expected a name ending in .npy, .h5 or .hdf5 (a file), or a directory name"),
    (("model", "heat2d", "--grid", 4, "--nt", 4, "-o", "B.h5", "--data", "OUT"), "d.txt",
     "--data", "expected a name ending in .npy, .h5 or .hdf5"),
    (("matvec", "--operator", "K.npy", "--input", "m.npy", "--output", "OUT"), "y.txt",
     "--output", "expected a name ending in .npy, .h5 or .hdf5"),
    (("matvec", "--operator", "K.npy", "--input", "m.npy", "--output", "OUT", "--output-format",
      "npy"), "y.h5", "--output", "expected a name ending in .npy"),
    (("matvec", "--operator", "K.npy", "--input", "m.npy", "--output", "OUT", "--output-format",
      "shiftop"), "y.npy", "--output", "expected a name ending in .h5 or .hdf5"),
    (("convert", "K.npy", "OUT", "--to", "npy"), "K.h5", "output",
     "expected a name ending in .npy"),
    (("convert", "K.npy", "OUT", "--to", "fftmatvec"), "F.h5", "output",
     "expected a directory name without a file extension"),
    (("convert", "d.npy", "OUT"), "d.txt", "output", "expected a name ending in .npy, .h5 or "
     ".hdf5"),
    (("regpath", "K.npy", "d.npy", "-o", "OUT"), "m.txt", "--output",
     "expected a name ending in .npy, .h5 or .hdf5"),
    (("regpath", "K.npy", "d.npy", "--plot", "OUT"), "p.jpg", "--plot",
     "expected a name ending in .png, .svg or .pdf"),
    (("solve", "--operator", "K.npy", "--data", "d.npy", "--noise-variance", 1, "--prior",
      "diagonal", "--prior-variance", 1, "-o", "OUT"), "m.txt", "--output",
     "expected a name ending in .npy, .h5 or .hdf5"),
    (("solve", "--operator", "K.npy", "--data", "d.npy", "--noise-variance", 1, "--prior",
      "diagonal", "--prior-variance", 1, "-o", "m.npy", "--json", "OUT"), "s.txt", "--json",
     "expected a name ending in .json"),
    (("tune", "--nd", 2, "--nm", 3, "--nt", 4, "--reps", 1, "--json", "OUT"), "t.txt", "--json",
     "expected a name ending in .json"),
]


@pytest.mark.parametrize("args,name,option,expected", WRONG_NAMES,
                         ids=[f"{a[0]}-{a[1]}-{n}" for a, n, _, _ in WRONG_NAMES])
def test_a_name_of_another_format_is_refused(inputs, args, name, option, expected):
    """Each of these wrote its own format under the other's name before (svd, spectrum and circ
    matvec .npy bytes into .h5, ct-recon a PNG into .jpg, model ct2d HDF5 into .npy, matvec
    HDF5 into y.txt)."""
    np.save(inputs / "m.npy", np.ones((3, 4)))
    before = snapshot(inputs)
    done = shiftop(*[name if a == "OUT" else a for a in args], cwd=inputs)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"shiftop: error: {option} '{name}': "), lines
    assert expected in lines[0]
    assert snapshot(inputs) == before and done.stdout == ""


def test_the_right_name_writes_that_format(inputs):
    """The same commands with names of their formats: what each file holds is what its name
    says."""
    runs = [("svd", "--input", "a.npy", "--output", "s.NPY"),
            ("circ", "matvec", "--operator", "A.h5", "--input", "x.npy", "--output", "y.npy"),
            ("ct-recon", *CT, "--iterations", 1, "-o", "r.npy", "--png", "w.png", "--json",
             "r.json"),
            ("model", "heat2d", "--grid", 4, "--sources", 3, "--sensors", 2, "--nt", 4, "-o",
             "B.hdf5", "--data", "d.h5")]
    for args in runs:
        done = shiftop(*args, cwd=inputs)
        assert done.returncode == 0, (args, done.stderr)
    assert np.load(inputs / "s.NPY").shape == (4,)
    assert np.load(inputs / "y.npy").shape == (4 * 6,)
    assert (inputs / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((inputs / "r.json").read_text())["output"] == "r.npy"
    for name in ("B.hdf5", "d.h5"):
        assert h5py.is_hdf5(inputs / name)


# Outputs written front to back in each command that writes them: a device takes them all.
STREAMED = [("svd", "--input", "a.npy", "--output", "DEV"),
            ("svd", "--input", "a.npy", "--output", "DEV", "--vectors", "v"),
            ("gsvd", "--f", "a.npy", "--g", "g.npy", "--output", "DEV"),
            ("spectrum", "K.npy", "--output", "DEV"),
            ("circ", "matvec", "--operator", "A.h5", "--input", "x.npy", "--output", "DEV"),
            ("ct-recon", *CT, "--iterations", 1, "-o", "DEV"),
            ("ct-recon", *CT, "--iterations", 1, "-o", "r.npy", "--png", "DEV"),
            ("ct-recon", *CT, "--iterations", 1, "-o", "r.npy", "--json", "DEV"),
            ("matvec", "--operator", "K.npy", "--input", "m.npy", "--output", "DEV",
             "--output-format", "npy"),
            ("solve", "--operator", "K.npy", "--data", "d.npy", "--noise-variance", 1, "--prior",
             "diagonal", "--prior-variance", 1, "-o", "m2.npy", "--json", "DEV")]


@pytest.mark.parametrize("args", STREAMED)
def test_a_device_takes_every_streamed_format(inputs, device, args):  # noqa: F811
    """svd --output /dev/null was refused while circ matvec accepted it."""
    np.save(inputs / "m.npy", np.ones((3, 4)))
    done = shiftop(*[device if a == "DEV" else a for a in args], cwd=inputs)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.stat(device).st_mode)


@pytest.mark.parametrize("args", [
    ("model", "ct2d", *CT, "-o", "DEV", "--overwrite"),
    ("regpath", "K.npy", "d.npy", "-o", "DEV"),
    ("matvec", "--operator", "K.npy", "--input", "m.npy", "--output", "DEV"),
    ("spectrum", "K.npy", "--plot", "DEV")], ids=["model ct2d", "regpath", "matvec", "spectrum"])
def test_a_device_is_refused_for_formats_that_seek(inputs, device, args):  # noqa: F811
    np.save(inputs / "m.npy", np.ones((3, 4)))
    done = shiftop(*[device if a == "DEV" else a for a in args], cwd=inputs)
    assert done.returncode == 1
    assert f"{device}: is a character device" in done.stderr, done.stderr


@pytest.mark.parametrize("command", [("svd", "--input", "a.npy", "--output", "s.npy"),
                                     ("gsvd", "--f", "a.npy", "--g", "g.npy", "--output",
                                      "s.npy")])
def test_a_vectors_prefix_ending_in_a_slash_is_refused(inputs, command):
    """svd --vectors adir.npy/ wrote adir.npy/_U.npy and adir.npy/_V.npy into a directory."""
    (inputs / "adir.npy").mkdir()
    before = snapshot(inputs)
    done = shiftop(*command, "--vectors", "adir.npy/", cwd=inputs)
    assert done.returncode == 1
    assert done.stderr.startswith("shiftop: error: --vectors 'adir.npy/': ends in '/', which "
                                  "names a directory"), done.stderr
    assert snapshot(inputs) == before and not list((inputs / "adir.npy").iterdir())


@pytest.mark.parametrize("args,option", [
    (("svd", "--input", "a.npy", "--output", "s.npy", "--vectors", ""), "--vectors"),
    (("svd", "--input", "a.npy", "--output", ""), "--output"),
    (("gsvd", "--f", "a.npy", "--g", "g.npy", "--output", "s.npy", "--vectors", ""), "--vectors"),
    (("spectrum", "K.npy", "--plot", ""), "--plot"),
    (("spectrum", ""), "OPERATOR"),
    (("ct-recon", *CT, "-o", "r.npy", "--png", ""), "--png"),
    (("regpath", "K.npy", "d.npy", "-o", ""), "--output"),
    (("regpath", "K.npy", "d.npy", "--alphas", ""), "--alphas"),
    (("model", "heat2d", "-o", "B.h5", "--truth", ""), "--truth")])
def test_an_empty_name_is_refused(inputs, args, option):
    """--vectors "" was ignored: the command ran and wrote no vectors."""
    before = snapshot(inputs)
    done = shiftop(*args, cwd=inputs)
    assert done.returncode == 105, done.stderr
    assert f"{option}: expected a value, got an empty string" in done.stderr
    assert snapshot(inputs) == before and done.stdout == ""
