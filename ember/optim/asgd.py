"""ASGD (averaged SGD), with PyTorch's single-tensor update formulas:

    p *= 1 - lambd eta;  p -= eta g;  ax += mu (p - ax)  (ax = p while mu is 1);
    eta = lr / (1 + lambd lr t)^alpha;  mu = 1 / max(1, t - t0).
"""
from .. import dtypes as _dt
from ..ops.creation import ones, tensor, zeros, zeros_like
from .optimizer import Optimizer, real_views, step_with_hooks

__all__ = ["ASGD", "asgd"]


def _no_sparse(g, name):
    if g.is_sparse:
        raise RuntimeError(f"{name} does not support sparse gradients")


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay):
    """One ASGD step over lists of parameters and their state, in place."""
    params, grads, axs = real_views(params, grads, axs)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        _no_sparse(g, "ASGD")
        step_t, eta, mu, ax = state_steps[i], etas[i], mus[i], axs[i]
        step_t.add_(1)
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        eta_value = eta.item()
        p.mul_(1 - lambd * eta_value)
        p.add_(g, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        t = step_t.item()
        eta.copy_(tensor(lr / ((1 + lambd * lr * t) ** alpha)))
        mu.copy_(tensor(1 / max(1, t - t0)))


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            lists = params, grads, axs, mus, etas, steps = [], [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                _no_sparse(g, "ASGD")
                if not state:
                    state["step"] = zeros((), dtype=_dt.float32, device=p.device)
                    state["eta"] = tensor(float(group["lr"]), dtype=_dt.float32,
                                          device=p.device)
                    state["mu"] = ones((), dtype=_dt.float32, device=p.device)
                    state["ax"] = zeros_like(p)
                for out, value in zip(lists, (p, g, state["ax"], state["mu"], state["eta"],
                                              state["step"])):
                    out.append(value)
            asgd(params, grads, axs, mus, etas, steps, maximize=group["maximize"],
                 lambd=group["lambd"], lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                 weight_decay=group["weight_decay"])
