"""Values and gradients at the points where formulas break: NaN, the infinities, signed zeros,
an activation's kinks and clip bounds, and an infinite or negative incoming gradient. Op tests
sample ordinary values, so a backward written as `grad * (x > 0)` (NaN takes no gradient,
where PyTorch's `x <= 0 ? 0 : grad` passes it) or as `grad * 0` (NaN for an infinite grad)
passes them; these compare each case with PyTorch at every such point."""
import math
import warnings

import pytest

import ember

EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 6.0, 3.0, -3.0, 0.5, -0.5, 20.0,
         -20.0, 1e-30]


def _f(lib):
    return lib.nn.functional


def _with_zero(lib, x):
    return lib.stack([x, lib.zeros_like(x)])


CASES = {
    "relu": lambda L, x: L.relu(x),
    "relu6": lambda L, x: _f(L).relu6(x),
    "hardtanh": lambda L, x: _f(L).hardtanh(x),
    "leaky_relu": lambda L, x: _f(L).leaky_relu(x, 0.1),
    "elu": lambda L, x: _f(L).elu(x),
    "selu": lambda L, x: _f(L).selu(x),
    "celu": lambda L, x: _f(L).celu(x, 2.0),
    "gelu": lambda L, x: _f(L).gelu(x),
    "gelu_tanh": lambda L, x: _f(L).gelu(x, approximate="tanh"),
    "silu": lambda L, x: _f(L).silu(x),
    "mish": lambda L, x: _f(L).mish(x),
    "softplus": lambda L, x: _f(L).softplus(x),
    "softsign": lambda L, x: _f(L).softsign(x),
    "hardswish": lambda L, x: _f(L).hardswish(x),
    "hardsigmoid": lambda L, x: _f(L).hardsigmoid(x),
    "hardshrink": lambda L, x: _f(L).hardshrink(x),
    "softshrink": lambda L, x: _f(L).softshrink(x),
    "tanhshrink": lambda L, x: _f(L).tanhshrink(x),
    "threshold": lambda L, x: _f(L).threshold(x, 0.5, -1.0),
    "logsigmoid": lambda L, x: _f(L).logsigmoid(x),
    "sigmoid": lambda L, x: L.sigmoid(x),
    "tanh": lambda L, x: L.tanh(x),
    "abs": lambda L, x: L.abs(x),
    "sign": lambda L, x: L.sign(x),
    "sgn": lambda L, x: L.sgn(x),
    "x*sign(x)": lambda L, x: x * x.sign(),
    "clamp": lambda L, x: L.clamp(x, -1, 1),
    "clamp_min": lambda L, x: L.clamp(x, min=0),
    "sqrt": lambda L, x: L.sqrt(x),
    "rsqrt": lambda L, x: L.rsqrt(x),
    "log": lambda L, x: L.log(x),
    "exp": lambda L, x: L.exp(x),
    "log1p": lambda L, x: L.log1p(x),
    "expm1": lambda L, x: L.expm1(x),
    "erf": lambda L, x: L.erf(x),
    "atan": lambda L, x: L.atan(x),
    "asin": lambda L, x: L.asin(x),
    "acosh": lambda L, x: L.acosh(x),
    "atanh": lambda L, x: L.atanh(x),
    "reciprocal": lambda L, x: L.reciprocal(x),
    "x**2": lambda L, x: x ** 2,
    "x**0.5": lambda L, x: x ** 0.5,
    "x**-0.5": lambda L, x: x ** -0.5,
    "x**0": lambda L, x: x ** 0,
    "x**3": lambda L, x: L.pow(x, 3.0),
    "2**x": lambda L, x: 2.0 ** x,
    "sinc": lambda L, x: L.sinc(x),
    "logit": lambda L, x: L.logit(x),
    "xlogy": lambda L, x: L.xlogy(x, x),
    "frac": lambda L, x: L.frac(x),
    "maximum": lambda L, x: L.maximum(x, L.zeros_like(x)),
    "minimum": lambda L, x: L.minimum(x, L.zeros_like(x)),
    "fmax": lambda L, x: L.fmax(x, L.zeros_like(x)),
    "atan2": lambda L, x: L.atan2(x, L.ones_like(x)),
    "hypot": lambda L, x: L.hypot(x, L.zeros_like(x)),
    "logaddexp": lambda L, x: L.logaddexp(x, L.zeros_like(x)),
    "log_softmax": lambda L, x: L.log_softmax(_with_zero(L, x), 0)[0],
    "amax": lambda L, x: L.amax(_with_zero(L, x), 0),
    "max": lambda L, x: L.max(_with_zero(L, x)),
    "prod": lambda L, x: L.prod(L.stack([x, L.zeros_like(x) + 2])),
    "where": lambda L, x: L.where(x > 0, x, L.zeros_like(x)),
    "fmod": lambda L, x: L.fmod(x, L.ones_like(x) * 1.5),
    "remainder": lambda L, x: L.remainder(x, L.ones_like(x) * 1.5),
    "copysign": lambda L, x: L.copysign(x, -L.ones_like(x)),
}

# An infinite incoming gradient meets a dropped place (inf * 0) in these, where PyTorch selects
# 0 and ember multiplies by the mask, for speed in every CNN's step (see ReluBackward0): the
# result is NaN instead of 0, and a GradScaler skips the step either way.
MASKED_BY_PRODUCT = {"relu", "relu6", "hardtanh"}


def _run(lib, case, value, dtype_name, upstream):
    x = lib.tensor(value, dtype=getattr(lib, dtype_name), requires_grad=True)
    try:
        y = CASES[case](lib, x)
        if not y.requires_grad:
            return y.item(), "no grad"
        y.backward(lib.tensor(upstream, dtype=y.dtype))
        return y.item(), None if x.grad is None else x.grad.item()
    except Exception as e:  # the same error type is part of parity
        return "error", type(e).__name__


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-6 * max(1.0, abs(a))
    return a == b


@pytest.mark.parametrize("case", sorted(CASES))
def test_value_and_gradient_match_torch_at_edge_points(torch, case):
    upstreams = (1.0, -2.0) if case in MASKED_BY_PRODUCT else (1.0, -2.0, math.inf)
    differ = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype_name in ("float32", "float64"):
            for upstream in upstreams:
                for v in EDGES:
                    ours = _run(ember, case, v, dtype_name, upstream)
                    theirs = _run(torch, case, v, dtype_name, upstream)
                    if not (_same(ours[0], theirs[0]) and _same(ours[1], theirs[1])):
                        differ.append(f"{dtype_name} x={v} grad_out={upstream}: ember {ours}, "
                                      f"torch {theirs}")
    assert not differ, "\n".join(differ)


def _value_and_grad(fn, value, upstream=1.0, dtype=ember.float32):
    x = ember.tensor([value], dtype=dtype, requires_grad=True)
    y = fn(x)
    y.backward(ember.full_like(y, upstream))
    return y.item(), x.grad.item()


@pytest.mark.parametrize("fn", [ember.relu, ember.nn.functional.relu6,
                                ember.nn.functional.hardtanh, ember.nn.functional.elu,
                                lambda x: ember.nn.functional.threshold(x, 0.5, -1.0),
                                ember.nn.functional.hardshrink, ember.nn.functional.softshrink,
                                lambda x: ember.maximum(x, ember.zeros_like(x))])
def test_a_nan_input_stays_nan_and_passes_the_gradient(fn):
    # PyTorch's rule in each: the gradient is dropped only where a comparison holds
    # (x <= 0, x <= threshold, |x| <= lambda ...), which NaN never satisfies
    value, grad = _value_and_grad(fn, math.nan)
    assert math.isnan(value) and grad == 1.0


def test_sign_of_nan_is_zero_and_its_gradient_zero_even_for_infinite_grads():
    assert ember.sign(ember.tensor([math.nan, -0.0, -2.0])).tolist() == [0.0, 0.0, -1.0]
    assert not ember.sign(ember.tensor([-0.0])).signbit().item()
    assert _value_and_grad(ember.sign, math.inf, math.inf) == (1.0, 0.0)
    assert _value_and_grad(lambda x: x ** 0, 2.0, math.inf) == (1.0, 0.0)


def test_leaky_relu_gradient_keeps_the_slope_in_float64():
    _, grad = _value_and_grad(lambda x: ember.nn.functional.leaky_relu(x, 0.1), -1.0,
                              dtype=ember.float64)
    assert grad == 0.1


def test_sinc_gradient_is_zero_where_the_square_underflows():
    assert _value_and_grad(ember.sinc, 1e-30) == (1.0, 0.0)
