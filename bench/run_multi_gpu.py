#!/usr/bin/env python3
"""Issue-5 multi-GPU benchmark, one run on a device machine with 2 GPUs (called by
scripts/gpu-check --multi-gpu): `shiftop bench` on a process grid under mpiexec, one rank per GPU.

* weak scaling 1 -> 2 GPUs: local sizes (Nd, Nm, Nt) = (100, 5000, 1000) per GPU on a 1x2 grid
  (global Nm = 10000 on two GPUs), F and F*, FP64 and DDSDD;
* strong scaling 1 -> 2 GPUs at (100, 10000, 1000), F and F*, FP64, grid chosen by Algorithm 4;
* every two-GPU run also times its collectives alone (at the apply's message size and at
  --probe-bytes): the NCCL bus bandwidth of the same run, nccl-tests' definition.

Every run is --profile (phase times from CUDA events; the one-GPU baselines too, so both sides
carry the same synchronisation). Writes one JSON file (--out) and prints the scaling table.
Usage: bench/run_multi_gpu.py --shiftop build-gpu/apps/shiftop/shiftop --out X.json
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

LOCAL = (100, 5000, 1000)
STRONG = (100, 10000, 1000)


def mpi_env(ranks):
    env = dict(os.environ)
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                # The device machines require NVLink multicast off
                # (src/distributed/nccl_collectives.cpp).
                "NCCL_NVLS_ENABLE": "0",
                "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 2) // ranks))})
    return env


def run_bench(shiftop, backend, ranks, nd, nm, nt, *extra, timeout=300):
    # --bind-to none: Open MPI would pin each rank, and with it all its OpenMP threads, to one core.
    cmd = ["mpiexec", "-n", str(ranks), "--bind-to", "none", shiftop, "bench", "--backend", backend,
           "--nd", str(nd), "--nm", str(nm), "--nt", str(nt), "--profile", "--json", *extra]
    print("[run_multi_gpu]", " ".join(cmd), file=sys.stderr, flush=True)
    start = time.time()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=mpi_env(ranks))
    except subprocess.TimeoutExpired:
        print("[run_multi_gpu]   timed out", file=sys.stderr)
        return {"error": "timeout", "command": cmd}
    if out.returncode != 0:
        print("[run_multi_gpu]   failed:", out.stderr.strip()[-600:], file=sys.stderr)
        return {"error": out.stderr.strip()[-600:], "command": cmd}
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {"error": "no JSON", "stdout": out.stdout[-600:]}
    result["command"] = cmd
    result["wall_s"] = round(time.time() - start, 1)
    return result


def ms(r):
    return r.get("total_ms") if "error" not in r else None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shiftop", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--reps", default="20")
    sizes = lambda text: tuple(int(v) for v in text.split(","))
    p.add_argument("--local", type=sizes, default=LOCAL, help="weak scaling Nd,Nm,Nt per GPU")
    p.add_argument("--strong", type=sizes, default=STRONG, help="strong scaling Nd,Nm,Nt")
    p.add_argument("--backend", default="cuda", help="cpu: a smoke test of this script")
    a = p.parse_args()
    if shutil.which("mpiexec") is None:
        sys.exit("run_multi_gpu: no mpiexec on PATH (install openmpi-bin)")
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "weak": [], "strong": []}
    try:
        results["topology"] = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True,
                                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        results["topology"] = str(e)

    def save():
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)

    nd, nm, nt = a.local
    for prec in ("DDDDD", "DDSDD"):
        for op in ("F", "Fadj"):
            common = ("--op", op, "--precision", prec, "--reps", a.reps)
            one = run_bench(a.shiftop, a.backend, 1, nd, nm, nt, "--grid", "1x1", *common)
            two = run_bench(a.shiftop, a.backend, 2, nd, nm, nt, "--grid", "1x2", "--weak", *common)
            eff = ms(one) / ms(two) if ms(one) and ms(two) else None
            results["weak"].append({"op": op, "precision": prec, "local_shape": a.local,
                                    "one_gpu": one, "two_gpus": two, "efficiency": eff})
            save()
    nd, nm, nt = a.strong
    for op in ("F", "Fadj"):
        common = ("--op", op, "--reps", a.reps)
        one = run_bench(a.shiftop, a.backend, 1, nd, nm, nt, "--grid", "1x1", *common)
        two = run_bench(a.shiftop, a.backend, 2, nd, nm, nt, "--grid", "auto", *common)
        speedup = ms(one) / ms(two) if ms(one) and ms(two) else None
        results["strong"].append({"op": op, "precision": "DDDDD", "shape": a.strong, "one_gpu": one,
                                  "two_gpus": two, "speedup": speedup,
                                  "efficiency": speedup / 2 if speedup else None})
        save()
    results["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    save()

    print("| scaling | op | precision | grid | 1 GPU ms | 2 GPUs ms | efficiency | comm ms | "
          "comm bus GB/s | alone same size | probe allreduce bus GB/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in ("weak", "strong"):
        for row in results[kind]:
            two = row["two_gpus"]
            comm = two.get("collectives", {})
            used = [c for c in comm.values() if c.get("ranks", 1) > 1 and c.get("bytes", 0) > 0]
            probe = [q for q in two.get("collective_probe", []) if q["collective"] == "allreduce"]
            fmt = lambda v, f="{:.3f}": f.format(v) if isinstance(v, (int, float)) else "-"
            print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                kind, row["op"], row["precision"], two.get("grid", "-"), fmt(ms(row["one_gpu"])),
                fmt(ms(two)), fmt(row["efficiency"], "{:.1%}"),
                fmt(sum(c["ms"] for c in used) if used else None),
                ", ".join(fmt(c.get("busbw_GBs"), "{:.1f}") for c in used) or "-",
                ", ".join(fmt(c.get("alone_same_size_busbw_GBs"), "{:.1f}") for c in used) or "-",
                fmt(probe[0]["busbw_GBs"], "{:.1f}") if probe else "-"))


if __name__ == "__main__":
    main()
