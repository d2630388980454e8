"""A first-order backward computes some formulas on arrays (ops/_graph.first_order_arrays);
under create_graph the same formulas run in ember ops. Both must give the same gradients, bit
for bit and laid out alike, and the array form must step aside for forward AD."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

CASES = {
    "sigmoid": lambda x, y, w, b: ember.sigmoid(x),
    "tanh": lambda x, y, w, b: ember.tanh(x),
    "relu": lambda x, y, w, b: ember.relu(x),
    "silu": lambda x, y, w, b: F.silu(x),
    "select": lambda x, y, w, b: x[1] * y[:, 2],
    "narrow_and_step": lambda x, y, w, b: x.narrow(1, 1, 3) + y[:, ::2][:, :3],
    "mm": lambda x, y, w, b: x @ w,
    "mm_transposed": lambda x, y, w, b: w.t() @ x.t(),
    "linear": lambda x, y, w, b: F.linear(x, w, b),
    "addmm": lambda x, y, w, b: ember.addmm(b, x, w),
    "mul_div": lambda x, y, w, b: x * y / (w[0].abs() + 1),
    "mean": lambda x, y, w, b: x.mean() * y,
    "mean_dim": lambda x, y, w, b: x.mean(0) * y,
    "broadcast_bias": lambda x, y, w, b: x + b,
}


def _leaves(dtype):
    rng = np.random.default_rng(0)
    shapes = [(5, 5), (5, 5), (5, 5), (5,)]
    return [ember.tensor((rng.standard_normal(s) * 3).astype(dtype), requires_grad=True)
            for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_array_formulas_match_the_ember_op_formulas(name, dtype):
    leaves = _leaves(dtype)
    out = CASES[name](*leaves)
    v = (ember.ones_like(out) * 0.75).requires_grad_()  # every gradient depends on v
    used = [t for t in leaves if t.requires_grad]
    first = ember.autograd.grad(out, used, v, retain_graph=True, allow_unused=True)
    graphed = ember.autograd.grad(out, used, v, create_graph=True, allow_unused=True)
    for a, b in zip(first, graphed):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert b.requires_grad  # the create_graph pass ran the ember-op formulas
        assert a.dtype == b.dtype and a.stride() == b.stride()
        assert a.numpy().tobytes() == b.detach().numpy().tobytes()


def test_forward_ad_keeps_the_ember_op_formulas():
    import ember.autograd.forward_ad as fwAD
    x = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.detach(), ember.tensor([1.0, 2.0, 3.0]))
        y = ember.sigmoid(d) * d
        tangent = fwAD.unpack_dual(y).tangent
    s = ember.sigmoid(x.detach())
    expected = (s * (1 - s) * x.detach() + s) * ember.tensor([1.0, 2.0, 3.0])
    assert ember.allclose(tangent, expected)
