"""Adadelta, with PyTorch's update formulas, and its functional form `adadelta`:

    v = rho v + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(v + eps) g;
    u = rho u + (1 - rho) d^2;  p -= lr d
"""
from ..ops.creation import zeros_like
from .optimizer import Optimizer, bump, state_step, real_views, step_with_hooks

__all__ = ["Adadelta", "adadelta"]


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    """One Adadelta step over lists of parameters and their state, in place."""
    params, grads, square_avgs, acc_deltas = real_views(params, grads, square_avgs, acc_deltas)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        bump(state_steps[i])
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        v, u = square_avgs[i], acc_deltas[i]
        v.mul_(rho).addcmul_(g, g, value=1 - rho)
        delta = u.add(eps).sqrt_().div_(v.add(eps).sqrt_()).mul_(g)
        u.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-lr)


class Adadelta(Optimizer):
    _sparse_error = "Adadelta does not support sparse gradients"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("weight_decay value", weight_decay)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            lists = params, grads, square_avgs, acc_deltas, steps = [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                if "square_avg" not in state:
                    state_step(state)
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                for out, value in zip(lists, (p, g, state["square_avg"], state["acc_delta"],
                                              state_step(state))):
                    out.append(value)
            adadelta(params, grads, square_avgs, acc_deltas, steps, lr=group["lr"],
                     rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                     maximize=group["maximize"])
