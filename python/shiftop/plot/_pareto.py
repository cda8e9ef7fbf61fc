"""The tuner's Pareto front: relative error against time for the 32 five-phase precision strings
of F and F* (mixed-precision paper, section 4.2), from `shiftop tune --json` or shiftop.tune."""

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ._files import field, load_json, number, output_format, save
from ._zero_floor import at_floor, mark_floor, zero_floor

OP_TITLES = {"F": "F", "Fadj": "F*", "FadjF": "F*F", "FFadj": "FF*"}


def label(precision, gemv_kernel):
    """The point's name as the tool prints it: "DDSDD", or "DDSDD fused" / "DDSDD cublas" on the
    GPU where phase 3 is FP32 (the tuner times both kernels there; they differ in accuracy)."""
    if not gemv_kernel or len(precision) < 3 or precision[2] != "S":
        return precision
    return f"{precision} {gemv_kernel.split(' ')[0]}"


def _points(configurations, where):
    if not isinstance(configurations, list) or not configurations:
        raise ValueError(f"{where}: expected a non-empty list of configurations")
    points = []
    for k, c in enumerate(configurations):
        at = f"{where}[{k}]"
        precision = field(c, "precision", at, str)
        points.append({"label": label(precision, c.get("gemv_kernel", "")),
                       "ms": number(c, "median_ms", at),
                       "error": number(c, "relative_error", at),
                       "front": field(c, "pareto", at, bool)})
        if points[-1]["error"] < 0 or points[-1]["ms"] < 0:
            raise ValueError(f"{at}: expected a non-negative median_ms and relative_error")
    return points


# Where a label may go relative to its point, in points: (dx, dy, horizontal alignment).
LABEL_OFFSETS = ((5, 3, "left"), (5, -9, "left"), (-5, 3, "right"), (-5, -9, "right"),
                 (6, -3, "left"), (-6, -3, "right"), (5, 12, "left"), (5, -18, "left"),
                 (-5, 12, "right"), (-5, -18, "right"))


def _place_labels(ax, items):
    """Labels each point (x, y, text, on_front) with its precision string at the first offset
    where it overlaps no label placed before and stays inside the axes. A front point's label is
    always drawn (at the first offset if none is free); another point's label only where it fits,
    so that the 32 (or, on the GPU, more) strings stay readable."""
    renderer = ax.figure.canvas.get_renderer()
    inside = ax.get_window_extent(renderer)
    placed = []

    def annotate(x, y, text, offset, style):
        dx, dy, align = offset
        artist = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=align,
                             **style)
        artist.set_in_layout(False)  # placed after the layout; must not move it
        return artist

    for x, y, text, on_front in items:
        style = ({"fontsize": 8, "color": "#7b241c"} if on_front
                 else {"fontsize": 6, "color": "0.4"})
        for offset in LABEL_OFFSETS:
            artist = annotate(x, y, text, offset, style)
            box = artist.get_window_extent(renderer)
            if (inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0
                    and box.y1 <= inside.y1 and not any(box.overlaps(b) for b in placed)):
                placed.append(box)
                break
            artist.remove()
        else:
            if on_front:
                annotate(x, y, text, LABEL_OFFSETS[0], style)


def _panel(ax, title, points, tolerance, best):
    """Draws one operation's points; returns the labels to place, front first."""
    errors = [p["error"] for p in points]
    floor = zero_floor(errors + [tolerance])
    y = at_floor(errors, floor)
    others = [k for k, p in enumerate(points) if not p["front"]]
    front = sorted((k for k, p in enumerate(points) if p["front"]), key=lambda k: points[k]["ms"])
    ax.scatter([points[k]["ms"] for k in others], [y[k] for k in others], s=14, color="#2c7fb8",
               alpha=0.75, label="other configurations", zorder=2)
    # The front as what it means: the least error reachable within a time budget.
    ax.plot([points[k]["ms"] for k in front], [y[k] for k in front], drawstyle="steps-post",
            color="#c0392b", linewidth=1.2, zorder=3)
    ax.scatter([points[k]["ms"] for k in front], [y[k] for k in front], s=34, color="#c0392b",
               label="Pareto front", zorder=4)
    if tolerance > 0:
        ax.axhline(tolerance, color="0.4", linestyle="--", linewidth=0.9,
                   label=f"--tol {tolerance:.0e}")
    if best is not None:
        k, speedup = best
        text = f"fastest under --tol: {points[k]['label']}"
        if speedup is not None:
            text += f" ({speedup:.2f}x FP64)"
        ax.scatter([points[k]["ms"]], [y[k]], s=180, marker="*", color="#f1c40f",
                   edgecolor="black", linewidth=0.6, label=text, zorder=5)
    if min(errors) == 0:
        mark_floor(ax, floor, max(y + [tolerance]))
    else:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel("median time (ms)")
    ax.set_ylabel("relative error vs FP64 (DDDDD)")
    ax.grid(True, which="major", color="0.92")
    ax.legend(fontsize=7, loc="best")
    return ([(points[k]["ms"], y[k], points[k]["label"], True) for k in front]
            + [(points[k]["ms"], y[k], points[k]["label"], False) for k in others])


def pareto(tune_json, out, *, format=None, tolerance=1e-7):
    """Plots the Pareto front of `shiftop tune --json` (a path or the parsed dict) or of a
    shiftop.tune result: one panel per operation, every configuration labelled with its precision
    string, the front drawn as the least error reachable within a time, the tolerance line and the
    fastest configuration under it. FP64's error 0 is drawn at a floor marked "exact (0)". `out`
    is a .png, .svg or .pdf (or any name with `format`). `tolerance` applies to a shiftop.tune
    result only (the JSON carries the tool's --tol). Returns the matplotlib Figure."""
    chosen = output_format(out, format)
    if hasattr(tune_json, "to_json"):  # a shiftop.TuneResult
        tune_json = tune_json.to_json(tolerance)
    data, name = load_json(tune_json, "tune JSON")
    ops = field(data, "ops", name, dict)
    if not ops:
        raise ValueError(f"{name}: field 'ops' is empty")
    shape = field(data, "shape", name, dict)
    size = ", ".join(f"{k.capitalize()}={field(shape, k, name + ': shape', int)}"
                     for k in ("nd", "nm", "nt"))
    tolerance = number(data, "tolerance", name)
    backend = data.get("backend", "")
    figure = Figure(figsize=(6.4 * len(ops), 5.0), layout="constrained")
    FigureCanvasAgg(figure)  # measures the labels' text
    axes = figure.subplots(1, len(ops), squeeze=False)[0]
    labels = []
    for ax, (op, entry) in zip(axes, ops.items()):
        where = f"{name}: ops.{op}"
        points = _points(field(entry, "configurations", where, list), where + ".configurations")
        best = None
        if "fastest_under_tolerance" in entry:
            wanted = label(field(entry, "fastest_under_tolerance", where, str),
                           entry.get("fastest_under_tolerance_gemv_kernel", ""))
            matches = [k for k, p in enumerate(points) if p["label"] == wanted]
            if not matches:
                raise ValueError(f"{where}: fastest_under_tolerance '{wanted}' is not among "
                                 "the configurations")
            best = (matches[0], entry.get("speedup_over_fp64"))
        title = f"{OP_TITLES.get(op, op)} on ({size})" + (f", {backend}" if backend else "")
        labels.append((ax, _panel(ax, title, points, tolerance, best)))
    figure.draw_without_rendering()  # the final layout and limits, to place the labels in
    for ax, items in labels:
        _place_labels(ax, items)
    return save(figure, out, chosen)
