"""ONNX forms of shape ops, indexing, casts and tensor constructors (same calling
convention as _lower_math). A size read from a tensor (`x.size(0)`, `x.shape[1]`) is a 0-d
int64 Value, so a reshape that uses it keeps a dynamic axis dynamic."""
from .. import dtypes
from ._builder import Value, onnx_dtype
from ._lower_math import as_value, axes_of, cast, lowering
from .errors import OnnxExporterError

__all__ = []

_END = 2 ** 63 - 1


def int_vector(g, items):
    """A 1-d int64 Value from ints and 0-d int64 Values (sizes read from tensors)."""
    if isinstance(items, Value):
        return items
    items = list(items)
    if all(not isinstance(i, Value) for i in items):
        return g.ints(items)
    parts = []
    for i in items:
        if isinstance(i, Value):
            i = cast(g, i, dtypes.int64)
            parts.append(i if i.shape and len(i.shape) == 1 else
                         g.op("Unsqueeze", [i, g.ints([0])]))
        else:
            parts.append(g.ints([i]))
    return g.op("Concat", parts, axis=0)


def _sizes(args):
    """view(2, 3) / view((2, 3)) / view(size_value)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple, Value)):
        return args[0]
    return args


@lowering("view", "reshape", "_reshape_alias")
def _reshape(g, out, a, *shape, **kwargs):
    shape = kwargs.get("shape", shape)
    if len(shape) == 1 and hasattr(shape[0], "is_floating_point"):  # view(dtype)
        raise OnnxExporterError("Tensor.view(dtype) has no ONNX form")
    return g.op("Reshape", [a, int_vector(g, _sizes(shape))])


@lowering("view_as", "reshape_as")
def _reshape_as(g, out, a, other):
    return g.op("Reshape", [a, g.op("Shape", [other])])


@lowering("flatten")
def _flatten(g, out, a, start_dim=0, end_dim=-1):
    r = a.rank
    start, end = (start_dim + r if start_dim < 0 else start_dim,
                  end_dim + r if end_dim < 0 else end_dim)
    if r == 0:
        return g.op("Reshape", [a, g.ints([1])])
    shape = g.op("Shape", [a])
    pieces = []
    if start > 0:
        pieces.append(g.op("Slice", [shape, g.ints([0]), g.ints([start])]))
    pieces.append(g.ints([-1]))
    if end < r - 1:
        pieces.append(g.op("Slice", [shape, g.ints([end + 1]), g.ints([r])]))
    target = pieces[0] if len(pieces) == 1 else g.op("Concat", pieces, axis=0)
    return g.op("Reshape", [a, target])


@lowering("unflatten")
def _unflatten(g, out, a, dim, sizes):
    r = a.rank
    d = dim + r if dim < 0 else dim
    shape = g.op("Shape", [a])
    pieces = []
    if d > 0:
        pieces.append(g.op("Slice", [shape, g.ints([0]), g.ints([d])]))
    pieces.append(int_vector(g, sizes))
    if d < r - 1:
        pieces.append(g.op("Slice", [shape, g.ints([d + 1]), g.ints([r])]))
    return g.op("Reshape", [a, g.op("Concat", pieces, axis=0)])


@lowering("transpose", "swapaxes", "swapdims")
def _transpose(g, out, a, dim0, dim1):
    perm = list(range(a.rank))
    d0, d1 = (d + a.rank if d < 0 else d for d in (dim0, dim1))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return g.op("Transpose", [a], perm=perm)


@lowering("t")
def _t(g, out, a):
    return a if a.rank < 2 else g.op("Transpose", [a], perm=[1, 0])


@lowering("permute")
def _permute(g, out, a, *dims, **kwargs):
    dims = kwargs.get("dims", dims)
    dims = _sizes(dims)
    return g.op("Transpose", [a], perm=[d + a.rank if d < 0 else d for d in dims])


@lowering("contiguous", "clone", "detach", "alias", "requires_grad_", "cpu", "cuda")
def _identity(g, out, a, *_, **__):
    return g.op("Identity", [a])


@lowering("unsqueeze")
def _unsqueeze(g, out, a, dim):
    d = dim + a.rank + 1 if dim < 0 else dim
    return g.op("Unsqueeze", [a, g.ints([d])])


@lowering("squeeze")
def _squeeze(g, out, a, dim=None):
    if dim is None:
        return g.op("Reshape", [a, g.ints(list(out.shape))]) \
            if all(isinstance(s, int) for s in out.shape) else g.op("Squeeze", [a])
    axes = [d for d in axes_of(dim, a.rank) if a.shape[d] == 1]
    return g.op("Squeeze", [a, g.ints(axes)]) if axes else a


@lowering("cat", "concat", "concatenate")
def _cat(g, out, tensors, dim=0):
    vals = [cast(g, t, out.dtype) for t in tensors]
    return g.op("Concat", vals, axis=dim + len(out.shape) if dim < 0 else dim)


@lowering("stack")
def _stack(g, out, tensors, dim=0):
    r = len(out.shape)
    d = dim + r if dim < 0 else dim
    vals = [g.op("Unsqueeze", [cast(g, t, out.dtype), g.ints([d])]) for t in tensors]
    return g.op("Concat", vals, axis=d)


@lowering("split")
def _split(g, out, a, split_size_or_sections, dim=0):
    d = dim + a.rank if dim < 0 else dim
    n = a.shape[d]
    if not isinstance(n, int):
        raise OnnxExporterError("split along a dynamic axis is not supported")
    if isinstance(split_size_or_sections, int):
        k = split_size_or_sections
        sizes = [min(k, n - i) for i in range(0, n, k)] or [0]
    else:
        sizes = list(split_size_or_sections)
    outs = g.op("Split", [a, g.ints(sizes)], outputs=len(sizes), axis=d)
    return (outs,) if len(sizes) == 1 else outs


@lowering("chunk")
def _chunk(g, out, a, chunks, dim=0):
    d = dim + a.rank if dim < 0 else dim
    n = a.shape[d]
    k = -(-n // chunks)
    return _split(g, out, a, k, d)


@lowering("unbind")
def _unbind(g, out, a, dim=0):
    d = dim + a.rank if dim < 0 else dim
    parts = _split(g, out, a, 1, d)
    return tuple(g.op("Squeeze", [p, g.ints([d])]) for p in parts)


@lowering("narrow")
def _narrow(g, out, a, dim, start, length):
    d = dim + a.rank if dim < 0 else dim
    return g.op("Slice", [a, int_vector(g, [start]),
                          int_vector(g, [start + length]) if not isinstance(start, Value)
                          else g.op("Add", [int_vector(g, [start]), int_vector(g, [length])]),
                          g.ints([d])])


@lowering("expand")
def _expand(g, out, a, *sizes, **kwargs):
    sizes = list(_sizes(kwargs.get("size", sizes)))
    # -1 keeps the input's size: Expand's broadcasting does that with a 1
    target = [1 if (isinstance(s, int) and s == -1) else s for s in sizes]
    return g.op("Expand", [a, int_vector(g, target)])


@lowering("expand_as")
def _expand_as(g, out, a, other):
    return g.op("Expand", [a, g.op("Shape", [other])])


@lowering("repeat")
def _repeat(g, out, a, *repeats):
    repeats = list(_sizes(repeats))
    if len(repeats) > a.rank:
        a = g.op("Reshape", [a, g.ints([1] * (len(repeats) - a.rank) + list(a.shape))])
    return g.op("Tile", [a, int_vector(g, repeats)])


@lowering("size")
def _size(g, out, a, dim=None):
    shape = g.op("Shape", [a])
    if dim is None:
        return shape
    d = dim + a.rank if dim < 0 else dim
    return g.op("Gather", [shape, g.const(d, dtype="int64")], axis=0)


@lowering("dim")
def _dim(g, out, a):
    return a.rank


@lowering("numel")
def _numel(g, out, a):
    return g.op("Size", [a])


@lowering("getattr")
def _getattr(g, out, a, name):
    if name == "shape":
        return g.op("Shape", [a])
    if name == "T" or name == "mT":
        perm = list(range(a.rank))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return g.op("Transpose", [a], perm=perm if name == "mT" else perm[::-1])
    raise OnnxExporterError(f"reading the attribute {name!r} of a tensor has no ONNX form")


# ---- casts ---------------------------------------------------------------------------
@lowering("to", "type", "type_as", "float", "double", "half", "bfloat16", "long", "int", "bool",
          "short", "byte")
def _to(g, out, a, *args, **kwargs):
    return cast(g, a, out.dtype) if out.dtype != a.dtype else g.op("Identity", [a])


# ---- constructors ---------------------------------------------------------------------
def _filled(g, out, like, value):
    return g.op("Expand", [g.const(value, dtype=out.dtype.np), like])


@lowering("zeros_like", "ones_like", "full_like", "empty_like")
def _like(g, out, a, fill_value=None, **kwargs):
    value = {"zeros_like": 0, "ones_like": 1, "empty_like": 0}.get(g.current, fill_value)
    return _filled(g, out, g.op("Shape", [a]), value)


@lowering("zeros", "ones", "full", "empty", "new_zeros", "new_ones", "new_full", "new_empty")
def _filled_new(g, out, *args, **kwargs):
    name = g.current
    if name.startswith("new_"):
        args = args[1:]  # (the tensor the method was called on)
    if name in ("full", "new_full"):
        size, value = (args[0], args[1]) if len(args) > 1 else (args[0], kwargs["fill_value"])
    else:
        size = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple, Value)) else args
        size = kwargs.get("size", size)
        value = 1 if name in ("ones", "new_ones") else 0
    if isinstance(value, Value):
        return g.op("Expand", [cast(g, value, out.dtype), int_vector(g, size)])
    return _filled(g, out, int_vector(g, size), value)


@lowering("arange")
def _arange(g, out, *args, **kwargs):
    nums = [a for a in args if not isinstance(a, str)]
    start, end, step = (0, nums[0], 1) if len(nums) == 1 else \
        (nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
    start, end, step = (kwargs.get("start", start), kwargs.get("end", end),
                        kwargs.get("step", step))
    vals = [cast(g, v, out.dtype) if isinstance(v, Value) else g.const(v, dtype=out.dtype.np)
            for v in (start, end, step)]
    return g.op("Range", vals)


@lowering("tril", "triu")
def _tri(g, out, a, diagonal=0):
    return g.op("Trilu", [a, g.const(diagonal, dtype="int64")], upper=int(g.current == "triu"))


# ---- indexing --------------------------------------------------------------------------
@lowering("gather")
def _gather(g, out, a, dim, index, sparse_grad=False):
    d = dim + a.rank if dim < 0 else dim
    return g.op("GatherElements", [a, cast(g, index, dtypes.int64)], axis=d)


@lowering("index_select")
def _index_select(g, out, a, dim, index):
    d = dim + a.rank if dim < 0 else dim
    return g.op("Gather", [a, cast(g, index, dtypes.int64)], axis=d)


@lowering("getitem", "__getitem__")
def _getitem(g, out, a, index):
    if isinstance(a, (list, tuple)):  # a Python container of values (split's result)
        return a[index]
    if a.shape is not None and a.rank == 1 and a.dtype == dtypes.int64 and \
            isinstance(index, int) and out.shape == ():  # a shape's entry
        return g.op("Gather", [a, g.const(index, dtype="int64")], axis=0)
    index = index if isinstance(index, tuple) else (index,)
    if any(i is Ellipsis for i in index):
        k = index.index(Ellipsis)
        fill = a.rank - sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:k] + (slice(None),) * fill + index[k + 1:]
    r, axis, unsqueeze = a, 0, []
    starts, ends, axes, steps = [], [], [], []
    gathers = []  # (axis in the result before squeezing, index)
    for i in index:
        if i is None:
            unsqueeze.append(axis)
            axis += 1
        elif isinstance(i, slice):
            if i != slice(None):
                starts.append(0 if i.start is None else i.start)
                ends.append(_END if i.stop is None else i.stop)
                axes.append(axis)
                steps.append(1 if i.step is None else i.step)
            axis += 1
        elif isinstance(i, (int, Value)):
            if isinstance(i, Value) and i.dtype == dtypes.bool:
                raise OnnxExporterError("indexing with a boolean mask is data-dependent and "
                                        "has no static ONNX form")
            if isinstance(i, Value) and i.shape != () and \
                    any(isinstance(j, Value) and j.shape != () for _, j in gathers):
                raise OnnxExporterError("indexing with several index tensors (broadcast "
                                        "together) is not supported by the ONNX export")
            gathers.append((axis, i))
            axis += 1
        else:
            raise OnnxExporterError(f"indexing with {type(i).__name__} has no ONNX form")
    # axes so far count the input's dims after the Nones: apply Unsqueeze first
    if unsqueeze:
        r = g.op("Unsqueeze", [r, g.ints(unsqueeze)])
    if axes:
        r = g.op("Slice", [r, int_vector(g, starts), int_vector(g, ends), g.ints(axes),
                           g.ints(steps)])
    removed = 0
    for ax, i in gathers:
        idx = cast(g, i, dtypes.int64) if isinstance(i, Value) else g.const(i, dtype="int64")
        r = g.op("Gather", [r, idx], axis=ax - removed)
        if not isinstance(i, Value) or i.shape == ():
            removed += 1
    return r


@lowering("setitem")
def _setitem(g, out, *args):
    raise OnnxExporterError("in-place assignment into a tensor (x[i] = v) has no ONNX form")


__all__ += ["int_vector", "onnx_dtype", "as_value"]
