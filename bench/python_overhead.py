#!/usr/bin/env python3
"""Python overhead per apply (issue 14): `op @ x` from Python against the C++ call on the same
plan, the same arrays and in the same run.

The C++ time is Plan.time_apply (NumPy arrays: btt::Plan::apply between two clock readings in
C++) or Plan.time_apply_device (device arrays: apply_device, then a synchronisation of the
caller's stream, in C++). The Python time is the wall time of `y = op @ x` (and of
`op.apply(x, out=y)`), with, on the GPU, the same stream synchronisation after it. The two are
interleaved repetition by repetition so that drift (clocks, other load) hits both alike; each
median is over --reps repetitions after --warmup untimed ones. Target: median ratio <= 1.05 at
Nd=20, Nm=2000, Nt=500 on the CPU and at the GPU benchmark size (100, 5000, 1000) with device
arrays.

  python3 bench/python_overhead.py --backend cpu --json out.json          # NumPy
  python3 bench/python_overhead.py --backend cuda --json out.json         # torch and cupy

Needs the package on PYTHONPATH (e.g. PYTHONPATH=build-py/python) and, for --backend cuda,
PyTorch and/or CuPy (a missing one is reported in the JSON, not an error, unless none is there).
"""
import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np

import shiftop

INPUT_BLOCKS = {"F": 1, "Fadj": 0}  # index into (Nd, Nm)
OUTPUT_BLOCKS = {"F": 0, "Fadj": 1}


def compare(name, action, cpp_once, python_once, reps, warmup):
    """Interleaved timings of the C++ and Python calls: their medians and ratio."""
    for _ in range(warmup):
        cpp_once()
        python_once()
    cpp, python = [], []
    for _ in range(reps):
        cpp.append(cpp_once())
        python.append(python_once())
    cpp_ms, python_ms = statistics.median(cpp) * 1e3, statistics.median(python) * 1e3
    return {
        "op": action,
        "interface": name,
        "cpp_median_ms": cpp_ms,
        "python_median_ms": python_ms,
        "ratio": python_ms / cpp_ms,
        "overhead_percent": 100.0 * (python_ms / cpp_ms - 1.0),
        "overhead_us": 1e3 * (python_ms - cpp_ms),
        "cpp_min_ms": min(cpp) * 1e3,
        "python_min_ms": min(python) * 1e3,
    }


def timed(call):
    def once():
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    return once


def cpu_cases(op, shape, args, rng):
    nd, nm, nt = shape
    plan = op._plan
    results = []
    for action in args.ops:
        blocks_in = (nd, nm)[INPUT_BLOCKS[action]]
        blocks_out = (nd, nm)[OUTPUT_BLOCKS[action]]
        x = rng.standard_normal((args.nrhs, blocks_in, nt) if args.nrhs > 1 else (blocks_in, nt))
        y = np.empty((args.nrhs, blocks_out, nt) if args.nrhs > 1 else (blocks_out, nt))
        view = op if action == "F" else op.H
        cpp_once = lambda: plan.time_apply(action, x, y, args.nrhs, 1)[0]  # noqa: E731
        results.append(compare("numpy: op @ x", action, cpp_once, timed(lambda: view @ x),
                               args.reps, args.warmup))
        results.append(compare("numpy: op.apply(x, out=y)", action, cpp_once,
                               timed(lambda: view.apply(x, out=y)), args.reps, args.warmup))
    return results


def gpu_cases(op, shape, args, rng, library):
    nd, nm, nt = shape
    plan = op._plan
    if library == "torch":
        import torch

        def to_device(a):
            return torch.from_numpy(a).cuda()

        def empty(s):
            return torch.empty(s, dtype=torch.float64, device="cuda")

        def address(a):
            return a.data_ptr()

        stream = torch.cuda.current_stream()
        stream_ptr, sync = stream.cuda_stream, stream.synchronize
    else:
        import cupy

        def to_device(a):
            return cupy.asarray(a)

        def empty(s):
            return cupy.empty(s, dtype=cupy.float64)

        def address(a):
            return a.data.ptr

        stream = cupy.cuda.get_current_stream()
        stream_ptr, sync = stream.ptr, stream.synchronize
    results = []
    for action in args.ops:
        blocks_in = (nd, nm)[INPUT_BLOCKS[action]]
        blocks_out = (nd, nm)[OUTPUT_BLOCKS[action]]
        batch = (args.nrhs,) if args.nrhs > 1 else ()
        x = to_device(rng.standard_normal(batch + (blocks_in, nt)))
        y = empty(batch + (blocks_out, nt))
        view = op if action == "F" else op.H

        def cpp_once():
            return plan.time_apply_device(action, address(x), address(y), args.nrhs, 1,
                                          stream_ptr, args.device)[0]

        def python_matmul():
            view @ x
            sync()

        def python_out():
            view.apply(x, out=y)
            sync()

        results.append(compare(f"{library}: op @ x", action, cpp_once, timed(python_matmul),
                               args.reps, args.warmup))
        results.append(compare(f"{library}: op.apply(x, out=y)", action, cpp_once,
                               timed(python_out), args.reps, args.warmup))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--nd", type=int)
    parser.add_argument("--nm", type=int)
    parser.add_argument("--nt", type=int)
    parser.add_argument("--nrhs", type=int, default=1)
    parser.add_argument("--ops", nargs="+", default=["F", "Fadj"], choices=["F", "Fadj"])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: OpenMP's)")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--planning", choices=["measure", "estimate"], default="measure")
    parser.add_argument("--libraries", nargs="+", default=["torch", "cupy"],
                        choices=["torch", "cupy"])
    parser.add_argument("--json", help="write the results here (also printed)")
    args = parser.parse_args()
    # The sizes: the CPU target shape, and run_gpu.py's `wide` shape on the GPU.
    default = (20, 2000, 500) if args.backend == "cpu" else (100, 5000, 1000)
    shape = tuple(v if v is not None else d for v, d in zip((args.nd, args.nm, args.nt), default))
    rng = np.random.default_rng(14)
    K = rng.standard_normal(shape)
    start = time.perf_counter()
    op = shiftop.Operator.from_kernels(K, backend=args.backend, device=args.device,
                                       threads=args.threads or None, planning=args.planning)
    plan_s = time.perf_counter() - start
    del K
    out = {
        "command": "python_overhead",
        "backend": args.backend,
        "shape": dict(zip(("nd", "nm", "nt"), shape)),
        "nrhs": args.nrhs,
        "reps": args.reps,
        "warmup": args.warmup,
        "threads": args.threads,
        "planning": args.planning,
        "plan_seconds": plan_s,
        "host": platform.node(),
        "python": sys.version.split()[0],
        "shiftop": shiftop.__version__,
        "results": [],
        "skipped": {},
    }
    if args.backend == "cpu":
        out["results"] = cpu_cases(op, shape, args, rng)
    else:
        for library in args.libraries:
            try:
                __import__(library)
            except ImportError as e:
                out["skipped"][library] = str(e)
                continue
            if library == "torch":
                import torch

                out["device"] = torch.cuda.get_device_name(args.device)
            out["results"] += gpu_cases(op, shape, args, rng, library)
        if not out["results"]:
            sys.exit(f"--backend cuda needs torch or cupy: {out['skipped']}")
    text = json.dumps(out, indent=2)
    print(text)
    for r in out["results"]:
        print(f"# {r['interface']:<28} {r['op']:<5} C++ {r['cpp_median_ms']:9.3f} ms  Python "
              f"{r['python_median_ms']:9.3f} ms  ratio {r['ratio']:.4f}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
