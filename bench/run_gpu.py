#!/usr/bin/env python3
"""Issue-4/19 GPU benchmark, one run on the device machine (called by scripts/gpu-check):
shiftop's CUDA plan at the issue's two shapes (F and F*, FP64 and FP32, one and 32 right-hand
sides), the cuFFT + cuBLAS pipeline (--gemv cublas --fft-length 2Nt) and the PyTorch pipeline side
by side (section "table"); the other kernel variants (section "main"); CUDA graphs; the Pareto
tuner; and the Nm/Nd/Nt scaling sweeps of the papers' Fig. 1-3. Every shiftop number is held
against the floors `shiftop bench` measures in the same process (issue 19): the whole-apply floor,
bytes that must cross memory once over the read-only streaming bandwidth, and the flop floor over
cuBLAS's complex GEMM rate.

Writes one JSON file (--out) and, with --markdown FILE, the table of the "table" section.
Sections: table, torch (the table's PyTorch column), main, graphs, tune, tune-wave2d, sweeps;
--skip drops some, --only keeps some, --table-only is --only table,torch (the table within one
10-minute device call; the script prints its estimate first). Usage:
    bench/run_gpu.py --shiftop build-gpu/apps/shiftop/shiftop --out X.json [--markdown X.md]
    bench/run_gpu.py --from X.json --markdown X.md     (the table of an earlier run)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SHAPES = {"wide": (100, 5000, 1000), "skinny": (7, 40000, 2000)}
SECTIONS = ("table", "torch", "main", "graphs", "tune", "tune-wave2d", "sweeps")
TABLE_OPS = ("F", "Fadj")
TABLE_PRECISIONS = ("DDDDD", "SSSSS")
TABLE_NRHS = (1, 32)
TORCH_DTYPE = {"DDDDD": "float64", "SSSSS": "float32"}


def pipeline_args(nt):
    """What a user would build from cuFFT and cuBLAS: the 2Nt embedding, transposes,
    gemvStridedBatched (gemmStridedBatched for several vectors)."""
    return ["--gemv", "cublas", "--fft-length", str(2 * nt)]


def table_cases():
    """The (shape name, op, precision, nrhs) of every row of the table."""
    return [(name, op, prec, nrhs) for name in SHAPES for op in TABLE_OPS
            for prec in TABLE_PRECISIONS for nrhs in TABLE_NRHS]


def estimate_seconds(nd, nm, nt, nrhs, blocks):
    """Rough wall seconds of one `shiftop bench` call: start-up, the bandwidth and GEMM probes and
    the measured plan (about 10 s a call in the 2026-11-22 H100 run: 30 calls in 5 minutes), plus
    drawing the random kernels and vectors on the host (about 5e8 values/s) and uploading the
    vectors (about 10 GB/s)."""
    values = nd * nm * nt + nrhs * blocks * nt
    return 8 + values / 5e8 + nrhs * blocks * nt * 8 / 10e9


def table_estimate(run_torch):
    """(bench calls, torch calls, estimated seconds) of the table section."""
    calls, seconds = 0, 0.0
    for name, op, _, nrhs in table_cases():
        nd, nm, nt = SHAPES[name]
        blocks = nm if op == "F" else nd
        calls += 2  # shiftop's plan and the cuFFT + cuBLAS pipeline
        seconds += 2 * estimate_seconds(nd, nm, nt, nrhs, blocks)
    torch_calls = len(SHAPES) * len(TABLE_NRHS) if run_torch else 0
    seconds += 25 * torch_calls  # import, F^ in two precisions, 4 cases of 23 applies
    return calls, torch_calls, seconds


def per_vector(entry, key):
    """entry[key] (a time of all entry["nrhs"] vectors) per vector."""
    return entry[key] / entry.get("nrhs", 1)


def find_bench(results, name, op, prec, nrhs, pipeline):
    """The table's shiftop run (pipeline False) or cuFFT + cuBLAS run of a case, or None."""
    nt = SHAPES[name][2]
    for e in results.get("bench", []):
        if "error" in e or e.get("shape_name") != name or e.get("section") != "table":
            continue
        if (e["op"], e["precision"], e["nrhs"]) != (op, prec, nrhs):
            continue
        if ("--gemv" in e["args"] and e["args"][-len(pipeline_args(nt)):] == pipeline_args(nt)) \
                == pipeline:
            return e
    return None


def find_torch(results, name, op, prec, nrhs):
    """PyTorch's run of a case, or None."""
    nd, nm, nt = SHAPES[name]
    for t in results.get("torch", []):
        if (t.get("nd"), t.get("nm"), t.get("nt"), t.get("op"), t.get("dtype"),
                t.get("nrhs", 1)) == (nd, nm, nt, op, TORCH_DTYPE[prec], nrhs):
            return t
    return None


def markdown_table(results):
    """The table section as Markdown: per case shiftop's time per vector against the whole-apply
    floor (and the flop floor where it is larger), the ceilings it was measured against, and the
    cuFFT + cuBLAS and PyTorch pipelines' times with their ratios to the same floor."""
    lines = [f"GPU benchmark {results.get('started', '')} - {results.get('finished', '')}; "
             "times per vector (ms); floor = max(whole-apply bytes / read ceiling, flops / "
             "complex GEMM rate) of shiftop's run (its plan's FFT length and groups); every ratio = time / "
             "that floor.", "",
             "| shape | op | precision | nrhs | shiftop ms | whole-apply floor ms | flop floor ms "
             "| shiftop / floor | read GB/s | copy GB/s | GEMM TFLOP/s | cuFFT+cuBLAS ms "
             "| / floor | PyTorch ms | / floor |",
             "|" + "---|" * 15]

    def fmt(value, spec):
        return "n/a" if value is None else format(value, spec)

    for name, op, prec, nrhs in table_cases():
        nd, nm, nt = SHAPES[name]
        own = find_bench(results, name, op, prec, nrhs, pipeline=False)
        pipe = find_bench(results, name, op, prec, nrhs, pipeline=True)
        torch_run = find_torch(results, name, op, prec, nrhs)
        if own is None and pipe is None and torch_run is None:
            continue
        floor = own and per_vector(own, "floor_ms")
        whole = own and own.get("whole_apply_floor_ms") and per_vector(own, "whole_apply_floor_ms")
        flop = own and own.get("flop_floor_ms") and per_vector(own, "flop_floor_ms")
        ms = own and per_vector(own, "total_ms")
        pipe_ms = pipe and per_vector(pipe, "total_ms")
        torch_ms = torch_run and torch_run.get("per_vector_ms",
                                               torch_run.get("median_ms"))
        bw = (own or {}).get("memory_bandwidth", {})
        ratio = (lambda t: t / floor if t is not None and floor else None)
        lines.append(
            f"| {name} ({nd}, {nm}, {nt}) | {op} | {prec} | {nrhs} | {fmt(ms, '.3f')} "
            f"| {fmt(whole, '.3f')} | {fmt(flop, '.3f')} | {fmt(ratio(ms), '.2f')} "
            f"| {fmt(bw.get('read_GBs'), '.0f')} | {fmt(bw.get('copy_GBs'), '.0f')} "
            f"| {fmt(bw.get('gemm_TFLOPs'), '.1f')} | {fmt(pipe_ms, '.3f')} "
            f"| {fmt(ratio(pipe_ms), '.2f')} | {fmt(torch_ms, '.3f')} "
            f"| {fmt(ratio(torch_ms), '.2f')} |")
    return "\n".join(lines) + "\n"


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
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shiftop", help="the shiftop tool (required unless --from)")
    p.add_argument("--out", help="the JSON file to write (required unless --from)")
    p.add_argument("--markdown", help="also write the table section as a Markdown table here")
    p.add_argument("--from", dest="source", help="write --markdown from this earlier JSON, run nothing")
    p.add_argument("--skip", default="", help="comma-separated sections to skip: " + ",".join(SECTIONS))
    p.add_argument("--only", default="", help="comma-separated sections to run (default: all)")
    p.add_argument("--table-only", action="store_true",
                   help="run only the table (sections table and torch): --only table,torch")
    a = p.parse_args()
    if a.source:
        if not a.markdown:
            p.error("--from needs --markdown")
        with open(a.source) as f:
            table = markdown_table(json.load(f))
        with open(a.markdown, "w") as f:
            f.write(table)
        print(table, end="")
        return
    if not a.shiftop or not a.out:
        p.error("--shiftop and --out are required (unless --from)")
    only = set(filter(None, a.only.split(",")))
    if a.table_only:
        only |= {"table", "torch"}
    unknown = (only | set(filter(None, a.skip.split(",")))) - set(SECTIONS)
    if unknown:
        p.error(f"unknown section(s) {sorted(unknown)}: expected some of {','.join(SECTIONS)}")
    skip = set(filter(None, a.skip.split(","))) | (set(SECTIONS) - only if only else set())
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "bench": [], "torch": [],
               "tune": {}, "sweeps": []}

    def bench(nd, nm, nt, *extra, reps="20", record=True, section="main"):
        r = run_json([a.shiftop, "bench", "--backend", "cuda", "--nd", str(nd), "--nm", str(nm),
                      "--nt", str(nt), "--reps", reps, "--json", *extra], timeout=360)
        for entry in r:
            entry["args"] = list(extra)
            entry["shape_name"] = next((k for k, v in SHAPES.items() if v == (nd, nm, nt)), "")
            entry["section"] = section
        if record:
            results["bench"].extend(r)
        return r

    def save():
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
        if a.markdown:
            with open(a.markdown, "w") as f:
                f.write(markdown_table(results))

    if "table" not in skip or "torch" not in skip:
        calls, torch_calls, seconds = table_estimate("torch" not in skip)
        if "table" in skip:
            calls, seconds = 0, 25 * torch_calls
        print(f"[run_gpu] table: {calls if 'table' not in skip else 0} shiftop bench calls (each "
              f"measures its ceilings and builds a plan) and {torch_calls} PyTorch calls, estimated "
              f"{seconds / 60:.1f} minutes", file=sys.stderr, flush=True)
    table_started = time.time()
    if "table" not in skip:
        # The skinny shape's 32 vectors are 20 GB on the host (of 128 GB) and on the device; the
        # timed applies use device arrays (apps/shiftop/runner.cpp).
        for name, op, prec, nrhs in table_cases():
            nd, nm, nt = SHAPES[name]
            reps = "20" if nrhs == 1 else "5"
            case = ["--op", op, "--precision", prec, "--nrhs", str(nrhs)]
            bench(nd, nm, nt, *case, reps=reps, section="table")
            bench(nd, nm, nt, *case, *pipeline_args(nt), reps=reps, section="table")
            save()
    if "torch" not in skip:
        for name, (nd, nm, nt) in SHAPES.items():
            for nrhs in TABLE_NRHS:
                results["torch"].extend(run_json(
                    [sys.executable, "bench/torch_btt.py", "--nd", str(nd), "--nm", str(nm),
                     "--nt", str(nt), "--nrhs", str(nrhs), "--reps", "20" if nrhs == 1 else "5"],
                    timeout=360))
        save()
    if "table" not in skip or "torch" not in skip:
        results["table_seconds"] = time.time() - table_started
        print(f"[run_gpu] table took {results['table_seconds'] / 60:.1f} minutes", file=sys.stderr)
    if "main" not in skip:
        for name, (nd, nm, nt) in SHAPES.items():
            for op in ("F", "Fadj"):
                bench(nd, nm, nt, "--op", op, "--check")                        # FP64, auto kernel
                bench(nd, nm, nt, "--op", op, "--profile")                      # phase breakdown
                bench(nd, nm, nt, "--op", op, "--gemv", "cublas")               # cuBLAS kernel
                bench(nd, nm, nt, "--op", op, "--fft", "cufft")                 # pad + cuFFT
                bench(nd, nm, nt, "--op", op, "--fft-length", str(2 * nt))      # the 2Nt embedding
                for prec in ("SSSSS",):
                    bench(nd, nm, nt, "--op", op, "--precision", prec, "--check")
                    bench(nd, nm, nt, "--op", op, "--precision", prec, "--fft", "cufft")
                    bench(nd, nm, nt, "--op", op, "--precision", prec, "--gemv", "cublas")
            save()
    if "graphs" not in skip:
        for nd, nm, nt in ((4, 200, 64), (20, 2000, 100)):
            for graphs in ((), ("--graphs",)):
                bench(nd, nm, nt, "--op", "F", "--estimate", *graphs, reps="200")
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
    if a.markdown:
        print(markdown_table(results), end="")


if __name__ == "__main__":
    main()
