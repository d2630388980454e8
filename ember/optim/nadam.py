"""NAdam (Adam with Nesterov momentum), with PyTorch's update formulas, and its functional
form `nadam`. The momentum is warmed up by mu_t = beta1 (1 - 0.5 * 0.96^(t psi))."""
from .. import dtypes as _dt
from ..ops.creation import tensor, zeros_like
from .adam import _check
from .optimizer import Optimizer, bump, state_step, real_views, step_with_hooks

__all__ = ["NAdam", "nadam"]


def _decay(p, g, lr, weight_decay, decoupled):
    """Weight decay: decoupled (shrink p) or L2 (add to the gradient)."""
    if weight_decay == 0:
        return g
    if decoupled:
        p.mul_(1 - lr * weight_decay)
        return g
    return g.add(p, alpha=weight_decay)


def _moments(state, p):
    if "exp_avg" not in state:
        state_step(state)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)
    return state["exp_avg"], state["exp_avg_sq"]


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay,
          eps):
    """One NAdam step over lists of parameters and their state, in place."""
    params, grads, exp_avgs, exp_avg_sqs = real_views(params, grads, exp_avgs, exp_avg_sqs)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        t = bump(state_steps[i])
        g = _decay(p, g, lr, weight_decay, decoupled_weight_decay)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_products[i].mul_(mu)
        mu_product = mu_products[i].item()
        m, v = exp_avgs[i], exp_avg_sqs[i]
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = v.div(1 - beta2 ** t).sqrt().add_(eps)
        p.addcdiv_(g, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
        p.addcdiv_(m, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))


class NAdam(Optimizer):
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
            lists = params, grads, exp_avgs, exp_avg_sqs, mu_products, steps = \
                [], [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                if "mu_product" not in state:
                    state_step(state)
                    state["mu_product"] = tensor(1.0, dtype=_dt.float32)
                m, v = _moments(state, p)
                for out, value in zip(lists, (p, g, m, v, state["mu_product"],
                                              state_step(state))):
                    out.append(value)
            beta1, beta2 = group["betas"]
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps,
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"], beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                  eps=group["eps"])
