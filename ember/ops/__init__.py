"""Every tensor operation, grouped by family, and their binding onto `Tensor`.

Each family module lists its public functions in `__all__` (re-exported as `ember.<name>`),
the Tensor methods it provides in `METHODS`, and optionally the `ember.nn.functional`
names in `FUNCTIONAL`; the Python operators are bound here, once.
"""
import builtins
import importlib
import sys
import types

import numpy as np

from .. import _lazy, _state
from .._sparse import SparseTensor
from .._tensor import Tensor, refuse_writes
from ._lazy_families import COMPRESSED_METHODS as _COMPRESSED_METHOD_NAMES
from ._lazy_families import SPARSE_METHODS as _SPARSE_METHOD_NAMES
from ._lazy_families import NAMES as _LAZY_FAMILY_NAMES
from ._numpy_names import for_users

FAMILY_NAMES = ("pointwise", "pointwise_inplace", "unary", "unary_special", "reduction",
                "statistics", "cumulative", "sorting", "shape", "rearrange", "strided", "indexing",
                "gather_scatter", "scatter_views", "index_extra", "linalg", "decompositions",
                "creation", "ranges", "conversion", "random_ops", "conv", "pooling", "activation",
                "softmax_family", "loss", "normalization", "sparse", "spatial", "distance",
                "attention", "histograms", "descriptive", "fractional_pool", "complex_views",
                "windows", "bilinear", "vander", "memory", "tensor_methods", "stft", "view_copies",
                "recurrent", "aten_forms", "linear_loss", "sparse_products", "grouped_mm",
                "scaled_mm", "lowrank", "lobpcg", "hashing", "dlpack", "sparse_compressed",
                "fake_quantize", "foreach", "removed", "segment_reduce")
# LAZY_FAMILY_NAMES load on first use of one of their names (a function here, in `ember` or
# `ember.nn.functional`, a Tensor method): every family but those that the Tensor's operators
# and indexing, and the families' own module-level imports, need (pointwise, shape, indexing,
# linalg, creation), so `import ember` reads only those. Their names are listed, without
# importing them, in _lazy_families.py, which tests/ops/test_lazy_families.py checks (and
# rewrites).
LAZY_FAMILY_NAMES = tuple(_LAZY_FAMILY_NAMES)
_LAZY_PUBLIC = {n: f for f, (names, _, _) in _LAZY_FAMILY_NAMES.items() for n in names}
_LAZY_METHODS = {n: f for f, (_, names, _) in _LAZY_FAMILY_NAMES.items() for n in names}
_LAZY_FUNCTIONAL = {n: f for f, (_, _, names) in _LAZY_FAMILY_NAMES.items() for n in names}
# The methods that a lazy family binds itself when it loads, since they are not the functions
# of their names: Tensor.polygamma(n) takes n after self (torch.polygamma(n, input) first),
# Tensor.mvlgamma / igamma / igammac have their own argument errors (unary/special.py,
# gamma_functions.py), Tensor.split_with_sizes its own argument positions (rearrange.py),
# Tensor.solve and Tensor.lstsq their argument's name (removed.py).
_SELF_BOUND_METHODS = {**dict.fromkeys(("polygamma", "mvlgamma", "igamma", "igammac"),
                                        "unary_special"),
                       **dict.fromkeys(("split_with_sizes", "unsafe_split_with_sizes"),
                                       "rearrange"),
                       **dict.fromkeys(("solve", "lstsq"), "removed")}
_functional_loaded = {}  # the `ember.nn.functional` names of the families loaded so far
# (namespace, public names, functional names, PyTorch's namespace) of the modules given to export()
_exported_to = []


def _functional_form(family, name):
    """`ember.nn.functional.<name>` of `family`: the family's function of that name, or its
    FUNCTIONAL_FORMS entry where PyTorch's functional form takes other arguments (F.softmax
    infers a missing dim, torch.softmax refuses)."""
    return getattr(family, "FUNCTIONAL_FORMS", {}).get(name) or getattr(family, name)


def _bind_family(name, family):
    """A lazy family has just loaded: put its functions where the eager families' were put at
    import (here, on Tensor, in the namespaces given to export()), never over a value that is
    already there (a user's patch, or the name's eager holder). False where one of its
    functions has its module's name (`stft`), which keeps that place, as at eager import."""
    if name not in _LAZY_FAMILY_NAMES:
        return True
    public, methods, functional = _LAZY_FAMILY_NAMES[name]
    namespace = globals()
    for n in public:
        if namespace.get(n, family) is family:
            namespace[n] = getattr(family, n)
    for n in methods:
        current = vars(Tensor).get(n)
        if current is None or isinstance(current, _lazy.LazyMethod):
            setattr(Tensor, n, for_users(getattr(family, n), "Tensor", n))
    for n, owner in _SELF_BOUND_METHODS.items():
        if owner == name:  # the family has just put its own method on Tensor
            setattr(Tensor, n, for_users(vars(Tensor)[n], "Tensor", n))
    for n in functional:
        _functional_loaded[n] = _functional_form(family, n)
    for exported, wanted_public, wanted_functional, kind in _exported_to:
        for n in functional:
            if n in wanted_functional:
                exported.setdefault(n, for_users(_functional_loaded[n], kind, n))
        for n in public:
            if n in wanted_public and n not in wanted_functional:
                exported.setdefault(n, for_users(namespace[n], kind, n))
    return name not in namespace


_lazy.bind_on_import(sys.modules[__name__], _bind_family)
from . import _custom, _writes, creation, legacy_constructors, linalg, pointwise  # noqa: E402,I001
_EAGER_FAMILIES = tuple(importlib.import_module(f".{name}", __name__)
                        for name in FAMILY_NAMES if name not in _LAZY_FAMILY_NAMES)
__all__ = sorted({name for family in _EAGER_FAMILIES for name in family.__all__}
                 | set(_LAZY_PUBLIC))
globals().update({name: getattr(family, name)
                  for family in _EAGER_FAMILIES for name in family.__all__})
_functional_loaded.update({name: _functional_form(family, name) for family in _EAGER_FAMILIES
                           for name in getattr(family, "FUNCTIONAL", ())})
# every `ember.nn.functional` name of the families, loaded or not
FUNCTIONAL_NAMES = (*_functional_loaded, *_LAZY_FUNCTIONAL)


def load_all():
    """Import every lazy family (what needs every op at once: fx tracing, the profiler,
    torch.overrides' tables)."""
    for name in _LAZY_FAMILY_NAMES:
        importlib.import_module(f".{name}", __name__)


def functional_op(name):
    """The `ember.nn.functional` function `name`, its family loaded if it was not."""
    if name not in _functional_loaded and name in _LAZY_FUNCTIONAL:
        importlib.import_module(f".{_LAZY_FUNCTIONAL[name]}", __name__)
    return _functional_loaded[name]


def export(module, public=(), functional=(), kind="torch"):
    """Give `module` (`ember`, `ember.nn.functional`) the ops named in `public` (names of
    `__all__`) and `functional` (`ember.nn.functional` names, which win over a public name):
    those of loaded families now, the others when their family loads (on first access). Each
    is bound in the form users call (_numpy_names.py), `kind` being PyTorch's name of the
    namespace."""
    namespace = vars(module)
    public, functional = frozenset(public), frozenset(functional)
    lazy = {}
    for n in functional:
        if n in _functional_loaded:
            namespace.setdefault(n, for_users(_functional_loaded[n], kind, n))
        elif n in _LAZY_FUNCTIONAL:
            lazy[n] = _loading(namespace, _LAZY_FUNCTIONAL[n], n)
    for n in public:
        family = _LAZY_PUBLIC.get(n)
        if n in functional:
            continue
        if family is not None and f"{__name__}.{family}" not in sys.modules:
            lazy[n] = _loading(namespace, family, n)
        elif n in globals():
            namespace.setdefault(n, for_users(globals()[n], kind, n))
    _exported_to.append((namespace, public, functional, kind))
    _lazy.lazy_attributes(module, lazy)


def _loading(namespace, family, name):
    """The lazy attribute `name` of an exported namespace: loading `family` binds it there
    (_bind_family)."""
    def load():
        importlib.import_module(f".{family}", __name__)
        return namespace[name]
    return load


# PyTorch never warns on 0/0, log(0) or overflow: NumPy is told so once here, since a
# per-call `np.errstate` would cost more than a whole small op.
np.seterr(all="ignore")

for _family in _EAGER_FAMILIES:
    for _name in _family.METHODS:
        setattr(Tensor, _name, getattr(_family, _name))
# every method bound so far (the eager families' and the class body's: size, stride ...) in
# the form users call; a lazy family's methods get it as they are bound (_bind_family)
for _name, _method in list(vars(Tensor).items()):
    if not _name.startswith("_") and isinstance(_method, types.FunctionType):
        setattr(Tensor, _name, for_users(_method, "Tensor", _name))
_lazy.lazy_methods(Tensor, {name: f"{__name__}.{family}" for name, family in _LAZY_METHODS.items()})
# properties a lazy family puts on Tensor (tests/ops/test_lazy_families.py finds them all)
LAZY_PROPERTIES = {"real": "complex_views", "imag": "complex_views"}
_lazy.lazy_methods(Tensor, {name: f"{__name__}.{family}" for name, family in
                            LAZY_PROPERTIES.items()}, _lazy.LazyProperty)
# stand-ins for the methods lazy families bind themselves, which load the family on first use
_lazy.lazy_methods(Tensor, {name: f"{__name__}.{family}"
                            for name, family in _SELF_BOUND_METHODS.items()})
# `Tensor(...)`, the legacy constructor, and a sparse tensor's own forms of methods: bound from
# here, so that _tensor.py and _sparse.py import no ops (the sparse ones by the sparse family,
# which the stand-ins load on first use)
Tensor.__new__ = staticmethod(legacy_constructors.tensor_new)
_lazy.lazy_methods(SparseTensor, dict.fromkeys(_SPARSE_METHOD_NAMES, f"{__name__}.sparse"))
from .._sparse_compressed import SparseCompressedTensor  # noqa: E402
_lazy.lazy_methods(SparseCompressedTensor, dict.fromkeys(_COMPRESSED_METHOD_NAMES,
                                                         f"{__name__}.sparse_compressed_methods"))


def _reflected(op):
    def method(self, other):
        return op(other, self)
    return method


def _rdiv(self, other):
    # PyTorch's Tensor.__rtruediv__ multiplies by the reciprocal: its values (they can differ
    # from `other / self` in the last bit) and its graph (MulBackward0 over ReciprocalBackward0)
    from .unary import reciprocal
    return pointwise.mul(reciprocal(self), other)


_OPERATORS = {
    "__add__": pointwise.add, "__radd__": pointwise.add, "__iadd__": pointwise.add_,
    "__sub__": pointwise.sub, "__rsub__": pointwise.rsub, "__isub__": pointwise.sub_,
    "__mul__": pointwise.mul, "__rmul__": pointwise.mul, "__imul__": pointwise.mul_,
    "__truediv__": pointwise.div, "__rtruediv__": _rdiv, "__itruediv__": pointwise.div_,
    "__floordiv__": pointwise.floor_divide, "__rfloordiv__": _reflected(pointwise.floor_divide),
    "__ifloordiv__": pointwise.floor_divide_,
    "__mod__": pointwise.remainder, "__rmod__": _reflected(pointwise.remainder),
    "__imod__": pointwise.remainder_,
    "__pow__": pointwise.pow, "__rpow__": _reflected(pointwise.pow), "__ipow__": pointwise.pow_,
    "__matmul__": linalg.matmul, "__rmatmul__": _reflected(linalg.matmul),
    "__neg__": pointwise.neg, "__pos__": lambda self: self, "__abs__": pointwise.abs,
    "__invert__": pointwise.comparison.invert_operator,
    "__and__": pointwise.bitwise_and, "__rand__": pointwise.bitwise_and,
    "__or__": pointwise.bitwise_or, "__ror__": pointwise.bitwise_or,
    "__xor__": pointwise.bitwise_xor, "__rxor__": pointwise.bitwise_xor,
    "__iand__": lambda s, o: _writes.inplace(s, lambda x: pointwise.bitwise_and(x, o), (o,)),
    "__ior__": lambda s, o: _writes.inplace(s, lambda x: pointwise.bitwise_or(x, o), (o,)),
    "__ixor__": lambda s, o: _writes.inplace(s, lambda x: pointwise.bitwise_xor(x, o), (o,)),
    "__lshift__": pointwise.bitwise_left_shift, "__rshift__": pointwise.bitwise_right_shift,
    "__rlshift__": _reflected(pointwise.bitwise_left_shift),
    "__rrshift__": _reflected(pointwise.bitwise_right_shift),
    "__eq__": pointwise.eq, "__ne__": pointwise.ne, "__lt__": pointwise.lt,
    "__le__": pointwise.le, "__gt__": pointwise.gt, "__ge__": pointwise.ge,
}


def _operator(op):
    """Python's protocol: an operand we do not take gives NotImplemented (so `t == None` is
    False and `t + "a"` a TypeError), where the function form raises PyTorch's TypeError."""
    def method(self, *other):
        if other and not isinstance(other[0], _OPERAND_TYPES):
            return NotImplemented
        return op(self, *other)
    method.__name__ = getattr(op, "__name__", "operator")
    return method


def _binary_operator(op):
    """PyTorch's binary operators turn the op's TypeError (an operand it does not take) into
    NotImplemented: Python then asks the other operand (a user's class with `__radd__`,
    `tuple * t` repeating by the tensor's index), else raises its own "unsupported operand
    type(s) for +: 'Tensor' and 'tuple'"."""
    def method(self, other):
        try:
            return op(self, other)
        except TypeError:
            return NotImplemented
    method.__name__ = getattr(op, "__name__", "operator")
    return method


_OPERAND_TYPES = (Tensor, builtins.bool, builtins.int, builtins.float, builtins.complex, np.generic,
                  np.ndarray)
_COMPARISONS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}
_UNARY = {"__neg__", "__pos__", "__abs__", "__invert__"}
for _name, _op in _OPERATORS.items():
    setattr(Tensor, _name, _op if _name in _UNARY else
            _operator(_op) if _name in _COMPARISONS else _binary_operator(_op))
Tensor.__hash__ = lambda self: id(self)


def _matrix_transpose(self):
    if self._array.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self._array.ndim}-D tensor.")
    return self.transpose(-2, -1)


def _T(self):
    ndim = self._array.ndim
    if ndim == 2:  # PyTorch reverses the dims with a permute (PermuteBackward0), not t()
        return self.permute((1, 0))
    _state.warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                     "shape is deprecated and it will throw an error in a future release. "
                     "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                     "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    # `range` here is ember.range (the families' names fill this module): use builtins'
    return self.permute(tuple(builtins.range(ndim - 1, -1, -1)))


def __getattr__(name):
    """`ember.ops.<ns>` (as `torch.ops.<ns>`): the namespace of operators a user defined with
    ember.library. The names this package already has (every op function and family
    module) come first, so a user namespace of the same name is not reachable here.
    PyTorch's own namespaces, aten and prim, are built on first use (ops/_aten.py), as is
    profiler (ops/_profiler_ops.py)."""
    if name in ("aten", "prim"):
        from . import _aten  # noqa: F401
    elif name == "profiler":
        from . import _profiler_ops  # noqa: F401
    found = _custom.NAMESPACES.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found


def _all_families():
    load_all()
    return tuple(importlib.import_module(f".{family}", __name__) for family in FAMILY_NAMES)


def _all_functional():
    return {name: _functional_form(family, name)
            for family in _all_families() for name in getattr(family, "FUNCTIONAL", ())}


# a lazy family's functions, and the family modules themselves, load on first access; so do
# FAMILIES and FUNCTIONAL, which hold every family
_lazy.lazy_attributes(sys.modules[__name__], {
    **{name: (f".{family}", name) for name, family in _LAZY_PUBLIC.items()},
    **{family: (f".{family}", None) for family in _LAZY_FAMILY_NAMES if family not in _LAZY_PUBLIC},
    "FAMILIES": _all_families, "FUNCTIONAL": _all_functional})

Tensor.T = property(_T)
Tensor.mT = property(_matrix_transpose)
Tensor.H = property(lambda self: self.t().conj() if self.ndim == 2 else self.conj())
Tensor.mH = property(lambda self: _matrix_transpose(self).conj())
refuse_writes()  # every property is bound now
