"""Op-table entries for `ember/ops/normalization/`: batch/layer/group/instance/RMS/local
response norm, normalize, dropout variants, embedding, embedding_bag, one_hot."""
import numpy as np

from . import F, OpInfo, Sample, integers, positive, randn, register, top


def reg(name, call, samples, **kw):
    register(OpInfo(name, call, samples, **kw))


# ---- batch norm ----------------------------------------------------------------------------------
def bn_samples(rng):
    """(input, running_mean, running_var, weight, bias): training updates the running
    buffers (compared after the call), eval uses them."""
    def stats(c):
        return randn(rng, c) * 0.1, positive(rng, c)
    rm, rv = stats(4)
    rm3, rv3 = stats(3)
    return [
        Sample((randn(rng, 5, 4), rm, rv, randn(rng, 4), randn(rng, 4)),
               {"training": True}, grad=(0, 3, 4)),
        Sample((randn(rng, 3, 4, 5), rm, rv, randn(rng, 4), randn(rng, 4)),
               {"training": True, "momentum": 0.3, "eps": 1e-3}, grad=(0, 3, 4)),
        Sample((randn(rng, 2, 3, 2, 3), rm3, rv3, randn(rng, 3), randn(rng, 3)),
               {"training": False}, grad=(0, 3, 4)),
        Sample((randn(rng, 2, 3, 2, 3), None, None), {"training": True}, grad=(0,)),
        Sample((randn(rng, 2, 3, 4), rm3, rv3), {"training": True}, grad=(0,)),
        Sample((randn(rng, 1, 3), rm3, rv3), {"training": True}, grad=(0,), raises=ValueError),
        Sample((randn(rng, 2, 4, 3), rm3, rv3), {"training": True}, grad=(0,),
               raises=RuntimeError),
    ]


reg("batch_norm", F("batch_norm"), bn_samples, covers=("nn.functional.batch_norm",))


def bn_native_form(rng):
    return [Sample((randn(rng, 3, 4, 2), randn(rng, 4), randn(rng, 4), randn(rng, 4) * 0.1,
                    positive(rng, 4), True, 0.1, 1e-5, False), grad=(0, 1, 2))]


reg("batch_norm", top("batch_norm"), bn_native_form, variant="torch_form")


def native_bn(lib, *args):
    out, mean, invstd = lib.native_batch_norm(*args)
    return out, mean.detach(), invstd.detach()


reg("native_batch_norm", native_bn, lambda rng: [
    Sample((randn(rng, 3, 4, 2), randn(rng, 4), randn(rng, 4), None, None, True, 0.1, 1e-5)),
    Sample((randn(rng, 3, 4), randn(rng, 4), randn(rng, 4), randn(rng, 4), positive(rng, 4),
            False, 0.1, 1e-5), grad=(0, 1, 2))], grad=False, gradgrad=False)


# ---- layer / group / instance / RMS norm ----------------------------------------------------------
reg("layer_norm", top("layer_norm"), lambda rng: [
    Sample((randn(rng, 3, 5), (5,), randn(rng, 5), randn(rng, 5))),
    Sample((randn(rng, 2, 3, 4), [3, 4])),
    Sample((randn(rng, 2, 3, 4), (4,), randn(rng, 4)), {"eps": 1e-3}),
    Sample((randn(rng, 2, 3, 4), (3, 4), None, randn(rng, 3, 4))),
    Sample((randn(rng, 4, 3), (3,), randn(rng, 3), randn(rng, 3)), noncontig=(0,)),
    Sample((randn(rng, 2, 3), (4,)), raises=RuntimeError),
], covers=("nn.functional.layer_norm",))


def native_ln(lib, x, shape, w, b, eps):
    out, mean, rstd = lib.native_layer_norm(x, shape, w, b, eps)
    return out, mean.detach(), rstd.detach()


reg("native_layer_norm", native_ln, lambda rng: [
    Sample((randn(rng, 2, 3, 4), (4,), randn(rng, 4), randn(rng, 4), 1e-5))],
    grad=False, gradgrad=False)

reg("group_norm", top("group_norm"), lambda rng: [
    Sample((randn(rng, 2, 4, 3), 2, randn(rng, 4), randn(rng, 4))),
    Sample((randn(rng, 3, 6, 4), 3)),
    Sample((randn(rng, 2, 4, 2, 3), 4, randn(rng, 4)), {"eps": 1e-3}),
    Sample((randn(rng, 2, 4, 3), 3), raises=RuntimeError),
], covers=("nn.functional.group_norm",))


def native_gn(lib, x, w, b, n, c, hxw, g, eps):
    out, mean, rstd = lib.native_group_norm(x, w, b, n, c, hxw, g, eps)
    return out, mean.detach(), rstd.detach()


reg("native_group_norm", native_gn, lambda rng: [
    Sample((randn(rng, 2, 4, 3), randn(rng, 4), randn(rng, 4), 2, 4, 3, 2, 1e-5))],
    grad=False, gradgrad=False)


def in_samples(rng):
    rm, rv = randn(rng, 3) * 0.1, positive(rng, 3)
    return [
        Sample((randn(rng, 2, 3, 5),)),
        Sample((randn(rng, 2, 3, 2, 3),), {"weight": randn(rng, 3), "bias": randn(rng, 3)},
               grad=(0, "weight", "bias")),
        Sample((randn(rng, 2, 3, 5), rm, rv), {"use_input_stats": True, "momentum": 0.2},
               grad=(0,)),
        Sample((randn(rng, 2, 3, 5), rm, rv), {"use_input_stats": False}, grad=(0,)),
        Sample((randn(rng, 2, 3, 1),), raises=ValueError),
    ]


reg("instance_norm", F("instance_norm"), in_samples, covers=("nn.functional.instance_norm",))
reg("instance_norm", lambda lib, x, w, b: lib.instance_norm(x, w, b, None, None, True, 0.1,
                                                            1e-5, False),
    lambda rng: [Sample((randn(rng, 2, 3, 4), randn(rng, 3), randn(rng, 3)))],
    variant="torch_form")

reg("rms_norm", top("rms_norm"), lambda rng: [
    Sample((randn(rng, 3, 5), (5,), randn(rng, 5))),
    Sample((randn(rng, 2, 3, 4), [3, 4])),
    Sample((randn(rng, 2, 3, 4), (4,), None, 1e-3)),
    Sample((randn(rng, 2, 3), (4,)), raises=RuntimeError),
], covers=("nn.functional.rms_norm",))

reg("local_response_norm", F("local_response_norm"), lambda rng: [
    Sample((randn(rng, 2, 5, 3), 3), {"alpha": 0.1}),
    Sample((randn(rng, 2, 5, 3, 2), 2)),
    Sample((randn(rng, 1, 4, 2, 2, 2), 4), {"alpha": 0.5, "beta": 0.5, "k": 2.0}),
    Sample((randn(rng, 2, 3), 2), raises=ValueError),
])

reg("normalize", F("normalize"), lambda rng: [
    Sample((randn(rng, 3, 4),)),
    Sample((randn(rng, 2, 3, 4),), {"p": 1, "dim": -1}),
    Sample((positive(rng, 2, 3),), {"p": 3.0, "dim": 0}),
    Sample((randn(rng, 3, 4),), {"p": float("inf"), "dim": 1}),
])


# ---- dropout ------------------------------------------------------------------------------------
def drop_samples(train_kw, shapes=((4, 3, 5), (2, 3, 4, 5))):
    def samples(rng):
        return [
            Sample((randn(rng, *shapes[0]),), {train_kw: True, "p": 0.3}),
            Sample((randn(rng, *shapes[1]),), {train_kw: True}),
        ]
    return samples


_SHAPES = {"dropout1d": ((4, 3, 5), (3, 5)), "dropout2d": ((2, 3, 4, 5), (4, 3, 5)),
           "dropout3d": ((2, 3, 2, 4, 5), (3, 2, 4, 5))}


def deterministic_drop(train_kw, shape=(4, 3, 5)):
    """Eval mode (identity), p=0 and p=1: the same values in both libraries."""
    def samples(rng):
        return [
            Sample((randn(rng, *shape),), {train_kw: False, "p": 0.3}),
            Sample((randn(rng, *shape),), {train_kw: True, "p": 0.0}),
            Sample((randn(rng, *shape),), {train_kw: True, "p": 1.0}),
            Sample((randn(rng, 3),), {"p": 1.5}, raises=ValueError),
        ]
    return samples


for _name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
              "feature_alpha_dropout"):
    reg(_name, F(_name), drop_samples("training", *[_SHAPES[_name]] if _name in _SHAPES else ()),
        variant="random", parity="meta", grad=False,
        gradgrad=False, covers=(f"nn.functional.{_name}",))
    if _name not in ("dropout1d", "dropout3d"):
        reg(_name, F(_name), deterministic_drop("training", (2, 4, 3, 5) if _name == "dropout2d"
                                                else (4, 3, 5)), variant="deterministic")

reg("dropout", lambda lib, x, p, t: lib.dropout(x, p, t), lambda rng: [
    Sample((randn(rng, 3, 4), 0.5, False)), Sample((randn(rng, 3, 4), 0.4, True))],
    variant="torch_form", parity="meta", grad=False, gradgrad=False)
for _name in ("dropout_", "alpha_dropout_", "feature_alpha_dropout_", "feature_dropout",
              "feature_dropout_"):
    reg(_name, (lambda n: lambda lib, x, p, t: getattr(lib, n)(x.clone(), p, t))(_name),
        lambda rng: [Sample((randn(rng, 3, 4, 2), 0.5, False)),
                     Sample((randn(rng, 3, 4, 2), 0.4, True))],
        parity="meta", grad=False, gradgrad=False)


# ---- embedding ------------------------------------------------------------------------------------
def emb_samples(rng):
    return [
        Sample((integers(rng, 2, 3, low=0, high=6), randn(rng, 6, 3))),
        Sample((integers(rng, 7, low=0, high=5), randn(rng, 5, 4))),
        Sample((np.array(2), randn(rng, 5, 4))),
        Sample((integers(rng, 2, 3, low=0, high=6), randn(rng, 6, 3)), {"max_norm": 1.0},
               grad=()),
        Sample((integers(rng, 2, 3, low=0, high=6), randn(rng, 6, 3)),
               {"max_norm": 0.5, "norm_type": 1.0}, grad=()),
        Sample((np.array([1, 6]), randn(rng, 6, 3)), raises=IndexError),
        Sample((np.array([1.0]), randn(rng, 6, 3)), raises=RuntimeError),
    ]


reg("embedding", F("embedding"), emb_samples, covers=("nn.functional.embedding",))
# padding_idx and scale_grad_by_freq change the gradient on purpose: parity only
reg("embedding", F("embedding"), lambda rng: [
    Sample((np.array([[0, 2, 0], [1, 4, 2]]), randn(rng, 5, 3)), {"padding_idx": 0}),
    Sample((np.array([[0, 2, 0], [1, 4, 2]]), randn(rng, 5, 3)), {"padding_idx": -1}),
    Sample((np.array([[0, 2, 0], [1, 4, 2]]), randn(rng, 5, 3)),
           {"scale_grad_by_freq": True}),
    Sample((np.array([[0, 2, 0], [1, 4, 2]]), randn(rng, 5, 3)),
           {"scale_grad_by_freq": True, "padding_idx": 2}),
], variant="padding_freq", grad=False, gradgrad=False)
reg("embedding", lambda lib, w, i: lib.embedding(w, i), lambda rng: [
    Sample((randn(rng, 6, 3), integers(rng, 2, 3, low=0, high=6)))], variant="torch_form")


def bag_samples(rng):
    idx = np.array([1, 2, 4, 4, 3, 0, 5])
    off = np.array([0, 2, 2, 5])
    out = []
    for mode in ("sum", "mean", "max"):
        out += [
            Sample((idx, randn(rng, 6, 3), off), {"mode": mode}),
            Sample((integers(rng, 3, 4, low=0, high=6), randn(rng, 6, 3)), {"mode": mode}),
            Sample((idx, randn(rng, 6, 3), np.array([0, 3, 3, 7])),
                   {"mode": mode, "include_last_offset": True}),
        ]
    out += [
        Sample((idx, randn(rng, 6, 3), off, None, 2, False, "sum", False, randn(rng, 7))),
        Sample((idx, randn(rng, 6, 3), off), {"mode": "mean", "per_sample_weights":
                                              randn(rng, 7)}, raises=NotImplementedError),
        Sample((idx, randn(rng, 6, 3)), raises=ValueError),
    ]
    return out


reg("embedding_bag", F("embedding_bag"), bag_samples)
reg("embedding_bag", F("embedding_bag"), lambda rng: [
    Sample((np.array([1, 2, 4, 4, 3, 0, 5]), randn(rng, 6, 3), np.array([0, 2, 2, 5])),
           {"mode": m, "padding_idx": 4}) for m in ("sum", "mean", "max")],
    variant="padding_freq", grad=False, gradgrad=False)

reg("one_hot", F("one_hot"), lambda rng: [
    Sample((np.array([1, 3, 0]),)),
    Sample((integers(rng, 2, 3, low=0, high=4), 6)),
    Sample((np.array([-1, 2]),), raises=RuntimeError),
    Sample((np.array([1, 4]), 3), raises=RuntimeError),
    Sample((np.array([1.0, 2.0]),), raises=RuntimeError),
], grad=False, gradgrad=False)
