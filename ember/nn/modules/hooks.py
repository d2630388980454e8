"""The global module hooks (`register_module_forward_hook` ...: PyTorch defines them in
module.py, which re-exports them from here), and module backward hooks
(`register_full_backward_hook`, `register_full_backward_pre_hook`),
built from identity Functions around a module's inputs and outputs: the output one sees
grad_output (pre hooks may replace it), the input one grad_input, and then calls the hooks
with both. The tuples have one place per argument / output, as PyTorch's: None for a
non-tensor or an output that got no gradient, zeros for a tensor input that needs none."""
import warnings
from collections import OrderedDict

from ...autograd.function import Function
from ..._tensor import Tensor
from ...utils import hooks as _utils_hooks
from ...utils.hooks import RemovableHandle


class _Identity(Function):
    """Passes tensors through; its backward hands the gradients to a callback. With
    `raw`, the callback sees None for an output that got no gradient (PyTorch's output hook
    runs before gradients are materialised)."""

    @staticmethod
    def forward(ctx, callback, raw, *tensors):
        ctx.callback = callback
        if raw:
            ctx.set_materialize_grads(False)
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + tuple(ctx.callback(grads))


def _items(structure):
    if isinstance(structure, Tensor):
        return (structure,)
    return tuple(structure) if isinstance(structure, (tuple, list)) else ()


def _routed(x):
    return isinstance(x, Tensor) and x.requires_grad


def _wrap(structure, callback, raw=False):
    """Route the tensors that require grad in `structure` (a tensor or tuple/list) through
    an _Identity; return the structure rebuilt with the routed tensors."""
    items = _items(structure)
    positions = [i for i, x in enumerate(items) if _routed(x)]
    if not positions:
        return structure
    routed = _Identity.apply(callback, raw, *[items[i] for i in positions])
    out = list(items)
    for i, t in zip(positions, routed):
        out[i] = t
    if isinstance(structure, Tensor):
        return out[0]
    return type(structure)(out) if isinstance(structure, tuple) else out


def _check_count(new, expected, what):
    if len(new) != expected:
        raise RuntimeError(f"Backward {what} returned an invalid number of "
                           f"{'grad_input' if what == 'hook' else 'grad_output'}, got "
                           f"{len(new)}, but expected {expected}")


class BackwardHook:
    """Runs a module's full backward hooks (`user_hooks`) and pre hooks (`user_pre_hooks`):
    `setup_input_hook(args)` and `setup_output_hook(result)` route the tensors through
    identity Functions whose backward sees grad_input and grad_output."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        hooks, pre_hooks = user_hooks, user_pre_hooks
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.args = ()
        self.any_input = False

    def setup_input_hook(self, args):
        self.args = tuple(args)
        self.any_input = any(_routed(a) for a in self.args)
        return _wrap(self.args, self._on_input_grads)

    def setup_output_hook(self, result):
        self.outputs = _items(result)
        return _wrap(result, self._on_output_grads, raw=True)

    def _on_output_grads(self, grads):
        """grads: one per output that requires grad, None where none arrived."""
        positions = [i for i, x in enumerate(self.outputs) if _routed(x)]
        full = [None] * len(self.outputs)
        for pos, g in zip(positions, grads):
            full[pos] = g
        full = tuple(full)
        for hook in self.pre_hooks:
            new = hook(self.module, full)
            if new is not None:
                new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
                _check_count(new, len(full), "pre hook")
                full = new
        self.grad_outputs = full
        if not self.any_input and self.hooks:
            warnings.warn("Full backward hook is firing when gradients are computed with respect "
                          "to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          UserWarning, stacklevel=2)
            for hook in self.hooks:
                hook(self.module, (None,) * len(self.args), full)
        # what flows on is materialised, as PyTorch's engine does after the output hook, so
        # the input hook fires even when the gradient reached only some outputs
        return tuple(full[pos] if full[pos] is not None else _zeros(self.outputs[pos])
                     for pos in positions)

    def _on_input_grads(self, grads):
        routed = iter(grads)
        full = tuple(next(routed) if _routed(a) else _zeros(a) if isinstance(a, Tensor) else None
                     for a in self.args)
        for hook in self.hooks:
            new = hook(self.module, full, self.grad_outputs)
            if new is not None:
                new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
                _check_count(new, len(full), "hook")
                full = new
        return tuple(g for g, a in zip(full, self.args) if _routed(a))


# torch.utils.hooks.BackwardHook is this class. ember.utils.hooks is on the ground floor and
# cannot import it (it is built on autograd.Function), so the class is handed to it here,
# as the ops package binds methods onto Tensor.
_utils_hooks.BackwardHook = BackwardHook


def _zeros(t):
    from ...ops.creation import zeros_like
    return zeros_like(t)


# Hooks every module runs, registered by the functions below (PyTorch's global module hooks):
# forward ones around every call, backward ones as if each module had them, registration
# ones whenever a buffer, parameter or submodule is assigned (they may replace it).
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = {}
_global_forward_hooks_always_called = {}
_global_forward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()


def _register_global(hooks, hook):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """`hook(module, name, buffer)` runs on every buffer registration; a non-None result
    replaces the buffer."""
    return _register_global(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """`hook(module, name, submodule)` runs on every submodule registration; a non-None result
    replaces the submodule."""
    return _register_global(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """`hook(module, name, param)` runs on every parameter registration; a non-None result
    replaces the parameter."""
    return _register_global(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """`hook(module, args)` runs before every module's forward (before its own pre-hooks)."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """`hook(module, args, output)` (or `hook(module, args, kwargs, output)` with
    `with_kwargs`) runs after every module's forward, before its own forward hooks."""
    handle = RemovableHandle(_global_forward_hooks, extra_dict=[
        _global_forward_hooks_with_kwargs, _global_forward_hooks_always_called])
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """`hook(module, grad_output)` runs for every module when its output gradients arrive."""
    return _register_global(_global_backward_pre_hooks, hook)


def _run_registration_hooks(hooks, module, name, value):
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value
