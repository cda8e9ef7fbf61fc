"""shiftop.torch: F, F*, F*F and FF* as differentiable PyTorch operations, checked by
torch.autograd.gradcheck and gradgradcheck (float64, small sizes) on CPU tensors and, marked gpu,
on CUDA tensors; gradients against the dense reference (backward of F is F*); `op @ x` on a tensor
that requires grad; the nn.Module wrapper; refusals.

PyTorch is not installed everywhere: without it the CPU tests skip, unless SHIFTOP_REQUIRE_TORCH=1
(set by the device run, where it is installed) makes them fail. The gpu tests always fail without
PyTorch or a GPU."""
import importlib.util
import os

import numpy as np
import pytest

import shiftop
from conftest import dense_matrix

HAVE_TORCH = importlib.util.find_spec("torch") is not None
requires_torch = pytest.mark.skipif(
    not HAVE_TORCH and os.environ.get("SHIFTOP_REQUIRE_TORCH") != "1",
    reason="PyTorch is not installed (SHIFTOP_REQUIRE_TORCH=1 makes this a failure)",
)
ACTIONS = ("F", "Fadj", "FadjF", "FFadj")
SHAPE = (2, 3, 6)  # Nd, Nm, Nt: gradcheck builds the full Jacobian numerically
# Central differences of a linear map have no truncation error at any step, only rounding:
# ~u*|y|/eps. The FFT-based apply rounds ~1e-15 absolute (not the exact zeros of a dense
# product), so at torch's default eps=1e-6 the numerical Jacobian is off by up to 7.6e-10
# (measured) on the structural zeros of F and F*, where atol=1e-10 is the whole tolerance;
# eps=1e-3 brings that to 6.9e-13 (measured) and keeps atol=1e-10.
GRADCHECK_EPS = 1e-3


def dense_action(K, action):
    A = dense_matrix(K)
    return {"F": A, "Fadj": A.T, "FadjF": A.T @ A, "FFadj": A @ A.T}[action]


def input_shape(action, nrhs=None):
    nd, nm, nt = SHAPE
    b = nm if action in ("F", "FadjF") else nd
    return (b, nt) if nrhs is None else (nrhs, b, nt)


def operators(K, device):
    if device == "cpu":
        return shiftop.Operator.from_kernels(K, planning="estimate")
    import torch

    assert torch.cuda.is_available(), "the gpu tests need a CUDA device"
    return shiftop.Operator.from_kernels(K, backend="cuda", device=0, planning="estimate")


def check_gradients(device, action, nrhs):
    import torch
    import shiftop.torch as st

    rng = np.random.default_rng(31)
    K = rng.standard_normal(SHAPE)
    op = operators(K, device)
    x = torch.tensor(rng.standard_normal(input_shape(action, nrhs)), device=device,
                     requires_grad=True)
    f = lambda v: st.apply(op, v, action)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x,), eps=GRADCHECK_EPS, atol=1e-10)
    assert torch.autograd.gradgradcheck(f, (x,), eps=GRADCHECK_EPS, atol=1e-10)
    # The vector-Jacobian product is the adjoint action: against the dense matrix.
    y = st.apply(op, x, action)
    g = torch.tensor(rng.standard_normal(tuple(y.shape)), device=device)
    (grad,) = torch.autograd.grad(y, x, g)
    M = dense_action(K, action)
    flat = g.detach().cpu().numpy().reshape(-1, M.shape[0])
    want = (flat @ M).reshape(grad.shape)
    err = np.abs(grad.cpu().numpy() - want).max() / np.abs(want).max()
    assert err < 1e-12, err


@requires_torch
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("nrhs", [None, 2])
def test_gradcheck_on_cpu_tensors(action, nrhs):
    check_gradients("cpu", action, nrhs)


@pytest.mark.gpu
@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("nrhs", [None, 2])
def test_gradcheck_on_cuda_tensors(action, nrhs):
    check_gradients("cuda", action, nrhs)


@requires_torch
@pytest.mark.parametrize("action", ACTIONS)
def test_jacobian_from_one_reused_grad_buffer_is_the_dense_adjoint(action):
    """The whole Jacobian row by row as gradcheck builds it: one grad tensor rewritten in place
    to each unit vector, one retained graph. Each backward must read the buffer's current
    contents (no cached or aliased grad), and equal the dense matrix's transpose."""
    import torch
    import shiftop.torch as st

    rng = np.random.default_rng(31)
    K = rng.standard_normal(SHAPE)
    op = shiftop.Operator.from_kernels(K, planning="estimate")
    x = torch.tensor(rng.standard_normal(input_shape(action)), requires_grad=True)
    y = st.apply(op, x, action)
    grad_out = torch.zeros_like(y)
    flat = grad_out.view(-1)
    rows = []
    for j in range(flat.numel()):
        flat.zero_()
        flat[j] = 1.0
        (row,) = torch.autograd.grad(y, x, grad_out, retain_graph=True)
        rows.append(row.detach().numpy().ravel().copy())
    M = dense_action(K, action)
    err = np.abs(np.array(rows) - M).max() / np.abs(M).max()
    assert err < 1e-14, err  # 2.2e-16 measured


@requires_torch
def test_matmul_on_a_tensor_that_requires_grad_is_differentiable():
    import torch

    rng = np.random.default_rng(2)
    K = rng.standard_normal(SHAPE)
    op = shiftop.Operator.from_kernels(K, planning="estimate")
    m = torch.tensor(rng.standard_normal(input_shape("F")), requires_grad=True)
    d = torch.tensor(rng.standard_normal(input_shape("Fadj")))
    loss = ((op @ m) - d).square().sum()
    loss.backward()
    A = dense_matrix(K)
    want = 2 * A.T @ (A @ m.detach().numpy().ravel() - d.numpy().ravel())
    np.testing.assert_allclose(m.grad.numpy().ravel(), want, rtol=1e-11, atol=1e-11)
    with pytest.raises(ValueError, match="out= cannot be used with a tensor that requires grad"):
        op.apply(m, out=torch.empty(input_shape("Fadj"), dtype=torch.float64))
    with torch.no_grad():
        assert (op @ m).grad_fn is None


@requires_torch
def test_float32_input_gets_a_float32_gradient_of_the_cast():
    import torch
    import shiftop.torch as st

    rng = np.random.default_rng(4)
    K = rng.standard_normal(SHAPE)
    op = shiftop.Operator.from_kernels(K, planning="estimate")
    x = torch.tensor(rng.standard_normal(input_shape("F")), dtype=torch.float32,
                     requires_grad=True)
    y = st.apply(op, x)
    assert y.dtype == torch.float64
    np.testing.assert_allclose(y.detach().numpy().ravel(),
                               dense_matrix(K) @ x.detach().double().numpy().ravel(),
                               rtol=1e-11, atol=1e-11)
    y.sum().backward()
    assert x.grad.dtype == torch.float32


@requires_torch
def test_module_wrapper_and_refusals():
    import torch
    import shiftop.torch as st

    rng = np.random.default_rng(6)
    K = rng.standard_normal(SHAPE)
    op = shiftop.Operator.from_kernels(K, planning="estimate")
    layer = st.OperatorModule(op, "Fadj")
    assert list(layer.parameters()) == []
    d = torch.tensor(rng.standard_normal(input_shape("Fadj", 3)), requires_grad=True)
    m = layer(d)
    np.testing.assert_allclose(m.detach().numpy(), op.H @ d.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    assert "which='Fadj'" in repr(layer)
    with pytest.raises(ValueError, match="which 'G'"):
        st.apply(op, d, "G")
    with pytest.raises(ValueError, match="which 'G'"):
        st.OperatorModule(op, "G")
    with pytest.raises(TypeError, match="op must be a shiftop.Operator"):
        st.OperatorModule(np.eye(3))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        st.apply(op, d.detach().numpy(), "Fadj")
    # d is (nrhs, Nd, Nt) = (3, 2, 6): F takes (Nm, Nt) = (3, 6) or (nrhs, 3, 6).
    with pytest.raises(ValueError, match=r"input of F must have shape \(3, 6\) or "
                       r"\(nrhs, 3, 6\), got \(3, 2, 6\)"):
        st.apply(op, d, "F")
