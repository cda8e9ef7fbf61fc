"""examples/: each example runs end to end at its small size (--small, output in a temporary
directory) and what it prints is held to bounds measured on it. Run by the ctest `examples`
(label examples), which sets SHIFTOP_EXAMPLES=1; python.package skips them, so that CI runs them
once. torch_learning.py needs PyTorch: it skips where torch is missing unless
SHIFTOP_REQUIRE_TORCH=1 (the device run, where torch is installed) makes it fail instead."""

import importlib.util
import json
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
    # One OpenMP thread: on a loaded 2-core machine the small CG's barriers (thousands of tiny
    # applies) ran 2000x slower with two threads (wave: 94 s against 0.04 s, measured).
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args)],
                          capture_output=True, text=True, timeout=600, env=env)


def check_inversion(done, out, model, error_bound):
    """What both source inversions print: CG converged with both preconditioners, its MAP point
    equal to the data-space Hessian's up to the Hessian's conditioning (CG stops at a 1e-12
    residual), the error to the truth, and the plots."""
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(converged)") == 2, done.stdout
    assert number(r"Hessian: relative difference (\S+)\n", done.stdout) < 1e-6
    assert number(r"true source: relative error (\S+)\n", done.stdout) < error_bound
    for name in (f"{model}_source.png", f"{model}_cg.png"):
        assert (out / name).read_bytes().startswith(b"\x89PNG") and (out / name).stat().st_size > 10_000


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


def test_heat_source_inversion(tmp_path):
    done = run_example("heat_source_inversion.py", "--small", "--out", tmp_path)
    # Measured: CG and the data-space MAP 4.9e-8 apart, error 0.521 (heat blurs the sources).
    check_inversion(done, tmp_path, "heat", 0.6)


def test_wave_source_inversion(tmp_path):
    done = run_example("wave_source_inversion.py", "--small", "--out", tmp_path)
    # Measured: 1.6e-8 apart, error 0.479.
    check_inversion(done, tmp_path, "wave", 0.55)
    # Data only ever reduce the uncertainty: 0 < posterior std <= prior std (1).
    bands = re.findall(r"posterior standard deviation (\S+) to (\S+)\n", done.stdout)
    assert len(bands) == 3
    for low, high in bands:
        assert 0 < float(low) <= float(high) <= 1.0


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


def test_ct_reconstruction(tmp_path):
    done = run_example("ct_reconstruction.py", "--small", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    # Measured (2000 counts, seed 1): errors 0.198 (MLEM), 0.212 (SIRT), 0.511 (CGLS, which fits
    # the noise: semi-convergence), residuals 0.0375, 0.0451, 0.0186.
    errors = {m: number(rf"{m}: .*relative error to the phantom (\S+),", done.stdout)
              for m in ("mlem", "sirt", "cgls")}
    assert errors["mlem"] < 0.25 and errors["sirt"] < 0.27
    assert errors["cgls"] > errors["mlem"]
    assert number(r"cgls: .*relative residual (\S+),", done.stdout) < \
        number(r"mlem: .*relative residual (\S+),", done.stdout)
    nll = [h["neg_log_likelihood"] for h in
           json.loads((tmp_path / "ct_mlem.json").read_text())["history"]]
    assert len(nll) == 40 and all(b <= a + 1e-6 * abs(a) for a, b in zip(nll, nll[1:]))
    assert (tmp_path / "ct_reconstruction.png").stat().st_size > 10_000
    for m in ("mlem", "sirt", "cgls"):
        assert (tmp_path / f"ct_{m}.png").read_bytes().startswith(b"\x89PNG")
