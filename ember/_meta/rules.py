"""What a NumPy ufunc or function gives for meta arrays: its result's shape and dtype.

Three ways, one per kind of function:
- views (transpose, broadcast_to, split ...) run on the arguments' skeletons: NumPy computes
  the view's shape, strides and offset, and reads nothing;
- the functions an ember op leans on for large arrays (ufuncs, matmul, reductions,
  concatenate, where, einsum, gathers ...) have a shape rule here, and their dtype comes from
  running the function on one-element arrays of the arguments' dtypes;
- any other function runs on zero-strided stand-ins of the arguments (`infer`): each holds
  one element, so the inputs cost nothing, and the result's shape and dtype are read off.
Functions whose result's shape depends on the values (nonzero, unique ...) raise as PyTorch
does for meta tensors; functions that write into an argument do nothing.
"""
import numpy as np

from .array import NONZERO, AllTrue, c_strides, ndarray, skeleton

_UNSUPPORTED = ("{}: attempted to run this operator with Meta tensors, but there was no fake "
                "impl or Meta kernel registered.")


def _walk(x, leaf):
    """`x` with `leaf` applied to every meta array in it (through lists, tuples, dicts)."""
    if isinstance(x, ndarray):
        return leaf(x)
    if type(x) in (list, tuple):
        return type(x)(_walk(i, leaf) for i in x)
    if type(x) is dict:
        return {k: _walk(v, leaf) for k, v in x.items()}
    return x


def _stand_in(x):
    return np.broadcast_to(np.zeros((), x.dtype), x.shape)


def _one(x):
    """A one-element array of `x`'s dtype and rank (host arrays too): for dtype rules."""
    if isinstance(x, (ndarray, np.ndarray)):
        return np.zeros((1,) * x.ndim, x.dtype)
    return x


def _fresh(result):
    """A NumPy result as the meta array of its shape and dtype (scalars as 0-d arrays)."""
    if isinstance(result, np.ndarray):
        order = "F" if result.ndim > 1 and result.flags.f_contiguous and \
            not result.flags.c_contiguous else "C"
        return ndarray.empty(result.shape, result.dtype, order)
    if isinstance(result, np.generic):
        return ndarray.empty((), result.dtype)
    if type(result) in (list, tuple):
        return type(result)(_fresh(r) for r in result)
    return result


def infer(func, args, kwargs):
    """`func`'s result for meta arguments, by running it on zero-strided stand-ins."""
    stand_args, stand_kwargs = _walk(args, _stand_in), _walk(kwargs, _stand_in)
    with np.errstate(all="ignore"):
        try:
            result = func(*stand_args, **stand_kwargs)
        except np.linalg.LinAlgError:  # zeros are singular: identities answer for the shape
            eye = _walk(args, _identity_stand_in)
            result = func(*eye, **_walk(kwargs, _identity_stand_in))
    return _fresh(result)


def _identity_stand_in(x):
    if x.ndim < 2:
        return _stand_in(x)
    return np.broadcast_to(np.eye(x.shape[-2], x.shape[-1], dtype=x.dtype), x.shape)


def host_stand_in(x):
    """A host array standing in for meta array `x` where an op computes on the host
    (LAPACK): identities (no factorisation fails on them), as a writable copy."""
    return np.array(_identity_stand_in(x))


# ---- ufuncs ---------------------------------------------------------------------------------
def _shape(x):
    return x.shape if isinstance(x, (ndarray, np.ndarray)) else ()


def _zero_d(x):
    return np.zeros((), x.dtype) if isinstance(x, (ndarray, np.ndarray)) else x


def ufunc_result(ufunc, method, inputs, out, kwargs):
    kwargs.pop("where", None)
    if method == "at":
        return None
    with np.errstate(all="ignore"):
        if method == "__call__":
            if ufunc is np.matmul:
                result = _matmul(*inputs, **kwargs)
            elif ufunc.signature is not None:
                return infer(ufunc, inputs, kwargs)
            else:
                shape = np.broadcast_shapes(*map(_shape, inputs))
                tiny = ufunc(*map(_zero_d, inputs), **kwargs)
                if type(tiny) is tuple:
                    result = tuple(ndarray.laid_out(shape, r.dtype, inputs) for r in tiny)
                else:
                    result = ndarray.laid_out(shape, tiny.dtype, inputs)
        elif method in ("reduce", "accumulate"):
            (array,) = inputs
            axis = kwargs.get("axis", 0)
            tiny = getattr(ufunc, method)(_one(array), **kwargs)
            if method == "accumulate":
                result = ndarray.empty(array.shape, tiny.dtype)
            else:
                result = ndarray.empty(_reduced(array.shape, axis, kwargs.get("keepdims")),
                                       tiny.dtype)
        elif method == "outer":
            a, b = inputs
            tiny = ufunc(_zero_d(a), _zero_d(b), **kwargs)
            result = ndarray.empty(_shape(a) + _shape(b), tiny.dtype)
        else:
            return infer(getattr(ufunc, method), inputs, kwargs)
    if out is not None:  # written in place: the output arrays are the result
        return out if len(out) > 1 else out[0]
    return result


def _reduced(shape, axis, keepdims):
    if axis is None:
        axes = range(len(shape))
    else:
        axes = {a % max(len(shape), 1) for a in (axis if type(axis) is tuple else (axis,))}
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _matmul(a, b, dtype=None, **kwargs):
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    ma = sa if len(sa) > 1 else (1,) + sa
    mb = sb if len(sb) > 1 else sb + (1,)
    if ma[-1] != mb[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature (n?,k),(k,m?)->(n?,m?) (size {mb[-2]} is different "
                         f"from {ma[-1]})")
    shape = np.broadcast_shapes(ma[:-2], mb[:-2]) + ma[-2:-1] * (len(sa) > 1) + \
        mb[-1:] * (len(sb) > 1)
    tiny = np.matmul(np.zeros((1, 1), a.dtype), np.zeros((1, 1), b.dtype), dtype=dtype)
    return ndarray.empty(shape, tiny.dtype)


# ---- functions ------------------------------------------------------------------------------
def _on_skeletons(func):
    """A view function, run on the skeletons: its results are views of the first meta
    argument (or, one for one, of each argument: broadcast_arrays)."""
    def rule(*args, **kwargs):
        metas = []
        result = func(*_walk(args, lambda m: metas.append(m) or m._skel),
                      **_walk(kwargs, lambda m: metas.append(m) or m._skel))
        if isinstance(result, np.ndarray):
            return metas[0]._view(result)
        if len(result) == len(metas):
            return type(result)(m._view(r) for m, r in zip(metas, result))
        return type(result)(metas[0]._view(r) for r in result)
    return rule


def _reduction(func):
    kind = AllTrue if func is np.all else ndarray

    def rule(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        extra = {"dtype": dtype} if dtype is not None else {}
        with np.errstate(all="ignore"):
            tiny = func(_one(a), axis=axis, keepdims=keepdims, **extra, **kwargs)
        result = kind(skeleton(_reduced(a.shape, axis, keepdims), np.asarray(tiny).dtype))
        return out if out is not None else result
    return rule


def _scan(func):
    def rule(a, axis=None, dtype=None, out=None, **kwargs):
        tiny = func(_one(a), axis=axis, dtype=dtype, **kwargs)
        return ndarray.empty(a.shape if axis is not None else (a.size,), tiny.dtype)
    return rule


def _same_shape(func, dtype=None):
    def rule(a, *args, **kwargs):
        return ndarray.empty(a.shape, dtype or a.dtype)
    return rule


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    if axis is None:
        arrays = [ndarray.empty((a.size,), a.dtype) for a in arrays]
        axis = 0
    first = _shape(arrays[0])
    axis %= max(len(first), 1)
    for a in arrays[1:]:
        s = _shape(a)
        if len(s) != len(first) or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
            return infer(np.concatenate, (arrays,), {"axis": axis})  # NumPy's error
    shape = first[:axis] + (sum(_shape(a)[axis] for a in arrays),) + first[axis + 1:]
    result = ndarray.empty(shape, dtype or np.result_type(*(_zero_d(a) for a in arrays)))
    return out if out is not None else result


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    shapes = {_shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    (shape,) = shapes
    axis %= len(shape) + 1
    shape = shape[:axis] + (len(arrays),) + shape[axis:]
    result = ndarray.empty(shape, dtype or np.result_type(*(_zero_d(a) for a in arrays)))
    return out if out is not None else result


def _where(condition, *xy):
    if not xy:
        raise NotImplementedError(NONZERO)
    shape = np.broadcast_shapes(*map(_shape, (condition, *xy)))
    return ndarray.laid_out(shape, np.where(True, *map(_zero_d, xy)).dtype, (condition, *xy))


def _clip(a, a_min=None, a_max=None, out=None, **kwargs):
    shape = np.broadcast_shapes(*map(_shape, (a, a_min, a_max)))
    tiny = np.clip(_zero_d(a), _zero_d(a_min), _zero_d(a_max), **kwargs)
    return out if out is not None else ndarray.laid_out(shape, tiny.dtype, (a, a_min, a_max))


def _take(a, indices, axis=None, out=None, mode="raise"):
    ind = _shape(indices)
    shape = ind if axis is None else a.shape[:axis % a.ndim] + ind + a.shape[axis % a.ndim + 1:]
    return out if out is not None else ndarray.empty(shape, a.dtype)


def _take_along_axis(arr, indices, axis=-1):
    if axis is None:
        return ndarray.empty(_shape(indices), arr.dtype)
    axis %= arr.ndim
    a, i = list(arr.shape), list(_shape(indices))
    a[axis] = 1
    i_rest = i[:axis] + [1] + i[axis + 1:]
    shape = list(np.broadcast_shapes(tuple(a), tuple(i_rest)))
    shape[axis] = i[axis]
    return ndarray.empty(tuple(shape), arr.dtype)


def _einsum(subscripts, *operands, out=None, dtype=None, optimize=False, **kwargs):
    if not isinstance(subscripts, str):
        return infer(np.einsum, (subscripts, *operands), {"dtype": dtype})
    spec = subscripts.replace(" ", "")
    inputs, _, output = spec.partition("->")
    inputs = inputs.split(",")
    sizes, ellipsis = {}, ()
    for term, op in zip(inputs, operands):
        shape = _shape(op)
        if "..." in term:
            head, tail = term.split("...")
            n = len(shape) - len(head) - len(tail)
            ellipsis = np.broadcast_shapes(ellipsis, shape[len(head):len(head) + n])
            shape = shape[:len(head)] + shape[len(head) + n:]
            term = head + tail
        for label, n in zip(term, shape):
            if sizes.get(label, 1) == 1:
                sizes[label] = n
    if not _:
        letters = "".join(inputs).replace(".", "")
        output = ("..." if "..." in spec else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    if "..." in output:
        head, tail = output.split("...")
        shape = tuple(sizes[c] for c in head) + ellipsis + tuple(sizes[c] for c in tail)
    else:
        shape = tuple(sizes[c] for c in output)
    tiny = np.result_type(*(_zero_d(o) for o in operands)) if dtype is None else np.dtype(dtype)
    return out if out is not None else ndarray.empty(shape, tiny)


def _like(prototype, *args, dtype=None, order="K", subok=True, shape=None, **kwargs):
    """zeros_like, ones_like, empty_like, full_like: the prototype's shape and layout."""
    dtype = prototype.dtype if dtype is None else dtype
    if shape is not None or order == "C":
        return ndarray.empty(prototype.shape if shape is None else shape, dtype)
    return ndarray.laid_out(prototype.shape, dtype, (prototype,))


def _contiguous(a, dtype=None, *, like=None):
    if a.flags.c_contiguous and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    return ndarray.empty(a.shape, a.dtype if dtype is None else dtype)


def _asarray(a, dtype=None, order=None, *, copy=None, device=None, like=None):
    if dtype is None or np.dtype(dtype) == a.dtype:
        return a.copy() if copy else a
    return ndarray.empty(a.shape, dtype)


def _array(a, dtype=None, *, copy=True, order="K", **kwargs):
    return _asarray(a, dtype, copy=copy)


def _nothing(*args, **kwargs):
    return None  # a write into meta memory: nothing to write


def _data_dependent(name):
    def rule(*args, **kwargs):
        if name == "nonzero":
            raise NotImplementedError(NONZERO)
        raise NotImplementedError(_UNSUPPORTED.format(name))
    return rule


_VIEWS = (np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze, np.broadcast_to,
          np.broadcast_arrays, np.diagonal, np.real, np.imag, np.atleast_1d, np.atleast_2d,
          np.atleast_3d, np.flip, np.fliplr, np.flipud, np.split, np.array_split, np.hsplit,
          np.vsplit, np.dsplit, np.lib.stride_tricks.sliding_window_view, np.permute_dims,
          np.matrix_transpose, np.unstack)
_REDUCTIONS = (np.sum, np.prod, np.mean, np.std, np.var, np.max, np.min, np.amax, np.amin,
               np.any, np.all, np.nansum, np.nanmean, np.nanprod, np.nanmax, np.nanmin,
               np.nanstd, np.nanvar, np.count_nonzero, np.median, np.nanmedian,
               np.logsumexp if hasattr(np, "logsumexp") else np.sum)
_DATA_DEPENDENT = {np.nonzero: "nonzero", np.argwhere: "nonzero", np.flatnonzero: "nonzero",
                   np.unique: "aten::_unique2", np.unique_values: "aten::_unique2",
                   np.unique_counts: "aten::_unique2", np.unique_inverse: "aten::_unique2",
                   np.unique_all: "aten::_unique2", np.bincount: "aten::bincount",
                   np.extract: "aten::masked_select", np.compress: "aten::masked_select",
                   np.array_equal: "aten::equal"}

RULES = {f: _on_skeletons(f) for f in _VIEWS}
RULES.update({f: _reduction(f) for f in _REDUCTIONS})
RULES.update({f: _data_dependent(name) for f, name in _DATA_DEPENDENT.items()})
RULES.update({
    np.argmax: _reduction(np.argmax), np.argmin: _reduction(np.argmin),
    np.cumsum: _scan(np.cumsum), np.cumprod: _scan(np.cumprod),
    np.concatenate: _concatenate, np.stack: _stack, np.where: _where, np.clip: _clip,
    np.take: _take, np.take_along_axis: _take_along_axis, np.einsum: _einsum,
    np.sort: _same_shape(np.sort), np.argsort: _same_shape(np.argsort, np.dtype(np.intp)),
    np.tril: _same_shape(np.tril), np.triu: _same_shape(np.triu),
    np.copyto: _nothing, np.put_along_axis: _nothing, np.put: _nothing, np.place: _nothing,
    np.putmask: _nothing, np.fill_diagonal: _nothing,
    np.zeros_like: _like, np.ones_like: _like, np.empty_like: _like, np.full_like: _like,
    np.ascontiguousarray: _contiguous, np.asarray: _asarray, np.array: _array,
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.size: lambda a, axis=None:
        a.size if axis is None else a.shape[axis],
    np.iscomplexobj: lambda x: x.dtype.kind == "c", np.isrealobj: lambda x: x.dtype.kind != "c",
    np.result_type: lambda *a: np.result_type(*_walk(a, lambda m: m.dtype)),
    np.may_share_memory: lambda a, b, max_work=None: np.may_share_memory(
        *_walk((a, b), lambda m: m._skel)),
    np.shares_memory: lambda a, b, max_work=None: np.may_share_memory(
        *_walk((a, b), lambda m: m._skel)),
})


def function_result(func, args, kwargs):
    rule = RULES.get(func)
    if rule is not None:
        return rule(*args, **kwargs)
    return infer(func, args, kwargs)


def strided(a, shape=None, strides=None, subok=False, writeable=True):
    """`as_strided` of a meta array: the skeleton restrided (NumPy checks no extents)."""
    shape = a.shape if shape is None else tuple(shape)
    strides = c_strides(shape, a.itemsize) if strides is None else tuple(strides)
    return a._view(np.lib.stride_tricks.as_strided(a._skel, shape, strides, writeable=False))
