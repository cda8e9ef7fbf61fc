"""shiftop.torch: shiftop operators as differentiable PyTorch operations.

F is linear, so the vector-Jacobian product of y = F x is F* g: the backward of F is F*, of F* is
F, and F*F and FF* are their own adjoints. The backward is itself an apply of this function, so
higher derivatives (torch.autograd.grad(..., create_graph=True)) work too::

    import shiftop, shiftop.torch
    op = shiftop.Operator.from_kernels(K)              # backend='cuda' for CUDA tensors
    m = torch.zeros(Nm, Nt, dtype=torch.float64, requires_grad=True)
    loss = (shiftop.torch.apply(op, m) - d).square().sum()
    loss.backward()                                    # m.grad = 2 F* (F m - d)

CPU tensors run on a CPU operator through NumPy views (no copy), CUDA tensors on a CUDA operator
through their device addresses, on the current stream (shiftop._device_arrays). Inputs that are
not float64 are cast to float64 (a real cast); the output is float64 and the gradient is returned
in the input's dtype. ``op @ x`` on a tensor that requires grad goes through the same function.

``import shiftop`` does not import PyTorch; this module does.
"""

from __future__ import annotations

import contextlib

import torch

from . import _device_arrays

__all__ = ["apply", "OperatorModule"]

_ACTIONS = ("F", "Fadj", "FadjF", "FFadj")
_ADJOINT = {"F": "Fadj", "Fadj": "F", "FadjF": "FadjF", "FFadj": "FFadj"}


class _OperatorFunction(torch.autograd.Function):
    """y = op(F) x with backward x_grad = op(F)* y_grad (F* for F, F for F*, itself for F*F, FF*)."""

    @staticmethod
    def forward(ctx, x, plan, action, device, lock):
        ctx.plan, ctx.action, ctx.device, ctx.lock = plan, action, device, lock
        ctx.input_dtype = x.dtype
        # The operator's lock: the backward runs on autograd's threads, maybe while another
        # thread applies the same operator (the plan's workspaces serve one apply at a time).
        with lock if lock is not None else contextlib.nullcontext():
            return _device_arrays._torch_apply_no_grad(plan, action, x, None, device)

    @staticmethod
    def backward(ctx, grad):
        # Through apply (not the no-grad path), so that the backward is differentiable as well.
        x_grad = _OperatorFunction.apply(grad, ctx.plan, _ADJOINT[ctx.action], ctx.device,
                                         ctx.lock)
        return x_grad.to(ctx.input_dtype), None, None, None, None


def _differentiable_apply(plan, action, x, device, lock):
    return _OperatorFunction.apply(x, plan, action, device, lock)


def _plan_device_and_lock(op):
    """The plan of a shiftop.Operator, the CUDA device it was made on (None on the CPU) and the
    operator's lock."""
    from .operator import Operator

    if not isinstance(op, Operator):
        raise TypeError(f"op must be a shiftop.Operator, got {type(op).__name__}")
    return op._plan, op.device, op._lock


def apply(op, x: torch.Tensor, which: str = "F") -> torch.Tensor:
    """which(F) x for a tensor x of shape (blocks, Nt) or (nrhs, blocks, Nt), differentiable in x.

    op: a shiftop.Operator (CPU tensors need a CPU operator, CUDA tensors a CUDA operator on
        their GPU). which: 'F', 'Fadj' (F*), 'FadjF' (F*F) or 'FFadj' (FF*).
    """
    if which not in _ACTIONS:
        raise ValueError(f"which {which!r}: expected one of 'F', 'Fadj', 'FadjF', 'FFadj'")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    plan, device, lock = _plan_device_and_lock(op)
    return _OperatorFunction.apply(x, plan, which, device, lock)


class OperatorModule(torch.nn.Module):
    """which(F) as a torch.nn.Module without trainable parameters (F is fixed): a layer that
    maps (blocks, Nt) or (nrhs, blocks, Nt) tensors and passes gradients to its input."""

    def __init__(self, op, which: str = "F"):
        super().__init__()
        if which not in _ACTIONS:
            raise ValueError(f"which {which!r}: expected one of 'F', 'Fadj', 'FadjF', 'FFadj'")
        _plan_device_and_lock(op)  # refuses anything but an Operator now, not at the first forward
        self.op = op
        self.which = which

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return apply(self.op, x, self.which)

    def extra_repr(self) -> str:
        nd, nm, nt = self.op.kernel_shape
        return f"which={self.which!r}, (Nd, Nm, Nt)=({nd}, {nm}, {nt}), backend={self.op.backend!r}"
