"""The regularisation path of a Tikhonov problem (shiftop.regpath, `shiftop regpath`): the L-curve
(seminorm ||C_R m|| against residual norm ||C_F m - [d; 0]||, log-log, the corner and the GCV
choice marked) beside the GCV function against alpha (log-log, its minimum marked).

Command line (`shiftop regpath --plot FILE` runs it through apps/shiftop/python_plotter, as
`spectrum --plot` runs `spectrum`):

    python -m shiftop.plot regpath JSON -o OUT [--format png|svg|pdf] [--title TEXT]

JSON is an object with the arrays "alphas" (increasing), "residual_norms", "seminorms", "gcv" (one
entry per alpha) and the integer indices "gcv_choice" and "lcurve_corner" into them
("lcurve_corner" null for a path without a corner: none is marked) (what
RegPath.to_json() and `shiftop regpath --json` write; other fields are ignored). Exit status 0,
or 1 with one line "shiftop.plot: error: ..." on stderr for a bad input, 2 for bad usage.
"""

import math

from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, MaxNLocator, NullFormatter

from ._files import field, load_json, output_format, save

_ARRAYS = ("alphas", "residual_norms", "seminorms", "gcv")


def _curves(source):
    """The checked curves from a JSON file, a dict, or a shiftop.RegPath."""
    if hasattr(source, "to_json") and callable(source.to_json):
        source = source.to_json()
    obj, where = load_json(source, "regularisation path JSON")
    curves = {}
    for key in _ARRAYS:
        values = field(obj, key, where, list)
        if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                 for v in values):
            raise ValueError(f"{where}: field '{key}' must be a non-empty list of numbers")
        curves[key] = [float(v) for v in values]
    count = len(curves["alphas"])
    for key in _ARRAYS[1:]:
        if len(curves[key]) != count:
            raise ValueError(f"{where}: field '{key}' has {len(curves[key])} values, expected "
                             f"{count} (one per alpha)")
    for key in _ARRAYS:
        if not all(math.isfinite(v) and v >= 0 for v in curves[key]):
            raise ValueError(f"{where}: field '{key}' must hold finite values >= 0")
    if not all(a > 0 for a in curves["alphas"]):
        raise ValueError(f"{where}: field 'alphas' must be positive")
    for key in ("gcv_choice", "lcurve_corner"):
        if key == "lcurve_corner" and obj.get(key, 0) is None:
            curves[key] = None
            continue
        index = field(obj, key, where, int)
        if not 0 <= index < count:
            raise ValueError(f"{where}: field '{key}' = {index} is not an index of the "
                             f"{count} alphas")
        curves[key] = index
    return curves


def _positive(values):
    """Values for a log axis: zeros drawn at a tenth of the smallest positive one."""
    positive = [v for v in values if v > 0]
    floor = min(positive) / 10 if positive else 1.0
    return [v if v > 0 else floor for v in values]


def _readable_log_ticks(axis, values):
    """A log axis over less than about a decade has only minor ticks, whose labels overlap:
    there, a few plain ticks instead."""
    low, high = min(values), max(values)
    if high < 20 * low:
        axis.set_major_locator(MaxNLocator(4))
        axis.set_major_formatter(FormatStrFormatter("%.3g"))
        axis.set_minor_formatter(NullFormatter())


def new_figure():
    """A Figure with the two Axes draw_regpath fills (L-curve, GCV)."""
    figure = Figure(figsize=(10.0, 4.4), layout="constrained")
    return figure, figure.subplots(1, 2)


def save_to(figure, out, format=None):
    return save(figure, out, output_format(out, format))


def draw_regpath(ax_lcurve, ax_gcv, source, *, title=None):
    """Draws the L-curve on ax_lcurve and GCV against alpha on ax_gcv from the path (JSON file,
    dict or shiftop.RegPath)."""
    c = _curves(source)
    alphas, corner, choice = c["alphas"], c["lcurve_corner"], c["gcv_choice"]
    residual, seminorm, gcv = (_positive(c[k]) for k in ("residual_norms", "seminorms", "gcv"))

    ax_lcurve.plot(residual, seminorm, color="#34495e", marker=".", markersize=4, zorder=2)
    if corner is not None:
        ax_lcurve.scatter([residual[corner]], [seminorm[corner]], s=70, marker="o",
                          facecolors="none", edgecolors="#c0392b", linewidths=1.6, zorder=4,
                          label=f"L-curve corner: alpha = {alphas[corner]:.4g}")
    ax_lcurve.scatter([residual[choice]], [seminorm[choice]], s=60, marker="x",
                      color="#2c7fb8", zorder=5, label=f"GCV choice: alpha = {alphas[choice]:.4g}")
    ax_lcurve.set_xscale("log")
    ax_lcurve.set_yscale("log")
    _readable_log_ticks(ax_lcurve.xaxis, residual)
    _readable_log_ticks(ax_lcurve.yaxis, seminorm)
    ax_lcurve.set_xlabel("residual norm ||C_F m - [d; 0]||")
    ax_lcurve.set_ylabel("seminorm ||C_R m||")
    ax_lcurve.set_title("L-curve", fontsize=10)
    ax_lcurve.grid(True, which="major", color="0.92")
    ax_lcurve.legend(fontsize=8, loc="best")

    ax_gcv.plot(alphas, gcv, color="#34495e", marker=".", markersize=4, zorder=2)
    ax_gcv.scatter([alphas[choice]], [gcv[choice]], s=60, marker="x", color="#2c7fb8", zorder=5,
                   label=f"minimum: alpha = {alphas[choice]:.4g}")
    if corner is not None:
        ax_gcv.axvline(alphas[corner], color="#c0392b", linestyle="--", linewidth=0.9,
                       label=f"L-curve corner: alpha = {alphas[corner]:.4g}")
    ax_gcv.set_xscale("log")
    ax_gcv.set_yscale("log")
    _readable_log_ticks(ax_gcv.yaxis, gcv)
    ax_gcv.set_xlabel("alpha")
    ax_gcv.set_ylabel("GCV(alpha)")
    ax_gcv.set_title("generalized cross-validation", fontsize=10)
    ax_gcv.grid(True, which="major", color="0.92")
    ax_gcv.legend(fontsize=8, loc="best")
    heading = title if title is not None else (
        f"Tikhonov path, circulant approximation ({len(alphas)} alphas)")
    ax_lcurve.figure.suptitle(heading, fontsize=10)


def regpath(path, out, *, title=None, format=None):
    """Plots the L-curve and the GCV curve of a regularisation path (the JSON described above, as
    a file name or dict, or a shiftop.RegPath) to `out` (.png, .svg, .pdf, or any name with
    `format`). Returns the matplotlib Figure."""
    chosen = output_format(out, format)
    figure, (ax_lcurve, ax_gcv) = new_figure()
    draw_regpath(ax_lcurve, ax_gcv, path, title=title)
    return save(figure, out, chosen)
