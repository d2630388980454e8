"""ASGD (averaged SGD), with PyTorch's single-tensor update formulas:

    p *= 1 - lambd eta;  p -= eta g;  ax += mu (p - ax)  (ax = p while mu is 1);
    eta = lr / (1 + lambd lr t)^alpha;  mu = 1 / max(1, t - t0).
"""
from .. import dtypes as _dt
from ..ops.creation import ones, tensor, zeros, zeros_like
from .optimizer import Optimizer, step_with_hooks

__all__ = ["ASGD"]


def _no_sparse(g, name):
    if g.is_sparse:
        raise RuntimeError(f"{name} does not support sparse gradients")


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
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            wd = group["weight_decay"]
            for p, g, state in self._stepping(group):
                _no_sparse(g, "ASGD")
                if not state:
                    state["step"] = zeros((), dtype=_dt.float32, device=p.device)
                    state["eta"] = tensor(float(lr), dtype=_dt.float32, device=p.device)
                    state["mu"] = ones((), dtype=_dt.float32, device=p.device)
                    state["ax"] = zeros_like(p)
                step_t, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
                step_t.add_(1)
                if wd != 0:
                    g = g.add(p, alpha=wd)
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
