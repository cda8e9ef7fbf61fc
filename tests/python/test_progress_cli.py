"""--progress of svd, gsvd and spectrum (issue 28, section 5: they ran for tens of seconds
silently): one line on stderr per sweep of every variant (per frequency for spectrum), as many as
the JSON summary counts, the last one the converged sweep; stdout and the results unchanged."""
import json
import os
import re
import subprocess

import numpy as np
import pytest

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")


def run(tmp_path, *args):
    done = subprocess.run([SHIFTOP, *map(str, args)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def same_summary(quiet, loud):
    a, b = json.loads(quiet), json.loads(loud)
    a.pop("seconds"), b.pop("seconds")
    return a == b


@pytest.mark.parametrize("variant", ["pointwise", "block-oriented", "full-block"])
def test_svd_prints_every_sweep(tmp_path, variant):
    np.save(tmp_path / "a.npy", np.random.default_rng(1).standard_normal((40, 24)))
    args = ("svd", "--input", "a.npy", "--output", "s.npy", "--variant", variant, "--json")
    quiet = run(tmp_path, *args)
    s = np.load(tmp_path / "s.npy")
    loud = run(tmp_path, *args, "--progress")
    assert quiet.stderr == "" and same_summary(quiet.stdout, loud.stdout)
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), s)
    sweeps = json.loads(loud.stdout)["sweeps"]
    lines = loud.stderr.splitlines()
    found = [re.fullmatch(rf"svd: sweep {k} of at most 60: (\d+) rotations", line)
             for k, line in enumerate(lines, 1)]
    assert len(lines) == sweeps and all(found), lines
    assert [int(f[1]) > 0 for f in found] == [True] * (sweeps - 1) + [False]  # 0: converged


@pytest.mark.parametrize("variant", ["pointwise", "block-oriented"])
def test_gsvd_prints_every_sweep(tmp_path, variant):
    rng = np.random.default_rng(2)
    np.save(tmp_path / "f.npy", rng.standard_normal((30, 12)))
    np.save(tmp_path / "g.npy", rng.standard_normal((20, 12)))
    args = ("gsvd", "--f", "f.npy", "--g", "g.npy", "--output", "s.npy", "--variant", variant,
            "--json")
    quiet = run(tmp_path, *args)
    loud = run(tmp_path, *args, "--progress")
    assert quiet.stderr == "" and same_summary(quiet.stdout, loud.stdout)
    lines = loud.stderr.splitlines()
    assert len(lines) == json.loads(loud.stdout)["sweeps"] > 1
    assert all(line.startswith(f"gsvd: sweep {k} of at most 50: ")
               and line.endswith(" transformations") for k, line in enumerate(lines, 1))
    assert lines[-1].endswith(": 0 transformations")


def test_spectrum_prints_every_frequency_once(tmp_path):
    nt = 9
    np.save(tmp_path / "K.npy", np.random.default_rng(3).standard_normal((3, 5, nt)))
    quiet = run(tmp_path, "spectrum", "K.npy", "--json")
    loud = run(tmp_path, "spectrum", "K.npy", "--json", "--progress", "--threads", 2)
    assert quiet.stderr == "" and same_summary(quiet.stdout, loud.stdout)
    lines = loud.stderr.splitlines()
    assert len(lines) == nt + 1
    assert sorted(int(line.split()[2]) for line in lines) == list(range(nt + 1))
    assert [line.split("(")[1] for line in lines] == [f"{k} of {nt + 1})" for k in
                                                      range(1, nt + 2)]
    most = max(int(line.split("after ")[1].split()[0]) for line in lines)
    assert most == json.loads(loud.stdout)["max_sweeps"]
