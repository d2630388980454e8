"""Op-table entries for `ember/ops/activation.py`: activations (functional and top-level,
in-place forms included) and the softmax family."""
import numpy as np

from . import F, OpInfo, Sample, away_from, randn, register, top


def on_clone(fn):
    """An in-place call made on a clone, so gradcheck and parity see an out-of-place op."""
    def call(lib, x, *args, **kwargs):
        return fn(lib, x.clone(), *args, **kwargs)
    return call


def pointwise(points=(0.0,), **kwargs):
    """Shapes that matter for an elementwise op: matrix, 3-D, 0-dim, empty, non-contiguous;
    values kept away from the function's kinks."""
    def samples(rng):
        def x(*shape):
            return np.asarray(away_from(rng, *shape, points=points) * 2)
        return [
            Sample((x(3, 4),), dict(kwargs)),
            Sample((x(2, 3, 4),), dict(kwargs)),
            Sample((x(),), dict(kwargs)),
            Sample((x(0, 3),), dict(kwargs)),
            Sample((x(4, 3),), dict(kwargs), noncontig=(0,)),
        ]
    return samples


def with_kwargs(points, *kwarg_sets):
    def samples(rng):
        out = []
        for kw in kwarg_sets:
            out += pointwise(points, **kw)(rng)[:2]
        return out
    return samples


def reg(name, call, samples, **kw):
    register(OpInfo(name, call, samples, **kw))


# ---- relu family and friends ----------------------------------------------------------------
reg("relu", F("relu"), with_kwargs((0.0,), {}, {"inplace": False}), variant="functional")
reg("relu_", on_clone(lambda lib, x: lib.nn.functional.relu(x, inplace=True)),
    pointwise((0.0,)), variant="functional_inplace")
reg("relu6", F("relu6"), pointwise((0.0, 6.0)), covers=("nn.functional.relu6",))
reg("relu6_", on_clone(lambda lib, x: lib.nn.functional.relu6(x, inplace=True)),
    pointwise((0.0, 6.0)))
reg("leaky_relu", F("leaky_relu"), with_kwargs((0.0,), {}, {"negative_slope": 0.2}))
reg("leaky_relu_", on_clone(F("leaky_relu_")), with_kwargs((0.0,), {}, {"negative_slope": 0.3}))
reg("elu", F("elu"), with_kwargs((0.0,), {}, {"alpha": 0.5}))
reg("elu_", on_clone(F("elu_")), with_kwargs((0.0,), {}, {"alpha": 1.5}))
reg("selu", top("selu"), pointwise((0.0,)), covers=("nn.functional.selu",))
reg("selu_", on_clone(top("selu_")), pointwise((0.0,)))
reg("celu", top("celu"), with_kwargs((0.0,), {}, {"alpha": 0.7}))
reg("celu_", on_clone(top("celu_")), with_kwargs((0.0,), {}, {"alpha": 0.7}))
reg("gelu", F("gelu"), with_kwargs((), {}, {"approximate": "tanh"}, {"approximate": "none"}))
reg("gelu", F("gelu"), lambda rng: [Sample((randn(rng, 3),), {"approximate": "fast"},
                                           raises=RuntimeError)], variant="error")
reg("silu", F("silu"), pointwise(()))
reg("mish", F("mish"), pointwise(()))
reg("hardtanh", F("hardtanh"), with_kwargs((-1.0, 1.0, -0.5, 2.0), {},
                                           {"min_val": -0.5, "max_val": 2.0}))
reg("hardtanh_", on_clone(F("hardtanh_")), pointwise((-1.0, 1.0)))
reg("hardtanh", F("hardtanh"), lambda rng: [Sample((randn(rng, 3),), {"min_val": 2.0,
                                                                      "max_val": 1.0},
                                                   raises=ValueError)], variant="error")
reg("hardsigmoid", F("hardsigmoid"), pointwise((-3.0, 3.0)))
reg("hardswish", F("hardswish"), pointwise((-3.0, 3.0)))
reg("softplus", F("softplus"), with_kwargs((), {}, {"beta": 2.0, "threshold": 3.0}))
reg("softsign", F("softsign"), pointwise(()))
reg("tanhshrink", F("tanhshrink"), pointwise(()))
reg("softshrink", F("softshrink"), with_kwargs((-0.5, 0.5, -0.3, 0.3), {}, {"lambd": 0.3}))
reg("softshrink", F("softshrink"), lambda rng: [Sample((randn(rng, 3),), {"lambd": -1.0},
                                                       raises=RuntimeError)], variant="error")
reg("hardshrink", top("hardshrink"), with_kwargs((-0.5, 0.5, -0.3, 0.3), {}, {"lambd": 0.3}),
    covers=("nn.functional.hardshrink",))
reg("hardshrink", lambda lib, x, **kw: x.hardshrink(**kw), pointwise((-0.5, 0.5)),
    variant="method")
reg("threshold", top("threshold"), lambda rng: [
    Sample((away_from(rng, 3, 4, points=(0.1,)), 0.1, 20.0)),
    Sample((away_from(rng, 2, 3, 4, points=(-0.5,)), -0.5, -3.0))])
reg("threshold_", on_clone(top("threshold_")), lambda rng: [
    Sample((away_from(rng, 3, 4, points=(0.1,)), 0.1, 20.0))])
reg("glu", F("glu"), lambda rng: [
    Sample((randn(rng, 3, 4),)), Sample((randn(rng, 4, 3),), {"dim": 0}),
    Sample((randn(rng, 2, 6, 2),), {"dim": 1}),
    Sample((randn(rng, 3, 3),), raises=RuntimeError)])
reg("logsigmoid", F("logsigmoid"), pointwise(()))


def prelu_samples(rng):
    return [
        Sample((away_from(rng, 2, 4, 3), rng.uniform(0.05, 0.5, 4))),
        Sample((away_from(rng, 2, 4), rng.uniform(0.05, 0.5, 1))),
        Sample((away_from(rng, 5), rng.uniform(0.05, 0.5, 1))),
        Sample((away_from(rng, 2, 3, 2, 2), rng.uniform(0.05, 0.5, 3))),
        Sample((randn(rng, 2, 4, 3), randn(rng, 3)), raises=RuntimeError),
    ]


reg("prelu", top("prelu"), prelu_samples, covers=("nn.functional.prelu",))
reg("prelu", lambda lib, x, w: x.prelu(w), prelu_samples, variant="method")


# rrelu: eval mode is deterministic (the mean slope); training draws random slopes
reg("rrelu", top("rrelu"), with_kwargs((0.0,), {}, {"lower": 0.2, "upper": 0.4}))
reg("rrelu", F("rrelu"), with_kwargs((0.0,), {"training": True}), variant="training",
    parity="meta", grad=False, gradgrad=False)
reg("rrelu_", on_clone(top("rrelu_")), pointwise((0.0,)))


# ---- softmax family -----------------------------------------------------------------------------
def softmax_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 1)),
        Sample((randn(rng, 3, 4), 0)),
        Sample((randn(rng, 2, 3, 4), -1)),
        Sample((randn(rng), 0)),
        Sample((randn(rng, 0, 3), 1)),
        Sample((randn(rng, 4, 3), 0), noncontig=(0,)),
        Sample((randn(rng, 3, 4) * 1e4, 1)),  # stable for large logits
    ]


reg("softmax", top("softmax"), softmax_samples, covers=("nn.functional.softmax",))
reg("softmax", lambda lib, x, d: x.softmax(d), softmax_samples, variant="method")
reg("softmax", lambda lib, x, d: lib.nn.functional.softmax(x, d, dtype=lib.float64),
    softmax_samples, variant="dtype")
reg("log_softmax", top("log_softmax"), softmax_samples, covers=("nn.functional.log_softmax",))
reg("log_softmax", lambda lib, x, d: x.log_softmax(d), softmax_samples, variant="method")
reg("softmin", F("softmin"), softmax_samples)
reg("gumbel_softmax", F("gumbel_softmax"), lambda rng: [
    Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4),), {"tau": 0.5, "hard": True}),
    Sample((randn(rng, 2, 3, 4),), {"dim": 1})], parity="meta", grad=False, gradgrad=False)
