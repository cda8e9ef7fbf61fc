"""shiftop.ct: a 2D fan-beam CT scanner whose system matrix is block-circulant, its phantom, and
iterative reconstructions (MLEM, SIRT, CGLS) on shiftop.CirculantOperator.

The scanner (include/shiftop/models/ct2d.hpp): k source positions over 360 degrees, a polar image
grid of rings x sectors (sectors a multiple of k, so one rotation step is a cyclic shift of
sectors), `detectors` bins per position, and exact ray-voxel intersection lengths. Images are
vectors of length k*nb (nb = rings * sectors / k) in the system matrix's column order;
sinograms are vectors of length k*detectors (row i*detectors + b is bin b at position i)::

    g = shiftop.ct.Geometry(positions=30, rings=16, sectors=120, detectors=64)
    C = shiftop.ct.system_matrix(g)                  # a CirculantOperator, float64
    x = shiftop.ct.shepp_logan(g)
    b = shiftop.ct.poisson_noise(C @ x, counts=1e4, seed=1)
    image, history = shiftop.ct.mlem(C, b, iterations=50)
    picture = shiftop.ct.to_cartesian(g, image, pixels=256)
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from . import _core
from .circ import _SUFFIX, CirculantOperator


def _integer(name, value):
    """value as an int; anything else (a float such as 2.5 or 6.0, a bool) is refused by name
    rather than truncated by int() or refused with the binding's signature."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{name} must be an integer, got {value!r}")


class Geometry:
    """The scanner: `positions` (k) source positions over 360 degrees at `source_distance` from
    the centre, a field of view of `radius` split into `rings` annuli of equal width and `sectors`
    equal sectors (a multiple of positions), and `detectors` bins on an equiangular arc whose fan
    covers the field of view. Bad values raise shiftop.Error naming the field."""

    def __init__(self, positions=60, rings=32, sectors=240, detectors=128, radius=1.0,
                 source_distance=2.0):
        self._core = _core.Ct2dGeometry(positions=_integer("positions", positions),
                                        rings=_integer("rings", rings),
                                        sectors=_integer("sectors", sectors),
                                        detectors=_integer("detectors", detectors),
                                        radius=float(radius),
                                        source_distance=float(source_distance))

    positions = property(lambda self: self._core.positions, doc="k, the source positions")
    rings = property(lambda self: self._core.rings, doc="annuli of the polar grid")
    sectors = property(lambda self: self._core.sectors, doc="angular sectors of the polar grid")
    detectors = property(lambda self: self._core.detectors, doc="bins per position (mb)")
    radius = property(lambda self: self._core.radius, doc="radius of the field of view")
    source_distance = property(lambda self: self._core.source_distance,
                               doc="distance of the source from the centre")

    @property
    def block_shape(self) -> tuple[int, int, int]:
        """(k, mb, nb) of the system matrix: k = positions, mb = detectors, nb = rings*sectors/k."""
        return self._core.block_shape

    @property
    def image_size(self) -> int:
        """k*nb, the length of an image vector (rings*sectors)."""
        k, _, nb = self.block_shape
        return k * nb

    @property
    def sinogram_size(self) -> int:
        """k*mb, the length of a sinogram (positions*detectors)."""
        k, mb, _ = self.block_shape
        return k * mb

    def __repr__(self):
        return f"<shiftop.ct.Geometry {self._core}>"


def system_matrix(geometry: Geometry, dtype=np.float64, **options) -> CirculantOperator:
    """The scanner's system matrix C, traced from position 0's rays (its first block row), as a
    CirculantOperator of `dtype` (float32 or float64); options as for CirculantOperator."""
    dtype = np.dtype(dtype)
    if dtype not in _SUFFIX:
        raise TypeError(f"dtype {dtype}: expected float32 or float64")
    trace = getattr(_core, "ct2d_system_matrix_" + _SUFFIX[dtype])
    indptr, indices, data = trace(geometry._core)
    return CirculantOperator(indptr, indices, data, *geometry.block_shape, **options)


def _image(geometry, name, image):
    image = np.asarray(image)
    if np.iscomplexobj(image) or image.dtype.kind not in "fiu":
        raise TypeError(f"{name} has dtype {image.dtype}: expected real numbers")
    if image.shape != (geometry.image_size,):
        raise ValueError(f"{name} must have shape ({geometry.image_size},) (rings*sectors), got "
                         f"{image.shape}")
    return np.ascontiguousarray(image, dtype=np.float64)


def shepp_logan(geometry: Geometry, samples: int = 4) -> np.ndarray:
    """The modified Shepp-Logan phantom scaled to the field of view, averaged over each polar
    voxel with samples x samples points: a float64 image vector of length k*nb."""
    return _core.ct2d_shepp_logan(geometry._core, _integer("samples", samples))


def to_cartesian(geometry: Geometry, image, pixels: int = 256) -> np.ndarray:
    """A polar image vector resampled to a (pixels, pixels) float64 array of the square
    [-radius, radius]^2, row 0 at the top; pixels whose centre is outside the field of view
    are 0."""
    pixels = _integer("pixels", pixels)
    picture = _core.ct2d_to_cartesian(geometry._core, _image(geometry, "image", image), pixels)
    return picture.reshape(pixels, pixels)


def poisson_noise(mean, counts: float, seed: int = 0) -> np.ndarray:
    """Each entry of mean (>= 0) times counts replaced by a Poisson sample divided by counts
    (larger counts, less noise); float64, deterministic for a seed."""
    mean = np.asarray(mean)
    if np.iscomplexobj(mean) or mean.dtype.kind not in "fiu":
        raise TypeError(f"mean has dtype {mean.dtype}: expected real numbers")
    flat = np.ascontiguousarray(mean, dtype=np.float64).reshape(-1)
    return _core.ct2d_poisson_noise(flat, float(counts), _integer("seed", seed)).reshape(mean.shape)


class Progress(NamedTuple):
    """One iteration of a reconstruction."""

    iteration: int
    relative_residual: float  # ||C x - b|| / ||b|| after the iteration
    neg_log_likelihood: float  # MLEM: sum(C x - b log(C x)); SIRT, CGLS: 0
    seconds: float  # since the start


class Reconstruction(NamedTuple):
    """The image (length k*nb, the operator's dtype) and one Progress per iteration."""

    image: np.ndarray
    history: list


def _reconstruct(method, C, sinogram, iterations, callback):
    if not isinstance(C, CirculantOperator):
        raise TypeError(f"C must be a shiftop.CirculantOperator, got {type(C).__name__}")
    b = np.asarray(sinogram)
    if np.iscomplexobj(b) or b.dtype.kind not in "fiu":
        raise TypeError(f"sinogram has dtype {b.dtype}: expected real numbers")
    if b.shape != (C.shape[0],):
        raise ValueError(f"sinogram must have shape ({C.shape[0]},) (k*mb), got {b.shape}")
    b = np.ascontiguousarray(b, dtype=C.dtype)
    report = None if callback is None else (lambda *p: callback(Progress(*p)))
    run = getattr(_core, f"{method}_{_SUFFIX[C.dtype]}")
    with C._lock:
        image, history = run(C._core, b, _integer("iterations", iterations), report)
    return Reconstruction(image, [Progress(*p) for p in history])


def mlem(C, sinogram, iterations: int = 20, callback=None) -> Reconstruction:
    """MLEM (Shepp and Vardi): x <- x / (C^T 1) * C^T (b / C x) from x = 1, for b >= 0. The
    Poisson negative log-likelihood in the history does not increase. callback, if given, is
    called with each iteration's Progress."""
    return _reconstruct("mlem", C, sinogram, iterations, callback)


def sirt(C, sinogram, iterations: int = 20, callback=None) -> Reconstruction:
    """SIRT with a nonnegativity projection: x <- max(0, x + D_col^-1 C^T D_row^-1 (b - C x))
    from x = 0, D the row and column sums of C."""
    return _reconstruct("sirt", C, sinogram, iterations, callback)


def cgls(C, sinogram, iterations: int = 20, callback=None) -> Reconstruction:
    """CGLS: conjugate gradients on C^T C x = C^T b from x = 0 (exact since C.T is C's exact
    transpose)."""
    return _reconstruct("cgls", C, sinogram, iterations, callback)
