"""Mixed precision: autocast's casts on the CPU (dtypes and values as PyTorch's), its
switches, and GradScaler's scaling, skipping and scale updates against PyTorch's."""
import threading
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = {
    "mm": lambda m, x, b: m.mm(x, x), "matmul": lambda m, x, b: x @ x,
    "bmm": lambda m, x, b: m.bmm(b, b), "addmm": lambda m, x, b: m.addmm(x, x, x),
    "baddbmm": lambda m, x, b: m.baddbmm(b, b, b), "addbmm": lambda m, x, b: m.addbmm(x, b, b),
    "linear": lambda m, x, b: m.nn.functional.linear(x, x, x[0]),
    "einsum": lambda m, x, b: m.einsum("ij,jk->ik", x, x),
    "conv2d": lambda m, x, b: m.nn.functional.conv2d(x.reshape(1, 1, 4, 4), x[:3, :3].reshape(1, 1, 3, 3)),
    "conv_transpose1d": lambda m, x, b: m.nn.functional.conv_transpose1d(b.reshape(1, 2, 16), b[:, :2]),
    "prelu": lambda m, x, b: m.nn.functional.prelu(x, x[0, :1]),
    "sdpa": lambda m, x, b: m.nn.functional.scaled_dot_product_attention(b, b, b),
    "vecdot": lambda m, x, b: m.linalg.vecdot(x, x),
    "mv (not listed)": lambda m, x, b: m.mv(x, x[0]),
    "relu (not listed)": lambda m, x, b: m.relu(x),
    "float64 stays": lambda m, x, b: m.mm(x.double(), x.double()),
    "out= not cast": lambda m, x, b: m.mm(x, x, out=m.empty(4, 4)),
    "cross_entropy": lambda m, x, b: m.nn.functional.cross_entropy(x.bfloat16(), m.tensor([0, 1, 2, 3])),
    "mse_loss": lambda m, x, b: m.nn.functional.mse_loss(x.bfloat16(), x),
    "l1_loss": lambda m, x, b: m.nn.functional.l1_loss(x.bfloat16(), x.bfloat16()),
    "nll_loss": lambda m, x, b: m.nn.functional.nll_loss(x.bfloat16(), m.tensor([0, 1, 2, 3])),
    "bce_with_logits": lambda m, x, b: m.nn.functional.binary_cross_entropy_with_logits(
        x.bfloat16(), x.sigmoid().bfloat16()),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_cpu_autocast_matches_pytorch(name, dtype):
    rng = np.random.default_rng(0)
    x_np, b_np = rng.standard_normal((4, 4)), rng.standard_normal((2, 4, 4))
    results = []
    for m in (ember, torch):
        x = m.tensor(x_np, dtype=m.float32)
        b = m.tensor(b_np, dtype=m.float32)
        with m.autocast("cpu", dtype=getattr(m, dtype)):
            results.append(CASES[name](m, x, b))
    ours, theirs = results
    assert str(ours.dtype) == str(theirs.dtype)
    tol = 2e-2 if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(ours.float().detach().numpy(), theirs.float().detach().numpy(),
                               rtol=tol, atol=tol * 4)


def test_autocast_gradients_reach_float32_parameters():
    layer = ember.nn.Linear(3, 2)
    with ember.autocast("cpu"):
        y = layer(ember.randn(5, 3))
        assert y.dtype is ember.bfloat16
        loss = ember.nn.functional.mse_loss(y, ember.zeros(5, 2))
        assert loss.dtype is ember.float32
        loss.backward()  # backward inside autocast: formulas keep their dtypes
    assert layer.weight.grad.dtype is ember.float32
    assert layer.weight.grad.shape == (2, 3)


def test_autocast_switches_nesting_decorator_and_threads():
    x = ember.randn(3, 3)
    assert not ember.is_autocast_enabled("cpu")
    assert ember.get_autocast_dtype("cpu") is ember.bfloat16
    assert ember.get_autocast_dtype("cuda") is ember.float16
    with ember.autocast("cpu", dtype=ember.float16):
        assert ember.is_autocast_enabled("cpu") and not ember.is_autocast_enabled()
        assert ember.get_autocast_dtype("cpu") is ember.float16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert (x @ x).dtype is ember.float32
        assert (x @ x).dtype is ember.float16
        seen = []
        thread = threading.Thread(target=lambda: seen.append((x @ x).dtype))
        thread.start()
        thread.join()
        assert seen == [ember.float32]  # autocast is per thread, as in PyTorch
    assert ember._state.autocast.active == 0
    assert (x @ x).dtype is ember.float32

    @ember.autocast("cpu")
    def product(a):
        return a @ a
    assert product(x).dtype is ember.bfloat16
    assert (x @ x).dtype is ember.float32
    assert ember.amp.autocast is ember.autocast


def test_autocast_warnings_and_errors_as_pytorch():
    for args in [("cuda",), ("cpu", "float32"), ("cpu", "float64")]:
        for m in (ember, torch):
            call = (args[0],) + tuple(getattr(m, a) for a in args[1:])
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                with m.autocast(*call):
                    assert not m.is_autocast_enabled(args[0])
            if m is ember:
                ours = [str(x.message) for x in w]
            else:
                assert ours == [str(x.message) for x in w]
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ember.autocast("foo")
    for m in (ember, torch):
        with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated"):
            with m.cpu.amp.autocast():
                assert m.is_autocast_enabled("cpu")
        with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.autocast\(args...\)` is deprecated"):
            m.cuda.amp.autocast()


def test_grad_scaler_disables_itself_without_cuda():
    for m in (ember, torch):
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
            scaler = m.amp.GradScaler()
        assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
        t = m.ones(2)
        assert scaler.scale(t) is t
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)"):
            m.cuda.amp.GradScaler()


def _scaler_run(m, grads_per_step):
    p = m.nn.Parameter(m.ones(3))
    opt = m.optim.SGD([p], lr=0.1)
    scaler = m.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    trace = []
    for g in grads_per_step:
        opt.zero_grad()
        loss = (p * m.tensor(g, dtype=m.float32)).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.unscale_(opt)
        trace.append(p.grad.tolist())
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), p.detach().tolist()))
    return trace, scaler.state_dict()


def test_grad_scaler_on_cpu_matches_pytorch():
    steps = [[1.0, 2.0, 3.0], [float("inf"), 0.0, 1.0], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0],
             [float("nan"), 1.0, 1.0], [2.0, 2.0, 2.0]]
    ours, theirs = _scaler_run(ember, steps), _scaler_run(torch, steps)
    assert str(ours) == str(theirs)


def test_grad_scaler_stage_errors_and_state():
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1)
    scaler = ember.amp.GradScaler("cpu")
    scaler.scale(p.sum()).backward()
    assert p.grad.tolist() == [65536.0, 65536.0]
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update(4.0)
    assert scaler.get_scale() == 4.0
    other = ember.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict()
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        other.load_state_dict({})


def test_autocast_decorator_runs_the_function_under_the_context():
    from ember.amp.autocast_mode import autocast_decorator

    def enabled():
        return ember.is_autocast_enabled("cpu")
    wrapped = autocast_decorator(ember.autocast("cpu", dtype=ember.bfloat16), enabled)
    assert wrapped.__name__ == "enabled" and wrapped() and not enabled()
