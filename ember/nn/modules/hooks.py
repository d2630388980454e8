"""Module backward hooks (`register_full_backward_hook`), built from identity Functions
around a module's inputs and outputs: the output one sees grad_output, the input one
grad_input, and then calls the hooks with both."""
from ...autograd.function import Function
from ..._tensor import Tensor


class _Identity(Function):
    """Passes tensors through; its backward hands the gradients to a callback."""

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        new = ctx.callback(grads)
        return (None,) + tuple(new)


def _wrap(structure, callback):
    """Route the tensors that require grad in `structure` (a tensor or tuple/list) through
    an _Identity; return the structure rebuilt with the routed tensors."""
    single = isinstance(structure, Tensor)
    items = (structure,) if single else structure
    if not isinstance(items, (tuple, list)):
        return structure, 0
    positions = [i for i, x in enumerate(items) if isinstance(x, Tensor) and x.requires_grad]
    if not positions:
        return structure, 0
    routed = _Identity.apply(callback, *[items[i] for i in positions])
    out = list(items)
    for i, t in zip(positions, routed):
        out[i] = t
    if single:
        return out[0], len(positions)
    return type(items)(out) if isinstance(items, tuple) else out, len(positions)


class BackwardHook:
    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_positions = ()

    def setup_input_hook(self, args):
        self.n_args = len(args)
        self.input_positions = [i for i, a in enumerate(args)
                                if isinstance(a, Tensor) and a.requires_grad]
        wrapped, self.n_inputs = _wrap(tuple(args), self._on_input_grads)
        return wrapped

    def setup_output_hook(self, result):
        wrapped, _ = _wrap(result, self._on_output_grads)
        return wrapped

    def _on_output_grads(self, grads):
        for hook in self.pre_hooks:
            new = hook(self.module, grads)
            if new is not None:
                grads = tuple(new)
        self.grad_outputs = grads
        if self.n_inputs == 0:  # no input requires grad: hooks see grad_input of Nones
            for hook in self.hooks:
                hook(self.module, (None,) * max(len(self.input_positions), 1), grads)
        return grads

    def _on_input_grads(self, grads):
        full = [None] * self.n_args
        for pos, g in zip(self.input_positions, grads):
            full[pos] = g
        full = tuple(full)
        for hook in self.hooks:
            new = hook(self.module, full, self.grad_outputs)
            if new is not None:
                full = tuple(new)
        return tuple(full[pos] for pos in self.input_positions)
