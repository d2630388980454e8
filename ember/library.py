"""`ember.library`, as torch.library: operators defined from Python functions.

`custom_op("ns::name", fn, mutates_args=...)` makes an operator with a schema inferred from
the annotations; it runs the kernel registered for its inputs' device type (the function
itself by default) and takes part in autograd through `register_autograd`'s backward, on
ember's custom-Function mechanism. `register_fake` gives the output's metadata (ember has no
fake tensors: `opcheck` holds it against the real kernel). `Library`, `define` and `impl`
declare operators by schema string. Every operator is reachable as `ember.ops.<ns>.<name>`
(`torch.ops...` under ember.compat).
Not here: register_autocast, register_vmap, register_torch_dispatch, triton_op and
wrap_triton (no compiler, vmap dispatch or Triton in ember)."""
import ast
import inspect
import typing
import warnings
from collections.abc import Sequence

from . import autograd
from ._tensor import Tensor
from .device import device as _device
from .dtypes import dtype as _dtype
from .ops import _custom

__all__ = ["Library", "impl", "define", "impl_abstract", "register_fake", "register_kernel",
           "register_autograd", "get_kernel", "custom_op", "infer_schema", "opcheck",
           "CustomOpDef", "OpCheckError"]

_OPS = {}  # "ns::name" -> its CustomOpDef

# ---- schemas --------------------------------------------------------------------------------
_ARG_TYPES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str",
              _dtype: "ScalarType", _device: "Device", typing.Union[int, float, bool]: "Scalar"}
_LIST_ELEMENTS = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool",
                  typing.Union[int, float, bool]: "Scalar",
                  typing.Optional[Tensor]: "Tensor?"}
_RETURN_TYPES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool",
                 typing.Union[int, float, bool]: "Scalar"}


def _optional_of(annotation):
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType",
                                                               None)) \
            and type(None) in args and len(args) == 2:
        return next(a for a in args if a is not type(None))
    return None


def _schema_type(annotation):
    """The schema type of an argument annotation, or None when schemas cannot say it."""
    if annotation in _ARG_TYPES:
        return _ARG_TYPES[annotation]
    inner = _optional_of(annotation)
    if inner is not None:
        base = _schema_type(inner)
        return None if base is None or base.endswith("?") or base == "Tensor?[]" else base + "?"
    if typing.get_origin(annotation) in (list, Sequence, typing.List, typing.Sequence):
        (element,) = typing.get_args(annotation) or (None,)
        name = _LIST_ELEMENTS.get(element)
        return None if name is None else name + "[]"
    return None


def _return_schema(annotation, error):
    if annotation is None or annotation is type(None):
        return "()"
    if annotation in _RETURN_TYPES:
        return _RETURN_TYPES[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, typing.List) and args == (Tensor,):
        return "Tensor[]"
    if origin is tuple and args:
        parts = [_return_schema(a, error) for a in args]
        return "(" + ", ".join(parts) + ")"
    error(f"Return has unsupported type {annotation}. The valid types are: Tensor, "
          "list[Tensor], int, float, bool, a tuple of these, and None.")


def _default_text(value):
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value) if not isinstance(value, str) else value
    if isinstance(value, str):
        return f'"{value}"'
    return None


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The operator schema of a function from its type annotations: '(Tensor x, SymInt n=2,
    *, float scale=1.0) -> Tensor'; a mutated Tensor argument is written Tensor(a<i>!)."""
    signature = inspect.signature(prototype_function)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {signature})")
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:
        hints = {}
    names = list(signature.parameters)
    if mutates_args != "unknown":
        unknown = set(mutates_args) - set(names)
        if unknown:
            error(f"{unknown} in mutates_args were not found in the custom op's signature. "
                  "mutates_args should contain the names of all args that the custom op "
                  "mutates, or just the string 'unknown' if you don't know.")
    pieces, keyword_only = [], False
    for index, (name, param) in enumerate(signature.parameters.items()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not keyword_only:
            pieces.append("*")
            keyword_only = True
        if param.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        annotation = hints.get(name, param.annotation)
        kind = _schema_type(annotation)
        if kind is None:
            error(f"Parameter {name} has unsupported type {annotation}.")
        mutated = mutates_args == "unknown" or name in mutates_args
        if mutated and kind.startswith("Tensor"):
            kind = kind.replace("Tensor", f"Tensor(a{index}!)", 1)
        text = f"{kind} {name}"
        if param.default is not inspect.Parameter.empty:
            default = _default_text(param.default)
            if default is None:
                error(f"Parameter {name} has an unsupported default value type "
                      f"{type(param.default)}.")
            text += "=" + default
        pieces.append(text)
    returns = hints.get("return", signature.return_annotation)
    if returns is inspect.Signature.empty:
        error("No return type annotation was provided. Please add one.")
    schema = f"({', '.join(pieces)}) -> {_return_schema(returns, error)}"
    return schema if op_name is None else op_name + schema


def _split_qualname(qualname):
    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace or not name or not name.replace("_", "a").replace(".", "a").isalnum():
        raise ValueError(f"Expected a qualified operator name 'namespace::name', got "
                         f"{qualname!r}")
    return namespace, name


def _schema_arguments(schema):
    """[(name, type, keyword_only, default)] of '(Tensor x, *, float s=1.0) -> ...'; a
    default is the Python value (`_NO_DEFAULT` when there is none)."""
    inside = schema[schema.index("(") + 1:schema.rindex(") ->")]
    parts, token, depth = [], "", 0
    for ch in inside + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(token.strip())
            token = ""
        else:
            token += ch
    arguments, keyword_only = [], False
    for part in filter(None, parts):
        if part == "*":
            keyword_only = True
            continue
        declaration, _, default = part.partition("=")
        kind, name = declaration.rsplit(None, 1)
        value = _NO_DEFAULT
        if default:
            value = {"None": None, "True": True, "False": False}.get(default) if \
                default in ("None", "True", "False") else ast.literal_eval(default)
        arguments.append((name, kind, keyword_only, value))
    return arguments


_NO_DEFAULT = inspect.Parameter.empty


# ---- the operator -----------------------------------------------------------------------------
def _tensors_in(values):
    for value in values:
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, Tensor))


class CustomOpDef:
    """An operator: its schema, a kernel per device type (None: every device), the fake
    (metadata) function and the autograd formula. Calling it runs the op."""

    def __init__(self, namespace, name, schema, fn=None, device_types=None):
        self._namespace, self._name = namespace, name
        self._schema = schema
        self._init_fn = fn
        self._kernels = {}
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        self._arguments = _schema_arguments(schema)
        self._arg_names = [a[0] for a in self._arguments]
        self._keyword_only = {a[0] for a in self._arguments if a[2]}
        self._mutated = {a[0] for a in self._arguments if "!" in a[1]}
        if fn is not None:
            self.register_kernel(device_types)(fn)
        self._function = type(f"GeneratedBackwardFor_{namespace}_{name}_default",
                              (autograd.Function,), {
                                  "forward": staticmethod(self._forward),
                                  "setup_context": staticmethod(self._setup_context),
                                  "backward": staticmethod(self._backward)})

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # ---- registrations ----------------------------------------------------------------------
    def register_kernel(self, device_types, fn=None, /):
        """The implementation for tensors on `device_types` ('cpu', 'cuda', a list, or None
        for all); a decorator when `fn` is not given."""
        def register(func):
            types = [None] if device_types is None else (
                [device_types] if isinstance(device_types, str) else list(device_types))
            for device_type in types:
                if device_type is not None:
                    _device(device_type)  # PyTorch's error for a bad device string
                self._kernels[device_type] = func
            return func
        return register if fn is None else register(fn)

    def register_fake(self, fn, /):
        """The function giving the output's shape, dtype and device from the inputs'."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """`backward(ctx, *grads)` gives one gradient per input (None where there is none);
        `setup_context(ctx, inputs, output)` saves what it needs on ctx."""
        if not callable(backward):
            raise TypeError(f"Expected backward to be a function, got {type(backward)}")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    # ---- running ----------------------------------------------------------------------------
    def _bind(self, args, kwargs):
        """The argument values in schema order (keyword-only ones included)."""
        values = list(args)
        most = len(self._arg_names) - len(self._keyword_only)
        if len(values) > most:
            raise TypeError(f"{self._qualname}() takes {most} positional arguments but "
                            f"{len(values)} were given")
        for name, _, _, default in self._arguments[len(values):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif default is not _NO_DEFAULT:
                values.append(default)
            else:
                raise TypeError(f"{self._qualname}() missing required argument: '{name}'")
        if kwargs:
            raise TypeError(f"{self._qualname}() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        return values

    def _call_kernel(self, kernel, values):
        positional, keywords = self._split(values)
        return kernel(*positional, **keywords)

    def _kernel_for(self, values):
        device_type = next((t.device.type for t in _tensors_in(values)), "cpu")
        kernel = self._kernels.get(device_type, self._kernels.get(None))
        if kernel is None:
            raise NotImplementedError(
                f"{self._namespace}::{self._name}: There were no Tensor inputs to this "
                f"operator, or no kernel is registered for device type '{device_type}'. "
                f"Registered: {sorted(str(k) for k in self._kernels)}. Please use "
                "register_kernel to add one." if self._kernels else
                f"{self._qualname}: no kernel registered; define one with impl or "
                "register_kernel")
        return kernel

    def _split(self, values):
        """Schema-ordered values as (positional, keyword-only dict)."""
        positional = [v for n, v in zip(self._arg_names, values) if n not in self._keyword_only]
        keywords = {n: v for n, v in zip(self._arg_names, values) if n in self._keyword_only}
        return positional, keywords

    # The autograd Function sees the positional arguments and, last, the keyword-only ones
    # as one dict (no gradient flows to those), as PyTorch's generated Function does.
    def _forward(self, *args):
        *positional, keywords = args
        output = self._kernel_for(positional)(*positional, **keywords)
        inputs = {id(t) for t in _tensors_in(positional)}
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        if any(isinstance(o, Tensor) and (id(o) in inputs) for o in outputs):
            raise RuntimeError(
                f"{self._name}: The output of this custom operator (1) must not also be an "
                "input to this custom operator and (2) may not alias any inputs to this "
                "custom operator or other returns. The most common way to trigger this error "
                "is if we have y = custom_op(x) and y and x are the same Tensor. Please "
                "instead return a clone of the offending output tensor(s) (e.g. return "
                "x.clone()) or refactor the custom operator to not return y.")
        return output

    def _setup_context(self, ctx, inputs, output):
        if self._setup_context_fn is None:
            return
        *positional, keywords = inputs
        if self._keyword_only:
            self._setup_context_fn(ctx=ctx, inputs=tuple(positional),
                                   keyword_only_inputs=keywords, output=output)
        else:
            self._setup_context_fn(ctx=ctx, inputs=tuple(positional), output=output)

    def _backward(self, ctx, *grads):
        if self._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {self._namespace}.{self._name}."
                               "default but no autograd formula was registered. Please use "
                               "register_autograd to add one.")
        result = self._backward_fn(ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        expected = len(self._arg_names) - len(self._keyword_only)
        if len(result) != expected:
            raise RuntimeError(f"{self._qualname}: expected the backward function to return "
                               f"{expected} gradients (one per positional input, None for "
                               f"those with none), got {len(result)}")
        return (*result, None)

    def _run(self, values):
        positional, keywords = self._split(values)
        return self._function.apply(*positional, keywords)

    def __call__(self, *args, **kwargs):
        return self._run(self._bind(args, dict(kwargs)))


# ---- the torch.ops view -----------------------------------------------------------------------
def _cpp_default(value):
    """A default as PyTorch's C++ FunctionSchema prints it (floats to 17 significant digits,
    always with a point or an exponent)."""
    if isinstance(value, float):
        text = f"{value:.17g}"
        return text if any(c in text for c in ".en") else text + "."
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_cpp_default(v) for v in value) + "]"
    return repr(value)


def _printed_schema(op):
    pieces, keyword_only = [], False
    for name, kind, is_keyword_only, default in op._arguments:
        if is_keyword_only and not keyword_only:
            pieces.append("*")
            keyword_only = True
        text = f"{kind} {name}"
        if default is not _NO_DEFAULT:
            text += "=" + _cpp_default(default)
        pieces.append(text)
    returns = op._schema[op._schema.rindex(") ->") + 4:]
    return f"{op._qualname}({', '.join(pieces)}) ->{returns}"


class OpOverload:
    """`torch.ops.<ns>.<name>.default`: the operator with its one overload's schema."""

    def __init__(self, op):
        self._op = op
        self._schema = _printed_schema(op)

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __repr__(self):
        return f"{self._op._namespace}.{self._op._name}.default"


class OpOverloadPacket(OpOverload):
    """`torch.ops.<ns>.<name>`: the operator; `.default` is its overload."""

    def __init__(self, op):
        super().__init__(op)
        self.default = OpOverload(op)

    def overloads(self):
        return ["default"]

    def __repr__(self):
        return f"{self._op._namespace}.{self._op._name}"


def _register(op):
    if op._qualname in _OPS:
        raise RuntimeError(f"Tried to register an operator ({op._qualname}) with the same "
                           "name and overload name multiple times.")
    _OPS[op._qualname] = op
    _custom.namespace(op._namespace)._ops[op._name] = OpOverloadPacket(op)
    return op


def _lookup(op):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, OpOverload):
        return op._op
    if isinstance(op, str) and op in _OPS:
        return _OPS[op]
    raise ValueError(f"Expected an operator defined with ember.library (a CustomOpDef, "
                     f"torch.ops.<ns>.<name>, or its 'ns::name'), got {op!r}")


# ---- the functional API -----------------------------------------------------------------------
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
            _OPS.pop(f"{self.ns}::{name}", None)
            _custom.namespace(self.ns)._ops.pop(name, None)
        self._defined = []


# ---- opcheck ----------------------------------------------------------------------------------
class OpCheckError(Exception):
    pass


def _copied(values):
    """The arguments again, tensors cloned (keeping requires_grad) so a check cannot disturb
    the caller's."""
    def copy(v):
        if isinstance(v, Tensor):
            out = v.detach().clone()
            return out.requires_grad_(v.requires_grad) if v.is_leaf else out
        if isinstance(v, (list, tuple)):
            return type(v)(copy(x) for x in v)
        return v
    return [copy(v) for v in values]


def _flat_outputs(output):
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    return [o for o in outputs if isinstance(o, Tensor)]


def _check_schema(op, values, atol=None, rtol=None):
    before = [v.detach().clone() if isinstance(v, Tensor) else None for v in values]
    op._run(values)
    for name, value, old in zip(op._arg_names, values, before):
        if old is not None and name not in op._mutated and not bool(
                (value.detach() == old).all() | (value.detach().isnan() & old.isnan()).all()):
            raise OpCheckError(f"{op._qualname}: the operator mutated its argument '{name}', "
                               "which is not in mutates_args")


def _check_autograd_registration(op, values, atol=None, rtol=None):
    wants_grad = any(t.requires_grad for t in _tensors_in(values))
    if wants_grad and op._backward_fn is None and any(
            o.dtype.is_floating_point for o in _flat_outputs(op._run(values))):
        raise OpCheckError(f"{op._qualname}: an input requires grad but the operator has no "
                           "autograd formula. Please use register_autograd to add one.")


def _check_fake(op, values, atol=None, rtol=None):
    real = _flat_outputs(op._run(values))
    if not real:
        return
    if op._abstract_fn is None:
        raise OpCheckError(f"{op._qualname}: no fake (meta) implementation. Please use "
                           "register_fake to add one.")
    fake = _flat_outputs(op._call_kernel(op._abstract_fn, _copied(values)))
    for i, (r, f) in enumerate(zip(real, fake, strict=True)):
        if (tuple(r.shape), r.dtype, r.device) != (tuple(f.shape), f.dtype, f.device):
            raise OpCheckError(f"{op._qualname}: output {i} of the fake implementation is "
                               f"{tuple(f.shape)} {f.dtype} on {f.device}, the operator's is "
                               f"{tuple(r.shape)} {r.dtype} on {r.device}")


def _check_rerun(op, values, atol, rtol):
    """What PyTorch's AOT check compares (a traced copy against the eager op) is here one
    run against another on fresh copies: outputs and gradients must agree."""
    from .testing import assert_close
    runs = []
    for _ in range(2):
        copies = _copied(values)
        outputs = _flat_outputs(op._run(copies))
        grads = []
        differentiable = [o for o in outputs if o.requires_grad]
        leaves = [t for t in _tensors_in(copies) if t.requires_grad]
        if differentiable and leaves:
            total = sum(o.sum() for o in differentiable)
            grads = autograd.grad(total, leaves, allow_unused=True)
        runs.append((outputs, [g for g in grads if g is not None]))
    for first, second in zip(runs[0], runs[1]):
        for a, b in zip(first, second, strict=True):
            assert_close(a, b, atol=atol, rtol=rtol)


_CHECKS = {"test_schema": _check_schema,
           "test_autograd_registration": _check_autograd_registration,
           "test_faketensor": _check_fake,
           "test_aot_dispatch_dynamic": _check_rerun}


def opcheck(op, args, kwargs=None, *, test_utils=tuple(_CHECKS), raise_exception=True,
            atol=None, rtol=None):
    """Checks a custom operator on sample `args`: it mutates only what it declares, has an
    autograd formula when inputs need one, its fake implementation agrees with it on shapes,
    dtypes and devices, and it gives the same outputs and gradients on a second run. Returns
    {test: "SUCCESS" or the error}; raises OpCheckError at the first failure by default."""
    target = _lookup(op)
    names = [test_utils] if isinstance(test_utils, str) else list(test_utils)
    for name in names:
        if name not in _CHECKS:
            raise ValueError(f"test_utils must be a subset of {tuple(_CHECKS)}, got {name!r}")
    results = {}
    for name in names:
        values = _copied(target._bind(args, dict(kwargs or {})))
        try:
            _CHECKS[name](target, values, atol, rtol)
            results[name] = "SUCCESS"
        except Exception as error:
            if raise_exception:
                if isinstance(error, OpCheckError):
                    raise
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {error}") from error
            results[name] = error
    return results
