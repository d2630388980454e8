"""Op-table entries for `ember/ops/sparse_products.py`: sspaddmm/saddmm, smm, hspmm/hsmm, dsmm
and resize_as_sparse_. A sparse result is compared by its raw indices, values and size."""
import numpy as np

from . import OpInfo, Sample, randn, register


def sparse_matrix(rng, m, k):
    a = randn(rng, m, k)
    a[rng.random((m, k)) < 0.5] = 0
    a[1] = 0  # a row with no entries
    return a


def raw(t):
    return t._indices(), t._values(), list(t.shape)


def call(name, sparse_args):
    def run(lib, *args, **kwargs):
        args = [a.to_sparse() if i in sparse_args else a for i, a in enumerate(args)]
        out = getattr(lib, name)(*args, **kwargs)
        return raw(out) if out.is_sparse else out
    return run


def addmm_samples(rng):
    return [
        Sample((randn(rng, 3, 2), sparse_matrix(rng, 3, 4), randn(rng, 4, 2)), grad=()),
        Sample((randn(rng, 3, 2), sparse_matrix(rng, 3, 4), randn(rng, 4, 2)),
               {"beta": 2, "alpha": 0.5}, grad=()),
    ]


def product_samples(rng):
    return [Sample((sparse_matrix(rng, 3, 4), randn(rng, 4, 2)), grad=()),
            Sample((sparse_matrix(rng, 4, 3), randn(rng, 3, 1)), grad=())]


register(
    OpInfo("sspaddmm", call("sspaddmm", (0, 1)), addmm_samples, grad=False,
           covers=("Tensor.sspaddmm",)),
    OpInfo("saddmm", call("saddmm", (0, 1)), addmm_samples, grad=False),
    OpInfo("smm", call("smm", (0,)), product_samples, grad=False, covers=("Tensor.smm",)),
    OpInfo("smm", call("smm", ()), lambda rng: [
        Sample((randn(rng, 3, 4), randn(rng, 4, 2)), raises=RuntimeError)], grad=False,
        variant="dense"),
    OpInfo("hspmm", call("hspmm", (0,)), product_samples, grad=False),
    OpInfo("hsmm", call("hsmm", (0,)), product_samples, grad=False),
    OpInfo("dsmm", call("dsmm", ()), lambda rng: [
        Sample((randn(rng, 3, 4), randn(rng, 4, 2)))]),
    OpInfo("dsmm", call("dsmm", (0,)), lambda rng: [
        Sample((sparse_matrix(rng, 3, 4), randn(rng, 4, 2)), grad=(1,))], variant="sparse"),
)


def resize_call(lib, a, template, sparse_dim):
    out = lib.resize_as_sparse_(a.to_sparse(), template.to_sparse(sparse_dim))
    return raw(out) + (out.sparse_dim(), out.dense_dim())


register(OpInfo("resize_as_sparse_", resize_call, lambda rng: [
    Sample((np.zeros(1), randn(rng, 2, 3, 2), 2), grad=()),
    Sample((np.zeros((2, 2)), randn(rng, 2, 3), 2), grad=()),
    Sample((np.ones(2), randn(rng, 2, 3, 2), 2), raises=RuntimeError)], grad=False))


def resize_method_call(lib, a, template):
    out = a.to_sparse().resize_as_sparse_(template.to_sparse())
    return raw(out)


register(OpInfo("resize_as_sparse_", resize_method_call, lambda rng: [
    Sample((np.zeros(1), randn(rng, 2, 3)), grad=())], grad=False, variant="method",
    covers=("Tensor.resize_as_sparse_",)))
