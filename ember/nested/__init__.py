"""`torch.nested`: a nested tensor is a batch of tensors with the same number of dimensions
whose sizes may differ (sentences of different lengths). ember keeps it as the list of its
component tensors (PyTorch's strided layout packs them into one buffer; the values, shapes and
printing are the same). Operations apply to each component, so gradients flow per component.

Here: `nested_tensor`, `as_nested_tensor`, `to_padded_tensor`, `narrow` (along dim 1), and on
a NestedTensor: `unbind`, indexing the batch, `size(i)` (irregular dimensions raise as
PyTorch's), pointwise unary and binary ops and their operators (against another nested tensor
of the same structure or a scalar), `@`/`matmul` with a dense matrix or a nested tensor,
`softmax`/`transpose` over the component dimensions. Not here: the jagged layout
(`nested_tensor_from_jagged`, `masked_select`), and ember's functions (`ember.nn.functional.
linear(nt, w)`) do not take a NestedTensor: use its methods."""
import builtins

from .. import dtypes as _dt
from .. import ops as _ops
from .._layout import strided
from .._tensor import Tensor

__all__ = ["to_padded_tensor", "as_nested_tensor", "nested_tensor", "narrow", "NestedTensor"]

_UNARY = ["abs", "neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor",
          "ceil", "round", "sign", "square", "reciprocal", "clone", "detach", "float", "double",
          "half", "int", "long", "bool", "logical_not", "isnan"]
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow",
           "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
           "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
           "__pow__": "pow", "__radd__": "add", "__rmul__": "mul"}


class NestedTensor:
    __slots__ = ("_components",)
    is_nested = True
    layout = strided

    def __init__(self, components):
        self._components = tuple(components)

    # ---- what it is ----------------------------------------------------------------------
    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        return self._components

    def __getitem__(self, index):
        if isinstance(index, builtins.int):
            return self._components[index]
        raise NotImplementedError("a NestedTensor is indexed by one integer (a component)")

    def __len__(self):
        return len(self._components)

    def dim(self):
        return self._components[0].dim() + 1 if self._components else 1

    ndim = property(dim)
    dtype = property(lambda self: self._components[0].dtype if self._components
                     else _dt.get_default_dtype())
    device = property(lambda self: self._components[0].device if self._components
                      else _ops.empty(0).device)
    requires_grad = property(lambda self: builtins.any(c.requires_grad
                                                       for c in self._components))

    def size(self, dim=None):
        if dim is None:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. "
                               "Please file an issue.")
        ndim = self.dim()
        if not -ndim <= dim < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {dim})")
        dim %= ndim
        if dim == 0:
            return len(self._components)
        sizes = {c.shape[dim - 1] for c in self._components}
        if len(sizes) != 1:
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return sizes.pop()

    @property
    def shape(self):
        return self.size()

    def numel(self):
        return builtins.sum(c.numel() for c in self._components)

    def is_contiguous(self, memory_format=None):
        return True

    def to_padded_tensor(self, padding, output_size=None):
        return to_padded_tensor(self, padding, output_size)

    # ---- operations, component by component ----------------------------------------------
    def _each(self, function):
        return NestedTensor(function(c) for c in self._components)

    def _pair(self, other, name):
        if isinstance(other, NestedTensor):
            if len(other) != len(self) or builtins.any(
                    a.shape != b.shape for a, b in zip(self._components, other._components)):
                raise RuntimeError(f"{name} does not support broadcasting when given a "
                                   "NestedTensor")
            return NestedTensor(getattr(a, name)(b) for a, b in
                                zip(self._components, other._components))
        if isinstance(other, Tensor) and other.dim() > 0:
            raise RuntimeError("Expected both to be nested, but got a nested self and "
                               "non-nested other")
        return self._each(lambda c: getattr(c, name)(other))

    def matmul(self, other):
        if isinstance(other, NestedTensor):
            return NestedTensor(_ops.matmul(a, b) for a, b in
                                zip(self._components, other._components))
        return self._each(lambda c: _ops.matmul(c, other))

    __matmul__ = matmul

    def softmax(self, dim, dtype=None):
        return self._each(lambda c: _ops.softmax(c, self._inner(dim), dtype=dtype))

    def transpose(self, dim0, dim1):
        return self._each(lambda c: c.transpose(self._inner(dim0), self._inner(dim1)))

    def to(self, *args, **kwargs):
        return self._each(lambda c: c.to(*args, **kwargs))

    def _inner(self, dim):
        dim = dim % self.dim()
        if dim == 0:
            raise RuntimeError("a NestedTensor's batch dimension (0) cannot be used here")
        return dim - 1

    def __neg__(self):
        return self._each(lambda c: -c)

    # ---- printing ------------------------------------------------------------------------
    def __repr__(self):
        parts = ",\n".join("\n".join("  " + line for line in repr(c).split("\n"))
                           for c in self._components)
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"nested_tensor([\n{parts}\n]{grad})"

    __str__ = __repr__


def _unary(name):
    def method(self, *args, **kwargs):
        return self._each(lambda c: getattr(c, name)(*args, **kwargs))
    method.__name__ = name
    return method


def _binary(name, op):
    def method(self, other):
        return self._pair(other, op)
    method.__name__ = name
    return method


for _name in _UNARY:
    setattr(NestedTensor, _name, _unary(_name))
for _name, _op in _BINARY.items():
    setattr(NestedTensor, _name, _binary(_name, _op))


def _check_same_dim(tensors):
    for i, t in enumerate(tensors[1:], 1):
        if t.dim() != tensors[0].dim():
            raise RuntimeError(
                "All Tensors given to nested_tensor must have the same dimension. Found "
                f"dimension {t.dim()} for Tensor at index {i} and dimension "
                f"{tensors[0].dim()} for Tensor at index 0.")


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A nested tensor holding copies of `tensor_list`'s tensors (or nested lists of numbers),
    as a new leaf (no graph back to the inputs)."""
    if layout not in (None, strided):
        raise NotImplementedError(f"ember's nested tensors have the strided layout only, got "
                                  f"{layout}")
    tensors = [t.detach() if isinstance(t, Tensor) else _ops.tensor(t) for t in tensor_list]
    _check_same_dim(tensors)
    dtype = dtype or (tensors[0].dtype if tensors else None)
    copies = [t.to(dtype=dtype, device=device, copy=True) for t in tensors]
    if requires_grad:
        copies = [c.requires_grad_() for c in copies]
    return NestedTensor(copies)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A nested tensor of `ts` (a list of tensors, or a tensor split along its first dim),
    keeping them in the autograd graph."""
    if layout not in (None, strided):
        raise NotImplementedError(f"ember's nested tensors have the strided layout only, got "
                                  f"{layout}")
    tensors = list(ts.unbind(0)) if isinstance(ts, Tensor) else list(ts)
    _check_same_dim(tensors)
    dtype = dtype or (tensors[0].dtype if tensors else None)
    return NestedTensor(t.to(dtype=dtype, device=device) for t in tensors)


def to_padded_tensor(input, padding, output_size=None):
    """A dense tensor of the components stacked, each padded at the end of every dimension
    with `padding` to the largest size (or to `output_size`)."""
    components = input.unbind()
    ndim = input.dim()
    largest = [len(components)] + [builtins.max((c.shape[d] for c in components), default=0)
                                   for d in range(ndim - 1)]
    if output_size is not None:
        output_size = list(output_size)
        if builtins.any(o < m for o, m in zip(output_size, largest)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        largest = output_size
    rows = []
    for c in components:
        pad = []
        for d in reversed(range(c.dim())):
            pad += [0, largest[d + 1] - c.shape[d]]
        rows.append(_ops.constant_pad_nd(c, pad, padding) if pad else c)
    padded = _ops.stack(rows) if rows else _ops.zeros(largest, dtype=input.dtype)
    if padded.shape[0] < largest[0]:
        extra = _ops.full([largest[0] - padded.shape[0]] + list(padded.shape[1:]), padding,
                          dtype=padded.dtype)
        padded = _ops.cat([padded, extra])
    return padded


def narrow(tensor, dim, start, length, layout=strided):
    """A nested tensor of `tensor`'s rows, row i narrowed along `dim` (1) to
    [start[i], start[i] + length[i])."""
    if dim != 1:
        raise RuntimeError("narrow(): only dim=1 is supported for nested tensors")
    rows = tensor.unbind(0)
    starts = start.tolist() if isinstance(start, Tensor) else [start] * len(rows)
    lengths = length.tolist() if isinstance(length, Tensor) else [length] * len(rows)
    return NestedTensor(row.narrow(0, s, n) for row, s, n in zip(rows, starts, lengths))
