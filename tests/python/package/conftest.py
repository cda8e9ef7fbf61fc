"""Shared fixtures of the shiftop package tests: the independent dense reference of a block
Toeplitz operator, built entry by entry from its kernels in NumPy, and random operators."""

import numpy as np
import pytest


def dense_matrix(K, first_row=None):
    """The (Nd*Nt) x (Nm*Nt) matrix of F in SOTI order: block (i, j) is the Toeplitz matrix
    T[t, s] = K[i, j, t - s] for t >= s and first_row[i, j, s - t] for s > t (0 if triangular)."""
    nd, nm, nt = K.shape
    lag = np.arange(nt)[:, None] - np.arange(nt)[None, :]
    A = np.zeros((nd, nt, nm, nt))
    for i in range(nd):
        for j in range(nm):
            block = np.where(lag >= 0, K[i, j][np.clip(lag, 0, None)], 0.0)
            if first_row is not None:
                block = np.where(lag < 0, first_row[i, j][np.clip(-lag, 0, None)], block)
            A[i, :, j, :] = block
    return A.reshape(nd * nt, nm * nt)


def dense_action(A, action):
    """The dense matrix of action 'F', 'Fadj', 'FadjF' or 'FFadj' of F = A."""
    return {"F": A, "Fadj": A.T, "FadjF": A.T @ A, "FFadj": A @ A.T}[action]


def random_general(rng, shape):
    """Kernels K and a first block row R of the same shape whose lag-0 entries agree."""
    K = rng.standard_normal(shape)
    R = rng.standard_normal(shape)
    R[:, :, 0] = K[:, :, 0]
    return K, R


def rel_err(a, b):
    """max |a - b| / max |b| (the norm of the C++ tests' eq. (6) bounds, per entry)."""
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())


@pytest.fixture
def rng():
    return np.random.default_rng(20240614)


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (run by the device check only)")
