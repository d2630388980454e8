"""Op-table entries for `ember/ops/tensor_methods.py`: adjoint, new_empty_strided (its
layout, not its uninitialised values), apply_, map_ and map2_ (Python callables, no autograd)."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _layout(lib, a, size, stride, dtype=None):
    kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
    t = a.new_empty_strided(size, stride, **kw)
    return t.shape, t.stride(), t.dtype, t.requires_grad, t.is_contiguous()


def _apply(lib, a, fn):
    return a.detach().clone().apply_(fn)


def _map(lib, a, b, fn):
    return a.detach().clone().map_(b.detach(), fn)


def _map2(lib, a, b, c, fn):
    return a.detach().clone().map2_(b.detach(), c.detach(), fn)


def _map2_grad(lib, a, b):
    return a.map2_(b.requires_grad_(), b, lambda x, y, z: x)


def _apply_grad(lib, a):
    return a.requires_grad_().apply_(lambda x: x)


def _map_grad(lib, a, b):
    return a.map_(b.requires_grad_(), lambda x, y: x)


register(
    OpInfo("adjoint", lambda lib, a: a.adjoint(),
           lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 4),)),
                        Sample((randn(rng, 3, 4) + 1j * randn(rng, 3, 4),), grad=()),
                        Sample((randn(rng, 3),), raises=RuntimeError)]),
    OpInfo("adjoint", lambda lib, a: lib.adjoint(a),
           lambda rng: [Sample((randn(rng, 2, 3, 4),)), Sample((randn(rng, 3),), raises=RuntimeError),
                        Sample((3,), raises=TypeError)], variant="function"),
    OpInfo("new_empty_strided", _layout,
           lambda rng: [Sample((randn(rng, 2), (2, 3), (1, 2))),
                        Sample((randn(rng, 2), (2, 3), (3, 1), "float64")),
                        Sample((integers(rng, 2), (0, 3), (3, 1))),
                        Sample((randn(rng, 2), (2, 3), (1,)), raises=RuntimeError)],
           grad=False),
    OpInfo("apply_", _apply,
           lambda rng: [Sample((randn(rng, 3, 2), lambda x: x * 2 + 1)),
                        Sample((integers(rng, 4), lambda x: x * 2.7)),
                        Sample((np.array([True, False]), lambda x: not x)),
                        Sample((randn(rng, 3), lambda x: "a"), raises=TypeError)], grad=False),
    OpInfo("apply_", _apply_grad, lambda rng: [Sample((randn(rng, 3),), raises=RuntimeError)],
           variant="requires_grad", grad=False),
    OpInfo("map_", _map,
           lambda rng: [Sample((randn(rng, 2, 3), randn(rng, 3), lambda x, y: x * y + 1)),
                        Sample((integers(rng, 3), integers(rng, 3), lambda x, y: x - y)),
                        Sample((randn(rng, 3), randn(rng, 2, 3), lambda x, y: x),
                               raises=RuntimeError),
                        Sample((integers(rng, 3), randn(rng, 3), lambda x, y: x),
                               raises=TypeError)], grad=False),
    OpInfo("map_", _map_grad, lambda rng: [Sample((randn(rng, 3), randn(rng, 3)),
                                                  raises=RuntimeError)],
           variant="requires_grad", grad=False),
    OpInfo("map2_", _map2,
           lambda rng: [Sample((randn(rng, 2, 3), randn(rng, 3), randn(rng, 2, 1),
                                lambda s, x, y: s + x * y)),
                        Sample((integers(rng, 3), integers(rng, 3), integers(rng, 1),
                                lambda s, x, y: s - x + y)),
                        Sample((randn(rng, 3), randn(rng, 4), randn(rng, 3), lambda *a: 0.0),
                               raises=RuntimeError),
                        Sample((randn(rng, 3), randn(rng, 3), integers(rng, 3), lambda *a: 0.0),
                               raises=TypeError)], grad=False),
    OpInfo("map2_", _map2_grad, lambda rng: [Sample((randn(rng, 3), randn(rng, 3)),
                                                    raises=RuntimeError)],
           variant="requires_grad", grad=False),
)
