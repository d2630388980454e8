"""NAdam and RAdam, with PyTorch's update formulas."""
import math

from .. import dtypes as _dt
from ..ops.creation import tensor, zeros_like
from .adam import _check, step_count
from .optimizer import Optimizer, step_with_hooks

__all__ = ["NAdam", "RAdam"]


def _decay(p, g, group):
    """Weight decay: decoupled (shrink p) or L2 (add to the gradient)."""
    wd = group["weight_decay"]
    if wd == 0:
        return g
    if group["decoupled_weight_decay"]:
        p.mul_(1 - group["lr"] * wd)
        return g
    return g.add(p, alpha=wd)


def _moments(state, p):
    if "exp_avg" not in state:
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)
    return state["exp_avg"], state["exp_avg_sq"]


class NAdam(Optimizer):
    """Adam with Nesterov momentum, its momentum warmed up by mu_t = beta1 (1 - 0.5 * 0.96^(t psi))."""

    _sparse_error = "NAdam does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, psi = group["lr"], group["eps"], group["momentum_decay"]
            for p, g, state in self._stepping(group):
                m, v = _moments(state, p)
                if "mu_product" not in state:
                    state["mu_product"] = tensor(1.0, dtype=_dt.float32)
                t = step_count(state)
                g = _decay(p, g, group)
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
                state["mu_product"].mul_(mu)
                mu_product = state["mu_product"].item()
                m.lerp_(g, 1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                denom = v.div(1 - beta2 ** t).sqrt().add_(eps)
                p.addcdiv_(g, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                p.addcdiv_(m, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))


class RAdam(Optimizer):
    """Adam whose adaptive step is switched on (and rectified) once the variance of the
    adaptive learning rate is tractable (rho_t > 5)."""

    _sparse_error = "RAdam does not support sparse gradients"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps = group["lr"], group["eps"]
            for p, g, state in self._stepping(group):
                m, v = _moments(state, p)
                t = step_count(state)
                g = _decay(p, g, group)
                m.lerp_(g, 1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                bias1, bias2 = 1 - beta1 ** t, 1 - beta2 ** t
                m_hat = m / bias1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * t * (beta2 ** t) / bias2
                if rho_t > 5.0:
                    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                     ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                    adaptive = math.sqrt(bias2) / v.sqrt().add_(eps)
                    p.add_(m_hat * lr * adaptive * rect, alpha=-1.0)
                else:
                    p.add_(m_hat * lr, alpha=-1.0)
