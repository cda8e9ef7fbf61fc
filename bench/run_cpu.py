#!/usr/bin/env python3
"""Issue-2 CPU benchmark: shiftop vs numpy side by side, in one run, on this machine's cores.

Runs `shiftop bench` (F and F*, one and 16 right-hand sides, and the direct time-domain product),
`bench/numpy_btt.py` on the same sizes, and `shiftop demo`, then writes everything with the ratios
to bench/results/cpu-<host>-<date>.json and prints a summary. Usage:
    bench/run_cpu.py [--shiftop build/apps/shiftop/shiftop] [--nd 20 --nm 2000 --nt 500]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(cmd):
    print("[run_cpu]", " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--shiftop", default=os.path.join(HERE, "..", "build", "apps", "shiftop", "shiftop"))
    p.add_argument("--nd", type=int, default=20)
    p.add_argument("--nm", type=int, default=2000)
    p.add_argument("--nt", type=int, default=500)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    size = ["--nd", str(a.nd), "--nm", str(a.nm), "--nt", str(a.nt)]
    results = {"date": datetime.date.today().isoformat(), "cpu": cpu_name(), "cores": os.cpu_count(),
               "shiftop": {}, "numpy": {}}
    for op in ("F", "Fadj"):
        for nrhs in (1, 16):
            extra = ["--direct"] if nrhs == 1 else []
            reps = "20" if nrhs == 1 else "5"
            results["shiftop"][f"{op}_rhs{nrhs}"] = run_json(
                [a.shiftop, "bench", *size, "--op", op, "--nrhs", str(nrhs), "--reps", reps, "--json", *extra])[0]
    for nrhs in (1, 16):
        for r in run_json([sys.executable, os.path.join(HERE, "numpy_btt.py"), *size, "--nrhs", str(nrhs),
                           "--reps", "10" if nrhs == 1 else "3"]):
            results["numpy"][f"{r['op']}_rhs{nrhs}"] = r
    results["demo"] = run_json([a.shiftop, "demo", "--json"])[0]

    summary = []
    for op in ("F", "Fadj"):
        one, many = results["shiftop"][f"{op}_rhs1"], results["shiftop"][f"{op}_rhs16"]
        row = {"op": op, "shiftop_ms": one["total_ms"], "floor_ms": one["floor_ms"],
               "time_over_floor": one["time_over_floor"],
               # Issue 19: the whole-apply floor (F^ + inputs + outputs over the read bandwidth)
               # and the F^-only floor (the floor before issue 19, with the read bandwidth).
               "whole_apply_floor_ms": one.get("whole_apply_floor_ms", one["floor_ms"]),
               "fspectrum_only_floor_ms": one.get("fspectrum_only_floor_ms", one["floor_ms"]),
               "rhs16_whole_apply_floor_per_vector_ms":
                   many.get("whole_apply_floor_ms", many["floor_ms"]) / many["nrhs"],
               "rhs16_time_over_floor": many["time_over_floor"],
               "numpy_ms": results["numpy"][f"{op}_rhs1"]["total_ms"],
               "speedup_over_numpy": results["numpy"][f"{op}_rhs1"]["total_ms"] / one["total_ms"],
               "rhs16_per_vector_ms": many["per_vector_ms"],
               "rhs16_per_vector_fraction_of_single": many["per_vector_ms"] / one["total_ms"],
               "numpy_rhs16_per_vector_ms": results["numpy"][f"{op}_rhs16"]["per_vector_ms"],
               "speedup_over_direct": one["speedup_over_direct"]}
        summary.append(row)
    results["summary"] = summary
    out = a.out or os.path.join(HERE, "results", f"cpu-{platform.node()}-{datetime.datetime.now():%Y-%m-%dT%H%M}.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"read bandwidth {results['shiftop']['F_rhs1']['memory_bandwidth']['read_GBs']:.1f} GB/s; wrote {out}")
    print("floor: bytes that must cross memory once (F^ at the plan's FFT length per group, the "
          "inputs read once, the outputs written once) / read bandwidth")
    for r in summary:
        print(f"{r['op']:<5} {r['shiftop_ms']:7.2f} ms = {r['time_over_floor']:.2f}x whole-apply floor "
              f"({r['whole_apply_floor_ms']:.2f} ms; F^-only {r['fspectrum_only_floor_ms']:.2f} ms, "
              f"{r['shiftop_ms'] / r['fspectrum_only_floor_ms']:.2f}x) | numpy {r['numpy_ms']:.2f} ms "
              f"({r['speedup_over_numpy']:.2f}x) | 16 rhs {r['rhs16_per_vector_ms']:.2f} ms/vector "
              f"= {r['rhs16_time_over_floor']:.2f}x floor ({r['rhs16_whole_apply_floor_per_vector_ms']:.2f} "
              f"ms/vector; 1/{1 / r['rhs16_per_vector_fraction_of_single']:.1f} of one;"
              f" numpy {r['numpy_rhs16_per_vector_ms']:.2f}) | direct {r['speedup_over_direct']:.0f}x")
    d = results["demo"]
    print(f"demo heat2d {d['shape']}: F {d['F']['speedup']:.0f}x over time stepping "
          f"(diff {d['F']['relative_difference']:.1e}), F* {d['Fadj']['speedup']:.0f}x "
          f"(diff {d['Fadj']['relative_difference']:.1e})")


if __name__ == "__main__":
    main()
