#!/usr/bin/env python3
"""Issue-4 GPU benchmark, one run on the device machine (called by scripts/gpu-check):
shiftop's CUDA plan at the issue's two shapes (F and F*, FP64 and FP32, fused kernels vs the
cuBLAS gemvStridedBatched pipeline, nrhs=32, CUDA graphs), the PyTorch pipeline side by side, the
Pareto tuner, and the Nm/Nd/Nt scaling sweeps of the papers' Fig. 1-3. Every shiftop number is
held against the device-to-device copy bandwidth measured in the same process.
Writes one JSON file (--out). Usage: bench/run_gpu.py --shiftop build-gpu/apps/shiftop/shiftop --out X.json
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SHAPES = {"wide": (100, 5000, 1000), "skinny": (7, 40000, 2000)}


def run_json(cmd, timeout=240):
    print("[run_gpu]", " ".join(cmd), file=sys.stderr, flush=True)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print("[run_gpu]   timed out", file=sys.stderr)
        return [{"error": "timeout", "command": cmd}]
    if out.returncode != 0:
        print("[run_gpu]   failed:", out.stderr.strip()[-400:], file=sys.stderr)
        return [{"error": out.stderr.strip()[-400:], "command": cmd}]
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--shiftop", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--skip", default="", help="comma-separated sections to skip")
    a = p.parse_args()
    skip = set(a.skip.split(","))
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "bench": [], "torch": [],
               "tune": {}, "sweeps": []}

    def bench(nd, nm, nt, *extra, reps="20", record=True):
        r = run_json([a.shiftop, "bench", "--backend", "cuda", "--nd", str(nd), "--nm", str(nm),
                      "--nt", str(nt), "--reps", reps, "--json", *extra])
        for entry in r:
            entry["args"] = list(extra)
            entry["shape_name"] = next((k for k, v in SHAPES.items() if v == (nd, nm, nt)), "")
        if record:
            results["bench"].extend(r)
        return r

    def save():
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)

    if "main" not in skip:
        for name, (nd, nm, nt) in SHAPES.items():
            for op in ("F", "Fadj"):
                bench(nd, nm, nt, "--op", op, "--check")                        # FP64, auto kernel
                bench(nd, nm, nt, "--op", op, "--profile")                      # phase breakdown
                bench(nd, nm, nt, "--op", op, "--gemv", "cublas")               # cuBLAS kernel
                bench(nd, nm, nt, "--op", op, "--fft", "cufft")                 # pad + cuFFT
                bench(nd, nm, nt, "--op", op, "--fft-length", str(2 * nt))      # the 2Nt embedding
                # What a user would build from cuFFT and cuBLAS: the 2Nt embedding, transposes,
                # gemvStridedBatched.
                bench(nd, nm, nt, "--op", op, "--gemv", "cublas", "--fft-length", str(2 * nt))
                for prec in ("SSSSS",):
                    bench(nd, nm, nt, "--op", op, "--precision", prec)
                    bench(nd, nm, nt, "--op", op, "--precision", prec, "--fft", "cufft")
                    bench(nd, nm, nt, "--op", op, "--precision", prec, "--gemv", "cublas")
                    bench(nd, nm, nt, "--op", op, "--precision", prec, "--gemv", "cublas",
                          "--fft-length", str(2 * nt))
                if name == "wide":  # the skinny shape's 32 vectors alone are 20 GB on the host
                    bench(nd, nm, nt, "--op", op, "--nrhs", "32", reps="5")
            save()
    if "graphs" not in skip:
        for nd, nm, nt in ((4, 200, 64), (20, 2000, 100)):
            for graphs in ((), ("--graphs",)):
                bench(nd, nm, nt, "--op", "F", "--estimate", *graphs, reps="200")
        save()
    if "torch" not in skip:
        for name, (nd, nm, nt) in SHAPES.items():
            results["torch"].extend(run_json([sys.executable, "bench/torch_btt.py", "--nd", str(nd),
                                              "--nm", str(nm), "--nt", str(nt)]))
        save()
    def tune(key, suffix, *operator, timeout):
        """shiftop tune on `operator` (sizes or a file), its JSON into results[key]."""
        subprocess.run([a.shiftop, "tune", "--backend", "cuda", *operator, "--reps", "10",
                        "--json", a.out + suffix + ".json", "--plot", a.out + suffix + ".svg"],
                       timeout=timeout)
        try:
            with open(a.out + suffix + ".json") as f:
                results[key] = json.load(f)
        except OSError as e:
            results[key] = {"error": str(e)}
        save()

    if "tune" not in skip:
        nd, nm, nt = SHAPES["wide"]
        tune("tune", ".tune", "--nd", str(nd), "--nm", str(nm), "--nt", str(nt), timeout=300)
    if "tune-wave2d" not in skip:
        # The tuner on a real p2o map (the wave model, 64 sensors, 4096 point sources, 1000 steps:
        # F^ 4.2 GB in FP64) instead of random kernels: the error of each configuration depends on
        # the operator.
        with tempfile.TemporaryDirectory() as tmp:
            op_file = os.path.join(tmp, "wave2d.h5")
            made = subprocess.run([a.shiftop, "model", "wave2d", "--grid", "192", "--sensors", "64",
                                   "--sources", "4096", "--nt", "1000", "-o", op_file],
                                  capture_output=True, text=True, timeout=300)
            print("[run_gpu]", made.stdout.strip(), made.stderr.strip()[-400:], file=sys.stderr)
            tune("tune_wave2d", ".tune-wave2d", "--operator", op_file, timeout=400)
    if "sweeps" not in skip:
        # Fig. 1-3 of the multi-GPU paper: vary one size around (Nd, Nm, Nt) = (100, 5000, 1000).
        for nm in (1000, 2000, 5000, 10000, 20000):
            results["sweeps"] += [dict(r, sweep="nm") for r in
                                  bench(100, nm, 1000, "--op", "F", "--estimate", "--profile", reps="10", record=False)]
        for nd in (10, 25, 50, 100, 200):
            results["sweeps"] += [dict(r, sweep="nd") for r in
                                  bench(nd, 5000, 1000, "--op", "F", "--estimate", "--profile", reps="10", record=False)]
        for nt in (250, 500, 1000, 2000, 4000):
            results["sweeps"] += [dict(r, sweep="nt") for r in
                                  bench(100, 5000, nt, "--op", "F", "--estimate", "--profile", reps="10", record=False)]
        save()
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    save()


if __name__ == "__main__":
    main()
