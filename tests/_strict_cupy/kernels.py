"""CuPy's user-defined kernels on the stand-in, run by NumPy: `ReductionKernel` and
`ElementwiseKernel`.

ember writes its kernels' expressions as plain arithmetic and comparisons over the parameters,
CUDA's sqrt, exp and erf, and the casts `double(v)` and `T(v)`, with every constant but whole
numbers a parameter of the kernel's type, so the stand-in can evaluate them on the arrays
inside, one rounding per operation as NumPy's float32 arithmetic and CUDA's alike; anything
beyond that (other calls, literals with a fraction, C casts, ternaries, statements other than
assignments to outputs) is refused with NotImplementedError, so a kernel the stand-in cannot
run fails loudly here rather than running differently on a GPU. Arguments are checked
as CuPy checks them: device arrays (or scalars) only, one dtype per type placeholder, no dtype
a kernel cannot name."""
import ast
import re

import numpy as np
import scipy.special

from .array import kernel_dtype, ndarray, unsupported

_ARITHMETIC = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant,
               ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.Call, ast.Compare, ast.Lt,
               ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def _erf(v):
    """CUDA's erf of v's type (its float overload for float, double's for double)."""
    return np.asarray(scipy.special.erf(v)).astype(np.asarray(v).dtype, copy=False)


# what kernels may call: CUDA's math functions of the argument's type, and the casts
# `double(v)` and `T(v)` (to the kernel's type placeholder T, bound at the call)
_FUNCTIONS = {"sqrt": np.sqrt, "exp": np.exp, "erf": _erf,
              "double": lambda v: np.asarray(v, np.float64)}
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
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        wrong = not isinstance(node, _ARITHMETIC) or (
            isinstance(node, ast.Name) and node.id not in names and not (
                id(node) in calls and node.id in _CALLABLE)) or (
            isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name) or node.keywords
                                            or node.func.id not in _CALLABLE)) or (
            isinstance(node, ast.Constant) and type(node.value) is not int)
        if wrong:
            raise NotImplementedError(f"the CuPy stand-in runs only arithmetic over a kernel's "
                                      f"parameters (constants among them); it cannot run "
                                      f"{text!r}")
    return compile(tree, text, "eval"), tree


_CALLABLE = set(_FUNCTIONS) | {"T"}


def _evaluate(code, values, bound=None):
    casts = {} if not bound or "T" not in bound else {
        "T": lambda v, t=bound["T"]: np.asarray(v).astype(t)}
    return eval(code, {"__builtins__": {}, **_FUNCTIONS, **casts}, values)


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
                mapped = np.asarray(_evaluate(self._map, values), dtype=work)
                reduced = self._reduce.reduce(mapped, axis=axis, keepdims=keepdims)
            result = np.asarray(_evaluate(self._post, {"a": reduced}))
        return ndarray._of(result.astype(out_dtype, copy=False))


def _bind(params, args, bound):
    """The NumPy values of kernel arguments, binding type placeholders as CuPy does: arrays
    bind them (two dtypes for one placeholder is a TypeError), scalars take the bound type."""
    values, scalars = {}, []
    for (type_name, name), arg in zip(params, args):
        if type(arg) is ndarray:
            kernel_dtype(arg._a.dtype)
            want = bound.setdefault(type_name, arg._a.dtype) if len(type_name) == 1 \
                else np.dtype(type_name)
            if arg._a.dtype != want:
                raise TypeError(f"Type is mismatched. {name} {arg._a.dtype} {want}")
            values[name] = arg._a
        elif isinstance(arg, (np.generic, int, float, bool)):
            scalars.append((type_name, name, arg))
        else:
            raise unsupported(arg)
    for type_name, name, arg in scalars:
        dtype = np.dtype(type_name) if len(type_name) > 1 else bound.setdefault(
            type_name, np.asarray(arg).dtype)
        values[name] = dtype.type(arg)
    return values


class ElementwiseKernel:
    """cupy.ElementwiseKernel(in_params, out_params, operation, name): `operation` is
    assignments to output parameters ('y = x * k + b; z = ...'), run in order over the
    arguments broadcast together (outputs passed after the inputs among them, and of the
    result's shape); outputs not passed are made, uninitialised."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, loop_prep="",
                 after_loop="", options=()):
        self.name = name
        self._in, self._out = _parameters(in_params), _parameters(out_params)
        names = {n for _, n in self._in + self._out}
        outputs = {n for _, n in self._out}
        self._statements = []
        for statement in operation.split(";"):
            if not statement.strip():
                continue
            target, equals, expression = statement.partition("=")
            if not equals or target.strip() not in outputs or expression.startswith("="):
                raise NotImplementedError(f"the CuPy stand-in runs only assignments to a "
                                          f"kernel's outputs; it cannot run {statement!r}")
            self._statements.append((target.strip(), _arithmetic(expression, names)[0]))
        self._return_tuple = return_tuple

    def __call__(self, *args, size=None, block_size=None, stream=None):
        if len(args) not in (len(self._in), len(self._in) + len(self._out)):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        bound = {}
        values = _bind(self._in, args, bound)
        given = args[len(self._in):]
        # inputs and given outputs broadcast together; an output must have the result's shape
        shape = np.broadcast_shapes(*(np.shape(v) for v in values.values()),
                                    *(np.shape(o._a) for o in given if type(o) is ndarray))
        outs = []
        for i, (type_name, name) in enumerate(self._out):
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
            values[name] = out._a
        with np.errstate(all="ignore"):  # as C arithmetic: inf and NaN, no warnings
            for target, code in self._statements:
                result = _evaluate(code, values, bound)
                out = values[target]
                out[...] = np.asarray(result).astype(out.dtype, copy=False)
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
