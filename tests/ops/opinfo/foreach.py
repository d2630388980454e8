"""Op-table entries for the `torch._foreach_*` tensor-list forms (ember/ops/foreach.py): each
applies its per-tensor op to every tensor of a list. An in-place form is checked on clones
of its inputs (so gradcheck reaches them through the clones) and returns the list it wrote."""
from . import OpInfo, Sample, randn, register

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
# inputs kept inside each op's domain, away from its kinks (abs at 0, rounding at integers)
_POSITIVE = {"log", "log10", "log2", "log1p", "rsqrt", "sqrt", "reciprocal", "lgamma", "acos",
             "asin"}


def _in_place(name):
    def call(lib, tensors, *args, **kwargs):
        tensors = [t.clone() for t in tensors]
        out = getattr(lib, f"_foreach_{name}_")(tensors, *args, **kwargs)
        assert out is None or all(a is b for a, b in zip(out, tensors))
        return tuple(tensors)
    return call


def _out_of_place(name):
    return lambda lib, *args, **kwargs: getattr(lib, f"_foreach_{name}")(*args, **kwargs)


def _two(rng, name=""):
    a, b = randn(rng, 3, 2), randn(rng, 4)
    if name in _POSITIVE:
        a, b = abs(a) * 0.4 + 0.3, abs(b) * 0.4 + 0.3
    else:  # (kinks and jumps at 0 and the integers: stay between them)
        a, b = a * 0.2 + 0.45, b * 0.2 - 0.45
    return [a, b]


def _unary_samples(name):
    return lambda rng: [Sample((_two(rng, name),))]


def _binary_samples(name):
    def samples(rng):
        xs, ys = _two(rng), [randn(rng, 3, 2), randn(rng, 4)]
        # a 0-dim tensor operand: PyTorch's add, sub and clamps read it with .item(), which
        # a meta tensor refuses; mul and div use it as a tensor
        one = [Sample((xs, randn(rng)), grad=(0,))] if name in ("mul", "div") else []
        return [Sample((xs, ys)), Sample((xs, 1.5)), Sample((xs, [0.5, -2.0])), *one,
                Sample((xs, ys[:1]), raises=RuntimeError)]
    return samples


def _pair_samples(rng):
    return [Sample((_two(rng), [randn(rng, 3, 2), randn(rng, 4)]))]


def _pair_samples_no_grad(rng):
    return [Sample((_two(rng), [randn(rng, 3, 2), randn(rng, 4)]), grad=())]


def _pow_samples(rng):
    xs = [abs(x) + 0.5 for x in _two(rng)]
    return [Sample((xs, [abs(y) + 0.5 for y in _two(rng)])), Sample((xs, 2.5)),
            Sample((xs, [1.5, 3.0]))]


def _ternary_samples(rng):
    xs, t1 = _two(rng), [randn(rng, 3, 2), randn(rng, 4)]
    t2 = [abs(t) + 1.0 for t in _two(rng)]
    return [Sample((xs, t1, t2)), Sample((xs, t1, t2), {"value": 0.5}),
            Sample((xs, t1, t2, [2.0, -1.0]))]


def _lerp_samples(rng):
    xs, ends = _two(rng), [randn(rng, 3, 2), randn(rng, 4)]
    return [Sample((xs, ends, 0.3)), Sample((xs, ends, [randn(rng, 3, 2), randn(rng, 4)]))]


ENTRIES = []
for _name in _UNARY:
    ENTRIES += [OpInfo(f"_foreach_{_name}", _out_of_place(_name), _unary_samples(_name)),
                OpInfo(f"_foreach_{_name}_", _in_place(_name), _unary_samples(_name))]
for _name in ("add", "sub", "mul", "div", "clamp_min", "clamp_max"):
    ENTRIES += [OpInfo(f"_foreach_{_name}", _out_of_place(_name), _binary_samples(_name)),
                OpInfo(f"_foreach_{_name}_", _in_place(_name), _binary_samples(_name))]
for _name in ("maximum", "minimum"):  # (tensor lists only, as PyTorch's take; PyTorch's
    # in-place forms save the input they overwrite, so their gradients are not compared)
    ENTRIES += [OpInfo(f"_foreach_{_name}", _out_of_place(_name), _pair_samples),
                OpInfo(f"_foreach_{_name}_", _in_place(_name), _pair_samples_no_grad)]
ENTRIES += [OpInfo("_foreach_pow", _out_of_place("pow"), _pow_samples),
            OpInfo("_foreach_pow_", _in_place("pow"), _pow_samples)]
for _name in ("addcmul", "addcdiv"):
    ENTRIES += [OpInfo(f"_foreach_{_name}", _out_of_place(_name), _ternary_samples),
                OpInfo(f"_foreach_{_name}_", _in_place(_name), _ternary_samples)]
ENTRIES += [
    OpInfo("_foreach_lerp", _out_of_place("lerp"), _lerp_samples),
    OpInfo("_foreach_lerp_", _in_place("lerp"), _lerp_samples),
    OpInfo("_foreach_norm", _out_of_place("norm"),
           lambda rng: [Sample((_two(rng),)), Sample((_two(rng), 1)), Sample((_two(rng), 3.0))]),
    OpInfo("_foreach_powsum", _out_of_place("powsum"),
           lambda rng: [Sample(([abs(x) + 0.5 for x in _two(rng)],), grad=()),
                        Sample(([abs(x) + 0.5 for x in _two(rng)], 3), grad=())],
           grad=False, gradgrad=False),  # (PyTorch has no derivative for it)
    OpInfo("_foreach_max", _out_of_place("max"), lambda rng: [Sample((_two(rng),))]),
    OpInfo("_foreach_mm", _out_of_place("mm"),
           lambda rng: [Sample(([randn(rng, 2, 3), randn(rng, 4, 2)],
                                [randn(rng, 3, 2), randn(rng, 2, 1)]))]),
    OpInfo("_foreach_clone", _out_of_place("clone"), lambda rng: [Sample((_two(rng),))]),
    OpInfo("_foreach_copy_", _in_place("copy"), _pair_samples_no_grad, grad=False,
           gradgrad=False),  # (nor for this)
    OpInfo("_foreach_zero_", _in_place("zero"), lambda rng: [Sample((_two(rng),))]),
]
register(*ENTRIES)
