"""Where a call that takes NumPy arrays, PyTorch tensors or CuPy arrays computes: on the CPU, or
on a GPU (a device array's own, or the one `device` names), from the caller's `backend` and
`device` (shiftop.svd, shiftop.spectrum)."""

from __future__ import annotations

import operator

from . import _device_arrays

BACKENDS = (None, "cpu", "cuda")


def gpu_of(x):
    """The CUDA device index of a PyTorch CUDA tensor or a CuPy array; None for anything else."""
    library = _device_arrays.library_of(x)
    if library == "cupy":
        return x.device.id
    if library == "torch" and x.device.type == "cuda":
        return x.device.index
    return None


def placement(x, name, backend, device):
    """('cpu', None) or ('cuda', the GPU's index) for x as backend and device ask: a device array
    computes on its own GPU, anything else on the CPU unless backend='cuda' (then on GPU `device`,
    0 by default)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: expected None, 'cpu' or 'cuda'")
    if device is not None:
        if isinstance(device, bool) or operator.index(device) < 0:
            raise ValueError(f"device must be None or a CUDA device index >= 0, got {device!r}")
        device = operator.index(device)
    gpu = gpu_of(x)
    if gpu is not None:
        what = "a CuPy array" if _device_arrays.library_of(x) == "cupy" else "a CUDA tensor"
        if backend == "cpu":
            raise TypeError(f"{name} is {what} on GPU {gpu}: backend='cpu' computes on NumPy "
                            "arrays; copy it to the host first, or leave backend=None to compute "
                            "on its GPU")
        if device is not None and device != gpu:
            raise ValueError(f"{name} is on GPU {gpu} but device={device}: a device array is "
                             "computed on its own GPU; move it there or leave device=None")
        return "cuda", gpu
    if backend == "cuda":
        if _device_arrays.library_of(x) == "torch":
            raise TypeError(f"{name} is a CPU tensor: backend='cuda' takes CUDA tensors (computed "
                            "on their GPU) or NumPy arrays (copied to GPU `device` and back); "
                            f"pass {name}.cuda() or {name}.numpy()")
        return "cuda", 0 if device is None else device
    if device is not None:
        raise ValueError(f"device={device} needs backend='cuda' (or {name} on a GPU)")
    return "cpu", None


def on_host(x):
    """x itself, or a NumPy copy of a PyTorch tensor or CuPy array."""
    library = _device_arrays.library_of(x)
    if library == "torch":
        return x.detach().cpu().numpy()
    if library == "cupy":
        return x.get()
    return x
