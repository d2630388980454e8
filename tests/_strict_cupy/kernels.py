"""CuPy's user-defined reduction kernel on the stand-in: `ReductionKernel`, run by NumPy.

ember writes its kernels' expressions as plain arithmetic over the parameters, so the stand-in
can evaluate them on the arrays inside; anything beyond that (calls, casts, ternaries,
statements) is refused with NotImplementedError, so a kernel the stand-in cannot run fails
loudly here rather than running differently on a GPU. Arguments are checked as CuPy checks
them: device arrays only, one dtype per type placeholder, no dtype a kernel cannot name."""
import ast
import re

import numpy as np

from .array import kernel_dtype, ndarray, unsupported

_ARITHMETIC = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant,
               ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub)
_REDUCTIONS = {"a+b": np.add, "max(a,b)": np.maximum, "min(a,b)": np.minimum}


def _parameters(text):
    """'T x, float32 w' -> [('T', 'x'), ('float32', 'w')]."""
    out = []
    for part in text.split(","):
        words = part.split()
        if len(words) != 2:
            raise ValueError(f"Invalid parameter: {part.strip()!r}")
        out.append((words[0], words[1]))
    return out


def _factors(tree):
    """The parameter names an expression multiplies together (['x', 'w'] for 'x * w'), or None
    when it is anything else."""
    node = tree.body
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _factors(ast.Expression(node.left)), _factors(ast.Expression(node.right))
        return None if left is None or right is None else left + right
    return None


def _arithmetic(text, names):
    """`text` compiled as a Python expression, when it is arithmetic over `names` alone."""
    tree = ast.parse(text.strip().rstrip(";"), mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _ARITHMETIC) or (isinstance(node, ast.Name)
                                                 and node.id not in names):
            raise NotImplementedError(f"the CuPy stand-in runs only arithmetic over a kernel's "
                                      f"parameters; it cannot run {text!r}")
    return compile(tree, text, "eval"), tree


class ReductionKernel:
    """cupy.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr,
    identity, name): map each element, reduce with `reduce_expr` ('a + b', 'max(a, b)' or
    'min(a, b)') over `axis`, then `post_map_expr` ('y = <arithmetic of a>')."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="reduce_kernel", reduce_type=None, reduce_dims=True, preamble="",
                 options=()):
        self.name = name
        self._in, self._out = _parameters(in_params), _parameters(out_params)
        if len(self._out) != 1:
            raise NotImplementedError("the CuPy stand-in's ReductionKernel has one output")
        self._map, tree = _arithmetic(map_expr, {n for _, n in self._in})
        # a sum of products runs as NumPy's einsum, as ember's CPU path sums: the stand-in then
        # computes as the CPU does, to the bit (DESIGN.md, "Devices in the tests")
        self._factors = _factors(tree)
        reduce_key = re.sub(r"\s+", "", reduce_expr)
        if reduce_key not in _REDUCTIONS:
            raise NotImplementedError(f"the CuPy stand-in cannot reduce with {reduce_expr!r}")
        self._reduce = _REDUCTIONS[reduce_key]
        target, _, expression = post_map_expr.partition("=")
        if target.strip() != self._out[0][1]:
            raise NotImplementedError(f"the CuPy stand-in cannot run {post_map_expr!r}")
        self._post = _arithmetic(expression, {"a"})[0]
        self._reduce_type = reduce_type

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        if len(args) != len(self._in):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        bound, values = {}, {}
        for (type_name, name), arg in zip(self._in, args):
            if type(arg) is not ndarray:
                raise unsupported(arg)
            kernel_dtype(arg._a.dtype)
            dtype = np.dtype(type_name) if type_name not in bound and len(type_name) > 1 \
                else bound.setdefault(type_name, arg._a.dtype)
            if arg._a.dtype != dtype:
                raise TypeError(f"Type is mismatched. {name} {arg._a.dtype} {dtype}")
            values[name] = arg._a
        out_type = self._out[0][0]
        out_dtype = bound[out_type] if out_type in bound else np.dtype(out_type)
        work = np.dtype(self._reduce_type) if self._reduce_type else out_dtype
        with np.errstate(all="ignore"):  # as C arithmetic: inf and NaN, no warnings
            if self._reduce is np.add and self._factors and work == out_dtype:
                reduced = _einsum_sum([values[n] for n in self._factors], axis, keepdims)
            else:
                mapped = np.asarray(eval(self._map, {"__builtins__": {}}, values), dtype=work)
                reduced = self._reduce.reduce(mapped, axis=axis, keepdims=keepdims)
            result = np.asarray(eval(self._post, {"__builtins__": {}}, {"a": reduced}))
        return ndarray._of(result.astype(out_dtype, copy=False))


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
