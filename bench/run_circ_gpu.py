#!/usr/bin/env python3
"""Issue 17's GPU benchmark runner: shiftop's sparse block-circulant products against cuSPARSE
(SpMV per block, the paper's baseline; SpMM on the duplicated input), through bench_circ_gpu,
one binary call per case (FP32 and FP64 in the same call, on the same first block row).

Cases (--cases, comma-separated; 'all' for every one):
  ct2d-small, ct2d-medium, ct2d-large   the CT scanner's own system matrix (models/ct2d) at the
                                        shapes of the paper's CT small, medium and large
                                        (shiftop model ct2d --preset ...)
  uniform-small, uniform-medium, uniform-big, uniform-large, uniform-huge
                                        the paper's Table 1 shapes and nonzero counts with
                                        uniformly random columns (no locality: the worst case)
A case that does not fit in device memory is recorded as skipped by the binary with its reason;
the SpMM baseline is skipped alone when its k*nb x k operand does not fit.

Per case and precision the JSON holds the binary's times and adds: GFLOP/s (2 k nnz per product),
the floors (bench/NOTES.md, "Issue 17: GPU"): DRAM (A once as 32-bit offset + value, x and y, over
the measured read bandwidth), L2 (k nnz values of X^ over the measured L2 bandwidth) and flop
(over the measured FMA rate), the fraction of the largest floor reached, the speed-ups over each
cuSPARSE baseline, the transpose/forward ratios, and the issue's targets (>= 5x over SpMV per
block, faster than SpMM, transpose within 1.5x of forward) as booleans.

Usage (on the device machine, after scripts/gpu-check --circ's build):
  python3 bench/run_circ_gpu.py --binary build-gpu-circ/bench/bench_circ_gpu \\
      --out circ-gpu.json --markdown circ-gpu.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import subprocess
import sys

K = 150
CASES = {
    "ct2d-small": ["--pattern", "ct2d", "--mb", "19600", "--rings", "535", "--sectors", "2400"],
    "ct2d-medium": ["--pattern", "ct2d", "--mb", "19600", "--rings", "1551", "--sectors", "3600"],
    "ct2d-large": ["--pattern", "ct2d", "--mb", "78400", "--rings", "4134", "--sectors", "7200"],
    "uniform-small": ["--mb", "19600", "--nb", "8560", "--nnz", "7029618"],
    "uniform-medium": ["--mb", "19600", "--nb", "37224", "--nnz", "18845735"],
    "uniform-big": ["--mb", "19600", "--nb", "105118", "--nnz", "40601519"],
    "uniform-large": ["--mb", "78400", "--nb", "198432", "--nnz", "120506745"],
    "uniform-huge": ["--mb", "78400", "--nb", "777738", "--nnz", "304228353"],
}
DEFAULT_CASES = "ct2d-small,ct2d-medium,uniform-small,uniform-medium,uniform-huge"
ITEM = {"s": 4, "d": 8}


def median(entry, key):
    value = entry.get(key)
    return value["median_ms"] if isinstance(value, dict) and "median_ms" in value else None


def ratio(a, b):
    return a / b if a and b else None


def derive(case, run):
    """Floors, rates and speed-ups of one precision's run (run is modified in place)."""
    if "skipped" in run:
        return
    shape, ceil = case["shape"], case["ceilings"]
    k, mb, nb, nnz = shape["k"], shape["mb"], shape["nb"], shape["nnz"]
    t = ITEM[run["precision"]]
    flops = 2.0 * k * nnz
    dram_bytes = nnz * (4 + t) + (mb + 1) * 8 + k * (nb + mb) * t
    l2_bytes = k * nnz * t
    floors = {
        "dram_bytes": dram_bytes,
        "dram_ms": 1e3 * dram_bytes / ceil["read_bytes_per_s"],
        "l2_bytes": l2_bytes,
        "l2_ms": 1e3 * l2_bytes / ceil["l2_read_bytes_per_s"],
        "flop_ms": 1e3 * flops / ceil["fma_flops_per_s"][run["precision"]],
    }
    floor_ms = max(floors["dram_ms"], floors["l2_ms"], floors["flop_ms"])
    floors["largest_ms"] = floor_ms
    run["floors"] = floors
    s = run["shiftop"]
    fwd, t_index, t_atomic = median(s, "forward"), median(s, "transpose_index"), median(
        s, "transpose_atomic")
    best_t = min([t for t in (t_index, t_atomic) if t], default=None)
    spmv, spmm = run.get("cusparse_spmv_per_block", {}), run.get("cusparse_spmm", {})
    derived = {
        "flops": flops,
        "gflops": {name: flops / (1e6 * ms) for name, ms in
                   (("forward", fwd), ("transpose_index", t_index),
                    ("transpose_atomic", t_atomic)) if ms},
        "fraction_of_floor": {name: floor_ms / ms for name, ms in
                              (("forward", fwd), ("transpose_index", t_index),
                               ("transpose_atomic", t_atomic)) if ms},
        "transpose_over_forward": {"index": ratio(t_index, fwd), "atomic": ratio(t_atomic, fwd)},
        "speedup_vs_spmv_per_block": {
            "forward": ratio(median(spmv, "forward"), fwd),
            "transpose": ratio(median(spmv, "transpose"), best_t),
            "alternating20": ratio(median(spmv, "alternating20"), median(s, "alternating20")),
        },
        "speedup_vs_spmm": {
            "forward": ratio(median(spmm, "forward"), fwd),
            "transpose": ratio(median(spmm, "transpose"), best_t),
            "alternating20": ratio(median(spmm, "alternating20"), median(s, "alternating20")),
        },
    }
    v = derived["speedup_vs_spmv_per_block"]["forward"]
    m = derived["speedup_vs_spmm"]["forward"]
    derived["targets"] = {
        "spmv_per_block_5x": v is not None and v >= 5,
        "faster_than_spmm": (m > 1) if m is not None else None,
        "transpose_within_1.5x": (best_t / fwd <= 1.5) if best_t and fwd else None,
    }
    run["derived"] = derived


def fmt(value, digits=2):
    if value is None:
        return "-"
    return f"{value:.{digits}f}"


def markdown(cases):
    lines = [
        "| case | prec | nnz | fwd ms | C^T index ms | C^T atomic ms | GFLOP/s fwd | floor ms "
        "(DRAM/L2/flop) | of floor | SpMV/blk fwd ms | x | SpMM fwd ms | x | 20 alt. ms "
        "(shiftop / SpMV / SpMM) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in cases:
        if "error" in case:
            lines.append(f"| {case['name']} | error: {case['error'][:80]} |")
            continue
        for run in case.get("runs", []):
            if "skipped" in run:
                lines.append(f"| {case['name']} | {run['precision']} | skipped: {run['skipped']} |")
                continue
            s, d, f = run["shiftop"], run["derived"], run["floors"]
            spmv, spmm = run.get("cusparse_spmv_per_block", {}), run.get("cusparse_spmm", {})
            lines.append(
                f"| {case['name']} | {run['precision']} | {case['shape']['nnz']:.3g} | "
                f"{fmt(median(s, 'forward'), 3)} | {fmt(median(s, 'transpose_index'), 3)} | "
                f"{fmt(median(s, 'transpose_atomic'), 3)} | "
                f"{fmt(d['gflops'].get('forward'), 0)} | "
                f"{fmt(f['dram_ms'], 3)}/{fmt(f['l2_ms'], 3)}/{fmt(f['flop_ms'], 3)} | "
                f"{fmt(d['fraction_of_floor'].get('forward'))} | "
                f"{fmt(median(spmv, 'forward'), 3)} | "
                f"{fmt(d['speedup_vs_spmv_per_block']['forward'], 1)} | "
                f"{fmt(median(spmm, 'forward'), 3) if 'skipped' not in spmm else 'skipped'} | "
                f"{fmt(d['speedup_vs_spmm']['forward'], 1)} | "
                f"{fmt(median(s, 'alternating20'), 1)} / {fmt(median(spmv, 'alternating20'), 1)}"
                f" / {fmt(median(spmm, 'alternating20'), 1)} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--markdown")
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--precisions", default="s,d")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    names = list(CASES) if args.cases == "all" else args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    results, status = [], 0
    for name in names:
        command = [args.binary, "--name", name, "--k", str(K), "--precisions", args.precisions,
                   "--reps", str(args.reps)] + CASES[name]
        print(f"[run_circ_gpu] {shlex.join(command)}", flush=True)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            case = json.loads(done.stdout) if done.stdout.strip() else {
                "name": name, "error": f"no output, exit {done.returncode}: {done.stderr[-500:]}"}
        except subprocess.TimeoutExpired:
            case = {"name": name, "error": f"timed out after {args.timeout} s"}
        except json.JSONDecodeError as e:
            case = {"name": name, "error": f"bad JSON ({e}): {done.stdout[-300:]}"}
        case["command"] = shlex.join(command)
        if "error" in case:
            status = 1
            print(f"[run_circ_gpu] {name}: {case['error']}", flush=True)
        for run in case.get("runs", []):
            derive(case, run)
            if "derived" in run:
                d = run["derived"]
                print(f"[run_circ_gpu] {name} {run['precision']}: forward "
                      f"{fmt(median(run['shiftop'], 'forward'), 3)} ms, "
                      f"{fmt(d['gflops'].get('forward'), 0)} GFLOP/s, "
                      f"x{fmt(d['speedup_vs_spmv_per_block']['forward'], 1)} vs SpMV/block, "
                      f"x{fmt(d['speedup_vs_spmm']['forward'], 1)} vs SpMM, C^T/C "
                      f"{fmt(d['transpose_over_forward']['index'])} (index) "
                      f"{fmt(d['transpose_over_forward']['atomic'])} (atomic); targets "
                      f"{d['targets']}", flush=True)
            elif "skipped" in run:
                print(f"[run_circ_gpu] {name} {run['precision']}: skipped ({run['skipped']})")
        results.append(case)
    device = next((c.get("device") for c in results if c.get("device")), None)
    out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "device": device,
           "cases": results}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"Issue 17, GPU ({device}, {out['date'][:10]}); times are medians\n\n")
            f.write(markdown(results))
    return status


if __name__ == "__main__":
    sys.exit(main())
