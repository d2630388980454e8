"""Adam, AdamW and Adamax, with PyTorch's update formulas (its single-tensor path):

    m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
    p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
AdamW first decays p by (1 - lr * weight_decay); Adam adds weight_decay * p to g.
"""
from ..ops.creation import tensor, zeros_like
from ..ops.pointwise import maximum
from .. import dtypes as _dt
from .optimizer import Optimizer, step_with_hooks

__all__ = ["Adam", "AdamW", "Adamax"]


def _check(lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def step_count(state):
    """PyTorch keeps `step` as a float32 scalar tensor; bump it and return its value."""
    if "step" not in state:
        state["step"] = tensor(0.0, dtype=_dt.float32)
    state["step"].add_(1)
    return state["step"].item()


class Adam(Optimizer):
    decoupled = False

    _sparse_error = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay or
                                      self.decoupled))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p, g, state in self._stepping(group):
                if "exp_avg" not in state:
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = zeros_like(p)
                t = step_count(state)
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        g = g.add(p, alpha=wd)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.lerp_(g, 1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                step_size = lr / (1 - beta1 ** t)
                bias2_sqrt = (1 - beta2 ** t) ** 0.5
                if group["amsgrad"]:
                    vmax = state["max_exp_avg_sq"]
                    vmax.copy_(maximum(vmax, v))
                    denom = vmax.sqrt().div_(bias2_sqrt).add_(eps)
                else:
                    denom = v.sqrt().div_(bias2_sqrt).add_(eps)
                p.addcdiv_(m, denom, value=-step_size)


class AdamW(Adam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)


class Adamax(Optimizer):
    """u = max(beta2 u, |g| + eps);  p -= lr / (1 - beta1^t) * m / u."""

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
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p, g, state in self._stepping(group):
                if "exp_avg" not in state:
                    state["exp_avg"] = zeros_like(p)
                    state["exp_inf"] = zeros_like(p)
                t = step_count(state)
                if wd != 0:
                    g = g.add(p, alpha=wd)
                m, u = state["exp_avg"], state["exp_inf"]
                m.lerp_(g, 1 - beta1)
                u.copy_(maximum(u.mul(beta2), g.abs().add_(eps)))
                p.addcdiv_(m, u, value=-lr / (1 - beta1 ** t))
