"""PyTorch tensors and CuPy arrays through a shiftop plan, without copies where none is needed.

shiftop.Operator hands every array that is not a NumPy array to :func:`apply`:

* a CUDA tensor or CuPy array on a CUDA plan goes to the plan by its device address (zero copy):
  the output is allocated by the input's library on the input's GPU, and the apply is queued on
  that library's *current stream* (``torch.cuda.current_stream(device)``,
  ``cupy.cuda.get_current_stream()``). shiftop orders its own stream after the work already
  queued there and that stream after the apply (Plan::apply_device), so a caller synchronises
  exactly as after one of its library's own kernels. Nothing here relies on DLPack's import-time
  synchronisation (nanobind imports DLPack tensors without one), and nothing waits on the host;
* a CPU tensor on a CPU plan goes through NumPy views of the same memory (``Tensor.numpy()``,
  ``torch.from_numpy``), again without a copy.

Inputs that are not float64 are converted by a real cast (float32 -> float64, integers -> float64;
never a reinterpretation of the bits); inputs that are not C-contiguous (a transpose, a slice with
a step) are copied to C order first. Both copies are new arrays of the input's library on its
device. Complex and boolean inputs are refused. ``out``, when given, is written in place and must
already be what the plan writes: float64, C-contiguous, the output's shape, on the input's device.

Tensors that require gradients go through shiftop.torch's autograd function, so that ``op @ x``
is differentiable (backward of F is F*).

PyTorch and CuPy are never imported here: an object can only be one of their arrays when the
library is already loaded (sys.modules).
"""

from __future__ import annotations

import sys

_BLOCKS = {"F": (1, 0), "Fadj": (0, 1), "FadjF": (1, 1), "FFadj": (0, 0)}


def library_of(x) -> str | None:
    """'torch' for a PyTorch tensor, 'cupy' for a CuPy array, None for anything else."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return "torch"
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return "cupy"
    return None


def shapes(plan, op: str, x_shape) -> tuple[int, tuple[int, ...]]:
    """(nrhs, output shape) of op on an input of shape x_shape: (blocks, Nt) or (nrhs, blocks,
    Nt). ValueError naming the expected shapes otherwise."""
    nd, nm, nt = plan.shape
    blocks_in = (nd, nm)[_BLOCKS[op][0]]
    blocks_out = (nd, nm)[_BLOCKS[op][1]]
    x_shape = tuple(x_shape)
    if len(x_shape) == 2 and x_shape == (blocks_in, nt):
        return 1, (blocks_out, nt)
    if len(x_shape) == 3 and x_shape[1:] == (blocks_in, nt):
        return x_shape[0], (x_shape[0], blocks_out, nt)
    raise ValueError(
        f"input of {op} must have shape ({blocks_in}, {nt}) or (nrhs, {blocks_in}, {nt}), "
        f"got {x_shape}"
    )


def apply(plan, op: str, x, out=None, *, device: int | None = None, lock=None):
    """op(F) x for a PyTorch tensor or CuPy array x, returned as the same library's array.

    plan: the operator's shiftop._core.Plan; op: 'F', 'Fadj', 'FadjF' or 'FFadj'.
    x: (blocks, Nt) or (nrhs, blocks, Nt). float32 and integer inputs are cast to float64 (a real
        cast, into a new array); non-contiguous inputs are copied to C order.
    out: optional float64 C-contiguous array of the output's shape, same library and device as
        x, written in place (no copy) and returned.
    device: the CUDA device index the plan was made on (shiftop.Operator.device; None: GPU 0
        where it is the only one visible, with several it must be given). A CUDA plan only takes arrays on that GPU (a
        wrong GPU, or a CPU tensor on a CUDA plan, raises ValueError).
    The result of a CUDA apply is ready in stream order on the caller's current stream: read it
    with the library's own operations, or synchronise that stream before handing the memory to
    another stream or to the host by other means.
    """
    library = library_of(x)
    if library is None:
        raise TypeError(
            f"x of type {type(x).__module__}.{type(x).__name__}: expected a NumPy array, a "
            "PyTorch tensor or a CuPy array"
        )
    if library == "torch":
        return _apply_torch(plan, op, x, out, device, lock)
    return _apply_cupy(plan, op, x, out, device)


def _plan_device(plan, device, where: str, visible_devices: int) -> int:
    """The plan's CUDA device, after checking that the plan runs on a GPU at all (the array is on
    `where`, 'GPU k'). With one visible GPU it can only be that one (index 0)."""
    if plan.backend != "cuda":
        raise ValueError(
            f"x is on {where} but the operator runs on the CPU: pass a NumPy array or a CPU "
            "tensor, or make the operator with backend='cuda'"
        )
    if device is not None:
        return device
    if visible_devices == 1:
        return 0
    raise ValueError(
        f"device: {visible_devices} GPUs are visible and the operator's is not known: pass "
        "device=<the index the operator was made with>"
    )


def _apply_torch(plan, op, x, out, device, lock):
    import torch

    if x.requires_grad and torch.is_grad_enabled():
        if out is not None:
            raise ValueError(
                "out= cannot be used with a tensor that requires grad (an in-place output is not "
                "differentiable): leave out=None, or wrap the call in torch.no_grad()"
            )
        from .torch import _differentiable_apply

        return _differentiable_apply(plan, op, x, device, lock)
    return _torch_apply_no_grad(plan, op, x, out, device)


def _torch_apply_no_grad(plan, op, x, out, device):
    """The torch path without autograd (also what shiftop.torch's forward and backward call)."""
    import torch

    if x.is_complex() or x.dtype == torch.bool:
        raise TypeError(f"x has dtype {x.dtype}: expected a real numeric tensor (float64)")
    nrhs, out_shape = shapes(plan, op, x.shape)
    if x.device.type == "cpu":
        if plan.backend != "cpu":
            raise ValueError(
                "x is a CPU tensor but the operator runs on a GPU: move it there with "
                "x.to('cuda'), or make the operator with backend='cpu'"
            )
    elif x.device.type == "cuda":
        plan_device = _plan_device(
            plan, device, f"GPU {x.device.index}", torch.cuda.device_count()
        )
        if x.device.index != plan_device:
            raise ValueError(
                f"x is on GPU {x.device.index}, the operator on GPU {plan_device}: move it with "
                f"x.to('cuda:{plan_device}')"
            )
    else:
        raise ValueError(f"x is on device '{x.device}': expected a CPU or a CUDA tensor")
    x = x.detach().to(torch.float64).contiguous()  # a real cast and a C-order copy, if needed
    y = _torch_output(out, out_shape, op, x.device)
    if nrhs == 0:
        return y
    if x.device.type == "cpu":
        plan.apply(op, x.numpy(), y.numpy(), nrhs)  # NumPy views of the tensors' memory
    else:
        stream = torch.cuda.current_stream(x.device).cuda_stream
        plan.apply_device(op, x.data_ptr(), y.data_ptr(), nrhs, stream, x.device.index)
    return y


def _torch_output(out, shape, op, device):
    import torch

    if out is None:
        return torch.empty(shape, dtype=torch.float64, device=device)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"out must be a PyTorch tensor like x, got {type(out).__name__}")
    if out.dtype != torch.float64:
        raise TypeError(f"out has dtype {out.dtype}: expected torch.float64")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out of {op} must have shape {tuple(shape)}, got {tuple(out.shape)}")
    if out.device != device:
        raise ValueError(f"out is on {out.device}, x on {device}: expected both on one device")
    if not out.is_contiguous():
        raise ValueError("out must be contiguous (it is written in place)")
    if out.requires_grad:
        raise ValueError("out requires grad: an in-place output is not differentiable")
    return out


def _apply_cupy(plan, op, x, out, device):
    import cupy

    if x.dtype.kind not in "fiu":
        raise TypeError(f"x has dtype {x.dtype}: expected a real numeric array (float64)")
    nrhs, out_shape = shapes(plan, op, x.shape)
    plan_device = _plan_device(
        plan, device, f"GPU {x.device.id}", cupy.cuda.runtime.getDeviceCount()
    )
    if x.device.id != plan_device:
        raise ValueError(
            f"x is on GPU {x.device.id}, the operator on GPU {plan_device}: move it with "
            f"cupy.asarray(x) under cupy.cuda.Device({plan_device})"
        )
    with x.device:
        x = cupy.ascontiguousarray(x, dtype=cupy.float64)  # a real cast and a C-order copy
        y = _cupy_output(out, out_shape, op, x.device)
        if nrhs == 0:
            return y
        stream = cupy.cuda.get_current_stream().ptr
    plan.apply_device(op, x.data.ptr, y.data.ptr, nrhs, stream, plan_device)
    return y


def _cupy_output(out, shape, op, device):
    import cupy

    if out is None:
        return cupy.empty(shape, dtype=cupy.float64)
    if not isinstance(out, cupy.ndarray):
        raise TypeError(f"out must be a CuPy array like x, got {type(out).__name__}")
    if out.dtype != cupy.float64:
        raise TypeError(f"out has dtype {out.dtype}: expected float64")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out of {op} must have shape {tuple(shape)}, got {tuple(out.shape)}")
    if out.device.id != device.id:
        raise ValueError(f"out is on GPU {out.device.id}, x on GPU {device.id}")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous (it is written in place)")
    return out
