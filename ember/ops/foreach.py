"""`torch._foreach_*`: an op applied to each tensor of a list (optimizers, EMA updates and
gradient clipping in user code, timm's among them, call them directly).

Each is the per-tensor op of the same name, so values, dtype promotion, broadcasting, autograd
and in-place checks are that op's. The list forms follow PyTorch's: the second operand is a
list of tensors (one per tensor), a list of numbers (one per tensor), or one number or tensor
for all; out-of-place forms return a tuple, in-place forms write each tensor and return the
list given. (The optimizers' own fast path is ember/optim/_foreach.py.)"""
import builtins
import numbers

from .._tensor import Tensor

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")
_TERNARY = ("addcmul", "addcdiv")


def _ops():
    from .. import ops  # the per-tensor ops, whichever family (lazy or not) holds them
    return ops


def _tensor_list(fname, value, name, position):
    if isinstance(value, (list, tuple)) and builtins.all(isinstance(t, Tensor) for t in value):
        return value
    raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be tuple of "
                    f"Tensors, not {type(value).__name__}")


def _self_list(fname, value):
    value = _tensor_list(fname, value, "self", 1)
    if not value:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return value


def _same_length(first, second):
    if len(first) != len(second):
        raise RuntimeError("Tensor lists must have the same number of tensors, got "
                           f"{len(first)} and {len(second)}")
    return second


def _per_tensor(fname, tensors, other, name, position):
    """`other` spread over `tensors`: its own entry for each from a list (of tensors or of
    numbers), or the same number or tensor for all."""
    if isinstance(other, (list, tuple)):
        if builtins.all(isinstance(o, Tensor) for o in other) and other:
            return _same_length(tensors, other)
        if builtins.all(isinstance(o, numbers.Number) for o in other):
            if len(other) != len(tensors):
                raise RuntimeError("Tensor list must have same number of elements as scalar "
                                   "list.")
            return list(other)
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be tuple of "
                        f"Tensors or Scalars, not {type(other).__name__}")
    if isinstance(other, (Tensor, numbers.Number)):
        return [other] * len(tensors)
    raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                    f"({type(tensors).__name__}, {type(other).__name__})")


def _in_place(op_name):
    """Writes `op(t, *args)` into t: the tensor's own in-place method where it has one, else
    a copy of the result into it (PyTorch has no Tensor.maximum_ / minimum_)."""
    def apply(t, *args, **kwargs):
        method = getattr(t, op_name + "_", None)
        if method is not None:
            return method(*args, **kwargs)
        return t.copy_(getattr(_ops(), op_name)(t, *args, **kwargs))
    return apply


def _make_unary(op_name):
    fname = f"_foreach_{op_name}"

    def out_of_place(self):
        op = getattr(_ops(), op_name)
        return tuple(op(t) for t in _self_list(fname, self))

    def in_place(self):
        write = _in_place(op_name)
        for t in _self_list(fname + "_", self):
            write(t)
        return self
    return out_of_place, in_place


def _binary_args(op_name, o, alpha):
    return ((o,), {"alpha": alpha}) if op_name in ("add", "sub") and alpha != 1 else ((o,), {})


def _make_binary(op_name):
    fname = f"_foreach_{op_name}"

    def out_of_place(self, other, *, alpha=1):
        if op_name == "pow" and isinstance(self, numbers.Number):  # pow(scalar, exponents)
            exponents = _self_list(fname, other)
            return tuple(_ops().pow(self, e) for e in exponents)
        tensors = _self_list(fname, self)
        op = getattr(_ops(), op_name)
        results = []
        for t, o in zip(tensors, _per_tensor(fname, tensors, other, "other", 2)):
            args, kwargs = _binary_args(op_name, o, alpha)
            results.append(op(t, *args, **kwargs))
        return tuple(results)

    def in_place(self, other, *, alpha=1):
        tensors = _self_list(fname + "_", self)
        write = _in_place(op_name)
        for t, o in zip(tensors, _per_tensor(fname + "_", tensors, other, "other", 2)):
            args, kwargs = _binary_args(op_name, o, alpha)
            write(t, *args, **kwargs)
        return self
    return out_of_place, in_place


def _values(fname, tensors, value):
    """addcmul/addcdiv's `value`: one number, a list of numbers, or a 1-D tensor of them."""
    if isinstance(value, Tensor):
        value = value.tolist()
        if not isinstance(value, list):
            value = [value]
    return _per_tensor(fname, tensors, value, "scalars", 4)


def _make_ternary(op_name):
    fname = f"_foreach_{op_name}"

    def out_of_place(self, tensor1, tensor2, value=1):
        tensors = _self_list(fname, self)
        first = _same_length(tensors, _tensor_list(fname, tensor1, "tensor1", 2))
        second = _same_length(tensors, _tensor_list(fname, tensor2, "tensor2", 3))
        op = getattr(_ops(), op_name)
        return tuple(op(t, a, b, value=v) for t, a, b, v in
                     zip(tensors, first, second, _values(fname, tensors, value)))

    def in_place(self, tensor1, tensor2, value=1):
        tensors = _self_list(fname + "_", self)
        first = _same_length(tensors, _tensor_list(fname + "_", tensor1, "tensor1", 2))
        second = _same_length(tensors, _tensor_list(fname + "_", tensor2, "tensor2", 3))
        for t, a, b, v in zip(tensors, first, second, _values(fname + "_", tensors, value)):
            getattr(t, op_name + "_")(a, b, value=v)
        return self
    return out_of_place, in_place


def _foreach_lerp(self, tensors1, weight):
    tensors = _self_list("_foreach_lerp", self)
    ends = _same_length(tensors, _tensor_list("_foreach_lerp", tensors1, "tensors1", 2))
    weights = _per_tensor("_foreach_lerp", tensors, weight, "weight", 3)
    return tuple(_ops().lerp(t, e, w) for t, e, w in zip(tensors, ends, weights))


def _foreach_lerp_(self, tensors1, weight):
    tensors = _self_list("_foreach_lerp_", self)
    ends = _same_length(tensors, _tensor_list("_foreach_lerp_", tensors1, "tensors1", 2))
    for t, e, w in zip(tensors, ends, _per_tensor("_foreach_lerp_", tensors, weight,
                                                   "weight", 3)):
        t.lerp_(e, w)
    return self


def _foreach_norm(self, ord=2, dtype=None):
    from .statistics import vector_norm
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _self_list("_foreach_norm", self))


def _foreach_powsum(self, ord=2, dtype=None):
    """The sum of |x|^ord over each tensor (the p-th power of its p-norm)."""
    ops = _ops()
    results = []
    for t in _self_list("_foreach_powsum", self):
        if dtype is not None:
            t = t.to(dtype)
        results.append(ops.sum(ops.pow(ops.abs(t), ord)))
    return tuple(results)


def _foreach_max(self):
    return tuple(t.max() for t in _self_list("_foreach_max", self))


def _foreach_mm(self, mat2):
    tensors = _self_list("_foreach_mm", self)
    others = _same_length(tensors, _tensor_list("_foreach_mm", mat2, "mat2", 2))
    return tuple(_ops().mm(a, b) for a, b in zip(tensors, others))


def _foreach_clone(self, *, memory_format=None):
    kwargs = {} if memory_format is None else {"memory_format": memory_format}
    return tuple(t.clone(**kwargs) for t in _self_list("_foreach_clone", self))


def _foreach_copy_(self, src, non_blocking=False):
    tensors = _self_list("_foreach_copy_", self)
    sources = _same_length(tensors, _tensor_list("_foreach_copy_", src, "src", 2))
    for t, s in zip(tensors, sources):
        t.copy_(s, non_blocking=non_blocking)
    return self


def _foreach_zero_(self):
    for t in _self_list("_foreach_zero_", self):
        t.zero_()
    return self


def _define(op_name, forms):
    for suffix, fn in zip(("", "_"), forms):
        name = f"_foreach_{op_name}{suffix}"
        fn.__name__ = fn.__qualname__ = name
        globals()[name] = fn


for _name in _UNARY:
    _define(_name, _make_unary(_name))
for _name in _BINARY:
    _define(_name, _make_binary(_name))
for _name in _TERNARY:
    _define(_name, _make_ternary(_name))

__all__ = sorted(n for n in globals() if n.startswith("_foreach_"))
METHODS = []
