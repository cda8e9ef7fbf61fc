"""Benchmark plots from `shiftop bench --json`: the time of each of the apply's phases (pad, FFT,
layout, batched GEMV, IFFT, unpad: mixed-precision paper, section 3) against the memory floor, for
one run or several, and a sweep of one size (the block-Toeplitz paper's Fig. 1-3)."""

from matplotlib.figure import Figure

from ._files import field, load_json_list, number, output_format, save

SWEEPABLE = ("nd", "nm", "nt", "nrhs")
SIZE_NAMES = {"nd": "Nd", "nm": "Nm", "nt": "Nt", "nrhs": "right-hand sides"}


def _run(data, where):
    """The fields of one bench result the plots use; ValueError on a missing or mistyped one."""
    shape = field(data, "shape", where, dict)
    run = {"where": where,
           "op": field(data, "op", where, str),
           "precision": field(data, "precision", where, str),
           "backend": field(data, "backend", where, str),
           "nrhs": field(data, "nrhs", where, int),
           "total_ms": number(data, "total_ms", where),
           "floor_ms": number(data, "floor_ms", where) if "floor_ms" in data else None,
           "phases": {k: float(field(field(data, "phases", where, dict), k, where + ": phases",
                                     (int, float)))
                      for k in field(data, "phases", where, dict)}}
    for k in ("nd", "nm", "nt"):
        run[k] = field(shape, k, where + ": shape", int)
    if run["nrhs"] < 1:
        raise ValueError(f"{where}: expected nrhs >= 1, got {run['nrhs']}")
    return run


def _series_name(run):
    return f"{run['op']} {run['precision']} ({run['backend']})"


def _shape_text(run, without=None):
    return ", ".join(f"{SIZE_NAMES[k]}={run[k]}" for k in SWEEPABLE if k != without)


def _per_rhs(run, ms):
    return ms / run["nrhs"]


def _profiled(run):
    return any(v > 0 for v in run["phases"].values())


def bench_phases(bench_json, out, *, format=None):
    """Plots the per-phase times of one `shiftop bench --json` result, or a list of them (e.g. F
    and F*, or two precisions), as stacked horizontal bars with the median total and the floor
    (bytes / measured bandwidth). GPU runs need `--profile` for their phase times. Returns the
    matplotlib Figure."""
    chosen = output_format(out, format)
    runs = [_run(data, name) for data, name in load_json_list(bench_json, "bench JSON")]
    for run in runs:
        if not run["phases"]:
            raise ValueError(f"{run['where']}: field 'phases' is empty")
        if not _profiled(run):
            raise ValueError(f"{run['where']}: every phase time is 0; on the GPU the phase times "
                             "need `shiftop bench --profile`")
    figure = Figure(figsize=(9.0, 2.0 + 0.7 * len(runs)), layout="constrained")
    ax = figure.subplots()
    names = [f"{_series_name(r)}\n{_shape_text(r)}" for r in runs]
    positions = range(len(runs))[::-1]  # the first run on top
    phase_names = list(dict.fromkeys(k for r in runs for k in r["phases"]))
    left = [0.0] * len(runs)
    for phase in phase_names:
        widths = [r["phases"].get(phase, 0.0) for r in runs]
        ax.barh(positions, widths, left=left, height=0.6, label=phase)
        left = [a + b for a, b in zip(left, widths)]
    ax.scatter([r["total_ms"] for r in runs], positions, marker="|", s=400, color="black",
               label="median total", zorder=3)
    floors = [(p, r["floor_ms"]) for p, r in zip(positions, runs) if r["floor_ms"] is not None]
    if floors:
        ax.scatter([f for _, f in floors], [p for p, _ in floors], marker="x", s=50,
                   color="0.3", label="floor (bytes / bandwidth)", zorder=3)
    ax.set_yticks(list(positions), names, fontsize=8)
    ax.set_xlabel("median time per apply (ms)")
    ax.set_title("shiftop bench: time per phase")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(True, axis="x", color="0.92")
    return save(figure, out, chosen)


def _sweep_runs(sources):
    """The runs of a sweep: each bench JSON given, or the `sweeps` of a bench/run_gpu.py result."""
    loaded = load_json_list(sources, "bench JSON")
    if len(loaded) == 1 and isinstance(loaded[0][0], dict) and "sweeps" in loaded[0][0]:
        data, name = loaded[0]
        sweeps = field(data, "sweeps", name, list)
        return [(_run(s, f"{name}: sweeps[{k}]"), s.get("sweep") if isinstance(s, dict) else None)
                for k, s in enumerate(sweeps)]
    return [(_run(data, name), data.get("sweep")) for data, name in loaded]


def _panels(runs):
    """[(swept size, [runs])]: grouped by each run's `sweep` field where every run has one, else
    the one size that differs between the runs."""
    if all(sweep is not None for _, sweep in runs):
        panels = {}
        for run, sweep in runs:
            if sweep not in SWEEPABLE:
                raise ValueError(f"{run['where']}: sweep '{sweep}' is not one of "
                                 f"{', '.join(SWEEPABLE)}")
            panels.setdefault(sweep, []).append(run)
        return list(panels.items())
    plain = [run for run, _ in runs]
    varying = [k for k in SWEEPABLE if len({r[k] for r in plain}) > 1]
    if len(varying) != 1:
        what = "no size differs" if not varying else f"{', '.join(varying)} all differ"
        raise ValueError(f"bench sweep: expected runs that differ in one of nd, nm, nt or nrhs; "
                         f"{what} between the {len(plain)} runs")
    return [(varying[0], plain)]


def _sweep_panel(ax, size, runs):
    values = sorted({r[size] for r in runs})
    at = {v: k for k, v in enumerate(values)}
    series = {}
    for r in runs:
        group = series.setdefault(_series_name(r), {})
        if r[size] in group:
            raise ValueError(f"{r['where']}: a second run of {_series_name(r)} with "
                             f"{size}={r[size]}")
        group[r[size]] = r
    if len(series) == 1 and all(_profiled(r) for r in runs):
        ordered = [r for _, r in sorted(next(iter(series.values())).items())]
        xs = [at[r[size]] for r in ordered]
        bottom = [0.0] * len(ordered)
        for phase in dict.fromkeys(k for r in ordered for k in r["phases"]):
            heights = [_per_rhs(r, r["phases"].get(phase, 0.0)) for r in ordered]
            ax.bar(xs, heights, bottom=bottom, width=0.7, label=phase)
            bottom = [a + b for a, b in zip(bottom, heights)]
        ax.scatter(xs, [_per_rhs(r, r["total_ms"]) for r in ordered], marker="_", s=300,
                   color="black", label="median total", zorder=3)
        floors = [(x, _per_rhs(r, r["floor_ms"])) for x, r in zip(xs, ordered)
                  if r["floor_ms"] is not None]
        if floors:
            ax.plot(*zip(*floors), "k--o", markersize=3, label="floor (bytes / bandwidth)")
    else:
        for k, (name, group) in enumerate(series.items()):
            ordered = [r for _, r in sorted(group.items())]
            colour = f"C{k % 10}"
            xs = [at[r[size]] for r in ordered]
            ax.plot(xs, [_per_rhs(r, r["total_ms"]) for r in ordered], "-o", color=colour,
                    label=name)
            floors = [(x, _per_rhs(r, r["floor_ms"])) for x, r in zip(xs, ordered)
                      if r["floor_ms"] is not None]
            if floors:
                ax.plot(*zip(*floors), "--.", color=colour, linewidth=0.9,
                        label=f"{name}: floor")
    fixed = {k: r[k] for r in runs[:1] for k in SWEEPABLE if k != size}
    constant = [k for k in fixed if all(r[k] == fixed[k] for r in runs)]
    ops = ", ".join(dict.fromkeys(r["op"] for r in runs))
    ax.set_title(f"{ops}: vary {SIZE_NAMES[size]} "
                 f"({', '.join(f'{SIZE_NAMES[k]}={fixed[k]}' for k in constant)})", fontsize=10)
    ax.set_xticks(range(len(values)), [str(v) for v in values])
    ax.set_xlabel(SIZE_NAMES[size])
    ax.set_ylabel("median time per right-hand side (ms)")
    ax.grid(True, axis="y", color="0.92")
    ax.legend(fontsize=7)


def bench_sweep(bench_jsons, out, *, format=None):
    """Plots time against one swept size (nd, nm, nt or the number of right-hand sides), from a
    list of `shiftop bench --json` results or a bench/run_gpu.py result with `sweeps` (one panel
    per swept size). One series with phase times: stacked phase bars, the median total and the
    floor; several (ops, precisions, backends): one line each with its floor. Times are per
    right-hand side. Returns the matplotlib Figure."""
    chosen = output_format(out, format)
    panels = _panels(_sweep_runs(bench_jsons))
    figure = Figure(figsize=(5.2 * len(panels), 4.2), layout="constrained")
    for ax, (size, runs) in zip(figure.subplots(1, len(panels), squeeze=False)[0], panels):
        _sweep_panel(ax, size, runs)
    return save(figure, out, chosen)
