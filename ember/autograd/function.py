"""`ember.autograd.Function`: user-defined ops on the same mechanism as the built-in ones.

A Function subclass gets a node class `<Name>Backward`; the `ctx` its forward receives is
that node, so `save_for_backward`, `saved_tensors` and the version checks are the built-in
ones. Forward runs on Tensors with grad mode off; backward on Tensors, so a backward written
with ember ops differentiates again.
"""
import functools

from .._state import grad as _grad
from .._tensor import Tensor, make_tensor
from ..ops._graph import Node, _save, edge

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]


class BackwardCFunction(Node):
    """The node (and ctx) of a user Function application."""

    _materialize_grads = True
    _builtin = False

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)

    @property
    def needs_input_grad(self):
        return self._needs_input_grad

    def backward(self, *grads):
        results = self._forward_cls.backward(self, *grads)
        if not isinstance(results, tuple):
            results = (results,)
        n_args = len(self._arg_is_tensor)
        if len(results) < n_args:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n_args}, got {len(results)})")
        return tuple(g for g, is_t in zip(results, self._arg_is_tensor) if is_t)


FunctionCtx = BackwardCFunction


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=_FunctionMeta):
    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself.",
                      DeprecationWarning, stacklevel=2)

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
        return tuple(results) if is_tuple else results[0]


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
