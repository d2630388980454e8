"""ONNX forms of arithmetic, comparisons, elementwise functions, activations and
reductions. Each lowering is `fn(g, out, *args, **kwargs)`: `g` the GraphBuilder, `out` the
result's example (shape and dtype, a Value without a name), the op's own arguments with
tensors as Values; it returns the result's Value(s)."""
import math

from .. import dtypes
from ._builder import Value

__all__ = ["LOWERINGS", "as_value", "cast", "axes_of"]

LOWERINGS = {}


def lowering(*names):
    def register(fn):
        for name in names:
            LOWERINGS[name] = fn
        return fn
    return register


def cast(g, v, dtype):
    """`v` in `dtype` (no node when it already is)."""
    if v.dtype == dtype:
        return v
    from ._builder import onnx_dtype
    r = g.op("Cast", [v], to=onnx_dtype(dtype))
    r.shape, r.dtype = v.shape, dtype
    return r


def as_value(g, x, dtype):
    """A tensor argument, or a Python number as a 0-d constant, in `dtype`."""
    if isinstance(x, Value):
        return cast(g, x, dtype)
    return g.const(x, dtype=dtype.np, name_hint="scalar")


def _operand_dtype(*args):
    """The dtype PyTorch computes a binary op in: tensors promote by category, a Python
    number only lifts an integer tensor to float (or to bool's partner)."""
    tensors = [a.dtype for a in args if isinstance(a, Value)]
    numbers = [a for a in args if not isinstance(a, Value)]
    result = tensors[0]
    for d in tensors[1:]:
        result = dtypes.promote_types(result, d)
    for n in numbers:
        if isinstance(n, float) and not result.is_floating_point:
            result = dtypes.get_default_dtype()
        elif isinstance(n, int) and not isinstance(n, bool) and result == dtypes.bool:
            result = dtypes.int64
    return result


def _binary(op_type):
    def lower(g, out, a, b, alpha=None, **_):
        dtype = _operand_dtype(a, b)
        x, y = as_value(g, a, dtype), as_value(g, b, dtype)
        if alpha is not None and alpha != 1:
            y = g.op("Mul", [y, g.const(alpha, dtype=dtype.np)])
        return g.op(op_type, [x, y])
    return lower


for _names, _op in [(("add", "__add__", "__radd__", "iadd"), "Add"),
                    (("sub", "subtract", "__sub__", "isub"), "Sub"),
                    (("mul", "multiply", "__mul__", "__rmul__", "imul"), "Mul"),
                    (("pow", "__pow__"), "Pow"), (("maximum",), "Max"),
                    (("minimum",), "Min")]:
    lowering(*_names)(_binary(_op))


@lowering("rsub", "__rsub__")
def _rsub(g, out, a, b, alpha=1):
    return _binary("Sub")(g, out, b, a, alpha=alpha)


@lowering("div", "divide", "truediv", "__truediv__", "true_divide", "__rtruediv__")
def _div(g, out, a, b, rounding_mode=None):
    dtype = out.dtype
    x, y = as_value(g, a, dtype), as_value(g, b, dtype)
    q = g.op("Div", [x, y])
    if rounding_mode == "floor" and dtype.is_floating_point:
        q = g.op("Floor", [q])
    elif rounding_mode == "trunc" and dtype.is_floating_point:
        q = _trunc(g, q)
    elif rounding_mode == "floor":  # integer floor division: ONNX's Div truncates
        q = _int_floor_div(g, x, y, q)
    return q


@lowering("floor_divide", "floordiv")
def _floordiv(g, out, a, b):
    return _div(g, out, a, b, rounding_mode="floor")


def _trunc(g, v):
    sign = g.op("Sign", [v])
    return g.op("Mul", [g.op("Floor", [g.op("Abs", [v])]), sign])


def _int_floor_div(g, x, y, q):
    """Truncating quotient `q` of integers corrected to the floor, as PyTorch's `//`."""
    zero = g.const(0, dtype=x.dtype.np if x.dtype else None)
    rem = g.op("Sub", [x, g.op("Mul", [q, y])])
    neg = g.op("Xor", [g.op("Less", [x, zero]), g.op("Less", [y, zero])])
    adjust = g.op("And", [neg, g.op("Not", [g.op("Equal", [rem, zero])])])
    return g.op("Sub", [q, g.op("Cast", [adjust], to=_onnx_dtype_of(x))])


def _onnx_dtype_of(v):
    from ._builder import onnx_dtype
    return onnx_dtype(v.dtype)


@lowering("remainder", "mod", "__mod__")
def _remainder(g, out, a, b):
    """Python's modulo (the sign of the divisor): ONNX's Mod with fmod=0 for integers,
    x - floor(x / y) * y for floats (fmod=0 is integer-only)."""
    x, y = as_value(g, a, out.dtype), as_value(g, b, out.dtype)
    if not out.dtype.is_floating_point:
        return g.op("Mod", [x, y], fmod=0)
    return g.op("Sub", [x, g.op("Mul", [g.op("Floor", [g.op("Div", [x, y])]), y])])


@lowering("fmod")
def _fmod(g, out, a, b):
    x, y = as_value(g, a, out.dtype), as_value(g, b, out.dtype)
    return g.op("Mod", [x, y], fmod=1)


def _compare(op_type, negate=False):
    def lower(g, out, a, b):
        dtype = _operand_dtype(a, b)
        r = g.op(op_type, [as_value(g, a, dtype), as_value(g, b, dtype)])
        return g.op("Not", [r]) if negate else r
    return lower


for _names, _op, _neg in [(("eq", "__eq__"), "Equal", False), (("ne", "__ne__"), "Equal", True),
                          (("lt", "less", "__lt__"), "Less", False),
                          (("le", "less_equal", "__le__"), "LessOrEqual", False),
                          (("gt", "greater", "__gt__"), "Greater", False),
                          (("ge", "greater_equal", "__ge__"), "GreaterOrEqual", False)]:
    lowering(*_names)(_compare(_op, _neg))


def _logical(op_type):
    def lower(g, out, a, b):
        x, y = (cast(g, as_value(g, v, dtypes.bool), dtypes.bool) for v in (a, b))
        return g.op(op_type, [x, y])
    return lower


for _names, _op in [(("logical_and", "and_", "__and__"), "And"),
                    (("logical_or", "or_", "__or__"), "Or"),
                    (("logical_xor", "xor", "__xor__"), "Xor")]:
    lowering(*_names)(_logical(_op))


@lowering("logical_not", "invert", "__invert__", "bitwise_not")
def _not(g, out, a):
    if out.dtype != dtypes.bool:
        from .errors import UnsupportedOperatorError
        raise UnsupportedOperatorError("aten::bitwise_not", g.opset, None)
    return g.op("Not", [a])


def _unary(op_type):
    def lower(g, out, a, *_, **__):
        return g.op(op_type, [cast(g, a, out.dtype)])
    return lower


for _names, _op in [(("neg", "negative", "__neg__"), "Neg"), (("abs", "absolute"), "Abs"),
                    (("exp",), "Exp"), (("log",), "Log"), (("sqrt",), "Sqrt"),
                    (("sin",), "Sin"), (("cos",), "Cos"), (("tan",), "Tan"),
                    (("tanh",), "Tanh"), (("sigmoid",), "Sigmoid"), (("relu",), "Relu"),
                    (("floor",), "Floor"), (("ceil",), "Ceil"), (("round",), "Round"),
                    (("sign",), "Sign"), (("erf",), "Erf"), (("reciprocal",), "Reciprocal"),
                    (("asin",), "Asin"), (("acos",), "Acos"), (("atan",), "Atan"),
                    (("sinh",), "Sinh"), (("cosh",), "Cosh"), (("isnan",), "IsNaN"),
                    (("softsign",), "Softsign"), (("selu",), "Selu")]:
    lowering(*_names)(_unary(_op))


@lowering("rsqrt")
def _rsqrt(g, out, a):
    return g.op("Reciprocal", [g.op("Sqrt", [a])])


@lowering("square")
def _square(g, out, a):
    return g.op("Mul", [a, a])


@lowering("log_softmax")
def _log_softmax(g, out, a, dim=None, _stacklevel=3, dtype=None):
    return g.op("LogSoftmax", [cast(g, a, out.dtype)], axis=_dim(dim, a))


@lowering("softmax")
def _softmax(g, out, a, dim=None, _stacklevel=3, dtype=None):
    return g.op("Softmax", [cast(g, a, out.dtype)], axis=_dim(dim, a))


def _dim(dim, a):
    if dim is None:
        raise ValueError("ONNX export of softmax needs an explicit dim")
    return dim + a.rank if dim < 0 else dim


@lowering("gelu")
def _gelu(g, out, a, approximate="none"):
    if g.opset >= 20:
        return g.op("Gelu", [a], approximate=approximate)
    half, one = g.scalar(0.5, a), g.scalar(1.0, a)
    if approximate == "tanh":
        inner = g.op("Mul", [g.scalar(math.sqrt(2 / math.pi), a),
                             g.op("Add", [a, g.op("Mul", [g.scalar(0.044715, a),
                                                          g.op("Pow", [a, g.scalar(3.0, a)])])])])
        phi = g.op("Add", [one, g.op("Tanh", [inner])])
    else:
        phi = g.op("Add", [one, g.op("Erf", [g.op("Mul", [a, g.scalar(1 / math.sqrt(2), a)])])])
    return g.op("Mul", [g.op("Mul", [half, a]), phi])


@lowering("silu")
def _silu(g, out, a, inplace=False):
    return g.op("Mul", [a, g.op("Sigmoid", [a])])


@lowering("mish")
def _mish(g, out, a, inplace=False):
    return g.op("Mul", [a, g.op("Tanh", [g.op("Softplus", [a])])])


@lowering("leaky_relu")
def _leaky_relu(g, out, a, negative_slope=0.01, inplace=False):
    return g.op("LeakyRelu", [a], alpha=float(negative_slope))


@lowering("elu")
def _elu(g, out, a, alpha=1.0, inplace=False):
    return g.op("Elu", [a], alpha=float(alpha))


@lowering("softplus")
def _softplus(g, out, a, beta=1.0, threshold=20.0):
    if beta == 1:
        return g.op("Softplus", [a])
    scaled = g.op("Mul", [a, g.scalar(beta, a)])
    return g.op("Div", [g.op("Softplus", [scaled]), g.scalar(beta, a)])


@lowering("hardtanh", "clamp", "clip")
def _clamp(g, out, a, min=None, max=None, inplace=False, min_val=None, max_val=None):
    lo = min if min is not None else min_val
    hi = max if max is not None else max_val
    if isinstance(lo, Value) or isinstance(hi, Value):
        r = a
        if lo is not None:
            r = g.op("Max", [r, as_value(g, lo, out.dtype)])
        if hi is not None:
            r = g.op("Min", [r, as_value(g, hi, out.dtype)])
        return r
    return g.op("Clip", [a, None if lo is None else g.scalar(lo, a),
                         None if hi is None else g.scalar(hi, a)])


@lowering("relu6")
def _relu6(g, out, a, inplace=False):
    return _clamp(g, out, a, 0.0, 6.0)


@lowering("hardsigmoid")
def _hardsigmoid(g, out, a, inplace=False):
    return g.op("HardSigmoid", [a], alpha=1 / 6, beta=0.5)


@lowering("hardswish")
def _hardswish(g, out, a, inplace=False):
    return g.op("HardSwish", [a])


@lowering("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
          "feature_alpha_dropout")
def _dropout(g, out, a, p=0.5, training=False, inplace=False):
    if training:
        from .errors import OnnxExporterError
        raise OnnxExporterError("dropout in training mode cannot be exported: call "
                                "model.eval() first (or export with training=TrainingMode.EVAL)")
    return a


@lowering("where")
def _where(g, out, cond, a=None, b=None):
    return g.op("Where", [cast(g, cond, dtypes.bool), as_value(g, a, out.dtype),
                          as_value(g, b, out.dtype)])


@lowering("masked_fill")
def _masked_fill(g, out, a, mask, value):
    return g.op("Where", [cast(g, mask, dtypes.bool), as_value(g, value, out.dtype), a])


@lowering("matmul", "__matmul__", "mm", "bmm")
def _matmul(g, out, a, b):
    return g.op("MatMul", [cast(g, a, out.dtype), cast(g, b, out.dtype)])


@lowering("addmm")
def _addmm(g, out, bias, a, b, beta=1, alpha=1):
    return g.op("Gemm", [a, b, bias], alpha=float(alpha), beta=float(beta))


@lowering("baddbmm")
def _baddbmm(g, out, bias, a, b, beta=1, alpha=1):
    prod = g.op("MatMul", [a, b])
    if alpha != 1:
        prod = g.op("Mul", [prod, g.scalar(alpha, a)])
    if beta != 1:
        bias = g.op("Mul", [bias, g.scalar(beta, bias)])
    return g.op("Add", [prod, bias])


# ---- reductions -------------------------------------------------------------------------
def axes_of(dim, rank):
    """A dim argument (int, sequence or None) as sorted non-negative axes."""
    if dim is None:
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d + rank if d < 0 else d for d in dims)


def _reduce(g, op_type, a, dim, keepdim):
    axes = axes_of(dim, a.rank)
    if op_type in ("ReduceSum",) or g.opset >= 18:
        return g.op(op_type, [a, g.ints(axes)], keepdims=int(bool(keepdim)))
    return g.op(op_type, [a], axes=axes, keepdims=int(bool(keepdim)))


def _reduction(op_type):
    def lower(g, out, a, dim=None, keepdim=False, *, dtype=None, **_):
        if isinstance(dim, bool):  # (a positional keepdim)
            dim, keepdim = None, dim
        return _reduce(g, op_type, cast(g, a, out.dtype if op_type != "ReduceMax" else a.dtype),
                       dim, keepdim)
    return lower


for _names, _op in [(("sum",), "ReduceSum"), (("mean",), "ReduceMean"),
                    (("amax",), "ReduceMax"), (("amin",), "ReduceMin"),
                    (("prod",), "ReduceProd")]:
    lowering(*_names)(_reduction(_op))


def _max_min(op_type, arg_op):
    def lower(g, out, a, dim=None, keepdim=False):
        if dim is None:
            return _reduce(g, op_type, a, None, False)
        if isinstance(dim, Value):  # max(a, b): the elementwise form
            return _binary(op_type.replace("Reduce", ""))(g, out, a, dim)
        d = dim + a.rank if dim < 0 else dim
        values = _reduce(g, op_type, a, [d], keepdim)
        indices = g.op(arg_op, [a], axis=d, keepdims=int(bool(keepdim)),
                       select_last_index=0)
        return values, indices
    return lower


lowering("max")(_max_min("ReduceMax", "ArgMax"))
lowering("min")(_max_min("ReduceMin", "ArgMin"))


def _arg(op_type):
    def lower(g, out, a, dim=None, keepdim=False):
        if dim is None:
            a, dim = g.op("Reshape", [a, g.ints([-1])]), 0
            a.shape = (-1,)
        d = dim + a.rank if dim < 0 else dim
        return g.op(op_type, [a], axis=d, keepdims=int(bool(keepdim)))
    return lower


LOWERINGS["argmax"], LOWERINGS["argmin"] = _arg("ArgMax"), _arg("ArgMin")


def _variance(sqrt):
    def lower(g, out, a, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):
            dim, unbiased = None, dim
        c = correction if correction is not None else (0 if unbiased is False else 1)
        axes = axes_of(dim, a.rank)
        mean = _reduce(g, "ReduceMean", a, axes, True)
        diff = g.op("Sub", [a, mean])
        square = g.op("Mul", [diff, diff])
        square.shape = a.shape
        total = _reduce(g, "ReduceSum", square, axes, keepdim)
        count = math.prod(a.shape[i] for i in axes) if all(isinstance(a.shape[i], int)
                                                           for i in axes) else None
        if count is None:
            from .errors import OnnxExporterError
            raise OnnxExporterError("var/std over a dynamic axis is not supported")
        r = g.op("Div", [total, g.scalar(max(count - c, 0), a)])
        return g.op("Sqrt", [r]) if sqrt else r
    return lower


LOWERINGS["var"], LOWERINGS["std"] = _variance(False), _variance(True)


@lowering("cumsum")
def _cumsum(g, out, a, dim, dtype=None):
    return g.op("CumSum", [cast(g, a, out.dtype), g.const(dim, dtype="int64")])
