"""Op-table entries for `ember/ops/shape.py`: views (view, reshape, expand, permute, transpose,
squeeze, unsqueeze, narrow, select, unbind, flatten, movedim), copies (clone, contiguous)
and joins (cat, stack).

The `.layout` variants return a view's strides, contiguity, storage offset and whether it
is a view, beside the view itself: PyTorch users see those (`stride()`, `.view` failing on
a copy); the `.inplace` variants write through a view of a clone (CopySlices)."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def layout(t):
    """A tensor with what its memory layout looks like from outside."""
    return t, tuple(t.stride()), t.is_contiguous(), t.storage_offset(), t._is_view()


def entry(name, call, samples, **kw):
    return OpInfo(name, call, samples, **kw)


def with_layout(name, call, samples, **kw):
    return OpInfo(name, lambda lib, *a, **k: layout(call(lib, *a, **k)), samples, variant="layout",
                  **kw)


# Known ember bugs in how layouts are reported (ember/_tensor.py `stride`, `is_contiguous`,
# `storage_offset`), which these entries show.
EMPTY_STRIDES = ("Tensor.stride() of an empty tensor: ember reports NumPy's strides, e.g. "
                 "zeros(0, 3).stride() == (3, 0) where PyTorch gives (3, 1), and "
                 "zeros(0, 3).t().stride() == (0, 1) where PyTorch gives (1, 3) (ember/_tensor.py)")
SIZE1_STRIDES = ("the stride of a size-1 dim: ember normalises it to the product of the sizes to "
                 "its right, PyTorch keeps the view op's: x[::2].view(5, 1).stride() is (2, 2) in "
                 "PyTorch, (2, 1) in ember (ember/_tensor.py)")


def parity_xfail(reason, *indices):
    """{(kind, i): reason} for both parity runs of the given samples."""
    return {(kind, i): reason for i in indices for kind in ("parity", "parity_float32")}


def errors(*samples):
    """Error cases, as Samples with `raises` set."""
    return lambda rng: [s(rng) for s in samples]


# ---- view, reshape, flatten ----------------------------------------------------------------------
def _reshape_samples(rng):
    return [
        Sample((randn(rng, 3, 4), (4, 3))),
        Sample((randn(rng, 3, 4), (2, -1))),
        Sample((randn(rng, 3, 4), (12,))),
        Sample((randn(rng, 2, 3, 2), (-1,))),
        Sample((randn(rng), (1,))),
        Sample((randn(rng, 1, 1), ())),
        Sample((randn(rng, 4, 3), (12,)), noncontig=(0,)),        # not viewable: a copy
        Sample((randn(rng, 5), (5, 1)), noncontig=(0,)),          # strided, still a view
        Sample((randn(rng, 0, 3), (3, 0))),
        Sample((randn(rng, 0, 3), (-1, 3))),
        Sample((integers(rng, 3, 4), (2, 6))),
    ]


_RESHAPE_ERRORS = errors(
    lambda rng: Sample((randn(rng, 3, 4), (5, 3)), raises=RuntimeError),
    lambda rng: Sample((randn(rng, 3, 4), (-1, -1)), raises=RuntimeError),
    lambda rng: Sample((randn(rng, 3, 4), (-2, 6)), raises=RuntimeError),
    lambda rng: Sample((randn(rng, 0, 3), (-1, 0)), raises=RuntimeError),
)


def _view_samples(rng):
    s = _reshape_samples(rng)
    return [x for i, x in enumerate(s) if i != 6]  # every one but the non-viewable


def _view_dtype_samples(rng):
    return [Sample((integers(rng, 3, 4), "int32")), Sample((integers(rng, 3, 4), "uint8")),
            Sample((integers(rng, 2, 3).astype(np.int32), "float32")),
            Sample((randn(rng, 3, 4), "int64"), grad=()),
            Sample((integers(rng, 3), "int32"), noncontig=(0,), raises=RuntimeError)]


def _flatten_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 2),)),
        Sample((randn(rng, 2, 3, 2), 1)),
        Sample((randn(rng, 2, 3, 2), 0, 1)),
        Sample((randn(rng, 2, 3, 2), -2, -1)),
        Sample((randn(rng, 2, 3, 2), 1, 1)),
        Sample((randn(rng),)),
        Sample((randn(rng, 4),)),
        Sample((randn(rng, 4, 3),), noncontig=(0,)),
        Sample((randn(rng, 2, 0, 3), 1)),
        Sample((integers(rng, 2, 3),)),
        Sample((randn(rng, 2, 3), 1, 0), raises=RuntimeError),
        Sample((randn(rng, 2, 3), 0, 2), raises=IndexError),
    ]


register(
    entry("reshape", lambda lib, x, s: lib.reshape(x, s), _reshape_samples),
    entry("reshape", lambda lib, x, s: x.reshape(*s) if s else x.reshape(s), _reshape_samples,
          variant="method"),
    entry("reshape", lambda lib, x, s: x.reshape(s), _RESHAPE_ERRORS, variant="errors", grad=False),
    with_layout("reshape", lambda lib, x, s: x.reshape(s), _reshape_samples,
        xfail=parity_xfail(SIZE1_STRIDES, 7)),
    entry("view", lambda lib, x, s: x.view(*s) if s else x.view(s), _view_samples),
    entry("view", lambda lib, x, s: x.view(s), _view_samples, variant="tuple"),
    with_layout("view", lambda lib, x, s: x.view(s), _view_samples,
        xfail=parity_xfail(SIZE1_STRIDES, 6)),
    entry("view", lambda lib, x, s: x.view(s), errors(
        lambda rng: Sample((randn(rng, 4, 3), (12,)), noncontig=(0,), raises=RuntimeError),
        lambda rng: Sample((randn(rng, 3, 4), (5, 3)), raises=RuntimeError),
    ), variant="errors", grad=False),
    entry("view", lambda lib, x, d: x.view(getattr(lib, d)), _view_dtype_samples, variant="dtype",
          grad=False),
    entry("view_as", lambda lib, x, y: x.view_as(y),
          lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 2, 6)), grad=(0,)),
                       Sample((randn(rng), randn(rng, 1)), grad=(0,))]),
    entry("reshape_as", lambda lib, x, y: x.reshape_as(y),
          lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 2, 6)), grad=(0,)),
                       Sample((randn(rng, 4, 3), randn(rng, 12)), grad=(0,), noncontig=(0,))]),
    entry("flatten", lambda lib, x, *a: lib.flatten(x, *a), _flatten_samples),
    entry("flatten", lambda lib, x, *a: x.flatten(*a), _flatten_samples, variant="method"),
    entry("flatten", lambda lib, x, *a: x.flatten(*a) is x, _flatten_samples, variant="identity",
          grad=False),
    with_layout("flatten", lambda lib, x, *a: x.flatten(*a), _flatten_samples),
    entry("flatten", lambda lib, x: lib.flatten(x, start_dim=1, end_dim=-1),
          lambda rng: [Sample((randn(rng, 2, 3, 2),))], variant="keywords"),
)


# ---- squeeze, unsqueeze --------------------------------------------------------------------------
def _squeeze_samples(rng):
    return [
        Sample((randn(rng, 3, 1, 4),)),
        Sample((randn(rng, 3, 1, 4), 1)),
        Sample((randn(rng, 3, 1, 4), 0)),         # not of size 1: unchanged
        Sample((randn(rng, 1, 1, 4), (0, 1))),
        Sample((randn(rng, 3, 1, 4), -2)),
        Sample((randn(rng, 1, 1),)),
        Sample((randn(rng),)),
        Sample((randn(rng), 0)),
        Sample((randn(rng, 4, 1),), noncontig=(0,)),
        Sample((randn(rng, 0, 1),)),
        Sample((integers(rng, 1, 3),)),
        Sample((randn(rng, 3, 1, 4), 3), raises=IndexError),
    ]


def _unsqueeze_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0)),
        Sample((randn(rng, 3, 4), -1)),
        Sample((randn(rng, 3, 4), 1)),
        Sample((randn(rng, 3, 4), 2)),
        Sample((randn(rng), 0)),
        Sample((randn(rng), -1)),
        Sample((randn(rng, 4, 3), 1), noncontig=(0,)),
        Sample((randn(rng, 0, 3), 0)),
        Sample((integers(rng, 3), 0)),
        Sample((randn(rng, 3, 4), 3), raises=IndexError),
    ]


register(
    entry("squeeze", lambda lib, x, *a: lib.squeeze(x, *a), _squeeze_samples),
    entry("squeeze", lambda lib, x, *a: x.squeeze(*a), _squeeze_samples, variant="method"),
    with_layout("squeeze", lambda lib, x, *a: x.squeeze(*a), _squeeze_samples),
    entry("squeeze", lambda lib, x: x.squeeze(dim=1), lambda rng: [Sample((randn(rng, 3, 1),))],
          variant="keyword"),
    entry("unsqueeze", lambda lib, x, d: lib.unsqueeze(x, d), _unsqueeze_samples),
    entry("unsqueeze", lambda lib, x, d: x.unsqueeze(d), _unsqueeze_samples, variant="method"),
    with_layout("unsqueeze", lambda lib, x, d: x.unsqueeze(d), _unsqueeze_samples,
        xfail={**parity_xfail(SIZE1_STRIDES, 6), **parity_xfail(EMPTY_STRIDES, 7)}),
)


# ---- permute, transpose, t, movedim ------------------------------------------------------------
def _permute_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 4), (2, 0, 1))),
        Sample((randn(rng, 2, 3, 4), (-1, 0, 1))),
        Sample((randn(rng, 3, 4), (1, 0))),
        Sample((randn(rng, 3, 4), (0, 1))),
        Sample((randn(rng), ())),
        Sample((randn(rng, 4, 3), (1, 0)), noncontig=(0,)),
        Sample((randn(rng, 0, 3), (1, 0))),
        Sample((integers(rng, 2, 3), (1, 0))),
        Sample((randn(rng, 3, 4), (0, 0)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), (0,)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), (0, 2)), raises=IndexError),
    ]


def _transpose_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, 1)),
        Sample((randn(rng, 2, 3, 4), 0, -1)),
        Sample((randn(rng, 2, 3, 4), 1, 1)),
        Sample((randn(rng, 4), 0, 0)),
        Sample((randn(rng), 0, -1)),
        Sample((randn(rng, 4, 3), 0, 1), noncontig=(0,)),
        Sample((randn(rng, 0, 3), 0, 1)),
        Sample((integers(rng, 2, 3), 1, 0)),
        Sample((randn(rng, 3, 4), 0, 2), raises=IndexError),
    ]


def _t_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 4),)), Sample((randn(rng),)),
            Sample((randn(rng, 4, 3),), noncontig=(0,)), Sample((randn(rng, 0, 3),)),
            Sample((integers(rng, 2, 3),)), Sample((randn(rng, 2, 3, 4),), raises=RuntimeError)]


def _movedim_samples(rng):
    return [
        Sample((randn(rng, 2, 3, 4), 0, 2)),
        Sample((randn(rng, 2, 3, 4), -1, 0)),
        Sample((randn(rng, 2, 3, 4), (0, 1), (2, 0))),
        Sample((randn(rng, 2, 3, 4), [2], [0])),
        Sample((randn(rng, 3, 4), 0, 0)),
        Sample((randn(rng), 0, 0)),
        Sample((randn(rng, 4, 3), 1, 0), noncontig=(0,)),
        Sample((randn(rng, 2, 3, 4), (0, 1), (0,)), raises=RuntimeError),
        Sample((randn(rng, 2, 3, 4), 0, 5), raises=IndexError),
        Sample((randn(rng, 2, 3, 4), (0, 0), (1, 2)), raises=RuntimeError),
    ]


register(
    entry("permute", lambda lib, x, d: lib.permute(x, d), _permute_samples),
    entry("permute", lambda lib, x, d: x.permute(*d) if d else x.permute(d), _permute_samples,
          variant="varargs"),
    entry("permute", lambda lib, x, d: x.permute(list(d)), lambda rng: _permute_samples(rng)[:2],
          variant="list"),
    with_layout("permute", lambda lib, x, d: x.permute(d), _permute_samples,
        xfail=parity_xfail(EMPTY_STRIDES, 6)),
    entry("transpose", lambda lib, x, a, b: lib.transpose(x, a, b), _transpose_samples),
    entry("transpose", lambda lib, x, a, b: x.transpose(a, b), _transpose_samples, variant="method"),
    with_layout("transpose", lambda lib, x, a, b: x.transpose(a, b), _transpose_samples,
        xfail=parity_xfail(EMPTY_STRIDES, 6)),
    entry("swapaxes", lambda lib, x, a, b: lib.swapaxes(x, a, b), lambda rng: _transpose_samples(rng)[:2]),
    entry("swapaxes", lambda lib, x, a, b: x.swapaxes(a, b), lambda rng: _transpose_samples(rng)[1:2],
          variant="method"),
    entry("swapdims", lambda lib, x, a, b: lib.swapdims(x, a, b), lambda rng: _transpose_samples(rng)[:2]),
    entry("swapdims", lambda lib, x, a, b: x.swapdims(a, b), lambda rng: _transpose_samples(rng)[1:2],
          variant="method"),
    entry("t", lambda lib, x: lib.t(x), _t_samples),
    entry("t", lambda lib, x: x.t(), _t_samples, variant="method"),
    with_layout("t", lambda lib, x: x.t(), _t_samples, xfail=parity_xfail(EMPTY_STRIDES, 4)),
    entry("movedim", lambda lib, x, s, d: lib.movedim(x, s, d), _movedim_samples),
    entry("movedim", lambda lib, x, s, d: x.movedim(s, d), _movedim_samples, variant="method"),
    with_layout("movedim", lambda lib, x, s, d: x.movedim(s, d), _movedim_samples),
    entry("moveaxis", lambda lib, x, s, d: lib.moveaxis(x, s, d), lambda rng: _movedim_samples(rng)[:3]),
    entry("moveaxis", lambda lib, x, s, d: x.moveaxis(s, d), lambda rng: _movedim_samples(rng)[2:3],
          variant="method"),
)


# ---- narrow, select, unbind ----------------------------------------------------------------------
def _narrow_samples(rng):
    return [
        Sample((randn(rng, 4, 5), 0, 1, 2)),
        Sample((randn(rng, 4, 5), -1, -3, 2)),
        Sample((randn(rng, 4, 5), 1, 0, 5)),
        Sample((randn(rng, 4, 5), 1, 2, 0)),
        Sample((randn(rng, 4, 5), 0, np.array(1), 2)),       # a 0-dim tensor start
        Sample((randn(rng, 5, 4), 1, 1, 2), noncontig=(0,)),
        Sample((randn(rng, 0, 5), 1, 1, 3)),
        Sample((integers(rng, 4, 5), 0, 1, 2)),
        Sample((randn(rng, 3, 4), 0, 2, 2), raises=RuntimeError),
        Sample((randn(rng), 0, 0, 1), raises=RuntimeError),
    ]


def _select_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 0, 1)),
        Sample((randn(rng, 3, 4), -1, -1)),
        Sample((randn(rng, 2, 3, 4), 1, 2)),
        Sample((randn(rng, 4), 0, 3)),
        Sample((randn(rng, 4, 3), 1, 0), noncontig=(0,)),
        Sample((randn(rng, 3, 0), 0, 1)),
        Sample((integers(rng, 3, 4), 1, 2)),
        Sample((randn(rng, 3, 4), 0, 5), raises=IndexError),
        Sample((randn(rng, 3, 4), 2, 0), raises=IndexError),
        Sample((randn(rng), 0, 0), raises=IndexError),
    ]


def _unbind_samples(rng):
    return [
        Sample((randn(rng, 3, 4),)),
        Sample((randn(rng, 3, 4), 1)),
        Sample((randn(rng, 2, 3, 2), -1)),
        Sample((randn(rng, 4),)),
        Sample((randn(rng, 4, 3), 1), noncontig=(0,)),
        Sample((randn(rng, 0, 3),)),
        Sample((integers(rng, 2, 3),)),
        Sample((randn(rng),), raises=IndexError),
    ]


register(
    entry("narrow", lambda lib, x, *a: lib.narrow(x, *a), _narrow_samples),
    entry("narrow", lambda lib, x, *a: x.narrow(*a), _narrow_samples, variant="method"),
    with_layout("narrow", lambda lib, x, *a: x.narrow(*a), _narrow_samples,
        xfail=parity_xfail(EMPTY_STRIDES, 6)),
    entry("select", lambda lib, x, d, i: lib.select(x, d, i), _select_samples),
    entry("select", lambda lib, x, d, i: x.select(d, i), _select_samples, variant="method"),
    with_layout("select", lambda lib, x, d, i: x.select(d, i), _select_samples),
    entry("unbind", lambda lib, x, *a: lib.unbind(x, *a), _unbind_samples),
    entry("unbind", lambda lib, x, *a: x.unbind(*a), _unbind_samples, variant="method"),
    entry("unbind", lambda lib, x, *a: tuple(layout(t) for t in x.unbind(*a)), _unbind_samples,
          variant="layout"),
    entry("unbind", lambda lib, x: x.unbind(0)[1], lambda rng: [Sample((randn(rng, 3, 4),))],
          variant="one_output"),
)


# ---- clone, contiguous ---------------------------------------------------------------------------
def _copy_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng),)), Sample((randn(rng, 4, 3),), noncontig=(0,)),
            Sample((randn(rng, 5),), noncontig=(0,)), Sample((randn(rng, 0, 3),)),
            Sample((integers(rng, 2, 3),))]


register(
    entry("clone", lambda lib, x: lib.clone(x), _copy_samples),
    entry("clone", lambda lib, x: x.clone(), _copy_samples, variant="method"),
    with_layout("clone", lambda lib, x: x.clone(), _copy_samples),
    entry("clone", lambda lib, x: x.clone(memory_format=lib.contiguous_format),
          lambda rng: [Sample((randn(rng, 3, 4),), noncontig=(0,))], variant="memory_format"),
    entry("clone", lambda lib, x: layout(x.clone(memory_format=lib.channels_last)),
          lambda rng: [Sample((randn(rng, 2, 3, 4, 5),)),
                       Sample((randn(rng, 2, 1, 3, 3),), noncontig=(0,))],
          variant="channels_last"),
    entry("contiguous", lambda lib, x: layout(x.contiguous(memory_format=lib.channels_last_3d)),
          lambda rng: [Sample((randn(rng, 2, 3, 2, 2, 2),)),
                       Sample((randn(rng, 1, 3, 2, 2, 2),), noncontig=(0,))],
          variant="channels_last_3d"),
    entry("contiguous", lambda lib, x: x.contiguous(), _copy_samples),
    with_layout("contiguous", lambda lib, x: x.contiguous(), _copy_samples),
    entry("contiguous", lambda lib, x: x.contiguous() is x, _copy_samples, variant="identity", grad=False),
)


# ---- cat, stack --------------------------------------------------------------------------------
def _cat_samples(rng):
    return [
        Sample(([randn(rng, 2, 3), randn(rng, 3, 3)],)),
        Sample(([randn(rng, 2, 3), randn(rng, 2, 1)], 1)),
        Sample(([randn(rng, 2, 3), randn(rng, 2, 2), randn(rng, 2, 1)], -1)),
        Sample(((randn(rng, 2, 3), randn(rng, 1, 3)),)),                 # a tuple
        Sample(([randn(rng, 3)],)),
        Sample(([randn(rng, 2, 3), randn(rng, 0)],)),                     # legacy: 1-D empty skipped
        Sample(([randn(rng, 0), randn(rng, 2, 3)], 1)),
        Sample(([randn(rng, 0, 3), randn(rng, 0, 3)],)),
        Sample(([randn(rng, 4, 3), randn(rng, 4, 3)], 1), noncontig=(0,)),
        Sample(([integers(rng, 2, 3), randn(rng, 1, 3)],)),               # promotion
        Sample(([randn(rng, 2, 3).astype(np.float32), randn(rng, 1, 3)],), grad=()),
        Sample(([integers(rng, 2, 3), integers(rng, 2, 3).astype(np.int32)],)),
        Sample(([integers(rng, 2), np.array([True, False])],)),
        Sample(([randn(rng), randn(rng, 3)],), raises=RuntimeError),
        Sample(([randn(rng, 2, 3), randn(rng, 2, 4)],), raises=RuntimeError),
        Sample(([randn(rng, 2, 3), randn(rng, 3)],), raises=RuntimeError),
        Sample(([randn(rng, 2, 3)], 2), raises=IndexError),
        Sample(([],), raises=ValueError),
    ]


def _stack_samples(rng):
    return [
        Sample(([randn(rng, 2, 3), randn(rng, 2, 3)],)),
        Sample(([randn(rng, 2, 3), randn(rng, 2, 3), randn(rng, 2, 3)], 1)),
        Sample(([randn(rng, 2, 3), randn(rng, 2, 3)], -1)),
        Sample(([randn(rng, 2, 3), randn(rng, 2, 3)], 2)),
        Sample(([randn(rng), randn(rng)],)),
        Sample(((randn(rng, 3),),)),
        Sample(([randn(rng, 0, 3), randn(rng, 0, 3)], 1)),
        Sample(([randn(rng, 4, 3), randn(rng, 4, 3)],), noncontig=(0,)),
        Sample(([integers(rng, 2, 3), randn(rng, 2, 3)],)),
        Sample(([randn(rng, 2, 3), randn(rng, 3, 2)],), raises=RuntimeError),
        Sample(([randn(rng, 2, 3)], 3), raises=IndexError),
        Sample(([],), raises=RuntimeError),
    ]


def _cat_out(lib, ts, dim=0):
    out = lib.empty(0, dtype=ts[0].dtype)
    res = lib.cat(ts, dim, out=out)
    return res, out, res is out


register(
    entry("cat", lambda lib, ts, *a: lib.cat(ts, *a), _cat_samples),
    entry("cat", lambda lib, ts, d: lib.cat(ts, dim=d), lambda rng: _cat_samples(rng)[1:3], variant="keyword"),
    entry("cat", _cat_out, lambda rng: [Sample(([randn(rng, 2, 3), randn(rng, 1, 3)],), grad=())],
          variant="out", grad=False),
    entry("concat", lambda lib, ts, *a: lib.concat(ts, *a), lambda rng: _cat_samples(rng)[:3]),
    entry("concatenate", lambda lib, ts, *a: lib.concatenate(ts, *a), lambda rng: _cat_samples(rng)[:3]),
    entry("concatenate", lambda lib, ts, d: lib.concatenate(ts, axis=d), lambda rng: _cat_samples(rng)[1:3],
          variant="axis"),
    entry("stack", lambda lib, ts, *a: lib.stack(ts, *a), _stack_samples),
    entry("stack", lambda lib, ts, d: lib.stack(ts, dim=d), lambda rng: _stack_samples(rng)[1:3],
          variant="keyword"),
)


# ---- expand, broadcast_to ------------------------------------------------------------------------
def _expand_samples(rng):
    return [
        Sample((randn(rng, 3, 1), (3, 4))),
        Sample((randn(rng, 3, 1), (-1, 4))),
        Sample((randn(rng, 3, 1), (2, 3, 4))),
        Sample((randn(rng, 4), (3, 4))),
        Sample((randn(rng), (2, 3))),
        Sample((randn(rng, 3, 4), (3, 4))),
        Sample((randn(rng, 1, 3), (0, 3))),
        Sample((randn(rng, 3, 1), (3, 1, 4)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), (4,)), raises=RuntimeError),
        Sample((randn(rng, 3, 1), (-1, 3, 4)), raises=RuntimeError),
        Sample((integers(rng, 3, 1), (3, 4))),
        Sample((randn(rng, 1, 4), (3, 4)), noncontig=(0,)),
    ]


register(
    entry("expand", lambda lib, x, s: x.expand(*s), _expand_samples),
    entry("expand", lambda lib, x, s: x.expand(s), _expand_samples, variant="tuple"),
    with_layout("expand", lambda lib, x, s: x.expand(s), _expand_samples,
        xfail=parity_xfail(EMPTY_STRIDES, 6)),
    entry("expand_as", lambda lib, x, y: x.expand_as(y),
          lambda rng: [Sample((randn(rng, 3, 1), randn(rng, 3, 4)), grad=(0,)),
                       Sample((randn(rng), randn(rng, 2, 3)), grad=(0,))]),
    entry("broadcast_to", lambda lib, x, s: lib.broadcast_to(x, s), _expand_samples),
    entry("broadcast_to", lambda lib, x, s: x.broadcast_to(s), lambda rng: _expand_samples(rng)[:3],
          variant="method"),
    entry("expand_copy", lambda lib, x, s: lib.expand_copy(x, s), _expand_samples),
    with_layout("expand_copy", lambda lib, x, s: lib.expand_copy(x, s), lambda rng: _expand_samples(rng)[:3]),
)


# ---- writing through views (CopySlices) ----------------------------------------------------------
def _through(view):
    """Clone x, write v into view(clone) in place, return the clone (and the view)."""
    def call(lib, x, v):
        y = x.clone()
        w = view(y)
        w.mul_(v)
        return y, w
    return call


def _inplace_samples(view_shape):
    def samples(rng):
        return [Sample((randn(rng, 3, 4), randn(rng, *view_shape))),
                Sample((randn(rng, 3, 4), 2.5)),
                Sample((randn(rng, 3, 4), randn(rng, *view_shape)), noncontig=(0,))]
    return samples


register(
    entry("view", _through(lambda y: y.view(12)), lambda rng: _inplace_samples((12,))(rng)[:2],
          variant="inplace"),
    # a clone keeps a transposed layout, which cannot be viewed flat
    entry("view", _through(lambda y: y.view(12)),
          lambda rng: [Sample((randn(rng, 3, 4), 2.0), noncontig=(0,), raises=RuntimeError)],
          variant="inplace_error", grad=False),
    entry("transpose", _through(lambda y: y.transpose(0, 1)), _inplace_samples((4, 3)), variant="inplace"),
    entry("t", _through(lambda y: y.t()), _inplace_samples((3,)), variant="inplace"),
    entry("select", _through(lambda y: y.select(1, 2)), _inplace_samples((3,)), variant="inplace"),
    entry("narrow", _through(lambda y: y.narrow(1, 1, 2)), _inplace_samples((3, 2)), variant="inplace"),
    entry("unsqueeze", _through(lambda y: y.unsqueeze(0)), _inplace_samples((3, 4)), variant="inplace"),
    entry("squeeze", _through(lambda y: y[1:2].squeeze(0)), _inplace_samples((4,)), variant="inplace"),
    entry("permute", _through(lambda y: y.permute(1, 0)), _inplace_samples((4, 1)), variant="inplace"),
    entry("unbind", _through(lambda y: y.unbind(1)[2]),
          lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3)), raises=RuntimeError)],
          variant="inplace", grad=False),
    entry("unbind", _through(lambda y: y.unbind(1)[2]), lambda rng: [Sample((randn(rng, 3, 4), 2.5), grad=())],
          variant="inplace_no_grad", grad=False),
    entry("expand", lambda lib, x, v: x.clone()[:, :1].expand(3, 4).mul_(v),
          lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4)), raises=RuntimeError)],
          variant="inplace", grad=False),
)
