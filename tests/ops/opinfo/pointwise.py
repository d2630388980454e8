"""Op-table entries for `ember/ops/pointwise/`: arithmetic, comparison, logic, elementwise
math, their aliases, in-place forms and Python operators."""
import numpy as np

from . import OpInfo, Sample, away_from, integers, positive, randn, register


def nonzero(rng, *shape):
    """Values of either sign, at least 0.5 away from zero (safe divisors)."""
    return np.asarray(rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape))


def bools(rng, *shape):
    return np.asarray(rng.random(shape) < 0.5)


# ---- sample sets ---------------------------------------------------------------------------------
def binary_samples(lhs=randn, rhs=randn, scalar=2.5):
    """Float operands: same shape, broadcasting, 0-dim, a Python number, non-contiguous,
    empty, one side requiring grad."""
    def samples(rng):
        return [
            Sample((lhs(rng, 3, 4), rhs(rng, 3, 4))),
            Sample((lhs(rng, 3, 1), rhs(rng, 4))),
            Sample((lhs(rng, 2, 3), rhs(rng))),
            Sample((lhs(rng), rhs(rng, 2, 3))),
            Sample((lhs(rng), rhs(rng))),
            Sample((lhs(rng, 3, 4), scalar)),
            Sample((lhs(rng, 4, 3), rhs(rng, 4, 3)), noncontig=(0, 1)),
            Sample((lhs(rng, 0, 3), rhs(rng, 3))),
            Sample((lhs(rng, 2, 1, 3), rhs(rng, 4, 3)), grad=(1,)),
            Sample((lhs(rng, 2, 3), rhs(rng, 4, 1, 2)), raises=RuntimeError),  # no broadcast
        ]
    return samples


def binary_int_samples(scalar=3, rhs_low=-5, rhs_high=6, float_scalar=2.5, mixed=True,
                       with_bool=True):
    """Integer and bool operands, with type promotion (no gradients)."""
    def samples(rng):
        def r(*shape):
            x = integers(rng, *shape, low=rhs_low, high=rhs_high)
            return x
        out = [
            Sample((integers(rng, 3, 4), r(3, 4))),
            Sample((integers(rng, 3, 1), r(4))),
            Sample((integers(rng, 3, 4), scalar)),
            Sample((integers(rng, 2, 3).astype(np.int32), r().astype(np.int64))),
            Sample((integers(rng, 2, 3).astype(np.uint8) + 5, r(2, 3).astype(np.int8))),
            Sample((integers(rng, 0, 2), r(2))),
        ]
        if mixed:
            out += [
                Sample((integers(rng, 3, 4), float_scalar)),      # int tensor, float number
                Sample((integers(rng, 3, 4), randn(rng, 3, 4))),  # int tensor, float tensor
                Sample((integers(rng, 3, 4), randn(rng))),        # 0-dim float wins its category
            ]
        if with_bool:
            out += [Sample((bools(rng, 3, 4), r(3, 4))), Sample((bools(rng, 3, 4), True))]
        return out
    return samples


def unary_samples(gen=randn):
    def samples(rng):
        return [
            Sample((gen(rng, 3, 4),)),
            Sample((gen(rng),)),
            Sample((gen(rng, 4, 3),), noncontig=(0,)),
            Sample((gen(rng, 5),), noncontig=(0,)),
            Sample((gen(rng, 0, 3),)),
        ]
    return samples


def unary_int_samples(low=-5, high=6):
    def samples(rng):
        return [
            Sample((integers(rng, 3, 4, low=low, high=high),)),
            Sample((integers(rng, low=low, high=high),)),
            Sample((integers(rng, 2, 3, low=low, high=high).astype(np.int32),)),
            Sample((integers(rng, 0, 2, low=low, high=high),)),
        ]
    return samples


def few(samples, *keep):
    """A subset of a sample set (for aliases, methods and in-place forms)."""
    def pick(rng):
        s = samples(rng)
        return [s[i] for i in keep]
    return pick


# ---- arithmetic ----------------------------------------------------------------------------------
def _binary_family(name, samples, int_samples, method=True, inplace=True, aliases=(),
                   inplace_aliases=(), **kw):
    fn = lambda lib, x, y, **k: getattr(lib, name)(x, y, **k)
    entries = [OpInfo(name, fn, samples, **kw)]
    if int_samples is not None:
        entries.append(OpInfo(name, fn, int_samples, variant="int", grad=False))
    if method:
        entries.append(OpInfo(name, lambda lib, x, y, **k: getattr(x, name)(y, **k),
                              few(samples, 0, 1, 5), variant="method", **kw))
    if inplace:
        # in place on a clone: same shape, broadcast other, a number, a non-contiguous self
        entries.append(OpInfo(name + "_", lambda lib, x, y, **k: getattr(x.clone(), name + "_")(y, **k),
                              few(samples, 0, 2, 5, 6), **kw))
    for alias in aliases:
        entries.append(OpInfo(alias, lambda lib, x, y, alias=alias, **k: getattr(lib, alias)(x, y, **k),
                              few(samples, 0, 1), **kw))
        entries.append(OpInfo(alias, lambda lib, x, y, alias=alias, **k: getattr(x, alias)(y, **k),
                              few(samples, 5), variant="method", **kw))
    for alias in inplace_aliases:
        entries.append(OpInfo(alias, lambda lib, x, y, alias=alias, **k: getattr(x.clone(), alias)(y, **k),
                              few(samples, 0, 2), **kw))
    return entries


def _alpha_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 4)), {"alpha": 2}),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4)), {"alpha": -0.5}),
            Sample((integers(rng, 3, 4), integers(rng, 3, 4)), {"alpha": 3})]


def _remainder_samples(rng):
    """a % b away from the jumps of floor(a / b)."""
    def dividend(b):
        shape = np.shape(b)
        return (integers(rng, *shape, low=-3, high=3) + rng.uniform(0.2, 0.8, shape)) * b

    b, b1, b4 = nonzero(rng, 3, 4), nonzero(rng, 4), nonzero(rng, 4, 3)
    b0 = nonzero(rng)
    return [
        Sample((dividend(b), b)),
        Sample((dividend(np.broadcast_to(b1, (3, 4))), b1)),  # broadcast divisor
        Sample((dividend(np.full((3, 4), 1.5)), 1.5)),
        Sample((dividend(np.broadcast_to(b0, (3, 4))), b0)),
        Sample((dividend(b4), b4), noncontig=(0, 1)),
        Sample((np.zeros((0, 3)), nonzero(rng, 3))),
        # number % tensor (PyTorch has no derivative for it)
        Sample((1.7, positive(rng, 3, 4)), grad=()),
    ]


def _remainder_int(rng):
    return [Sample((integers(rng, 3, 4), nonzero(rng, 3, 4).round().astype(np.int64))),
            Sample((integers(rng, 3, 4), -3)),
            Sample((integers(rng, 3, 4), 2.5)),
            Sample((integers(rng, 3, 4), np.array([1, 0, 2, 3])), raises=RuntimeError)]


def _floor_divide_samples(rng):
    return [
        Sample((randn(rng, 3, 4) * 4, nonzero(rng, 3, 4)), grad=()),
        Sample((randn(rng, 3, 1) * 4, nonzero(rng, 4)), grad=()),
        Sample((randn(rng, 3, 4) * 4, -1.5), grad=()),
        Sample((randn(rng, 4, 3) * 4, nonzero(rng, 4, 3)), noncontig=(0,), grad=()),
        Sample((integers(rng, 3, 4), nonzero(rng, 3, 4).round().astype(np.int64))),
        Sample((integers(rng, 3, 4), -3)),
        Sample((integers(rng, 3, 4), 2.5)),
        Sample((integers(rng, 0, 4), 2)),
        Sample((integers(rng, 3, 4), np.zeros(4, np.int64)), raises=RuntimeError),
    ]


def _div_mode_samples(rng):
    out = []
    for mode in ("trunc", "floor"):
        out += [
            Sample((randn(rng, 3, 4) * 4, nonzero(rng, 3, 4)), {"rounding_mode": mode}, grad=()),
            Sample((randn(rng, 3, 4) * 4, -1.5), {"rounding_mode": mode}, grad=()),
            Sample((integers(rng, 3, 4), nonzero(rng, 4).round().astype(np.int64)),
                   {"rounding_mode": mode}),
            Sample((integers(rng, 3, 4), -2), {"rounding_mode": mode}),
        ]
    out.append(Sample((randn(rng, 3), 2.0), {"rounding_mode": "round"}, raises=RuntimeError))
    return out


def _div_mode_grad(rng):
    """Rounding division has a zero gradient (PyTorch records DivBackward2)."""
    return [Sample((randn(rng, 3, 4) * 4, nonzero(rng, 3, 4)), {"rounding_mode": "trunc"}),
            Sample((randn(rng, 3, 4) * 4, 2.0), {"rounding_mode": "floor"})]


def _pow_samples(rng):
    return [
        Sample((positive(rng, 3, 4), randn(rng, 3, 4))),
        Sample((positive(rng, 3, 1), randn(rng, 4))),
        Sample((positive(rng, 2, 3), 2)),
        Sample((positive(rng, 2, 3), 0.5)),
        Sample((positive(rng, 2, 3), -1.5)),
        Sample((randn(rng, 2, 3), 3)),                      # negative base, integer exponent
        Sample((randn(rng, 2, 3), 0)),
        Sample((np.array([0.0, 1.0, -2.0]), 2.0)),            # base zero
        Sample((1.7, randn(rng, 3, 4))),                     # number ** tensor
        Sample((positive(rng, 4, 3), randn(rng, 4, 3)), noncontig=(0, 1)),
        Sample((positive(rng, 0, 3), randn(rng, 3))),
        Sample((positive(rng), randn(rng, 2, 3))),
    ]


def _pow_int(rng):
    return [
        Sample((integers(rng, 3, 4), integers(rng, 3, 4, low=0, high=4))),
        Sample((integers(rng, 3, 4), 2)),
        Sample((integers(rng, 3, 4), 2.0)),
        Sample((integers(rng, 3, 4, low=1, high=5), 0.5)),
        Sample((2, integers(rng, 3, 4, low=0, high=5))),
        Sample((integers(rng, 3, 4), -2), raises=RuntimeError),
        # a negative exponent in a tensor is computed, not refused: 1, +-1 or 0
        Sample((np.arange(-3, 4).repeat(3), np.tile([-3, -2, -1], 7))),
        Sample((2, np.array([-2, -1, 0, 3]))),
    ]


def _rsub_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
            Sample((randn(rng, 3, 1), randn(rng, 4))),
            Sample((randn(rng, 3, 4), 2.5)),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4)), {"alpha": 2}),
            Sample((integers(rng, 3, 4), integers(rng, 3, 4)), {"alpha": 2}),
            Sample((integers(rng, 3, 4), 3))]


def _sub_bool(rng):
    return [Sample((bools(rng, 3), bools(rng, 3)), raises=RuntimeError)]


register(
    *_binary_family("add", binary_samples(), binary_int_samples()),
    OpInfo("add", lambda lib, x, y, **k: lib.add(x, y, **k), _alpha_samples, variant="alpha"),
    *_binary_family("sub", binary_samples(), binary_int_samples(with_bool=False), aliases=("subtract",),
                    inplace_aliases=("subtract_",)),
    OpInfo("sub", lambda lib, x, y, **k: lib.sub(x, y, **k),
           lambda rng: _alpha_samples(rng) + _sub_bool(rng), variant="alpha"),
    *_binary_family("mul", binary_samples(), binary_int_samples(), aliases=("multiply",),
                    inplace_aliases=("multiply_",)),
    *_binary_family("div", binary_samples(rhs=nonzero), binary_int_samples(rhs_low=1),
                    aliases=("divide", "true_divide"), inplace_aliases=("divide_", "true_divide_")),
    OpInfo("div", lambda lib, x, y, **k: lib.div(x, y, **k), _div_mode_samples,
           variant="rounding", grad=False),
    OpInfo("div", lambda lib, x, y, **k: lib.div(x, y, **k), _div_mode_grad,
           variant="rounding_grad", gradgrad=False),
    OpInfo("div_", lambda lib, x, y, **k: x.clone().div_(y, **k), _div_mode_samples,
           variant="rounding", grad=False),
    OpInfo("floor_divide", lambda lib, x, y: lib.floor_divide(x, y), _floor_divide_samples, grad=False),
    OpInfo("floor_divide", lambda lib, x, y: x.floor_divide(y), few(_floor_divide_samples, 0, 5),
           variant="method", grad=False),
    OpInfo("floor_divide_", lambda lib, x, y: x.clone().floor_divide_(y),
           few(_floor_divide_samples, 0, 5), grad=False),
    OpInfo("remainder", lambda lib, x, y: lib.remainder(x, y), _remainder_samples),
    OpInfo("remainder", lambda lib, x, y: lib.remainder(x, y), _remainder_int, variant="int", grad=False),
    OpInfo("remainder", lambda lib, x, y: x.remainder(y), few(_remainder_samples, 0, 2), variant="method"),
    OpInfo("remainder_", lambda lib, x, y: x.clone().remainder_(y), few(_remainder_samples, 0, 2)),
    OpInfo("rsub", lambda lib, x, y, **k: lib.rsub(x, y, **k), _rsub_samples),
    OpInfo("pow", lambda lib, x, y: lib.pow(x, y), _pow_samples),
    # an exponent of exactly zero: PyTorch's derivative masks it, so its second derivative
    # in the exponent is not the finite difference's (PyTorch's gradgradcheck fails too)
    OpInfo("pow", lambda lib, x, y: lib.pow(x, y),
           lambda rng: [Sample((positive(rng, 3), np.array([0.0, 1.5, -1.0])))],
           variant="zero_exponent", gradgrad=False),
    OpInfo("pow", lambda lib, x, y: lib.pow(x, y), _pow_int, variant="int", grad=False),
    OpInfo("pow", lambda lib, x, y: x.pow(y), few(_pow_samples, 0, 2, 3), variant="method"),
    OpInfo("pow_", lambda lib, x, y: x.clone().pow_(y), few(_pow_samples, 0, 2, 3)),
)


# ---- Python operators (the reflected ones have their own code) ----------------------------------
def _operator_samples(rng):
    return [Sample((randn(rng, 3, 4), nonzero(rng, 3, 4))),
            Sample((randn(rng, 3, 1), nonzero(rng, 4))),
            Sample((integers(rng, 3, 4), nonzero(rng, 3, 4).round().astype(np.int64)))]


def _inplace_operator_samples(rng):
    return [Sample((randn(rng, 3, 4), nonzero(rng, 3, 4))),
            Sample((randn(rng, 3, 4), nonzero(rng, 4))),
            Sample((randn(rng, 3, 4), 1.5))]


def _reflected_samples(rng):
    return [Sample((nonzero(rng, 3, 4),)), Sample((positive(rng),)),
            Sample((integers(rng, 3, 4, low=1, high=4),))]


def _operator(name, fn, samples, **kw):
    return OpInfo(name, fn, samples, variant="operator", **kw)


def _iop(fn):
    def call(lib, x, y):
        x = x.clone()
        x = fn(x, y)
        return x
    return call


def _iadd(x, y):
    x += y
    return x


def _isub(x, y):
    x -= y
    return x


def _imul(x, y):
    x *= y
    return x


def _idiv(x, y):
    x /= y
    return x


def _ipow(x, y):
    x **= y
    return x


register(
    _operator("add", lambda lib, x, y: x + y, _operator_samples),
    _operator("sub", lambda lib, x, y: x - y, _operator_samples),
    _operator("mul", lambda lib, x, y: x * y, _operator_samples),
    _operator("div", lambda lib, x, y: x / y, _operator_samples),
    _operator("floor_divide", lambda lib, x, y: x // y, few(_operator_samples, 2), grad=False),
    _operator("remainder", lambda lib, x, y: x % y, few(_operator_samples, 2), grad=False),
    _operator("pow", lambda lib, x, y: x.abs() ** y, few(_operator_samples, 0, 1)),
    OpInfo("add", lambda lib, x: 1.5 + x, _reflected_samples, variant="radd"),
    OpInfo("sub", lambda lib, x: 1.5 - x, _reflected_samples, variant="rsub"),
    OpInfo("mul", lambda lib, x: 1.5 * x, _reflected_samples, variant="rmul"),
    OpInfo("div", lambda lib, x: 1.5 / x, _reflected_samples, variant="rdiv"),
    OpInfo("div", lambda lib, x: 3 / x, _reflected_samples, variant="rdiv_int"),
    OpInfo("floor_divide", lambda lib, x: 7 // x, few(_reflected_samples, 2), variant="rfloordiv",
           grad=False),
    OpInfo("remainder", lambda lib, x: 7 % x, few(_reflected_samples, 2), variant="rmod", grad=False),
    OpInfo("pow", lambda lib, x: 1.5 ** x, _reflected_samples, variant="rpow"),
    OpInfo("neg", lambda lib, x: -x, unary_samples(), variant="operator"),
    OpInfo("abs", lambda lib, x: abs(x), few(unary_samples(lambda r, *s: away_from(r, *s)), 0, 1),
           variant="operator"),
    OpInfo("add_", _iop(_iadd), _inplace_operator_samples, variant="operator"),
    OpInfo("sub_", _iop(_isub), _inplace_operator_samples, variant="operator"),
    OpInfo("mul_", _iop(_imul), _inplace_operator_samples, variant="operator"),
    OpInfo("div_", _iop(_idiv), _inplace_operator_samples, variant="operator"),
    OpInfo("pow_", lambda lib, x, y: _ipow(x.abs(), y), _inplace_operator_samples, variant="operator"),
    OpInfo("add_", _iop(_iadd), lambda rng: [
        Sample((randn(rng, 3, 1), randn(rng, 3, 4)), raises=RuntimeError),  # self cannot broadcast
        Sample((integers(rng, 3), randn(rng, 3)), raises=RuntimeError),       # float into a Long
    ], variant="errors", grad=False),
)


# ---- unary math ----------------------------------------------------------------------------------
def _unary(name, gen=randn, int_samples=True, inplace=True, aliases=(), **kw):
    samples = unary_samples(gen)
    entries = [OpInfo(name, lambda lib, x: getattr(lib, name)(x), samples, **kw),
               OpInfo(name, lambda lib, x: getattr(x, name)(), few(samples, 0), variant="method", **kw)]
    if int_samples:
        entries.append(OpInfo(name, lambda lib, x: getattr(lib, name)(x),
                              unary_int_samples(**(int_samples if isinstance(int_samples, dict) else {})),
                              variant="int", grad=False))
    if inplace:
        entries.append(OpInfo(name + "_", lambda lib, x: getattr(x.clone(), name + "_")(), few(samples, 0, 1, 2), **kw))
    for alias in aliases:
        entries.append(OpInfo(alias, lambda lib, x, alias=alias: getattr(lib, alias)(x), few(samples, 0), **kw))
        entries.append(OpInfo(alias, lambda lib, x, alias=alias: getattr(x, alias)(), few(samples, 1),
                              variant="method", **kw))
    return entries


def _kinked(rng, *shape):
    return away_from(rng, *shape)


register(
    *_unary("neg", aliases=("negative",)),
    OpInfo("neg", lambda lib, x: lib.neg(x), lambda rng: [Sample((bools(rng, 3),), raises=RuntimeError)],
           variant="bool", grad=False),
    *_unary("abs", _kinked, aliases=("absolute",)),
    *_unary("exp"),
    *_unary("log", positive, int_samples={"low": 1, "high": 9}),
    OpInfo("log", lambda lib, x: lib.log(x), lambda rng: [Sample((np.array([0.0, -1.0, 2.0]),), grad=())],
           variant="domain"),
    *_unary("sqrt", positive, int_samples={"low": 0, "high": 9}),
    OpInfo("sqrt", lambda lib, x: lib.sqrt(x), lambda rng: [Sample((np.array([0.0, -1.0, 4.0]),), grad=())],
           variant="domain"),
    *_unary("sin"),
    *_unary("cos"),
    *_unary("tanh"),
    *_unary("sigmoid"),
    OpInfo("sigmoid", lambda lib, x: lib.sigmoid(x),
           lambda rng: [Sample((np.array([-800.0, -30.0, 0.0, 30.0, 800.0]),))], variant="extreme"),
    *_unary("relu", _kinked),
    OpInfo("relu", lambda lib, x: lib.relu(x), lambda rng: [Sample((bools(rng, 3),), raises=RuntimeError)],
           variant="bool", grad=False),
    *_unary("sign", _kinked, inplace=False),
    *_unary("sgn", _kinked, inplace=False),
)


def _complex(rng, *shape):
    return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


def _complex_samples(rng):
    return [Sample((_complex(rng, 3, 4),), grad=()), Sample((_complex(rng),), grad=()),
            Sample((np.array([0j, 3 + 4j, -2j]),), grad=())]


register(
    OpInfo("conj", lambda lib, x: lib.conj(x), unary_samples()),
    OpInfo("conj", lambda lib, x: x.conj(), few(unary_samples(), 0), variant="method"),
    OpInfo("conj", lambda lib, x: lib.conj(x), _complex_samples, variant="complex", grad=False),
    OpInfo("sgn", lambda lib, x: lib.sgn(x), _complex_samples, variant="complex", grad=False),
    OpInfo("abs", lambda lib, x: lib.abs(x), _complex_samples, variant="complex", grad=False),
    OpInfo("exp", lambda lib, x: lib.exp(x), _complex_samples, variant="complex", grad=False),
    OpInfo("mul", lambda lib, x, y: x * y,
           lambda rng: [Sample((_complex(rng, 3, 4), _complex(rng, 4)), grad=()),
                        Sample((_complex(rng, 3, 4), randn(rng, 3, 4)), grad=()),
                        Sample((randn(rng, 3, 4), 2j), grad=())], variant="complex", grad=False),
    OpInfo("sign", lambda lib, x: lib.sign(x), lambda rng: [Sample((_complex(rng, 3),), grad=(),
                                                                   raises=RuntimeError)],
           variant="complex", grad=False),
    OpInfo("sign_", lambda lib, x: x.clone().sign_(), few(unary_samples(_kinked), 0, 1)),
    OpInfo("sgn_", lambda lib, x: x.clone().sgn_(), few(unary_samples(_kinked), 0, 1)),
)


# ---- clamp -------------------------------------------------------------------------------------
def _clamp_samples(rng):
    kinks = (-0.5, 0.6)
    x = lambda *s: away_from(rng, *s, points=kinks)
    return [
        Sample((x(3, 4), -0.5, 0.6)),
        Sample((x(3, 4),), {"min": -0.5}),
        Sample((x(3, 4),), {"max": 0.6}),
        Sample((x(3, 4), 0.6, -0.5)),            # min > max: every element is max
        Sample((x(), -0.5, 0.6)),
        Sample((x(4, 3), -0.5, 0.6), noncontig=(0,)),
        Sample((x(0, 3), -0.5, 0.6)),
        Sample((x(3, 4), -1, 1)),                # int bounds on a float tensor
    ]


def _clamp_tensor_samples(rng):
    """Tensor bounds (broadcast), values at least 0.05 from every bound."""
    mn, mx = rng.uniform(-1.0, -0.2, (3, 4)), rng.uniform(0.2, 1.0, (4,))
    a = rng.uniform(-2.0, 2.0, (3, 4))
    a = np.where(np.abs(a - mn) < 0.05, a - 0.1, a)
    a = np.where(np.abs(a - mx) < 0.05, a + 0.1, a)
    return [
        Sample((a, mn, mx)),
        Sample((a,), {"min": mn}),
        Sample((a,), {"max": mx}),
        Sample((a, None, mx)),
        Sample((a, mn[:1], mx)),
        Sample((a, mx, mn)),  # min > max
    ]


def _clamp_int(rng):
    return [Sample((integers(rng, 3, 4), -2, 3)),
            Sample((integers(rng, 3, 4), -1.5, 2.5)),   # float bounds promote an int tensor
            Sample((integers(rng, 3, 4), integers(rng, 4, low=-5, high=0), integers(rng, 3, 1, low=0, high=5))),
            Sample((randn(rng, 3),), raises=RuntimeError)]


register(
    OpInfo("clamp", lambda lib, x, *a, **k: lib.clamp(x, *a, **k), _clamp_samples),
    OpInfo("clamp", lambda lib, x, *a, **k: lib.clamp(x, *a, **k), _clamp_tensor_samples, variant="tensor"),
    OpInfo("clamp", lambda lib, x, *a, **k: lib.clamp(x, *a, **k), _clamp_int, variant="int", grad=False),
    OpInfo("clamp", lambda lib, x, *a, **k: x.clamp(*a, **k), few(_clamp_samples, 0, 1), variant="method"),
    OpInfo("clip", lambda lib, x, *a, **k: lib.clip(x, *a, **k), few(_clamp_samples, 0, 2)),
    OpInfo("clip", lambda lib, x, *a, **k: x.clip(*a, **k), few(_clamp_samples, 1), variant="method"),
    OpInfo("clamp_", lambda lib, x, *a, **k: x.clone().clamp_(*a, **k), few(_clamp_samples, 0, 1, 5)),
    OpInfo("clamp_", lambda lib, x, *a, **k: x.clone().clamp_(*a, **k), few(_clamp_tensor_samples, 0),
           variant="tensor"),
    OpInfo("clip_", lambda lib, x, *a, **k: x.clone().clip_(*a, **k), few(_clamp_samples, 0)),
    OpInfo("clamp_min", lambda lib, x, m: lib.clamp_min(x, m),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.3,)), 0.3)),
                        Sample((integers(rng, 3, 4), 1)),
                        Sample((away_from(rng, 3, 4, points=(0.3,)), np.full(4, 0.3)))]),
    OpInfo("clamp_max", lambda lib, x, m: lib.clamp_max(x, m),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.3,)), 0.3)),
                        Sample((integers(rng, 3, 4), 1)),
                        Sample((away_from(rng, 3, 4, points=(0.3,)), np.full(4, 0.3)))]),
    OpInfo("clamp_min", lambda lib, x, m: x.clamp_min(m),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.3,)), 0.3))], variant="method"),
    OpInfo("clamp_max", lambda lib, x, m: x.clamp_max(m),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.3,)), 0.3))], variant="method"),
    OpInfo("clamp_min_", lambda lib, x, m: x.clone().clamp_min_(m),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.3,)), 0.3))]),
    OpInfo("clamp_max_", lambda lib, x, m: x.clone().clamp_max_(m),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.3,)), 0.3))]),
)


# ---- where, maximum, minimum ----------------------------------------------------------------------
def _where_samples(rng):
    return [
        Sample((bools(rng, 3, 4), randn(rng, 3, 4), randn(rng, 3, 4))),
        Sample((bools(rng, 3, 1), randn(rng, 4), randn(rng, 3, 4))),
        Sample((bools(rng, 3, 4), randn(rng, 3, 4), 0.0)),
        Sample((bools(rng, 3, 4), 1.5, randn(rng, 4))),
        Sample((bools(rng, 3, 4), 1.0, 0.0)),
        Sample((bools(rng, 3, 4), integers(rng, 3, 4), randn(rng, 3, 4))),
        Sample((bools(rng, 3, 4), integers(rng, 3, 4), 2)),
        Sample((bools(rng), randn(rng, 2, 3), randn(rng))),
        Sample((bools(rng, 4, 3), randn(rng, 4, 3), randn(rng, 4, 3)), noncontig=(0, 1, 2)),
        Sample((bools(rng, 0, 3), randn(rng, 0, 3), randn(rng, 3))),
        Sample((integers(rng, 3), randn(rng, 3), randn(rng, 3)), raises=RuntimeError),
        Sample((bools(rng, 3), randn(rng, 4), randn(rng, 3)), raises=RuntimeError),
        Sample((bools(rng, 2, 3), randn(rng, 3), randn(rng, 4, 1, 2)), raises=RuntimeError),
    ]


def _where_method(rng):
    return [Sample((randn(rng, 3, 4), bools(rng, 3, 4), randn(rng, 3, 4))),
            Sample((randn(rng, 3, 4), bools(rng, 4), 0.0))]


def _where_nonzero(rng):
    return [Sample((bools(rng, 3, 4),)), Sample((integers(rng, 3, 4, low=0, high=2),))]


def _max_ties(rng):
    """Ties split the gradient; the first derivative jumps there, so no gradgradcheck."""
    a, b = randn(rng, 3, 4), randn(rng, 3, 4)
    b[0, :2] = a[0, :2]
    return [Sample((a, b)), Sample((np.array([1.0, 2.0, 3.0]), 2.0))]


def _max_samples(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
        Sample((randn(rng, 3, 1), randn(rng, 4))),
        Sample((randn(rng, 2, 3), randn(rng))),
        Sample((randn(rng, 4, 3), randn(rng, 4, 3)), noncontig=(0,)),
        Sample((randn(rng, 0, 3), randn(rng, 3))),
        Sample((np.array([1.0, np.nan, 2.0]), np.array([np.nan, 0.0, 3.0])), grad=()),
    ]


def _max_int(rng):
    return [Sample((integers(rng, 3, 4), integers(rng, 3, 4))),
            Sample((integers(rng, 3, 4), randn(rng, 4))),
            Sample((bools(rng, 3), bools(rng, 3)))]


register(
    OpInfo("where", lambda lib, c, x, y: lib.where(c, x, y), _where_samples),
    OpInfo("where", lambda lib, x, c, y: x.where(c, y), _where_method, variant="method"),
    OpInfo("where", lambda lib, c: lib.where(c), _where_nonzero, variant="nonzero", grad=False),
    OpInfo("maximum", lambda lib, x, y: lib.maximum(x, y), _max_samples),
    OpInfo("maximum", lambda lib, x, y: lib.maximum(x, y), _max_int, variant="int", grad=False),
    OpInfo("maximum", lambda lib, x, y: lib.maximum(x, y), few(_max_ties, 0), variant="ties", gradgrad=False),
    OpInfo("minimum", lambda lib, x, y: lib.minimum(x, y), few(_max_ties, 0), variant="ties", gradgrad=False),
    OpInfo("maximum", lambda lib, x, y: x.maximum(y), few(_max_samples, 0), variant="method"),
    OpInfo("minimum", lambda lib, x, y: lib.minimum(x, y), _max_samples),
    OpInfo("minimum", lambda lib, x, y: lib.minimum(x, y), _max_int, variant="int", grad=False),
    OpInfo("minimum", lambda lib, x, y: x.minimum(y), few(_max_samples, 0), variant="method"),
)


# ---- comparison and logic ------------------------------------------------------------------------
def _compare_samples(rng):
    a = randn(rng, 3, 4)
    b = randn(rng, 3, 4)
    b[1] = a[1]  # equal elements
    return [
        Sample((a, b)),
        Sample((randn(rng, 3, 1), randn(rng, 4))),
        Sample((randn(rng, 2, 3), 0.25)),
        Sample((randn(rng, 2, 3), randn(rng))),
        Sample((integers(rng, 3, 4), integers(rng, 4))),
        Sample((integers(rng, 3, 4), 0.5)),
        Sample((integers(rng, 3, 4), randn(rng, 3, 4))),
        Sample((bools(rng, 3, 4), True)),
        Sample((randn(rng, 4, 3), randn(rng, 4, 3)), noncontig=(0, 1)),
        Sample((randn(rng, 0, 3), randn(rng, 3))),
        Sample((np.array([np.nan, 1.0, np.inf]), np.array([np.nan, 1.0, np.inf]))),
        Sample((randn(rng, 3), randn(rng, 4)), raises=RuntimeError),
    ]


_COMPARE_ALIASES = {"gt": ("greater", "__gt__"), "ge": ("greater_equal", "__ge__"),
                    "lt": ("less", "__lt__"), "le": ("less_equal", "__le__"),
                    "ne": ("not_equal", "__ne__"), "eq": (None, "__eq__")}
_OPERATOR_FN = {"__gt__": lambda x, y: x > y, "__ge__": lambda x, y: x >= y,
                "__lt__": lambda x, y: x < y, "__le__": lambda x, y: x <= y,
                "__ne__": lambda x, y: x != y, "__eq__": lambda x, y: x == y}

for _name, (_alias, _dunder) in _COMPARE_ALIASES.items():
    register(
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(lib, n)(x, y), _compare_samples, grad=False),
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(x, n)(y), few(_compare_samples, 0, 2),
               variant="method", grad=False),
        OpInfo(_name, lambda lib, x, y, f=_OPERATOR_FN[_dunder]: f(x, y), few(_compare_samples, 1, 2, 5),
               variant="operator", grad=False),
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(lib, n)(x, y, out=lib.empty(0, dtype=lib.bool)),
               few(_compare_samples, 0), variant="out", grad=False),
    )
    if _alias:
        register(
            OpInfo(_alias, lambda lib, x, y, n=_alias: getattr(lib, n)(x, y), few(_compare_samples, 0, 2),
                   grad=False),
            OpInfo(_alias, lambda lib, x, y, n=_alias: getattr(x, n)(y), few(_compare_samples, 1),
                   variant="method", grad=False),
        )


def _logical_samples(rng):
    return [
        Sample((bools(rng, 3, 4), bools(rng, 3, 4))),
        Sample((bools(rng, 3, 1), bools(rng, 4))),
        Sample((randn(rng, 3, 4).round(), integers(rng, 3, 4, low=0, high=2))),
        Sample((bools(rng), bools(rng, 2, 3))),
        Sample((bools(rng, 4, 3), bools(rng, 4, 3)), noncontig=(0, 1)),
        Sample((bools(rng, 0, 3), bools(rng, 3))),
        Sample((bools(rng, 3), bools(rng, 2)), raises=RuntimeError),
    ]


for _name in ("logical_and", "logical_or", "logical_xor"):
    register(
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(lib, n)(x, y), _logical_samples, grad=False),
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(x, n)(y), few(_logical_samples, 0),
               variant="method", grad=False),
    )

register(
    OpInfo("logical_not", lambda lib, x: lib.logical_not(x),
           lambda rng: [Sample((bools(rng, 3, 4),)), Sample((randn(rng, 3, 4).round(),)),
                        Sample((integers(rng, 2, 3, low=0, high=2),)), Sample((bools(rng),)),
                        Sample((bools(rng, 4, 3),), noncontig=(0,)), Sample((bools(rng, 0),))],
           grad=False),
    OpInfo("logical_not", lambda lib, x: x.logical_not(), lambda rng: [Sample((bools(rng, 3),))],
           variant="method", grad=False),
    OpInfo("logical_not_", lambda lib, x: x.clone().logical_not_(),
           lambda rng: [Sample((bools(rng, 3, 4),)), Sample((integers(rng, 3, low=0, high=2),))],
           grad=False),
)


# ---- bitwise ----------------------------------------------------------------------------------------
def _bitwise_samples(shift=False):
    def samples(rng):
        r = (lambda *s: integers(rng, *s, low=0, high=5)) if shift else (lambda *s: integers(rng, *s))
        out = [
            Sample((integers(rng, 3, 4, low=0, high=64), r(3, 4))),
            Sample((integers(rng, 3, 1, low=0, high=64), r(4))),
            Sample((integers(rng, 3, 4, low=0, high=64), 3)),
            Sample((integers(rng, 2, 3, low=0, high=64).astype(np.uint8), r(2, 3).astype(np.uint8))),
            Sample((integers(rng, 2, 3, low=0, high=64).astype(np.int32), r().astype(np.int64))),
            Sample((integers(rng, 4, 3, low=0, high=64), r(4, 3)), noncontig=(0, 1)),
            Sample((integers(rng, 0, 3), r(3))),
            Sample((randn(rng, 3), r(3)), raises=RuntimeError),
            Sample((integers(rng, 3), r(2)), raises=RuntimeError),
        ]
        if not shift:
            out.append(Sample((bools(rng, 3, 4), bools(rng, 3, 4))))
        return out
    return samples


_BITWISE_OPERATORS = {"bitwise_and": lambda x, y: x & y, "bitwise_or": lambda x, y: x | y,
                      "bitwise_xor": lambda x, y: x ^ y, "bitwise_left_shift": lambda x, y: x << y,
                      "bitwise_right_shift": lambda x, y: x >> y}
_BITWISE_REFLECTED = {"bitwise_and": lambda x: 6 & x, "bitwise_or": lambda x: 6 | x,
                      "bitwise_xor": lambda x: 6 ^ x, "bitwise_left_shift": lambda x: 6 << x,
                      "bitwise_right_shift": lambda x: 64 >> x}

for _name, _fn in _BITWISE_OPERATORS.items():
    _shift = "shift" in _name
    register(
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(lib, n)(x, y), _bitwise_samples(_shift), grad=False),
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(x, n)(y), few(_bitwise_samples(_shift), 0),
               variant="method", grad=False),
        OpInfo(_name, lambda lib, x, y, f=_fn: f(x, y), few(_bitwise_samples(_shift), 0, 2, 3),
               variant="operator", grad=False),
        OpInfo(_name, lambda lib, x, f=_BITWISE_REFLECTED[_name]: f(x),
               lambda rng: [Sample((integers(rng, 3, 4, low=0, high=5),))], variant="reflected",
               grad=False),
    )


def _iand(x, y):
    x &= y
    return x


def _ior(x, y):
    x |= y
    return x


def _ixor(x, y):
    x ^= y
    return x


register(
    OpInfo("bitwise_and", _iop(_iand), few(_bitwise_samples(), 0, 2, 8), variant="iand", grad=False),
    OpInfo("bitwise_or", _iop(_ior), few(_bitwise_samples(), 0, 2, 8), variant="ior", grad=False),
    OpInfo("bitwise_xor", _iop(_ixor), few(_bitwise_samples(), 0, 2, 8), variant="ixor", grad=False),
    OpInfo("bitwise_not", lambda lib, x: lib.bitwise_not(x),
           lambda rng: [Sample((integers(rng, 3, 4),)), Sample((bools(rng, 3, 4),)),
                        Sample((integers(rng, 3, 4).astype(np.uint8),)),
                        Sample((integers(rng),)), Sample((integers(rng, 4, 3),), noncontig=(0,)),
                        Sample((integers(rng, 0),)), Sample((randn(rng, 3),), raises=RuntimeError)],
           grad=False),
    OpInfo("bitwise_not", lambda lib, x: x.bitwise_not(), lambda rng: [Sample((integers(rng, 3),))],
           variant="method", grad=False),
    OpInfo("bitwise_not", lambda lib, x: ~x, lambda rng: [Sample((integers(rng, 3),)), Sample((bools(rng, 3),))],
           variant="operator", grad=False),
    OpInfo("bitwise_not_", lambda lib, x: x.clone().bitwise_not_(),
           lambda rng: [Sample((integers(rng, 3),)), Sample((bools(rng, 3),))], grad=False),
)


# ---- out= -------------------------------------------------------------------------------------------
def _out_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 4)), grad=()),
            Sample((integers(rng, 3, 4), integers(rng, 4)), grad=())]


def _with_out(name):
    def call(lib, x, y):
        out = lib.empty(0, dtype=x.dtype)
        res = getattr(lib, name)(x, y, out=out)
        return res, out, res is out
    return call


def _with_out_unary(name):
    def call(lib, x):
        out = lib.empty(2, 2, dtype=x.dtype)
        res = getattr(lib, name)(x, out=out)
        return res, out, res is out
    return call


register(*(OpInfo(n, _with_out(n), _out_samples, variant="out", grad=False)
           for n in ("add", "sub", "mul", "maximum", "minimum")))
register(
    OpInfo("div", _with_out("div"), few(_out_samples, 0), variant="out", grad=False),
    OpInfo("pow", _with_out("pow"),
           lambda rng: [Sample((positive(rng, 3, 4), randn(rng, 4)), grad=())], variant="out", grad=False),
    OpInfo("add", lambda lib, x, y: lib.add(x, y, out=lib.empty(3, 4, dtype=lib.int64)),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4)), grad=(), raises=RuntimeError)],
           variant="out_cast", grad=False),
    OpInfo("add", lambda lib, x, y: lib.add(x, y, out=lib.empty(3, 4)),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4)), raises=RuntimeError)],
           variant="out_grad", grad=False),
    *(OpInfo(n, _with_out_unary(n), lambda rng: [Sample((positive(rng, 3, 4),), grad=())],
             variant="out", grad=False)
      for n in ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg")),
)
