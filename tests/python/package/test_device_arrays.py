"""PyTorch and CuPy device arrays through shiftop.Operator (shiftop._device_arrays): zero copy by
pointer identity (the addresses the plan receives are the caller's tensors'), results equal to
the CPU operator's, real casts of float32, C-order copies of strided inputs, ordering on the
caller's current (non-default) stream, and the refusals (wrong device, wrong out).

The tests marked gpu run on the device machine only (`-m gpu`) and fail there when PyTorch, CuPy
or a GPU is missing. The others need neither."""
import numpy as np
import pytest

import shiftop
from shiftop import _device_arrays

ACTIONS = ("F", "Fadj", "FadjF", "FFadj")
SHAPE = (3, 5, 40)  # Nd, Nm, Nt


def blocks(action):
    nd, nm, _ = SHAPE
    return nm if action in ("F", "FadjF") else nd


class RecordingPlan:
    """The operator's plan, recording the addresses apply_device is given."""

    def __init__(self, plan):
        self._plan = plan
        self.calls = []

    def __getattr__(self, name):
        return getattr(self._plan, name)

    def apply_device(self, op, x, y, nrhs, stream, device):
        self.calls.append((op, x, y, nrhs, stream, device))
        return self._plan.apply_device(op, x, y, nrhs, stream, device)


@pytest.fixture
def kernels(rng):
    return rng.standard_normal(SHAPE)


@pytest.fixture
def cpu_op(kernels):
    return shiftop.Operator.from_kernels(kernels, planning="estimate")


@pytest.fixture
def gpu_op(kernels):
    require_gpu()  # fails (never skips) without PyTorch or a GPU
    op = shiftop.Operator.from_kernels(kernels, backend="cuda", device=0, planning="estimate")
    op._plan = RecordingPlan(op._plan)
    return op


def require_gpu():
    import torch  # an ImportError fails the device run

    assert torch.cuda.is_available(), "the gpu tests need a CUDA device"


def close(a, b, tol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.abs(a - b).max() <= tol * np.abs(b).max(), np.abs(a - b).max() / np.abs(b).max()


# ---- without a GPU -------------------------------------------------------------------------------

def test_only_torch_and_cupy_arrays_are_device_arrays(cpu_op):
    assert _device_arrays.library_of(np.zeros(3)) is None
    with pytest.raises(TypeError, match="expected a NumPy array, a PyTorch tensor or a CuPy array"):
        _device_arrays.apply(cpu_op._plan, "F", [[1.0]])


@pytest.mark.parametrize("action", ACTIONS)
def test_shapes_name_the_expected_shapes(cpu_op, action):
    nt = SHAPE[2]
    assert _device_arrays.shapes(cpu_op._plan, action, (blocks(action), nt))[0] == 1
    assert _device_arrays.shapes(cpu_op._plan, action, (4, blocks(action), nt))[0] == 4
    with pytest.raises(ValueError, match=rf"\({blocks(action)}, {nt}\) or \(nrhs, "):
        _device_arrays.shapes(cpu_op._plan, action, (blocks(action) + 1, nt))


# ---- PyTorch on the GPU --------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("nrhs", [None, 1, 17])  # 17: two groups of max_rhs = 16
def test_torch_zero_copy_in_place_equals_cpu(gpu_op, cpu_op, rng, action, nrhs):
    import torch

    shape = (blocks(action), SHAPE[2]) if nrhs is None else (nrhs, blocks(action), SHAPE[2])
    host = rng.standard_normal(shape)
    x = torch.from_numpy(host).cuda()
    want = cpu_op.apply(host, action)
    out = torch.full(want.shape, float("nan"), dtype=torch.float64, device="cuda")
    y = gpu_op.apply(x, action, out=out)
    assert y is out
    (op_name, x_ptr, y_ptr, count, _, device) = gpu_op._plan.calls[-1]
    # Pointer identity: the plan read x's memory and wrote out's, nothing in between.
    assert (op_name, x_ptr, y_ptr, count, device) == (action, x.data_ptr(), out.data_ptr(),
                                                      nrhs or 1, 0)
    close(out.cpu().numpy(), want)


@pytest.mark.gpu
def test_torch_output_is_a_float64_tensor_on_the_inputs_gpu(gpu_op, cpu_op, rng):
    import torch

    host = rng.standard_normal((SHAPE[1], SHAPE[2]))
    y = gpu_op @ torch.from_numpy(host).cuda()
    assert isinstance(y, torch.Tensor) and y.device == torch.device("cuda", 0)
    assert y.dtype == torch.float64 and y.shape == (SHAPE[0], SHAPE[2])
    close(y.cpu().numpy(), cpu_op @ host)
    d = torch.from_numpy(rng.standard_normal((2, SHAPE[0], SHAPE[2]))).cuda()
    close((gpu_op.H @ d).cpu().numpy(), cpu_op.H @ d.cpu().numpy())


@pytest.mark.gpu
def test_torch_float32_is_cast_not_reinterpreted(gpu_op, cpu_op, rng):
    import torch

    x32 = torch.from_numpy(rng.standard_normal((2, SHAPE[1], SHAPE[2]))).float().cuda()
    y = gpu_op @ x32
    assert gpu_op._plan.calls[-1][1] != x32.data_ptr()  # a float64 copy, not x32's memory
    assert y.dtype == torch.float64
    close(y.cpu().numpy(), cpu_op @ x32.cpu().double().numpy())
    # Integers too (a real cast).
    xi = torch.arange(SHAPE[1] * SHAPE[2], device="cuda").reshape(SHAPE[1], SHAPE[2])
    close((gpu_op @ xi).cpu().numpy(), cpu_op @ xi.cpu().double().numpy())


@pytest.mark.gpu
def test_torch_strided_input_is_copied_to_c_order(gpu_op, cpu_op, rng):
    import torch

    host = rng.standard_normal((SHAPE[2], SHAPE[1]))
    xt = torch.from_numpy(host).cuda().T  # (Nm, Nt), not contiguous
    assert not xt.is_contiguous()
    close((gpu_op @ xt).cpu().numpy(), cpu_op @ host.T)
    every_other = torch.from_numpy(rng.standard_normal((SHAPE[1], 2 * SHAPE[2]))).cuda()[:, ::2]
    close((gpu_op @ every_other).cpu().numpy(), cpu_op @ every_other.cpu().numpy())


@pytest.mark.gpu
def test_torch_apply_is_ordered_on_the_current_stream(gpu_op, cpu_op, rng):
    import torch

    host = rng.standard_normal((4, SHAPE[1], SHAPE[2]))
    source = torch.from_numpy(host).cuda()
    x = torch.full_like(source, float("nan"))
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(50_000_000)  # ~tens of ms of GPU time queued before x is filled
        x.copy_(source)
        y = gpu_op @ x  # must wait for the copy on `stream`
        z = y * 2.0  # and this, on `stream`, for the apply
    assert gpu_op._plan.calls[-1][4] == stream.cuda_stream
    stream.synchronize()  # the caller's only synchronisation
    close(z.cpu().numpy(), 2.0 * (cpu_op @ host))


@pytest.mark.gpu
def test_torch_wrong_device_and_wrong_out_are_refused(gpu_op, cpu_op, rng):
    import torch

    host = rng.standard_normal((SHAPE[1], SHAPE[2]))
    with pytest.raises(ValueError, match="x is a CPU tensor but the operator runs on a GPU"):
        gpu_op @ torch.from_numpy(host)
    with pytest.raises(ValueError, match="x is on GPU 0 but the operator runs on the CPU"):
        cpu_op @ torch.from_numpy(host).cuda()
    if torch.cuda.device_count() > 1:
        with pytest.raises(ValueError, match="x is on GPU 1, the operator on GPU 0"):
            gpu_op @ torch.from_numpy(host).to("cuda:1")
    x = torch.from_numpy(host).cuda()
    with pytest.raises(TypeError, match="expected torch.float64"):
        gpu_op.apply(x, out=torch.empty((SHAPE[0], SHAPE[2]), dtype=torch.float32, device="cuda"))
    with pytest.raises(ValueError, match="must have shape"):
        gpu_op.apply(x, out=torch.empty((SHAPE[0] + 1, SHAPE[2]), dtype=torch.float64,
                                        device="cuda"))
    with pytest.raises(ValueError, match="expected both on one device"):
        gpu_op.apply(x, out=torch.empty((SHAPE[0], SHAPE[2]), dtype=torch.float64))
    with pytest.raises(ValueError, match="contiguous"):
        gpu_op.apply(x, out=torch.empty((SHAPE[2], SHAPE[0]), dtype=torch.float64,
                                        device="cuda").T)
    with pytest.raises(TypeError, match="complex"):
        gpu_op @ x.to(torch.complex128)


@pytest.mark.gpu
def test_plan_refuses_pointers_that_are_not_its_gpus_memory(gpu_op):
    import torch

    plan = gpu_op._plan._plan
    nd, nm, nt = SHAPE
    x = torch.zeros((nm, nt), dtype=torch.float64, device="cuda")
    y = torch.zeros((nd, nt), dtype=torch.float64, device="cuda")
    host = np.zeros((nm, nt))
    with pytest.raises(shiftop._core.Error, match="the input is not CUDA device memory"):
        plan.apply_device("F", host.ctypes.data, y.data_ptr(), 1, 0, 0)
    # The same device memory, claimed to be the plan's on another GPU index.
    with pytest.raises(shiftop._core.Error, match="the input is on GPU 0, the operator's plan on GPU 3"):
        plan.apply_device("F", x.data_ptr(), y.data_ptr(), 1, 0, 3)


# ---- CuPy on the GPU -----------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("action", ACTIONS)
def test_cupy_zero_copy_in_place_equals_cpu(gpu_op, cpu_op, rng, action):
    import cupy

    host = rng.standard_normal((3, blocks(action), SHAPE[2]))
    x = cupy.asarray(host)
    want = cpu_op.apply(host, action)
    out = cupy.full(want.shape, cupy.nan)
    assert gpu_op.apply(x, action, out=out) is out
    _, x_ptr, y_ptr, _, _, _ = gpu_op._plan.calls[-1]
    assert (x_ptr, y_ptr) == (x.data.ptr, out.data.ptr)
    close(cupy.asnumpy(out), want)


@pytest.mark.gpu
def test_cupy_cast_strides_and_stream(gpu_op, cpu_op, rng):
    import cupy

    host = rng.standard_normal((SHAPE[1], SHAPE[2]))
    y = gpu_op @ cupy.asarray(host, dtype=cupy.float32)
    assert isinstance(y, cupy.ndarray) and y.dtype == cupy.float64
    close(cupy.asnumpy(y), cpu_op @ host.astype(np.float32).astype(np.float64))
    close(cupy.asnumpy(gpu_op @ cupy.asarray(host.T).T), cpu_op @ host)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(host) * 3.0
        z = (gpu_op @ x) + 0.0
    assert gpu_op._plan.calls[-1][4] == stream.ptr
    stream.synchronize()
    close(cupy.asnumpy(z), cpu_op @ (3.0 * host))
    with pytest.raises(ValueError, match="but the operator runs on the CPU"):
        cpu_op @ cupy.asarray(host)
