#!/usr/bin/env python3
"""What a PyTorch user would write for F and F* on one GPU: rfft of the zero-padded series,
a batched matmul with F^ (frequency-major, complex), irfft and crop. F* uses F^.mH, the natural
spelling. With --nrhs n the n vectors go through at once: rfft of (n, blocks, nt), one batched
matmul over the frequencies with the n vectors as the columns of its right-hand side, irfft.
Prints one JSON object per (op, dtype): median time of CUDA-event-timed repetitions, also per
vector; a case that runs out of device memory prints its error instead.
Usage: bench/torch_btt.py --nd 100 --nm 5000 --nt 1000 [--nrhs 1] [--reps 20]
"""
import argparse
import json

import torch


def pipeline(fhat, op, nt):
    """The apply of F (op "F") or F* on a batch v of shape (nrhs, blocks, nt)."""
    def apply(v):
        spec = torch.fft.rfft(v, n=2 * nt, dim=-1)           # (nrhs, blocks, nt+1)
        x = spec.permute(2, 1, 0)                            # (nt+1, blocks, nrhs)
        y = torch.matmul(fhat if op == "F" else fhat.mH, x)  # (nt+1, out, nrhs)
        return torch.fft.irfft(y.permute(2, 1, 0), n=2 * nt, dim=-1)[..., :nt]
    return apply


def median_ms(fn, x, reps, warmup=3):
    """Median milliseconds of fn(x) over `reps` CUDA-event-timed calls after `warmup` calls."""
    for _ in range(warmup):
        fn(x)
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(x)
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--nd", type=int, default=100)
    p.add_argument("--nm", type=int, default=5000)
    p.add_argument("--nt", type=int, default=1000)
    p.add_argument("--nrhs", type=int, default=1)
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    nw = a.nt + 1
    for real, cplx in ((torch.float64, torch.complex128), (torch.float32, torch.complex64)):
        fhat = torch.randn(nw, a.nd, a.nm, dtype=cplx, device="cuda")
        for op in ("F", "Fadj"):
            blocks = a.nm if op == "F" else a.nd
            entry = {"op": op, "dtype": str(real).replace("torch.", ""), "nd": a.nd, "nm": a.nm,
                     "nt": a.nt, "nrhs": a.nrhs,
                     "fhat_bytes": fhat.numel() * fhat.element_size(), "torch": torch.__version__}
            try:
                x = torch.randn(a.nrhs, blocks, a.nt, dtype=real, device="cuda")
                ms = median_ms(pipeline(fhat, op, a.nt), x, a.reps)
                entry.update(median_ms=ms, per_vector_ms=ms / a.nrhs)
            except torch.cuda.OutOfMemoryError as e:
                entry["error"] = "out of memory: " + str(e).splitlines()[0]
            x = None
            torch.cuda.empty_cache()
            print(json.dumps(entry), flush=True)
        del fhat
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
