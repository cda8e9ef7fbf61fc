"""examples/: each example runs end to end at its small size (--small, output in a temporary
directory) and what it prints is held to bounds measured on it. Run by the ctest `examples`
(label examples), which sets SHIFTOP_EXAMPLES=1; python.package skips them, so that CI runs them
once. torch_learning.py needs PyTorch: it skips where torch is missing unless
SHIFTOP_REQUIRE_TORCH=1 (the device run, where torch is installed) makes it fail instead."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("SHIFTOP_SOURCE_DIR", Path(__file__).resolve().parents[3]))
EXAMPLES = SOURCE / "examples"
pytestmark = pytest.mark.skipif(os.environ.get("SHIFTOP_EXAMPLES") != "1",
                                reason="run by the ctest 'examples' (SHIFTOP_EXAMPLES=1)")
HAVE_TORCH = importlib.util.find_spec("torch") is not None
requires_torch = pytest.mark.skipif(
    not HAVE_TORCH and os.environ.get("SHIFTOP_REQUIRE_TORCH") != "1",
    reason="PyTorch is not installed (SHIFTOP_REQUIRE_TORCH=1 makes this a failure)")


def run_example(name, *args):
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args)],
                          capture_output=True, text=True, timeout=600)
    return done


def number(pattern, text):
    found = re.search(pattern, text)
    assert found, (pattern, text)
    return float(found.group(1))


def test_fftmatvec_first_five_lines(tmp_path):
    done = run_example("fftmatvec_first_five_lines.py", "--small", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "F is 120 x 480 (Nd=3, Nm=12, Nt=40)" in done.stdout
    assert (tmp_path / "heat2d_fftmatvec" / "binary" / "meta_adj").is_file()
    assert number(r"relative difference (\S+)\n", done.stdout) < 1e-14  # measured 1.2e-16
    # FP32 in phases 2-4: about FP32's rounding (measured 1.1e-7), never FP64's.
    assert 1e-10 < number(r"DSSDD.*to FP64 (\S+)\n", done.stdout) < 1e-6
    usage = run_example("fftmatvec_first_five_lines.py")
    assert usage.returncode == 2 and "give an FFTMatvec directory or --small" in usage.stderr


@requires_torch
def test_torch_learning(tmp_path):
    done = run_example("torch_learning.py", "--small", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    # The same Adam in NumPy: misfit 129 against the noise level 120, width 0.0996, error 5%.
    misfit = number(r"step +800: misfit (\S+) ", done.stdout)
    noise_level = number(r"noise level: (\S+)\)", done.stdout)
    assert misfit < 1.25 * noise_level
    assert abs(number(r"width: learned (\S+),", done.stdout) - 0.1) < 0.005
    assert number(r"learned source: (\S+)\n", done.stdout) < 0.1
    assert (tmp_path / "torch_learned_source.png").stat().st_size > 10_000
