#!/usr/bin/env python3
"""Issue 14's data-space Hessian targets: assembly of K = Gamma_noise + F Gamma_prior F* against one
vector at a time (target: at least 10x on the GPU), and the online phase (MAP point + QoI MAP + QoI
variance from the factor) timed.

One-at-a-time assembly is timed on the first --single-columns columns only (the full K would take
hours) and extrapolated linearly to all Nd*Nt columns; the JSON says so. Both per-column times come
from DataSpaceHessian.time_assembly, which runs the applies' own loop (unit vectors through F*,
Gamma_prior and F, --rhs per apply) without keeping K. The constructor times the full offline
phase; with the diagonal prior its assembly is the Gram product (one DSYRK of (Nd Nt)^2 Nm flops
and prefix sums along the diagonals), whose floor is estimated from a DGEMM of the same size
measured here (numpy on the CPU; cupy or torch on the GPU, null where neither imports).

    PYTHONPATH=<build>/python python3 bench/data_space_hessian.py --backend cuda --json out.json
"""

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

import shiftop
from shiftop import _core


def device_name(backend):
    if backend != "cuda" or shutil.which("nvidia-smi") is None:
        return platform.processor() or platform.machine()
    out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip()


def median_ms(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times), min(times)


def dgemm_rate(backend, n, k):
    """FP64 flop/s of C = A A^T with A n x k as a plain DGEMM (2 n^2 k flops), and what ran it."""
    if backend == "cpu":
        a = np.random.default_rng(2).standard_normal((n, k))
        seconds, _ = median_ms(lambda: a @ a.T, 3)
        return 2.0 * n * n * k / (seconds / 1e3), "numpy"
    try:
        import cupy
        a = cupy.random.standard_normal((n, k), dtype=cupy.float64)

        def product():
            a @ a.T
            cupy.cuda.Device().synchronize()
        source = "cupy"
    except ImportError:
        try:
            import torch
            a = torch.randn(n, k, dtype=torch.float64, device="cuda")

            def product():
                a @ a.T
                torch.cuda.synchronize()
            source = "torch"
        except ImportError:
            return None, "neither cupy nor torch imports"
    seconds, _ = median_ms(product, 5)
    return 2.0 * n * n * k / (seconds / 1e3), source


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--nd", type=int, default=20)
    p.add_argument("--nm", type=int, default=2000)
    p.add_argument("--nt", type=int, default=500)
    p.add_argument("--nq", type=int, default=5, help="QoI blocks of the p2q map Q")
    p.add_argument("--rhs", type=int, default=64,
                   help="right-hand sides per apply in the assembly (and the plans' max_rhs)")
    p.add_argument("--single-columns", type=int, default=200,
                   help="columns timed one at a time (then extrapolated to Nd*Nt)")
    p.add_argument("--prior", choices=["diagonal", "smoothing"], default="diagonal")
    p.add_argument("--reps", type=int, default=20, help="repetitions of each online call")
    p.add_argument("--planning", choices=["measure", "estimate"], default="measure")
    p.add_argument("--json", help="also write the JSON here")
    a = p.parse_args()

    rng = np.random.default_rng(1)
    nd, nm, nt, nq = a.nd, a.nm, a.nt, a.nq
    opts = dict(backend=a.backend, planning=a.planning, max_rhs=a.rhs)
    start = time.perf_counter()
    op = shiftop.Operator.from_kernels(rng.standard_normal((nd, nm, nt)) / np.sqrt(nm * nt),
                                       **opts)
    qoi = shiftop.Operator.from_kernels(rng.standard_normal((nq, nm, nt)) / np.sqrt(nm * nt),
                                        **opts)
    plan_seconds = time.perf_counter() - start
    noise = shiftop.GaussianNoise(1e-2, nd, nt)
    if a.prior == "diagonal":
        prior = shiftop.DiagonalPrior(1.0, nm, nt)
    else:
        prior = shiftop.TimeSmoothingPrior(1.0, nm, nt, correlation_steps=10, backend=a.backend)
    n = nd * nt
    single = min(a.single_columns, n)
    many = min(n, max(a.rhs, 10 * a.rhs))

    # Per-column assembly cost: one column per apply, then --rhs columns per apply.
    _core.DataSpaceHessian.time_assembly(op._plan, prior._core, min(4, n), 1)  # warm-up
    one_seconds = _core.DataSpaceHessian.time_assembly(op._plan, prior._core, single, 1)
    _core.DataSpaceHessian.time_assembly(op._plan, prior._core, min(a.rhs, n), a.rhs)
    many_seconds = _core.DataSpaceHessian.time_assembly(op._plan, prior._core, many, a.rhs)

    # The offline phase as a user runs it.
    start = time.perf_counter()
    h = shiftop.DataSpaceHessian(op, noise, prior, qoi, rhs_per_apply=a.rhs, progress=False)
    offline_seconds = time.perf_counter() - start
    times = h.times

    # The online phase for a new data vector.
    d = rng.standard_normal((nd, nt))
    map_ms, map_min = median_ms(lambda: h.map_point(d), a.reps)
    qoi_ms, qoi_min = median_ms(lambda: h.qoi_map(d), a.reps)
    qvar_ms, _ = median_ms(h.qoi_variance, a.reps)
    online_ms, online_min = median_ms(lambda: (h.map_point(d), h.qoi_map(d), h.qoi_variance()),
                                      a.reps)
    entries = np.stack([rng.integers(0, nm, 16), rng.integers(0, nt, 16)], axis=1)
    pvar_ms, _ = median_ms(lambda: h.posterior_variance(entries), max(3, a.reps // 4))

    one_per_column = one_seconds / single
    many_per_column = many_seconds / many
    # The constructor picks the Gram assembly for a diagonal prior (F is block triangular).
    gram = a.prior == "diagonal"
    rate, rate_source = dgemm_rate(a.backend, n, nm) if gram else (None, "not the Gram assembly")
    syrk_flops = float(n) * n * nm  # 2 n^2 Nm / 2: the lower triangle of Phi Phi^T
    gram_seconds = times["assembly"] if gram else None
    result = {
        "benchmark": "data_space_hessian",
        "backend": a.backend,
        "device": device_name(a.backend),
        "shape": {"nd": nd, "nm": nm, "nt": nt, "nq": nq},
        "prior": a.prior,
        "planning": a.planning,
        "rhs_per_apply": a.rhs,
        "K_order": n,
        "K_bytes": 8 * n * n,
        "memory_bytes": h.memory_bytes,
        "plan_seconds": plan_seconds,
        "offline_seconds": {"total": offline_seconds, **times},
        "assembly_per_column_ms": {
            "one_at_a_time": 1e3 * one_per_column,
            "many_rhs": 1e3 * many_per_column,
            "speedup": one_per_column / many_per_column,
            "one_at_a_time_columns_measured": single,
            "many_rhs_columns_measured": many,
        },
        "one_at_a_time_assembly_seconds_extrapolated": one_per_column * n,
        "many_rhs_assembly_seconds": many_per_column * n if gram else times["assembly"],
        "assembly_method": "gram" if gram else "many_rhs",
        "assembly_speedup": one_per_column * n / times["assembly"],
        "gram": None if not gram else {
            "assembly_seconds": gram_seconds,
            "speedup_vs_one_at_a_time": one_per_column * n / gram_seconds,
            "speedup_vs_many_rhs": many_per_column * n / gram_seconds,
            "syrk_flops": syrk_flops,
            "dgemm_flops_per_second": rate,
            "dgemm_measured_by": rate_source,
            "syrk_floor_seconds": None if rate is None else syrk_flops / rate,
        },
        "note": (f"one-at-a-time assembly measured on the first {single} of {n} columns and "
                 f"extrapolated linearly to all {n}; "
                 + (f"many-rhs assembly measured on {many} columns and extrapolated; the "
                    f"constructor's assembly is the Gram product (assembly_speedup is its ratio "
                    f"to one at a time), its floor the SYRK flops at the measured DGEMM rate"
                    if gram else "many-rhs assembly is the constructor's full assembly of K")),
        "online_ms": {
            "map_point": map_ms, "map_point_min": map_min,
            "qoi_map": qoi_ms, "qoi_map_min": qoi_min,
            "qoi_variance": qvar_ms,
            "map_plus_qoi_map_plus_qoi_variance": online_ms,
            "map_plus_qoi_min": online_min,
            "posterior_variance_16_entries": pvar_ms,
            "reps": a.reps,
        },
    }
    text = json.dumps(result, indent=2)
    print(text)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(f"assembly: {1e3 * one_per_column:.3f} ms/column one at a time, "
          f"{1e3 * many_per_column:.3f} ms/column with {a.rhs} per apply "
          f"({one_per_column / many_per_column:.1f}x)"
          + (f"; Gram assembly {gram_seconds:.3f} s ({one_per_column * n / gram_seconds:.1f}x)"
             if gram else "")
          + f"; offline {offline_seconds:.2f} s; online "
          f"MAP+QoI {online_ms:.2f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
