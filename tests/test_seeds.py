"""The seed behaviours (SEEDS.md: "Tensors and NumPy", "Devices", "Autograd"), written as a
user writes them: `import ember as torch` and PyTorch code, unchanged. Device tests that
need a GPU use the `fake_cuda` stand-in."""
import threading

import numpy as np
import pytest

import ember as torch
from tests._strict_cupy import REAL_CUDA

needs_random = pytest.mark.skipif(not hasattr(torch, "rand"),
                                  reason="ember.rand is not implemented yet (random_ops)")
needs_all = pytest.mark.skipif(not hasattr(torch.Tensor, "all"),
                               reason="Tensor.all is not implemented yet (reduction)")
needs_init = pytest.mark.skipif(not hasattr(torch.Tensor, "uniform_"),
                                reason="nn.Linear's init needs Tensor.uniform_ (random_ops)")


# ---- Tensors and NumPy -------------------------------------------------------------------
def test_from_numpy_keeps_dtype_and_shares_memory():
    a = np.ones(5)
    b = torch.from_numpy(a)
    assert b.dtype == torch.float64
    assert repr(b) == "tensor([1., 1., 1., 1., 1.], dtype=torch.float64)"
    np.add(a, 1, out=a)
    assert b.tolist() == [2.0] * 5
    b.add_(1)
    assert a.tolist() == [3.0] * 5


def test_numpy_shares_memory():
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    assert n.tolist() == [2.0] * 5
    n[0] = 7
    assert t[0].item() == 7


@pytest.mark.parametrize("np_dtype, dtype", [
    (np.float64, "float64"), (np.float32, "float32"), (np.float16, "float16"),
    (np.int64, "int64"), (np.int32, "int32"), (np.int16, "int16"), (np.int8, "int8"),
    (np.uint8, "uint8"), (np.bool_, "bool"), (np.complex64, "complex64"),
    (np.complex128, "complex128")])
def test_every_cpu_dtype_converts_both_ways(np_dtype, dtype):
    a = np.arange(6).reshape(2, 3).astype(np_dtype)
    t = torch.from_numpy(a)
    assert t.dtype is getattr(torch, dtype)
    back = t.numpy()
    assert back.dtype == np.dtype(np_dtype)
    assert np.shares_memory(a, back)
    u = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    assert u.numpy().dtype == np.dtype(np_dtype)


def test_bfloat16_numpy_round_trip():
    t = torch.tensor([1.5, 2.0]).bfloat16()
    assert t.dtype is torch.bfloat16
    assert t.float().tolist() == [1.5, 2.0]


def test_indexing_and_view_allocate_nothing():
    x = torch.zeros(4, 4)
    row = x[1]
    col = x[:, 1]
    v = x.view(16)
    row[0] = 1
    col[2] = 2
    v[15] = 3
    assert x[1, 0].item() == 1 and x[2, 1].item() == 2 and x[3, 3].item() == 3
    assert x.numpy().ctypes.data == v.numpy().ctypes.data


def test_add_rebinds_a_new_tensor():
    x = torch.ones(3)
    y = torch.ones(3)
    old = y
    old_array = y.numpy()
    y = x + y
    assert y is not old
    assert not np.shares_memory(y.numpy(), old_array)
    assert old.tolist() == [1.0, 1.0, 1.0]


def test_view_sizes():
    x = torch.zeros(4, 4)
    assert x.view(16).size() == torch.Size([16])
    assert x.view(-1, 8).size() == torch.Size([2, 8])
    with pytest.raises(RuntimeError, match=r"shape '\[5\]' is invalid for input of size 16"):
        x.view(5)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)


def test_factories():
    e = torch.empty(5, 3)
    assert e.shape == (5, 3) and e.dtype == torch.float32
    z = torch.zeros(5, 3, dtype=torch.long)
    assert z.dtype == torch.int64 and z.sum().item() == 0
    t = torch.tensor([2.5, 3.5])
    assert repr(t) == "tensor([2.5000, 3.5000])"
    x = t.new_ones(5, 3, dtype=torch.double)
    assert x.dtype == torch.float64 and x.shape == (5, 3)
    s = x.size()
    assert isinstance(s, tuple) and isinstance(s, torch.Size)
    assert repr(s) == "torch.Size([5, 3])"
    h, w = s
    assert (h, w) == (5, 3)


@needs_random
def test_random_factories():
    r = torch.rand(5, 3)
    assert r.shape == (5, 3) and r.dtype == torch.float32
    assert ((r >= 0) & (r < 1)).tolist() == [[True] * 3] * 5
    x = torch.zeros(5, 3, dtype=torch.double)
    y = torch.randn_like(x, dtype=torch.float)
    assert y.dtype == torch.float32 and y.shape == (5, 3)


def test_four_ways_to_add():
    x = torch.tensor([1.0, 2.0])
    y = torch.tensor([10.0, 20.0])
    assert (x + y).tolist() == [11.0, 22.0]
    assert torch.add(x, y).tolist() == [11.0, 22.0]
    result = torch.empty(2)
    r = torch.add(x, y, out=result)
    assert r is result and result.tolist() == [11.0, 22.0]
    y.add_(x)
    assert y.tolist() == [11.0, 22.0]


def test_inplace_methods_end_in_underscore():
    x = torch.ones(3)
    assert x.copy_(torch.tensor([1.0, 2.0, 3.0])) is x
    assert x.tolist() == [1.0, 2.0, 3.0]
    assert x.zero_() is x and x.tolist() == [0.0, 0.0, 0.0]
    assert x.fill_(4) is x and x.tolist() == [4.0, 4.0, 4.0]
    assert x.add_(1) is x and x.tolist() == [5.0, 5.0, 5.0]


def test_numpy_style_indexing():
    x = torch.arange(12.0).view(3, 4)
    assert x[:, 1].tolist() == [1.0, 5.0, 9.0]
    assert x[1, :].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert x[-1, -1].item() == 11.0


def test_item_and_tolist():
    t = torch.tensor([3.5])
    assert t.item() == 3.5 and type(t.item()) is float
    assert torch.tensor(7).item() == 7 and type(torch.tensor(7).item()) is int
    w = torch.tensor([2.0], requires_grad=True)
    assert w.item() == 2.0
    assert (w * 3).item() == 6.0
    assert torch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        torch.tensor([1, 2]).item()


def test_tensor_class_and_legacy_constructors():
    assert isinstance(torch.Tensor, type)
    assert not isinstance(torch.tensor, type)
    t = torch.Tensor(2, 3)
    assert t.shape == (2, 3) and t.dtype == torch.float32
    f = torch.FloatTensor([[1., 2.]])
    assert f.dtype == torch.float32 and f.tolist() == [[1.0, 2.0]]
    assert isinstance(f, torch.Tensor)
    assert torch.LongTensor([1, 2]).dtype == torch.int64
    assert torch.DoubleTensor([1]).dtype == torch.float64
    assert torch.IntTensor([1]).dtype == torch.int32
    assert torch.ByteTensor([1]).dtype == torch.uint8
    assert torch.BoolTensor([True]).dtype == torch.bool
    assert torch.HalfTensor([1]).dtype == torch.float16
    assert torch.Tensor([1, 2]).dtype == torch.float32


def test_default_dtypes():
    assert torch.get_default_dtype() == torch.float32
    assert torch.tensor([1.0]).dtype == torch.float32
    assert torch.from_numpy(np.array([1.0])).dtype == torch.float64


@pytest.mark.parametrize("method, dtype", [
    ("byte", "uint8"), ("char", "int8"), ("short", "int16"), ("int", "int32"), ("long", "int64"),
    ("half", "float16"), ("bfloat16", "bfloat16"), ("float", "float32"), ("double", "float64"),
    ("bool", "bool")])
def test_dtype_shorthands(method, dtype):
    t = torch.tensor([0.0, 1.0, 2.0])
    out = getattr(t, method)()
    assert out.dtype is getattr(torch, dtype)


def test_type_and_to_dtype():
    t = torch.tensor([1, 2])
    assert t.type(torch.FloatTensor).dtype == torch.float32
    assert t.type() == "torch.LongTensor"
    assert t.to(torch.float64).dtype == torch.float64


def test_dtype_aliases():
    assert torch.short is torch.int16
    assert torch.int is torch.int32
    assert torch.long is torch.int64
    assert torch.half is torch.float16
    assert torch.float is torch.float32
    assert torch.double is torch.float64
    for name in ("uint8", "int8", "bfloat16", "bool"):
        assert repr(getattr(torch, name)) == f"torch.{name}"


def test_printing():
    assert repr(torch.ones(3, dtype=torch.float64)) == "tensor([1., 1., 1.], dtype=torch.float64)"
    x = torch.tensor([7.0, 0.0, 0.0], requires_grad=True)
    assert repr(x) == "tensor([7., 0., 0.], requires_grad=True)"
    y = x + 2
    assert repr(y) == "tensor([9., 2., 2.], grad_fn=<AddBackward0>)"


# ---- Devices ---------------------------------------------------------------------------
@pytest.mark.skipif(REAL_CUDA, reason="this machine has a GPU")
def test_device_selection_without_gpu():
    assert torch.cuda.is_available() is False
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    assert device == torch.device("cpu")
    x = torch.ones(2, 2)
    y = x.to(device)
    assert y.device == device
    z = torch.ones_like(x, device=device)
    assert z.device.type == "cpu"
    w = (y + z).to("cpu", torch.double)
    assert w.dtype == torch.float64 and w.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_device_script_on_gpu(fake_cuda):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    assert device.type == "cuda"
    x = torch.ones(2, 2)
    y = torch.ones_like(x, device=device)
    x = x.to(device)
    z = x + y
    assert z.device == torch.device("cuda:0")
    assert repr(z) == "tensor([[2., 2.],\n        [2., 2.]], device='cuda:0')"
    back = z.to("cpu", torch.double)
    assert back.device.type == "cpu" and back.dtype == torch.float64
    c = torch.tensor([1.0]).cuda()
    assert c.is_cuda and c.cpu().device == torch.device("cpu")
    assert torch.zeros(3, 3, device="cuda").is_cuda


@needs_random
def test_rand_on_gpu(fake_cuda):
    r = torch.rand(3, 3, device="cuda")
    assert r.is_cuda and r.shape == (3, 3)


def test_devices_cannot_mix(fake_cuda):
    a = torch.ones(3).cuda()
    b = torch.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but "
                                           "found at least two devices, cuda:0 and cpu!"):
        a + b


def test_numpy_is_cpu_only(fake_cuda):
    y = torch.ones(2, requires_grad=True).cuda() * 2
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host memory first\."):
        y.detach().numpy()
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad\. "
                                           r"Use tensor\.detach\(\)\.numpy\(\) instead\."):
        y.cpu().numpy()
    assert y.cpu().detach().numpy().tolist() == [2.0, 2.0]
    assert y.detach().cpu().numpy().tolist() == [2.0, 2.0]
    assert y.sum().item() == 4.0


# ---- Autograd --------------------------------------------------------------------------
def test_requires_grad_flags():
    t = torch.ones(2)
    assert t.requires_grad is False
    t.requires_grad = True
    assert t.requires_grad
    u = torch.ones(2).requires_grad_()
    assert u.requires_grad
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require "
                                           "gradients$"):
        torch.ones(2, dtype=torch.long).requires_grad_()
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex dtype "
                                           "can require gradients$"):
        torch.ones(2, dtype=torch.long).requires_grad = True
    assert torch.ones(2, dtype=torch.complex64).requires_grad_().requires_grad


def test_factory_requires_grad_on_integer_raises():
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype "
                                           "can require gradients$"):
        torch.tensor([1, 2], requires_grad=True)


def test_output_requires_grad_if_any_input_does():
    a = torch.ones(2)
    b = torch.ones(2, requires_grad=True)
    assert not (a + a).requires_grad
    assert (a + b).requires_grad


@needs_init
def test_module_outputs_require_grad_and_freezing():
    nn = pytest.importorskip("ember.nn")
    model = nn.Linear(3, 2)
    assert all(p.requires_grad for p in model.parameters())
    out = model(torch.ones(1, 3))
    assert out.requires_grad
    for p in model.parameters():
        p.requires_grad = False
    assert not model(torch.ones(1, 3)).requires_grad


def test_grad_fn_names_and_leaves():
    x = torch.ones(2, 2, requires_grad=True)
    assert x.grad_fn is None and x.is_leaf
    y = x + 2
    assert type(y.grad_fn).__name__ == "AddBackward0"
    assert y.grad_fn.name() == "AddBackward0"
    assert type((y * y).grad_fn).__name__ == "MulBackward0"
    assert type(y.mean().grad_fn).__name__ == "MeanBackward0"
    assert type(y[0].grad_fn).__name__ == "SelectBackward0"
    assert not y.is_leaf


def test_worked_example_and_accumulation():
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    assert repr(out) == "tensor(27., grad_fn=<MeanBackward0>)"
    out.backward()
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    assert x.grad.tolist() == [[9.0, 9.0], [9.0, 9.0]]


def test_no_grad_builds_no_graph():
    x = torch.ones(2, requires_grad=True)
    assert (x ** 2).requires_grad
    with torch.no_grad():
        assert not (x ** 2).requires_grad
        assert (x ** 2).grad_fn is None
    assert (x ** 2).requires_grad


def test_no_grad_is_thread_local():
    x = torch.ones(2, requires_grad=True)
    seen = []
    with torch.no_grad():
        th = threading.Thread(target=lambda: seen.append((x * 2).requires_grad))
        th.start()
        th.join()
    assert seen == [True]


def test_detach_shares_data():
    x = torch.ones(3, requires_grad=True)
    y = x.detach()
    assert not y.requires_grad and y.grad_fn is None
    assert x.eq(y).tolist() == [True] * 3
    y[0] = 5
    assert x[0].item() == 5


@needs_all
def test_detach_equal_all():
    x = torch.ones(3, requires_grad=True) * 2
    y = x.detach()
    assert x.eq(y).all()


def test_detach_inplace_is_caught():
    a = torch.tensor([7., 0, 0], requires_grad=True)
    b = a + 2
    loss = torch.mean(b * b)
    b.detach().zero_()
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient "
                                           "computation has been modified by an inplace operation"):
        loss.backward()


def test_data_inplace_is_silent():
    a = torch.tensor([7., 0, 0], requires_grad=True)
    b = a + 2
    loss = torch.mean(b * b)
    b.data.zero_()
    loss.backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]


def test_true_gradient_of_the_example():
    a = torch.tensor([7., 0, 0], requires_grad=True)
    b = a + 2
    loss = torch.mean(b * b)
    loss.backward()
    assert np.allclose(a.grad.numpy(), [6.0, 4 / 3, 4 / 3])
    assert repr(a.grad) == "tensor([6.0000, 1.3333, 1.3333])"


def test_data_with_matmul():
    x = torch.ones(2, 3)
    w1 = torch.ones(3, 4, requires_grad=True)
    w2 = torch.ones(4, 1, requires_grad=True)
    d = x @ w1
    d_ = d.data
    f = (d @ w2).sum()
    d_[:] = 1
    f.backward()
    # w2's gradient reads the saved d, which .data modified without autograd noticing
    assert w2.grad.tolist() == [[2.0]] * 4
    assert w1.grad.tolist() == [[2.0] * 4] * 3


def test_detach_with_matmul_raises():
    x = torch.ones(2, 3)
    w1 = torch.ones(3, 4, requires_grad=True)
    w2 = torch.ones(4, 1, requires_grad=True)
    d = x @ w1
    f = (d @ w2).sum()
    d.detach()[:] = 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        f.backward()
