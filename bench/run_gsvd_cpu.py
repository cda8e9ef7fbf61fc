#!/usr/bin/env python3
"""Issue 18's CPU benchmark driver: runs bench_gsvd_cpu (a build with the tests) on one thread
(OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1) and on all cores, writes everything to
<out-dir>/gsvd_cpu.json and a Markdown table to <out-dir>/gsvd_cpu.md (also printed; --type complex:
gsvd_cpu_complex.*): each
method's median time, dggsvd3's time over it (the speed-up) on the same thread count, sweeps,
transformations, the max and mean relative error of the generalized singular values against the
prescribed ones, and the floor.

The floor (bench/NOTES.md, "GSVD (issue 18), CPU"): a sweep of the implicit Hari-Zimmermann method
on F (m x n), G (p x n) makes n (n - 1) / 2 transformations, each 3 dot products on the F pair and
3 on the G pair (6 (m + p) flops), a 2 x 2 update of both pairs (4 (m + p)) and of Z's pair (4 n):
n (n - 1) / 2 * (10 (m + p) + 4 n) flops. At the level-1 rate in cache (one thread's DDOT rate times
the threads) that is the floor of the pointwise method; at the DGEMM rate the floor of a blocked
method whose work were all level 3. "of floor" is floor / measured time (1 = at the ceiling)."""
import argparse
import json
import os
import subprocess
import sys
from datetime import datetime, timezone


def run(binary, args, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    command = [binary, "--sizes", args.sizes, "--reps", str(args.reps), "--methods", args.methods,
               "--x-condition", str(args.x_condition), "--lapack-max-n", str(args.lapack_max_n)]
    if args.type != "real":
        command += ["--type", args.type]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    header, cases = lines[0], lines[1:]
    for case in cases:
        case["threads"] = threads
    return header, cases


def git(*arguments):
    done = subprocess.run(["git", *arguments], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def sweep_flops(m, p, n):
    return n * (n - 1) / 2 * (10 * (m + p) + 4 * n)


def add_floors(cases, headers):
    for c in cases:
        h = headers[c["threads"]]
        if c["sweeps"] < 0:
            continue
        complex_factor = 4 if c.get("type") == "complex" else 1  # a complex multiply-add is 4
        flops = sweep_flops(c["m"], c["p"], c["n"]) * c["sweeps"] * complex_factor
        c["floor_flops"] = flops
        c["floor_seconds_level1"] = flops / (h["ddot_gflops_one_thread"] * c["threads"] * 1e9)
        c["floor_seconds_dgemm"] = flops / (h["dgemm_gflops"] * 1e9)


def table(cases):
    rows = ["| n | threads | method | seconds | dggsvd3 / this | sweeps | transformations "
            "| max rel. err. | mean rel. err. | level-1 floor s | of floor | DGEMM floor s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    lapack = {(c["n"], c["threads"]): c["seconds"] for c in cases if c["method"] == "dggsvd3"}
    for c in cases:
        base = lapack.get((c["n"], c["threads"]))
        speedup = f"{base / c['seconds']:.2f}" if base else "(skipped)"
        if c["error"]:
            rows.append(f"| {c['n']} | {c['threads']} | {c['method']} | failed: {c['error']} "
                        "| | | | | | | | |")
            continue
        sweeps = c["sweeps"] if c["sweeps"] >= 0 else ""
        transformations = c["transformations"] if c["transformations"] >= 0 else ""
        if not c["converged"]:
            sweeps = f"{sweeps} (not converged)"
        floor1 = f"{c['floor_seconds_level1']:.3g}" if "floor_flops" in c else ""
        frac = f"{c['floor_seconds_level1'] / c['seconds']:.2f}" if "floor_flops" in c else ""
        floor3 = f"{c['floor_seconds_dgemm']:.3g}" if "floor_flops" in c else ""
        rows.append(f"| {c['n']} | {c['threads']} | {c['method']} | {c['seconds']:.3g} | {speedup} "
                    f"| {sweeps} | {transformations} | {c['max_relative_error']:.1e} "
                    f"| {c['mean_relative_error']:.1e} | {floor1} | {frac} | {floor3} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="build/bench/bench_gsvd_cpu")
    parser.add_argument("--sizes", default="250,500,1000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--methods", default="pointwise,block-oriented,full-block,auto,dggsvd3")
    parser.add_argument("--x-condition", type=float, default=10.0)
    parser.add_argument("--type", default="real", choices=["real", "complex"],
                        help="complex: complex pairs against zggsvd3 (4x the real flops)")
    parser.add_argument("--lapack-max-n", type=int, default=1000,
                        help="skip dggsvd3 above this n (its time grows past minutes here)")
    parser.add_argument("--threads", default="1,all",
                        help="comma-separated thread counts; 'all' is os.cpu_count()")
    parser.add_argument("--out-dir", default="bench/results/issue18-cpu-2026-11-27")
    args = parser.parse_args()
    thread_counts = [os.cpu_count() if t == "all" else int(t) for t in args.threads.split(",")]
    result = {"started": datetime.now(timezone.utc).isoformat(), "loadavg_before":
              open("/proc/loadavg").read().strip(), "cpu": next(
                  (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                   if line.startswith("model name")), "unknown"), "cores": os.cpu_count(),
              "arguments": vars(args), "runs": [],
              "commit": git("rev-parse", "HEAD"),
              "uncommitted_in_src_svd": git("status", "--short", "src/svd", "include/shiftop/svd")}
    cases, headers = [], {}
    for threads in dict.fromkeys(thread_counts):
        header, found = run(args.binary, args, threads)
        headers[threads] = header
        result["runs"].append({"threads": threads, **header,
                               "loadavg_after": open("/proc/loadavg").read().strip()})
        cases += found
        print(f"threads {threads}: DGEMM {header['dgemm_gflops']} GFLOP/s, DDOT (one thread) "
              f"{header['ddot_gflops_one_thread']} GFLOP/s", file=sys.stderr)
    add_floors(cases, headers)
    result["cases"] = cases
    result["finished"] = datetime.now(timezone.utc).isoformat()
    result["loadavg_after"] = open("/proc/loadavg").read().strip()
    os.makedirs(args.out_dir, exist_ok=True)
    stem = "gsvd_cpu" if args.type == "real" else "gsvd_cpu_complex"
    with open(os.path.join(args.out_dir, stem + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    markdown = table(cases)
    with open(os.path.join(args.out_dir, stem + ".md"), "w") as f:
        f.write(f"bench/run_gsvd_cpu.py {' '.join(sys.argv[1:])}\n\n"
                f"commit {result['commit']}; {result['cpu']}, {result['cores']} cores; load average before "
                f"{result['loadavg_before']}, after {result['loadavg_after']}\n\n"
                + "\n".join(f"threads {t}: DGEMM {h['dgemm_gflops']} GFLOP/s, DDOT one thread "
                            f"{h['ddot_gflops_one_thread']} GFLOP/s" for t, h in headers.items())
                + "\n\n" + markdown + "\n")
    print(markdown)


if __name__ == "__main__":
    main()
