"""True against recovered source of an inversion: a parameter vector m of shape (Nm, Nt), one time
series per source (SOTI layout), shown as time series of chosen parameters or as images over
(parameter, time) with their difference."""

import math
import os

import numpy as np
from matplotlib.figure import Figure

from ._files import output_format, save

KINDS = ("auto", "series", "images")
MOST_SERIES = 6  # "auto" draws series up to this many parameters, images beyond


def _parameter(value, name):
    """A float64 array (Nm, Nt) from an array-like or a .npy file; a 1-D array is one parameter."""
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if not path.endswith(".npy"):
            raise ValueError(f"{name}: expected an array or a .npy file, got '{path}'")
        try:
            value = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: cannot read {name} as .npy: {e}") from None
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected a real array of shape (Nm, Nt), got {e}") from None
    if array.ndim == 1:
        array = array[np.newaxis, :]
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"{name}: expected a non-empty array of shape (Nm, Nt), got shape "
                         f"{np.shape(value)}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: holds NaN or infinity")
    return array


def _chosen_parameters(parameters, nm):
    if parameters is None:
        if nm <= MOST_SERIES:
            return list(range(nm))
        return sorted({int(round(j)) for j in np.linspace(0, nm - 1, MOST_SERIES)})
    chosen = [int(j) for j in np.atleast_1d(parameters)]
    if not chosen or any(not 0 <= j < nm for j in chosen):
        raise ValueError(f"parameters: expected indices in 0..{nm - 1}, got {list(chosen)}")
    return chosen


def _series(figure, true, recovered, times, time_label, parameters):
    columns = min(3, len(parameters))
    rows = math.ceil(len(parameters) / columns)
    axes = figure.subplots(rows, columns, squeeze=False)
    for ax in axes.flat[len(parameters):]:
        ax.set_visible(False)
    for ax, j in zip(axes.flat, parameters):
        ax.plot(times, true[j], color="black", linewidth=1.4, label="true")
        ax.plot(times, recovered[j], color="#c0392b", linestyle="--", linewidth=1.2,
                label="recovered")
        ax.set_title(f"parameter {j}", fontsize=9)
        ax.grid(True, color="0.92")
    for column in range(columns):  # the lowest drawn panel of each column
        bottom = max(k for k in range(column, len(parameters), columns))
        axes.flat[bottom].set_xlabel(time_label)
    axes.flat[0].legend(fontsize=7)


def _images(figure, true, recovered, step, time_label):
    axes = figure.subplots(1, 3, sharey=True)
    nm, nt = true.shape
    extent = [-0.5 * step, (nt - 0.5) * step, nm - 0.5, -0.5]  # pixel (j, t) centred on t*step
    low = min(true.min(), recovered.min())
    high = max(true.max(), recovered.max())
    for ax, values, title in zip(axes, (true, recovered), ("true", "recovered")):
        image = ax.imshow(values, aspect="auto", extent=extent, vmin=low, vmax=high,
                          cmap="viridis", interpolation="nearest")
        ax.set_title(title)
    figure.colorbar(image, ax=axes[:2].tolist(), shrink=0.9)
    difference = recovered - true
    bound = float(np.abs(difference).max()) or 1.0
    image = axes[2].imshow(difference, aspect="auto", extent=extent, vmin=-bound, vmax=bound,
                           cmap="RdBu_r", interpolation="nearest")
    axes[2].set_title("recovered - true")
    figure.colorbar(image, ax=axes[2], shrink=0.9)
    axes[0].set_ylabel("parameter")
    axes[0].yaxis.get_major_locator().set_params(integer=True)
    for ax in axes:
        ax.set_xlabel(time_label)


def source(true, recovered, out, *, kind="auto", dt=None, parameters=None, format=None):
    """Plots a true source against the recovered one. `true` and `recovered` are arrays of shape
    (Nm, Nt) (or (Nt,) for one parameter) or .npy files. kind="series" draws the time series of
    `parameters` (indices; default all up to six, else six spread evenly), "images" draws both
    over (parameter, time) with their difference, "auto" picks series for at most six parameters.
    `dt` (the observation interval) labels the time axis in time units instead of steps. The title
    gives the relative error ||recovered - true|| / ||true||. Returns the matplotlib Figure."""
    chosen_format = output_format(out, format)
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    true = _parameter(true, "true")
    recovered = _parameter(recovered, "recovered")
    if true.shape != recovered.shape:
        raise ValueError(f"recovered: has shape {recovered.shape}, expected the true source's "
                         f"shape {true.shape}")
    if dt is not None and not (isinstance(dt, (int, float)) and 0 < dt < math.inf):
        raise ValueError(f"dt: expected a positive time step, got {dt!r}")
    nm, nt = true.shape
    step = dt if dt is not None else 1.0
    time_label = "time" if dt is not None else "time step"
    norm = float(np.linalg.norm(true))
    error = float(np.linalg.norm(recovered - true)) / norm if norm > 0 else math.nan
    if kind == "auto":
        kind = "series" if nm <= MOST_SERIES or parameters is not None else "images"
    if kind == "series":
        chosen = _chosen_parameters(parameters, nm)
        columns = min(3, len(chosen))
        figure = Figure(figsize=(3.6 * columns, 0.6 + 2.4 * math.ceil(len(chosen) / columns)),
                        layout="constrained")
        _series(figure, true, recovered, np.arange(nt) * step, time_label, chosen)
    else:
        if parameters is not None:
            raise ValueError("parameters: only with kind='series'")
        figure = Figure(figsize=(13.0, 4.0), layout="constrained")
        _images(figure, true, recovered, step, time_label)
    figure.suptitle(f"true vs recovered source ({nm} parameters x {nt} steps): "
                    f"relative error {error:.2e}", fontsize=11)
    return save(figure, out, chosen_format)
