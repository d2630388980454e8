"""`torch.Size`: a tensor's shape, a tuple of ints. Made from a backend array's shape (ints
already) through `shape_of`, on the hot path of `t.shape`; from anything else through
`Size(...)`, which converts and refuses entries as PyTorch does."""
import functools

from .utils import _pytree

__all__ = ["Size", "shape_of"]


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as `torch.Size([2, 3])`."""

    __module__ = "ember"  # `<class 'torch.Size'>`
    __slots__ = ()

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for size in sizes:
            # PyTorch keeps int64s only: convert what it converts, refuse the rest
            if size.__class__ is not int or not _INT64_MIN <= size <= _INT64_MAX:
                sizes = tuple(_size_item(item, i) for i, item in enumerate(sizes))
                break
        return tuple.__new__(cls, sizes)

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return shape_of(r) if isinstance(item, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):  # PyTorch's words, which name its Size
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to "
                            "torch.Size")
        return shape_of(tuple.__add__(self, other))

    def __radd__(self, other):  # tuple + Size is a Size too, as in PyTorch
        if not isinstance(other, tuple):
            return NotImplemented
        return shape_of(tuple.__add__(other, self))

    def __mul__(self, times):  # repeating a Size gives a Size
        if not hasattr(times, "__index__"):  # Python's words for a tuple
            raise TypeError(f"can't multiply sequence by non-int of type "
                            f"'{type(times).__name__}'")
        return shape_of(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))

    # PyTorch's Size is a C type: its errors name it 'torch.Size'
    def __getattr__(self, name):  # reached only when ordinary lookup found nothing
        raise AttributeError(f"'torch.Size' object has no attribute '{name}'")

    def __format__(self, spec):
        if spec:
            raise TypeError("unsupported format string passed to torch.Size.__format__")
        return str(self)


def _size_item(item, position):
    """One of a Size's entries as PyTorch takes it: an int, or what converts to one (a bool, a
    NumPy integer, a one-element integer tensor)."""
    if isinstance(item, int):
        value = int(item)
    else:
        try:
            value = item.__index__()
        except (AttributeError, TypeError):
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {position} is "
                            f"'{type(item).__name__}')") from None
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return value


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
# a Size of a tuple that holds ints already (a backend array's shape): no checks on the
# hot path of `t.shape`
shape_of = functools.partial(tuple.__new__, Size)


# a pytree node, as PyTorch registers torch.Size (tree_flatten gives its ints)
_pytree.register_pytree_node(Size, lambda size: (list(size), None),
                             lambda items, _: Size(items),
                             flatten_with_keys_fn=_pytree._list_flatten_with_keys)
