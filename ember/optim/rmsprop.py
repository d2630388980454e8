"""RMSprop, with PyTorch's update formulas, and its functional form `rmsprop`:

    v = alpha v + (1 - alpha) g^2;  centered: subtract the mean gradient's square;
    momentum: b = momentum b + g / (sqrt(v) + eps), p -= lr b; else p -= lr g / (sqrt(v) + eps)
"""
from ..ops.creation import zeros_like
from . import _foreach
from .optimizer import Optimizer, bump, state_step, real_views, step_with_hooks

__all__ = ["RMSprop", "rmsprop"]


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    """One RMSprop step over lists of parameters and their state, in place. Unless
    `foreach=False` or `differentiable`, the foreach form (_foreach.py) runs it on arrays."""
    if any(p.is_complex() for p in params):  # as real views, by the per-parameter loop
        foreach = False
    params, grads, square_avgs, grad_avgs, momentum_buffer_list = real_views(
        params, grads, square_avgs, grad_avgs, momentum_buffer_list)
    n = len(params)
    if _foreach.usable(foreach, None, differentiable, (lr, alpha, eps, weight_decay, momentum),
                       params, grads, square_avgs, grad_avgs if centered else [None] * n,
                       momentum_buffer_list if momentum > 0 else [None] * n):
        return _foreach.rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list,
                                state_steps, lr=lr, alpha=alpha, eps=eps,
                                weight_decay=weight_decay, momentum=momentum, centered=centered,
                                maximize=maximize)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        bump(state_steps[i])
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        v = square_avgs[i]
        v.mul_(alpha).addcmul_(g, g, value=1 - alpha)
        if centered:
            ga = grad_avgs[i]
            ga.lerp_(g, 1 - alpha)
            avg = v.addcmul(ga, ga, value=-1).sqrt_().add_(eps)
        else:
            avg = v.sqrt().add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(g, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(g, avg, value=-lr)


class RMSprop(Optimizer):
    _sparse_error = "RMSprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            momentum = group["momentum"]
            lists = params, grads, square_avgs, grad_avgs, buffers, steps = \
                [], [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                if "square_avg" not in state:
                    state_step(state)
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = zeros_like(p)
                for out, value in zip(lists, (p, g, state["square_avg"], state.get("grad_avg"),
                                              state.get("momentum_buffer"),
                                              state_step(state))):
                    out.append(value)
            rmsprop(params, grads, square_avgs, grad_avgs, buffers, steps,
                    foreach=group.get("foreach"),
                    differentiable=group.get("differentiable", False),
                    maximize=group["maximize"], lr=group["lr"], alpha=group["alpha"],
                    eps=group["eps"], weight_decay=group["weight_decay"], momentum=momentum,
                    centered=group["centered"])
