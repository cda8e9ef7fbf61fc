"""Messages and resource limits of the `shiftop` tool (issue 13, sections 3 and 4): inputs that are
FIFOs or directories named as such (a FIFO never blocks a reader), a forgotten value that never
swallows the next option nor creates a file named after it, the memory check of `demo` before it
builds the kernels, and under mpiexec a user error printed once but by the rank that has it."""
import os
import subprocess

import numpy as np
import pytest

from test_mpi_matvec import MPIEXEC, WITH_MPI, mpiexec

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")


def shiftop(*args, cwd=None, timeout=60):
    return subprocess.run([SHIFTOP, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def refused(out, fragment, status=1):
    """One line on stderr containing `fragment`, nothing on stdout, exit `status`."""
    assert out.returncode == status, out
    assert out.stdout == "", out
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("shiftop: error: "), out
    assert fragment in out.stderr, out
    return out.stderr


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(5)
    np.save(tmp_path / "K.npy", rng.standard_normal((2, 3, 4)))
    np.save(tmp_path / "m.npy", rng.standard_normal((3, 4)))
    os.mkfifo(tmp_path / "fifo")
    os.mkfifo(tmp_path / "fifo.npy")
    os.mkfifo(tmp_path / "fifo.h5")
    (tmp_path / "dir").mkdir()
    return tmp_path


@pytest.mark.parametrize("option,value,expected", [
    ("--input", "fifo", "is a FIFO (named pipe), not a file: expected a vector file"),
    ("--input", "fifo.npy", "is a FIFO (named pipe), not a file: expected a vector file"),
    ("--input", "dir", "is a directory, not a file: expected a vector file"),
    ("--operator", "fifo", "is a FIFO (named pipe), not a file: expected an operator"),
    ("--operator", "fifo.npy", "is a FIFO (named pipe), not a file: expected an operator"),
    ("--operator", "fifo.h5", "is a FIFO (named pipe), not a file: expected an operator"),
])
def test_fifo_or_directory_input_is_named(files, option, value, expected):
    paths = {"--operator": files / "K.npy", "--input": files / "m.npy", option: files / value}
    out = shiftop("matvec", "--operator", paths["--operator"], "--input", paths["--input"],
                  "--output", files / "y.npy", timeout=20)  # a blocked open would time out
    refused(out, f"{files / value}: {expected}")
    assert not (files / "y.npy").exists()


@pytest.mark.parametrize("command", [("info",), ("convert",)])
def test_fifo_given_to_info_or_convert_is_named(files, command):
    for name in ["fifo.npy", "fifo.h5"]:
        args = [*command, files / name] + ([files / "out.npy"] if command == ("convert",) else [])
        refused(shiftop(*args, timeout=20), f"{files / name}: is a FIFO (named pipe), not a file")
    assert not (files / "out.npy").exists()


def test_forgotten_value_never_swallows_the_next_option(tmp_path):
    out = shiftop("model", "heat2d", "--grid", 8, "--sources", 2, "--sensors", 1, "--nt", 4,
                  "-o", "F.h5", "--truth", "--data", "d.h5", cwd=tmp_path)
    refused(out, "--truth: expected a value, got the option '--data'", status=105)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no '--data', no F.h5, no d.h5


@pytest.mark.parametrize("args,option", [
    (("bench", "--nd", 2, "--nm", 3, "--nt", 4, "--threads", "--estimate"), "--threads"),
    (("tune", "--json", "--plot", "t.svg"), "--json"),
    (("model", "wave2d", "-o", "--noise", "0.1"), "--output"),
    (("grid", "--nd", "--nm", 3, "--nt", 4, "--ranks", 2), "--nd"),
])
def test_every_option_with_a_value_refuses_an_option(tmp_path, args, option):
    out = shiftop(*args, cwd=tmp_path)
    refused(out, f"{option}: expected a value, got the option '--", status=105)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ("-o", "F.h5", "--truth", "-o"),  # would write the truth to a file named '-o'
    ("--truth", "-o", "F.h5"),  # would say "--output is required"
])
def test_a_short_option_is_not_swallowed_either(tmp_path, args):
    out = shiftop("model", "heat2d", "--grid", 8, "--sources", 2, "--sensors", 1, "--nt", 4, *args,
                  cwd=tmp_path)
    refused(out, "--truth: expected a value, got the option '-o'", status=105)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("word", ["--threads", "--threads=3", "-j"])
def test_a_subcommand_option_before_the_subcommand_is_named(word):
    out = shiftop(word, "3", "matvec")
    refused(out, f"'{word}' is not an option of shiftop itself: options follow the subcommand",
            status=109)


@pytest.mark.parametrize("args,fragment", [
    (("model", "heat2d", "--grid", 8, "--sources", 2, "--sensors", 1, "--nt", 4, "-o", "F.h5",
      "--noise", "-1"), "--noise: expected a non-negative number, got -1"),
    (("tune", "--nd", 2, "--nm", 3, "--nt", 4, "--tol", "-1"), "--tol: expected a positive"),
])
def test_negative_numbers_still_reach_their_own_checks(tmp_path, args, fragment):
    refused(shiftop(*args, cwd=tmp_path), fragment)


def test_grid_that_uses_every_rank_gives_no_warning():
    out = shiftop("grid", "--nd", 100, "--nm", 40000, "--nt", 1000, "--ranks", 8, "--json")
    assert out.returncode == 0 and out.stderr == "" and '"idle_ranks":0' in out.stdout, out


HARDWARE_THREADS = len(os.sched_getaffinity(0))


@pytest.mark.parametrize("threads", [HARDWARE_THREADS + 1, 100000, 10**9, 2**31, -2])
def test_threads_beyond_the_limit_are_refused(tmp_path, threads):
    out = shiftop("bench", "--nd", 2, "--nm", 3, "--nt", 4, "--threads", threads, "--reps", 1)
    refused(out, f"--threads: must be between 0 (OpenMP's default) and {HARDWARE_THREADS}, "
            "the hardware threads", status=105)
    assert f"got '{threads}'" in out.stderr


def test_threads_up_to_the_hardware_threads_run():
    out = shiftop("bench", "--nd", 2, "--nm", 3, "--nt", 4, "--threads", HARDWARE_THREADS,
                  "--reps", 1, "--estimate")
    assert out.returncode == 0, out


def available_bytes():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    pytest.fail("no MemAvailable in /proc/meminfo")


def test_demo_checks_memory_before_building_the_kernels():
    # Kernels of 0.4x the available memory pass the model's own check; with the plan's F^ (3.2x
    # the kernels for 10 sensors, padded to 16) the run needs ~1.7x. Building the kernels alone
    # would take minutes: the refusal must come first.
    sources, sensors = 32000, 10
    nt = int(0.4 * available_bytes() / (8 * sources * sensors))
    out = shiftop("demo", "--sources", sources, "--sensors", sensors, "--nt", nt, timeout=30)
    err = refused(out, f"demo: heat2d on (Nd={sensors}, Nm={sources}, Nt={nt}) needs ")
    assert "GiB) are available" in err


MPI_ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMP_NUM_THREADS": "1"}
NO_MPI = pytest.mark.skipif(not WITH_MPI, reason="built without MPI (SHIFTOP_WITH_MPI=0)")


def mpi(*args, timeout=60):
    """Two ranks; a build with MPI and no mpiexec fails (test_mpi_matvec.py)."""
    assert MPIEXEC is not None, "shiftop was built with MPI but mpiexec is not on PATH"
    return subprocess.run([*mpiexec(2), *map(str, args)], capture_output=True, text=True,
                          env=MPI_ENV, timeout=timeout)


@NO_MPI
@pytest.mark.parametrize("args,fragment", [
    (("matvec", "--operator", "K.npy", "--input", "nope.npy", "--output", "y.npy"), "nope.npy"),
    (("bench", "--grid", "2x1", "--nd", 5, "--nm", 7, "--nt", 8, "--op", "X", "--threads", 1),
     "--op: expected F, Fadj, FadjF or FFadj, got 'X'"),
    (("bench", "--threads", 100000), "--threads: must be between"),
    (("mtavec",), "unknown subcommand 'mtavec'"),
])
def test_mpi_user_error_printed_once(files, args, fragment):
    out = mpi(SHIFTOP, *[files / a if str(a).endswith(".npy") else a for a in args])
    assert out.returncode != 0
    assert out.stderr.count("shiftop: error:") == 1, out.stderr
    assert fragment in out.stderr
    assert not (files / "y.npy").exists()


@NO_MPI
def test_mpi_error_of_one_rank_is_printed_by_that_rank(files):
    # Rank 1 alone asks for a missing file; rank 0 succeeds. Rank 1 must still say why.
    script = files / "per_rank.sh"
    script.write_text(
        '#!/bin/sh\nif [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then f=missing.npy; else f=K.npy; fi\n'
        f'exec "{SHIFTOP}" info "{files}/$f"\n')
    script.chmod(0o755)
    out = mpi(script)
    assert out.returncode != 0
    assert out.stderr.count("shiftop: error:") == 1, out.stderr
    assert "missing.npy" in out.stderr
