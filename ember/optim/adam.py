"""Adam, with PyTorch's update formulas (its single-tensor path), and its functional form `adam`:

    m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
    p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
Decoupled weight decay (AdamW) first shrinks p by (1 - lr * weight_decay); otherwise
weight_decay * p is added to g.
"""
from ..ops.creation import zeros_like
from ..ops.pointwise import maximum
from . import _foreach
from .optimizer import Optimizer, bump, state_step, real_views, step_with_hooks

__all__ = ["Adam", "adam"]


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


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    """One Adam step over lists of parameters and their state, in place (the update of
    `Adam.step`). Unless `foreach=False` or `differentiable`, the foreach form (_foreach.py)
    runs it on arrays, with the same results."""
    if any(p.is_complex() for p in params):  # as real views, by the per-parameter loop
        foreach = False
    params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs = real_views(
        params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs)
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("`grad_scale` and `found_inf` are only used by the fused kernels")
    if _foreach.usable(foreach, fused, differentiable, (lr, beta1, beta2, weight_decay, eps),
                       params, grads, exp_avgs, exp_avg_sqs,
                       max_exp_avg_sqs if amsgrad else [None] * len(params)):
        return _foreach.adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                             amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr,
                             weight_decay=weight_decay, eps=eps, maximize=maximize,
                             decoupled_weight_decay=decoupled_weight_decay)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        t = bump(state_steps[i])
        if weight_decay != 0:
            if decoupled_weight_decay:
                p.mul_(1 - lr * weight_decay)
            else:
                g = g.add(p, alpha=weight_decay)
        m, v = exp_avgs[i], exp_avg_sqs[i]
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        step_size = lr / (1 - beta1 ** t)
        bias2_sqrt = (1 - beta2 ** t) ** 0.5
        if amsgrad:
            vmax = max_exp_avg_sqs[i]
            vmax.copy_(maximum(vmax, v))
            denom = vmax.sqrt().div_(bias2_sqrt).add_(eps)
        else:
            denom = v.sqrt().div_(bias2_sqrt).add_(eps)
        p.addcdiv_(m, denom, value=-step_size)


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
            lists = params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = \
                [], [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                if "exp_avg" not in state:
                    state_step(state)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = zeros_like(p)
                for out, value in zip(lists, (p, g, state["exp_avg"], state["exp_avg_sq"],
                                              state.get("max_exp_avg_sq"), state_step(state))):
                    out.append(value)
            beta1, beta2 = group["betas"]
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                 foreach=group.get("foreach"), fused=group.get("fused"),
                 differentiable=group.get("differentiable", False),
                 decoupled_weight_decay=group["decoupled_weight_decay"],
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"])
