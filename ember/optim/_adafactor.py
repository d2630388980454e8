"""Adafactor, with PyTorch's single-tensor update: a matrix's second moment is kept
factored as a row and a column average (their outer product, over the row average's mean,
estimates it); a vector keeps a full one.

    beta2_t = 1 - t^beta2_decay;  rho = min(lr, 1/sqrt(t));  alpha = max(eps2, RMS(p)) rho
    u = g / sqrt(max(v_hat, eps1^2));  p -= alpha / max(1, RMS(u) / d) * u
"""
from .. import dtypes as _dt
from ..ops.creation import tensor, zeros_like
from .optimizer import Optimizer, step_with_hooks

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            eps1, eps2 = group["eps"]
            lr, d, wd = float(group["lr"]), group["d"], group["weight_decay"]
            for p, g, state in self._stepping(group):
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if g.is_sparse:
                    raise RuntimeError("Adafactor does not support sparse gradients")
                if not state:
                    state["step"] = tensor(0.0, dtype=_dt.float32)
                    if g.dim() > 1:
                        state["row_var"] = g.new_zeros(list(g.shape[:-1]) + [1])
                        state["col_var"] = g.new_zeros(list(g.shape[:-2]) + [1, g.shape[-1]])
                    else:
                        state["variance"] = zeros_like(g)
                if eps1 is None:  # PyTorch takes it from the group's first parameter
                    eps1 = _dt.finfo(p.dtype).eps
                state["step"].add_(1)
                t = state["step"].item()
                beta2_complement = t ** group["beta2_decay"]
                rho = min(lr, 1 / t ** 0.5)
                alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho
                if wd != 0:
                    p.mul_(1 - lr * wd)
                if g.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    row_var.lerp_(g.norm(dim=-1, keepdim=True).square_().div_(g.size(-1)),
                                  beta2_complement)
                    col_var.lerp_(g.norm(dim=-2, keepdim=True).square_().div_(g.size(-2)),
                                  beta2_complement)
                    v_hat = row_var @ col_var
                    v_hat.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    variance.lerp_(g * g, beta2_complement)
                    v_hat = variance.clone()
                update = v_hat.clamp_(min=eps1 * eps1).rsqrt_().mul_(g)
                denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
                p.add_(update, alpha=-alpha / denom)
