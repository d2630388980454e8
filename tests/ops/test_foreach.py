"""torch._foreach_*: the list forms of the per-tensor ops (timm's optimizers and ModelEmaV3
call them directly), checked against PyTorch."""
import numpy as np
import pytest

import ember
from ember.ops import foreach


def _lists(lib, seed=0, positive=False):
    g = np.random.default_rng(seed)
    arrays = [g.standard_normal(3), g.standard_normal((2, 4))]
    if positive:
        arrays = [np.abs(a) + 0.1 for a in arrays]
    return [lib.from_numpy(a) for a in arrays]


def _same(got, want):
    assert type(got) is type(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-15)


def test_every_pytorch_foreach_function_exists(torch):
    want = {n for n in dir(torch) if n.startswith("_foreach_")}
    assert want <= set(dir(ember))
    assert set(foreach.__all__) == want


@pytest.mark.parametrize("name", foreach._UNARY)
def test_unary_forms(torch, name):
    positive = name in ("log", "log10", "log1p", "log2", "sqrt", "rsqrt", "lgamma")
    if name in ("acos", "asin"):
        inputs = [[t / 10 for t in _lists(lib, positive=True)] for lib in (torch, ember)]
    else:
        inputs = [_lists(torch, positive=positive), _lists(ember, positive=positive)]
    want = getattr(torch, f"_foreach_{name}")(inputs[0])
    _same(getattr(ember, f"_foreach_{name}")(inputs[1]), want)
    returned = getattr(ember, f"_foreach_{name}_")(inputs[1])
    getattr(torch, f"_foreach_{name}_")(inputs[0])
    assert returned is inputs[1]
    _same(tuple(inputs[1]), tuple(inputs[0]))


@pytest.mark.parametrize("name", foreach._BINARY)
@pytest.mark.parametrize("other", ["number", "numbers", "tensors", "tensor"])
def test_binary_forms(torch, name, other):
    def operand(lib):
        return {"number": 0.75, "numbers": [0.5, 2.0], "tensors": _lists(lib, 1, positive=True),
                "tensor": lib.tensor(1.5, dtype=lib.float64)}[other]

    a_t, a_e = _lists(torch, positive=True), _lists(ember, positive=True)
    if other == "tensor" and name not in ("add", "mul", "div", "sub"):
        pytest.skip("PyTorch has the one-tensor form for add, sub, mul and div only")
    _same(getattr(ember, f"_foreach_{name}")(a_e, operand(ember)),
          getattr(torch, f"_foreach_{name}")(a_t, operand(torch)))
    getattr(torch, f"_foreach_{name}_")(a_t, operand(torch))
    assert getattr(ember, f"_foreach_{name}_")(a_e, operand(ember)) is a_e
    _same(tuple(a_e), tuple(a_t))


def test_alpha_and_scalar_base(torch):
    a_t, a_e = _lists(torch), _lists(ember)
    b_t, b_e = _lists(torch, 1), _lists(ember, 1)
    _same(ember._foreach_sub(a_e, b_e, alpha=2.5), torch._foreach_sub(a_t, b_t, alpha=2.5))
    _same(ember._foreach_add(a_e, b_e, alpha=-1), torch._foreach_add(a_t, b_t, alpha=-1))
    _same(ember._foreach_pow(2.0, a_e), torch._foreach_pow(2.0, a_t))


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [1, 0.3, [0.5, -2.0], "tensor"])
def test_ternary_forms(torch, name, value):
    def val(lib):
        return lib.tensor([0.5, -2.0], dtype=lib.float64) if value == "tensor" else value

    t = [_lists(torch, s, positive=True) for s in range(3)]
    e = [_lists(ember, s, positive=True) for s in range(3)]
    _same(getattr(ember, f"_foreach_{name}")(*e, val(ember)),
          getattr(torch, f"_foreach_{name}")(*t, val(torch)))
    getattr(torch, f"_foreach_{name}_")(*t, val(torch))
    getattr(ember, f"_foreach_{name}_")(*e, val(ember))
    _same(tuple(e[0]), tuple(t[0]))


@pytest.mark.parametrize("weight", [0.25, [0.1, 0.9], "tensors"])
def test_lerp_forms(torch, weight):
    def w(lib):
        return _lists(lib, 2, positive=True) if weight == "tensors" else weight

    a_t, b_t, a_e, b_e = _lists(torch), _lists(torch, 1), _lists(ember), _lists(ember, 1)
    _same(ember._foreach_lerp(a_e, b_e, w(ember)), torch._foreach_lerp(a_t, b_t, w(torch)))
    torch._foreach_lerp_(a_t, b_t, w(torch))
    ember._foreach_lerp_(a_e, b_e, w(ember))
    _same(tuple(a_e), tuple(a_t))


def test_reductions_copies_and_products(torch):
    a_t, a_e = _lists(torch), _lists(ember)
    for ord in (2, 1, 3, float("inf")):
        _same(ember._foreach_norm(a_e, ord), torch._foreach_norm(a_t, ord))
    _same(ember._foreach_norm([t.float() for t in a_e], dtype=ember.float64),
          torch._foreach_norm([t.float() for t in a_t], dtype=torch.float64))
    _same(ember._foreach_powsum(a_e, 3), torch._foreach_powsum(a_t, 3))
    _same(ember._foreach_max(a_e), torch._foreach_max(a_t))
    _same(ember._foreach_clone(a_e), torch._foreach_clone(a_t))
    m_t = [torch.from_numpy(np.arange(6.).reshape(2, 3))]
    m_e = [ember.from_numpy(np.arange(6.).reshape(2, 3))]
    _same(ember._foreach_mm(m_e, [x.T for x in m_e]), torch._foreach_mm(m_t, [x.T for x in m_t]))
    assert ember._foreach_copy_(a_e, _lists(ember, 3)) is a_e
    torch._foreach_copy_(a_t, _lists(torch, 3))
    _same(tuple(a_e), tuple(a_t))
    assert ember._foreach_zero_(a_e) is a_e and all((t == 0).all() for t in a_e)


def test_gradients_flow_through_out_of_place_forms(torch):
    x_t = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    x_e = ember.tensor([1.0, -2.0], dtype=ember.float64, requires_grad=True)
    torch._foreach_mul([x_t], [x_t])[0].sum().backward()
    ember._foreach_mul([x_e], [x_e])[0].sum().backward()
    np.testing.assert_array_equal(x_e.grad.numpy(), x_t.grad.numpy())


def test_errors_match_pytorch(torch):
    a_e = _lists(ember)
    cases = [(lambda lib, a: lib._foreach_add(a, [a[0]]), RuntimeError,
              "Tensor lists must have the same number of tensors, got 2 and 1"),
             (lambda lib, a: lib._foreach_add([], 1), RuntimeError,
              "Tensor list must have at least one tensor."),
             (lambda lib, a: lib._foreach_mul_(a, [1.0]), RuntimeError,
              "Tensor list must have same number of elements as scalar list.")]
    for call, exc, message in cases:
        with pytest.raises(exc, match=message):
            call(torch, _lists(torch))
        with pytest.raises(exc, match=message):
            call(ember, a_e)
    leaf = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember._foreach_add_([leaf], 1)
    with pytest.raises(TypeError, match="must be tuple of Tensors"):
        ember._foreach_sqrt(ember.ones(2))
