"""MaskedTensor: a tensor together with a bool mask of the same shape saying which elements
exist. Pointwise operations apply to the data and keep the mask (two MaskedTensors must have
the same mask); reductions see only the kept elements, and a result element is kept when any
element it reduced was. Prints the missing elements as `--`, as PyTorch's does.

ember's functions do not dispatch on `__torch_function__`, so a MaskedTensor is used through
its methods and operators (`mt.exp()`, `mt + 1`, `mt.sum(1)`) and through `ember.masked`'s
functions, not through `ember.exp(mt)`."""
from .. import dtypes as _dt
from .. import ops as _ops
from .._tensor import Tensor

__all__ = ["MaskedTensor", "is_masked_tensor", "masked_tensor", "as_masked_tensor"]

_SUPPORTED = (_dt.float16, _dt.float32, _dt.float64, _dt.bool, _dt.int8, _dt.int16, _dt.int32,
              _dt.int64)

_UNARY = ["abs", "neg", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin",
          "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu",
          "floor", "ceil", "round", "trunc", "frac", "sign", "square", "reciprocal",
          "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "clone", "float", "double",
          "half", "int", "long", "bool"]
_BINARY = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow",
           "maximum", "minimum", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
           "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]
_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
              "__floordiv__": "floor_divide", "__mod__": "remainder", "__pow__": "pow",
              "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
              "__ge__": "ge", "__and__": "logical_and", "__or__": "logical_or",
              "__xor__": "logical_xor"}


def is_masked_tensor(obj, /):
    return isinstance(obj, MaskedTensor)


class MaskedTensor:
    __slots__ = ("_masked_data", "_masked_mask")
    __hash__ = object.__hash__

    def __init__(self, data, mask, requires_grad=False):
        if not isinstance(data, Tensor) or not isinstance(mask, Tensor):
            raise TypeError("data and mask must be Tensors")
        if requires_grad:
            data = data.detach().requires_grad_()
        self._set_data_mask(data, mask)

    def _set_data_mask(self, data, mask):
        if mask.dtype is not _dt.bool:
            raise TypeError("mask must have dtype bool.")
        if data.dtype not in _SUPPORTED:
            raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
        if data.dim() != mask.dim():
            raise ValueError("data.dim() must equal mask.dim()")
        if data.shape != mask.shape:
            raise ValueError("data.size() must equal mask.size()")
        self._masked_data, self._masked_mask = data, mask

    @classmethod
    def _from_values(cls, data, mask):
        made = cls.__new__(cls)
        made._set_data_mask(data, mask)
        return made

    # ---- what it is ----------------------------------------------------------------------
    def get_data(self):
        return self._masked_data

    def get_mask(self):
        return self._masked_mask

    def to_tensor(self, value):
        return self._masked_data.masked_fill(~self._masked_mask, value)

    def is_sparse(self):
        return False

    shape = property(lambda self: self._masked_data.shape)
    dtype = property(lambda self: self._masked_data.dtype)
    device = property(lambda self: self._masked_data.device)
    ndim = property(lambda self: self._masked_data.dim())
    requires_grad = property(lambda self: self._masked_data.requires_grad)
    grad_fn = property(lambda self: self._masked_data.grad_fn)

    def size(self, dim=None):
        return self._masked_data.size() if dim is None else self._masked_data.size(dim)

    def dim(self):
        return self._masked_data.dim()

    def numel(self):
        return self._masked_data.numel()

    def __len__(self):
        return len(self._masked_data)

    # ---- shape and indexing: the same view of data and mask -------------------------------
    def __getitem__(self, index):
        return MaskedTensor._from_values(self._masked_data[index], self._masked_mask[index])

    T = property(lambda self: MaskedTensor._from_values(self._masked_data.T,
                                                        self._masked_mask.T))

    def to(self, *args, **kwargs):
        data = self._masked_data.to(*args, **kwargs)
        return MaskedTensor._from_values(data, self._masked_mask.to(data.device))

    def _data_mask(self, other):
        if isinstance(other, MaskedTensor):
            if not _ops.equal(self._masked_mask, other._masked_mask):
                raise ValueError("Input masks must match. If you need support for this, please "
                                 "open an issue on Github.")
            return other._masked_data
        return other

    # ---- reductions ----------------------------------------------------------------------
    def _reduce(self, name, dim=None, *, keepdim=False, dtype=None):
        from . import _reductions
        data = getattr(_reductions, name)(self._masked_data, dim, keepdim=keepdim, dtype=dtype,
                                          mask=self._masked_mask)
        dims = tuple(range(self.dim())) if dim is None else \
            (dim,) if isinstance(dim, int) else tuple(dim)
        mask = _ops.any(self._masked_mask, dims, keepdim=keepdim) if self.dim() else \
            self._masked_mask
        return MaskedTensor._from_values(data, mask.reshape(data.shape))

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        return self._reduce("sum", dim, keepdim=keepdim, dtype=dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        return self._reduce("mean", dim, keepdim=keepdim, dtype=dtype)

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        return self._reduce("prod", dim, keepdim=keepdim, dtype=dtype)

    def amax(self, dim=None, keepdim=False):
        return self._reduce("amax", dim, keepdim=keepdim)

    def amin(self, dim=None, keepdim=False):
        return self._reduce("amin", dim, keepdim=keepdim)

    def argmax(self, dim=None, keepdim=False):
        return self._reduce("argmax", dim, keepdim=keepdim)

    def argmin(self, dim=None, keepdim=False):
        return self._reduce("argmin", dim, keepdim=keepdim)

    # ---- printing ------------------------------------------------------------------------
    def __repr__(self):
        fmt = "{0:8.4f}"
        if self.dim() == 0:
            value = self._masked_data.item()
            text = fmt.format(value) if isinstance(value, float) else str(value)
            kept = bool(self._masked_mask.item())
            return f"MaskedTensor({text if kept else '--'}, {kept})"
        body = _nested_text(self._masked_data.tolist(), self._masked_mask.tolist(), fmt)
        return "MaskedTensor(\n" + "\n".join("  " + line for line in body.split("\n")) + "\n)"

    __str__ = __repr__


def _nested_text(data, mask, fmt):
    if not data or not isinstance(data[0], list):
        texts = [fmt.format(d) if isinstance(d, float) else str(d) for d in data]
        width = max((len(t) if m else 8 for t, m in zip(texts, mask)), default=0)
        return "[" + ", ".join(t if m else "--".rjust(width) for t, m in zip(texts, mask)) + "]"
    rows = [_nested_text(d, m, fmt) for d, m in zip(data, mask)]
    rows = ["\n".join("  " + line for line in row.split("\n")) for row in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


def _both(name):
    """A shape method applied alike to the data and the mask."""
    def method(self, *args, **kwargs):
        return MaskedTensor._from_values(getattr(self._masked_data, name)(*args, **kwargs),
                                         getattr(self._masked_mask, name)(*args, **kwargs))
    method.__name__ = name
    return method


def _unary(name):
    def method(self, *args, **kwargs):
        data = getattr(self._masked_data, name)(*args, **kwargs)
        return MaskedTensor._from_values(data, self._masked_mask)
    method.__name__ = name
    return method


def _binary(name):
    def method(self, other, *args, **kwargs):
        data = getattr(self._masked_data, name)(self._data_mask(other), *args, **kwargs)
        return MaskedTensor._from_values(data, self._masked_mask)
    method.__name__ = name
    return method


for _name in _UNARY:
    setattr(MaskedTensor, _name, _unary(_name))
for _name in _BINARY:
    setattr(MaskedTensor, _name, _binary(_name))
for _dunder, _name in _OPERATORS.items():
    setattr(MaskedTensor, _dunder, _binary(_name))
MaskedTensor.__neg__ = _unary("neg")
MaskedTensor.__abs__ = _unary("abs")
MaskedTensor.__invert__ = _unary("logical_not")
for _name in ("reshape", "view", "transpose", "permute", "unsqueeze", "squeeze", "flatten",
              "expand", "contiguous", "detach", "cpu"):
    setattr(MaskedTensor, _name, _both(_name))


def masked_tensor(data, mask, requires_grad=False):
    """A MaskedTensor of `data` (its elements where `mask` is True)."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask):
    """A MaskedTensor on `data` itself, so gradients flow back to `data`."""
    return MaskedTensor._from_values(data, mask)
