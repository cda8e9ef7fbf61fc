"""One interface over PyTorch CUDA tensors and CuPy arrays for the calls that compute on a device
array in place of a NumPy array (shiftop.svd on a GPU): casts, allocation, addresses, the current
stream, finiteness, conjugation and copies to and from the host, each in the array's own library
on the array's GPU. PyTorch and CuPy are imported only when an array of theirs is given.
"""

from __future__ import annotations

import contextlib

import numpy as np

from . import _device_arrays


def adapter(x):
    """(the adapter of x's library, the context to use it in): TorchArrays with no context, or
    CuPyArrays under x's device (CuPy allocates on its current device)."""
    if _device_arrays.library_of(x) == "torch":
        return TorchArrays(x), contextlib.nullcontext()
    arrays = CuPyArrays(x)
    return arrays, arrays.device


class TorchArrays:
    """What shiftop.svd needs of PyTorch, for a CUDA tensor x."""

    def __init__(self, x):
        import torch

        if x.requires_grad:
            raise ValueError("a requires grad: shiftop.svd is not differentiable; pass a.detach()")
        self.torch, self.device = torch, x.device
        self.dtype = str(x.dtype).removeprefix("torch.")

    def cast(self, x, dtype):
        # A lazily conjugated or negated view (x.conj(), z.conj().imag) has the unconjugated
        # values at data_ptr(): materialise it, or the core would read conj(a) or -a.
        return x.to(getattr(self.torch, dtype)).resolve_conj().resolve_neg()

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=getattr(self.torch, dtype), device=self.device)

    def c_order(self, x):
        return x.contiguous()

    def is_c_order(self, x):
        return x.is_contiguous()

    def address(self, x):
        return x.data_ptr()

    def stream(self):
        return self.torch.cuda.current_stream(self.device).cuda_stream

    def all_finite(self, x):
        return bool(self.torch.isfinite(x).all())

    def first_nonfinite(self, x):
        where = tuple(int(i) for i in self.torch.nonzero(~self.torch.isfinite(x))[0])
        return where, x[where].item()

    def conjugate_in_place(self, x):
        x.conj_physical_()

    def to_host(self, x):
        return x.resolve_conj().resolve_neg().cpu().numpy()

    def from_host(self, x):
        return self.torch.from_numpy(np.ascontiguousarray(x)).to(self.device)


class CuPyArrays:
    """What shiftop.svd needs of CuPy, for an array x (used under `with x.device`)."""

    def __init__(self, x):
        import cupy

        self.cupy, self.device = cupy, x.device
        self.dtype = x.dtype.name

    def cast(self, x, dtype):
        return x.astype(dtype, copy=False)

    def empty(self, shape, dtype):
        return self.cupy.empty(shape, dtype=dtype)

    def c_order(self, x):
        return self.cupy.ascontiguousarray(x)

    def is_c_order(self, x):
        return x.flags.c_contiguous

    def address(self, x):
        return x.data.ptr

    def stream(self):
        return self.cupy.cuda.get_current_stream().ptr

    def all_finite(self, x):
        return bool(self.cupy.isfinite(x).all())

    def first_nonfinite(self, x):
        where = tuple(int(i) for i in self.cupy.argwhere(~self.cupy.isfinite(x))[0])
        return where, x[where].item()

    def conjugate_in_place(self, x):
        self.cupy.conjugate(x, out=x)

    def to_host(self, x):
        return self.cupy.asnumpy(x)

    def from_host(self, x):
        return self.cupy.asarray(x)
