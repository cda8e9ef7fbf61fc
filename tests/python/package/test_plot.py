"""shiftop.plot: each plot from the JSON the tool writes (the committed bench/results and runs of
the tool), checked by what the returned Figure draws; the command line; `shiftop tune --plot`
through the package and its one-line refusals."""

import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle

import shiftop
from shiftop import plot

SOURCE = Path(os.environ.get("SHIFTOP_SOURCE_DIR", Path(__file__).resolve().parents[3]))
RESULTS = SOURCE / "bench" / "results"
SHIFTOP = os.environ.get("SHIFTOP_BIN", "")
needs_tool = pytest.mark.skipif(not SHIFTOP, reason="SHIFTOP_BIN: the tool is not built")
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF-"}


def gpu_tune():
    return json.loads((RESULTS / "tune-h200-2026-11-22-run6-wide.json").read_text())


def ytick_labels(ax):
    return {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}


def points_of(ax):
    """Every scatter point drawn in `ax`, as (x, y) pairs."""
    return np.concatenate([c.get_offsets() for c in ax.collections
                           if isinstance(c, PathCollection)])


def inside(ax, xy):
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    return np.all((xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1))


# --- pareto ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_pareto_writes_the_format_its_name_asks_for(tmp_path, fmt):
    out = tmp_path / f"t.{fmt}"
    plot.pareto(RESULTS / "tune-h200-2026-11-22-run6-wide.json", out)
    assert out.read_bytes().startswith(MAGIC[fmt])
    plot.pareto(gpu_tune(), tmp_path / "no-extension", format=fmt)
    assert (tmp_path / "no-extension").read_bytes().startswith(MAGIC[fmt])


def test_pareto_draws_fp64s_zero_error_on_the_chart_at_a_marked_floor(tmp_path):
    data = gpu_tune()
    figure = plot.pareto(data, tmp_path / "t.png")
    axes = [ax for ax in figure.axes if ax.get_title()]
    assert [ax.get_title().split(" ")[0] for ax in axes] == ["F", "F*"]
    for ax, op in zip(axes, ["F", "Fadj"]):
        configurations = data["ops"][op]["configurations"]
        positive = [c["relative_error"] for c in configurations if c["relative_error"] > 0]
        floor = 10.0 ** (math.floor(math.log10(min(positive))) - 1)
        assert ytick_labels(ax)["exact (0)"] == pytest.approx(floor)
        xy = points_of(ax)
        assert inside(ax, xy)  # every point, FP64's included, inside the axes
        assert len(xy) >= len(configurations)
        ddddd = next(c for c in configurations if c["precision"] == "DDDDD")
        assert [ddddd["median_ms"], floor] in xy.tolist()
        # The front line runs through the front points only, all on the chart.
        front = [line for line in ax.get_lines() if line.get_drawstyle() == "steps-post"]
        assert len(front) == 1
        line_xy = np.column_stack(front[0].get_data())
        assert inside(ax, line_xy)
        on_front = sorted((c["median_ms"], c["relative_error"] or floor) for c in configurations
                          if c["pareto"])
        np.testing.assert_allclose(line_xy, on_front)
        # Each front point is labelled with its precision string (and GPU phase-3 kernel).
        texts = {t.get_text() for t in ax.texts}
        want = {plot._pareto.label(c["precision"], c["gemv_kernel"]) for c in configurations
                if c["pareto"]}
        assert want <= texts
        assert any("fastest under --tol" in t.get_text() for t in ax.get_legend().get_texts())


def test_pareto_without_zero_errors_has_no_floor(tmp_path):
    data = gpu_tune()
    for entry in data["ops"].values():
        for c in entry["configurations"]:
            c["relative_error"] = c["relative_error"] or 1e-15
    figure = plot.pareto(data, tmp_path / "t.png")
    assert all("exact (0)" not in ytick_labels(ax) for ax in figure.axes)


def broken(edit):
    data = gpu_tune()
    edit(data)
    return data


@pytest.mark.parametrize("edit,message", [
    (lambda d: d.pop("ops"), "expected a field 'ops'"),
    (lambda d: d["ops"].clear(), "field 'ops' is empty"),
    (lambda d: d.pop("tolerance"), "expected a field 'tolerance'"),
    (lambda d: d["ops"]["F"]["configurations"][3].pop("median_ms"),
     r"ops.F.configurations\[3\]: expected a field 'median_ms'"),
    (lambda d: d["ops"]["F"]["configurations"][0].update(relative_error="0"),
     "field 'relative_error' must be an integer or a number"),
    (lambda d: d["ops"]["F"]["configurations"][0].update(relative_error=-1.0),
     "non-negative"),
    (lambda d: d["ops"]["Fadj"].update(configurations=[]), "non-empty list"),
    (lambda d: d["ops"]["F"].update(fastest_under_tolerance="QQQQQ"),
     "fastest_under_tolerance 'QQQQQ' is not among"),
    (lambda d: d["shape"].update(nd=True), "field 'nd' must be an integer"),
])
def test_pareto_refuses_a_broken_json_naming_the_field(tmp_path, edit, message):
    with pytest.raises(ValueError, match=message):
        plot.pareto(broken(edit), tmp_path / "t.png")
    assert not (tmp_path / "t.png").exists()


def test_bad_files_and_names_are_refused(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: expected the tune JSON, not JSON"):
        plot.pareto(tmp_path / "bad.json", tmp_path / "t.png")
    with pytest.raises(ValueError, match="missing.json: cannot read the tune JSON"):
        plot.pareto(tmp_path / "missing.json", tmp_path / "t.png")
    with pytest.raises(TypeError, match="tune JSON: expected a file name or a dict, got int"):
        plot.pareto(3, tmp_path / "t.png")
    with pytest.raises(ValueError, match=r"t.jpg: expected a file name ending in .png, .svg"):
        plot.pareto(gpu_tune(), tmp_path / "t.jpg")
    with pytest.raises(ValueError, match="format: expected one of png, svg, pdf, got 'gif'"):
        plot.pareto(gpu_tune(), tmp_path / "t.png", format="gif")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


# --- bench ----------------------------------------------------------------------------------------

def bench_run(op="F", nm=50, phases=None, **fields):
    run = {"backend": "cpu", "shape": {"nd": 4, "nm": nm, "nt": 32}, "op": op, "nrhs": 1,
           "precision": "DDDDD", "total_ms": 1.0, "floor_ms": 0.25,
           "phases": phases or {"pad": 0.1, "fft": 0.2, "layout": 0.05, "gemv": 0.5,
                                "ifft": 0.1, "unpad": 0.02}}
    run.update(fields)
    return run


def test_bench_phases_stacks_each_runs_phases(tmp_path):
    runs = [bench_run("F"), bench_run("Fadj", phases={"pad": 0.3, "fft": 0.0, "layout": 0.1,
                                                      "gemv": 0.2, "ifft": 0.4, "unpad": 0.1})]
    figure = plot.bench_phases(runs, tmp_path / "b.svg")
    assert (tmp_path / "b.svg").read_bytes().startswith(MAGIC["svg"])
    ax = figure.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(bars) == 12
    for k, run in enumerate(runs):
        y = len(runs) - 1 - k  # the first run on top
        mine = sorted((b for b in bars if abs(b.get_y() + b.get_height() / 2 - y) < 1e-9),
                      key=lambda b: b.get_x())
        np.testing.assert_allclose([b.get_width() for b in mine], list(run["phases"].values()))
        assert mine[-1].get_x() + mine[-1].get_width() == pytest.approx(
            sum(run["phases"].values()))
    names = {t.get_position()[1]: t.get_text() for t in ax.get_yticklabels()}
    assert names[1].startswith("F DDDDD (cpu)\nNd=4, Nm=50") and names[0].startswith("Fadj")


def test_bench_phases_refuses_unprofiled_gpu_runs_and_bad_input(tmp_path):
    zero = bench_run(backend="cuda", phases=dict.fromkeys(["pad", "fft", "gemv"], 0.0))
    with pytest.raises(ValueError, match="every phase time is 0.*--profile"):
        plot.bench_phases(zero, tmp_path / "b.png")
    with pytest.raises(ValueError, match="bench JSON: expected a field 'total_ms'"):
        plot.bench_phases({k: v for k, v in bench_run().items() if k != "total_ms"},
                          tmp_path / "b.png")
    with pytest.raises(ValueError, match="expected at least one"):
        plot.bench_phases([], tmp_path / "b.png")
    assert list(tmp_path.iterdir()) == []


def test_bench_sweep_of_one_series_stacks_phases_per_size(tmp_path):
    runs = [bench_run(nm=nm, total_ms=nm / 100) for nm in (400, 100, 200)]
    figure = plot.bench_sweep(runs, tmp_path / "s.png")
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["100", "200", "400"]
    assert ax.get_xlabel() == "Nm"
    totals = next(c for c in ax.collections if c.get_label() == "median total").get_offsets()
    np.testing.assert_allclose(totals, [[0, 1.0], [1, 2.0], [2, 4.0]])


def test_bench_sweep_of_several_series_draws_lines_per_right_hand_side(tmp_path):
    runs = [bench_run(op, nrhs=n, total_ms=2.0 * n) for op in ("F", "Fadj") for n in (1, 4)]
    figure = plot.bench_sweep(runs, tmp_path / "s.png")
    ax = figure.axes[0]
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    np.testing.assert_allclose(lines["F DDDDD (cpu)"], [2.0, 2.0])  # total / nrhs
    np.testing.assert_allclose(lines["Fadj DDDDD (cpu): floor"], [0.25, 0.0625])


def test_bench_sweep_of_a_run_gpu_result_has_one_panel_per_swept_size(tmp_path):
    path = RESULTS / "gpu-h200-2026-11-22-run6.json"
    figure = plot.bench_sweep(path, tmp_path / "s.png")
    assert [ax.get_xlabel() for ax in figure.axes] == ["Nm", "Nd", "Nt"]
    sweeps = json.loads(path.read_text())["sweeps"]
    nm = sorted(s["shape"]["nm"] for s in sweeps if s["sweep"] == "nm")
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == [str(v) for v in nm]


@pytest.mark.parametrize("runs,message", [
    ([bench_run(), bench_run()], "no size differs between the 2 runs"),
    ([bench_run(nm=10), bench_run(nm=20, nrhs=2)], "nm, nrhs all differ"),
    ([bench_run(nm=10), bench_run(nm=20), bench_run(nm=10, total_ms=3.0)],
     "a second run of F DDDDD \\(cpu\\) with nm=10"),
    ([dict(bench_run(), sweep="np"), dict(bench_run(), sweep="np")], "sweep 'np' is not one of"),
    ([bench_run(), bench_run(nrhs=0)], "expected nrhs >= 1"),
])
def test_bench_sweep_refuses_runs_that_are_no_sweep(tmp_path, runs, message):
    with pytest.raises(ValueError, match=message):
        plot.bench_sweep(runs, tmp_path / "s.png")


# --- CG convergence -------------------------------------------------------------------------------

def solve_run(preconditioner, history, converged=True):
    return {"command": "solve", "method": "cg", "preconditioner": preconditioner,
            "iterations": len(history) - 1, "residual_history": history,
            "converged": converged, "seconds": {}, "shape": {"nd": 3, "nm": 5, "nt": 8},
            "prior": "diagonal", "tolerance": 1e-8, "max_iterations": 100}


def test_cg_convergence_draws_each_history_and_zeros_at_the_floor(tmp_path):
    prior = solve_run("prior", list(np.logspace(0, -9, 10)))
    circulant = solve_run("circulant", [1.0, 1e-4, 1e-8, 0.0])
    (tmp_path / "prior.json").write_text(json.dumps(prior))
    figure = plot.cg_convergence([tmp_path / "prior.json", circulant], tmp_path / "cg.pdf")
    assert (tmp_path / "cg.pdf").read_bytes().startswith(MAGIC["pdf"])
    ax = figure.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines() if line.get_label()[0] != "_"}
    assert set(lines) == {"prior preconditioner: 9 iterations",
                          "circulant preconditioner: 3 iterations", "--tol 1e-08"}
    np.testing.assert_allclose(lines["prior preconditioner: 9 iterations"].get_ydata(),
                               prior["residual_history"])
    assert ytick_labels(ax)["exact (0)"] == pytest.approx(1e-10)
    assert lines["circulant preconditioner: 3 iterations"].get_ydata()[-1] == pytest.approx(1e-10)
    assert inside(ax, np.column_stack(lines["circulant preconditioner: 3 iterations"].get_data()))
    assert "Nd=3, Nm=5, Nt=8" in ax.get_title()
    assert list(lines["--tol 1e-08"].get_ydata()) == [1e-8, 1e-8]


def test_cg_convergence_labels_and_refusals(tmp_path):
    run = solve_run(None, [1.0, 0.5], converged=False)
    figure = plot.cg_convergence(run, tmp_path / "cg.png")
    assert figure.axes[0].get_legend().get_texts()[0].get_text() == \
        "no preconditioner: 1 iterations (not converged)"
    figure = plot.cg_convergence([run], tmp_path / "cg.png", labels=["mine"])
    assert figure.axes[0].get_legend().get_texts()[0].get_text() == "mine"
    with pytest.raises(ValueError, match="expected 2 label"):
        plot.cg_convergence([run, run], tmp_path / "cg.png", labels=["one"])
    with pytest.raises(ValueError, match="residual_history is empty \\(method 'dense'"):
        plot.cg_convergence(dict(run, method="dense", residual_history=[]), tmp_path / "cg.png")
    for bad in (-1.0, math.nan, math.inf, "1"):
        with pytest.raises(ValueError, match=r"residual_history\[1\] must be a finite number"):
            plot.cg_convergence(dict(run, residual_history=[1.0, bad]), tmp_path / "cg.png")


@needs_tool
def test_cg_convergence_of_shiftop_solve_runs(tmp_path):
    def tool(*args):
        subprocess.run([SHIFTOP, *map(str, args)], check=True, capture_output=True, cwd=tmp_path)

    tool("model", "heat2d", "--grid", 10, "--sources", 4, "--sensors", 3, "--nt", 30, "-o", "F.h5",
         "--data", "d.npy", "--noise", 0.01)
    runs = []
    for preconditioner in ("prior", "circulant"):
        # (noise 1e-5: both preconditioners converge, which solve's exit status now requires;
        # at 1e-7 the circulant one needed more than 1000 iterations)
        tool("solve", "--operator", "F.h5", "--data", "d.npy", "-o", f"m_{preconditioner}.npy",
             "--noise-std", 1e-5, "--prior", "smoothing", "--correlation-steps", 4,
             "--preconditioner", preconditioner, "--json", f"{preconditioner}.json")
        runs.append(tmp_path / f"{preconditioner}.json")
    figure = plot.cg_convergence(runs, tmp_path / "cg.png")
    lines = [line for line in figure.axes[0].get_lines() if "preconditioner" in line.get_label()]
    for line, path in zip(lines, runs):
        data = json.loads(path.read_text())
        assert line.get_label().startswith(f"{data['preconditioner']} preconditioner: "
                                           f"{data['iterations']} iterations")
        np.testing.assert_array_equal(line.get_ydata(), data["residual_history"])
    assert (tmp_path / "cg.png").read_bytes().startswith(MAGIC["png"])


def test_cg_convergence_of_map_point_results(tmp_path):
    model = shiftop.models.heat2d(n=8, sources=3, sensors=2, nt=12)
    op, (nd, nm, nt) = model.operator(), model.shape
    d, sigma = model.data(noise=0.01, seed=2, return_std=True)
    noise = shiftop.GaussianNoise(sigma**2, nd, nt)
    prior = shiftop.TimeSmoothingPrior(1.0, nm, nt, correlation_steps=3)
    runs = [shiftop.map_point(op, d, noise, prior, preconditioner=p) for p in ("prior", "circulant")]
    figure = plot.cg_convergence(runs, tmp_path / "cg.png", labels=["prior", "circulant"])
    lines = {line.get_label(): line.get_ydata() for line in figure.axes[0].get_lines()}
    for name, run in zip(["prior", "circulant"], runs):
        np.testing.assert_array_equal(lines[name], run.residual_history)
    figure = plot.cg_convergence(runs[0], tmp_path / "cg.png")
    assert figure.axes[0].get_legend().get_texts()[0].get_text() == \
        f"CG: {runs[0].iterations} iterations"


# --- source ---------------------------------------------------------------------------------------

def sources(rng, nm, nt):
    true = np.exp(-(np.linspace(0, 1, nt) - np.linspace(0.3, 0.7, nm)[:, None]) ** 2 / 0.02)
    return true, true + 0.05 * rng.standard_normal(true.shape)


def test_source_as_series_draws_each_chosen_parameter(tmp_path):
    true, recovered = sources(np.random.default_rng(1), 4, 50)
    figure = plot.source(true, recovered, tmp_path / "s.png", dt=0.5)
    drawn = [ax for ax in figure.axes if ax.get_visible()]
    assert [ax.get_title() for ax in drawn] == [f"parameter {j}" for j in range(4)]
    for j, ax in enumerate(drawn):
        t, y = ax.get_lines()[0].get_data()
        np.testing.assert_allclose(t, 0.5 * np.arange(50))
        np.testing.assert_array_equal(y, true[j])
        np.testing.assert_array_equal(ax.get_lines()[1].get_ydata(), recovered[j])
    error = np.linalg.norm(recovered - true) / np.linalg.norm(true)
    assert f"relative error {error:.2e}" in figure.get_suptitle()
    figure = plot.source(true, recovered, tmp_path / "s.png", parameters=[3, 1])
    assert [ax.get_title() for ax in figure.axes if ax.get_visible()] == [
        "parameter 3", "parameter 1"]


def test_source_as_images_shows_both_and_their_difference(tmp_path):
    true, recovered = sources(np.random.default_rng(2), 20, 30)
    np.save(tmp_path / "true.npy", true)
    figure = plot.source(tmp_path / "true.npy", recovered, tmp_path / "s.png")  # auto: images
    images = [ax.get_images()[0] for ax in figure.axes if ax.get_images()]
    assert len(images) == 3
    np.testing.assert_array_equal(images[0].get_array(), true)
    np.testing.assert_array_equal(images[2].get_array(), recovered - true)
    assert images[0].get_clim() == images[1].get_clim()
    assert images[2].get_clim() == pytest.approx((-np.abs(recovered - true).max(),
                                                  np.abs(recovered - true).max()))


def test_source_refuses_bad_input(tmp_path):
    true, recovered = sources(np.random.default_rng(3), 3, 10)
    out = tmp_path / "s.png"
    with pytest.raises(ValueError, match=r"recovered: has shape \(3, 9\), expected .* \(3, 10\)"):
        plot.source(true, recovered[:, :9], out)
    with pytest.raises(ValueError, match="recovered: holds NaN"):
        plot.source(true, np.where(recovered > 0.5, np.nan, recovered), out)
    with pytest.raises(ValueError, match=r"true: expected a non-empty array of shape \(Nm, Nt\)"):
        plot.source(np.zeros((2, 3, 4)), np.zeros((2, 3, 4)), out)
    with pytest.raises(ValueError, match=r"parameters: expected indices in 0..2, got \[3\]"):
        plot.source(true, recovered, out, parameters=[3])
    with pytest.raises(ValueError, match="kind: expected one of auto, series, images"):
        plot.source(true, recovered, out, kind="movie")
    with pytest.raises(ValueError, match="dt: expected a positive time step"):
        plot.source(true, recovered, out, dt=-1.0)
    with pytest.raises(ValueError, match="true: expected an array or a .npy file"):
        plot.source(tmp_path / "true.h5", recovered, out)
    with pytest.raises(TypeError, match="true: expected a real array"):
        plot.source([["a"]], recovered, out)
    assert not out.exists()


# --- the command line -----------------------------------------------------------------------------

def run_plot(*args, env=None):
    return subprocess.run([sys.executable, "-m", "shiftop.plot", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


def test_command_line_draws_and_refuses_in_one_line(tmp_path):
    done = run_plot("pareto", RESULTS / "tune-h200-2026-11-22-run6-wave2d.json", "-o",
                    tmp_path / "t.png")
    assert done.returncode == 0 and done.stdout == done.stderr == "", done
    assert (tmp_path / "t.png").read_bytes().startswith(MAGIC["png"])
    np.save(tmp_path / "a.npy", np.ones((2, 5)))
    done = run_plot("source", tmp_path / "a.npy", tmp_path / "a.npy", "--parameters", "1",
                    "-o", tmp_path / "s.svg")
    assert done.returncode == 0, done
    (tmp_path / "bad.json").write_text(json.dumps({"ops": {}}))
    done = run_plot("pareto", tmp_path / "bad.json", "-o", tmp_path / "u.png")
    assert done.returncode == 1
    assert done.stderr == f"shiftop.plot: error: {tmp_path / 'bad.json'}: field 'ops' is empty\n"
    assert run_plot("pareto", tmp_path / "bad.json").returncode == 2  # -o is required
    for nm in (10, 20):
        (tmp_path / f"b{nm}.json").write_text(json.dumps(bench_run(nm=nm)))
    done = run_plot("bench-sweep", tmp_path / "b10.json", tmp_path / "b20.json", "-o",
                    tmp_path / "sweep.pdf")
    assert done.returncode == 0 and (tmp_path / "sweep.pdf").read_bytes().startswith(MAGIC["pdf"])
    done = run_plot("bench-phases", tmp_path / "b10.json", "-o", tmp_path / "p", "--format", "svg")
    assert done.returncode == 0 and (tmp_path / "p").read_bytes().startswith(MAGIC["svg"])
    (tmp_path / "s.json").write_text(json.dumps(solve_run("prior", [1.0, 0.1])))
    done = run_plot("cg-convergence", tmp_path / "s.json", "--label", "one", "--label", "two",
                    "-o", tmp_path / "cg.png")
    assert done.returncode == 1
    assert done.stderr.startswith("shiftop.plot: error: labels: expected 1 label(s)")
    assert not (tmp_path / "u.png").exists()


def test_import_shiftop_leaves_matplotlib_unloaded():
    # matplotlib is needed by shiftop.plot alone: `import shiftop` must work without it.
    done = subprocess.run([sys.executable, "-c", "import sys, shiftop, shiftop.models; "
                           "print('matplotlib' in sys.modules)"], capture_output=True, text=True)
    assert done.stdout == "False\n", done.stderr


# --- shiftop tune --plot --------------------------------------------------------------------------

TUNE = ("tune", "--nd", 2, "--nm", 5, "--nt", 6, "--reps", 1, "--threads", 1)


def tune(*args, env_update=None, cwd=None):
    env = dict(os.environ, **(env_update or {}))
    return subprocess.run([SHIFTOP, *map(str, TUNE), *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def leftovers(directory):
    return [p.name for p in Path(directory).iterdir() if "shiftop-tmp" in p.name]


@needs_tool
@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_tune_plot_draws_with_the_package_with_or_without_json(tmp_path, fmt):
    done = tune("--plot", tmp_path / f"t.{fmt}")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / f"t.{fmt}").read_bytes().startswith(MAGIC[fmt])
    assert f"t.{fmt}: wrote the Pareto front plot" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"t.{fmt}"]  # no temporary JSON left
    done = tune("--json", tmp_path / "t.json", "--plot", tmp_path / "u.png")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "u.png").stat().st_size > 10_000
    assert json.loads((tmp_path / "t.json").read_text())["ops"]["F"]["configurations"]


@needs_tool
def test_tune_plot_without_the_package_says_how_to_get_it_before_any_work(tmp_path,
                                                                           tmp_path_factory):
    # A Python without site-packages: scripts/build installs shiftop into the python3 on PATH.
    python = tmp_path_factory.mktemp("bin") / "python-without-site"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    python.chmod(0o755)
    done = tune("--plot", tmp_path / "t.png",
                env_update={"SHIFTOP_PYTHON": str(python), "PYTHONPATH": str(tmp_path),
                            "PYTHONNOUSERSITE": "1"})
    assert done.returncode != 0
    lines = done.stderr.splitlines()
    assert lines == [f"shiftop: error: --plot: '{python}' cannot import shiftop.plot "
                     "(ModuleNotFoundError: No module named 'shiftop'): install the Python "
                     "package with `pip install .` in the shiftop repository (README: Set-up), or "
                     "set SHIFTOP_PYTHON to a Python that has it"], done.stderr
    assert "[tune]" not in done.stderr and done.stdout == ""
    done = tune("--plot", tmp_path / "t.png",
                env_update={"SHIFTOP_PYTHON": str(tmp_path / "no-such-python")})
    assert done.returncode != 0
    assert "cannot run the Python" in done.stderr and "No such file" in done.stderr
    assert list(tmp_path.iterdir()) == []


@needs_tool
def test_tune_plot_refuses_a_name_without_a_plot_format(tmp_path):
    done = tune("--plot", tmp_path / "t.txt")
    assert done.returncode != 0
    assert done.stderr == (f"shiftop: error: --plot '{tmp_path / 't.txt'}': ends in '.txt': "
                           "expected a name ending in .png, .svg or .pdf\n")


def _plot_command(name, tmp_path):
    """The arguments of `shiftop NAME` on a small problem, before --plot: every command that
    plots draws through the one path (apps/shiftop/python_plotter.hpp, draw_plot)."""
    if name == "tune":
        return list(map(str, TUNE))
    rng = np.random.default_rng(5)
    np.save(tmp_path / "F.npy", rng.standard_normal((2, 3, 8)))
    if name == "spectrum":
        return ["spectrum", str(tmp_path / "F.npy")]
    np.save(tmp_path / "d.npy", rng.standard_normal((2, 8)))
    return ["regpath", str(tmp_path / "F.npy"), str(tmp_path / "d.npy"), "--alphas",
            "LOG:1e-2:1:3"]


@needs_tool
@pytest.mark.parametrize("command", ["tune", "spectrum", "regpath"])
def test_a_failing_plotter_leaves_no_plot_and_no_temporaries(tmp_path, command):
    # Imports the package (the check before the work) but fails to plot.
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = -c ] && exec {sys.executable} "$@"\nexit 3\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "t.png").write_bytes(b"previous")
    env = dict(os.environ, SHIFTOP_PYTHON=str(wrapper))
    done = subprocess.run([SHIFTOP, *_plot_command(command, tmp_path), "--plot",
                           str(tmp_path / "t.png")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode != 0
    assert done.stderr.splitlines()[-1] == (f"shiftop: error: --plot: the plotter `{wrapper} -m "
                                            "shiftop.plot` failed (exit status 3)")
    assert (tmp_path / "t.png").read_bytes() == b"previous"
    assert leftovers(tmp_path) == []
