"""SGD with momentum, dampening, Nesterov, weight decay and maximize, as PyTorch's, and its
functional form `sgd`:

    g = grad (+ weight_decay * p);  b = momentum * b + (1 - dampening) * g  (b = g at first)
    g = g + momentum * b if nesterov else b;  p -= lr * g   (p += lr * g if maximize)
"""
from . import _foreach
from .optimizer import Optimizer, required, step_with_hooks

__all__ = ["SGD", "sgd"]


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize):
    """One SGD step over lists of parameters, in place. A None in `momentum_buffer_list` is a
    buffer not made yet: it is made from the gradient and put in the list. Unless
    `foreach=False`, the foreach form (_foreach.py) runs it on arrays."""
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("`grad_scale` and `found_inf` are only used by the fused kernels")
    if _foreach.usable(foreach, fused, False, (weight_decay, momentum, lr, dampening),
                       params, d_p_list, momentum_buffer_list):
        return _foreach.sgd(params, d_p_list, momentum_buffer_list, weight_decay=weight_decay,
                            momentum=momentum, lr=lr, dampening=dampening, nesterov=nesterov,
                            maximize=maximize)
    for i, p in enumerate(params):
        g = -d_p_list[i] if maximize else d_p_list[i]
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = g.clone().detach()
            else:
                buf.mul_(momentum).add_(g, alpha=1 - dampening)
            g = g.add(buf, alpha=momentum) if nesterov else buf
        p.add_(g, alpha=-lr)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    @step_with_hooks
    def step(self):
        for group in self.param_groups:
            momentum = group["momentum"]
            params, grads, buffers, states = [], [], [], []
            for p, g, state in self._stepping(group, with_state=momentum != 0, negate=False):
                params.append(p)
                grads.append(g)
                buffers.append(state.get("momentum_buffer") if momentum != 0 else None)
                states.append(state)
            sgd(params, grads, buffers, weight_decay=group["weight_decay"], momentum=momentum,
                lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
                maximize=group["maximize"],
                # differentiable=True keeps the per-parameter loop of recorded tensor ops
                foreach=False if group.get("differentiable") else group.get("foreach"),
                fused=group.get("fused"))
            if momentum != 0:
                for state, buf in zip(states, buffers):
                    state["momentum_buffer"] = buf
