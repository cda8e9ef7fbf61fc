"""PDE models whose parameter-to-observable maps are block Toeplitz: the p2o map F of a linear
time-invariant system with point sources (parameters) and point sensors (observations) on the unit
square (the block-Toeplitz paper, section 2.1, eqs. (2)-(5)), with what an inversion demo needs::

    model = shiftop.models.heat2d(n=32, sources=16, sensors=4, nt=100)
    F = model.operator()                    # shiftop.Operator from model.kernels (Nd, Nm, Nt)
    m_true = model.true_source()            # (Nm, Nt), smooth in space and time
    d = model.data(m_true, noise=0.01, seed=1)   # F m_true + 1% noise: `shiftop model --data`

The same sizes and seed give the numbers `shiftop model heat2d|wave2d --grid N --sources NM
--sensors ND --nt NT --substeps S -o F.h5 --truth m.h5 --data d.h5 --noise R --seed K` writes.
Grid points are numbered row-major, p = row * n + col, at (x, y) = ((col + 1) h, (row + 1) h),
h = 1 / (n + 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _core
from .operator import Operator

__all__ = ["Model", "heat2d", "wave2d"]


def _integer(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected an integer, got {value!r:.40}")
    return int(value)


def _number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a number, got {value!r:.40}")
    return float(value)


def _points(name, value):
    """A list of grid points from a sequence of integers."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name}: expected a count or a sequence of grid points, got "
                        f"{value!r:.40}")
    return [_integer(f"{name}[{k}]", p) for k, p in enumerate(value)]


def _layout(core_class, n, sources, sensors, nt, substeps):
    """(sources, sensors) as grid points: the model's default layout where counts are given (sources
    in the left half of the square, sensors in the right half), else the points themselves."""
    counts = [isinstance(v, (int, np.integer)) and not isinstance(v, bool)
              for v in (sources, sensors)]
    default = None
    if any(counts):
        default = core_class.default_layout(
            n, _integer("sources", sources) if counts[0] else 1,
            _integer("sensors", sensors) if counts[1] else 1, nt, substeps)
    return ((default.sources if counts[0] else _points("sources", sources)),
            (default.sensors if counts[1] else _points("sensors", sensors)))


class Model:
    """A PDE model's p2o map F (Nd sensors x Nm sources, Nt observation steps) and its geometry.
    Made by :func:`heat2d` or :func:`wave2d`."""

    def __init__(self, name: str, core):
        self.name = name
        self._core = core
        self._kernels = None

    def __repr__(self):
        nd, nm, nt = self.shape
        return f"shiftop.models.{self.name}(n={self.n}, Nd={nd}, Nm={nm}, Nt={nt})"

    @property
    def shape(self) -> tuple[int, int, int]:
        """(Nd, Nm, Nt): sensors, sources, observation steps."""
        return tuple(self._core.shape)

    @property
    def n(self) -> int:
        """Interior grid points per side of the unit square."""
        return self._core.n

    @property
    def dt(self) -> float:
        """The PDE time step (the default: 0.9 of the explicit scheme's stability limit)."""
        return self._core.dt

    @property
    def substeps(self) -> int:
        """PDE time steps per observation step."""
        return self._core.substeps

    @property
    def observation_interval(self) -> float:
        """Time between observations, substeps * dt."""
        return self._core.observation_interval

    @property
    def sources(self) -> np.ndarray:
        """Grid point of each parameter (row-major), shape (Nm,)."""
        return np.asarray(self._core.sources, dtype=np.int64)

    @property
    def sensors(self) -> np.ndarray:
        """Grid point of each observation (row-major), shape (Nd,)."""
        return np.asarray(self._core.sensors, dtype=np.int64)

    def _positions(self, points):
        h = 1.0 / (self.n + 1)
        return np.column_stack([(points % self.n + 1) * h, (points // self.n + 1) * h])

    @property
    def source_positions(self) -> np.ndarray:
        """(x, y) of each source in the unit square, shape (Nm, 2)."""
        return self._positions(self.sources)

    @property
    def sensor_positions(self) -> np.ndarray:
        """(x, y) of each sensor in the unit square, shape (Nd, 2)."""
        return self._positions(self.sensors)

    @property
    def kernels(self) -> np.ndarray:
        """The first block column of F, float64 (Nd, Nm, Nt) (read-only; computed once by Nd
        adjoint solves): kernels[i, j, t] is the response of sensor i at step t to a unit source
        j held during step 0."""
        if self._kernels is None:
            self._kernels = self._core.kernels()
            self._kernels.flags.writeable = False
        return self._kernels

    def operator(self, **options) -> Operator:
        """F as a :class:`shiftop.Operator` (FFT-based); `options` go to
        :meth:`shiftop.Operator.from_kernels` (precision, backend, max_rhs, ...)."""
        return Operator.from_kernels(self.kernels, **options)

    def _vector(self, name, value, blocks):
        array = np.ascontiguousarray(value, dtype=np.float64)
        nt = self.shape[2]
        if array.shape != (blocks, nt):
            raise ValueError(f"{name} must have shape ({blocks}, {nt}), got shape {array.shape}")
        return array

    def forward(self, m) -> np.ndarray:
        """d = F m by time stepping the PDE (an independent check of the FFT operator);
        m (Nm, Nt) -> d (Nd, Nt)."""
        return self._core.apply_forward(self._vector("m", m, self.shape[1]))

    def adjoint(self, d) -> np.ndarray:
        """m = F^T d by backward time stepping of the adjoint PDE; d (Nd, Nt) -> m (Nm, Nt)."""
        return self._core.apply_adjoint(self._vector("d", d, self.shape[0]))

    def true_source(self) -> np.ndarray:
        """A source that is smooth in space and time, (Nm, Nt): per source at (x, y) a Gaussian
        pulse in time arriving at 0.3 + 0.4 y (as a fraction of the record) with amplitude
        1 + 0.5 sin(2 pi x); `shiftop model --truth` writes the same."""
        return _core.smooth_source(self._core.sources, self.n, self.shape[2])

    def data(self, m=None, *, noise: float = 0.01, seed: int = 1, return_std: bool = False):
        """Observations F m plus Gaussian noise with standard deviation sigma = `noise` times the
        RMS of F m (std::mt19937_64 seeded with `seed`, not NumPy's generator), shape (Nd, Nt);
        with return_std, the pair (data, sigma), sigma being what a noise model needs. m
        defaults to :meth:`true_source`. F is applied by the FFT plan with the options `shiftop
        model --data` uses, so the numbers equal the tool's for the same model and seed."""
        m = self.true_source() if m is None else self._vector("m", m, self.shape[1])
        noise = _number("noise", noise)
        seed = _integer("seed", seed)
        if seed < 0:
            raise ValueError(f"seed: expected a non-negative integer, got {seed}")
        d = self.operator(max_rhs=1, planning="estimate") @ m
        sigma = _core.add_relative_noise(d, noise, seed)
        return (d, sigma) if return_std else d


def heat2d(n: int = 64, sources=32, sensors=4, nt: int = 200, substeps: int = 1, *,
           kappa: float = 1.0, dt: float = 0.0) -> Model:
    """The 2D heat equation u_t = kappa Laplacian(u) + sources on the unit square (n x n interior
    points, Dirichlet boundary, explicit Euler; include/shiftop/models/heat2d.hpp). `sources` and
    `sensors` are counts (the default layout: sources on a regular sub-grid of the left half,
    sensors of the right half) or sequences of grid points. dt = 0 picks 0.9 of the stability
    limit h^2 / (4 kappa). The defaults are `shiftop model heat2d`'s."""
    n, nt, substeps = _integer("n", n), _integer("nt", nt), _integer("substeps", substeps)
    source_points, sensor_points = _layout(_core.Heat2d, n, sources, sensors, nt, substeps)
    return Model("heat2d", _core.Heat2d(n, _number("kappa", kappa), _number("dt", dt), nt,
                                        source_points, sensor_points, substeps))


def wave2d(n: int = 64, sources=32, sensors=4, nt: int = 200, substeps: int = 1, *,
           speed: float = 1.0, layers=(), dt: float = 0.0, sponge_width: int | None = None,
           sponge_damping: float = 0.0) -> Model:
    """The 2D acoustic wave equation u_tt + sigma u_t = c^2 Laplacian(u) + f with an absorbing
    sponge (leapfrog; include/shiftop/models/wave2d.hpp). `sources`/`sensors` as in
    :func:`heat2d`; layers: (first_row, speed) pairs of a layered medium below `speed`;
    sponge_width: damped grid points next to each side (None: n // 4, the default layout's);
    dt = 0 and sponge_damping = 0 pick the defaults (0.9 of the CFL limit; about 1000x damping
    through the layer and back). The defaults are `shiftop model wave2d`'s."""
    n, nt, substeps = _integer("n", n), _integer("nt", nt), _integer("substeps", substeps)
    source_points, sensor_points = _layout(_core.Wave2d, n, sources, sensors, nt, substeps)
    if sponge_width is None:
        sponge_width = n // 4
    if isinstance(layers, (str, bytes)) or not isinstance(layers, (Sequence, np.ndarray)):
        raise TypeError(f"layers: expected (first_row, speed) pairs, got {layers!r:.40}")
    pairs = []
    for k, layer in enumerate(layers):
        if not isinstance(layer, (Sequence, np.ndarray)) or len(layer) != 2:
            raise TypeError(f"layers[{k}]: expected a pair (first_row, speed), got {layer!r:.40}")
        pairs.append((_integer(f"layers[{k}] first_row", layer[0]),
                      _number(f"layers[{k}] speed", layer[1])))
    return Model("wave2d", _core.Wave2d(
        n, _number("speed", speed), pairs, _number("dt", dt), nt, source_points, sensor_points,
        substeps, _integer("sponge_width", sponge_width),
        _number("sponge_damping", sponge_damping)))
