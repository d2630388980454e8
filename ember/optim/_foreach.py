"""The `foreach` form of SGD, Adam/AdamW and RMSprop: one pass over all parameters that updates
their backend arrays with in-place ufuncs, instead of ~10 dispatched in-place tensor ops per
parameter (each with its checks, dtype logic and version bump).

Every formula is written in the order and with the roundings of the per-parameter loops in
sgd.py, adam.py and rmsprop.py (and of the direct in-place kernels they reach: `a *= s`,
`a += s * b * c`, lerp's two branches), so both paths give the same bits. Each tensor written
gets the version bumps the per-parameter loop gives it, and write watchers hear of it first.

On a device (CuPy) each array call is host time, the bottleneck of a training step there, so
SGD and Adam/AdamW run on flat buffers when they can (`_Flat`): the optimiser's state rows
(momentum buffers, exp_avg, exp_avg_sq, max_exp_avg_sq) live end to end in one buffer each
(each state tensor's array a view of it), the gradients are concatenated once, every formula
is one array call over all parameters (SGD's momentum and Adam/AdamW's whole update one
kernel of ember's, where its kernels run), and the parameters take their updates in one
launch that writes each through its address (`_Targets`; one add per parameter where it does
not apply): 3-4 launches a step where the loop made 5-14 per parameter. Elementwise formulas
on the concatenation give each element the bits the per-parameter form gives it. On the host
the same saves calls for small parameter lists (`_Flat.CPU_MAX_NUMBERS`).

`usable` says when this path gives the loop's results: `foreach` not False (or `fused`), not
`differentiable`, no forward-mode AD, hyperparameters plain numbers, every tensor of a row a
dense float32/float64 array of the parameter's dtype and device, the parameter writable, and
no autograd recording (grad mode off, or nothing requiring grad).
"""
import builtins
import math
import weakref

import numpy as np

from .._state import forward_ad as _fw, grad as _grad_state
from .._tensor import Tensor, make_tensor, xp_of
from .._vml import ufunc as vml_ufunc
from ..device import is_writeable
from ..ops._device_kernels import Kernel, trial_verdict, usable as _kernels_usable
from ..ops._writes import before_write, write_watchers

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


def _arrays(xp, p, g, maximize):
    """A parameter's array and its gradient's (negated when maximizing): each form's start."""
    g = g._array
    return p._array, (xp.negative(g) if maximize else g)


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


def _momentum_(B, g, momentum, dampening):
    """B <- B * momentum + g * (1 - dampening), as mul_ then add_ round it (no multiply by
    an integer 1)."""
    B *= momentum
    alpha = 1 - dampening
    if alpha.__class__ is not builtins.int or alpha != 1:
        B += g * alpha
    else:
        B += g


# ---- SGD ---------------------------------------------------------------------------------------
def sgd(params, grads, buffers, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    if _Flat.usable(params, buffers, momentum):
        return _sgd_flat(params, grads, buffers, weight_decay=weight_decay, momentum=momentum,
                         lr=lr, dampening=dampening, nesterov=nesterov, maximize=maximize)
    for i, p in enumerate(params):
        xp = xp_of(p)
        P, g = _arrays(xp, p, grads[i], maximize)
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
                _momentum_(B, g, momentum, dampening)
                buf._vc.value += 2
            g = g + B * momentum if nesterov else B
        _written(p)
        P += g * -lr
        p._vc.value += 1


# ---- Adam / AdamW --------------------------------------------------------------------------------
def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1,
         beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay):
    if _Flat.usable(params, exp_avgs) and _Flat.same_steps(state_steps):
        return _adam_flat(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                          amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr,
                          weight_decay=weight_decay, eps=eps, maximize=maximize,
                          decoupled_weight_decay=decoupled_weight_decay)
    for i, p in enumerate(params):
        xp = xp_of(p)
        P, g = _arrays(xp, p, grads[i], maximize)
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
            denom = vml_ufunc(xp.sqrt, vmax._array)
        else:
            denom = vml_ufunc(xp.sqrt, V)
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
        P, g = _arrays(xp, p, grads[i], maximize)
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


# ---- flat buffers (devices) ------------------------------------------------------------------
class _Flat:
    """One parameter list's state rows end to end: `rows[r]` the flat buffer of state row r
    and `views[r][i]` parameter i's part of it, shaped as the parameter (the array its state
    tensor holds); `update` a scratch buffer of the same layout with its `update_views`
    (where the kernels that write the parameters themselves do not apply).
    Kept per list (keyed by the first state tensor) while the state tensors still hold these
    views: a state loaded or replaced since is laid out afresh (one copy per tensor)."""

    # id(first state tensor) -> (weak reference to it, layout): not a WeakKeyDictionary,
    # whose lookups may compare two tensors with ==, an elementwise op
    _kept = {}

    def __init__(self, xp, shapes, dtype):
        self.xp, self.shapes, self.dtype = xp, shapes, dtype
        sizes = [math.prod(shape) for shape in shapes]
        self.bounds = [(o - n, o) for o, n in zip(_running_sum(sizes), sizes)]
        self.total = sum(sizes)
        self.rows, self.views = [], []
        self._update = None
        self.targets = None  # the parameters' addresses, for the update in one launch

    @property
    def update(self):
        """The scratch buffer of the update (made when first needed: the kernels that write
        the parameters themselves need none, and it is as large as all the parameters)."""
        if self._update is None:
            self._update = self.xp.empty(self.total, self.dtype)
            self.update_views = self.split(self._update)
        return self._update

    @staticmethod
    def usable(params, row, momentum=1):
        """Whether the flat form applies: one dtype and device, the state row either all made
        (any layout) or, for SGD's momentum buffers, none yet, and on the host (NumPy) at
        most CPU_MAX_NUMBERS parameter numbers in all."""
        if not params or momentum == 0:
            return False
        first = params[0]
        made = row[0] is not None
        host = xp_of(first) is np
        numbers = 0
        for p, t in zip(params, row):
            if p._device != first._device or p._array.dtype != first._array.dtype \
                    or (t is not None) != made:
                return False
            numbers += p._array.size
        return not host or numbers <= _Flat.CPU_MAX_NUMBERS

    # On the host a call costs microseconds, not a device round trip: the flat form pays for
    # its extra pass (the gradients' concatenation) only while the rows stay in cache. Measured
    # per step at 1 thread (`/work/notes/s21/flat_adam.py`), flat against the loop: Adam on
    # 12 tensors / 38K numbers 0.75x the time, on 65 / 272K 0.72x; SGD with momentum on 6 /
    # 20K even; AdamW on 52 / 930K 1.37x, SGD on 6 / 670K 1.3x.
    CPU_MAX_NUMBERS = 300_000

    @staticmethod
    def same_steps(state_steps):
        """Adam's bias corrections are numbers of the step count: one for all, or no flat form."""
        first = state_steps[0]._array
        return all(type(s._array) is np.ndarray and s._array == first for s in state_steps)

    def split(self, flat):
        return [flat[a:b].reshape(shape) for (a, b), shape in zip(self.bounds, self.shapes)]

    def concat(self, arrays):
        """The arrays flattened end to end: axis=None flattens inside CuPy (no call per array)."""
        return self.xp.concatenate(arrays, axis=None)

    @classmethod
    def of(cls, params, *rows):
        """The layout of `rows` (lists of state tensors), laid out now if they are not."""
        key = rows[0][0]
        ref, flat = cls._kept.get(id(key), (None, None))
        if ref is not None and ref() is key and len(rows[0]) == len(flat.shapes) and all(
                t._array is v for row, views in zip(rows, flat.views) for t, v in zip(row, views)):
            return flat
        arr = params[0]._array
        flat = cls(xp_of(params[0]), [p._array.shape for p in params], arr.dtype)
        for row in rows:
            buffer = flat.concat([t._array for t in row])
            flat.rows.append(buffer)
            flat.views.append(flat.split(buffer))
            for t, view in zip(row, flat.views[-1]):
                t._array = view  # the optimiser's own state: its values, in the flat buffer
        kept = cls._kept
        kept[id(key)] = (weakref.ref(key, lambda _, k=id(key): kept.pop(k, None)), flat)
        return flat

    def add_update(self, params):
        """params[i] += update_views[i], with the write watchers told and versions bumped."""
        update, targets = self.update, self.targets_for(params)
        if targets is not None:
            _written(*params)
            _ADD_EACH(self.xp, *targets.args, update)
            self._update = None  # (kept only for the parameter-by-parameter writes)
            for p in params:
                p._vc.value += 1
            return
        for p, u in zip(params, self.update_views):
            _written(p)
            P = p._array
            P += u
            p._vc.value += 1

    def write_update(self, params, versions):
        """params[i] = update_views[i] (the new values whole), with the write watchers told
        and versions bumped by as many in-place ops as the update stands for."""
        update, targets = self.update, self.targets_for(params)
        if targets is not None:
            _written(*params)
            _SET_EACH(self.xp, *targets.args, update)
            self._update = None
            for p in params:
                p._vc.value += versions
            return
        for p, u in zip(params, self.update_views):
            _written(p)
            p._array[...] = u
            p._vc.value += versions

    def targets_for(self, params):
        """The parameters' `_Targets`, for a kernel that writes them all in one launch; None
        where that does not apply (the caller writes parameter by parameter)."""
        targets = self.targets
        if targets is None or not targets.holds(params):
            targets = self.targets = _Targets.of(self, params)
        return targets if targets else None


class _Targets:
    """The parameters' device addresses and their starts in the flat update (with its end),
    for the kernels that write every parameter in one launch (`_EACH_PARAMS`), and
    the arrays they were taken from (held: an address stays theirs while the layout is used).
    False where those kernels do not apply: the host, kernels off, or parameters that are not
    contiguous, not on the state's device, or overlapping (two threads would write one
    address where the loop writes twice)."""

    def __init__(self, arrays, ptrs, starts, count):
        self.arrays, self.ptrs = arrays, ptrs
        # the kernels' `_EACH_PARAMS`: `steps` halvings of [0, count) find one parameter
        self.args = (ptrs, starts, count, (count - 1).bit_length())

    def holds(self, params):
        arrays = self.arrays
        return arrays is None or (len(arrays) == len(params) and all(
            p._array is a for p, a in zip(params, arrays)))

    def __bool__(self):
        return self.ptrs is not None

    @classmethod
    def of(cls, flat, params):
        arrays = [p._array for p in params]
        xp, row = flat.xp, flat.rows[0]
        if xp is np or not _kernels_usable(xp, row, *arrays):
            return cls(None, None, None, 0)
        spans, where = [], row.device.id
        for a in arrays:
            if not a.flags.c_contiguous or a.device.id != where:
                return cls(arrays, None, None, 0)
            if a.size:
                spans.append((a.data.ptr, a.data.ptr + a.nbytes))
        spans.sort()
        if any(end > nxt for (_, end), (nxt, _) in zip(spans, spans[1:])):
            return cls(arrays, None, None, 0)
        ptrs = np.array([a.data.ptr for a in arrays], np.uint64)
        starts = np.array([a for a, _ in flat.bounds] + [flat.total], np.int64)
        return cls(arrays, xp.asarray(ptrs), xp.asarray(starts), len(arrays))


def _bump(tensors, versions):
    for t in tensors:
        t._vc.value += versions


def _running_sum(sizes):
    total = 0
    for n in sizes:
        total += n
        yield total


def _sgd_flat(params, grads, buffers, *, weight_decay, momentum, lr, dampening, nesterov,
              maximize):
    first_step = buffers[0] is None
    if first_step:  # the buffers are the first step's gradients: made here, in one buffer
        for i, p in enumerate(params):
            buffers[i] = make_tensor(p._array, p._device)  # laid out (copied) by _Flat.of
    flat = _Flat.of(params, buffers)
    xp = flat.xp
    g = flat.concat([t._array for t in grads])
    if maximize:
        xp.negative(g, out=g)
    if weight_decay != 0:
        g = g + flat.concat([p._array for p in params]) * weight_decay
    B = flat.rows[0]
    if not first_step and not nesterov and _kernels_usable(xp, g, B):
        _written(*buffers)
        t = g.dtype.type
        numbers = (t(momentum), t(1 - dampening), t(-lr))
        targets = flat.targets_for(params)
        if targets is not None:  # the parameters written by the same launch
            _written(*params)
            _SGD_MOMENTUM_EACH(xp, g, *numbers, *targets.args, B)
            _bump(buffers, 2)
            _bump(params, 1)
            return
        _SGD_MOMENTUM(xp, g, *numbers, B, flat.update)
        _bump(buffers, 2)
        flat.add_update(params)
        return
    if first_step:
        B[...] = g
    else:
        _written(*buffers)
        _momentum_(B, g, momentum, dampening)
        for buf in buffers:
            buf._vc.value += 2
    g = g + B * momentum if nesterov else B
    xp.multiply(g, -lr, out=flat.update)
    flat.add_update(params)


# Every parameter's part of the flat update, added to it (`p += u`, one rounding) or set, in
# one launch: element i belongs to the parameter whose start is the last at or before i,
# found by halving [0, count) `steps` times; `q` is that parameter's address.
_FIND_TARGET = ("ptrdiff_t lo = 0; ptrdiff_t hi = count;"
                "for (int s = 0; s < steps; s++) {"
                "  ptrdiff_t mid = (lo + hi) / 2;"
                "  bool right = starts[mid] <= i;"
                "  lo = right ? mid : lo;"
                "  hi = right ? hi : mid; }"
                "T* q = (T*)ptrs[lo];")
_EACH_PARAMS = "raw uint64 ptrs, raw int64 starts, int64 count, int32 steps"
_ADD_EACH = Kernel("ember_add_each", _EACH_PARAMS, "T u", _FIND_TARGET + "q[i - starts[lo]] += u",
                   trial=lambda xp, dtype: _each_trial(xp, dtype, "add"))
_SET_EACH = Kernel("ember_set_each", _EACH_PARAMS, "T u", _FIND_TARGET + "q[i - starts[lo]] = u",
                   trial=lambda xp, dtype: _each_trial(xp, dtype, "set"))


def _each_trial(xp, dtype, kind):
    """A kernel of `_EACH_PARAMS` on parameters of 2, 0, 1 and 3 elements, all 10, with
    numbers whose every step is exact (so a GPU's contracted multiply-adds give the same):
    each parameter must take its element's update once. A difference fails the next read as
    a device-side assert does (`_device_kernels.Kernel`)."""
    arrays = [xp.full(n, 10, dtype) for n in (2, 0, 1, 3)]
    each = (xp.asarray(np.array([a.data.ptr for a in arrays], np.uint64)),
            xp.asarray(np.array([0, 2, 2, 3, 6], np.int64)), 4, 2)
    t, ones = np.dtype(dtype).type, xp.ones(6, dtype)
    if kind in ("add", "set"):
        (_ADD_EACH if kind == "add" else _SET_EACH)(xp, *each, xp.arange(1, 7, dtype=dtype))
        want = np.arange(11, 17) if kind == "add" else np.arange(1, 7)
    elif kind == "sgd":  # b = 2 * 0.5 + 1 * 1 = 2; p += 2 * -1
        _SGD_MOMENTUM_EACH(xp, ones, t(0.5), t(1), t(-1), *each, ones * 2)
        want = np.full(6, 8)
    else:  # m = 0 + (2 - 0) * 0.5 = 1, v = 0 * 0.5 + 1 * 2 * 2 = 4; step -1 / (2 / 1 + 0)
        numbers = (t(0.5), t(0.5), t(1), t(-1), t(1), t(0))
        m, v = xp.zeros(6, dtype), xp.zeros(6, dtype)
        if kind == "adam":  # p += -0.5
            _ADAM_EACH(xp, ones * 2, *numbers, *each, m, v)
            want = np.full(6, 9.5)
        else:  # p = -0.5 + p * 0.5
            _ADAMW_EACH(xp, ones * 2, *numbers, t(0.5), *each, m, v)
            want = np.full(6, 4.5)
    bad = xp.concatenate(arrays) != xp.asarray(want.astype(dtype))
    name = {"sgd": "ember_sgd_momentum_each"}.get(kind, f"ember_{kind}_each")
    trial_verdict(xp, bad, name, "a loop over the parameters")


# The flat forms' formulas as one kernel each on a device, each operation the loop's in its
# order (`_momentum_`; `_lerp_`'s branch for weights under 0.5, then Adam's moments, denominator
# and step, and AdamW's decayed parameter added last): where 4 and about 12 array calls ran.
# (g * 1 is g exactly: the momentum's dampening 0 needs no form of its own.)
_SGD_MOMENTUM = Kernel("ember_sgd_momentum", "T g, T mom, T alpha, T nlr", "T b, T upd",
                       "b = b * mom; b = b + g * alpha; upd = b * nlr")
_ADAM_MOMENTS = "T d = g - m; d = d * w; m = m + d; v = v * b2; v = v + c2 * g * g; "
_ADAM = Kernel("ember_adam", "T g, T w, T b2, T c2, T nstep, T b2s, T eps", "T m, T v, T upd",
               _ADAM_MOMENTS + "upd = m * nstep / (sqrt(v) / b2s + eps)")
_ADAMW = Kernel("ember_adamw", "T g, T p, T w, T b2, T c2, T nstep, T b2s, T eps, T keep",
                "T m, T v, T upd",
                _ADAM_MOMENTS + "upd = m * nstep / (sqrt(v) / b2s + eps) + p * keep")
# ... and with the parameters' writes in the same launch, each through its address (the
# update rounded to T before the add, as the separate kernels store it)
_SGD_MOMENTUM_EACH = Kernel(
    "ember_sgd_momentum_each", "T g, T mom, T alpha, T nlr, " + _EACH_PARAMS, "T b",
    "b = b * mom; b = b + g * alpha; " + _FIND_TARGET + "q[i - starts[lo]] += b * nlr",
    trial=lambda xp, dtype: _each_trial(xp, dtype, "sgd"))
_ADAM_EACH = Kernel(
    "ember_adam_each", "T g, T w, T b2, T c2, T nstep, T b2s, T eps, " + _EACH_PARAMS,
    "T m, T v", _ADAM_MOMENTS + _FIND_TARGET +
    "q[i - starts[lo]] += m * nstep / (sqrt(v) / b2s + eps)",
    trial=lambda xp, dtype: _each_trial(xp, dtype, "adam"))
_ADAMW_EACH = Kernel(
    "ember_adamw_each", "T g, T w, T b2, T c2, T nstep, T b2s, T eps, T keep, " + _EACH_PARAMS,
    "T m, T v", _ADAM_MOMENTS + _FIND_TARGET + "ptrdiff_t j = i - starts[lo];"
    "q[j] = m * nstep / (sqrt(v) / b2s + eps) + q[j] * keep",
    trial=lambda xp, dtype: _each_trial(xp, dtype, "adamw"))


def _adam_flat(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad,
               beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay):
    rows = (exp_avgs, exp_avg_sqs) + ((max_exp_avg_sqs,) if amsgrad else ())
    flat = _Flat.of(params, *rows)
    xp = flat.xp
    for step in state_steps:
        t = _bump_step(step)
    for row in rows:
        _written(*row)
    g = flat.concat([t._array for t in grads])
    if maximize:
        xp.negative(g, out=g)
    decayed = weight_decay != 0 and decoupled_weight_decay
    if weight_decay != 0 and not decoupled_weight_decay:
        g = g + flat.concat([p._array for p in params]) * weight_decay
    M, V = flat.rows[0], flat.rows[1]
    if not amsgrad and builtins.abs(1 - beta1) < 0.5 and _kernels_usable(xp, g, M):
        return _adam_kernel(flat, params, g, exp_avgs, exp_avg_sqs, t, beta1=beta1, beta2=beta2,
                            lr=lr, weight_decay=weight_decay, eps=eps, decayed=decayed)
    _lerp_(xp, M, g, 1 - beta1)
    V *= beta2
    V += (1 - beta2) * g * g
    for m, v in zip(exp_avgs, exp_avg_sqs):
        m._vc.value += 1
        v._vc.value += 2
    step_size = lr / (1 - beta1 ** t)
    bias2_sqrt = (1 - beta2 ** t) ** 0.5
    if amsgrad:
        vmax = flat.rows[2]
        xp.maximum(vmax, V, out=vmax)
        for t_max in max_exp_avg_sqs:
            t_max._vc.value += 1
        denom = vml_ufunc(xp.sqrt, vmax)
    else:
        denom = vml_ufunc(xp.sqrt, V)
    denom /= bias2_sqrt
    denom += eps
    update = flat.update
    xp.multiply(M, -step_size, out=update)
    update /= denom
    if decayed:
        # p * (1 - lr * wd) + update, rounded as PyTorch's decay of p and the add after it,
        # in three calls on the flat buffer and one write per parameter (not two per one)
        decay = flat.concat([p._array for p in params])
        decay *= 1 - lr * weight_decay
        update += decay
        flat.write_update(params, versions=2)
    else:
        flat.add_update(params)


def _adam_kernel(flat, params, g, exp_avgs, exp_avg_sqs, t, *, beta1, beta2, lr, weight_decay,
                 eps, decayed):
    """_adam_flat's moments, update and the parameters' writes as one kernel (`_ADAM_EACH`,
    `_ADAMW_EACH`), or the moments and update as one (`_ADAM`, `_ADAMW`) and the writes."""
    xp, M, V, T = flat.xp, flat.rows[0], flat.rows[1], g.dtype.type
    for m, v in zip(exp_avgs, exp_avg_sqs):
        m._vc.value += 1
        v._vc.value += 2
    numbers = (T(1 - beta1), T(beta2), T(1 - beta2), T(-(lr / (1 - beta1 ** t))),
               T((1 - beta2 ** t) ** 0.5), T(eps))
    targets = flat.targets_for(params)
    if targets is not None:  # the parameters read and written by the same launch
        _written(*params)
        if decayed:
            _ADAMW_EACH(xp, g, *numbers, T(1 - lr * weight_decay), *targets.args, M, V)
        else:
            _ADAM_EACH(xp, g, *numbers, *targets.args, M, V)
        _bump(params, 2 if decayed else 1)
    elif decayed:
        _ADAMW(xp, g, flat.concat([p._array for p in params]), *numbers,
               T(1 - lr * weight_decay), M, V, flat.update)
        flat.write_update(params, versions=2)
    else:
        _ADAM(xp, g, *numbers, M, V, flat.update)
        flat.add_update(params)
