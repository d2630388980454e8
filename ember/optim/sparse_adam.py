"""SparseAdam: Adam for sparse gradients (`nn.Embedding(..., sparse=True)`), as PyTorch's.

Only the rows the coalesced gradient touches move: for those rows
    m += (1 - beta1) (g - m);  v += (1 - beta2) (g^2 - v)
    p -= lr sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps)
while every other row of p, m and v is left as it is.
"""
import math

from .._sparse import make_sparse
from ..ops.creation import zeros_like
from .optimizer import Optimizer, step_with_hooks

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_at = [[g, i] for g, group in enumerate(self.param_groups)
                      for i, p in enumerate(group["params"]) if p.is_complex()]
        if complex_at:
            raise ValueError(f"Complex params at indices {complex_at}: SparseAdam does not "
                             "support complex parameters")

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            grads = []
            for p in group["params"]:
                if p.grad is not None:
                    if not p.grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, please "
                                           "consider Adam instead")
                    grads.append((p, p.grad))
            beta1, beta2 = group["betas"]
            for p, grad in grads:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                if group["maximize"]:
                    grad = -grad
                _update(p, grad, state, group["lr"], beta1, beta2, group["eps"])


def _update(p, grad, state, lr, beta1, beta2, eps):
    grad = grad.coalesce()  # the update is not linear in g: each row's gradient whole
    ind, values = grad._indices(), grad._values()
    if values.numel() == 0:
        return
    shape = grad.shape

    def rows(v):
        return make_sparse(ind, v, shape, True)

    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    old_m = exp_avg.sparse_mask(grad)._values()
    m_update = values.sub(old_m).mul_(1 - beta1)
    exp_avg.add_(rows(m_update))
    old_v = exp_avg_sq.sparse_mask(grad)._values()
    v_update = values.pow(2).sub_(old_v).mul_(1 - beta2)
    exp_avg_sq.add_(rows(v_update))
    numer = m_update.add_(old_m)
    denom = v_update.add_(old_v).sqrt_().add_(eps)
    step = state["step"]
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    p.add_(rows(numer.div_(denom) * -step_size))

