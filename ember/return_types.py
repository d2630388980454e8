"""`torch.return_types`: PyTorch's named result tuples (`torch.max(x, 0)` gives
`torch.return_types.max(values=..., indices=...)`). Each is a tuple type with named fields
that prints as PyTorch's; the `_out` types are what the `out=` forms return. The ops make
their results with `return_type`, which gives the one type of each name."""
import functools
from collections import namedtuple

from .utils._pytree import _list_flatten_with_keys, register_pytree_node


_VALUES_INDICES = ("values", "indices")
# name -> field names, PyTorch 2.13's table; each also has an `_out` twin unless listed
# in _NO_OUT
_FIELDS = {
    "aminmax": ("min", "max"), "cummax": _VALUES_INDICES, "cummin": _VALUES_INDICES,
    "frexp": ("mantissa", "exponent"), "geqrf": ("a", "tau"),
    "histogram": ("hist", "bin_edges"), "histogramdd": ("hist", "bin_edges"),
    "kthvalue": _VALUES_INDICES, "linalg_cholesky_ex": ("L", "info"),
    "linalg_eig": ("eigenvalues", "eigenvectors"), "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"), "linalg_qr": ("Q", "R"),
    "linalg_slogdet": ("sign", "logabsdet"), "linalg_solve_ex": ("result", "info"),
    "linalg_svd": ("U", "S", "Vh"), "lu_unpack": ("P", "L", "U"), "max": _VALUES_INDICES,
    "median": _VALUES_INDICES, "min": _VALUES_INDICES, "mode": _VALUES_INDICES,
    "nanmedian": _VALUES_INDICES, "qr": ("Q", "R"), "slogdet": ("sign", "logabsdet"),
    "sort": _VALUES_INDICES, "svd": ("U", "S", "V"), "topk": _VALUES_INDICES,
    "triangular_solve": ("solution", "cloned_coefficient"),
}
_NO_OUT = {"histogramdd"}


def _table_names():
    """The result types of the table in PyTorch's order, each name before its `_out` twin."""
    for name in _FIELDS:
        yield name
        if name not in _NO_OUT:
            yield f"{name}_out"


__all__ = ["all_return_types", "pytree_register_structseq", *_table_names()]


@functools.cache
def _tuple_of(fields):
    """One named tuple class per field list, which the result types of those fields share:
    namedtuple() compiles code for each class it makes, and ~90 of them were a visible part
    of `import ember`. Each result type is its own subclass, with its own name."""
    return namedtuple("_" + "_".join(fields), fields)


def return_type(name, fields=_VALUES_INDICES):
    """The named tuple type `return_types.<name>`, made once (it pickles by that name)."""
    cls = globals().get(name)
    if isinstance(cls, type):
        return cls

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    cls = type(name, (_tuple_of(tuple(fields)),),
               {"__slots__": (), "__repr__": __repr__, "__str__": __repr__,
                "__module__": __name__, "__qualname__": name})
    globals()[name] = cls
    if not name.startswith("_") and name not in __all__:
        __all__.append(name)
    return cls


def pytree_register_structseq(cls):
    """Let the function transforms see through a result tuple type: its fields are the
    children. A structseq is built from one sequence; a named tuple from its fields."""
    build = getattr(cls, "_make", cls)
    register_pytree_node(cls, lambda seq: (list(seq), None),
                         lambda values, context: build(values),
                         flatten_with_keys_fn=_list_flatten_with_keys)


def __getattr__(name):
    """The table's types are made on first use (an op that returns one, a pickle naming
    one): making all ~70 at import was a visible part of `import ember`."""
    if name == "all_return_types":
        made = globals()["all_return_types"] = [__getattr__(n) for n in _table_names()]
        return made
    base = name[:-len("_out")] if name.endswith("_out") else name
    if base in _FIELDS and (base == name or base not in _NO_OUT):
        return return_type(name, _FIELDS[base])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
