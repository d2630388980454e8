"""RMSprop, Adagrad and Adadelta, with PyTorch's update formulas."""
from ..ops.creation import full_like, zeros_like
from .adam import step_count
from .optimizer import Optimizer, step_with_hooks

__all__ = ["RMSprop", "Adagrad", "Adadelta"]


class RMSprop(Optimizer):
    """v = alpha v + (1 - alpha) g^2;  centered: subtract the mean gradient's square;
    momentum: b = momentum b + g / (sqrt(v) + eps), p -= lr b; else p -= lr g / (sqrt(v) + eps)."""

    _sparse_error = "RMSprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            wd, momentum = group["weight_decay"], group["momentum"]
            for p, g, state in self._stepping(group):
                if "square_avg" not in state:
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if group["centered"]:
                        state["grad_avg"] = zeros_like(p)
                step_count(state)
                if wd != 0:
                    g = g.add(p, alpha=wd)
                v = state["square_avg"]
                v.mul_(alpha).addcmul_(g, g, value=1 - alpha)
                if group["centered"]:
                    ga = state["grad_avg"]
                    ga.lerp_(g, 1 - alpha)
                    avg = v.addcmul(ga, ga, value=-1).sqrt_().add_(eps)
                else:
                    avg = v.sqrt().add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(g, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(g, avg, value=-lr)


def _sparse_adagrad(p, g, s, clr, eps):
    """Adagrad on the rows a sparse gradient touches (coalesced first: the update is not
    linear in g, so each row's gradient must be whole)."""
    from .._sparse import make_sparse
    g = g.coalesce()
    ind, vals = g._indices(), g._values()
    s.add_(make_sparse(ind, vals.pow(2), g.shape, True))
    std = s.sparse_mask(g)._values().sqrt().add_(eps)
    p.add_(make_sparse(ind, vals / std, g.shape, True), alpha=-clr)


class Adagrad(Optimizer):
    """clr = lr / (1 + (t - 1) lr_decay);  s += g^2;  p -= clr g / (sqrt(s) + eps)."""

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
        from ..ops.creation import tensor
        from .. import dtypes as _dt
        for group in self.param_groups:  # PyTorch creates Adagrad's state eagerly
            for p in group["params"]:
                self.state[p]["step"] = tensor(0.0, dtype=_dt.float32)
                self.state[p]["sum"] = full_like(p, initial_accumulator_value)

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            for p, g, state in self._stepping(group):
                t = step_count(state)
                if group["weight_decay"] != 0:
                    if g.is_sparse:
                        raise RuntimeError("weight_decay option is not compatible with sparse "
                                           "gradients")
                    g = g.add(p, alpha=group["weight_decay"])
                clr = group["lr"] / (1 + (t - 1) * group["lr_decay"])
                s = state["sum"]
                if g.is_sparse:
                    _sparse_adagrad(p, g, s, clr, group["eps"])
                    continue
                s.addcmul_(g, g, value=1)
                p.addcdiv_(g, s.sqrt().add_(group["eps"]), value=-clr)


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g^2;  d = sqrt(u + eps) / sqrt(v + eps) g;
    u = rho u + (1 - rho) d^2;  p -= lr d."""

    _sparse_error = "Adadelta does not support sparse gradients"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("weight_decay value", weight_decay)):
            if value < 0.0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            rho, eps, lr = group["rho"], group["eps"], group["lr"]
            for p, g, state in self._stepping(group):
                if "square_avg" not in state:
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                step_count(state)
                if group["weight_decay"] != 0:
                    g = g.add(p, alpha=group["weight_decay"])
                v, u = state["square_avg"], state["acc_delta"]
                v.mul_(rho).addcmul_(g, g, value=1 - rho)
                delta = u.add(eps).sqrt_().div_(v.add(eps).sqrt_()).mul_(g)
                u.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
