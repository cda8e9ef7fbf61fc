#!/usr/bin/env python3
"""Two builds of shiftop, one GPU, the same cases: is the candidate as fast as the baseline?

A refactoring must not cost time (issue 29: "benchmarks within 2%"). This runs a representative
case of each family's GPU benchmark with both builds, alternating baseline and candidate over
--rounds rounds so that clock and thermal drift fall on both, and compares every shiftop time the
benchmarks report (JSON leaves named median_ms, min_ms, ms_per_pair, or the tool's phase times),
taking per leaf the best round of each build. Cases:
  btt   `shiftop bench --backend cuda` at the wide (100, 5000, 1000) and short-wide
        (7, 40000, 2000) shapes: F and F*, FP64; F in FP32
  svd   bench_jacobi_svd_gpu: 10^4 matrices of 32 x 32 and 2000 of 128 x 128 (one thread block
        per matrix), one 1024 x 1024 (the blocked method), values only
  gsvd  bench_gsvd_gpu: 1001 pairs of 100 x 100, real, values only
  circ  bench_circ_gpu: the CT scanner's small system matrix (k = 150), FP32 and FP64

Writes one JSON (--out): per case and time, both builds' best, the ratio candidate / baseline, and
the worst ratio per family. Usage (device machine, after building both trees):
    bench/compare_builds.py --baseline build-base --candidate build-gpu --out compare.json
"""

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

TIME_KEYS = ("median_ms", "min_ms", "ms_per_pair")


def cases():
    wide = ["--nd", "100", "--nm", "5000", "--nt", "1000"]
    skinny = ["--nd", "7", "--nm", "40000", "--nt", "2000"]
    btt = ["apps/shiftop/shiftop", "bench", "--backend", "cuda", "--reps", "20", "--json"]
    svd = ["bench/bench_jacobi_svd_gpu", "--json", "--type", "d", "--methods", "shiftop",
           "--values-only", "--reference", "none", "--samples", "0"]
    return {
        "btt": {
            "wide F": btt + wide + ["--op", "F"],
            "wide Fadj": btt + wide + ["--op", "Fadj"],
            "wide F SSSSS": btt + wide + ["--op", "F", "--precision", "SSSSS"],
            "short-wide F": btt + skinny + ["--op", "F"],
            "short-wide Fadj": btt + skinny + ["--op", "Fadj"],
        },
        "svd": {
            "10000 x 32^2": svd + ["--batch", "10000", "--m", "32", "--n", "32", "--reps", "5",
                                   "--warmup", "1"],
            "2000 x 128^2": svd + ["--batch", "2000", "--m", "128", "--n", "128", "--reps", "3",
                                   "--warmup", "1"],
            "1 x 1024^2": svd + ["--batch", "1", "--m", "1024", "--n", "1024", "--reps", "2",
                                 "--warmup", "1"],
        },
        "gsvd": {
            "1001 x 100^2 d": ["bench/bench_gsvd_gpu", "--methods", "gpu", "--reps", "5",
                               "--warmup", "1", "--batch", "1001", "--m", "100", "--p", "100",
                               "--n", "100", "--type", "d", "--distinct", "64"],
        },
        "circ": {
            "ct2d-small": ["bench/bench_circ_gpu", "--name", "ct2d-small", "--k", "150",
                           "--precisions", "s,d", "--reps", "20", "--pattern", "ct2d", "--mb",
                           "19600", "--rings", "535", "--sectors", "2400"],
        },
    }


def time_leaves(node, path=""):
    """Every shiftop time in a benchmark's JSON, by its path: the leaves named in TIME_KEYS, and
    the tool's per-phase times; peers' times (cuSOLVER, cuSPARSE, LAPACK) are left out."""
    found = {}
    if isinstance(node, dict):
        for key, value in node.items():
            found.update(time_leaves(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            name = value.get("method", value.get("name", i)) if isinstance(value, dict) else i
            found.update(time_leaves(value, f"{path}/{name}"))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        key = path.rsplit("/", 1)[-1]
        peer = any(p in path.lower() for p in ("cusparse", "gesvd", "cusolver", "lapack", "cpu",
                                                "spmv", "spmm"))
        if key in TIME_KEYS and not peer:
            found[path] = float(node)
    return found


def run(build, command, timeout):
    """The JSON object the benchmark prints (the last line that parses), or None."""
    binary = Path(build) / command[0]
    done = subprocess.run([str(binary)] + command[1:], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        print(f"  {binary} failed ({done.returncode}): {done.stderr.strip()[-300:]}",
              file=sys.stderr)
        return None
    for line in reversed(done.stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", required=True, help="build tree of the baseline")
    parser.add_argument("--candidate", required=True, help="build tree of the candidate")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two builds")
    parser.add_argument("--families", default="btt,svd,gsvd,circ")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per binary call")
    args = parser.parse_args()
    families = args.families.split(",")
    unknown = set(families) - set(cases())
    if unknown:
        parser.error(f"--families: unknown {sorted(unknown)} (expected btt, svd, gsvd, circ)")

    builds = {"baseline": args.baseline, "candidate": args.candidate}
    report = {"date": datetime.date.today().isoformat(), "builds": builds,
              "rounds": args.rounds, "families": {}}
    for family in families:
        family_report = {}
        for name, command in cases()[family].items():
            best = {"baseline": {}, "candidate": {}}
            for round_ in range(args.rounds):
                for which, build in builds.items():
                    out = run(build, command, args.timeout)
                    for leaf, ms in (time_leaves(out) if out else {}).items():
                        best[which][leaf] = min(ms, best[which].get(leaf, float("inf")))
            times = {leaf: {"baseline_ms": best["baseline"][leaf],
                            "candidate_ms": best["candidate"].get(leaf),
                            "ratio": (best["candidate"][leaf] / best["baseline"][leaf]
                                      if leaf in best["candidate"] and best["baseline"][leaf] > 0
                                      else None)}
                     for leaf in best["baseline"]}
            missing = sorted(set(best["candidate"]) ^ set(best["baseline"]))
            family_report[name] = {"command": command, "times": times, "missing": missing}
            worst = max((t["ratio"] for t in times.values() if t["ratio"]), default=None)
            print(f"{family:5} {name:18} {len(times):3} times, worst candidate/baseline "
                  f"{worst if worst is None else round(worst, 4)}", flush=True)
        ratios = [t["ratio"] for case in family_report.values() for t in case["times"].values()
                  if t["ratio"]]
        report["families"][family] = {"cases": family_report,
                                      "worst_ratio": max(ratios, default=None),
                                      "median_ratio": sorted(ratios)[len(ratios) // 2]
                                      if ratios else None}
        # Written after each family: a run cut short keeps what it measured.
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    for family, entry in report["families"].items():
        print(f"{family}: median ratio {entry['median_ratio']}, worst {entry['worst_ratio']}")


if __name__ == "__main__":
    main()
