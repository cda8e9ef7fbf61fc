#!/usr/bin/env python3
"""The FFT block-Toeplitz matvec as a numpy user would write it (rfft, matmul, irfft), timed on
the same operator sizes as `shiftop bench`, for the side-by-side comparison in bench/NOTES.md.

F:  d = irfft(F^ @ rfft(pad(m)))[:Nt]            with F^ = rfft(pad(kernels)) of shape (Nt+1, Nd, Nm)
F*: m = irfft(conj(conj(d^) @ F^))[:Nt]           (the conjugate transpose without copying F^)
Prints one JSON object per operation.
"""
import argparse
import json
import os
import time

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--nd", type=int, default=20)
    p.add_argument("--nm", type=int, default=2000)
    p.add_argument("--nt", type=int, default=500)
    p.add_argument("--nrhs", type=int, default=1)
    p.add_argument("--reps", type=int, default=10)
    a = p.parse_args()
    nd, nm, nt, k = a.nd, a.nm, a.nt, a.nrhs
    rng = np.random.default_rng(1)
    kernels = rng.standard_normal((nd, nm, nt))
    t0 = time.perf_counter()
    fhat = np.ascontiguousarray(np.fft.rfft(kernels, n=2 * nt, axis=-1).transpose(2, 0, 1))
    setup = time.perf_counter() - t0
    del kernels

    def forward(m):  # m: (k, nm, nt)
        mh = np.fft.rfft(m, n=2 * nt, axis=-1)             # (k, nm, nt+1)
        dh = np.matmul(fhat, mh.transpose(2, 1, 0))        # (nt+1, nd, k)
        return np.fft.irfft(dh.transpose(2, 1, 0), n=2 * nt, axis=-1)[..., :nt]

    def adjoint(d):  # d: (k, nd, nt)
        dh = np.fft.rfft(d, n=2 * nt, axis=-1)             # (k, nd, nt+1)
        mh = np.conj(np.matmul(np.conj(dh.transpose(2, 0, 1)), fhat))  # (nt+1, k, nm)
        return np.fft.irfft(mh.transpose(1, 2, 0), n=2 * nt, axis=-1)[..., :nt]

    threads = os.environ.get("OMP_NUM_THREADS", "default")
    for name, fn, nin in (("F", forward, nm), ("Fadj", adjoint, nd)):
        x = rng.standard_normal((k, nin, nt))
        fn(x)  # warm-up
        times = []
        for _ in range(a.reps):
            t = time.perf_counter()
            fn(x)
            times.append(time.perf_counter() - t)
        print(json.dumps({"tool": "numpy", "numpy": np.__version__, "op": name, "nd": nd, "nm": nm,
                          "nt": nt, "nrhs": k, "threads": threads, "setup_ms": setup * 1e3,
                          "total_ms": float(np.median(times)) * 1e3,
                          "per_vector_ms": float(np.median(times)) * 1e3 / k}))


if __name__ == "__main__":
    main()
