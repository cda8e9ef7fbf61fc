#!/usr/bin/env python3
"""Issue 15's CPU benchmark driver: runs bench_jacobi_svd_cpu (a build with the tests) on one
thread (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1) and on all cores, writes everything to one JSON
file (--out) and prints a Markdown table: each method's median time, its ratio to dgesvj on the
same thread count, sweeps, and the relative difference of its singular values from dgejsv's."""
import argparse
import json
import os
import subprocess
import sys
from datetime import datetime, timezone


def run(binary, sizes, reps, kinds, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    done = subprocess.run([binary, "--sizes", sizes, "--reps", str(reps), "--kinds", kinds],
                          capture_output=True, text=True, env=env, check=True)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    header, cases = lines[0], lines[1:]
    for case in cases:
        case["threads"] = threads
    return header, cases


def table(cases):
    rows = ["| n | matrix | threads | U, V | method | seconds | / dgesvj | sweeps | rel. diff. to dgejsv |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    svj = {(c["n"], c["kind"], c["threads"], c["vectors"]): c["seconds"]
           for c in cases if c["method"] == "dgesvj"}
    for c in cases:
        ratio = c["seconds"] / svj[(c["n"], c["kind"], c["threads"], c["vectors"])]
        sweeps = c["sweeps"] if c["sweeps"] >= 0 else ""
        rows.append(f"| {c['n']} | {c['kind']} | {c['threads']} | {'yes' if c['vectors'] else 'no'} "
                    f"| {c['method']} | {c['seconds']:.4f} | {ratio:.2f} | {sweeps} "
                    f"| {c['relative_difference_to_dgejsv']:.1e} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", default="build/bench/bench_jacobi_svd_cpu")
    parser.add_argument("--sizes", default="128,256,512,1024")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--kinds", default="both", choices=["both", "random", "graded"])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    result = {"started": datetime.now(timezone.utc).isoformat(), "uptime_before":
              open("/proc/loadavg").read().strip(), "cpu": next(
                  (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                   if line.startswith("model name")), "unknown"), "cores": os.cpu_count(),
              "runs": []}
    cases = []
    for threads in (1, os.cpu_count()):
        header, found = run(args.binary, args.sizes, args.reps, args.kinds, threads)
        result["runs"].append({"threads": threads, **header})
        cases += found
        print(f"threads {threads}: DGEMM {header['dgemm_gflops']} GFLOP/s", file=sys.stderr)
    result["cases"] = cases
    result["finished"] = datetime.now(timezone.utc).isoformat()
    result["uptime_after"] = open("/proc/loadavg").read().strip()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(table(cases))


if __name__ == "__main__":
    main()
