"""Argument checks the modules share: finite arrays and kernel arrays (Nd, Nm, Nt), with one-line
messages that name the argument and the first offending entry."""

from __future__ import annotations

import numpy as np


def first_nonfinite(a):
    """(index tuple, value) of the first NaN or infinity of the NumPy array a (which has one)."""
    where = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
    return where, a[where]


def require_finite(name, a, why):
    """ValueError "name[i, j, ...] is nan: why" unless every entry of a is finite."""
    if not np.isfinite(a).all():
        where, value = first_nonfinite(a)
        raise ValueError(f"{name}{list(where)} is {value}: {why}")


def kernel_array(name, a):
    """a as C-contiguous float64 kernels (Nd, Nm, Nt), none of the sizes 0: real numbers and
    booleans are cast, anything else is refused (TypeError)."""
    a = np.asarray(a)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} has dtype {a.dtype}: expected real kernels (float64)")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 3 or a.size == 0:
        raise ValueError(f"{name} must have shape (Nd, Nm, Nt) with no empty size, "
                         f"got shape {a.shape}")
    return a
