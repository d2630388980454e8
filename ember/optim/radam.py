"""RAdam, with PyTorch's update formulas, and its functional form `radam`: Adam whose
adaptive step is switched on (and rectified) once the variance of the adaptive learning rate
is tractable (rho_t > 5)."""
import math

from .adam import _check
from .nadam import _decay, _moments
from .optimizer import Optimizer, bump, state_step, real_views, step_with_hooks

__all__ = ["RAdam", "radam"]


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps):
    """One RAdam step over lists of parameters and their state, in place."""
    params, grads, exp_avgs, exp_avg_sqs = real_views(params, grads, exp_avgs, exp_avg_sqs)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        t = bump(state_steps[i])
        g = _decay(p, g, lr, weight_decay, decoupled_weight_decay)
        m, v = exp_avgs[i], exp_avg_sqs[i]
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


class RAdam(Optimizer):
    _sparse_error = "RAdam does not support sparse gradients"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))  # (PyTorch's key order)

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            lists = params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                m, v = _moments(state, p)
                for out, value in zip(lists, (p, g, m, v, state_step(state))):
                    out.append(value)
            beta1, beta2 = group["betas"]
            radam(params, grads, exp_avgs, exp_avg_sqs, steps,
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"], beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], eps=group["eps"])
