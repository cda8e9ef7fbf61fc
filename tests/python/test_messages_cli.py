"""Refusals name what exists (issue 28, section 5): an option the command has, in the command's
own spelling; a limit blamed on the value that breaks it. Each case is one line
"shiftop: error: ..." with no output written."""
import os
import subprocess

import h5py
import numpy as np
import pytest

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")
CT = ("--positions", 4, "--rings", 3, "--sectors", 8, "--detectors", 6)


def refused(tmp_path, *args, status=1):
    done = subprocess.run([SHIFTOP, *map(str, args)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    lines = done.stderr.splitlines()
    assert done.returncode == status and len(lines) == 1, done.stderr
    assert lines[0].startswith("shiftop: error: ") and done.stdout == "", done
    assert not list(tmp_path.glob("out*")), "an output was written"
    return lines[0]


@pytest.fixture
def nan_problem(tmp_path):
    rng = np.random.default_rng(5)
    kernels = rng.standard_normal((2, 3, 4))
    kernels[1, 2, 3] = np.nan
    np.save(tmp_path / "K.npy", kernels)
    np.save(tmp_path / "d.npy", rng.standard_normal((2, 4)))
    np.save(tmp_path / "m.npy", rng.standard_normal((3, 4)))
    return tmp_path


def test_nonfinite_kernels_name_allow_nonfinite_only_where_it_exists(nan_problem):
    """regpath and spectrum named --allow-nonfinite, which they do not have."""
    where = "K.npy: NaN at (row 1, parameter block 2, time 3): expected finite kernel values"
    for args in [("regpath", "K.npy", "d.npy", "-o", "out.npy"),
                 ("spectrum", "K.npy", "--output", "out.npy")]:
        line = refused(nan_problem, *args)
        assert line.endswith(where), line
    line = refused(nan_problem, "matvec", "--operator", "K.npy", "--input", "m.npy", "--output",
                   "out.npy")
    assert line.endswith(where + " (--allow-nonfinite accepts them)"), line


def test_the_dataset_option_is_named_as_each_command_spells_it(tmp_path):
    """gsvd said "name it with --dataset"; its options are --f-dataset and --g-dataset."""
    rng = np.random.default_rng(6)
    with h5py.File(tmp_path / "two.h5", "w") as f:
        f["a"] = rng.standard_normal((5, 3))
        f["b"] = rng.standard_normal((5, 3))
    np.save(tmp_path / "g.npy", rng.standard_normal((4, 3)))
    found = "two.h5: expected exactly one 2-D dataset at the root, found 2 (a, b): name it with"
    line = refused(tmp_path, "gsvd", "--f", "two.h5", "--g", "g.npy", "--output", "out.npy")
    assert line.endswith(f"{found} --f-dataset"), line
    line = refused(tmp_path, "gsvd", "--f", "g.npy", "--g", "two.h5", "--output", "out.npy")
    assert line.endswith(f"{found} --g-dataset"), line
    line = refused(tmp_path, "svd", "--input", "two.h5", "--output", "out.npy")
    assert line.endswith(f"{found} --dataset"), line
    line = refused(tmp_path, "gsvd", "--f", "two.h5", "--f-dataset", "a", "--g", "g.npy",
                   "--g-dataset", "x", "--output", "out.npy")
    assert "--g-dataset x: " in line and "g.npy is an .npy file" in line, line


@pytest.mark.parametrize("command", ["svd", "gsvd"])
def test_variant_and_strategy_are_named_with_their_dashes(tmp_path, command):
    np.save(tmp_path / "a.npy", np.eye(3))
    inputs = ("--input", "a.npy") if command == "svd" else ("--f", "a.npy", "--g", "a.npy")
    # Refused by the option's check while parsing (status 105), in the library's words.
    line = refused(tmp_path, command, *inputs, "--output", "out.npy", "--variant", "foo",
                   status=105)
    assert line == ("shiftop: error: --variant: expected auto, pointwise, block-oriented or "
                    "full-block, got 'foo' (see --help)"), line
    line = refused(tmp_path, command, *inputs, "--output", "out.npy", "--strategy", "foo",
                   status=105)
    assert line.startswith("shiftop: error: --strategy: expected rc-closest-rev"), line


def test_too_many_counts_are_blamed_on_counts_not_on_a_valid_mean(tmp_path):
    """--counts 1e300 was refused as "mean[0] = 0.24...: expected a finite value >= 0"."""
    line = refused(tmp_path, "ct-recon", *CT, "--iterations", 1, "--counts", "1e300", "-o",
                   "out.npy")
    assert "counts = 1e+300: the largest mean, mean[" in line, line
    assert "expected counts below " in line and "expected a finite value" not in line, line
    # the largest count that passes, from the message, does pass
    limit = float(line.split("expected counts below ")[1].split(",")[0])
    done = subprocess.run([SHIFTOP, "ct-recon", *map(str, CT), "--iterations", "1", "--counts",
                           str(limit / 2), "-o", "out.npy"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
