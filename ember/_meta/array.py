"""The meta device's array: shape, dtype and strides, and no data.

A meta array keeps a *skeleton*: a NumPy array with the real shape, dtype and strides laid over
a buffer of a few bytes (`as_strided` checks no extents). NumPy's own view arithmetic works
on it unchanged (slicing, transpose, reshape-as-view, diagonal, dtype views), because a view
only computes a pointer, shape and strides and never reads an element. Nothing that reads or
writes elements ever sees a skeleton: arithmetic, reductions and matmul are answered by shape
rules here, and any other NumPy function by `module.infer`, which runs it on zero-strided
stand-ins (one element each, read-only) to learn its result's shape and dtype.

Reading the values of a meta array (to the host, `item`, `tolist`, `int`, `float`) raises
what PyTorch raises for a meta tensor. Its truth is False, and that of an `all()` True:
an op's check for bad values (`if bool((x < 0).any()): raise`, `if not x.all(): raise`) finds
none, as PyTorch's meta kernels look at no data. Indexed with a boolean mask inside an op (to
compute on a subset, then write it back), a meta array selects no element, so an iteration
over the elements not yet converged (`idx = idx[~done]` until empty) ends at once; nonzero
itself, and a meta tensor indexed with a mask, refuse as PyTorch does.
(A meta *tensor*'s `bool` raises, as PyTorch's does: Tensor.__bool__ asks `item`.)
"""
import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"
# PyTorch's answer for an op whose result's shape depends on the values (nonzero, x[mask])
NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, as a "
           "correct data-independent implementation does not exist. This implementation returns "
           "a fake value, assuming all elements of the tensor are non-zero. To enable this "
           "registration, please set "
           "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")



def c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def skeleton(shape, dtype, strides=None):
    """A read-only NumPy array of `shape` and `dtype` over a single element."""
    dtype = np.dtype(dtype)
    shape = tuple(int(n) for n in shape)
    if strides is None:
        strides = c_strides(shape, dtype.itemsize)
    # one element of its own (never read or written): a storage's own address, as real
    # memory has, so the data pointers of two meta arrays tell whether they share storage
    element = np.empty(max(dtype.itemsize, 1), np.uint8).view(dtype).reshape(())
    return np.lib.stride_tricks.as_strided(element, shape, strides, writeable=False)


def k_strides(shape, itemsize, operands):
    """The strides of a dense result laid out as NumPy's order "K" lays it out over
    `operands` (arrays broadcast to `shape`): axes from the largest stride out, an axis put
    before another only when every operand that steps along both agrees (as NumPy's
    iterator orders its axes); without a vote, C order."""
    nd = len(shape)
    steps = []
    for x in operands:
        pad = nd - x.ndim
        if pad >= 0:
            steps.append([0] * pad + [abs(st) if n != 1 else 0
                                      for st, n in zip(x.strides, x.shape)])
    order = []
    for axis in range(nd):  # insertion sort, outermost first
        at = len(order)
        while at:
            prev = order[at - 1]
            votes = [s[axis] > s[prev] for s in steps if s[axis] and s[prev]]
            if not votes or not all(votes):
                break
            at -= 1
        order.insert(at, axis)
    strides, step = [0] * nd, itemsize
    for axis in reversed(order):
        strides[axis] = step
        step *= max(shape[axis], 1)
    return tuple(strides)


class _Flags:
    __slots__ = ("_skel",)

    def __init__(self, skel):
        self._skel = skel

    c_contiguous = property(lambda self: self._skel.flags.c_contiguous)
    f_contiguous = property(lambda self: self._skel.flags.f_contiguous)
    contiguous = c_contiguous
    writeable = True  # meta memory takes every write (and keeps none)
    owndata = property(lambda self: False)

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "WRITEABLE": "writeable"}.get(name, name.lower()))


class _Pointer:
    """`arr.data.ptr` as CuPy spells it: the skeleton's address, so views of one storage and
    their offsets compare as they do for real memory."""
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class ndarray(NDArrayOperatorsMixin):  # noqa: N801 (the array type of the meta module)
    """An array of the meta device: NumPy's array protocols answered with shapes alone."""

    __slots__ = ("_skel", "base", "__weakref__")
    __array_priority__ = 100

    def __init__(self, skel, base=None):
        self._skel = skel
        self.base = base  # the array this one is a view of (None for a fresh one)

    @classmethod
    def empty(cls, shape, dtype=np.float64, order="C"):
        skel = skeleton(shape, dtype)
        if order == "F" and skel.ndim > 1:
            skel = skeleton(shape[::-1], dtype).T
        return cls(skel)

    @classmethod
    def laid_out(cls, shape, dtype, operands):
        """A fresh array as NumPy lays out the result of an elementwise function of
        `operands` (its order "K")."""
        dtype = np.dtype(dtype)
        operands = [x for x in operands if isinstance(x, (ndarray, np.ndarray)) and x.ndim > 1]
        if not operands or all(x.flags.c_contiguous for x in operands):
            return cls(skeleton(shape, dtype))
        return cls(skeleton(shape, dtype, k_strides(tuple(shape), dtype.itemsize, operands)))

    def _view(self, skel):
        return ndarray(skel, self if self.base is None else self.base)

    # ---- what an array is --------------------------------------------------------------------
    shape = property(lambda self: self._skel.shape)
    dtype = property(lambda self: self._skel.dtype)
    strides = property(lambda self: self._skel.strides)
    ndim = property(lambda self: self._skel.ndim)
    size = property(lambda self: self._skel.size)
    itemsize = property(lambda self: self._skel.itemsize)
    nbytes = property(lambda self: self._skel.size * self._skel.itemsize)
    flags = property(lambda self: _Flags(self._skel))
    data = property(lambda self: _Pointer(self._skel.__array_interface__["data"][0]))
    device = property(lambda self: "meta")

    def __len__(self):
        if not self._skel.ndim:
            raise TypeError("len() of unsized object")
        return self._skel.shape[0]

    def __repr__(self):
        return f"meta.ndarray(shape={self.shape}, dtype={self.dtype})"

    # ---- views: NumPy's arithmetic on the skeleton -----------------------------------------
    def __getitem__(self, key):
        if _is_basic(key):
            return self._view(self._skel[key])
        return infer(_getitem, (self, _selecting_none(key)), {})

    def __setitem__(self, key, value):
        pass  # meta memory takes every write and keeps none (PyTorch: x[mask] = v works too)

    @property
    def T(self):  # noqa: N802
        return self._view(self._skel.T)

    @property
    def real(self):
        return self._view(self._skel.real)

    @real.setter
    def real(self, value):
        pass  # a write into meta memory

    @property
    def imag(self):
        if self.dtype.kind != "c":
            return ndarray.empty(self.shape, self.dtype)
        return self._view(self._skel.imag)

    @imag.setter
    def imag(self, value):
        pass

    def view(self, dtype=None, type=None):
        return self._view(self._skel.view(dtype) if dtype is not None else self._skel.view())

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        try:
            return self._view(self._skel.reshape(shape, order=order, copy=False))
        except ValueError:
            if copy is False:
                raise
            # not a view: a fresh array, its shape as a contiguous one would take it
            return ndarray(skeleton(self.shape, self.dtype).reshape(shape, order=order))

    def transpose(self, *axes):
        return self._view(self._skel.transpose(*axes))

    def swapaxes(self, a, b):
        return self._view(self._skel.swapaxes(a, b))

    def squeeze(self, axis=None):
        return self._view(self._skel.squeeze(axis))

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return self._view(self._skel.diagonal(offset, axis1, axis2))

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    def flatten(self, order="C"):
        return ndarray.empty((self.size,), self.dtype)

    def copy(self, order="C"):
        if order == "K":
            return ndarray.laid_out(self.shape, self.dtype, (self,))
        return ndarray.empty(self.shape, self.dtype, order="F" if order == "F" else "C")

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        if order == "K":
            return ndarray.laid_out(self.shape, dtype, (self,))
        return ndarray.empty(self.shape, dtype, order="F" if order == "F" else "C")

    def conj(self):
        return np.conjugate(self) if self.dtype.kind == "c" else self

    conjugate = conj

    def fill(self, value):
        pass

    def sort(self, axis=-1, kind=None, order=None):
        pass  # in place: nothing to order

    # ---- values: there are none --------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def get(self, *args, **kwargs):
        raise NotImplementedError(NO_DATA)

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def tobytes(self, order="C"):
        raise NotImplementedError(NO_DATA)

    def item(self, *args):
        raise RuntimeError(NO_ITEM)

    __float__ = __int__ = __complex__ = __index__ = item

    def __bool__(self):
        return False  # see the module's docstring: no value is bad

    def nonzero(self):
        raise NotImplementedError(NONZERO)

    # ---- NumPy's protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        from .rules import ufunc_result
        return ufunc_result(ufunc, method, inputs, out, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .rules import function_result
        return function_result(func, args, kwargs)


def _method(name):
    function = getattr(np, name)

    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = name
    return method


# the methods that are NumPy functions of the array (shape rules or inference answer them)
for _name in ("sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "any", "all",
              "cumsum", "cumprod", "clip", "round", "repeat", "take", "argsort", "trace", "dot",
              "ptp", "searchsorted", "partition", "argpartition", "compress", "choose"):
    setattr(ndarray, _name, _method(_name))


_BASIC = (int, np.integer, slice, type(None), type(Ellipsis))


def _is_basic(key):
    """Whether `key` is a basic index (ints, slices, None, ...): a view of the skeleton."""
    parts = key if type(key) is tuple else (key,)
    return all(isinstance(p, _BASIC) and not isinstance(p, (bool, np.bool_)) for p in parts)


def refuse_masks(index):
    """PyTorch's refusal of a meta tensor indexed with a boolean mask (`index`: the arrays
    of an advanced index): the result's length is the count of true values."""
    if any(getattr(i, "dtype", None) == np.bool_ and getattr(i, "ndim", 0) for i in index):
        raise NotImplementedError(NONZERO)


def _getitem(array, key):
    return array[key]


def _selecting_none(key):
    """`key` with each boolean array (a mask) made all-false: see the module's docstring."""
    parts = key if type(key) is tuple else (key,)
    parts = tuple(np.broadcast_to(False, p.shape)
                  if getattr(p, "dtype", None) == np.bool_ and getattr(p, "ndim", 0) else p
                  for p in parts)
    return parts if type(key) is tuple else parts[0]


class AllTrue(ndarray):
    """The result of `all()`: true, as no value is bad (see the module's docstring)."""

    __slots__ = ()

    def __bool__(self):
        return True


def infer(func, args, kwargs):
    from .rules import infer as _infer
    return _infer(func, args, kwargs)
