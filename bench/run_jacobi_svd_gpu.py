#!/usr/bin/env python3
"""Issue 16's GPU SVD benchmarks: shiftop's batched Jacobi SVD against cuSOLVER (gesvdjBatched,
gesvdj, gesvd; through bench_jacobi_svd_gpu), torch.linalg.svd and cupy.linalg.svd, with the
relative accuracy of the singular values beside each time.

Sections (--sections):
  batched   batches of n x n matrices, n = 32 (10^4 matrices), 64 (10^4), 128 (5000), 256 (2000),
            FP64 and FP32, values only; FP64 with U, V for n = 32 and 128; FP64 graded matrices
            (12 decades of column scales) for n = 32 and 128, cuSOLVER only (the libraries'
            error on those is LAPACK's absolute error, already known). Target: shiftop >= 3x
            faster than the fastest peer.
  spectrum  1001 complex 100 x 5000 matrices (the spectrum of the (Nd=100, Nm=5000, Nt=1000)
            operator), values only. Target: >= 5x.
  single    one n x n FP64 matrix, n = --single-sizes, values only and (--single-vectors) with U
            and V: shiftop (the blocked method with cuBLAS products, once per --single-variants:
            auto is the "shiftop" column, the others "shiftop-<variant>") against gesvdj, gesvd
            and gesvda, one binary call per method (a slow one cannot take the others' results
            with it); shiftop only up to --single-shiftop-max, the larger orders recorded as
            skipped with that reason; --single-graded-sizes adds graded matrices (B D),
            values only, with every method's relative error against the CPU Jacobi.

gesvdj, gesvd, torch and cupy loop over the matrices of a batch above 32 x 32, at milliseconds per
matrix: they are timed on the first matrices of the batch (timed_matrices in the JSON) and scaled
linearly to the whole batch, so that the run fits in about six minutes of an H100. The binary's
accuracy reference is shiftop's CPU Jacobi in FP64 (cuSOLVER's FP64 gesvd for single orders >=
2048); torch's and cupy's is shiftop's CPU svd of the same random matrices (NumPy's FP64 svd if the
package is not importable: absolute accuracy, which random matrices do not tell apart).

Writes one JSON (--out) with the device, the date, and per case every method's median and minimum
time, accuracy, sweeps, the speed-up of shiftop over the fastest peer and the floor (bench/NOTES.md,
"Issue 16: GPU Jacobi SVD"), and a Markdown table (--markdown). A failed or timed-out binary call is
recorded with its error and command; a missing torch or cupy is an error unless --no-torch or
--no-cupy says to leave it out.

Usage (on the device machine, after scripts/gpu-check's build):
  PYTHONPATH=build-gpu/python python3 bench/run_jacobi_svd_gpu.py \\
      --binary build-gpu/bench/bench_jacobi_svd_gpu --out jacobi-svd-gpu.json \\
      --markdown jacobi-svd-gpu.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import subprocess
import sys
import time

import numpy as np

# H100 SXM: FP64 without tensor cores (the pointwise kernels use FMAs), FP32, HBM3.
PEAK_FLOPS = {"d": 34e12, "z": 34e12, "s": 67e12, "c": 67e12}
HBM_BYTES_PER_S = 3.35e12
EXPECTED_SWEEPS = 8
ITEM_BYTES = {"d": 8, "s": 4, "z": 16, "c": 8}
NUMPY_DTYPE = {"d": np.float64, "s": np.float32, "z": np.complex128, "c": np.complex64}
PEERS = ("gesvdj_batched", "gesvdj", "gesvd", "gesvda", "torch", "cupy")


def floor_ms(kind, m, n, batch):
    """The larger of compute (QR 2 m n^2 plus 8 sweeps of 4 n^3 on the n x n factor, m >= n after
    transposing; complex x4) and memory (each matrix read once) time, in ms."""
    m, n = max(m, n), min(m, n)
    flops = (2 * m * n * n + EXPECTED_SWEEPS * 4 * n ** 3) * batch
    if kind in "zc":
        flops *= 4
    bytes_read = m * n * batch * ITEM_BYTES[kind]
    return 1e3 * max(flops / PEAK_FLOPS[kind], bytes_read / HBM_BYTES_PER_S)


def cases(args):
    """The cases of the selected sections, each a dict of the binary's arguments and ours."""
    out = []
    if "batched" in args.sections:
        for kind in "ds":
            for n, batch in ((32, 10000), (64, 10000), (128, 5000), (256, 2000)):
                out.append(dict(section="batched", kind=kind, m=n, n=n, batch=batch,
                                matrix="random", vectors=False, target=3.0))
        for n, batch in ((32, 10000), (128, 5000)):
            out.append(dict(section="batched", kind="d", m=n, n=n, batch=batch, matrix="random",
                            vectors=True, target=3.0))
        for n, batch in ((32, 10000), (128, 5000)):
            out.append(dict(section="batched", kind="d", m=n, n=n, batch=batch, matrix="graded",
                            vectors=False, target=None, libraries=False))
    if "spectrum" in args.sections:
        out.append(dict(section="spectrum", kind="z", m=100, n=5000, batch=1001, matrix="random",
                        vectors=False, target=5.0, timed=100, library_timed=50, reps=3))
    if "single" in args.sections:
        for vectors in (False, True) if args.single_vectors else (False,):
            for n in args.single_sizes:
                if vectors and n > args.single_vectors_max:
                    continue
                out.append(dict(section="single", kind="d", m=n, n=n, batch=1, matrix="random",
                                vectors=vectors, target=1.0, libraries=False, versus=("gesvd",),
                                reps=3 if n <= 2048 else 1, warmup=1 if n <= 4096 else 0))
        for n in args.single_graded_sizes:  # values only, against the CPU Jacobi's
            out.append(dict(section="single", kind="d", m=n, n=n, batch=1, matrix="graded",
                            vectors=False, target=1.0, libraries=False, versus=("gesvd",),
                            reps=1, warmup=1))
    for case in out:
        case.setdefault("libraries", True)
        case.setdefault("timed", args.timed_matrices)
        case.setdefault("library_timed", args.timed_matrices)
        case.setdefault("reps", 5 if case["n"] <= 64 else 3)
        case.setdefault("warmup", 1)
        batched_path = case["m"] <= 32 and case["n"] <= 32
        case["binary_methods"] = ["shiftop"] + (["gesvdj_batched"] if batched_path else []) + [
            "gesvdj", "gesvd"] + (["gesvda"] if case["section"] == "single" else [])
        case["name"] = "{section}-{kind}-{m}x{n}x{batch}{v}{g}".format(
            v="-uv" if case["vectors"] else "", g="-graded" if case["matrix"] == "graded" else "",
            **case)
    return out


def run_binary(args, case, methods, reference="cpu", variant="auto"):
    """One call of bench_jacobi_svd_gpu: its JSON object, or an entry with the error."""
    command = [args.binary, "--json", "--variant", variant, "--batch", str(case["batch"]),
               "--m", str(case["m"]),
               "--n", str(case["n"]), "--type", case["kind"], "--methods", ",".join(methods),
               "--reps", str(case["reps"]), "--warmup", str(case["warmup"]),
               "--matrix", case["matrix"], "--streams", str(args.streams),
               "--timed-matrices", str(case["timed"]), "--reference", reference,
               "--vectors" if case["vectors"] else "--values-only"]
    timeout = args.single_timeout if case["section"] == "single" else args.timeout
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s", "command": shlex.join(command)}
    sys.stderr.write(done.stderr)
    # 3: some methods failed, each recorded with its error in the printed JSON.
    if done.returncode not in (0, 3):
        return {"error": f"exit status {done.returncode}: {done.stderr.strip()[-2000:]}",
                "command": shlex.join(command)}
    result = json.loads(done.stdout)
    result["command"] = shlex.join(command)
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


def random_batch(kind, count, m, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((count, m, n))
    if kind in "zc":
        a = a + 1j * rng.standard_normal((count, m, n))
    return a.astype(NUMPY_DTYPE[kind])


def reference_sigma(samples):
    """FP64 singular values of the (k, m, n) samples and the name of the reference."""
    wide = samples.astype(np.complex128 if np.iscomplexobj(samples) else np.float64)
    try:
        import shiftop
    except ImportError:
        return (np.linalg.svd(wide, compute_uv=False),
                "numpy FP64 svd (absolute accuracy; shiftop not importable)")
    return shiftop.svd(wide, compute_uv=False), "shiftop CPU jacobi FP64"


class Torch:
    name = "torch"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        self.torch = torch
        self.version = torch.__version__

    def upload(self, a):
        return self.torch.from_numpy(a).cuda()

    def svd(self, x, vectors):
        if vectors:
            return self.torch.linalg.svd(x, full_matrices=False)[1]
        return self.torch.linalg.svdvals(x)

    def timer(self):
        start = self.torch.cuda.Event(enable_timing=True)
        stop = self.torch.cuda.Event(enable_timing=True)
        return (start.record, lambda: (stop.record(), stop.synchronize(),
                                       start.elapsed_time(stop))[-1])

    def host(self, s):
        return s.cpu().numpy()


class Cupy:
    name = "cupy"

    def __init__(self):
        import cupy
        self.cupy = cupy
        self.version = cupy.__version__

    def upload(self, a):
        return self.cupy.asarray(a)

    def svd(self, x, vectors):
        if vectors:
            return self.cupy.linalg.svd(x, full_matrices=False)[1]
        return self.cupy.linalg.svd(x, compute_uv=False)

    def timer(self):
        start, stop = self.cupy.cuda.Event(), self.cupy.cuda.Event()
        return (start.record, lambda: (stop.record(), stop.synchronize(),
                                       self.cupy.cuda.get_elapsed_time(start, stop))[-1])

    def host(self, s):
        return self.cupy.asnumpy(s)


def time_library(library, case, samples_max=64):
    """Median and minimum of a batched call on a (count, m, n) device array, scaled to the batch;
    count is the batch where the library takes the batched path (m, n <= 32), else the case's
    library_timed. The relative error of the sampled singular values against an FP64 reference."""
    m, n, batch = case["m"], case["n"], case["batch"]
    count = batch if m <= 32 and n <= 32 else min(batch, case["library_timed"])
    a = random_batch(case["kind"], count, m, n, seed=16)
    x = library.upload(a)
    library.svd(x, case["vectors"])  # warm-up: handles, workspaces, kernels
    times = []
    for _ in range(case["reps"]):
        start, stop = library.timer()
        start()
        s = library.svd(x, case["vectors"])
        times.append(stop() * batch / count)
    k = min(samples_max, count)
    picked = np.arange(k) * count // k
    exact, reference = reference_sigma(a[picked])
    got = library.host(s)[picked].astype(np.float64)
    error = float(np.max(np.abs(got - exact) / exact))
    return {"method": library.name, "version": library.version,
            "median_ms": float(np.median(times)), "min_ms": float(np.min(times)),
            "times_ms": [float(t) for t in times], "timed_matrices": int(count),
            "relative_error": error, "reference": reference, "samples": int(k)}


def summarise(case, methods):
    """Adds shiftop's time, the fastest peer, the speed-up and the floor to the case."""
    timed = {e["method"]: e for e in methods if "median_ms" in e}
    case["floor_ms"] = floor_ms(case["kind"], case["m"], case["n"], case["batch"])
    # (single: the target is gesvd; gesvda is approximate, gesvdj is reported beside)
    peers = [timed[p] for p in case.get("versus", PEERS) if p in timed]
    if "shiftop" not in timed or not peers:
        return
    ours = timed["shiftop"]["median_ms"]
    fastest = min(peers, key=lambda e: e["median_ms"])
    case.update(shiftop_median_ms=ours, fastest_peer=fastest["method"],
                fastest_peer_median_ms=fastest["median_ms"],
                speedup_over_fastest_peer=fastest["median_ms"] / ours,
                shiftop_over_floor=ours / case["floor_ms"])
    if case["target"] is not None:
        case["meets_target"] = case["speedup_over_fastest_peer"] >= case["target"]


def run_case(args, case, libraries):
    started = time.monotonic()
    methods, calls = [], []
    if case["section"] == "single":  # one call per method
        for method in case["binary_methods"]:
            if method == "shiftop" and case["n"] > args.single_shiftop_max:
                methods.append({"method": method, "skipped": (
                    f"n > --single-shiftop-max {args.single_shiftop_max}")})
                continue
            if method == "gesvdj" and case["n"] > args.single_gesvdj_max:
                methods.append({"method": method, "skipped": (
                    f"n > --single-gesvdj-max {args.single_gesvdj_max}: gesvdj took 8.6 s (values) "
                    "and 11.1 s (U, V) at n = 8192 on an H200 (2026-12-02), about 8 times that at "
                    "twice the order")})
                continue
            # gesvd is the FP64 reference of random matrices from 2048 on (its own error is 0 by
            # construction); graded ones need the CPU Jacobi's relative accuracy at every order.
            reference = ("cpu" if case["n"] < 2048 or case["matrix"] == "graded" else
                         "none" if method == "gesvd" else "gesvd")
            for variant in args.single_variants if method == "shiftop" else ["auto"]:
                name = method if variant == "auto" else f"{method}-{variant}"
                calls.append(([name], run_binary(args, case, [method], reference, variant)))
    else:
        calls.append((case["binary_methods"], run_binary(args, case, case["binary_methods"])))
    for names, call in calls:
        if "error" in call:
            methods += [{"method": name, **call} for name in names]
            continue
        for entry in call["methods"]:
            entry.update(reference=call["reference"], samples=call["samples"],
                         command=call["command"])
            if len(names) == 1:  # a variant's call names its one method
                entry["method"] = names[0]
            methods.append(entry)
        case.setdefault("device", call["device"])
        case.setdefault("poisoned_workspaces", call["poisoned_workspaces"])
    if case["libraries"]:
        for library in libraries:
            try:
                methods.append(time_library(library, case))
            except Exception as e:  # recorded, not fatal: e.g. out of memory in one library
                methods.append({"method": library.name, "error": f"{type(e).__name__}: {e}"})
    case["methods"] = methods
    summarise(case, methods)
    case["seconds"] = round(time.monotonic() - started, 1)
    line = f"[{case['seconds']:6.1f} s] {case['name']}"
    if "speedup_over_fastest_peer" in case:
        line += (f": shiftop {case['shiftop_median_ms']:.3f} ms, {case['fastest_peer']} "
                 f"{case['fastest_peer_median_ms']:.3f} ms, "
                 f"speed-up {case['speedup_over_fastest_peer']:.2f}x")
    print(line, file=sys.stderr, flush=True)
    return case


def cell(entry, batch):
    if entry is None:
        return ""
    if "skipped" in entry:
        return "skipped"
    if "error" in entry:
        return "error"
    text = f"{entry['median_ms']:.3g}" + ("*" if entry["timed_matrices"] < batch else "")
    error = entry.get("relative_error")
    text += f" ({error:.1e}" if error is not None else " (-"
    sweeps = entry.get("max_sweeps")
    return text + (f", {sweeps} sw)" if sweeps is not None else ")")


def markdown(result):
    variants = sorted({e["method"] for c in result["cases"] for e in c["methods"]
                       if e["method"].startswith("shiftop-")})
    columns = ("shiftop", *variants) + PEERS
    lines = [f"GPU Jacobi SVD, {result['device']}, {result['date']}. Median ms for the whole "
             "batch (relative error of the singular values, sweeps); * = timed on the first "
             "matrices and scaled to the batch." + (
                 " shiftop's times include the test build's NaN fill of the workspaces it "
                 "allocates." if result["poisoned_workspaces"] else ""), "",
             "| case | " + " | ".join(columns) + " | speed-up | target | floor ms |",
             "|" + " --- |" * (len(columns) + 4)]
    for case in result["cases"]:
        by_method = {e["method"]: e for e in case["methods"]}
        speedup = case.get("speedup_over_fastest_peer")
        target = case.get("target")
        lines.append("| {} | {} | {} | {} | {:.3g} |".format(
            case["name"], " | ".join(cell(by_method.get(c), case["batch"]) for c in columns),
            f"{speedup:.2f}x over {case['fastest_peer']}" if speedup else "",
            f">= {target:g}x ({'met' if case.get('meets_target') else 'not met'})" if target
            and speedup else "", case["floor_ms"]))
    failed = [e for c in result["cases"] for e in c["methods"] if "error" in e]
    if failed:
        lines += ["", f"{len(failed)} method(s) failed: see the JSON's entries with 'error'."]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--binary", default="build-gpu/bench/bench_jacobi_svd_gpu",
                        help="the bench_jacobi_svd_gpu executable")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--markdown", help="also write the Markdown table there")
    parser.add_argument("--sections", default="batched,spectrum,single",
                        type=lambda s: s.split(","), help="batched, spectrum, single")
    parser.add_argument("--single-sizes", default="1024,2048,4096,8192",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--single-shiftop-max", type=int, default=16384,
                        help="largest single order shiftop runs")
    parser.add_argument("--single-vectors", action="store_true",
                        help="single: also the orders up to --single-vectors-max with U and V")
    parser.add_argument("--single-graded-sizes", default="",
                        type=lambda s: [int(x) for x in s.split(",") if x],
                        help="single: orders of graded matrices (B D, 12 decades of column "
                             "scales), values only, every method against the CPU Jacobi in FP64 "
                             "(the relative error of the smallest values); none by default")
    parser.add_argument("--single-vectors-max", type=int, default=8192,
                        help="single: largest order with U and V")
    parser.add_argument("--single-gesvdj-max", type=int, default=8192,
                        help="single: largest order gesvdj runs")
    parser.add_argument("--single-variants", default="auto", type=lambda s: s.split(","),
                        help="single: shiftop's variants, one call each (auto, block-oriented, "
                             "full-block)")
    parser.add_argument("--timed-matrices", type=int, default=200,
                        help="per-matrix loops (gesvdj, gesvd, torch, cupy above 32 x 32) time "
                             "this many matrices and scale to the batch")
    parser.add_argument("--streams", type=int, default=4, help="streams for gesvdj and gesvd")
    parser.add_argument("--timeout", type=int, default=150,
                        help="seconds per binary call (batched, spectrum)")
    parser.add_argument("--single-timeout", type=int, default=120,
                        help="seconds per binary call of the single section")
    parser.add_argument("--no-torch", action="store_true", help="leave torch.linalg.svd out")
    parser.add_argument("--no-cupy", action="store_true", help="leave cupy.linalg.svd out")
    args = parser.parse_args()
    unknown = set(args.sections) - {"batched", "spectrum", "single"}
    if unknown:
        parser.error(f"--sections: unknown {sorted(unknown)} (expected batched, spectrum, single)")

    libraries = []
    for flag, kind in ((args.no_torch, Torch), (args.no_cupy, Cupy)):
        if flag:
            continue
        try:
            libraries.append(kind())
        except (ImportError, RuntimeError) as e:
            parser.error(f"{kind.name} is not usable ({e}): install it, or pass --no-{kind.name}")

    started = datetime.datetime.now().astimezone()
    clock = time.monotonic()
    result = {"date": started.date().isoformat(), "started": started.isoformat(timespec="seconds"),
              "command": shlex.join(sys.argv), "libraries": {lib.name: lib.version
                                                             for lib in libraries},
              "floor_model": {"peak_flops": PEAK_FLOPS, "hbm_bytes_per_s": HBM_BYTES_PER_S,
                              "expected_sweeps": EXPECTED_SWEEPS},
              "cases": []}
    for case in cases(args):
        result["cases"].append(run_case(args, case, libraries))
    result["device"] = next((c["device"] for c in result["cases"] if "device" in c), "unknown")
    # True in a build with the tests' workspace poisoning: shiftop's times include a NaN fill of
    # each workspace it allocates (scripts/gpu-check --svd-bench builds without it).
    result["poisoned_workspaces"] = any(c.get("poisoned_workspaces") for c in result["cases"])
    result["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    result["seconds"] = round(time.monotonic() - clock, 1)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    table = markdown(result)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    print(table)


if __name__ == "__main__":
    main()
