"""Op-table entries for `ember/ops/strided.py`: Tensor.unfold, as_strided / as_strided_, and
the in-place shape forms (squeeze_ unsqueeze_ t_ transpose_ swapaxes_ swapdims_), each run
on a clone so the result is a function of the input (gradcheck), with what users see of its
layout and whether the same object came back."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register
from .shape import SIZE1_STRIDES, layout, parity_xfail


def _unfold_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 1, 2, 1)),
        Sample((randn(rng, 3, 7), -1, 3, 2)),
        Sample((randn(rng, 5, 2), 0, 2, 3)),
        Sample((randn(rng, 3, 4), 1, 4, 1)),
        Sample((randn(rng, 3, 4), 1, 0, 1)),
        Sample((randn(rng, 2, 3, 4), 1, 2, 2)),
        Sample((randn(rng, 4, 6), 0, 2, 1), noncontig=(0,)),
        Sample((randn(rng), 0, 1, 1)),
        Sample((randn(rng), 0, 0, 2)),
        Sample((randn(rng, 6), 0, 3, 1)),
        Sample((integers(rng, 3, 4), 1, 2, 1)),
        Sample((randn(rng, 3, 4), 1, 5, 1), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 1, 2, 0), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 1, 2, -1), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 1, -1, 1), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 2, 2, 1), raises=IndexError),
        Sample((randn(rng), 0, 2, 1), raises=RuntimeError),
    ]


def _as_strided_samples(rng):
    return [
        Sample((randn(rng, 12), (2, 3), (1, 2), 1)),
        Sample((randn(rng, 3, 4), (3, 3), (4, 1))),
        Sample((randn(rng, 3, 4), (2, 2), (0, 1), 2)),      # overlapping: gradients add up
        Sample((randn(rng, 3, 4), (4, 3), (1, 4), 0)),
        Sample((randn(rng, 3, 4), (), (), 5)),
        Sample((randn(rng, 3, 4), (0, 3), (1, 1), 11)),
        Sample((randn(rng, 4, 3), (3, 2), (3, 1), 1), noncontig=(0,)),
        Sample((integers(rng, 6), (2, 2), (2, 1))),
        Sample((randn(rng, 12), (2, 3), (1, 2), 20), raises=RuntimeError),
        Sample((randn(rng, 12), (2, 3), (1, -2), 2), raises=RuntimeError),
        Sample((randn(rng, 12), (2, -3), (1, 2), 2), raises=RuntimeError),
        Sample((randn(rng, 12), (2, 3), (1,), 2), raises=RuntimeError),
        Sample((randn(rng, 12), (2, 3), (1, 2), -1), raises=RuntimeError),
    ]


def _of_view(lib, x, size, stride, *offset):
    """as_strided of a view: its default offset is the view's, an explicit one the storage's
    (kept inside the view, where the gradient flows)."""
    return layout(x[2:].as_strided(size, stride, *offset))


def _inplace(method):
    def call(lib, x, *a):
        y = x.clone()
        r = getattr(y, method)(*a)
        return layout(y) + (r is y, y._version)
    return call


def _inplace_view(method):
    """The in-place form on a view of a clone: the view changes, the clone does not, and a
    later write through the view still reaches the clone."""
    def call(lib, x, *a):
        y = x.clone()
        v = y[1:]
        getattr(v, method)(*a)
        v.mul_(2)
        return y, layout(v)
    return call


def _squeeze_samples(rng):
    return [Sample((randn(rng, 3, 1, 4),)), Sample((randn(rng, 3, 1, 4), 1)),
            Sample((randn(rng, 3, 1, 4), 0)), Sample((randn(rng, 1, 1, 4), (0, 1))),
            Sample((randn(rng),)), Sample((randn(rng, 4, 1),), noncontig=(0,)),
            Sample((randn(rng, 3, 1, 4), 3), raises=IndexError)]


def _unsqueeze_samples(rng):
    return [Sample((randn(rng, 3, 4), 0)), Sample((randn(rng, 3, 4), -1)), Sample((randn(rng), 0)),
            Sample((randn(rng, 4, 3), 1), noncontig=(0,)),
            Sample((randn(rng, 3, 4), 3), raises=IndexError)]


def _transpose_samples(rng):
    return [Sample((randn(rng, 3, 4), 0, 1)), Sample((randn(rng, 2, 3, 4), 0, -1)),
            Sample((randn(rng, 4), 0, 0)), Sample((randn(rng, 4, 3), 0, 1), noncontig=(0,)),
            Sample((randn(rng, 3, 4), 0, 2), raises=IndexError)]


def _t_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 4),)), Sample((randn(rng),)),
            Sample((randn(rng, 4, 3),), noncontig=(0,)),
            Sample((randn(rng, 2, 3, 4),), raises=RuntimeError)]


def _as_strided_inplace_samples(rng):
    return [Sample((randn(rng, 3, 4), (2, 3), (1, 2), 1)), Sample((randn(rng, 3, 4), (3, 3), (4, 1))),
            Sample((randn(rng, 3, 4), (2, 3), (1, 2), 20), raises=RuntimeError)]


def _view_samples(rng, *a):
    return [Sample((randn(rng, 4, 3),) + a)]


register(
    OpInfo("unfold", lambda lib, x, *a: x.unfold(*a), _unfold_samples),
    OpInfo("unfold", lambda lib, x, *a: layout(x.unfold(*a)), _unfold_samples, variant="layout",
           xfail=parity_xfail(SIZE1_STRIDES, 3)),
    OpInfo("unfold", lambda lib, x: x.unfold(1, 2, 1).unfold(0, 2, 1),
           lambda rng: [Sample((randn(rng, 3, 4),))], variant="twice"),
    OpInfo("unfold", lambda lib, x, v: x.clone().unfold(1, 2, 2).mul_(v),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 2, 2)))], variant="inplace"),
    OpInfo("as_strided", lambda lib, x, *a: lib.as_strided(x, *a), _as_strided_samples),
    OpInfo("as_strided", lambda lib, x, *a: layout(x.as_strided(*a)), _as_strided_samples,
           variant="layout", xfail=parity_xfail(SIZE1_STRIDES, 5)),
    OpInfo("as_strided", _of_view, lambda rng: [Sample((randn(rng, 12), (2, 3), (1, 2))),
                                                Sample((randn(rng, 12), (2, 3), (1, 2), 3))],
           variant="of_view"),
    OpInfo("as_strided", lambda lib, x: x.as_strided((2, 2), (1, 2)).as_strided((3,), (1,), 1),
           lambda rng: [Sample((randn(rng, 3, 4),))], variant="twice"),
    OpInfo("as_strided_", _inplace("as_strided_"), _as_strided_inplace_samples),
    OpInfo("squeeze_", _inplace("squeeze_"), _squeeze_samples),
    OpInfo("unsqueeze_", _inplace("unsqueeze_"), _unsqueeze_samples,
           xfail=parity_xfail(SIZE1_STRIDES, 3)),
    OpInfo("transpose_", _inplace("transpose_"), _transpose_samples),
    OpInfo("swapaxes_", _inplace("swapaxes_"), _transpose_samples),
    OpInfo("swapdims_", _inplace("swapdims_"), _transpose_samples),
    OpInfo("t_", _inplace("t_"), _t_samples),
    OpInfo("t_", _inplace_view("t_"), _view_samples, variant="view"),
    OpInfo("transpose_", _inplace_view("transpose_"), lambda rng: _view_samples(rng, 1, 0),
           variant="view"),
    OpInfo("unsqueeze_", _inplace_view("unsqueeze_"), lambda rng: _view_samples(rng, 0),
           variant="view"),
    OpInfo("as_strided_", _inplace_view("as_strided_"),
           lambda rng: _view_samples(rng, (2, 2), (1, 3), 4), variant="view"),
    # PyTorch's refusals: a leaf that requires grad, a view of one
    OpInfo("t_", lambda lib, x: x.t_(), lambda rng: [Sample((randn(rng, 2, 3),), raises=RuntimeError)],
           variant="leaf", grad=False),
    OpInfo("squeeze_", lambda lib, x: x[1:].squeeze_(), lambda rng: [Sample((randn(rng, 2, 1),),
                                                                           raises=RuntimeError)],
           variant="view_of_leaf", grad=False),
)


# ---- resize_, resize_as_ --------------------------------------------------------------------------
def _resize(lib, x, *sizes):
    """resize_ on a copy: its shape, strides, version and the elements that were there before
    (a grown storage's new elements are uninitialised in PyTorch, so they are not compared)."""
    y = x.clone()
    n = y.numel()
    r = y.resize_(*sizes)
    kept = min(n, y.numel())
    return layout(y)[1:] + (tuple(y.shape), r is y, y._version, y.reshape(-1)[:kept])


def _resize_view(lib, x, size):
    """Resizing a view within and beyond its base's storage: the base sees the same memory."""
    b = x.clone()
    v = b[1:3]
    v.resize_(size)
    v[0] = 100.0
    return b, v.storage_offset(), v._is_view(), v.reshape(-1)[:min(size, 5)]  # 5 old elements from offset 1


def _resize_samples(rng):
    return [
        Sample((randn(rng, 2, 3), 3, 2), grad=()),
        Sample((randn(rng, 2, 3), 4), grad=()),
        Sample((randn(rng, 2, 3), (3, 4)), grad=()),
        Sample((randn(rng, 2, 3), 2, 3), grad=()),            # same shape: nothing changes
        Sample((randn(rng, 4, 3), 4, 3), grad=(), noncontig=(0,)),  # keeps its strides
        Sample((randn(rng, 4, 3), 2, 5), grad=(), noncontig=(0,)),
        Sample((randn(rng, 2, 3), 0), grad=()),
        Sample((integers(rng, 2, 3), 7), grad=()),
        Sample((randn(rng, 3), -1), grad=(), raises=RuntimeError),
        Sample((randn(rng, 3), 2, -1), grad=(), raises=RuntimeError),
    ]


def _resize_as(lib, x, other):
    y = x.clone()
    y.resize_as_(other)
    return tuple(y.shape), y._version, y.reshape(-1)[:min(x.numel(), y.numel())]


register(
    OpInfo("resize_", _resize, _resize_samples, grad=False),
    OpInfo("resize_", _resize_view, lambda rng: [Sample((randn(rng, 6), 4), grad=()),
                                                 Sample((randn(rng, 6), 7), grad=())],
           variant="view", grad=False),
    OpInfo("resize_", lambda lib, x: x.resize_(3),
           lambda rng: [Sample((randn(rng, 2),), raises=RuntimeError)], variant="requires_grad",
           grad=False),
    OpInfo("resize_as_", _resize_as, lambda rng: [Sample((randn(rng, 2, 3), randn(rng, 3, 2)), grad=()),
                                                  Sample((randn(rng, 2, 3), randn(rng, 4, 4)), grad=()),
                                                  Sample((randn(rng, 2, 3), randn(rng, 2, 3)), grad=())],
           grad=False),
    OpInfo("resize_as_", lambda lib, x, y: x.resize_as_(y),
           lambda rng: [Sample((randn(rng, 2), randn(rng, 3)), grad=(0,), raises=RuntimeError)],
           variant="requires_grad", grad=False),
)


# the deprecated out-of-place resize: a new shape for the same number of elements
register(
    OpInfo("resize", lambda lib, x, *s: x.resize(*s),
           lambda rng: [Sample((randn(rng, 2, 3), 3, 2)), Sample((randn(rng, 2, 3), 6)),
                        Sample((randn(rng, 2, 3), 4), raises=RuntimeError),
                        Sample((randn(rng, 2, 3), (2, 3)), raises=RuntimeError)]),
    OpInfo("resize_as", lambda lib, x, t: x.resize_as(t),
           lambda rng: [Sample((randn(rng, 2, 3), randn(rng, 6, 1)), grad=(0,)),
                        Sample((randn(rng, 2, 3), randn(rng, 4)), raises=RuntimeError)]),
)
