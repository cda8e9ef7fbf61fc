#!/usr/bin/env python3
"""What a PyTorch user would write for F and F* on one GPU: rfft of the zero-padded series,
a batched matmul with F^ (frequency-major, complex), irfft and crop. F* uses F^.mH, the natural
spelling. Prints one JSON object per (op, dtype): median time of CUDA-event-timed repetitions.
Usage: bench/torch_btt.py --nd 100 --nm 5000 --nt 1000 [--reps 20]
"""
import argparse
import json

import torch


def pipeline(fhat, op, nt):
    def apply(v):
        spec = torch.fft.rfft(v, n=2 * nt, dim=-1)           # (blocks, nt+1)
        x = spec.transpose(0, 1).unsqueeze(-1)               # (nt+1, blocks, 1)
        y = torch.matmul(fhat if op == "F" else fhat.mH, x)  # (nt+1, out, 1)
        return torch.fft.irfft(y.squeeze(-1).transpose(0, 1), n=2 * nt, dim=-1)[:, :nt]
    return apply


def median_ms(fn, x, reps, warmup=3):
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
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    nw = a.nt + 1
    for real, cplx in ((torch.float64, torch.complex128), (torch.float32, torch.complex64)):
        fhat = torch.randn(nw, a.nd, a.nm, dtype=cplx, device="cuda")
        for op in ("F", "Fadj"):
            blocks = a.nm if op == "F" else a.nd
            x = torch.randn(blocks, a.nt, dtype=real, device="cuda")
            ms = median_ms(pipeline(fhat, op, a.nt), x, a.reps)
            print(json.dumps({"op": op, "dtype": str(real).replace("torch.", ""), "nd": a.nd,
                              "nm": a.nm, "nt": a.nt, "median_ms": ms,
                              "fhat_bytes": fhat.numel() * fhat.element_size(),
                              "torch": torch.__version__}), flush=True)
        del fhat
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
