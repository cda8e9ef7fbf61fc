#!/usr/bin/env python3
"""CT reconstruction end to end with the shiftop tool: a 2D fan-beam scanner on a polar image grid
whose system matrix C is block-circulant (`shiftop model ct2d` writes only its first block row
A), a noisy Shepp-Logan sinogram, and three reconstructions on C and its exact transpose
(`shiftop ct-recon`): MLEM (maximum likelihood for Poisson counts), SIRT and CGLS.

    python examples/ct_reconstruction.py [--small] [--out DIR] [--counts C]

Writes ct_reconstruction.png (the phantom, the three images, and each method's residual and
MLEM's likelihood per iteration) to --out, and prints each method's error against the phantom.
CGLS fits the noise fastest: its residual keeps falling while its image gets noisier
(semi-convergence), so iterative CT stops early; MLEM's likelihood never decreases.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

METHODS = ("mlem", "sirt", "cgls")


def tool():
    found = os.environ.get("SHIFTOP_BIN") or shutil.which("shiftop")
    if not found:
        sys.exit("this example needs the shiftop tool (installed with the package, or SHIFTOP_BIN)")
    return found


def run(*args):
    done = subprocess.run([tool(), *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"shiftop {args[0]} failed: {done.stderr.strip()}")
    return done.stdout


def cartesian(polar, pixels):
    """The polar image (rings, sectors) on a pixels x pixels grid of [-1, 1]^2, each pixel the
    voxel holding its centre, as `ct-recon --png` draws it."""
    rings, sectors = polar.shape
    centres = -1 + (np.arange(pixels) + 0.5) * 2 / pixels
    x, y = np.meshgrid(centres, -centres)
    r = np.hypot(x, y)
    ring = np.minimum((r * rings).astype(int), rings - 1)
    sector = np.minimum((np.mod(np.arctan2(y, x), 2 * np.pi) / (2 * np.pi) * sectors).astype(int),
                        sectors - 1)
    return np.where(r < 1, polar[ring, sector], np.nan)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="a small scanner (CI)")
    parser.add_argument("--out", default=".", help="directory for the files and the figure")
    parser.add_argument("--counts", type=float, default=2000,
                        help="Poisson counts per unit line integral (larger: less noise)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.small:
        geometry = dict(positions=32, rings=24, sectors=192, detectors=128)
        iterations = 40
    else:
        geometry = dict(positions=60, rings=64, sectors=480, detectors=256)
        iterations = 60
    options = [x for key, value in geometry.items() for x in (f"--{key}", value)]

    # The scanner: only position 0's rays are traced; C is k x k blocks of A's blocks.
    matrix = out / "ct2d.h5"
    print(run("model", "ct2d", *options, "--precision", "float32", "--overwrite", "-o", matrix)
          .strip())

    runs = {}
    for method in METHODS:
        stem = out / f"ct_{method}"
        run("ct-recon", "--operator", matrix, *options, "--method", method, "--iterations",
            iterations, "--counts", args.counts, "--seed", 1, "--output", f"{stem}.npy",
            "--phantom", out / "ct_phantom.npy", "--png", f"{stem}.png", "--pixels", 256,
            "--json", f"{stem}.json")
        runs[method] = (np.load(f"{stem}.npy"), json.loads(Path(f"{stem}.json").read_text()))
        summary = runs[method][1]
        print(f"{method}: {len(summary['history'])} iterations, relative residual "
              f"{summary['history'][-1]['relative_residual']:.4f}, relative error to the phantom "
              f"{summary['relative_error_to_phantom']:.4f}, "
              f"{summary['seconds']['reconstruction']:.2f} s")
    phantom = np.load(out / "ct_phantom.npy")

    figure = plt.figure(figsize=(13, 6.5), layout="constrained")
    grid = figure.add_gridspec(2, 4)
    pictures = [("phantom", phantom)] + [(m.upper(), runs[m][0]) for m in METHODS]
    for column, (title, polar) in enumerate(pictures):
        ax = figure.add_subplot(grid[0, column])
        ax.imshow(cartesian(polar, 256), cmap="gray", vmin=0, vmax=phantom.max(),
                  extent=(-1, 1, -1, 1))
        if column > 0:
            title += f": error {runs[title.lower()][1]['relative_error_to_phantom']:.3f}"
        ax.set_title(title)
        ax.set_axis_off()
    residuals = figure.add_subplot(grid[1, :2])
    for method in METHODS:
        history = runs[method][1]["history"]
        residuals.semilogy([h["iteration"] for h in history],
                           [h["relative_residual"] for h in history], label=method.upper())
    residuals.set_xlabel("iteration")
    residuals.set_ylabel("||C x - b|| / ||b||")
    residuals.set_title(f"residual (Poisson noise, {args.counts:g} counts)")
    residuals.legend()
    likelihood = figure.add_subplot(grid[1, 2:])
    history = runs["mlem"][1]["history"]
    likelihood.plot([h["iteration"] for h in history],
                    [h["neg_log_likelihood"] for h in history], color="C0")
    likelihood.set_xlabel("iteration")
    likelihood.set_ylabel("sum(C x - b log C x)")
    likelihood.set_title("MLEM: Poisson negative log-likelihood")
    k, mb, nb = (runs["mlem"][1]["shape"][key] for key in ("k", "mb", "nb"))
    figure.suptitle(f"ct2d: {k} positions, C is {k * mb} x {k * nb} from A of "
                    f"{runs['mlem'][1]['nnz']} nonzeros")
    figure.savefig(out / "ct_reconstruction.png", dpi=100)
    print(f"{out / 'ct_reconstruction.png'}: the figure; ct_<method>.png: each image alone")


if __name__ == "__main__":
    main()
