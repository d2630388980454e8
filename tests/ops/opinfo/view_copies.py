"""Op-table entries for `ember/ops/view_copies.py`: the `*_copy` forms of the view ops. Each
is checked for the view op's values and gradients, and (variant "layout") for owning
contiguous memory of its own."""
import numpy as np

from . import OpInfo, Sample, randn, register


def _owned(result):
    """A result's layout facts: not a view, contiguous, its strides."""
    results = result if isinstance(result, (list, tuple)) else [result]
    return [(r, r._is_view(), r.is_contiguous(), r.stride()) for r in results]


def _split_out(lib, x, size):
    out = [lib.zeros(2, dtype=x.dtype), lib.zeros(1, dtype=x.dtype)]
    returned = lib.split_copy(x.detach(), size, out=out)
    return returned, out


def _t_out(lib, x, dtype=None, shape=(4, 3)):
    out = lib.zeros(shape, dtype=getattr(lib, dtype) if dtype else x.dtype)
    # detached: with an input that requires grad, PyTorch marks `out` as requiring grad
    # through a node whose backward is not implemented; ember leaves `out` a plain tensor
    returned = lib.t_copy(x.detach(), out=out)
    return returned is out, out


def _complex(rng, *shape):
    return randn(rng, *shape) + 1j * randn(rng, *shape)


_SAMPLES = {
    "view_copy": lambda rng: [Sample((randn(rng, 3, 4), (2, 6))), Sample((randn(rng, 3, 4), (-1,))),
                              Sample((randn(rng, 3, 4), (5, 2)), raises=RuntimeError)],
    "permute_copy": lambda rng: [Sample((randn(rng, 2, 3, 4), (2, 0, 1))),
                                 Sample((randn(rng, 2, 3), (0,)), raises=RuntimeError)],
    "transpose_copy": lambda rng: [Sample((randn(rng, 2, 3, 4), 0, 2)),
                                   Sample((randn(rng, 2, 3), 0, 3), raises=IndexError)],
    "t_copy": lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3),)),
                           Sample((randn(rng, 2, 3, 4),), raises=RuntimeError)],
    "squeeze_copy": lambda rng: [Sample((randn(rng, 1, 3, 1),)), Sample((randn(rng, 1, 3, 1), 2)),
                                 Sample((randn(rng, 1, 3, 1), (0, 2)))],
    "unsqueeze_copy": lambda rng: [Sample((randn(rng, 3, 4), 1)), Sample((randn(rng, 3), -1)),
                                   Sample((randn(rng, 3), 3), raises=IndexError)],
    "select_copy": lambda rng: [Sample((randn(rng, 3, 4), 1, 2)), Sample((randn(rng, 3, 4), 0, -1)),
                                Sample((randn(rng, 3, 4), 0, 5), raises=IndexError)],
    "slice_copy": lambda rng: [Sample((randn(rng, 5, 4),)), Sample((randn(rng, 5, 4), 1, 1, None, 2)),
                               Sample((randn(rng, 5, 4), 0, -3, 10)),
                               Sample((randn(rng, 5, 4), 0, 0, 3, 0), raises=RuntimeError)],
    "split_copy": lambda rng: [Sample((randn(rng, 5, 4), 2)), Sample((randn(rng, 5, 4), 3, 1))],
    "split_with_sizes_copy": lambda rng: [
        Sample((randn(rng, 5, 4), [2, 3])), Sample((randn(rng, 5, 4), [1, 3], 1)),
        Sample((randn(rng, 5, 4), [1, 1]), raises=RuntimeError)],
    "unbind_copy": lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4), 1))],
    "unfold_copy": lambda rng: [Sample((randn(rng, 3, 7), 1, 3, 2)), Sample((randn(rng, 6), 0, 2, 2)),
                                Sample((randn(rng, 3, 4), 1, 5, 1), raises=RuntimeError)],
    "diagonal_copy": lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 4), 1, 1, 2)),
                                  Sample((randn(rng, 3, 4), 0, 0, 0), raises=RuntimeError)],
    "alias_copy": lambda rng: [Sample((randn(rng, 3, 4),))],
    "as_strided_copy": lambda rng: [Sample((randn(rng, 3, 4), (2, 2), (1, 4))),
                                    Sample((randn(rng, 3, 4), (2, 3), (4, 1), 1))],
    "view_as_real_copy": lambda rng: [Sample((_complex(rng, 3, 2),), grad=()),
                                      Sample((randn(rng, 3),), raises=RuntimeError)],
    "view_as_complex_copy": lambda rng: [Sample((randn(rng, 3, 2),), grad=()),
                                         Sample((randn(rng, 3, 3),), raises=RuntimeError)],
}


def _call(name):
    return lambda lib, x, *a: getattr(lib, name)(x, *a)


register(*[OpInfo(name, _call(name), samples) for name, samples in _SAMPLES.items()])
register(*[OpInfo(name, lambda lib, x, *a, _n=name: _owned(getattr(lib, _n)(x, *a)),
                  lambda rng, _s=samples: [s for s in _s(rng) if s.raises is None],
                  variant="layout", grad=False) for name, samples in _SAMPLES.items()])
register(
    OpInfo("detach_copy", lambda lib, x: _owned(lib.detach_copy(x.detach())),
           lambda rng: [Sample((randn(rng, 3, 4),))], grad=False),
    # PyTorch 2.13 has no sparse kernel for these (NotImplementedError on a COO tensor), so
    # parity is the dense error; ember's copy of a COO tensor's parts is in test_view_copies
    OpInfo("values_copy", lambda lib, x: lib.values_copy(x),
           lambda rng: [Sample((randn(rng, 3),), raises=RuntimeError)], grad=False),
    OpInfo("indices_copy", lambda lib, x: lib.indices_copy(x),
           lambda rng: [Sample((randn(rng, 3),), raises=RuntimeError)], grad=False),
    OpInfo("split_copy", _split_out, lambda rng: [Sample((randn(rng, 3), 2)),
                                                  Sample((randn(rng, 3), 1), raises=RuntimeError)],
           variant="out", grad=False),
    OpInfo("t_copy", _t_out, lambda rng: [Sample((randn(rng, 3, 4),)),
                                          Sample((randn(rng, 3, 4), "int64"), raises=RuntimeError),
                                          Sample((randn(rng, 3, 4), None, (2, 2)))],
           variant="out", grad=False),
)
