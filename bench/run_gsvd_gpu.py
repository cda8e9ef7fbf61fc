#!/usr/bin/env python3
"""Issue 18's GPU GSVD benchmark: shiftop's batched implicit Hari-Zimmermann GSVD on the GPU
against the CPU gsvd_hz_batched on all cores of the host and against LAPACK's xGGSVD3 looped over
the pairs (OpenMP over the pairs, one BLAS thread each), through bench_gsvd_gpu.

Cases: 1001 pairs of 100 x 100 (F and G), real (d) and complex (z), values only and with the
vectors (U, V, X; LAPACK: U, V, Q), on pairs with prescribed generalized singular values
(log-uniform over [1e-5, 1e4], X of condition 10; 64 distinct pairs repeated to fill the batch).
The GPU is timed over --gpu-reps calls after a warm-up (median and minimum), the CPU peers over
--cpu-reps calls without one (each call takes seconds). Every method reports the largest and mean
relative error of the values against the prescribed ones, beside its time.

Writes one JSON (--out) with the device, the date, per case every method's record and the
speed-ups of the GPU over the CPU gsvd_hz_batched and over LAPACK, and a Markdown table
(--markdown). A failed or timed-out binary call is recorded with its error and command.

Usage (on the device machine, after scripts/gpu-check --gsvd-bench's build):
  python3 bench/run_gsvd_gpu.py --binary build-gpu-gsvd/bench/bench_gsvd_gpu \\
      --out gsvd-gpu.json --markdown gsvd-gpu.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys


def device_name():
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30, check=False)
        return done.stdout.strip().splitlines()[0] if done.stdout.strip() else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def run_binary(args, case, method):
    gpu = method == "gpu"
    command = [args.binary, "--batch", str(case["batch"]), "--m", str(case["n"]), "--p",
               str(case["n"]), "--n", str(case["n"]), "--type", case["type"], "--methods", method,
               "--reps", str(args.gpu_reps if gpu else args.cpu_reps),
               "--warmup", "1" if gpu else "0", "--distinct", str(args.distinct)]
    if case["vectors"]:
        command.append("--vectors")
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"  # LAPACK: one pair per OpenMP thread
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                              env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"method": method, "error": f"timed out after {args.timeout} s",
                "command": shlex.join(command)}
    try:
        out = json.loads(done.stdout.strip().splitlines()[-1])
        record = out["methods"][0]
        record["omp_threads"] = out.get("omp_threads")
        record["generation_seconds"] = out.get("generation_seconds")
    except (IndexError, KeyError, ValueError):
        record = {"method": method, "error": f"exit {done.returncode}: {done.stderr[-2000:]}"}
    if done.returncode != 0 and "error" not in record:
        record["error"] = f"exit {done.returncode}"
    record["command"] = shlex.join(command)
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--markdown")
    parser.add_argument("--batch", type=int, default=1001)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--types", default="d,z")
    parser.add_argument("--methods", default="gpu,cpu,lapack")
    parser.add_argument("--gpu-reps", type=int, default=5)
    parser.add_argument("--cpu-reps", type=int, default=1)
    parser.add_argument("--distinct", type=int, default=64)
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--no-vectors", action="store_true", help="values only")
    args = parser.parse_args()

    result = {"device": device_name(), "date": datetime.datetime.now(datetime.timezone.utc)
              .isoformat(timespec="seconds"), "cases": []}
    rows = []
    for kind in args.types.split(","):
        for vectors in ([False] if args.no_vectors else [False, True]):
            case = {"type": kind, "batch": args.batch, "n": args.n, "vectors": vectors}
            records = {}
            for method in args.methods.split(","):
                record = run_binary(args, case, method)
                print(json.dumps({**case, **record}), file=sys.stderr, flush=True)
                records[method] = record
            gpu = records.get("gpu", {}).get("seconds_median")
            for peer in ("cpu", "lapack"):
                other = records.get(peer, {}).get("seconds_median")
                if gpu and other:
                    case[f"speedup_over_{peer}"] = other / gpu
            case["methods"] = list(records.values())
            result["cases"].append(case)
            for method, record in records.items():
                rows.append((kind, "yes" if vectors else "no", method,
                             record.get("seconds_median"), record.get("ms_per_pair"),
                             record.get("max_relative_error"), record.get("max_sweeps"),
                             record.get("error", "")))
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    if args.markdown:
        lines = [f"GSVD of {args.batch} pairs of {args.n} x {args.n} on {result['device']} "
                 f"({result['date']})", "",
                 "| type | vectors | method | s (median) | ms / pair | max rel. error | sweeps "
                 "| error |", "|---|---|---|---|---|---|---|---|"]
        for kind, vec, method, seconds, per_pair, error, sweeps, failure in rows:
            def fmt(x, spec):
                return format(x, spec) if isinstance(x, (int, float)) else "-"
            lines.append(f"| {kind} | {vec} | {method} | {fmt(seconds, '.4f')} | "
                         f"{fmt(per_pair, '.4f')} | {fmt(error, '.2e')} | {fmt(sweeps, 'd')} | "
                         f"{failure} |")
        for case in result["cases"]:
            lines.append("")
            lines.append(f"{case['type']}, vectors {case['vectors']}: speed-up over the CPU "
                         f"{case.get('speedup_over_cpu', float('nan')):.1f}x, over LAPACK "
                         f"{case.get('speedup_over_lapack', float('nan')):.1f}x")
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    failed = any("error" in m for c in result["cases"] for m in c["methods"])
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
