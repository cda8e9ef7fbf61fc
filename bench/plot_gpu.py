#!/usr/bin/env python3
"""Plots of a bench/run_gpu.py result: the Nm/Nd/Nt sweeps (time and its per-phase breakdown
against the copy-bandwidth floor, the papers' Fig. 1-3) as one PNG next to the JSON.
Usage: bench/plot_gpu.py bench/results/gpu-<device>-<date>.json
"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

PHASES = ["pad", "fft", "layout", "gemv", "ifft", "unpad"]


def main(path):
    r = json.load(open(path))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, sweep in zip(axes, ("nm", "nd", "nt")):
        runs = [s for s in r["sweeps"] if s["sweep"] == sweep]
        xs = [s["shape"][sweep] for s in runs]
        bottom = [0.0] * len(runs)
        for phase in PHASES:
            vals = [s["phases"][phase] for s in runs]
            ax.bar([str(x) for x in xs], vals, bottom=bottom, label=phase)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.plot([str(x) for x in xs], [s["floor_ms"] for s in runs], "k--o", label="floor bytes/copy BW")
        fixed = {k: v for k, v in runs[0]["shape"].items() if k != sweep}
        ax.set_title(f"F, FP64, vary {sweep} ({', '.join(f'{k}={v}' for k, v in fixed.items())})")
        ax.set_xlabel(sweep)
        ax.set_ylabel("ms")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    out = path.replace(".json", "-sweeps.png")
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main(sys.argv[1])
