"""`ember.autograd.Function`: user-defined ops on the same mechanism as the built-in ones.

A Function subclass gets a node class `<Name>Backward`; the `ctx` its forward receives is
that node, so `save_for_backward`, `saved_tensors` and the version checks are the built-in
ones. Forward runs on Tensors with grad mode off; backward on Tensors, so a backward written
with ember ops differentiates again.
"""
import functools

from .._state import forward_ad as _fw, grad as _grad
from .._autograd_meta import forward_grad, set_tangent
from .._tensor import Tensor, make_tensor
from ..ops._dual import input_tangents
from ..ops._graph import Node, _save, edge

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction", "FunctionMeta",
           "InplaceFunction", "NestedIOFunction"]


class BackwardCFunction(Node):
    """The node (and ctx) of a user Function application."""

    _materialize_grads = True
    _builtin = False

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is "
                                f"of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)

    def __repr__(self):
        # PyTorch makes this class in Python, in torch.autograd.function
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    @property
    def needs_input_grad(self):
        return self._needs_input_grad

    def backward(self, *grads):
        results = self._forward_cls.backward(self, *grads)
        if not isinstance(results, tuple):
            results = (results,)
        n_args = len(self._arg_is_tensor)
        # more gradients than inputs only as trailing Nones
        if len(results) < n_args or any(g is not None for g in results[n_args:]):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n_args}, got {len(results)})")
        for g in results:
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return tuple(g for g, is_t in zip(results, self._arg_is_tensor) if is_t)


FunctionCtx = BackwardCFunction


class FunctionMeta(type):
    """The metaclass of Function: each subclass gets its node class `<Name>Backward`."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=FunctionMeta):
    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):  # the pre-1.3 style: instance(x)
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """The outputs' tangents from the inputs' (forward AD); tensors the forward passed
        to ctx.save_for_forward are ctx.saved_tensors here."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        ctx._to_save = ()
        ctx._dirty = ctx._non_differentiable = ()
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx._arg_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        ctx._needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        separate_setup = cls.setup_context is not Function.setup_context
        prev = _grad.enabled
        _grad.enabled = False
        try:
            if separate_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _grad.enabled = prev
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        tracked = prev and any(t._requires_grad for t in tensors)
        if not tracked:
            _set_tangents(outputs, _forward_tangents(cls, ctx, args, tensors, outputs))
            return output
        ctx._next = tuple(edge(t) for t in tensors)
        ctx._meta = tuple((t._array.shape, t._array.dtype) for t in tensors)
        results = []
        dirty = {id(t) for t in ctx._dirty}
        non_diff = {id(t) for t in ctx._non_differentiable}
        for i, out in enumerate(outputs):
            if not isinstance(out, Tensor):
                results.append(out)
                continue
            if id(out) in dirty:
                out._vc.value += 1
            elif any(out is t for t in tensors):
                out = make_tensor(out._array, out._device)  # an input returned as-is: an alias
            elif out._grad_fn is not None:
                out = out.detach()
            if id(outputs[i]) not in non_diff and (out.dtype.is_floating_point or out.dtype.is_complex):
                out._requires_grad, out._grad_fn, out._output_nr = True, ctx, i
            results.append(out)
        ctx._out_meta = tuple((o._array.shape, o.dtype, o._device) if isinstance(o, Tensor)
                              else ((), None, None) for o in results)
        originals = {id(o): r for o, r in zip(outputs, results)}
        ctx._saved = tuple(None if t is None else _save(ctx, originals.get(id(t), t))
                           for t in ctx._to_save)
        ctx._to_save = ()
        # as PyTorch's, jvp runs once the outputs are in the graph: a tangent made from an
        # output the forward kept on ctx is differentiable through this node
        _set_tangents(results, _forward_tangents(cls, ctx, args, tensors, outputs))
        return tuple(results) if is_tuple else results[0]


def _forward_tangents(cls, ctx, args, tensors, outputs):
    """Forward AD through a custom Function: its `jvp` maps the inputs' tangents (None for
    an argument without one) to one tangent per output; None when no input has one."""
    if _fw.level is None or input_tangents(tensors) is None:
        return None
    arg_tangents = [forward_grad(a) if isinstance(a, Tensor) else None for a in args]
    saved_backward = ctx._saved
    ctx._saved = tuple(None if t is None else _save(ctx, t)
                       for t in getattr(ctx, "_to_save_forward", ()))
    level, _fw.level = _fw.level, None  # the jvp's own ops carry no tangents
    try:
        result = cls.jvp(ctx, *arg_tangents)
    finally:
        _fw.level = level
        ctx._saved = saved_backward
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outputs):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outputs)} but got {len(result)})")
    return result


def _set_tangents(outputs, tangents):
    if tangents is None:
        return
    for out, tangent in zip(outputs, tangents):
        if not isinstance(out, Tensor) or tangent is None:
            continue
        if tangent.shape != out.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is "
                               f"of size {list(out.shape)} while the given forward gradient is "
                               f"of size {list(tangent.shape)}.")
        set_tangent(out, tangent)


def once_differentiable(fn):
    """Run a backward without building a graph of it (it cannot be differentiated again)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _grad.enabled
        _grad.enabled = False
        try:
            return fn(ctx, *args)
        finally:
            _grad.enabled = prev
    return wrapper


class InplaceFunction(Function):
    """A Function that may be asked to work in place (`inplace`), for legacy code."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def _iter_tensors(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_tensors(item)


def _iter_none_tensors(obj):
    if obj is None or isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_none_tensors(item)


def _unflatten(flat, structure):
    """`flat` (tensors or None, in order) put back into the nesting of `structure`."""
    flat = iter(flat)

    def rebuild(node):
        if node is None or isinstance(node, Tensor):
            return next(flat)
        if isinstance(node, (list, tuple)):
            return type(node)(rebuild(item) for item in node)
        return node
    return rebuild(structure)


class NestedIOFunction(Function):
    """The legacy instance-style Function over nested inputs and outputs: subclasses define
    `forward_extended(*inputs)` and `backward_extended(*grad_outputs)` as methods, where
    inputs, outputs and gradients may be nested lists/tuples of tensors, and call the
    instance: `fn(x, (y, z))`. (PyTorch 2.x still lists it but its calling path is gone;
    here it runs, on the one Function mechanism.)"""

    def __call__(self, *input):
        self._nested_input = input
        cls = type(self)
        runner = cls.__dict__.get("_nested_runner")
        if runner is None:  # named after the subclass, so its node is `<Name>Backward`
            runner = type(cls.__name__, (_NestedApply,), {})
            cls._nested_runner = runner
        flat_output = runner.apply(self, *_iter_tensors(input))
        return _unflatten(flat_output if isinstance(flat_output, tuple) else (flat_output,),
                          self._nested_output)

    def forward(self, *args):
        nested = _unflatten([t.detach() for t in _iter_tensors(self._nested_input)],
                            self._nested_input)
        result = self.forward_extended(*nested)
        del self._nested_input
        self._nested_output = result
        return tuple(_iter_tensors(result))

    def backward(self, *gradients):
        nested = _unflatten(gradients, self._nested_output)
        return tuple(_iter_none_tensors(self.backward_extended(*nested)))

    def save_for_backward(self, *args):
        self.to_save = tuple(_iter_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return _unflatten(self._ctx.saved_tensors, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_iter_tensors((args, kwargs)))

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError


class _NestedApply(Function):
    """Runs a NestedIOFunction instance `fn` on its flattened tensors."""

    @staticmethod
    def forward(ctx, fn, *flat):
        ctx.fn = fn
        fn._ctx = ctx
        outputs = fn.forward(*flat)
        ctx.save_for_backward(*getattr(fn, "to_save", ()))
        ctx.mark_dirty(*getattr(fn, "dirty_tensors", ()))
        ctx.mark_non_differentiable(*getattr(fn, "non_differentiable", ()))
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + ctx.fn.backward(*grads)
