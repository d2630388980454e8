"""The `foreach` form of SGD, Adam/AdamW and RMSprop: one pass over all parameters that updates
their backend arrays with in-place ufuncs, instead of ~10 dispatched in-place tensor ops per
parameter (each with its checks, dtype logic and version bump).

Every formula is written in the order and with the roundings of the per-parameter loops in
sgd.py, adam.py and rmsprop.py (and of the direct in-place kernels they reach: `a *= s`,
`a += s * b * c`, lerp's two branches), so both paths give the same bits. Each tensor written
gets the version bumps the per-parameter loop gives it, and write watchers hear of it first.

`usable` says when this path gives the loop's results: `foreach` not False (or `fused`), not
`differentiable`, no forward-mode AD, hyperparameters plain numbers, every tensor of a row a
dense float32/float64 array of the parameter's dtype and device, the parameter writable, and
no autograd recording (grad mode off, or nothing requiring grad).
"""
import builtins

import numpy as np

from .._state import forward_ad as _fw, grad as _grad_state
from .._tensor import Tensor, make_tensor, xp_of
from ..device import is_writeable
from ..ops._graph import before_write, write_watchers

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NUMBERS = (builtins.int, builtins.float)


def usable(foreach, fused, differentiable, numbers, params, *rows):
    """Whether the foreach path may run: see the module docstring. `rows` are the other
    per-parameter lists (gradients, states), None entries allowed."""
    if (foreach is False and not fused) or differentiable or _fw.level is not None:
        return False
    for n in numbers:
        if type(n) not in _NUMBERS and type(n) is not builtins.bool:
            return False
    grad_on = _grad_state.enabled
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            return False
        arr = p._array
        if arr.dtype not in _FLOATS or p.is_sparse or not is_writeable(arr) or 0 in arr.strides:
            return False
        if grad_on and p._requires_grad:
            return False
        for row in rows:
            t = row[i]
            if t is None:
                continue
            if not isinstance(t, Tensor) or t.is_sparse or t._array.dtype != arr.dtype \
                    or t._device != p._device or t._array.shape != arr.shape:
                return False
            if grad_on and t._requires_grad:
                return False
    return True


def _written(*tensors):
    """Tell the write watchers (before writing)."""
    if write_watchers:
        for t in tensors:
            if t is not None:
                before_write(t)


def _bump_step(step_t):
    """The step counter's add_(1), on its array; its new value as a Python number."""
    if write_watchers:
        before_write(step_t)
    a = step_t._array
    a += 1
    step_t._vc.value += 1
    return a.item()


def _lerp_(xp, a, b, w):
    """a <- lerp(a, b, w) for a number w, as lerp_'s direct kernel rounds it."""
    diff = b - a
    if builtins.abs(w) < 0.5:
        diff *= w
        a += diff
    else:
        diff *= 1 - w
        xp.subtract(b, diff, out=a)


# ---- SGD ---------------------------------------------------------------------------------------
def sgd(params, grads, buffers, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    for i, p in enumerate(params):
        xp = xp_of(p)
        P = p._array
        g = grads[i]._array
        if maximize:
            g = xp.negative(g)
        if weight_decay != 0:
            g = g + P * weight_decay
        if momentum != 0:
            buf = buffers[i]
            if buf is None:
                buffers[i] = make_tensor(g.copy(), p._device)
                B = buffers[i]._array
            else:
                _written(buf)
                B = buf._array
                B *= momentum
                alpha = 1 - dampening
                if alpha.__class__ is not builtins.int or alpha != 1:
                    B += g * alpha
                else:
                    B += g
                buf._vc.value += 2
            g = g + B * momentum if nesterov else B
        _written(p)
        P += g * -lr
        p._vc.value += 1


# ---- Adam / AdamW --------------------------------------------------------------------------------
def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1,
         beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay):
    for i, p in enumerate(params):
        xp = xp_of(p)
        P = p._array
        g = grads[i]._array
        if maximize:
            g = xp.negative(g)
        t = _bump_step(state_steps[i])
        m, v, vmax = exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i] if amsgrad else None
        _written(p, m, v, vmax)
        if weight_decay != 0:
            if decoupled_weight_decay:
                P *= 1 - lr * weight_decay
                p._vc.value += 1
            else:
                g = g + P * weight_decay
        M, V = m._array, v._array
        _lerp_(xp, M, g, 1 - beta1)
        V *= beta2
        V += (1 - beta2) * g * g
        m._vc.value += 1
        v._vc.value += 2
        step_size = lr / (1 - beta1 ** t)
        bias2_sqrt = (1 - beta2 ** t) ** 0.5
        if amsgrad:
            xp.maximum(vmax._array, V, out=vmax._array)
            vmax._vc.value += 1
            denom = xp.sqrt(vmax._array)
        else:
            denom = xp.sqrt(V)
        denom /= bias2_sqrt
        denom += eps
        M = -step_size * M
        M /= denom
        P += M
        p._vc.value += 1


# ---- RMSprop -------------------------------------------------------------------------------------
def rmsprop(params, grads, square_avgs, grad_avgs, buffers, state_steps, *, lr, alpha, eps,
            weight_decay, momentum, centered, maximize):
    for i, p in enumerate(params):
        xp = xp_of(p)
        P = p._array
        g = grads[i]._array
        if maximize:
            g = xp.negative(g)
        _bump_step(state_steps[i])
        if weight_decay != 0:
            g = g + P * weight_decay
        v = square_avgs[i]
        _written(v)
        V = v._array
        V *= alpha
        V += (1 - alpha) * g * g
        v._vc.value += 2
        if centered:
            ga = grad_avgs[i]
            _written(ga)
            _lerp_(xp, ga._array, g, 1 - alpha)
            ga._vc.value += 1
            A = ga._array
            avg = V + (-1 * A) * A
            avg = xp.sqrt(avg)
        else:
            avg = xp.sqrt(V)
        avg += eps
        _written(p)
        if momentum > 0:
            buf = buffers[i]
            _written(buf)
            B = buf._array
            B *= momentum
            B += g / avg
            buf._vc.value += 2
            P += B * -lr
        else:
            step = -lr * g
            step /= avg
            P += step
        p._vc.value += 1
