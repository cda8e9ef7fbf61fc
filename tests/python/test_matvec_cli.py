"""`shiftop matvec` on .npy files against a dense block Toeplitz product built with numpy."""
import json
import os
import subprocess

import numpy as np
import pytest

SHIFTOP = os.environ.get("SHIFTOP_BIN", "shiftop")


def dense(col, row):
    """Explicit (Nd*Nt) x (Nm*Nt) matrix, SOTI ordering; row=None means lower triangular."""
    nd, nm, nt = col.shape
    t = np.arange(nt)
    lag = t[:, None] - t[None, :]
    a = np.zeros((nd, nt, nm, nt))
    for i in range(nd):
        for j in range(nm):
            block = np.where(lag >= 0, col[i, j][np.clip(lag, 0, nt - 1)], 0.0)
            if row is not None:
                block = np.where(lag < 0, row[i, j][np.clip(-lag, 0, nt - 1)], block)
            a[i, :, j, :] = block
    return a.reshape(nd * nt, nm * nt)


def apply_dense(a, op, x):
    return {"F": lambda v: a @ v, "Fadj": lambda v: a.T @ v,
            "FadjF": lambda v: a.T @ (a @ v), "FFadj": lambda v: a @ (a.T @ v)}[op](x)


@pytest.mark.parametrize("general", [False, True])
@pytest.mark.parametrize("op", ["F", "Fadj", "FadjF", "FFadj"])
@pytest.mark.parametrize("nrhs", [None, 3])
def test_matvec_matches_dense(tmp_path, general, op, nrhs):
    rng = np.random.default_rng(5)
    nd, nm, nt = 3, 5, 7
    col = rng.standard_normal((nd, nm, nt))
    row = rng.standard_normal((nd, nm, nt)) if general else None
    if general:
        row[:, :, 0] = col[:, :, 0]
    nin = nm if op in ("F", "FadjF") else nd
    x = rng.standard_normal((nin, nt) if nrhs is None else (nrhs, nin, nt))
    np.save(tmp_path / "K.npy", col)
    np.save(tmp_path / "x.npy", x)
    cmd = [SHIFTOP, "matvec", "--operator", str(tmp_path / "K.npy"), "--input",
           str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"), "--op", op, "--json"]
    if general:
        np.save(tmp_path / "R.npy", row)
        cmd += ["--row", str(tmp_path / "R.npy")]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    assert json.loads(out.stdout)["nrhs"] == (1 if nrhs is None else nrhs)
    y = np.load(tmp_path / "y.npy")
    a = dense(col, row)
    xs = x.reshape(-1, nin * nt)
    want = np.stack([apply_dense(a, op, v) for v in xs]).reshape(y.shape)
    assert y.ndim == x.ndim
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_mixed_precision_really_rounds(tmp_path):
    rng = np.random.default_rng(6)
    col = rng.standard_normal((4, 30, 16))
    x = rng.standard_normal((30, 16))
    np.save(tmp_path / "K.npy", col)
    np.save(tmp_path / "x.npy", x)
    results = {}
    for prec in ("DDDDD", "DSSDD"):
        subprocess.run([SHIFTOP, "matvec", "--operator", str(tmp_path / "K.npy"), "--input",
                        str(tmp_path / "x.npy"), "--output", str(tmp_path / f"{prec}.npy"),
                        "--precision", prec], check=True, capture_output=True)
        results[prec] = np.load(tmp_path / f"{prec}.npy")
    want = dense(col, None) @ x.ravel()
    err64 = np.linalg.norm(results["DDDDD"].ravel() - want) / np.linalg.norm(want)
    err32 = np.linalg.norm(results["DSSDD"].ravel() - want) / np.linalg.norm(want)
    assert err64 < 1e-13
    assert 1e-9 < err32 < 1e-5
