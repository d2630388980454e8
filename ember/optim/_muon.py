"""Muon: momentum, then the update orthogonalized by a Newton-Schulz iteration (for the 2-D
weights of hidden layers), as PyTorch's `torch.optim.Muon`, and its functional form `muon`:

    b = momentum * b + (1 - momentum) * g          (b.lerp_(g, 1 - momentum))
    u = g + momentum * (b - g) if nesterov else b   (g.lerp(b, momentum))
    O = NS_k(u)  (k quintic steps X <- a X + (b A + c A A) X with A = X X^T, in bfloat16, on
                  X = u / max(||u||_F, eps), transposed first when u is tall)
    p = p * (1 - lr * weight_decay) - lr * adjust(shape) * O

adjust is sqrt(max(1, rows / cols)) ("original", the default) or 0.2 * sqrt(max(rows, cols))
("match_rms_adamw").
"""
import math

from .. import dtypes as _dt
from ..ops.linalg import addmm
from ..ops.creation import zeros_like
from .optimizer import Optimizer, step_with_hooks

__all__ = ["Muon", "muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _orthogonalize(update, ns_coefficients, ns_steps, eps):
    """The Newton-Schulz approximation of U V^T for update = U S V^T (singular values land
    near 1, not exactly on it), computed in bfloat16 as PyTorch does."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = update.to(_dt.bfloat16)
    tall = update.shape[0] > update.shape[1]
    if tall:
        x = x.T
    # a Frobenius norm of at most one bounds the spectral norm by one
    x = x.div(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        poly = addmm(gram, gram, gram, beta=b, alpha=c)
        x = addmm(x, poly, x, beta=a)
    return x.T if tall else x


def _adjusted_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


def muon(params, grads, muon_momentum_bufs, *, foreach=None, lr, weight_decay, momentum,
         nesterov, ns_coefficients, ns_steps, eps, adjust_lr_fn, has_complex):
    """One Muon step over lists of parameters, gradients and momentum buffers, in place."""
    if foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    lr = lr.item() if hasattr(lr, "item") else lr
    if has_complex:
        raise ValueError("Complex parameters are not supported")
    for param, grad, buf in zip(params, grads, muon_momentum_bufs):
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if nesterov else buf
        update = _orthogonalize(update, ns_coefficients, ns_steps, eps)
        param.mul_(1 - lr * weight_decay)
        param.add_(update, alpha=-_adjusted_lr(lr, adjust_lr_fn, param.shape))


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients,
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.dtype.is_complex:
                    raise RuntimeError("Muon does not support complex parameters")
                if p.grad.is_sparse:
                    raise RuntimeError("Muon does not support sparse gradients")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like(p.grad)
                params.append(p)
                grads.append(p.grad)
                bufs.append(state["momentum_buffer"])
            muon(params, grads, bufs, lr=group["lr"], weight_decay=group["weight_decay"],
                 momentum=group["momentum"], nesterov=group["nesterov"],
                 ns_coefficients=group["ns_coefficients"], eps=group["eps"],
                 ns_steps=group["ns_steps"], adjust_lr_fn=group["adjust_lr_fn"],
                 has_complex=False)
