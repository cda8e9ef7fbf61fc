#!/usr/bin/env python3
"""cuFFT's batched real FFTs at the lengths a circulant embedding may use (issue 4): 2*Nt - 1,
2*Nt, the next power of two and a few smooth lengths in between, for the batch sizes of the two
benchmark shapes, FP64 and FP32. This probe decided the CUDA plan's candidates for the FFT length
(PlanOptions::fft_length): on an H100, 40000 series of length 4096 transform in half the time of
length 4000 (bench/NOTES.md). It uses CuPy, which the device machine has; it is not a dependency of
shiftop. CuPy's irfft copies its input first (cuFFT's C2R overwrites it), so the C2R times include
a copy. Usage (on the device machine): OUT=dir python3 bench/fft_lengths.py; writes
$OUT/fft_lengths.json and prints one JSON line per case.
"""
import json
import os

import cupy as cp


def best_ms(f, reps=10):
    f()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(reps):
        start.record()
        f()
        stop.record()
        stop.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, stop))
    return best


def main():
    a = cp.empty(2**30, dtype=cp.uint8)
    b = cp.empty_like(a)
    copy_gbs = 2 * 2**30 / best_ms(lambda: cp.copyto(b, a)) / 1e6
    del a, b
    print("device-to-device copy GB/s", copy_gbs)
    results = []
    for batch, nt in ((40000, 2000), (5000, 1000), (100, 1000), (7, 2000)):
        # 2Nt - 1, 2Nt, smooth lengths (2^a 3^b 5^c 7^d) up to the next power of two, and one beyond
        smooth = {2000: (2016, 2025, 2048, 2058), 4000: (4032, 4050, 4096, 4116)}[2 * nt]
        for length in (2 * nt - 1, 2 * nt, *smooth):
            for dtype in (cp.float64, cp.float32):
                x = cp.random.rand(batch, length).astype(dtype)
                spectra = cp.fft.rfft(x, axis=1)
                r2c = best_ms(lambda: cp.fft.rfft(x, axis=1))
                c2r = best_ms(lambda: cp.fft.irfft(spectra, n=length, axis=1))
                moved = x.nbytes + spectra.nbytes
                r = dict(batch=batch, nt=nt, length=length, dtype=dtype.__name__, r2c_ms=r2c,
                         c2r_ms=c2r, bytes=moved, r2c_fraction_of_copy=moved / r2c / 1e6 / copy_gbs,
                         c2r_fraction_of_copy=moved / c2r / 1e6 / copy_gbs)
                print(json.dumps(r), flush=True)
                results.append(r)
                del x, spectra
    with open(os.path.join(os.environ.get("OUT", "."), "fft_lengths.json"), "w") as f:
        json.dump({"copy_GBs": copy_gbs, "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
