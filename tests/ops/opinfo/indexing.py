"""Op-table entries for basic indexing (`ember/ops/indexing.py`): `x[idx]` and `x[idx] = v`
with ints, slices (steps, negative and out-of-range bounds, empty), None, Ellipsis and 0-dim
integer tensors; writes through such views; `copy_` and `nonzero` edge cases.
(Advanced indexing with integer/boolean tensors: `advanced_indexing.py`.)

The index is built inside the call (`lambda lib, x: x[1:, None, ..., ::2]`), so one entry
is one indexing expression; a setitem entry clones, assigns, and returns the clone."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register

S = slice(None)


def get(index):
    return lambda lib, x: x[index]


def set_(index):
    """Out of place `x[index] = v`: the clone, so gradients reach both x and v."""
    def call(lib, x, v):
        y = x.clone()
        y[index] = v
        return y
    return call


def float_and_int(*shape):
    """The indexed tensor as float (differentiable), non-contiguous float, and int64."""
    def samples(rng):
        return [Sample((randn(rng, *shape),)),
                Sample((randn(rng, *shape),), noncontig=(0,)),
                Sample((integers(rng, *shape),))]
    return samples


_GETITEM = {
    "int": 1,
    "negative_int": -1,
    "two_ints": (1, 2),
    "int_then_slice": (2, slice(1, None)),
    "slice": slice(1, 3),
    "slice_step": slice(None, None, 2),
    "slice_negative": slice(-3, -1),
    "slice_out_of_range": slice(1, 10),
    "slice_empty": slice(2, 2),
    "slice_reversed_bounds": slice(3, 1),
    "column": (S, 1),
    "none": None,
    "none_middle": (S, None, S),
    "ellipsis": Ellipsis,
    "ellipsis_int": (Ellipsis, 1),
    "mixed": (slice(1, None), None, Ellipsis, slice(None, None, 2)),
    "colon": S,
    "all_ints": (0, 0),
    "all_ints_none": (1, None, 2),
    "step_3": (S, slice(0, None, 3)),
}

for _variant, _index in _GETITEM.items():
    register(OpInfo("__getitem__", get(_index), float_and_int(4, 5), variant=_variant))


def _zero_dim_samples(rng):
    return [Sample((randn(rng),)), Sample((integers(rng),))]


def _tensor_int_index(rng):
    """A 0-dim integer tensor is a basic index (a view), as an int."""
    return [Sample((randn(rng, 4, 5), np.array(2))), Sample((randn(rng, 4, 5), np.array(-1))),
            Sample((randn(rng, 4, 5), np.array(1, np.int32)))]


def _index_errors(rng):
    return [
        Sample((randn(rng, 3, 4), 3), raises=IndexError),
        Sample((randn(rng, 3, 4), -4), raises=IndexError),
        Sample((randn(rng, 3, 4), (0, 4)), raises=IndexError),
        Sample((randn(rng, 3, 4), (0, 0, 0)), raises=IndexError),
        Sample((randn(rng, 3, 4), slice(None, None, -1)), raises=ValueError),
        Sample((randn(rng, 3, 4), (S, slice(None, None, 0))), raises=ValueError),
        Sample((randn(rng), 0), raises=IndexError),
        Sample((randn(rng), slice(0, 1)), raises=IndexError),
    ]



def _getitem_view(lib, x):
    """A basic index is a view: a write through the base shows in it."""
    y = x.detach().clone()
    v = y[1:, ::2]
    y.add_(1)
    return v, v._is_view(), v.storage_offset(), tuple(v.stride())


register(
    OpInfo("__getitem__", get(()), _zero_dim_samples, variant="0dim_empty_tuple"),
    OpInfo("__getitem__", get(None), _zero_dim_samples, variant="0dim_none"),
    OpInfo("__getitem__", get(Ellipsis), _zero_dim_samples, variant="0dim_ellipsis"),
    OpInfo("__getitem__", lambda lib, x, i: x[i], _tensor_int_index, variant="tensor_int"),
    OpInfo("__getitem__", lambda lib, x, i: x[:, i], lambda rng: _tensor_int_index(rng)[:1],
           variant="tensor_int_column"),
    OpInfo("__getitem__", get(slice(1, 3)), lambda rng: [Sample((randn(rng, 0, 3),)),
                                                        Sample((randn(rng, 4, 0),))],
           variant="empty_tensor"),
    OpInfo("__getitem__", lambda lib, x, i: x[i], _index_errors, variant="errors", grad=False),
    OpInfo("__getitem__", _getitem_view, lambda rng: [Sample((randn(rng, 4, 5),))],
           variant="view", grad=False),
    OpInfo("__getitem__", lambda lib, x: x[1:][::2][0], float_and_int(4, 5), variant="chained"),
    OpInfo("__getitem__", lambda lib, x: x[1:, 2:].t()[1], float_and_int(4, 5),
           variant="chained_views"),
)


# ---- setitem -------------------------------------------------------------------------------------
def _set_samples(value_shape, scalar=2.5):
    def samples(rng):
        out = [Sample((randn(rng, 4, 5), randn(rng, *value_shape))),
               Sample((randn(rng, 4, 5), scalar)),
               Sample((randn(rng, 4, 5), randn(rng, *value_shape)), grad=(1,)),
               Sample((randn(rng, 4, 5), randn(rng, *value_shape)), noncontig=(0,)),
               Sample((integers(rng, 4, 5), integers(rng, *value_shape))),
               Sample((integers(rng, 4, 5), randn(rng, *value_shape)), grad=()),  # cast to int
               Sample((randn(rng, 4, 5), integers(rng, *value_shape)))]
        return out
    return samples


_SETITEM = {
    "int": (1, (5,)),
    "int_broadcast": (1, ()),
    "column": ((S, 2), (4,)),
    "slice": (slice(1, 3), (2, 5)),
    "slice_broadcast_row": (slice(1, 3), (5,)),
    "slice_step": ((S, slice(None, None, 2)), (4, 3)),
    "element": ((1, 2), ()),
    "ellipsis": (Ellipsis, (4, 5)),
    "ellipsis_int": ((Ellipsis, -1), (4,)),
    "none": ((None, 1), (1, 5)),
    "mixed": ((slice(1, None), None, Ellipsis, slice(None, None, 2)), (3, 1, 3)),
    "colon": (S, (5,)),
    "empty_slice": (slice(2, 2), (0, 5)),
}

for _variant, (_index, _shape) in _SETITEM.items():
    register(OpInfo("__setitem__", set_(_index), _set_samples(_shape), variant=_variant))


def _set_errors(rng):
    return [
        Sample((randn(rng, 4, 5), randn(rng, 3)), raises=RuntimeError),       # cannot broadcast
        Sample((randn(rng, 4, 5), randn(rng, 2, 5)), raises=RuntimeError),
    ]


def _set_view_chain(lib, x, v):
    """Writes through a chain of views of a clone: the base collects both writes."""
    y = x.clone()
    row = y[1]
    row[::2] = v
    y[:, 0] = 0.5
    return y, row


def _set_into_view_of_leaf(lib, x, v):
    """A view of a tensor that does not require grad becomes part of the graph."""
    y = x.detach().clone()
    y[1:3, 1] = v * 2
    return y


register(
    OpInfo("__setitem__", set_(1), _set_errors, variant="errors", grad=False),
    OpInfo("__setitem__", set_(5), lambda rng: [Sample((randn(rng, 4, 5), 1.0), raises=IndexError)],
           variant="index_error", grad=False),
    OpInfo("__setitem__", lambda lib, x, i, v: set_(i)(lib, x, v),
           lambda rng: [Sample((randn(rng, 4, 5), np.array(1), randn(rng, 5))),
                        Sample((randn(rng, 4, 5), np.array(-2), 3.0))], variant="tensor_int"),
    OpInfo("__setitem__", set_(()), lambda rng: [Sample((randn(rng), randn(rng))),
                                                 Sample((randn(rng), 1.5)),
                                                 Sample((integers(rng), 7))], variant="0dim"),
    OpInfo("__setitem__", _set_view_chain, lambda rng: [Sample((randn(rng, 4, 5), randn(rng, 3)))],
           variant="chain"),
    OpInfo("__setitem__", _set_into_view_of_leaf,
           lambda rng: [Sample((randn(rng, 4, 5), randn(rng, 2)), grad=(1,))], variant="graph_joins"),
    OpInfo("__setitem__", lambda lib, x, v: set_(0)(lib, x, v),
           lambda rng: [Sample((np.arange(4.0), np.array(2.0)), grad=(1,))], variant="1d"),
    OpInfo("__setitem__", lambda lib, x, v: x.__setitem__(0, v),
           lambda rng: [Sample((randn(rng, 3), 1.0), raises=RuntimeError)],
           variant="leaf_requires_grad", grad=False),
)


# ---- copy_, nonzero --------------------------------------------------------------------------------
def _copy_samples(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng))),                                  # 0-dim source
        Sample((randn(rng, 3, 4), randn(rng, 3, 1))),
        Sample((integers(rng, 3, 4), randn(rng, 3, 4)), grad=()),                # float into int
        Sample((randn(rng, 3, 4), np.array([True, False, True, True]))),
        Sample((randn(rng), randn(rng))),
        Sample((randn(rng, 0, 4), randn(rng, 4))),
        Sample((randn(rng, 3, 4), randn(rng, 4, 3)), noncontig=(1,), raises=RuntimeError),
    ]


register(
    OpInfo("copy_", lambda lib, x, src: x.clone().copy_(src), _copy_samples, variant="edges"),
    OpInfo("copy_", lambda lib, x, src: x.clone().copy_(src, non_blocking=True),
           lambda rng: _copy_samples(rng)[:1], variant="non_blocking"),
    # a float64 source into a float32 destination: the gradient comes back as float64
    # (no gradcheck: the float32 result cannot resolve finite differences)
    OpInfo("copy_", lambda lib, x, src: x.clone().copy_(src),
           lambda rng: [Sample((randn(rng, 3, 4).astype(np.float32), randn(rng, 3, 4)), grad=(1,))],
           variant="to_float32", grad=False),
    OpInfo("copy_", lambda lib, x, src: x.copy_(src),
           lambda rng: [Sample((randn(rng, 3), randn(rng, 3)), grad=(0,), raises=RuntimeError)],
           variant="errors", grad=False),
    OpInfo("copy_", lambda lib, x, v: x.clone().copy_(v),
           lambda rng: [Sample((randn(rng, 3), 2.0), grad=()), Sample((integers(rng, 3), 2.7)),
                        Sample((randn(rng, 3), True), grad=())], variant="number", grad=False),
)


def _nonzero_samples(rng):
    x = randn(rng, 3, 4)
    x[x < 0] = 0.0
    return [
        Sample((x,)),
        Sample((np.zeros((2, 3)),)),
        Sample((integers(rng, 2, 3, 2, low=0, high=2),)),
        Sample((x,), noncontig=(0,)),
        Sample((np.array([0.0, np.nan, -0.0, 1.0]),)),
        Sample((np.zeros(0, np.int64),)),
        Sample((np.array(True),)),
        Sample((np.array(0),)),
    ]


register(
    OpInfo("nonzero", lambda lib, x, **k: lib.nonzero(x, **k), _nonzero_samples, variant="edges",
           grad=False),
    OpInfo("nonzero", lambda lib, x: lib.nonzero(x, as_tuple=True), _nonzero_samples,
           variant="as_tuple", grad=False),
    OpInfo("nonzero", lambda lib, x: x.nonzero(), lambda rng: _nonzero_samples(rng)[:3],
           variant="method_edges", grad=False),
)


def _nonzero_static(rng):
    mask = integers(rng, 3, 4, low=0, high=2)
    return [Sample((mask,), {"size": 3}), Sample((mask,), {"size": 20}),
            Sample((mask,), {"size": 20, "fill_value": 7}), Sample((np.array(3),), {"size": 2}),
            Sample((mask,), {"size": 0}), Sample((mask,), {"size": -1}, raises=RuntimeError)]


register(
    OpInfo("nonzero_static", lambda lib, x, **k: lib.nonzero_static(x, **k), _nonzero_static,
           grad=False),
    OpInfo("nonzero_static", lambda lib, x, **k: x.nonzero_static(**k), _nonzero_static,
           variant="method", grad=False),
)
