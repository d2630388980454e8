"""Devices: `ember.device` forms and reprs, and CUDA plumbing on the `fake_cuda` stand-in
(a NumPy-backed 'cuda' backend: this machine has no GPU)."""
import pytest

import ember


@pytest.mark.parametrize("args", [("cpu",), ("cuda",), ("cuda:0",), ("cuda:1",), ("cuda", 1),
                                  ("cpu", 0), (0,), (2,), ("meta",), ("mps",)])
def test_device_forms(torch, args):
    try:
        t = torch.device(*args)
    except RuntimeError as exc:  # a bare index needs an accelerator (PyTorch 2.x)
        with pytest.raises(RuntimeError, match=f"^{exc}$"):
            ember.device(*args)
        return
    e = ember.device(*args)
    assert repr(e) == repr(t)
    assert str(e) == str(t)
    assert e.type == t.type and e.index == t.index
    assert (e == str(t)) is (t == str(t)) is False  # a device never equals its string
    assert ember.device(e) is e


@pytest.mark.parametrize("args", [
    ("cuda:x",), ("gpu",), ("cuda:0", 1), ("cuda", -1), ("cuda:-1",), (1.5,), ("",),
    ("float32",), ("cpu:0:1",), ("cuda:01",), ("cuda: 1",), (" cuda",), ("CPU",), ("cuda:",),
    (":0",), ("cuda0",), ("foo:1",), ("cuda:+1",), ("cuda:9999999999999999999",), (-1,),
    ("cuda", "1"), ("cuda", 1.0), ("cuda", True), (None,), ("cuda:x", 0), ("gpu", 0)])
def test_device_errors(torch, args):
    # PyTorch's parse: a malformed string is 'Invalid device string', a well-formed one of
    # an unknown type lists the known types
    def err(mod):
        try:
            mod.device(*args)
        except Exception as exc:  # noqa: BLE001
            return type(exc).__name__, str(exc)
        return None
    assert err(torch) is not None
    assert err(ember) == err(torch)


@pytest.mark.parametrize("name", ["ipu", "xla", "hpu", "privateuseone", "meta", "mtia"])
def test_device_types_known(torch, name):
    assert repr(ember.device(name)) == repr(torch.device(name))
    assert repr(ember.device(f"{name}:3")) == repr(torch.device(f"{name}:3"))


def test_to_bad_device_string(torch):
    for bad in ("float32", "gpu", "cuda:x"):
        with pytest.raises(RuntimeError) as t:
            torch.ones(2).to(bad)
        with pytest.raises(RuntimeError, match=f"^{__import__('re').escape(str(t.value))}$"):
            ember.ones(2).to(bad)


def test_bare_index_is_the_accelerator(fake_cuda):
    assert ember.device(0) == ember.device("cuda:0")
    assert repr(ember.device(1)) == "device(type='cuda', index=1)"


def test_device_equality_and_hash(torch):
    assert ember.device("cuda", 0) == ember.device("cuda:0")
    assert ember.device("cpu") != ember.device("cuda")
    assert ember.device("cuda") != ember.device("cuda:0")
    assert len({ember.device("cpu"), ember.device("cpu")}) == 1
    # PyTorch: a device equals only a device, never its string nor an int; a string that
    # names no device type ("npu", as accelerate asks) is unequal too, not a parse error
    for name in ("cpu", "cuda", "cuda:0", "npu", "meta"):
        for mod in (ember, torch):
            for dev in (mod.device("cpu"), mod.device("cuda:0"), mod.device("cuda")):
                assert (dev == name, dev != name, name == dev, dev in [name], dev in {name}) \
                    == (False, True, False, False, False)
    assert ember.device("cpu") != 3 and ember.device("cuda:0") != 0
    for name in ("cpu", "cuda", "cuda:1", "meta", "xla:300", "privateuseone:2"):
        assert hash(ember.device(name)) == hash(torch.device(name))  # c10's numbers


@pytest.mark.parametrize("which", ["cpu", "cuda"])
def test_script_branch_on_device_string(torch, which, request):
    """A script's `x.device == "cuda"` (or "cpu") takes PyTorch's branch: the else."""
    if which == "cuda":
        request.getfixturevalue("fake_cuda")

    def branch(mod):
        x = mod.ones(2, device=which) if mod is ember else mod.ones(2)
        return ("string", x.device == which, x.device != which, which in (x.device,),
                "type", x.device.type == which, "device", x.device == mod.device(which))
    want = branch(torch)
    if which == "cuda":  # PyTorch's tensor is on the CPU here: what it answers on cuda:0
        want = ("string", False, True, False, "type", True, "device", False)  # cuda:0 != cuda
    assert branch(ember) == want


def test_no_gpu_here():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    device = ember.device("cuda" if ember.cuda.is_available() else "cpu")
    assert ember.ones(2, device=device).device == ember.device("cpu")
    t = ember.ones(2)
    assert t.device == ember.device("cpu") and t.get_device() == -1


@pytest.mark.parametrize("call", ["x.cuda()", "x.cuda(0)", "x.cuda(1)", "x.cuda(device=1)",
                                  "x.cuda('cuda:1')", "x.cuda(True)", "x.cuda(1.0)",
                                  "x.cuda('cpu')", "x.cuda(-1)", "lib.nn.Linear(2, 2).cuda(1)"])
def test_cuda_without_a_gpu_raises_as_pytorch(torch, call):
    # d2l's GPU section calls X.cuda(1): an index asks for the accelerator, which a CPU-only
    # build lacks (RuntimeError), where a device name says CUDA is not compiled in
    def outcome(lib):
        try:
            eval(call, {"x": lib.ones(2), "lib": lib})
        except (RuntimeError, AssertionError, TypeError) as exc:
            return type(exc), str(exc).split("\n")[0]
    assert outcome(ember) == outcome(torch)


def test_to_cuda_and_back(fake_cuda):
    assert ember.cuda.is_available()
    x = ember.tensor([1.0, 2.0])
    for y in (x.to("cuda"), x.cuda(), x.to(ember.device("cuda")), x.to("cuda:0"), x.cuda(0),
              x.to(fake_cuda)):
        assert y.is_cuda and y.device == ember.device("cuda:0") and y.get_device() == 0
        assert str(y.device) == "cuda:0"
        assert y.tolist() == [1.0, 2.0]
        z = y.cpu()
        assert z.device.type == "cpu" and not z.is_cuda and z.tolist() == [1.0, 2.0]
    c = x.cuda()
    assert c.cuda() is c and c.to("cuda") is c
    d = c.to("cpu", ember.float64)
    assert d.dtype == ember.float64 and d.device.type == "cpu"
    assert c.type() == "torch.cuda.FloatTensor"


def test_transfers_copy(fake_cuda):
    x = ember.zeros(2)
    y = x.cuda()
    y[0] = 5
    assert x[0].item() == 0
    z = y.cpu()
    z[1] = 7
    assert y[1].item() == 0


def test_factories_on_cuda(fake_cuda):
    for t in (ember.zeros(2, 3, device="cuda"), ember.ones(2, device="cuda:0"),
              ember.tensor([1, 2], device="cuda"), ember.full((2,), 3.0, device=fake_cuda),
              ember.arange(3, device="cuda"), ember.empty(2, device="cuda")):
        assert t.device == ember.device("cuda:0")
    x = ember.ones(2)
    assert ember.ones_like(x, device="cuda").is_cuda
    assert ember.zeros_like(x.cuda()).is_cuda
    assert x.cuda().new_zeros(3).is_cuda


def test_cuda_repr(fake_cuda):
    t = ember.tensor([1.0, 2.0]).cuda()
    assert repr(t) == "tensor([1., 2.], device='cuda:0')"
    w = ember.tensor([1.0], requires_grad=True).cuda()
    assert repr(w * 2) == "tensor([2.], device='cuda:0', grad_fn=<MulBackward0>)"
    assert repr(ember.ones(2, dtype=ember.float64, device="cuda")) == \
        "tensor([1., 1.], device='cuda:0', dtype=torch.float64)"


def test_mixing_devices_raises(fake_cuda):
    a = ember.ones(3).cuda()
    b = ember.ones(3)
    msg = ("Expected all tensors to be on the same device, but found at least two devices, "
           "{} and {}!")
    with pytest.raises(RuntimeError, match="^" + msg.format("cuda:0", "cpu")):
        a + b
    with pytest.raises(RuntimeError, match="^" + msg.format("cpu", "cuda:0")):
        b * a
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ember.add(b, a)


def test_zero_dim_cpu_tensor_mixes(fake_cuda):
    a = ember.tensor([1.0, 2.0]).cuda()
    s = ember.tensor(3.0)
    for r in (a + s, s * a, a - s, ember.mul(s, a)):
        assert r.is_cuda
    assert (a * s).tolist() == [3.0, 6.0]
    assert (a + 1).is_cuda


def test_numpy_item_tolist_on_cuda(fake_cuda):
    y = ember.tensor([1.5, 2.5]).cuda()
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host memory"):
        y.numpy()
    assert y.cpu().numpy().tolist() == [1.5, 2.5]
    assert y[1].item() == 2.5 and y.tolist() == [1.5, 2.5]
    assert float(y[0]) == 1.5


def test_autograd_across_devices(fake_cuda):
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.cuda()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.device.type == "cpu" and x.grad.tolist() == [2.0, 4.0]
    w = ember.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    (w * 3).sum().backward()
    assert w.grad.is_cuda and w.grad.tolist() == [3.0, 3.0]


def test_inplace_across_devices_raises(fake_cuda):
    a = ember.ones(2).cuda()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a.add_(ember.ones(2))


def test_default_device(fake_cuda):
    with ember.device("cuda"):
        assert ember.zeros(2).is_cuda
    assert not ember.zeros(2).is_cuda
    ember.set_default_device("cuda")
    try:
        assert ember.ones(1).device == ember.device("cuda:0")
    finally:
        ember.set_default_device(None)
    assert ember.ones(1).device.type == "cpu"
