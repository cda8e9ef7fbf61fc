#!/usr/bin/env python3
"""Issue 18's GPU GSVD benchmark: shiftop's batched implicit Hari-Zimmermann GSVD on the GPU
against the CPU gsvd_hz_batched on all cores of the host and against LAPACK's xGGSVD3 looped over
the pairs (OpenMP over the pairs, one BLAS thread each), through bench_gsvd_gpu.

Cases: 1001 pairs of 100 x 100 (F and G), real (d) and complex (z), values only and with the
vectors (U, V, X; LAPACK: U, V, Q), on pairs with prescribed generalized singular values
(log-uniform over [1e-5, 1e4], X of condition 10; 64 distinct pairs repeated to fill the batch).
Then the Nt + 1 frequency pairs (F^[w], R^[w]) of the heat and wave models (--models; Nd = 32
sensors, Nm = 64 sources, Nt = 1000 steps on a 32 x 32 grid: 1001 complex pairs of 32 x 64 and
128 x 64, R^[w] the mass + first time derivative regulariser), values only, each method's values
against LAPACK's (relative differences of the first Nd values).
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


def run_binary(args, case, method, all_methods=False):
    """One call of the binary; `method` is one method, or with all_methods a comma-separated list
    (then a list of records comes back, the GPU's reps and warm-up for all)."""
    gpu = method == "gpu" or all_methods
    command = [args.binary, "--methods", method,
               "--reps", str(args.gpu_reps if method == "gpu" else args.cpu_reps),
               "--warmup", "1" if gpu else "0"]
    if all_methods:
        command[4] = str(args.cpu_reps)
    if case["type"] in ("heat", "wave"):
        command += ["--model", case["type"], "--grid", "32", "--nd", str(args.model_nd), "--nm",
                    str(args.model_nm), "--nt", str(args.model_nt)]
    else:
        command += ["--batch", str(case["batch"]), "--m", str(case["n"]), "--p", str(case["n"]),
                    "--n", str(case["n"]), "--type", case["type"], "--distinct",
                    str(args.distinct)]
    if case["vectors"]:
        command.append("--vectors")
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"  # LAPACK: one pair per OpenMP thread
    failure = None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                              env=env, check=False)
    except subprocess.TimeoutExpired:
        failure = f"timed out after {args.timeout} s"
    records = []
    if failure is None:
        try:
            out = json.loads(done.stdout.strip().splitlines()[-1])
            for record in out["methods"]:
                record["omp_threads"] = out.get("omp_threads")
                if "reference" in out:
                    record["reference"] = out["reference"]
                records.append(record)
        except (IndexError, KeyError, ValueError):
            failure = f"exit {done.returncode}: {done.stderr[-2000:]}"
    if failure is not None:
        records = [{"method": m, "error": failure} for m in method.split(",")]
    for record in records:
        record["command"] = shlex.join(command)
    return records if all_methods else records[0]


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
    parser.add_argument("--models", default="heat,wave", help="frequency-pair cases; '' for none")
    parser.add_argument("--model-nd", type=int, default=32)
    parser.add_argument("--model-nm", type=int, default=64)
    parser.add_argument("--model-nt", type=int, default=1000)
    args = parser.parse_args()

    result = {"device": device_name(), "date": datetime.datetime.now(datetime.timezone.utc)
              .isoformat(timespec="seconds"), "cases": []}
    rows = []
    cases = [{"type": kind, "batch": args.batch, "n": args.n, "vectors": vectors}
             for kind in args.types.split(",") if kind
             for vectors in ([False] if args.no_vectors else [False, True])]
    cases += [{"type": model, "batch": args.model_nt + 1, "n": args.model_nm, "vectors": False}
              for model in args.models.split(",") if model]
    for case in cases:
        kind, vectors = case["type"], case["vectors"]
        records = {}
        if kind in ("heat", "wave"):
            # One call for all methods: the values are compared within it (against LAPACK's).
            record_list = run_binary(args, case, args.methods, all_methods=True)
            for record in record_list:
                print(json.dumps({**case, **record}), file=sys.stderr, flush=True)
                records[record.get("method", "?")] = record
        else:
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
                         record.get("max_relative_error", record.get("max_relative_difference")),
                         record.get("max_sweeps"), record.get("error", "")))
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    if args.markdown:
        lines = [f"GSVD of {args.batch} pairs of {args.n} x {args.n} (d, z) and of the "
                 f"{args.model_nt + 1} frequency pairs of the models (heat, wave: "
                 f"{args.model_nd} x {args.model_nm}) on {result['device']} ({result['date']}); "
                 "error: against the prescribed values (d, z) or LAPACK's (models)", "",
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
