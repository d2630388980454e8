"""Rprop, with PyTorch's single-tensor update: the step size grows by etaplus where the
gradient kept its sign, shrinks by etaminus where it flipped (and that gradient is then
ignored), clamped to step_sizes;  p -= sign(g) * step_size."""
from .. import dtypes as _dt
from ..ops.creation import full_like, zeros, zeros_like
from .asgd import _no_sparse
from .optimizer import Optimizer, real_views, step_with_hooks

__all__ = ["Rprop", "rprop"]


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    """One Rprop step over lists of parameters and their state, in place."""
    params, grads, prevs, step_sizes = real_views(params, grads, prevs, step_sizes)
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        _no_sparse(g, "Rprop")
        state_steps[i].add_(1)
        prev, step_size = prevs[i], step_sizes[i]
        sign = g.mul(prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        g = g.clone()
        g[sign.eq(etaminus)] = 0
        p.addcmul_(g.sign(), step_size, value=-1)
        prev.copy_(g)


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
            lists = params, grads, prevs, step_sizes, steps = [], [], [], [], []
            for p, g, state in self._stepping(group, negate=False):
                _no_sparse(g, "Rprop")
                if not state:
                    state["step"] = zeros((), dtype=_dt.float32)
                    state["prev"] = zeros_like(p)
                    lr = float(group["lr"])  # a complex one steps its parts alike
                    state["step_size"] = full_like(g, complex(lr, lr) if g.is_complex() else lr)
                for out, value in zip(lists, (p, g, state["prev"], state["step_size"],
                                              state["step"])):
                    out.append(value)
            etaminus, etaplus = group["etas"]
            lo, hi = group["step_sizes"]
            rprop(params, grads, prevs, step_sizes, steps, maximize=group["maximize"],
                  step_size_min=lo, step_size_max=hi, etaminus=etaminus, etaplus=etaplus)
