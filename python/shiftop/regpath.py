"""shiftop.regpath: Tikhonov regularisation of a block Toeplitz inverse problem d = F m for every
weight alpha at once, through the GSVD of each frequency pair (F^[w], R^[w]) (solve/regpath.hpp,
shiftop.gsvd), with the L-curve and generalized cross-validation (GCV) to choose alpha.

THE CIRCULANT APPROXIMATION: the path solves the block-circulant embedding of the problem (period
2 Nt, the data padded with Nt zero steps, the regulariser circulant in time), not the Toeplitz
problem itself. Use it to choose alpha and as a starting point; solve the exact problem with
shiftop.map_point (see regpath()'s docstring).
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _core
from ._checks import kernel_array, require_finite
from ._threads import thread_count
from .operator import Operator, _as_float64

__all__ = ["regpath", "RegPath"]

_REGS = {"identity": 0, "dt1": 1, "dt2": 2}
_CURVES = ("alphas", "residual_norms", "seminorms", "gcv")


class RegPath:
    """The regularisation path of shiftop.regpath(): the GSVDs of every frequency pair, and the
    curves at `alphas` (increasing). Read-only: its attributes cannot be set and its arrays not
    written (alpha_gcv and alpha_lcurve index into alphas); evaluate() computes other curves.

    alphas, residual_norms (||C_F m - [d; 0]||), seminorms (||C_R m||), gcv: 1-D arrays, one
        entry per alpha, of the circulant-embedded problem.
    gcv_choice, lcurve_corner: INDICES into alphas (the smallest GCV value; the log-log
        L-curve's corner, its largest curvature, or None when the path has no corner: the
        largest curvature at an end of the grid, or a path that turns by less than 45 degrees);
        alpha_gcv, alpha_lcurve: the alphas themselves (alpha_lcurve None without a corner).
    solve(alpha=None): the embedded Tikhonov solution (Nm, Nt) (None: alpha_gcv).
    generalized_values(w): sigma_f / sigma_g of F^[w], R^[w] (w = 0..Nt), nonincreasing.
    evaluate(alphas): the curves at other alphas (a dict), without recomputing the GSVDs.
    plot(ax=None, out=None): the L-curve and the GCV curve (matplotlib).
    """

    __slots__ = ("_core", "_shape", "_curves")

    def __init__(self, core, alphas):
        self._core = core
        self._shape = tuple(core.shape)
        curves = self.evaluate(alphas)
        for key in _CURVES:
            curves[key].setflags(write=False)
        self._curves = curves

    @property
    def shape(self) -> tuple:
        """(Nd, Nm, Nt)."""
        return self._shape

    @property
    def alphas(self) -> np.ndarray:
        return self._curves["alphas"]

    @property
    def residual_norms(self) -> np.ndarray:
        return self._curves["residual_norms"]

    @property
    def seminorms(self) -> np.ndarray:
        return self._curves["seminorms"]

    @property
    def gcv(self) -> np.ndarray:
        return self._curves["gcv"]

    @property
    def gcv_choice(self) -> int:
        return int(self._curves["gcv_choice"])

    @property
    def lcurve_corner(self) -> int | None:
        corner = self._curves["lcurve_corner"]
        return None if corner is None else int(corner)

    @property
    def alpha_gcv(self) -> float:
        return float(self.alphas[self.gcv_choice])

    @property
    def alpha_lcurve(self) -> float | None:
        corner = self.lcurve_corner
        return None if corner is None else float(self.alphas[corner])

    def evaluate(self, alphas) -> dict:
        """The curves at `alphas` (positive, finite; sorted here, duplicates kept): a dict with
        alphas, residual_norms, seminorms, gcv (arrays) and gcv_choice, lcurve_corner (indices;
        lcurve_corner None without a corner).
        O(Nm (Nt + 1)) per alpha."""
        a = np.sort(_as_float64("alphas", alphas).ravel())
        if a.size == 0:
            raise ValueError("alphas: expected at least one value")
        if not (np.isfinite(a).all() and (a > 0).all()):
            raise ValueError(f"alphas: expected positive finite values, got {a.min()!r} .. "
                             f"{a.max()!r}")
        return self._core.evaluate(np.ascontiguousarray(a))

    def solve(self, alpha=None) -> np.ndarray:
        """The circulant-embedded Tikhonov solution m (Nm, Nt) for `alpha` (None: alpha_gcv):
        the first Nt steps of argmin ||C_F m - [d; 0]||^2 + alpha^2 ||C_R m||^2."""
        alpha = self.alpha_gcv if alpha is None else float(alpha)
        if not (np.isfinite(alpha) and alpha > 0):
            raise ValueError(f"alpha: expected a positive finite value, got {alpha!r}")
        return self._core.solve(alpha)

    def generalized_values(self, w) -> np.ndarray:
        """sigma_f / sigma_g of the pair (F^[w], R^[w]), w = 0..Nt, nonincreasing."""
        if isinstance(w, bool) or not isinstance(w, numbers.Integral):
            raise TypeError(f"w: expected an integer frequency index, got {w!r}")
        return self._core.generalized_values(int(w))

    def plot(self, ax=None, out=None, *, title=None):
        """The L-curve (seminorm against residual norm, log-log, the corner and the GCV choice
        marked) and GCV against alpha. ax: a pair of matplotlib Axes (L-curve, GCV) to draw on,
        e.g. plt.subplots(1, 2)[1] (None: a new matplotlib Figure with two, pyplot untouched);
        out: also save the figure there (.png, .svg, .pdf). Returns the Figure."""
        from .plot._regpath import draw_regpath, new_figure, save_to

        if ax is None:
            figure, ax = new_figure()
        else:
            if len(ax) != 2:
                raise ValueError("ax: expected two matplotlib Axes (L-curve, GCV)")
            figure = ax[0].figure
        draw_regpath(ax[0], ax[1], _as_dict(self), title=title)
        if out is not None:
            save_to(figure, out)
        return figure

    def to_json(self) -> dict:
        """The curves as the plot's JSON (shiftop.plot.regpath, `shiftop regpath --plot`)."""
        return _as_dict(self)

    def __repr__(self):
        nd, nm, nt = self.shape
        return (f"<shiftop.RegPath Nd={nd} Nm={nm} Nt={nt}: {self.alphas.size} alphas, "
                f"GCV alpha {self.alpha_gcv:.4g}, L-curve alpha "
                + ("none" if self.alpha_lcurve is None else f"{self.alpha_lcurve:.4g}") + ">")


def _as_dict(path):
    return {"alphas": path.alphas.tolist(), "residual_norms": path.residual_norms.tolist(),
            "seminorms": path.seminorms.tolist(), "gcv": path.gcv.tolist(),
            "gcv_choice": path.gcv_choice, "lcurve_corner": path.lcurve_corner}


def _weight(name, value, positive):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{name}: expected a {'positive' if positive else 'non-negative'} "
                         f"finite number, got {value!r}")
    return value


def regpath(operator, data, *, reg="identity", mass=1.0, time_weight=None, laplacian=None,
            space_weight=None, alphas=None, first_row=None, backend=None, device=None,
            threads=None, variant="auto", strategy="modmod") -> RegPath:
    """The Tikhonov regularisation path of d = F m for a block Toeplitz F, by the GSVD of every
    frequency pair: for any alpha,

        m_alpha = argmin ||C_F m - [d; 0]||^2 + alpha^2 ||C_R m||^2

    where C_F is the block circulant of period L = 2 Nt that embeds F (the FFT matvec's
    embedding), [d; 0] the data padded with Nt zero steps and C_R the regulariser, circulant in
    time. THIS IS THE CIRCULANT APPROXIMATION, not the Tikhonov solution of the Toeplitz problem
    min ||F m - d||^2 + alpha^2 ||R m||^2 itself (there nothing wraps around in time): use it to
    choose alpha and as a starting point. The exact solve for the identity regulariser (R =
    mass * I) is the MAP point with unit noise and the prior variance 1 / (alpha * mass)^2, by CG
    preconditioned with the circulant approximation::

        path = shiftop.regpath(op, d)
        alpha = path.alpha_gcv
        nd, nm, nt = op.kernel_shape
        exact = shiftop.map_point(
            op, d, shiftop.GaussianNoise(1.0, nd, nt=nt),
            shiftop.DiagonalPrior(1.0 / (alpha * mass) ** 2, nm, nt=nt),
            preconditioner="circulant").m

    (the command line: `shiftop solve`). For R^[w] with a time derivative, the same through a
    prior whose precision is R^T R.

    operator: a shiftop.Operator (its kernels are recovered by impulse responses, as
        Operator.spectrum does) or the kernels K (Nd, Nm, Nt) themselves (with first_row for a
        general, not lower-triangular, F).
    data: d, shape (Nd, Nt), real (complex data are refused: the path is of a real problem).
    reg: the time part of the regulariser R^[w] = [mass I; time_weight delta(w)^k I;
        space_weight Lap] (rows stacked): 'identity' (k = 0, no time block), 'dt1' (first
        difference in time, k = 1) or 'dt2' (second, k = 2); delta(w) = 1 - exp(-2 pi i w / L).
    time_weight: the time block's weight (None: 1.0); only with reg 'dt1' or 'dt2' (refused
        with 'identity', which has no time block).
    mass: the identity block's weight, > 0 (R^[0] must have full column rank: delta(0) = 0 and a
        graph Laplacian is singular).
    laplacian: an (Nm, Nm) symmetric graph Laplacian of the parameter points (None: no space
        block), weighted by space_weight (None: 1.0; refused without a laplacian).
    alphas: the weights of the curves (None: 40 log-spaced over the range of the generalized
        singular values, where the filter factors gamma^2 / (gamma^2 + alpha^2) change).
    backend: None or 'cpu'; 'cuda': the GSVDs on GPU `device` (None: 0).
    threads: OpenMP threads: None (OpenMP's default) or 1 up to the hardware threads.
    variant, strategy: the GSVD's (see shiftop.gsvd).

    Returns a RegPath. Raises ValueError (shiftop.Error) for bad shapes, non-finite values,
    mass <= 0, and numpy.linalg.LinAlgError if a frequency's GSVD does not converge.
    """
    if isinstance(operator, Operator):
        if first_row is not None:
            raise ValueError("first_row is for kernels; an Operator carries its own")
        column, row = operator._kernels()
    else:
        column = kernel_array("operator (kernels K)", operator)
        row = None if first_row is None else kernel_array("first_row", first_row)
    for name, a in (("K", column), ("first_row", row)):
        if a is not None:
            require_finite(name, a, "expected finite kernels")
    nd, nm, nt = column.shape
    d = _as_float64("data", data)
    if d.shape != (nd, nt):
        raise ValueError(f"data has shape {d.shape}: expected (Nd, Nt) = ({nd}, {nt})")
    require_finite("data", d, "expected finite data")
    if reg not in _REGS:
        raise ValueError(f"reg {reg!r}: expected 'identity', 'dt1' or 'dt2'")
    if reg == "identity" and time_weight is not None:
        raise ValueError(f"time_weight={time_weight!r} weights the time block of reg 'dt1' or "
                         "'dt2'; reg 'identity' has none")
    if laplacian is None and space_weight is not None:
        raise ValueError(f"space_weight={space_weight!r} weights the laplacian's block; no "
                         "laplacian was given")
    mass = _weight("mass", mass, positive=True)
    time_weight = _weight("time_weight", 1.0 if time_weight is None else time_weight,
                          positive=False)
    space_weight = _weight("space_weight", 1.0 if space_weight is None else space_weight,
                           positive=False)
    lap = None
    if laplacian is not None:
        lap = _as_float64("laplacian", laplacian)
        if lap.shape != (nm, nm):
            raise ValueError(f"laplacian has shape {lap.shape}: expected (Nm, Nm) = ({nm}, {nm})")
        # finite and exactly symmetric: the core checks it (inverse::require_laplacian)
    if backend not in (None, "cpu", "cuda"):
        raise ValueError(f"backend {backend!r}: expected None, 'cpu' or 'cuda'")
    if device is not None and backend != "cuda":
        raise ValueError(f"device={device} needs backend='cuda'")
    gpu = (0 if device is None else int(device)) if backend == "cuda" else None
    workers = thread_count(threads)

    try:
        core = _core.RegularizationPath(
            column, row, d, mass=mass, time_derivative=_REGS[reg], time_weight=time_weight,
            laplacian=lap, space_weight=space_weight, threads=workers, device=gpu,
            variant=variant, strategy=strategy)
    except _core.Error as e:
        if "converge" in str(e):
            raise np.linalg.LinAlgError(str(e)) from None
        raise
    if alphas is None:
        alphas = core.default_alphas()  # the C++ library's, which `shiftop regpath` shares
    return RegPath(core, alphas)
