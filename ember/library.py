"""`ember.library`, as torch.library: operators defined from Python functions.

`custom_op("ns::name", fn, mutates_args=...)` makes an operator with a schema inferred from
the annotations; it runs the kernel registered for its inputs' device type (the function
itself by default) and takes part in autograd through `register_autograd`'s backward, on
ember's custom-Function mechanism. `register_fake` gives the output's metadata (ember has no
fake tensors: `opcheck` holds it against the real kernel). `Library`, `define` and `impl`
declare operators by schema string. Every operator is reachable as `ember.ops.<ns>.<name>`
(`torch.ops...` under ember.compat).
`register_autocast` casts an op's inputs under autocast; `register_vmap` keeps a batching rule
that ember's per-sample vmap does not need. Not here: get_ctx (no fake tensors),
register_torch_dispatch, triton_op and wrap_triton (no dispatcher below autograd, no Triton)."""
import enum
import warnings

from ._library.custom_ops import CustomOpDef, _lookup, _register, _unregister
from ._library.infer_schema import _split_qualname, infer_schema
from ._library.opcheck import OpCheckError, opcheck

__all__ = ["Library", "impl", "define", "impl_abstract", "register_fake", "register_kernel",
           "register_autograd", "get_kernel", "custom_op", "infer_schema", "opcheck",
           "CustomOpDef", "OpCheckError", "Tag", "register_autocast", "register_vmap"]


class Tag(enum.Enum):
    """The properties an operator declares (`custom_op(..., tags=...)`), by PyTorch's names."""
    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19


Tag.__module__ = "torch"


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap `fn` as the operator `name` ('ns::name'); a decorator without `fn`."""
    def wrap(func):
        namespace, op_name = _split_qualname(name)
        text = schema if schema is not None else infer_schema(func, mutates_args=mutates_args)
        return _register(CustomOpDef(namespace, op_name, text, func, device_types))
    return wrap if fn is None else wrap(fn)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    return _lookup(op).register_kernel(device_types, func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    target = _lookup(op)
    return target.register_fake if func is None else target.register_fake(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    warnings.warn("torch.library.impl_abstract was renamed to torch.library.register_fake. "
                  "Please use that instead; we will remove torch.library.impl_abstract in a "
                  "future version of PyTorch.", DeprecationWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Under autocast on `device_type`, the op runs on its floating inputs cast to
    `cast_inputs`, with autocast off inside."""
    _lookup(op).register_autocast(device_type, cast_inputs)


def register_vmap(op, func=None, /, *, lib=None):
    """Register `func(info, in_dims, *args) -> (output, out_dims)` as the op's vmap rule."""
    target = _lookup(op)
    return target.register_vmap if func is None else target.register_vmap(func)


def get_kernel(op, dispatch_key):
    """The kernel `op` runs for a device type ('cpu', 'cuda'; dispatch keys 'CPU', 'CUDA')."""
    target = _lookup(op)
    device_type = str(dispatch_key).lower()
    kernel = target._kernels.get(device_type, target._kernels.get(None))
    if kernel is None:
        raise RuntimeError(f"{target._qualname} has no kernel for {dispatch_key}")
    return kernel


def define(qualname, schema, *, lib=None, tags=()):
    """Declare the operator `qualname` with `schema` ('(Tensor x) -> Tensor'); its kernels
    come from impl / register_kernel."""
    namespace, name = _split_qualname(qualname)
    if not schema.startswith("("):
        raise ValueError(f"define(qualname, schema): expected schema to start with '(' (the "
                         f"name goes in qualname), got {schema!r}")
    _register(CustomOpDef(namespace, name, schema))


# dispatch key -> the device type a kernel registered under it serves (None: all)
_DISPATCH_KEYS = {"CPU": "cpu", "CUDA": "cuda", "CompositeExplicitAutograd": None,
                  "CompositeImplicitAutograd": None, "Autograd": None, "": None}


def impl(qualname, types, func=None, *, lib=None):
    """Register `func` as the kernel of `qualname` for device `types` ('cpu', 'cuda',
    'default' for every device, or a list); a decorator without `func`."""
    names = [types] if isinstance(types, str) else list(types)
    device_types = [None if t in ("default", "CompositeExplicitAutograd",
                                  "CompositeImplicitAutograd") else
                    _DISPATCH_KEYS.get(t, t) for t in names]
    target = _lookup(qualname)

    def register(fn):
        for device_type in device_types:
            target.register_kernel(device_type, fn)
        return fn
    return register if func is None else register(func)


class Library:
    """Operators of one namespace: `kind` 'DEF' (this library defines them), 'FRAGMENT'
    (defines more in a namespace) or 'IMPL' (gives kernels to existing ones)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Declare '<name>(<args>) -> <returns>' in this namespace; returns the name."""
        name = schema[:schema.index("(")].split(".")[0]
        define(f"{self.ns}::{name}", schema[schema.index("("):])
        self._defined.append(name)
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """`fn` as the kernel of `op_name` under `dispatch_key` (this library's by default):
        'CPU', 'CUDA', 'CompositeImplicitAutograd' (every device) ..."""
        name = op_name if isinstance(op_name, str) else op_name._op._name
        key = dispatch_key or self.dispatch_key
        if key not in _DISPATCH_KEYS:
            raise ValueError(f"ember.library: unsupported dispatch key {key!r}; ember's are "
                             f"{sorted(k for k in _DISPATCH_KEYS if k)}")
        qualname = name if "::" in name else f"{self.ns}::{name.split('.')[0]}"
        _lookup(qualname).register_kernel(_DISPATCH_KEYS[key], fn)

    def _destroy(self):
        for name in self._defined:
            _unregister(f"{self.ns}::{name}")
        self._defined = []


