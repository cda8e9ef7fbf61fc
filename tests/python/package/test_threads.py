"""One meaning of `threads` across the package (shiftop._threads): None is OpenMP's default, an
integer 1 up to the hardware threads this process may run on (its CPU affinity mask, the command
line's --threads limit) is a count, and anything else is refused by name before any work. 100000
used to segfault every entry point below (libgomp ran out of stack), 1000 started 1000 threads on
2 cores, and 0 meant the default in some functions and an error in others."""

import os

import numpy as np
import pytest
import scipy.sparse

import shiftop

HARDWARE = len(os.sched_getaffinity(0))
K = np.random.default_rng(3).standard_normal((2, 3, 6))
D = np.random.default_rng(4).standard_normal((2, 6))


@pytest.fixture
def entry_points(tmp_path):
    """name -> a call of each public function that takes threads, with threads=t."""
    np.save(tmp_path / "K.npy", K)
    noise = shiftop.GaussianNoise(1.0, 2, 6)
    prior = shiftop.DiagonalPrior(1.0, 3, 6)
    circ = scipy.sparse.random(4, 12, density=0.5, format="csr", random_state=0)

    def op(t=None):
        return shiftop.Operator.from_kernels(K, threads=t, planning="estimate")

    return {
        "Operator.from_kernels": op,
        "Operator.from_file": lambda t: shiftop.Operator.from_file(
            tmp_path / "K.npy", threads=t, planning="estimate"),
        "Operator.spectrum": lambda t: op().spectrum(threads=t),
        "CirculantOperator": lambda t: shiftop.CirculantOperator(circ, 3, threads=t,
                                                                 planning="estimate"),
        "svd": lambda t: shiftop.svd(np.ones((3, 2)), threads=t),
        "svd on a stack": lambda t: shiftop.svd(np.ones((4, 3, 2)), threads=t),
        "gsvd": lambda t: shiftop.gsvd(np.ones((3, 2)), np.eye(2), threads=t),
        "spectrum": lambda t: shiftop.spectrum(K, threads=t),
        "regpath": lambda t: shiftop.regpath(K, D, threads=t),
        "TimeSmoothingPrior": lambda t: shiftop.TimeSmoothingPrior(1.0, 3, 6,
                                                                   correlation_steps=2.0,
                                                                   threads=t),
        "KernelPrior": lambda t: shiftop.KernelPrior(np.eye(3)[:, :, None] * np.ones(6),
                                                     threads=t),
        "map_point": lambda t: shiftop.map_point(op(), D, noise, prior, threads=t),
    }


ENTRY_POINTS = ["CirculantOperator", "KernelPrior", "Operator.from_file", "Operator.from_kernels",
                "Operator.spectrum", "TimeSmoothingPrior", "gsvd", "map_point", "regpath",
                "spectrum", "svd", "svd on a stack"]


@pytest.mark.parametrize("name", ENTRY_POINTS)
@pytest.mark.parametrize("threads", [100000, 1000, HARDWARE + 1, 0, -1])
def test_counts_outside_one_to_the_hardware_threads_are_refused(entry_points, name, threads):
    with pytest.raises(ValueError, match=rf"threads={threads}: expected None \(OpenMP's "
                                         rf"default\) or 1\.\.{HARDWARE}, the hardware threads"):
        entry_points[name](threads)


@pytest.mark.parametrize("name", ENTRY_POINTS)
@pytest.mark.parametrize("threads", [2.0, True, "2"])
def test_non_integers_are_refused(entry_points, name, threads):
    with pytest.raises(TypeError, match="threads must be None"):
        entry_points[name](threads)


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_none_and_the_hardware_threads_are_accepted(entry_points, name):
    entry_points[name](None)
    entry_points[name](HARDWARE)
    entry_points[name](np.int64(1))  # NumPy integers are integers


def test_the_limit_is_the_cores_this_process_may_run_on(entry_points):
    assert shiftop._core.hardware_threads() == HARDWARE
    assert sorted(entry_points) == ENTRY_POINTS
