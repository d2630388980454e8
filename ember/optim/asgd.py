"""ASGD (averaged SGD) and Rprop, with PyTorch's single-tensor update formulas.

ASGD:  p *= 1 - lambd eta;  p -= eta g;  ax += mu (p - ax)  (ax = p while mu is 1);
       eta = lr / (1 + lambd lr t)^alpha;  mu = 1 / max(1, t - t0).
Rprop: the step size grows by etaplus where the gradient kept its sign, shrinks by etaminus
       where it flipped (and that gradient is then ignored), clamped to step_sizes;
       p -= sign(g) * step_size.
"""
from .. import dtypes as _dt
from ..ops.creation import full_like, ones, tensor, zeros, zeros_like
from .optimizer import Optimizer, step_with_hooks

__all__ = ["ASGD", "Rprop"]


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


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            lo, hi = group["step_sizes"]
            for p, g, state in self._stepping(group):
                _no_sparse(g, "Rprop")
                if not state:
                    state["step"] = zeros((), dtype=_dt.float32)
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(g, float(group["lr"]))
                state["step"].add_(1)
                prev, step_size = state["prev"], state["step_size"]
                sign = g.mul(prev).sign()
                sign[sign.gt(0)] = etaplus
                sign[sign.lt(0)] = etaminus
                sign[sign.eq(0)] = 1
                step_size.mul_(sign).clamp_(lo, hi)
                g = g.clone()
                g[sign.eq(etaminus)] = 0
                p.addcmul_(g.sign(), step_size, value=-1)
                prev.copy_(g)
