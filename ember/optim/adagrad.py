"""Adagrad, with PyTorch's update formulas (sparse gradients included), and its functional
form `adagrad`:

    clr = lr / (1 + (t - 1) lr_decay);  s += g^2;  p -= clr g / (sqrt(s) + eps)
"""
from .. import dtypes as _dt
from ..ops.creation import full_like, tensor
from .optimizer import Optimizer, bump, real_views, step_with_hooks

__all__ = ["Adagrad", "adagrad"]


def _sparse_adagrad(p, g, s, clr, eps):
    """Adagrad on the rows a sparse gradient touches (coalesced first: the update is not
    linear in g, so each row's gradient must be whole)."""
    from .._sparse import make_sparse
    g = g.coalesce()
    ind, vals = g._indices(), g._values()
    s.add_(make_sparse(ind, vals.pow(2), g.shape, True))
    std = s.sparse_mask(g)._values().sqrt().add_(eps)
    p.add_(make_sparse(ind, vals / std, g.shape, True), alpha=-clr)


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    """One Adagrad step over lists of parameters and their state, in place."""
    params, grads, state_sums = real_views(params, grads, state_sums)
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("`grad_scale` and `found_inf` are only used by the fused kernels")
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        t = bump(state_steps[i])
        if weight_decay != 0:
            if g.is_sparse:
                raise RuntimeError("weight_decay option is not compatible with sparse "
                                   "gradients")
            g = g.add(p, alpha=weight_decay)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = state_sums[i]
        if g.is_sparse:
            _sparse_adagrad(p, g, s, clr, eps)
            continue
        s.addcmul_(g, g, value=1)
        p.addcdiv_(g, s.sqrt().add_(eps), value=-clr)


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value),
                            ("epsilon value", eps)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:  # PyTorch creates Adagrad's state eagerly
            for p in group["params"]:
                self.state[p]["step"] = tensor(0.0, dtype=_dt.float32)
                self.state[p]["sum"] = full_like(p, initial_accumulator_value)

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            params, grads, sums, steps = [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                params.append(p)
                grads.append(g)
                sums.append(state["sum"])
                steps.append(state["step"])
            adagrad(params, grads, sums, steps, has_sparse_grad=any(g.is_sparse for g in grads),
                    lr=group["lr"], weight_decay=group["weight_decay"],
                    lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
