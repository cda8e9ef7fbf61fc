"""Outputs never destroy what they should not (issue 13, section 2): an output that is one of the
command's inputs or another output is refused before any work, by file identity (spellings,
symbolic and hard links); a symbolic link at an output is kept and its target replaced; FIFOs
and devices are written directly (.npy) or refused (HDF5), never replaced; `-` is standard output
for matvec's .npy only and never a file named `-`; SIGINT/SIGTERM remove the temporaries and end
the tool by that signal; unwritable outputs are refused before the work starts."""
import hashlib
import io
import os
import shutil
import signal
import stat
import subprocess
import threading
import time

import numpy as np
import pytest

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")
ND, NM, NT = 3, 4, 5


def shiftop(*args, cwd=None, **kwargs):
    return subprocess.run([SHIFTOP, *map(str, args)], capture_output=True, cwd=cwd, timeout=120,
                          **kwargs)


def default_signals():
    """In the child: SIGINT/SIGTERM at their default, whatever the test runner ignores."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def apply_f(kernels, m):
    """d_i[t] = sum_j sum_{s<=t} K[i, j, t-s] m_j[s], the lower block triangular Toeplitz product."""
    nt = kernels.shape[2]
    return np.stack([sum(np.convolve(kernels[i, j], m[j])[:nt] for j in range(kernels.shape[1]))
                     for i in range(kernels.shape[0])])


def digest(path):
    """The bytes of a file, or of every file under a directory, with their names."""
    h = hashlib.sha256()
    paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for p in paths:
        h.update(str(p.relative_to(path.parent)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def snapshot(directory):
    return {p.name: digest(p) if not p.is_symlink() else os.readlink(p)
            for p in directory.iterdir() if not stat.S_ISFIFO(p.lstat().st_mode)}


def refused(out, *names):
    """One error line naming every one of `names`, exit status 1, nothing on stdout."""
    err = out.stderr.decode()
    assert out.returncode == 1, err
    assert err.count("\n") == 1 and err.startswith("shiftop: error: "), err
    for name in names:
        assert name in err, (name, err)
    assert out.stdout == b""
    return err


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(13)
    k = rng.standard_normal((ND, NM, NT))
    m = rng.standard_normal((NM, NT))
    np.save(tmp_path / "K.npy", k)
    np.save(tmp_path / "m.npy", m)
    np.save(tmp_path / "R.npy", k)
    assert shiftop("convert", tmp_path / "m.npy", tmp_path / "m.h5").returncode == 0
    assert shiftop("convert", tmp_path / "K.npy", tmp_path / "F").returncode == 0  # FFTMatvec
    return tmp_path, k, m


# --- an output that is an input, or another output ----------------------------------------

def same_file_spellings(tmp_path, name):
    """Other names of tmp_path/name: another spelling, a symbolic link, a hard link."""
    (tmp_path / "sub").mkdir(exist_ok=True)
    os.symlink(name, tmp_path / f"link-{name}")
    if (tmp_path / name).is_file():
        os.link(tmp_path / name, tmp_path / f"hard-{name}")
    yield "spelling", f"{tmp_path}/sub/../{name}"
    yield "symlink", str(tmp_path / f"link-{name}")
    if (tmp_path / name).is_file():
        yield "hard link", str(tmp_path / f"hard-{name}")


MATVEC_PAIRS = [("--operator", "K.npy"), ("--row", "R.npy"), ("--input", "m.npy"),
                ("--input", "m.h5"), ("--operator", "F"), ("--operator", "F/binary/meta_adj"),
                ("--operator", "F/binary/adj/vec_000000.h5")]


@pytest.mark.parametrize("option,name", MATVEC_PAIRS)
def test_matvec_refuses_an_output_that_is_an_input(files, option, name):
    tmp_path, _, _ = files
    args = {"--operator": tmp_path / "K.npy", "--input": tmp_path / "m.npy"}
    if option == "--row":
        args["--row"] = tmp_path / "R.npy"
    target = tmp_path / name
    if option == "--operator" and name.startswith("F"):
        args["--operator"] = tmp_path / "F"
        args["--input"] = tmp_path / "m.h5"
        spellings = [("inside", str(target))] if name != "F" else [("the directory", str(target))]
    else:
        args[option] = target
        spellings = list(same_file_spellings(tmp_path, name))
    before = snapshot(tmp_path)
    for how, output in spellings:
        fmt = ["--output-format", "npy"] if output.endswith(".npy") else []
        out = shiftop("matvec", *sum(([k, v] for k, v in args.items()), []), "--output", output,
                      *fmt)
        err = refused(out, "--output", option)
        assert "expected" in err, how
        assert snapshot(tmp_path) == before, how


def test_convert_refuses_its_input_as_output(files):
    tmp_path, _, _ = files
    for name in ["K.npy", "m.h5", "F"]:
        spellings = [("itself", str(tmp_path / name)), *same_file_spellings(tmp_path, name)]
        before = snapshot(tmp_path)
        for how, output in spellings:
            out = shiftop("convert", tmp_path / name, output, "--to",
                          "fftmatvec" if name == "F" else "auto")
            refused(out, "output '", "' is the same file as input '")
            assert snapshot(tmp_path) == before, how
    # An FFTMatvec row file is a vector: its directory may not be the output.
    out = shiftop("convert", tmp_path / "F/binary/adj/vec_000000.h5", tmp_path / "F", "--to",
                  "fftmatvec")
    refused(out, "output '", "' contains input '")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("first,second", [("-o", "--data"), ("-o", "--truth"),
                                          ("--truth", "--data")])
def test_model_refuses_one_path_for_two_outputs(tmp_path, first, second):
    (tmp_path / "sub").mkdir()
    sizes = ["--grid", 6, "--sources", 3, "--sensors", 2, "--nt", 8]

    def model(a, b):
        args = {"-o": "F.h5", first: a, second: b}
        return shiftop("model", "heat2d", *sizes, *sum(([k, v] for k, v in args.items()), []),
                       cwd=tmp_path)

    # Two spellings of a path that does not exist yet: nothing is written.
    for a, b in [("x.h5", "./x.h5"), ("x.h5", "sub/../x.h5"), ("./sub/x.h5", "sub/x.h5")]:
        refused(model(a, b), f"{second} '{b}' is the same file as {first} '{a}'")
        assert list(tmp_path.iterdir()) == [tmp_path / "sub"]
    # An existing file and a symbolic link to it: the file is unchanged.
    (tmp_path / "old.h5").write_bytes(b"previous")
    os.symlink("old.h5", tmp_path / "alias.h5")
    refused(model("old.h5", "alias.h5"), f"{second} 'alias.h5' is the same file as {first}")
    assert (tmp_path / "old.h5").read_bytes() == b"previous"


@pytest.mark.parametrize("option", ["--json", "--plot"])
def test_tune_refuses_its_operator_or_one_file_for_both(files, option):
    tmp_path, _, _ = files
    os.symlink("K.npy", tmp_path / "link-K.npy")
    (tmp_path / "sub").mkdir()
    before = snapshot(tmp_path)
    for output in [tmp_path / "K.npy", tmp_path / "link-K.npy", f"{tmp_path}/sub/../K.npy"]:
        t0 = time.monotonic()
        out = shiftop("tune", "--operator", tmp_path / "K.npy", option, output, "--reps", 1)
        refused(out, f"{option} '{output}' is the same file as --operator")
        assert time.monotonic() - t0 < 10
    out = shiftop("tune", "--nd", 2, "--nm", 3, "--nt", 4, "--reps", 1, "--json",
                  tmp_path / "t.json", "--plot", f"{tmp_path}/sub/../t.json")
    refused(out, "--json", "--plot")
    assert snapshot(tmp_path) == before


# --- symbolic links, special files, "-" ------------------------------------------------------

def test_a_symlinked_output_keeps_the_link_and_replaces_its_target(files):
    tmp_path, k, m = files
    (tmp_path / "results").mkdir()
    (tmp_path / "results/y.npy").write_bytes(b"old")
    os.symlink("results/y.npy", tmp_path / "y.npy")
    out = shiftop("matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
                  "--output", tmp_path / "y.npy")
    assert out.returncode == 0, out.stderr
    assert os.readlink(tmp_path / "y.npy") == "results/y.npy"
    y = np.load(tmp_path / "results/y.npy")
    np.testing.assert_allclose(y, apply_f(k, m), rtol=1e-12, atol=1e-12)
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["y.npy"]
    # Through a link to an FFTMatvec directory, too: the link stays, the directory is replaced.
    os.symlink("F", tmp_path / "G")
    out = shiftop("convert", tmp_path / "K.npy", tmp_path / "G", "--to", "fftmatvec")
    assert out.returncode == 0, out.stderr
    assert os.readlink(tmp_path / "G") == "F" and (tmp_path / "F/binary/meta_adj").is_file()
    assert not [p for p in tmp_path.iterdir() if "shiftop-tmp" in p.name]


@pytest.fixture
def device(tmp_path):
    """A character device: a private twin of /dev/null where we may make one (root), else
    /dev/null itself. Either way it must still be that device afterwards."""
    path = tmp_path / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        path = "/dev/null"
    try:
        open(path, "wb").close()  # a container may allow making it but not opening it
    except OSError:
        os.remove(path)
        path = "/dev/null"
    yield str(path)
    assert stat.S_ISCHR(os.stat(path).st_mode)


def test_a_device_output_is_written_directly_for_npy_and_refused_for_hdf5(files, device):
    tmp_path, _, _ = files
    before = snapshot(tmp_path)
    out = shiftop("matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
                  "--output", device, "--output-format", "npy")
    assert out.returncode == 0, out.stderr
    for cmd in [("matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
                 "--output", device),
                ("convert", tmp_path / "m.npy", device, "--to", "shiftop"),
                ("convert", tmp_path / "K.npy", device)]:  # no extension: an FFTMatvec directory
        refused(shiftop(*cmd), device, "is a character device")
    assert snapshot(tmp_path) == before


def read_fifo_in_thread(path):
    received = {}

    def reader():
        with open(path, "rb") as f:
            received["bytes"] = f.read()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    return thread, received


def test_a_fifo_output_is_streamed_for_npy_and_refused_for_hdf5(files):
    tmp_path, k, m = files
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    thread, received = read_fifo_in_thread(fifo)
    out = shiftop("matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
                  "--output", fifo, "--output-format", "npy")
    thread.join(timeout=30)
    assert out.returncode == 0, out.stderr
    assert not thread.is_alive(), "nothing was written to the FIFO"
    y = np.load(io.BytesIO(received["bytes"]))
    np.testing.assert_allclose(y, apply_f(k, m), rtol=1e-12, atol=1e-12)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    before = snapshot(tmp_path)
    t0 = time.monotonic()  # refused before opening it: no reader needed, no hang
    refused(shiftop("matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
                    "--output", fifo), str(fifo), "is a FIFO")
    assert time.monotonic() - t0 < 10
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and snapshot(tmp_path) == before


def test_dash_is_standard_output_for_matvec_npy_only(files):
    tmp_path, k, m = files
    out = shiftop("matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
                  "--output", "-", "--output-format", "npy", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    np.testing.assert_allclose(np.load(io.BytesIO(out.stdout)), apply_f(k, m), rtol=1e-12,
                               atol=1e-12)
    assert b"wrote -" in out.stderr  # the summary moves out of the way
    before = snapshot(tmp_path)
    for cmd, option in [(("matvec", "--operator", "K.npy", "--input", "m.npy", "--output", "-"),
                         "--output"),
                        (("convert", "m.npy", "-", "--to", "npy"), "output"),
                        (("convert", "K.npy", "-", "--to", "npy"), "output"),
                        (("model", "heat2d", "--grid", 4, "--nt", 4, "-o", "-"), "-o"),
                        (("tune", "--nd", 2, "--nm", 3, "--nt", 4, "--json", "-"), "--json"),
                        (("matvec", "--operator", "K.npy", "--input", "-", "--output", "y.npy"),
                         "--input"),
                        (("matvec", "--operator", "-", "--input", "m.npy", "--output", "y.npy"),
                         "--operator"),
                        (("convert", "-", "y.npy"), "input")]:
        err = refused(shiftop(*cmd, cwd=tmp_path), f"{option} '-'")
        assert "no such file" not in err.lower()
    assert snapshot(tmp_path) == before and not (tmp_path / "-").exists()


# --- signals -----------------------------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("target", ["F", "F.h5"])
def test_a_signal_during_a_write_removes_the_temporaries(tmp_path, sig, target):
    rng = np.random.default_rng(1)
    if target == "F":  # many small block-row files: a long write loop
        np.save(tmp_path / "K.npy", rng.standard_normal((6000, 1, 2)))
    else:  # one large dataset: 128 MiB to write
        np.save(tmp_path / "K.npy", rng.standard_normal((4, 64, 65536)))
    np.save(tmp_path / "K_small.npy", rng.standard_normal((1, 1, 2)))
    assert shiftop("convert", tmp_path / "K_small.npy", tmp_path / target).returncode == 0
    before = snapshot(tmp_path)
    proc = subprocess.Popen([SHIFTOP, "convert", str(tmp_path / "K.npy"), str(tmp_path / target)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=default_signals)
    deadline = time.monotonic() + 60
    while not [p for p in tmp_path.iterdir() if ".shiftop-tmp-" in p.name]:
        assert proc.poll() is None, ("finished before it could be interrupted",
                                     proc.communicate())
        assert time.monotonic() < deadline
        time.sleep(0.001)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -sig, (proc.returncode, err)  # the shell shows 128 + sig
    left = [p for p in tmp_path.rglob("*") if "shiftop-tmp" in p.name]
    assert not left, (left, [len(list(p.rglob("*"))) for p in left], err)
    assert snapshot(tmp_path) == before


# --- unwritable outputs, refused before the work -------------------------------------------------

def unwritable_case(tmp_path, case):
    blocker = tmp_path / "file"  # a regular file used as a directory: unwritable even for root
    blocker.write_bytes(b"not a directory")
    (tmp_path / "dir").mkdir()
    bad = str(blocker / "out")
    sizes = ["--nd", 6, "--nm", 400, "--nt", 200, "--reps", 2]
    model = ("model", "wave2d", "--grid", 48, "--sources", 40, "--sensors", 6, "--nt", 300)
    return {
        "tune --plot": (("tune", *sizes, "--json", tmp_path / "t.json", "--plot", bad + ".svg"),
                        "--plot"),
        "tune --json": (("tune", *sizes, "--json", bad + ".json"), "--json"),
        "model -o": ((*model, "-o", bad + ".h5"), "-o"),
        "model --data": ((*model, "-o", tmp_path / "W.h5", "--data", bad + ".h5"), "--data"),
        "model --truth dir": ((*model, "-o", tmp_path / "W.h5", "--truth", tmp_path / "dir"),
                              "--truth"),
        "matvec --output": (("matvec", "--operator", tmp_path / "K.npy", "--input",
                             tmp_path / "m.npy", "--output", bad + ".npy"), "--output"),
        "matvec --output dir": (("matvec", "--operator", tmp_path / "K.npy", "--input",
                                 tmp_path / "m.npy", "--output", tmp_path / "dir"), "--output"),
        "convert": (("convert", tmp_path / "K.npy", bad), "output:"),
    }[case]


@pytest.mark.parametrize("case", ["tune --plot", "tune --json", "model -o", "model --data",
                                  "model --truth dir", "matvec --output", "matvec --output dir",
                                  "convert"])
def test_unwritable_outputs_are_refused_before_any_work(files, case):
    tmp_path, _, _ = files
    cmd, option = unwritable_case(tmp_path, case)
    before = snapshot(tmp_path)
    t0 = time.monotonic()
    out = shiftop(*cmd)
    elapsed = time.monotonic() - t0
    err = refused(out)
    assert err.startswith(f"shiftop: error: {option}"), err
    assert "[tune]" not in err and "wrote" not in err
    assert elapsed < 5, elapsed
    assert snapshot(tmp_path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only directory")
def test_a_read_only_directory_is_refused_before_any_work(files):
    tmp_path, _, _ = files
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        out = shiftop("tune", "--nd", 6, "--nm", 400, "--nt", 200, "--json", locked / "t.json")
        refused(out, "--json", "cannot write in directory")
    finally:
        locked.chmod(0o755)


def test_a_new_file_inside_an_input_directory_is_allowed(files):
    """Only what exists can be destroyed: a new output beside FFTMatvec's files replaces nothing."""
    tmp_path, k, m = files
    out = shiftop("matvec", "--operator", tmp_path / "F", "--input", tmp_path / "m.h5",
                  "--output", tmp_path / "F/y.npy")
    assert out.returncode == 0, out.stderr
    np.testing.assert_allclose(np.load(tmp_path / "F/y.npy"), apply_f(k, m), rtol=1e-12,
                               atol=1e-12)


# --- a file output ending in '/', outputs inside outputs, directories shiftop did not write -----

def test_a_file_output_ending_in_a_slash_is_refused(files):
    """'m.npy/' is not stat-able, so it once compared as a path other than m.npy, and was then
    written as m.npy: the input destroyed. A file output named with a trailing '/' is refused."""
    tmp_path, _, _ = files
    shutil.copyfile(tmp_path / "K.npy", tmp_path / "K2.npy")
    (tmp_path / "dir").mkdir()
    before = snapshot(tmp_path)
    matvec = ("matvec", "--operator", tmp_path / "K.npy", "--input", tmp_path / "m.npy",
              "--output")
    model = ("model", "heat2d", "--grid", 6, "--sources", 3, "--sensors", 2, "--nt", 8)
    for cmd, option, output in [
            ((*matvec, f"{tmp_path}/m.npy/", "--output-format", "npy"), "--output",
             f"{tmp_path}/m.npy/"),
            ((*matvec, f"{tmp_path}/out/"), "--output", f"{tmp_path}/out/"),
            ((*matvec, f"{tmp_path}/dir/", "--output-format", "npy"), "--output",
             f"{tmp_path}/dir/"),
            (("convert", tmp_path / "K2.npy", f"{tmp_path}/K2.npy/", "--to", "npy"), "output",
             f"{tmp_path}/K2.npy/"),
            (("convert", tmp_path / "m.h5", f"{tmp_path}/m.h5/", "--to", "shiftop"), "output",
             f"{tmp_path}/m.h5/"),
            ((*model, "-o", tmp_path / "G", "--truth", f"{tmp_path}/t.h5/"), "--truth",
             f"{tmp_path}/t.h5/")]:
        refused(shiftop(*cmd), f"{option} '{output}': ends in '/', which names a directory: "
                               "expected a file name")
        assert snapshot(tmp_path) == before, cmd
    # An FFTMatvec directory may be named 'F/': it is F, the same as the input F.
    refused(shiftop("convert", tmp_path / "F", f"{tmp_path}/F/", "--to", "fftmatvec"),
            "is the same file as input")
    assert snapshot(tmp_path) == before
    out = shiftop("convert", tmp_path / "K2.npy", f"{tmp_path}/F/", "--to", "fftmatvec")
    assert out.returncode == 0, out.stderr
    assert sorted(snapshot(tmp_path)) == sorted(before)


MODEL = ("model", "heat2d", "--grid", 6, "--sources", 3, "--sensors", 4, "--nt", 8)


@pytest.mark.parametrize("outputs,message", [
    (("-o", "G", "--truth", "G/binary/adj/vec_000003.h5"),
     "--truth 'G/binary/adj/vec_000003.h5' lies inside -o 'G'"),
    (("-o", "G", "--data", "G/binary/meta_adj"), "--data 'G/binary/meta_adj' lies inside -o 'G'"),
    (("-o", "G/", "--data", "G/d.h5"), "--data 'G/d.h5' lies inside -o 'G/'"),
    (("-o", "H", "--truth", "H/"), "--truth 'H/': ends in '/'"),
    (("-o", "H", "--truth", "H/t.h5"), "--truth 'H/t.h5' lies inside -o 'H'"),
    (("-o", "H", "--truth", "./H/sub/../t.h5"), "--truth './H/sub/../t.h5' lies inside -o 'H'"),
    (("-o", "G/F.h5", "--truth", "G"), "--truth 'G' contains -o 'G/F.h5'"),
    (("-o", "F.h5", "--truth", "t.h5", "--data", "t.h5/d.h5"),
     "--data 't.h5/d.h5' lies inside --truth 't.h5'")])
def test_model_refuses_an_output_at_or_below_another(tmp_path, outputs, message):
    """Whatever is on disk: G exists with Nd = 3 (no vec_000003.h5 yet: the new G's block row 3,
    which the truth would replace), H does not (model would create it, then write inside it or
    fail half done)."""
    small = [v if v != 4 else 3 for v in MODEL]  # --sensors 3
    assert shiftop(*small, "-o", "G", cwd=tmp_path).returncode == 0
    assert not (tmp_path / "G/binary/adj/vec_000003.h5").exists()
    before = snapshot(tmp_path)
    t0 = time.monotonic()
    refused(shiftop(*MODEL, *outputs, cwd=tmp_path), message)
    assert time.monotonic() - t0 < 5
    assert snapshot(tmp_path) == before


def fftmatvec_copy(tmp_path, name):
    shutil.copytree(tmp_path / "F", tmp_path / name)
    return tmp_path / name


def unrelated_directories(tmp_path):
    """Directories shiftop could not have written, and the entry each must be refused for."""
    x = tmp_path / "X"
    (x / "binary/src").mkdir(parents=True)
    (x / "binary/src/thesis.tex").write_text("x")
    yield x, "no file binary/meta_adj"
    thesis = fftmatvec_copy(tmp_path, "thesis")
    (thesis / "binary/src").mkdir()
    (thesis / "binary/src/thesis.tex").write_text("x")
    yield thesis, "'binary/src'"
    notes = fftmatvec_copy(tmp_path, "notes")
    (notes / "notes.txt").write_text("mine")
    yield notes, "'notes.txt'"
    row = fftmatvec_copy(tmp_path, "row")
    shutil.copyfile(row / "binary/adj/vec_000000.h5", row / "binary/adj/vec_000003.h5")  # Nd = 3
    yield row, "'binary/adj/vec_000003.h5'"
    other = fftmatvec_copy(tmp_path, "other")
    (other / "binary/adj/vec_0000001.h5").write_bytes(b"")
    yield other, "'binary/adj/vec_0000001.h5'"
    empty = fftmatvec_copy(tmp_path, "empty_dir")
    (empty / "binary/adj/sub").mkdir()
    yield empty, "'binary/adj/sub'"
    link = fftmatvec_copy(tmp_path, "link")
    os.symlink("../../../m.npy", link / "binary/adj/data.npy")
    yield link, "'binary/adj/data.npy'"
    meta = fftmatvec_copy(tmp_path, "nometa")
    (meta / "binary/meta_adj").unlink()
    yield meta, "no file binary/meta_adj"
    bad = fftmatvec_copy(tmp_path, "badmeta")
    (bad / "binary/meta_adj").write_text("not meta_adj\n")
    yield bad, "binary/meta_adj is missing or not one shiftop writes"
    (tmp_path / "mine").mkdir()
    yield tmp_path / "mine", "no file binary/meta_adj"


def test_only_a_directory_shiftop_could_have_written_is_replaced(files):
    tmp_path, _, _ = files
    for directory, entry in unrelated_directories(tmp_path):
        before = snapshot(tmp_path)
        for cmd, option in [(("convert", tmp_path / "K.npy", directory, "--to", "fftmatvec"),
                             "output"),
                            ((*MODEL, "-o", directory), "-o"),
                            ((*MODEL, "-o", f"{directory}/"), "-o")]:
            t0 = time.monotonic()
            err = refused(shiftop(*cmd), str(directory), "already exists", entry)
            assert err.startswith(f"shiftop: error: {option}:"), err
            assert time.monotonic() - t0 < 5
            assert snapshot(tmp_path) == before, (cmd, entry)
    # What shiftop wrote is replaced, however spelled: F, F/, a link to F.
    for spelling in [tmp_path / "F", f"{tmp_path}/F/"]:
        out = shiftop("convert", tmp_path / "R.npy", spelling, "--to", "fftmatvec")
        assert out.returncode == 0, out.stderr
    assert not [p for p in tmp_path.iterdir() if "shiftop-tmp" in p.name]
