#!/usr/bin/env python3
"""Issue 17, CPU: runs bench_circ_cpu and tabulates it.

Every kernel on every case in FP32 and FP64 (the paper's protocol: 20 products alternating C and
C^T, shortest of three attempts; the baseline block-spmv with fewer products since it reads A k
times). Writes the JSON lines of the binary plus the machine to --out, and a Markdown table with
each kernel's speed-up over block-spmv and its fraction of the memory floor to --markdown and
stdout.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", default="build/bench/bench_circ_cpu")
    parser.add_argument("--out", required=True)
    parser.add_argument("--markdown")
    parser.add_argument("--cases", default="ct-small,ct-medium,scanner-small")
    parser.add_argument("--type", default="both")
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--baseline-products", type=int, default=2)
    parser.add_argument("--cpu", help="the CPU's name, for --lines from another machine")
    parser.add_argument("--lines", help="tabulate the JSON lines of an earlier run of the "
                        "binary (e.g. one made on another machine) instead of running it")
    args = parser.parse_args()

    command = [args.binary, "--cases", *args.cases.split(","), "--type", args.type,
               "--attempts", str(args.attempts), "--baseline-products", str(args.baseline_products)]
    print("running:", " ".join(command), file=sys.stderr)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat()
    load_before = os.getloadavg()
    # Each case's line is echoed as it arrives: a full run takes many minutes on a laptop.
    if args.lines:
        command = ["cat", args.lines]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = []
    for line in proc.stdout:
        if line.startswith("{"):
            rows.append(json.loads(line))
            print(f"{rows[-1]['case']} {rows[-1]['type']} {rows[-1]['kernel']}: "
                  f"{rows[-1]['seconds_per_product'] * 1e3:.1f} ms", file=sys.stderr, flush=True)
    stderr = proc.stderr.read()
    if proc.wait() != 0:
        sys.exit(f"{args.binary} failed ({proc.returncode}): {stderr.strip()[-2000:]}")
    cpu = args.cpu or next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                            if line.startswith("model name")), platform.processor())
    cores = rows[0]["threads"] if rows else os.cpu_count()
    result = {"started": started, "cpu": cpu, "cores": cores,
              "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
              "stderr": stderr, "runs": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)

    lines = [f"CPU: {cpu}, {cores} threads; bandwidth in the same run: "
             f"read {rows[0]['read_GBs']:.1f} GB/s, copy {rows[0]['copy_GBs']:.1f} GB/s", "",
             "| case | type | nnz | kernel | ms / product | GFLOP/s | floor ms | of floor | "
             "speed-up vs block-spmv | max rel. error |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        base = next((r for r in rows if r["case"] == row["case"] and r["type"] == row["type"]
                     and r["kernel"] == "block-spmv"), None)
        speedup = base["seconds_per_product"] / row["seconds_per_product"] if base else float("nan")
        lines.append(
            f"| {row['case']} | {row['type']} | {row['nnz']} | {row['kernel']} | "
            f"{row['seconds_per_product'] * 1e3:.1f} | {row['gflops']:.1f} | "
            f"{row['floor_seconds'] * 1e3:.1f} | {row['fraction_of_floor']:.2f} | "
            f"{speedup:.1f}x | {row['max_relative_error']:.1e} |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
