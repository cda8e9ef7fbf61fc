"""shiftop: fast linear algebra with shift-invariant operators, in four families:

* block Toeplitz operators (:class:`Operator`): F, F*, F*F and FF* through the FFT of the
  block-circulant embedding, in FP64 or mixed precision, on CPUs and GPUs; their spectrum
  (:func:`spectrum`);
* sparse block-circulant operators (:class:`CirculantOperator`) and CT reconstruction
  (:mod:`shiftop.ct`);
* the one-sided Jacobi SVD and hyperbolic SVD (:func:`svd`, a drop-in for numpy.linalg.svd with
  high relative accuracy) and the generalized SVD (:func:`gsvd`);
* inverse problems: Gaussian noise and priors, the Hessian and the MAP point (:func:`map_point`,
  :class:`DataSpaceHessian`), regularisation paths (:func:`regpath`).

A block Toeplitz operator, for example::

    import numpy as np, shiftop
    op = shiftop.Operator.from_kernels(np.random.rand(3, 4, 100))
    d = op @ np.random.rand(4, 100)

Bad inputs and options raise ValueError or TypeError; those found by the compiled core raise
shiftop.Error, a ValueError. Every `threads` argument is None (OpenMP's default) or a count from 1
to the hardware threads this process may run on.
"""

from ._version import __version__
from ._core import Error
from .operator import Operator
from .pair import OperatorPair
from . import models
from .inverse import (DiagonalPrior, GaussianNoise, Hessian, KernelPrior, MapResult,
                      TimeSmoothingPrior, map_point)
from .data_space import DataSpaceHessian
from ._progress import SweepProgress
from .svd import svd
from .spectrum import Spectrum, spectrum
from .circ import CirculantOperator, read_circulant
from . import ct
from .gsvd import GsvdResult, gsvd
from .regpath import RegPath, regpath
from .tune import TunedOp, TuneResult, tune

__all__ = [
    "Operator", "OperatorPair", "GaussianNoise", "DiagonalPrior", "TimeSmoothingPrior",
    "KernelPrior", "Hessian", "MapResult", "map_point", "DataSpaceHessian", "models",
    "Error", "__version__", "svd", "spectrum", "Spectrum", "CirculantOperator", "read_circulant",
    "ct", "gsvd", "GsvdResult", "regpath", "RegPath", "SweepProgress", "tune", "TuneResult",
    "TunedOp",
]
