"""CuPy's user-defined kernels on the stand-in, run by NumPy: `ReductionKernel` and
`ElementwiseKernel`.

ember writes its kernels in a small subset of C++ (`c_subset`: arithmetic, comparisons, the
ternary, integer index arithmetic, reads of `raw` arrays, local variables, `for` loops,
CUDA's sqrt, exp and erf, the casts `T(v)`, `float(v)` and `double(v)`, and reads and writes
through `T*` pointers made from device addresses), with
every constant but whole numbers a parameter of the kernel's type, so the stand-in can run
them on the arrays inside, one rounding per operation as NumPy's arithmetic and CUDA's alike;
anything beyond the subset is refused with NotImplementedError, so a kernel the stand-in cannot
run fails loudly here rather than running differently on a GPU. Arguments are checked as CuPy
checks them: device arrays (or scalars) only, one dtype per type placeholder, no dtype a
kernel cannot name; a kernel with no array to size its loop needs `size=`.

With EMBER_KERNEL_RECORD=<prefix> in the environment, every distinct call (the kernel's
definition and its arguments' dtypes, dims and layouts) is written at exit to
`<prefix>.<pid>.jsonl`, for `benchmarks/nvcc_check.py` to compile as CuPy would (on a
machine with no GPU, with CUDA's nvcc)."""
import atexit
import json
import math
import os
import re

import numpy as np

from . import c_subset
from .array import Cells, kernel_dtype, ndarray, unsupported

_RECORD_PREFIX = os.environ.get("EMBER_KERNEL_RECORD")
_RECORDED = {}  # signature -> its record, written at exit


def _layout(a, shape=None):
    """[dtype, ndim, C-contiguous] of a kernel argument as the kernel reads it (broadcast to
    `shape` when given); a scalar is [None, 0, True]: CuPy types it from its parameter."""
    if type(a) is not ndarray:
        return [None, 0, True]
    v = a._a if shape is None else np.broadcast_to(a._a, shape)
    return [v.dtype.name, v.ndim, bool(v.flags.c_contiguous)]


def _record(kind, definition, arguments, **call):
    if _RECORD_PREFIX is None:
        return
    entry = {"kind": kind, "definition": definition, "arguments": arguments, **call}
    _RECORDED.setdefault(json.dumps(entry, sort_keys=True), entry)


@atexit.register
def _write_records():
    if _RECORD_PREFIX and _RECORDED:
        with open(f"{_RECORD_PREFIX}.{os.getpid()}.jsonl", "w") as f:
            f.writelines(line + "\n" for line in _RECORDED)


_REDUCTIONS = {"a+b": np.add, "max(a,b)": np.maximum, "min(a,b)": np.minimum}


def _parameters(text):
    """'T x, raw T y, float32 w' -> [(False, 'T', 'x'), (True, 'T', 'y'), (False, 'float32',
    'w')]."""
    out = []
    for part in text.split(","):
        words = part.split()
        raw = len(words) == 3 and words[0] == "raw"
        if len(words) != 2 + raw:
            raise ValueError(f"Invalid parameter: {part.strip()!r}")
        out.append((raw, words[-2], words[-1]))
    return out


def _factors(node):
    """The factors an expression multiplies together ([x, w] for 'x * w', [x - m, x - m] for
    '(x - m) * (x - m)', [x] for 'x'): the expressions whose product it is."""
    if node[0] == "bin" and node[1] == "*":
        return _factors(node[2]) + _factors(node[3])
    return [node]


def _expression(text, names):
    """`text` parsed, when it reads no name but `names`."""
    node = c_subset.parse_expression(text)
    unknown = c_subset.names_in(node) - set(names)
    if unknown:
        raise c_subset.refuse(text, f"it reads {sorted(unknown)}, which are not parameters")
    return node


def _flat_run(node, values, t, shape):
    """The expression `node` over `values` (arrays broadcast to `shape`, or scalars), shaped."""
    n = math.prod(shape)
    env = {k: np.broadcast_to(v, shape).ravel() if isinstance(v, np.ndarray) else v
           for k, v in values.items()}
    out = c_subset.Evaluation(env, {}, t, n).value(node)
    return np.broadcast_to(out, (n,)).reshape(shape)


class ReductionKernel:
    """cupy.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
    identity, name): map each element, reduce with `reduce_expr` ('a + b', 'max(a, b)' or
    'min(a, b)') over `axis`, then `post_map_expr` ('y = <arithmetic of a and scalar
    parameters>')."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="reduce_kernel", reduce_type=None, reduce_dims=True, preamble="",
                 options=()):
        self.name = name
        self._definition = [in_params, out_params, map_expr, reduce_expr, post_map_expr,
                            identity, name, reduce_type, preamble, list(options)]
        self._in, self._out = _parameters(in_params), _parameters(out_params)
        if len(self._out) != 1 or any(raw for raw, _, _ in self._in + self._out):
            raise NotImplementedError("the CuPy stand-in's ReductionKernel has one output and "
                                      "no raw parameters")
        self._map = _expression(map_expr, {n for _, _, n in self._in})
        # a sum of products runs as NumPy's einsum over the factors' values, as ember's CPU path
        # sums (the centred values its norms store, then einsum): the stand-in then computes as
        # the CPU does, to the bit (DESIGN.md, "Devices in the tests")
        self._factors = _factors(self._map)
        reduce_key = re.sub(r"\s+", "", reduce_expr)
        if reduce_key not in _REDUCTIONS:
            raise NotImplementedError(f"the CuPy stand-in cannot reduce with {reduce_expr!r}")
        self._reduce = _REDUCTIONS[reduce_key]
        target, _, expression = post_map_expr.partition("=")
        if target.strip() != self._out[0][2]:
            raise NotImplementedError(f"the CuPy stand-in cannot run {post_map_expr!r}")
        # (post_map may read scalar parameters too: they are the kernel's own arguments)
        self._post = _expression(expression, {"a"} | {n for _, _, n in self._in})
        self._post_reads = c_subset.names_in(self._post) - {"a"}
        self._reduce_type = reduce_type

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        if len(args) != len(self._in):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        bound = {}
        values, _ = _bind(self._in, args, bound)
        if not any(isinstance(v, np.ndarray) for v in values.values()):
            raise unsupported(args[0])
        out_type = self._out[0][1]
        out_dtype = bound[out_type] if out_type in bound else np.dtype(out_type)
        work = np.dtype(self._reduce_type) if self._reduce_type else out_dtype
        shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()))
        with np.errstate(all="ignore"):  # as C arithmetic: inf and NaN, no warnings
            if self._reduce is np.add and work == out_dtype:
                factors = [_flat_run(f, values, bound.get("T"), shape) for f in self._factors]
                reduced = _einsum_sum([np.asarray(f, out_dtype) for f in factors], axis,
                                      keepdims)
            else:
                mapped = _flat_run(self._map, values, bound.get("T"), shape).astype(work)
                reduced = self._reduce.reduce(mapped, axis=axis, keepdims=keepdims)
            reduced = np.asarray(reduced)
            read = {n: values[n] for n in self._post_reads}
            if any(isinstance(v, np.ndarray) for v in read.values()):
                raise NotImplementedError(f"{self.name}: post_map_expr reads an array parameter")
            result = _flat_run(self._post, {"a": reduced, **read}, bound.get("T"),
                               reduced.shape)
        _record("reduction", self._definition, [_layout(a, shape) for a in args],
                axis=sorted(range(len(shape)) if axis is None else
                            {a % len(shape) for a in np.atleast_1d(axis).tolist()}),
                keepdims=bool(keepdims), ndim=len(shape))
        return ndarray._of(np.array(result, dtype=out_dtype))


def _bind(params, args, bound):
    """The NumPy values of kernel arguments (and, apart, the flat contents of raw ones),
    binding type placeholders as CuPy does: arrays bind them (two dtypes for one placeholder
    is a TypeError), scalars take the bound type."""
    values, raw, scalars = {}, {}, []
    for (is_raw, type_name, name), arg in zip(params, args):
        if type(arg) is ndarray:
            kernel_dtype(arg._a.dtype)
            want = bound.setdefault(type_name, arg._a.dtype) if len(type_name) == 1 \
                else np.dtype(type_name)
            if arg._a.dtype != want:
                raise TypeError(f"Type is mismatched. {name} {arg._a.dtype} {want}")
            if is_raw:  # read by flat index in C order (CuPy's CArray)
                raw[name] = np.ravel(arg._a)
            else:
                values[name] = arg._a
        elif isinstance(arg, (np.generic, int, float, bool)) and not is_raw:
            scalars.append((type_name, name, arg))
        else:
            raise unsupported(arg)
    for type_name, name, arg in scalars:
        dtype = np.dtype(type_name) if len(type_name) > 1 else bound.setdefault(
            type_name, np.asarray(arg).dtype)
        values[name] = dtype.type(arg)
    return values, raw


class ElementwiseKernel:
    """cupy.ElementwiseKernel(in_params, out_params, operation, name): `operation` is
    c_subset statements, run for every element `i` of the arguments broadcast together
    (outputs passed after the inputs among them, and of the result's shape; raw ones apart),
    or of `size` when no array sizes the loop; outputs not passed are made, uninitialised."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, loop_prep="",
                 after_loop="", options=()):
        self.name = name
        self._definition = [in_params, out_params, operation, name, preamble, loop_prep,
                            after_loop, list(options)]
        self._in, self._out = _parameters(in_params), _parameters(out_params)
        if "i" in (name for _, _, name in self._in + self._out):
            raise ValueError("Can not use 'i' as a parameter name")
        if any(raw for raw, _, _ in self._out):
            raise NotImplementedError("the CuPy stand-in's kernels write no raw outputs")
        self._body = c_subset.parse_statements(operation)
        self._return_tuple = return_tuple

    def __call__(self, *args, size=None, block_size=None, stream=None):
        if len(args) not in (len(self._in), len(self._in) + len(self._out)):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        bound = {}
        values, raw = _bind(self._in, args, bound)
        given = args[len(self._in):]
        # inputs and given outputs broadcast together; an output must have the result's shape
        shapes = [v.shape for v in values.values() if isinstance(v, np.ndarray)] + \
            [o._a.shape for o in given if type(o) is ndarray]
        if not shapes:
            if size is None:
                raise ValueError("Loop size is undecided")
            shape = (int(size),)
        else:
            if size is not None:  # CuPy: "if and only if all ndarrays are raw"
                raise ValueError("size is given with non-raw arrays to size the loop")
            shape = np.broadcast_shapes(*shapes)
        outs, declared = [], {}
        for i, (_, type_name, name) in enumerate(self._out):
            if given and type(given[i]) is ndarray and len(type_name) == 1:
                bound.setdefault(type_name, given[i]._a.dtype)  # an output binds it too, as in CuPy
            dtype = np.dtype(type_name) if len(type_name) > 1 else bound.get(type_name)
            if given:
                out = given[i]
                if type(out) is not ndarray:
                    raise unsupported(out)
                if dtype is not None and out._a.dtype != dtype:
                    raise TypeError(f"Type is mismatched. {name} {out._a.dtype} {dtype}")
                if out._a.shape != shape:
                    raise ValueError(f"Out shape is mismatched: {out._a.shape} {shape}")
            else:
                if dtype is None:
                    raise TypeError(f"Cannot determine the type of {name}")
                out = ndarray._of(np.empty(shape, dtype))
            outs.append(out)
            declared[name] = out._a.dtype
        n = math.prod(shape)
        env = {k: np.broadcast_to(v, shape).ravel() if isinstance(v, np.ndarray) else v
               for k, v in values.items()}
        env.update({name: np.ravel(o._a).copy() for (_, _, name), o in zip(self._out, outs)})
        env["i"] = np.arange(n, dtype=np.int64)  # CuPy's loop index, a ptrdiff_t
        run = c_subset.Evaluation(env, raw, bound.get("T"), n,
                                  frozenset(name for _, _, name in self._in + self._out),
                                  memory=Cells)
        with np.errstate(all="ignore"):  # as C arithmetic: inf and NaN, no warnings
            run.run(self._body, declared)
        for (_, _, name), out in zip(self._out, outs):
            np.copyto(out._a, np.broadcast_to(run.env[name], (n,)).reshape(shape))
        _record("elementwise", self._definition, [
            _layout(a, None if p[0] else shape) for p, a in zip(self._in, args)] +
            [_layout(o) for o in outs], ndim=len(shape), size=size is not None)
        return outs[0] if len(outs) == 1 and not self._return_tuple else tuple(outs)


def _einsum_sum(operands, axis, keepdims):
    """sum(product of `operands`) over `axis` by one einsum (operands of one shape)."""
    shape = np.broadcast_shapes(*(a.shape for a in operands))
    ndim = len(shape)
    axes = set(range(ndim)) if axis is None else {
        a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    letters = "".join(chr(ord("a") + i) for i in range(ndim))
    kept = "".join(c for i, c in enumerate(letters) if i not in axes)
    total = np.einsum(",".join([letters] * len(operands)) + "->" + kept,
                      *(np.broadcast_to(a, shape) for a in operands))
    if keepdims:
        total = total.reshape(tuple(1 if i in axes else s for i, s in enumerate(shape)))
    return total
