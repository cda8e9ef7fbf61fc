"""CG convergence from `shiftop solve --json`: the relative residual after each iteration of the
preconditioned CG for the MAP point, one line per run, so that preconditioners (the prior, the
circulant approximation) can be compared on one axis."""

import math
import os

from matplotlib.figure import Figure

from ._files import field, load_json_list, output_format, save
from ._zero_floor import at_floor, mark_floor, zero_floor


def _as_json(runs):
    """The solve JSON's fields of a shiftop.map_point result (anything with residual_history,
    iterations and converged attributes, not a dict); JSON paths and dicts pass through."""
    def one(run):
        if isinstance(run, (dict, str, os.PathLike)) or not hasattr(run, "residual_history"):
            return run
        return {"residual_history": [float(r) for r in run.residual_history],
                "iterations": run.iterations, "converged": run.converged}
    return [one(r) for r in runs] if isinstance(runs, (list, tuple)) else one(runs)


def _history(data, where):
    history = field(data, "residual_history", where, list)
    if not history:
        method = data.get("method") if isinstance(data, dict) else None
        raise ValueError(f"{where}: residual_history is empty"
                         + (f" (method '{method}' has no CG iterations)" if method else ""))
    for k, r in enumerate(history):
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r < math.inf:
            raise ValueError(f"{where}: residual_history[{k}] must be a finite number >= 0, "
                             f"got {r!r:.40}")
    return [float(r) for r in history]


def _label(data, history):
    if "preconditioner" not in data:  # a map_point result: the caller knows which
        name = "CG"
    elif data["preconditioner"]:
        name = f"{data['preconditioner']} preconditioner"
    else:
        name = "no preconditioner"
    iterations = data.get("iterations", len(history) - 1)
    text = f"{name}: {iterations} iterations"
    return text if data.get("converged", True) else text + " (not converged)"


def cg_convergence(solve_jsons, out, *, labels=None, format=None):
    """Plots the relative residual norm against the iteration (log y) of one `shiftop solve
    --json` result or a list of them (e.g. the prior against the circulant preconditioner), each
    line labelled with its preconditioner and iteration count unless `labels` names them. A
    shiftop.map_point result (MapResult) may stand for a JSON; give `labels` to name its
    preconditioner. A
    residual of exactly 0 is drawn at a floor marked "exact (0)"; a run's `tolerance` (solve
    --tol) is drawn as a dashed line. Returns the matplotlib Figure."""
    chosen = output_format(out, format)
    runs = load_json_list(_as_json(solve_jsons), "solve JSON")
    if labels is not None and (isinstance(labels, str) or len(labels) != len(runs)):
        raise ValueError(f"labels: expected {len(runs)} label(s), one per run, got {labels!r:.60}")
    histories = [_history(data, name) for data, name in runs]
    values = [r for h in histories for r in h]
    # The stopping tolerance of `shiftop solve --tol` where the JSON has it.
    tolerances = sorted({float(data["tolerance"]) for data, _ in runs
                         if isinstance(data.get("tolerance"), (int, float))
                         and not isinstance(data["tolerance"], bool) and data["tolerance"] > 0})
    floor = zero_floor(values + tolerances)
    figure = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = figure.subplots()
    for k, ((data, _), history) in enumerate(zip(runs, histories)):
        ax.plot(range(len(history)), at_floor(history, floor), "-",
                marker="o" if max(map(len, histories)) <= 60 else None, markersize=2.5,
                color=f"C{k % 10}", label=labels[k] if labels is not None else _label(data, history))
    for tolerance in tolerances:
        ax.axhline(tolerance, color="0.4", linestyle="--", linewidth=0.9,
                   label=f"--tol {tolerance:.0e}")
    if min(values) == 0:
        mark_floor(ax, floor, max(values + tolerances))
    else:
        ax.set_yscale("log")
    shapes = {tuple(data["shape"].get(k) for k in ("nd", "nm", "nt"))
              for data, _ in runs if isinstance(data.get("shape"), dict)}
    title = "CG for the MAP point"
    if len(shapes) == 1:
        nd, nm, nt = next(iter(shapes))
        title += f" (Nd={nd}, Nm={nm}, Nt={nt})"
    ax.set_title(title)
    ax.set_xlabel("iteration")
    ax.set_ylabel("relative residual norm")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(True, which="major", color="0.92")
    ax.legend(fontsize=8)
    return save(figure, out, chosen)
