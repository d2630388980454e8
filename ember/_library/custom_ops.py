"""The operator a custom_op or a define makes (`CustomOpDef`): kernels per device type, the
fake function, the autograd formula run through ember's custom-Function mechanism; and its
`torch.ops.<ns>.<name>` view, kept in the ops floor's namespace registry."""
import warnings

from .. import _state, autograd, ops
from .. import dtypes as _dt
from .._tensor import Tensor
from ..device import device as _device
from ..ops import _aten, _custom
from .infer_schema import _NO_DEFAULT, _schema_arguments

__all__ = ["CustomOpDef", "OpOverload", "OpOverloadPacket"]

_OPS = {}  # "ns::name" -> its CustomOpDef
# what autocast casts: lower-precision floats and float32 (never float64 or integers)
_AUTOCAST_ELIGIBLE = (_dt.float16, _dt.bfloat16, _dt.float32)


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
        self._autocast_dtypes = {}   # device type -> the dtype autocast casts inputs to
        self._vmap_fn = None
        self._overload = None  # torch.ops.<ns>.<name>.default, once registered
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

    def register_autocast(self, device_type, cast_inputs):
        """Under autocast on `device_type`, run with the float16/bfloat16/float32 tensor
        inputs cast to `cast_inputs`, and autocast off inside."""
        self._autocast_dtypes[_device(device_type).type] = _dt.to_dtype(cast_inputs)

    def register_vmap(self, fn, /):
        """A batching rule `fn(info, in_dims, *args) -> (output, out_dims)`. ember's vmap
        runs the mapped function once per sample, so the op is called unbatched and needs no
        rule; a registered one is kept (as `_vmap_fn`) and must agree with the op."""
        if not callable(fn):
            raise TypeError(f"Expected vmap rule to be a function, got {type(fn)}")
        self._vmap_fn = fn
        return fn

    def _autocast_cast(self, values):
        """The values cast by a registered autocast rule, and that rule's device type."""
        if not self._autocast_dtypes or not _state.autocast.active:
            return values, None
        device_type = next((t.device.type for t in _tensors_in(values)), None)
        target = self._autocast_dtypes.get(device_type)
        if target is None or device_type not in _state.autocast.thread.dtypes:
            return values, None

        def cast(value):
            if isinstance(value, Tensor) and value.dtype in _AUTOCAST_ELIGIBLE:
                return value.to(target)
            if isinstance(value, (list, tuple)):
                return type(value)(cast(v) for v in value)
            return value
        return [cast(v) for v in values], device_type

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

    # The autograd Function sees the positional arguments, each list of tensors spread out
    # (so gradients reach its elements), and last a `_Packed` with the keyword-only ones (no
    # gradient flows to those) and how to gather the lists again. A list output goes through
    # as a tuple. This is what PyTorch's generated Function with tensor-list support does.
    def _forward(self, *args):
        packed = args[-1]
        positional = packed.gather(args[:-1])
        if packed.kept is not None:  # the outputs a selective checkpoint's forward kept
            return self._kept_output(packed)
        output = self._kernel_for(positional)(*positional, **packed.keywords)
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
        packed.list_output = isinstance(output, list)
        return tuple(output) if packed.list_output else output

    def _kept_output(self, packed):
        returns = self._schema[self._schema.rindex(") ->") + 4:].strip()
        if returns.endswith("[]"):
            packed.list_output = True
            return tuple(packed.kept)
        return packed.kept[0] if returns == "Tensor" else tuple(packed.kept)

    def _setup_context(self, ctx, inputs, output):
        packed = ctx._packed = inputs[-1]
        if self._setup_context_fn is None:
            return
        positional = tuple(packed.gather(inputs[:-1]))
        if packed.list_output:
            output = list(output)
        if self._keyword_only:
            self._setup_context_fn(ctx=ctx, inputs=positional,
                                   keyword_only_inputs=packed.keywords, output=output)
        else:
            self._setup_context_fn(ctx=ctx, inputs=positional, output=output)

    def _backward(self, ctx, *grads):
        if self._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {self._namespace}.{self._name}."
                               "default but no autograd formula was registered. Please use "
                               "register_autograd to add one.")
        # a list output's gradients come as one list, as its value went out
        result = (self._backward_fn(ctx, list(grads)) if ctx._packed.list_output
                  else self._backward_fn(ctx, *grads))
        result = result if isinstance(result, tuple) else (result,)
        expected = len(self._arg_names) - len(self._keyword_only)
        if len(result) != expected:
            raise RuntimeError(f"{self._qualname}: expected the backward function to return "
                               f"{expected} gradients (one per positional input, None for "
                               f"those with none), got {len(result)}")
        return (*ctx._packed.spread(result), None)

    def _run(self, values):
        positional, keywords = self._split(values)
        packed = _Packed(positional, keywords)

        def run(kept):
            packed.kept = kept
            output = self._function.apply(*packed.spread(positional), packed)
            return list(output) if packed.list_output else output
        # inside a selective checkpoint the region hears of the call; in its recomputation
        # it may hand back the forward's outputs, and the kernel is not run again (an op
        # that writes into its arguments always runs)
        region = _state.selective_checkpoint.mode if _state.selective_checkpoint_anywhere.count \
            else None
        if region is None or self._mutated or self._overload is None:
            return run(None)
        return region.run_op(self._overload, positional, keywords, run)

    def _counted(self, values):
        """`_run`, told to an open FlopCounterMode as one call of this operator: what its
        kernel computes inside is not counted again (PyTorch's dispatcher does not show a
        mode the ops inside a custom operator's kernel)."""
        counter = _state.flop_counter.active
        if counter is None or self._overload is None:
            return self._run(values)
        _state.flop_counter.active = None
        try:
            output = self._run(values)
        finally:
            _state.flop_counter.active = counter
        positional, keywords = self._split(values)
        counter(self._overload.overloadpacket, positional, keywords, output)
        return output

    def __call__(self, *args, **kwargs):
        values, autocast_device = self._autocast_cast(self._bind(args, dict(kwargs)))
        if autocast_device is None:
            return self._counted(values)
        from ..amp.autocast_mode import autocast
        with autocast(autocast_device, enabled=False):
            return self._counted(values)


class _Packed:
    """Positional arguments with their tensor lists spread out and gathered back, and the
    keyword-only arguments, carried through autograd.Function.apply as one value."""

    def __init__(self, positional, keywords):
        self.keywords = keywords
        # per positional argument: None (one value) or the list's (length, type)
        self.lists = [(len(v), type(v)) if isinstance(v, (list, tuple)) and any(
            isinstance(t, Tensor) for t in v) else None for v in positional]
        self.list_output = False
        self.kept = None  # in a selective checkpoint's recomputation: the kept outputs

    def spread(self, per_argument):
        """One value per positional argument -> one per spread slot (a missing list
        gradient is None for each element)."""
        flat = []
        for value, shape in zip(per_argument, self.lists):
            if shape is None:
                flat.append(value)
            else:
                flat.extend([None] * shape[0] if value is None else value)
        return flat

    def gather(self, flat):
        values, at = [], 0
        for shape in self.lists:
            if shape is None:
                values.append(flat[at])
                at += 1
            else:
                values.append(shape[1](flat[at:at + shape[0]]))
                at += shape[0]
        return values


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


class OpOverload(_aten.OpOverload):
    """`torch.ops.<ns>.<name>.default`: the operator with its one overload's schema."""

    def __init__(self, packet, op):
        super().__init__(packet, "default", op)
        self._op = op
        self._schema = _printed_schema(op)


class OpOverloadPacket(_aten.OpOverloadPacket):
    """`torch.ops.<ns>.<name>`: the operator; `.default` is its overload."""

    def __init__(self, op):
        super().__init__(op._namespace, op._name)
        self._op = op
        self._schema = _printed_schema(op)
        self._overloads["default"] = op._overload = OpOverload(self, op)


def _register(op):
    if op._namespace == "prim":
        raise ValueError("prim is a reserved namespace. Please try creating a library with "
                         "another name.")
    if op._qualname in _OPS:
        raise RuntimeError(f"Tried to register an operator ({op._qualname}) with the same "
                           "name and overload name multiple times.")
    _OPS[op._qualname] = op
    _custom.namespace(op._namespace)._ops[op._name] = OpOverloadPacket(op)
    if op._namespace in dir(ops):  # loaded or not (ember/_lazy.py)
        warnings.warn(f"ember.ops.{op._namespace} is ember's own (an op or op family), so "
                      f"torch.ops.{op._namespace}.{op._name} does not reach this operator: "
                      "call the object custom_op returned, or pick another namespace",
                      stacklevel=3)
    return op


def _unregister(qualname):
    op = _OPS.pop(qualname, None)
    if op is not None:
        _custom.namespace(op._namespace)._ops.pop(op._name, None)


def _lookup(op):
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, (OpOverload, OpOverloadPacket)):
        return op._op
    if isinstance(op, str) and op in _OPS:
        return _OPS[op]
    raise ValueError(f"Expected an operator defined with ember.library (a CustomOpDef, "
                     f"torch.ops.<ns>.<name>, or its 'ns::name'), got {op!r}")


