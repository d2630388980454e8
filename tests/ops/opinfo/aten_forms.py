"""Op-table entries for `ember/ops/aten_forms.py`: the top-level ATen forms (conv_tbc,
native_dropout, the deprecated norms, grid_sampler_2d/3d, the 4-tuple embedding_bag ...)."""
import warnings

import numpy as np

from . import F, OpInfo, Sample, integers, positive, randn, register, top


def reg(name, call, samples, **kw):
    register(OpInfo(name, call, samples, **kw))


def quiet(fn):
    """PyTorch warns once per process for the deprecated norms: the warning is not compared."""
    def call(lib, *args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *args, **kwargs)
    return call


reg("conv_tbc", top("conv_tbc"), lambda rng: [
    Sample((randn(rng, 5, 2, 3), randn(rng, 2, 3, 4), randn(rng, 4))),
    Sample((randn(rng, 4, 3, 2), randn(rng, 3, 2, 2), randn(rng, 2), 1)),
    Sample((randn(rng, 4, 3, 2), randn(rng, 3, 2, 2), randn(rng, 2)), {"pad": 2}),
    Sample((randn(rng, 4, 3), randn(rng, 3, 2, 2), randn(rng, 2)), raises=RuntimeError),
    Sample((randn(rng, 4, 3, 2), randn(rng, 3, 3, 2), randn(rng, 2)), raises=RuntimeError),
    Sample((randn(rng, 4, 3, 2), randn(rng, 3, 2, 2), randn(rng, 3)), raises=RuntimeError),
], covers=("nn.functional.conv_tbc",))
reg("conv_tbc", F("conv_tbc"), lambda rng: [
    Sample((randn(rng, 5, 2, 3), randn(rng, 2, 3, 4), randn(rng, 4), 1))], variant="F")


def dropout_call(lib, x, p, train):
    out, mask = lib.native_dropout(x, p, train)
    # the draws differ between libraries; what the mask does to the output does not
    return out * mask.logical_not(), mask.sum().clamp(max=0)


reg("native_dropout", dropout_call, lambda rng: [
    Sample((randn(rng, 3, 4), 0.3, True)), Sample((randn(rng, 3, 4), 0.3, None)),
    Sample((randn(rng, 3, 4), 0.3, False)), Sample((randn(rng, 5), 1.0, True)),
    Sample((randn(rng, 5), 1.5, True), raises=RuntimeError)])
reg("frobenius_norm", quiet(top("frobenius_norm")), lambda rng: [
    Sample((randn(rng, 3, 4, 2), [0, 1])), Sample((randn(rng, 3, 4), [1], True)),
    Sample((randn(rng, 3, 4), [])),
    Sample((randn(rng, 3, 4, 2), [0, 1, 2]), raises=RuntimeError)])
reg("nuclear_norm", quiet(top("nuclear_norm")), lambda rng: [
    Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 4), True)),
    Sample((randn(rng, 3, 4, 2), [0, 2])), Sample((randn(rng, 3, 4, 2), [0, 2], True)),
    Sample((randn(rng, 3, 4, 2), [1]), raises=RuntimeError)], atol=1e-4)
reg("norm_except_dim", top("norm_except_dim"), lambda rng: [
    Sample((randn(rng, 3, 4, 2),)), Sample((randn(rng, 3, 4, 2), 2, 1)),
    Sample((randn(rng, 3, 4, 2), 3, 2)), Sample((randn(rng, 3, 4, 2), 2, -1)),
    Sample((randn(rng, 3, 4, 2), 2, -2)), Sample((randn(rng, 3, 4), 2, 5), raises=IndexError)])


def native_norm_call(lib, x, *args):
    return lib.native_norm(x.to_sparse(), *args)


reg("native_norm", native_norm_call, lambda rng: [
    Sample((randn(rng, 3, 4),), grad=()), Sample((randn(rng, 3, 4), 3), grad=()),
    Sample((randn(rng, 3, 4), 2, [0, 1], False, None), grad=()),
    Sample((randn(rng, 3, 4), 2, [1], False, None), raises=RuntimeError)], grad=False)


def grid(rng, *shape):
    return rng.uniform(-1.1, 1.1, shape)


reg("grid_sampler_2d", top("grid_sampler_2d"), lambda rng: [
    Sample((randn(rng, 2, 2, 3, 4), grid(rng, 2, 3, 2, 2), 0, 0, False)),
    Sample((randn(rng, 1, 2, 3, 4), grid(rng, 1, 2, 2, 2), 2, 1, True)),
    Sample((randn(rng, 1, 1, 2, 2, 2), grid(rng, 1, 1, 1, 1, 3), 0, 0, False),
           raises=RuntimeError)])
reg("grid_sampler_3d", top("grid_sampler_3d"), lambda rng: [
    Sample((randn(rng, 2, 2, 2, 3, 2), grid(rng, 2, 2, 1, 2, 3), 0, 2, False)),
    Sample((randn(rng, 1, 1, 2, 2, 2), grid(rng, 1, 1, 1, 1, 3), 2, 0, False),
           raises=RuntimeError),
    Sample((randn(rng, 1, 1, 2, 2), grid(rng, 1, 1, 1, 2), 0, 0, False), raises=RuntimeError)])


def bag_samples(rng):
    idx, off = np.array([0, 1, 2, 1, 3]), np.array([0, 2, 2])
    return [
        Sample((randn(rng, 4, 3), idx, off)),
        Sample((randn(rng, 4, 3), idx, off, False, 1)),
        Sample((randn(rng, 4, 3), idx, off, False, 2)),
        Sample((randn(rng, 4, 3), idx, off, False, 0, False, None, False, 1)),
        Sample((randn(rng, 4, 3), idx, off, False, 1, False, None, False, 1)),
        Sample((randn(rng, 4, 3), idx, off, False, 2, False, None, True, None)),
        Sample((randn(rng, 4, 3), idx, off, False, 0, False, randn(rng, 5))),
    ]


reg("embedding_bag", top("embedding_bag"), bag_samples)


def renorm_call(lib, w, idx, max_norm, norm_type):
    w = w.detach().clone()
    return lib.embedding_renorm_(w, idx, max_norm, norm_type), w


reg("embedding_renorm_", renorm_call, lambda rng: [
    Sample((randn(rng, 4, 3) * 2, np.array([0, 2, 0]), 1.0, 2.0)),
    Sample((randn(rng, 4, 3) * 2, np.array([1, 3]), 1.5, 1.0)),
    Sample((randn(rng, 4, 3), randn(rng, 2), 1.0, 2.0), raises=RuntimeError)], grad=False)


def slice_inverse_call(lib, src, dim, start, end, step):
    index = [slice(None)] * src.ndim
    index[dim] = slice(start, end, step)
    return lib.slice_inverse(src[tuple(index)], src, dim, start, end, step)


reg("slice_inverse", slice_inverse_call, lambda rng: [
    Sample((randn(rng, 3, 4, 5), 1, 1, 3, 1)), Sample((randn(rng, 6, 2), 0, 0, 6, 2))],
    covers=("Tensor.slice_inverse",))


def as_strided_call(lib, x, *args):
    x = x.detach().clone()
    return lib.as_strided_(x, *args), x.storage_offset()


reg("as_strided_", as_strided_call, lambda rng: [
    Sample((randn(rng, 3, 4), (2, 2), (1, 2))), Sample((randn(rng, 3, 4), (2, 3), (3, 1), 2))],
    grad=False)


def resize_as_call(lib, x, template):
    x = x.detach().clone()
    return lib.resize_as_(x, template).shape


reg("resize_as_", resize_as_call, lambda rng: [
    Sample((randn(rng, 6), randn(rng, 2, 3))), Sample((randn(rng, 6), randn(rng, 1, 2)))],
    grad=False)


def binomial_call(lib, count, prob):
    out = lib.binomial(count, prob)
    return out, ((out >= 0) & (out <= count)).all()


reg("binomial", binomial_call, lambda rng: [
    Sample((np.array([5.0, 3.0, 0.0, 10.0]), np.array([0.5, 0.2, 0.3, 1.0])), grad=()),
    Sample((rng.integers(0, 6, (2, 3)).astype(float), np.array([0.1, 0.5, 0.9])), grad=()),
    Sample((integers(rng, 3, low=0), positive(rng, 3) / 4), raises=ValueError)],
    grad=False, parity="meta")


def empty_permuted_call(lib, size, layout, **kw):
    t = lib.empty_permuted(size, layout, **kw)
    return t.shape, t.stride(), t.dtype, t.requires_grad


reg("empty_permuted", empty_permuted_call, lambda rng: [
    Sample(((2, 3, 4), (0, 2, 1))), Sample(((2, 3, 4, 5), [0, 2, 3, 1])),
    Sample(((2, 3), (1, 0)), {"requires_grad": True}),
    Sample(((2, 3, 4), (0, 2)), raises=RuntimeError),
    Sample(((2, 3, 4), (0, 2, 2)), raises=RuntimeError)], grad=False)
