#!/usr/bin/env python3
"""The spectrum of a block Toeplitz operator (issue 15): the singular values of the Nt+1 matrices
F^[w] (Nd x Nm) with shiftop against numpy.linalg.svd on the stacked F^ (the same work).

shiftop: `op.spectrum()` on all threads and on one (the kernels recovered from the plan by
min(Nd, Nm) impulse applies, the FFT of the kernels, the batched Jacobi SVD, OpenMP over the
frequencies), and `shiftop.spectrum(K)`, which starts from the kernels (the recovery's cost is the
difference). NumPy: `np.fft.rfft` of the kernels zero-padded to 2 Nt (timed on its own) and
`np.linalg.svd(Fhat, compute_uv=False)` on the (Nt+1, Nd, Nm) stack (LAPACK gesdd per matrix;
OpenBLAS threads, as many as it starts with: OPENBLAS_NUM_THREADS). Each time is the median of
--reps repetitions after one untimed warm-up; the calls alternate so that load drift hits all.
The accuracy: max |sigma_shiftop - sigma_numpy| / sigma_max, and the same for the smallest
values relative to themselves.

  PYTHONPATH=build/python python3 bench/spectrum.py --json bench/results/<dir>/spectrum.json

Default shape (Nd, Nm, Nt) = (20, 200, 500). JSON on stdout and in --json; one summary line per
timing on stderr.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

import shiftop


def stacked_fhat(K):
    nd, nm, nt = K.shape
    return np.fft.rfft(K, n=2 * nt, axis=2).transpose(2, 0, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nd", type=int, default=20)
    parser.add_argument("--nm", type=int, default=200)
    parser.add_argument("--nt", type=int, default=500)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="shiftop's 'all threads' (default: the CPU count)")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--json", help="also write the JSON here")
    args = parser.parse_args()

    load_before = list(os.getloadavg())
    rng = np.random.default_rng(args.seed)
    K = rng.standard_normal((args.nd, args.nm, args.nt))
    op = shiftop.Operator.from_kernels(K, threads=args.threads)
    calls = {
        "shiftop_op_spectrum_all_threads": lambda: op.spectrum(threads=args.threads),
        "shiftop_op_spectrum_one_thread": lambda: op.spectrum(threads=1),
        "shiftop_spectrum_from_kernels_all_threads":
            lambda: shiftop.spectrum(K, threads=args.threads),
        "numpy_rfft": lambda: stacked_fhat(K),
        "numpy_svd_stacked_fhat": None,  # filled below with F^ computed once
    }
    fhat = stacked_fhat(K)
    calls["numpy_svd_stacked_fhat"] = lambda: np.linalg.svd(fhat, compute_uv=False)
    for call in calls.values():  # warm-up (and the results to compare)
        call()
    samples = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    for _ in range(args.reps):
        for name, call in calls.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            call()
            samples[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    # cpu_s: the process's CPU time (all its threads) during the call: on a shared, loaded
    # machine the wall time of a one-thread call exceeds it by the time it waited for a core.
    timings = {name: {"median_s": statistics.median(t), "min_s": min(t),
                      "median_cpu_s": statistics.median(cpu[name]), "reps": args.reps}
               for name, t in samples.items()}

    ours = op.spectrum(threads=args.threads)
    theirs = np.linalg.svd(fhat, compute_uv=False)
    smallest = theirs[:, -1]
    accuracy = {
        "max_abs_difference_over_sigma_max":
            float(np.abs(ours.sigma - theirs).max() / theirs.max()),
        "max_relative_difference_of_smallest_per_frequency":
            float(np.max(np.abs(ours.sigma[:, -1] - smallest) / smallest)),
        "from_kernels_vs_op_spectrum_over_sigma_max":
            float(np.abs(shiftop.spectrum(K).sigma - ours.sigma).max() / ours.sigma_max),
    }
    numpy_total = (timings["numpy_rfft"]["median_s"]
                   + timings["numpy_svd_stacked_fhat"]["median_s"])
    result = {
        "benchmark": "spectrum",
        "shape": {"nd": args.nd, "nm": args.nm, "nt": args.nt},
        "frequencies": args.nt + 1,
        "matrix": f"{args.nd} x {args.nm} complex128 per frequency",
        "threads_all": args.threads,
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset (OpenBLAS default)"),
        "machine": {"cpu_count": os.cpu_count(), "processor": platform.processor(),
                    "loadavg_before": load_before, "loadavg_after": list(os.getloadavg()),
                    "python": platform.python_version(),
                    "numpy": np.__version__, "shiftop": shiftop.__version__},
        "timings": timings,
        "numpy_rfft_plus_svd_median_s": numpy_total,
        "speedup_over_numpy": {
            "op_spectrum_all_threads":
                numpy_total / timings["shiftop_op_spectrum_all_threads"]["median_s"],
            "op_spectrum_one_thread":
                numpy_total / timings["shiftop_op_spectrum_one_thread"]["median_s"],
            "spectrum_from_kernels_all_threads":
                numpy_total / timings["shiftop_spectrum_from_kernels_all_threads"]["median_s"],
        },
        "spectrum": {"sigma_max": ours.sigma_max, "sigma_min": ours.sigma_min,
                     "kappa": ours.kappa, "rank": ours.rank, "tolerance": ours.tolerance,
                     "converged": ours.converged, "max_sweeps": ours.max_sweeps},
        "accuracy": accuracy,
    }
    for name, t in timings.items():
        print(f"{name}: median {t['median_s'] * 1e3:.1f} ms (min {t['min_s'] * 1e3:.1f}, "
              f"CPU {t['median_cpu_s'] * 1e3:.1f})", file=sys.stderr)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            file.write(text + "\n")


if __name__ == "__main__":
    main()
