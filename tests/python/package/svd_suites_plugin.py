"""A pytest plugin (`-p svd_suites_plugin`) that routes numpy.linalg.svd and scipy.linalg.svd to
shiftop.svd before the test modules of the installed numpy and scipy are imported, so that their
own SVD tests check shiftop's conventions; test_numpy_scipy_svd_suites.py runs them with it. Their
modules call the routed function through module attributes: numpy's tests `linalg.svd(...)` with
`from numpy import linalg`, scipy's a name bound at import (`from scipy.linalg import svd`), hence
the routing in pytest_configure, before collection imports them. Every test of the four classes
passes (numpy 2.4, scipy 1.17): none is excluded or expected to fail."""

from __future__ import annotations

import numpy as np

import shiftop

calls = 0  # shiftop.svd calls through the routing: the harness checks that the suites made some


def routed_numpy_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """numpy.linalg.svd, computed by shiftop.svd (same signature), counted."""
    global calls
    calls += 1
    return shiftop.svd(a, full_matrices, compute_uv, hermitian)


def routed_scipy_svd(a, full_matrices=True, compute_uv=True, overwrite_a=False,
                     check_finite=True, lapack_driver="gesdd"):
    """scipy.linalg.svd's signature over shiftop.svd. lapack_driver is checked as scipy checks it
    ('gesdd' or 'gesvd'; both name the same decomposition, which the Jacobi method computes
    instead); overwrite_a is a permission, and shiftop never overwrites a; check_finite=False
    lets scipy skip its check, and shiftop checks anyway (LinAlgError, a ValueError, naming the
    entry). scipy refuses sparse and masked input; it returns a plain tuple."""
    global calls
    calls += 1
    if not isinstance(lapack_driver, str):
        raise TypeError("lapack_driver must be a string")
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f'lapack_driver must be "gesdd" or "gesvd", not "{lapack_driver}"')
    if hasattr(a, "tocsr"):
        raise ValueError("sparse arrays/matrices are not supported by scipy.linalg.svd")
    if np.ma.isMaskedArray(a):
        raise ValueError("masked arrays are not supported")
    result = shiftop.svd(a, full_matrices, compute_uv)
    return tuple(result) if compute_uv else result


def pytest_configure(config):
    import numpy.linalg
    import scipy.linalg

    numpy.linalg.svd = routed_numpy_svd
    scipy.linalg.svd = routed_scipy_svd
    # Their own conftest files, which register these, are not loaded from here.
    config.addinivalue_line("markers", "slow: a slow test of numpy's or scipy's suite")
    config.addinivalue_line("markers", "xslow: a very slow test of scipy's suite")


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"shiftop.svd calls through the routing: {calls}")
