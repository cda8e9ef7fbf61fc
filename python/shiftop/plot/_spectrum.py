"""The spectrum of a block Toeplitz operator: the singular values of every F^[w] (the DFT of the
kernels zero-padded to 2 Nt, w = 0..Nt) against the frequency index w, log scale, from
shiftop.spectrum / Operator.spectrum or `shiftop spectrum`.

Command line (`shiftop spectrum --plot FILE` runs it through apps/shiftop/python_plotter, as
`tune --plot` runs `pareto`):

    python -m shiftop.plot spectrum SIGMA -o OUT [--format png|svg|pdf] [--title TEXT]
                                                 [--tolerance REL]

SIGMA is a .npy file of any name (the tool may pass a temporary) holding a float64 array
(Nt+1, min(Nd, Nm)), row w the singular values of F^[w]. --tolerance draws the rank threshold
REL * sigma_max and counts the values above it. Exit status 0, or 1 with one line
"shiftop.plot: error: ..." on stderr for a bad input, 2 for bad usage.
"""

import math
import os

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from ._files import output_format, save
from ._zero_floor import mark_floor, zero_floor


def _sigma(values):
    """The float64 (Nt+1, k) array from an array-like, a .npy file, or anything with a `sigma`
    attribute (a shiftop.Spectrum)."""
    if hasattr(values, "sigma") and not isinstance(values, np.ndarray):
        values = values.sigma
    if isinstance(values, (str, os.PathLike)):
        path = os.fspath(values)
        try:
            values = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: cannot read sigma as .npy: {e}") from None
    try:
        sigma = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"sigma: expected a real array of shape (Nt+1, k), got {e}") from None
    if sigma.ndim != 2 or sigma.size == 0:
        raise ValueError(f"sigma: expected a non-empty array of shape (Nt+1, min(Nd, Nm)), got "
                         f"shape {sigma.shape}")
    if not np.all(np.isfinite(sigma)) or np.any(sigma < 0):
        raise ValueError("sigma: expected finite singular values >= 0, got NaN, infinity or a "
                         "negative value")
    return sigma


def spectrum(sigma, out, *, title=None, tolerance=None, format=None):
    """Plots the singular values of every F^[w] against the frequency index w (log y): one line
    per rank position (the largest dark, the smallest light), sigma_max and sigma_min marked
    where they occur, kappa = sigma_max / sigma_min in the title. `sigma` is the (Nt+1, k) array
    (or a .npy file, or a shiftop.Spectrum); `tolerance` (relative) draws the rank threshold
    tolerance * sigma_max with the count of values above it. Exact zeros are drawn at a floor
    marked "exact (0)" (kappa is then inf). `out` is a .png, .svg or .pdf (or any name with
    `format`). Returns the matplotlib Figure."""
    chosen = output_format(out, format)
    sigma = _sigma(sigma)
    if tolerance is not None and not (isinstance(tolerance, (int, float))
                                      and not isinstance(tolerance, bool)
                                      and 0 < tolerance < math.inf):
        raise ValueError(f"tolerance: expected a positive relative tolerance, got {tolerance!r}")
    frequencies, per = sigma.shape
    sigma_max, sigma_min = float(sigma.max()), float(sigma.min())
    kappa = sigma_max / sigma_min if sigma_min > 0 else math.inf
    if sigma_max == 0:
        raise ValueError("sigma: every singular value is 0 (the operator is zero): nothing to "
                         "plot on a log scale")
    floor = zero_floor(sigma.ravel().tolist())
    drawn = np.where(sigma > 0, sigma, floor)

    figure = Figure(figsize=(7.2, 4.6), layout="constrained")
    ax = figure.subplots()
    w = np.arange(frequencies)
    colors = colormaps["viridis"](np.linspace(0.0, 0.85, per))
    marker = "o" if frequencies == 1 else None
    for i in range(per):
        ax.plot(w, drawn[:, i], color=colors[i], linewidth=1.4 if i in (0, per - 1) else 0.7,
                marker=marker, zorder=2)
    at_max = np.unravel_index(np.argmax(sigma), sigma.shape)
    at_min = np.unravel_index(np.argmin(sigma), sigma.shape)
    ax.scatter([at_max[0]], [sigma_max], s=60, marker="^", color="#c0392b", zorder=4,
               label=f"sigma_max = {sigma_max:.4g} (w = {at_max[0]})")
    ax.scatter([at_min[0]], [drawn[at_min]], s=60, marker="v", color="#2c7fb8", zorder=4,
               label=f"sigma_min = {sigma_min:.4g} (w = {at_min[0]})")
    if tolerance is not None:
        threshold = tolerance * sigma_max
        rank = int(np.count_nonzero(sigma > threshold))
        ax.axhline(threshold, color="0.4", linestyle="--", linewidth=0.9,
                   label=f"rank tolerance {tolerance:.3g} x sigma_max: rank {rank} of "
                   f"{sigma.size}")
    if sigma_min == 0:
        mark_floor(ax, floor, sigma_max)
    else:
        ax.set_yscale("log")
    ax.set_xlabel("frequency index w")
    ax.set_ylabel("singular values of F^[w]")
    ax.grid(True, which="major", color="0.92")
    ax.legend(fontsize=8, loc="best")
    heading = title if title is not None else (
        f"spectrum of F^[w]: {frequencies} frequencies x {per} values")
    figure.suptitle(f"{heading}\nkappa = {kappa:.4g}", fontsize=10)
    return save(figure, out, chosen)
