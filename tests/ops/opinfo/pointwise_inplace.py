"""Op-table entries for `ember/ops/pointwise_inplace.py`: in-place comparisons, logic and
bitwise ops, and the top-level function forms of in-place and Tensor-only ops."""
import numpy as np

from . import OpInfo, Sample, away_from, integers, positive, randn, register


def bools(rng, *shape):
    return np.asarray(rng.random(shape) < 0.5)


def _named(res):
    """The result with its grad_fn's name, so parity compares the node PyTorch records."""
    return res, None if res.grad_fn is None else type(res.grad_fn).__name__


def _on_clone(name):
    return lambda lib, x, *a, **k: _named(getattr(x.clone(), name)(*a, **k))


# ---- comparisons ----------------------------------------------------------------------------------
def _compare_samples(rng):
    """No ties in the differentiable samples: a perturbation would flip them."""
    a = randn(rng, 3, 4)
    return [
        Sample((a, a + rng.choice([-0.5, 0.5], a.shape))),
        Sample((randn(rng, 3, 4), 0.25)),
        Sample((randn(rng, 3, 4), randn(rng, 4))),
        Sample((randn(rng, 2, 3), randn(rng) + 5.0)),
        Sample((randn(rng, 4, 3), randn(rng, 4, 3) + 0.5), noncontig=(0, 1)),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4)), grad=(1,)),
        Sample((integers(rng, 3, 4), 0.5)),
        Sample((integers(rng, 3, 4), randn(rng, 3, 4)), grad=()),
        Sample((integers(rng, 3, 4).astype(np.uint8), integers(rng, 4))),
        Sample((bools(rng, 3, 4), True)),
        Sample((np.array([np.nan, 1.0, np.inf]), np.array([np.nan, 1.0, np.inf])), grad=()),
        Sample((randn(rng, 3), randn(rng, 2, 3)), raises=RuntimeError),
        Sample((randn(rng, 3), "a"), raises=TypeError),
    ]


_STEMS = {"eq_": "eq", "ne_": "ne", "lt_": "lt", "le_": "le", "gt_": "gt", "ge_": "ge"}
_ALIASES = {"gt_": ("greater_",), "ge_": ("greater_equal_",), "lt_": ("less_",),
            "le_": ("less_equal_",), "ne_": ("not_equal_",), "eq_": ()}

for _name, _aliases in _ALIASES.items():
    register(OpInfo(_name, _on_clone(_name), _compare_samples))
    for _alias in _aliases:
        register(OpInfo(_alias, _on_clone(_alias), lambda rng: _compare_samples(rng)[:3]))


def _compare_on_view(lib, x, y):
    base = x * 1
    base[1].lt_(y)
    return _named(base)


register(OpInfo("lt_", _compare_on_view, lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 4) + 0.3))],
                variant="view"))


# ---- logic and bitwise ------------------------------------------------------------------------------
def _logical_samples(rng):
    return [
        Sample((bools(rng, 3, 4), bools(rng, 3, 4))),
        Sample((bools(rng, 3, 4), bools(rng, 4))),
        Sample((randn(rng, 3, 4).round(), integers(rng, 3, 4, low=0, high=2)), grad=()),
        Sample((integers(rng, 3, 4, low=0, high=2), randn(rng, 3, 4).round())),
        Sample((bools(rng, 4, 3), bools(rng, 4, 3)), noncontig=(0, 1)),
        Sample((bools(rng, 3), bools(rng, 2, 3)), raises=RuntimeError),
        Sample((bools(rng, 3), True), raises=TypeError),
    ]


def _logical_keeps_graph(name):
    """PyTorch records nothing for a logical in-place op: the graph and gradient pass
    through as before (even on a leaf that requires grad)."""
    def call(lib, x, y):
        z = x * 2
        getattr(z, name)(y)
        leaf = x.detach().clone().requires_grad_()
        getattr(leaf, name)(y)
        return _named(z), leaf, z._version
    return call


for _name in ("logical_and_", "logical_or_", "logical_xor_"):
    register(
        OpInfo(_name, _on_clone(_name), _logical_samples, grad=False),
        OpInfo(_name, _logical_keeps_graph(_name),
               lambda rng: [Sample((randn(rng, 3, 4).round(), bools(rng, 3, 4)))],
               variant="graph", grad=False, gradgrad=False),
    )


def _bitwise_samples(shift=False):
    def samples(rng):
        r = (lambda *s: integers(rng, *s, low=0, high=5)) if shift else (lambda *s: integers(rng, *s))
        out = [
            Sample((integers(rng, 3, 4, low=0, high=64), r(3, 4))),
            Sample((integers(rng, 3, 4, low=0, high=64), r(4))),
            Sample((integers(rng, 3, 4, low=0, high=64), 3)),
            Sample((integers(rng, 2, 3, low=0, high=64).astype(np.int32), r(2, 3))),
            Sample((integers(rng, 2, 3, low=0, high=64).astype(np.uint8), 2)),
            Sample((integers(rng, 4, 3, low=0, high=64), r(4, 3)), noncontig=(0, 1)),
            Sample((integers(rng, 3), randn(rng, 3)), raises=RuntimeError),
            Sample((integers(rng, 3), 2.5), raises=RuntimeError),
            Sample((integers(rng, 3), r(2, 3)), raises=RuntimeError),
        ]
        if not shift:
            out += [Sample((bools(rng, 3, 4), bools(rng, 3, 4))),
                    Sample((bools(rng, 3), r(3)), raises=RuntimeError)]
        return out
    return samples


for _name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
              "bitwise_right_shift_"):
    register(OpInfo(_name, _on_clone(_name), _bitwise_samples("shift" in _name), grad=False))


# ---- aliases and top-level function forms ----------------------------------------------------------
def _unary_samples(gen=randn):
    def samples(rng):
        return [Sample((gen(rng, 3, 4),)), Sample((gen(rng),)),
                Sample((gen(rng, 4, 3),), noncontig=(0,))]
    return samples


def _kinked(rng, *shape):
    return away_from(rng, *shape)


def _top_level(name):
    return lambda lib, x, *a, **k: _named(getattr(lib, name)(x.clone(), *a, **k))


register(
    OpInfo("absolute_", _on_clone("absolute_"), _unary_samples(_kinked)),
    OpInfo("negative_", _on_clone("negative_"), _unary_samples()),
    OpInfo("negative_", _top_level("negative_"), _unary_samples(), variant="function"),
    OpInfo("abs_", _top_level("abs_"), _unary_samples(_kinked)),
    OpInfo("neg_", _top_level("neg_"), _unary_samples()),
    OpInfo("exp_", _top_level("exp_"), _unary_samples()),
    OpInfo("log_", _top_level("log_"), _unary_samples(positive)),
    OpInfo("sqrt_", _top_level("sqrt_"), _unary_samples(positive)),
    OpInfo("sin_", _top_level("sin_"), _unary_samples()),
    OpInfo("cos_", _top_level("cos_"), _unary_samples()),
    OpInfo("tanh_", _top_level("tanh_"), _unary_samples()),
    OpInfo("sigmoid_", _top_level("sigmoid_"), _unary_samples()),
    OpInfo("relu_", _top_level("relu_"), _unary_samples(_kinked)),
    OpInfo("relu_", _top_level("relu_"), lambda rng: [Sample((integers(rng, 3, 4),))],
           variant="int", grad=False),
    OpInfo("clamp_", _top_level("clamp_"),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(-0.5, 0.5)), -0.5, 0.5)),
                        Sample((away_from(rng, 3, 4, points=(-0.5,)),), {"min": -0.5})]),
    OpInfo("clip_", _top_level("clip_"),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(-0.5, 0.5)), -0.5, 0.5))]),
    OpInfo("clamp_min_", _top_level("clamp_min_"),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.2,)), 0.2))]),
    OpInfo("clamp_max_", _top_level("clamp_max_"),
           lambda rng: [Sample((away_from(rng, 3, 4, points=(0.2,)), 0.2))]),
    OpInfo("zero_", _top_level("zero_"), _unary_samples()),
    OpInfo("fill_", _top_level("fill_"),
           lambda rng: [Sample((randn(rng, 3, 4), 1.5)), Sample((randn(rng, 3, 4), randn(rng))),
                        Sample((integers(rng, 3), 2))]),
    OpInfo("index_put_", lambda lib, x, i, v: _named(lib.index_put_(x.clone(), (i,), v)),
           lambda rng: [Sample((randn(rng, 4, 3), np.array([0, 2]), randn(rng, 2, 3)))]),
    OpInfo("detach", lambda lib, x: (lib.detach(x), lib.detach(x).requires_grad),
           _unary_samples(), grad=False),
    OpInfo("detach_", lambda lib, x: (lambda z: (lib.detach_(z), z.requires_grad, z.grad_fn))(x * 2),
           _unary_samples(), grad=False),
)


def _fill_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 1.5)),
        Sample((randn(rng, 3, 4), randn(rng))),
        Sample((randn(rng, 3, 4), np.array(2.5, dtype=np.float32)), grad=(0,)),
        Sample((integers(rng, 3, 4), 2.5)),
        Sample((integers(rng, 3, 4), randn(rng)), grad=()),
        Sample((randn(rng, 0, 2), 1.0)),
        Sample((randn(rng, 3), randn(rng, 2)), raises=RuntimeError),
        Sample((randn(rng, 3), "a"), raises=TypeError),
    ]


register(OpInfo("fill", lambda lib, x, v: _named(lib.fill(x, v)), _fill_samples))


def _clamp_bound_samples(rng):
    x = away_from(rng, 3, 4, points=(0.3,))
    tied = x.copy()
    tied[0, :2] = 0.3
    return [Sample((x, np.full(4, 0.3))), Sample((x, 0.3)),
            Sample((tied, np.full((3, 4), 0.3)), grad=(0, 1)),  # ties: parity of the split
            Sample((np.array([np.nan, 1.0, -1.0]), np.zeros(3)), grad=(0, 1))]


register(
    OpInfo("clamp_min", lambda lib, x, m: _named(lib.clamp_min(x, m)), _clamp_bound_samples,
           variant="node", grad=False),
    OpInfo("clamp_max", lambda lib, x, m: _named(x.clamp_max(m)), _clamp_bound_samples,
           variant="node", grad=False),
)


# ---- predicates ----------------------------------------------------------------------------------
def _one_element(rng):
    return [
        Sample((np.array([1.5]),)), Sample((np.array(0),)), Sample((np.array([[False]]),)),
        Sample((np.array(np.nan),)), Sample((np.array([-0.0]),)), Sample((np.array(0j),)),
        Sample((np.array([1, 2]),), raises=RuntimeError),
        Sample((np.zeros(0),), raises=RuntimeError),
        Sample((1,), raises=TypeError),
    ]


def _dtypes(rng):
    return [Sample((np.ones(2, t),)) for t in (np.uint8, np.int8, np.int64, np.bool_, np.float16,
                                                np.float32, np.complex64)] + [
        Sample((3,), raises=TypeError)]


register(
    OpInfo("is_nonzero", lambda lib, x: lib.is_nonzero(x), _one_element, grad=False),
    OpInfo("is_nonzero", lambda lib, x: x.is_nonzero(), lambda rng: _one_element(rng)[:2],
           variant="method", grad=False),
    OpInfo("is_same_size", lambda lib, x, y: lib.is_same_size(x, y),
           lambda rng: [Sample((randn(rng, 2, 3), integers(rng, 2, 3))),
                        Sample((randn(rng, 2, 3), randn(rng, 3, 2))),
                        Sample((randn(rng), randn(rng, 1))),
                        Sample((randn(rng, 2), 2), raises=TypeError)], grad=False),
    OpInfo("is_same_size", lambda lib, x, y: x.is_same_size(y),
           lambda rng: [Sample((randn(rng, 2, 3), randn(rng, 2, 3)))], variant="method",
           grad=False),
    OpInfo("is_signed", lambda lib, x: lib.is_signed(x), _dtypes, grad=False),
    OpInfo("is_signed", lambda lib, x: (lib.is_floating_point(x), lib.is_complex(x)), _dtypes,
           variant="float_complex", grad=False),
)
