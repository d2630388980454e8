"""Adamax (Adam with the infinity norm), and its functional form `adamax`:

    m = beta1 m + (1 - beta1) g;  u = max(beta2 u, |g| + eps);  p -= lr / (1 - beta1^t) * m / u
"""
from ..ops.creation import zeros_like
from ..ops.pointwise import maximum
from .adam import _check
from .optimizer import Optimizer, bump, state_step, real_views, step_with_hooks

__all__ = ["Adamax", "adamax"]


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2, lr,
           weight_decay):
    """One Adamax step over lists of parameters and their state, in place."""
    params, grads, exp_avgs, exp_infs = real_views(params, grads, exp_avgs, exp_infs)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        t = bump(state_steps[i])
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        m, u = exp_avgs[i], exp_infs[i]
        m.lerp_(g, 1 - beta1)
        u.copy_(maximum(u.mul(beta2), g.abs().add_(eps)))
        p.addcdiv_(m, u, value=-lr / (1 - beta1 ** t))


class Adamax(Optimizer):
    _sparse_error = "Adamax does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            lists = params, grads, exp_avgs, exp_infs, steps = [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                if "exp_avg" not in state:
                    state_step(state)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_inf"] = zeros_like(p)
                for out, value in zip(lists, (p, g, state["exp_avg"], state["exp_inf"],
                                              state_step(state))):
                    out.append(value)
            beta1, beta2 = group["betas"]
            adamax(params, grads, exp_avgs, exp_infs, steps, maximize=group["maximize"],
                   eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"])
