"""The normalisations: batch, layer, group, RMS and instance norm (and the `native_*` forms that
also return the statistics), local response norm and `normalize` (Lp normalisation).

Batch, layer and group norm share one backward (`_NormBackward`): the closed form
    dx = invstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
over each normalisation group. A first-order backward uses the statistics saved by the
forward; under `create_graph` they are recomputed from the input with ember ops, so the
formula differentiates again.
"""
import builtins

import numpy as np

from ... import _dnnl, _dnnl_layers, dtypes as _dt
from ..._gemm import threaded
from ..._memory_format import follow_channels_last
from ..._parallel import intra_threads, map_parts
from ..._state import forward_ad as _fw_state, grad as _grad_state
from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._planes import spread
from ..pointwise import scalar_op
from . import _device_fused as device_fused, _fused as fused
from ._common import _opmath, _prod

__all__ = [
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "native_batch_norm",
    "native_layer_norm", "native_group_norm", "local_response_norm", "normalize",
]


# ---- the shared normalisation core ---------------------------------------------------------
class _NormBackward(Node):
    """Inputs: (input[, weight][, bias]). Fields: `group_shape` (input viewed so that the
    statistics run over `axes`), `affine_shape` (weight/bias broadcast over the input),
    `stats` (mean, invstd arrays in the group view), `eps`, `train` (batch statistics
    were used; otherwise invstd is a constant)."""

    def backward(self, grad):
        if not _grad_state.enabled:  # first order: the closed form on arrays, in place
            return self._backward_arrays(grad)
        saved = self.saved_tensors
        x = saved[0]
        w = saved[1] if self.has_weight else None
        xshape = x.shape
        gxhat = grad * w.reshape(self.affine_shape) if w is not None else grad
        xs = x.reshape(self.group_shape)
        if _grad_state.enabled and self.train:  # create_graph: statistics as functions of x
            mean = xs.mean(self.axes, keepdim=True)
            c = xs - mean
            invstd = ((c * c).mean(self.axes, keepdim=True) + self.eps) ** -0.5
        else:
            mean = make_tensor(self.stats[0], x._device)
            invstd = make_tensor(self.stats[1], x._device)
            c = xs - mean
        xhat = c * invstd
        results = []
        if self._next[0][0] is not None:
            g = gxhat.reshape(self.group_shape)
            if self.train:
                g = (g - g.mean(self.axes, keepdim=True)
                     - xhat * (g * xhat).mean(self.axes, keepdim=True)) * invstd
            else:
                g = g * invstd
            results.append(g.reshape(xshape))
        else:
            results.append(None)
        reduce_axes = tuple(i for i, s in enumerate(self.affine_shape) if s == 1)
        if self.has_weight:
            results.append(None if self._next[1][0] is None else
                           (grad * xhat.reshape(xshape)).sum(reduce_axes).reshape(self.wshape))
        if self.has_bias:
            k = 1 + self.has_weight
            results.append(None if self._next[k][0] is None else
                           grad.sum(reduce_axes).reshape(self.wshape))
        return tuple(results)

    def _backward_arrays(self, grad):
        saved = self.saved_tensors
        x = saved[0]
        if getattr(self, "onednn", None) is not None and _dnnl.library() is not None:
            # layer norm's forward by oneDNN: its backward too (where it is still there; the
            # closed form below takes the statistics the node keeps alike)
            mean, var, b, threads = self.onednn
            dx, dw, db = _dnnl_layers.layer_norm_backward(
                x._array, grad._array, mean, var, saved[1]._array if self.has_weight else None,
                b, self.eps, threads)
            return tuple(make_tensor(a, x._device) for a in (dx, dw, db) if a is not None)
        xp = xp_of(x)
        xshape = x._array.shape
        needs = [edge[0] is not None for edge in self._next]
        need_w = self.has_weight and needs[1]
        need_b = self.has_bias and needs[1 + self.has_weight]
        g = _opmath(grad._array)
        xs = fused.shaped(_opmath(x._array), self.group_shape)
        mean, invstd = self.stats
        w_arr = _opmath(saved[1]._array) if self.has_weight else None
        if self.per_group_affine:
            dx, dw, db = self._per_group_arrays(xp, fused.shaped(g, self.group_shape), xs,
                                                w_arr, needs[0], need_w, need_b)
        elif self._along_last_axis(w_arr, xshape) and device_fused.usable(
                xp, g, xs, mean, invstd, w_arr):  # layer norm's, on a device: 5 kernels
            reduce_axes = tuple(i for i, s in enumerate(self.affine_shape) if s == 1)
            dx, dw, db = device_fused.layer_norm_backward(
                xp, g, _opmath(x._array), xs, mean, invstd, w_arr, self.axes, reduce_axes,
                needs[0], need_w, need_b)
        else:
            xhat = device_fused.normalized(xp, xs, mean, invstd)
            reduce_axes = tuple(i for i, s in enumerate(self.affine_shape) if s == 1)
            # dw and db in the weight's own shape: the reduced dims dropped, not kept as 1s
            dw = fused.sum_over(xp, reduce_axes, g, fused.shaped(xhat, xshape),
                                keepdims=False) if need_w else None
            db = fused.sum_over(xp, reduce_axes, g, keepdims=False) if need_b else None
            dx = None
            if needs[0]:
                gw = g if w_arr is None else xp.multiply(
                    g, fused.broadcastable(w_arr, self.affine_shape))
                dx = fused.normalize_backward(xp, fused.shaped(gw, self.group_shape), xhat,
                                              self.axes, invstd, self.train)
        results = [None if dx is None else make_tensor(
            fused._as(fused.shaped(dx, xshape), x._array.dtype), x._device)]
        for flag, arr, k in ((self.has_weight, dw, 1), (self.has_bias, db, 1 + self.has_weight)):
            if flag:
                results.append(None if arr is None else make_tensor(
                    fused._as(fused.shaped(arr, self.wshape), self._meta[k][1]), x._device))
        return tuple(results)

    def _along_last_axis(self, w, xshape):
        """Whether this is layer norm's form: batch statistics over the group view's last
        axis, which is x's last, and a weight along it (one per feature)."""
        return w is not None and self.train and self.axes == (len(self.group_shape) - 1,) \
            and len(xshape) >= 1 and self.group_shape[-1] == xshape[-1] == w.size \
            and tuple(self.affine_shape)[-1:] == (w.size,) and \
            all(s == 1 for s in tuple(self.affine_shape)[:-1])

    def _per_group_arrays(self, xp, g, xs, w, need_x, need_w, need_b):
        """Batch norm's (dx, dw, db) in the group view: the weight is constant over each
        statistics group, so dw and db are the very sums the closed form needs (computed
        once) and xhat is never formed (invstd folds into the coefficients). A large input
        is cut into parts by channel for the intra-op threads (`fused.kept_cuts`)."""
        mean, invstd = self.stats
        if self.train and need_x and device_fused.usable(
                xp, g, xs, invstd, *(() if w is None else (w,))):
            # a device: four kernels, the centred input never stored (`device_fused`)
            return device_fused.batch_norm_backward(xp, g, xs, mean, invstd, w, self.axes,
                                                    need_w, need_b)
        scale = None if w is None else w.reshape(mean.shape)
        cuts = fused.kept_cuts(xp, xs, self.axes) if self.train else None
        if cuts is None:
            dx, dw, total = _batch_norm_sums(xp, g, xs, mean, invstd, scale, self.axes,
                                             self.train, need_x, need_w, need_b)
        else:
            dx = xp.empty(xs.shape, xs.dtype) if need_x else None
            parts = map_parts(lambda at: _batch_norm_sums(
                xp, g[at], xs[at], mean[at], invstd[at], fused.at_or_none(scale, at),
                self.axes, True, need_x, need_w, need_b, None if dx is None else dx[at]), cuts)
            dw, total = [None if parts[0][i] is None else
                         xp.concatenate([part[i] for part in parts]) for i in (1, 2)]
        return dx, dw, total if need_b else None


def _batch_norm_sums(xp, g, xs, mean, invstd, scale, axes, train, need_x, need_w, need_b,
                     out=None):
    """(dx, dw = sum(g * (xs - mean)) * invstd, sum(g)) of batch norm in the group view, the
    sums per channel with the reduced dims dropped (None where not needed); dx into `out`
    when given."""
    wants_xc = need_w or (need_x and train)
    xc = None
    if wants_xc:
        xc = xp.subtract(xs, spread(xp, mean, xs), out=out)
    # the sums per channel, as einsum gives them: dw and db in the weight's shape, fresh
    # arrays (a reshaped sum is a view, which gradient accumulation would copy)
    dot = fused.sum_over(xp, axes, g, xc, keepdims=False) if xc is not None else None
    total = fused.sum_over(xp, axes, g, keepdims=False) \
        if (need_b or (need_x and train)) else None
    dx = None
    if need_x:
        dx = fused.normalize_backward(
            xp, g, xc if train else None, axes, invstd, train, scale,
            dot.reshape(mean.shape) if train else None,
            total.reshape(mean.shape) if train else None, xn_scaled=False)
    return dx, None if dot is None or not need_w else dot * invstd.reshape(dot.shape), total


class NativeBatchNormBackward0(_NormBackward):
    pass


class NativeLayerNormBackward0(_NormBackward):
    pass


class NativeGroupNormBackward0(_NormBackward):
    pass


def _normalize_forward(input, weight, bias, group_shape, axes, affine_shape, eps, node_cls,
                       stats=None, per_group_affine=False):
    """y = (x - mean) * invstd * w + b, statistics over `axes` of x viewed as `group_shape`
    (or the given (mean, invstd) arrays). `per_group_affine`: weight and bias have the
    statistics' shape in the group view (batch norm), so they fold into one multiply and
    one add. Returns (output, mean, invstd, biased var or None); batch statistics' mean
    and var with the reduced dims dropped, the others in the statistics' shape."""
    x = input._array
    xp = xp_of(input)
    xs = fused.shaped(_opmath(x), group_shape)
    w = None if weight is None else _opmath(weight._array)
    b = None if bias is None else _opmath(bias._array)
    scale = shift = None
    # batch norm's training forward on a device: 4 kernels, the statistics kept in their shape
    # (the running statistics read mean and var by channel), weight and bias read by channel
    device_batch = per_group_affine and stats is None and xs.size and \
        (w is None) == (b is None) and device_fused.usable(xp, xs, *(() if w is None else (w, b)))
    if per_group_affine and not device_batch:
        stats_shape = tuple(1 if i in axes else s for i, s in enumerate(group_shape))
        scale = None if w is None else w.reshape(stats_shape)
        shift = None if b is None else b.reshape(stats_shape)
    # layer norm's weight and bias lie along the group view's last axis: on a device the
    # normalising kernel applies them too (one pass where there were two)
    feature = None
    if not per_group_affine and w is not None and axes == (len(group_shape) - 1,) and \
            w.size == group_shape[-1] and (b is None or b.size == w.size) and \
            stats is None and xs.size and device_fused.usable(xp, xs, w, *(
                () if b is None else (b,))):
        feature = (fused.shaped(w, (w.size,)), None if b is None else fused.shaped(b, (b.size,)))
    if device_batch:
        y, mean, invstd, var = device_fused.batch_normalize(xp, xs, axes, eps, w, b)
        stats_out = (mean, invstd, var)
    elif stats is None and xs.size:
        y, mean, invstd, flat = fused.normalize_batch_stats(xp, xs, axes, eps, scale, shift,
                                                            feature)
        stats_out = (flat[0], invstd, flat[1])
    elif stats is None:  # empty: numpy's mean gives the nan statistics
        mean = xs.mean(axis=axes, keepdims=True)
        var = xs.var(axis=axes, keepdims=True)
        invstd = (1.0 / xp.sqrt(var + eps)).astype(xs.dtype, copy=False)
        y = fused.normalize_given_stats(xp, xs, mean, invstd, scale, shift)
        stats_out = (mean, invstd, var)
    else:
        mean, invstd = stats
        y = fused.normalize_given_stats(xp, xs, mean, invstd, scale, shift)
        stats_out = (mean, invstd, None)
    y = fused.shaped(y, x.shape)
    affine_left = not per_group_affine and feature is None  # (else applied already)
    if affine_left and w is not None and device_fused.usable(
            xp, y, w, *(() if b is None else (b,))):  # the two passes below as one kernel
        device_fused.scale_shift_(xp, y, fused.broadcastable(w, affine_shape),
                                  None if b is None else fused.broadcastable(b, affine_shape))
    elif affine_left:
        if w is not None:
            xp.multiply(y, fused.broadcastable(w, affine_shape), out=y)
        if b is not None:
            xp.add(y, fused.broadcastable(b, affine_shape), out=y)
    res = make_tensor(fused._as(y, x.dtype), input._device)
    inputs = tuple(t for t in (input, weight, bias) if t is not None)
    node = record(node_cls, inputs, res)
    if node is not None:
        node.save_for_backward(*((input, weight) if weight is not None else (input,)))
        node.has_weight, node.has_bias = weight is not None, bias is not None
        node.group_shape, node.axes, node.affine_shape = group_shape, axes, affine_shape
        node.wshape = tuple(weight.shape if weight is not None else
                            (bias.shape if bias is not None else ()))
        node.stats, node.eps, node.train = (mean, invstd), eps, stats is None
        node.per_group_affine = per_group_affine
    return (res,) + stats_out


def _check_dtypes(input, params, read_order):
    """PyTorch's dtype rules for a normalization's parameters: `params` (weight, bias, then
    any running statistics; None where absent) must share the input's dtype, checked in the
    order its kernel reads them (`read_order`), unless the first present one differs, which
    asks for the mixed form: a bfloat16/float16 input with float32 parameters (autocast's
    convolution output into a float32 batch norm). Never a silent promotion of the input."""
    first = next((p for p in params if p is not None), None)
    if first is None:
        return
    if first.dtype is not input.dtype:
        if any(p is not None and p.dtype is not _dt.float32 for p in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype not in (_dt.bfloat16, _dt.float16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in read_order:
        if p is not None and p.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                               f"{p.dtype._scalar_name}")


# ---- batch norm ---------------------------------------------------------------------------
def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    if input.ndim < 2:
        raise ValueError(f"Expected 2D or higher input to batch_norm (got {input.ndim}D input)")
    c = input.shape[1]
    if not training:  # evaluation normalises with the running statistics: they must be there
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _check_dtypes(input, (weight, bias, running_mean, running_var),
                  (weight, running_mean, running_var, bias) if training else
                  (weight, bias, running_mean, running_var))
    shape = input.shape
    affine_shape = (1, c) + (1,) * (input.ndim - 2)
    # statistics over N and the spatial dims: of a contiguous input as it is (the same memory
    # as its (N, C, S) view, which einsum sums to the same bits, and no reshapes there and
    # back: each is a call on a device), else of the input viewed as (N, C, S)
    if input.ndim > 3 and input._array.flags.c_contiguous:
        group_shape, axes = tuple(shape), (0,) + tuple(builtins.range(2, input.ndim))
    else:
        group_shape, axes = (shape[0], c, _prod(shape[2:])), (0, 2)
    stats_shape = (1, c) + (1,) * (len(group_shape) - 2)
    n = shape[0] * _prod(shape[2:])  # values per channel
    use_batch = training or running_mean is None or running_var is None
    if use_batch and n == 0:
        # an empty batch: PyTorch returns the empty result, leaves the running statistics as
        # they were (mean and variance of nothing are NaN, which would stick in them) and
        # gives weight and bias zero gradients
        xp = xp_of(input)
        zero = xp.zeros(stats_shape, _opmath(input._array).dtype)
        return _normalize_forward(input, weight, bias, group_shape, axes, affine_shape, eps,
                                  NativeBatchNormBackward0, stats=(zero, zero + 1),
                                  per_group_affine=True)[0]
    if use_batch:
        if training and _prod(shape) // builtins.max(c, 1) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {shape}")
        res, mean, invstd, var = _normalize_forward(input, weight, bias, group_shape, axes,
                                                    affine_shape, eps, NativeBatchNormBackward0,
                                                    per_group_affine=True)
        if training and running_mean is not None and running_var is not None:
            xp = xp_of(input)
            m = momentum if momentum is not None else 0.0
            correction = n / builtins.max(n - 1, 1)
            rm, rv = running_mean._array, running_var._array
            if device_fused.usable(xp, rm, rv, mean, var) and rm.shape == rv.shape == (c,) \
                    and mean.size == var.size == c:
                device_fused.running_update_(xp, rm, rv, mean, var, correction, m)
            else:
                unbiased = var * correction
                for arr, stat in ((rm, mean), (rv, unbiased)):
                    # arr * (1 - m) + stat * m, written in place: the same roundings as a
                    # fresh sum assigned back, in 3 array calls, not 8
                    update = xp.multiply(fused._as(fused.shaped(stat, (c,)), arr.dtype), m)
                    arr *= 1 - m
                    arr += update
            running_mean._vc.value += 1
            running_var._vc.value += 1
        return res
    xp = xp_of(input)
    rm = _opmath(running_mean._array).reshape(stats_shape)
    rv = _opmath(running_var._array).reshape(stats_shape)
    invstd = fused._as(1.0 / xp.sqrt(rv + eps), rm.dtype)
    res = _normalize_forward(input, weight, bias, group_shape, axes, affine_shape, eps,
                             NativeBatchNormBackward0, stats=(rm, invstd),
                             per_group_affine=True)[0]
    return res


def batch_norm(input, *args, **kwargs):
    """`F.batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
    momentum=0.1, eps=1e-05)`, or `torch.batch_norm(input, weight, bias, running_mean,
    running_var, training, momentum, eps, cudnn_enabled)`."""
    if len(args) == 8 or "cudnn_enabled" in kwargs:
        names = ("weight", "bias", "running_mean", "running_var", "training", "momentum", "eps",
                 "cudnn_enabled")
        a = dict(zip(names, args))
        a.update(kwargs)
        return follow_channels_last(_batch_norm(
            input, a["running_mean"], a["running_var"], a["weight"], a["bias"], a["training"],
            a["momentum"], a["eps"]), input)  # (a device's fused kernel writes it contiguous)
    names = ("running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
    a = {"weight": None, "bias": None, "training": False, "momentum": 0.1, "eps": 1e-5}
    a.update(zip(names, args))
    a.update(kwargs)
    return follow_channels_last(_batch_norm(
        input, a["running_mean"], a["running_var"], a["weight"], a["bias"], a["training"],
        a["momentum"], a["eps"]), input)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out = _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    xp = xp_of(input)
    axes = (0,) + tuple(builtins.range(2, input.ndim))
    if training:
        x = _opmath(input._array)
        mean = x.mean(axis=axes)
        invstd = 1.0 / xp.sqrt(x.var(axis=axes) + eps)
        return out, make_tensor(mean, input._device), make_tensor(invstd.astype(mean.dtype),
                                                                  input._device)
    empty = xp.zeros((0,), dtype=_opmath(input._array).dtype)
    return out, make_tensor(empty, input._device), make_tensor(empty.copy(), input._device)


# ---- layer norm, group norm, RMS norm, instance norm ----------------------------------------
def _shape_list(s):
    return [s] if isinstance(s, (builtins.int, np.integer)) else list(s)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    ns = _shape_list(normalized_shape)
    k = len(ns)
    if list(input.shape[input.ndim - k:]) != ns or k > input.ndim or k == 0:
        raise RuntimeError(f"Given normalized_shape={ns}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != ns:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but "
                               f"got {what} of shape {list(t.shape)} and normalized_shape = {ns}")
    _check_dtypes(input, (weight, bias), (weight, bias))
    lead = input.shape[:input.ndim - k]
    if k == 1 and xp_of(input) is np and _fw_state.level is None and \
            input._array.size >= ONEDNN_MIN_ELEMENTS:
        res = _onednn_layer_norm(input, weight, bias, eps)
        if res is not None:
            return res
    if k == 1 and input.ndim > 1 and input._array.flags.c_contiguous:
        # statistics over the last dim of the input as it is, not of its (rows, D) view: the
        # same memory, which einsum sums to the same bits, and no reshapes there and back
        # (each a call on a device)
        group_shape, axes = tuple(input.shape), (input.ndim - 1,)
    else:
        group_shape, axes = (_prod(lead), _prod(ns)), (1,)
    affine_shape = (1,) * len(lead) + tuple(ns)
    res = _normalize_forward(input, weight, bias, group_shape, axes, affine_shape, eps,
                             NativeLayerNormBackward0)[0]
    return res


# Layer norm by oneDNN's kernel from this many elements: its call costs ~40 us more than the
# NumPy passes, which are faster up to ~8K elements (fwd+bwd at 1 thread, oneDNN against NumPy:
# (1, 8, 64) 158 vs 119 us, (4, 32, 64) 165 vs 146, (8, 32, 64) 169 vs 191, (16, 64, 128) 424
# vs 798; a tiny GPT's step is Python-bound, /work/notes/s34/ln_tiny.py).
ONEDNN_MIN_ELEMENTS = 1 << 13
# Layer norm on oneDNN's threads from this many elements, where the products run on OpenMP's
# threads too (`_gemm.threaded`; see ops/_recurrent_fused's ONEDNN_PARALLEL_MIN_MACS).
ONEDNN_PARALLEL_MIN_ELEMENTS = 1 << 16


def _onednn_layer_norm(input, weight, bias, eps):
    """layer_norm over the last dim by oneDNN's kernel, where it is installed (`_dnnl`), or
    None: fwd+bwd of a GPT's (16, 64, 128) activations in 0.25 ms, against 0.95 by ember's
    NumPy passes and 0.39 by PyTorch's own kernel (1 thread). The node is the NumPy path's
    (its statistics as that path keeps them), so a double backward takes the closed form."""
    x = input._array
    w = None if weight is None else weight._array
    b = None if bias is None else bias._array
    threads = intra_threads() if x.size >= ONEDNN_PARALLEL_MIN_ELEMENTS and threaded() else 1
    done = _dnnl_layers.layer_norm_forward(x, w, b, eps, threads)
    if done is None:
        return None
    y, mean, var = done
    res = make_tensor(y, input._device)
    inputs = tuple(t for t in (input, weight, bias) if t is not None)
    node = record(NativeLayerNormBackward0, inputs, res)
    if node is not None:
        node.save_for_backward(*((input, weight) if weight is not None else (input,)))
        node.has_weight, node.has_bias = weight is not None, bias is not None
        node.group_shape, node.axes = tuple(input.shape), (input.ndim - 1,)
        node.affine_shape = (1,) * (input.ndim - 1) + (input.shape[-1],)
        node.wshape = tuple(weight.shape if weight is not None else
                            (bias.shape if bias is not None else ()))
        invstd = np.float32(1.0) / np.sqrt(var + np.float32(eps))
        node.stats, node.eps, node.train = (mean[..., None], invstd[..., None]), eps, True
        node.per_group_affine = False
        node.onednn = (mean, var, b, threads)
    return res


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(_shape_list(normalized_shape))
    x = _opmath(input._array)
    axes = tuple(builtins.range(input.ndim - k, input.ndim))
    xp = xp_of(input)
    mean = x.mean(axis=axes, keepdims=True)
    rstd = (1.0 / xp.sqrt(x.var(axis=axes, keepdims=True) + eps)).astype(mean.dtype)
    return out, make_tensor(mean, input._device), make_tensor(rstd, input._device)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} "
                               f"and input of shape {list(input.shape)}")
    _check_dtypes(input, (weight, bias), (weight, bias))
    group_shape = (n, num_groups, (c // num_groups) * _prod(input.shape[2:]))
    affine_shape = (1, c) + (1,) * (input.ndim - 2)
    res = _normalize_forward(input, weight, bias, group_shape, (2,), affine_shape, eps,
                                   NativeGroupNormBackward0)[0]
    return follow_channels_last(res, input)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    out = group_norm(input, group, weight, bias, eps)
    x = _opmath(input._array).reshape(N, group, -1)
    xp = xp_of(input)
    mean = x.mean(axis=2)
    rstd = (1.0 / xp.sqrt(x.var(axis=2) + eps)).astype(mean.dtype)
    return out, make_tensor(mean, input._device), make_tensor(rstd, input._device)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    ns = _shape_list(normalized_shape)
    k = len(ns)
    if list(input.shape[input.ndim - k:]) != ns or k > input.ndim:
        raise RuntimeError(f"Given normalized_shape={ns}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size"
                           f"{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(_opmath(input._array).dtype if input.dtype is not _dt.bfloat16
                             else np.float32).eps) if input.dtype is not _dt.bfloat16 else 0.0078125
    dims = tuple(builtins.range(input.ndim - k, input.ndim))
    # PyTorch's composite, node for node: half precision computed in float32, eps added
    # as a Scalar (AddBackward1), the result cast back to the input's dtype
    x = input.to(_dt.float32) if input.dtype in (_dt.float16, _dt.bfloat16) else input
    out = x * scalar_op("add", x.pow(2).mean(dims, keepdim=True), eps).rsqrt()
    if weight is not None:
        out = out * weight
    # contiguous whatever the input's layout, before the cast back (CloneBackward0 there)
    return out.contiguous().to(input.dtype)


def _verify_spatial_size(shape):
    size_prods = _prod(shape[2:])
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{shape}")


def instance_norm(input, *args, **kwargs):
    """`F.instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
    use_input_stats=True, momentum=0.1, eps=1e-05)`, or `torch.instance_norm(input, weight,
    bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)`."""
    if len(args) == 8 or "cudnn_enabled" in kwargs:
        names = ("weight", "bias", "running_mean", "running_var", "use_input_stats",
                 "momentum", "eps", "cudnn_enabled")
        a = dict(zip(names, args))
        a.update(kwargs)
    else:
        names = ("running_mean", "running_var", "weight", "bias", "use_input_stats",
                 "momentum", "eps")
        a = {"running_mean": None, "running_var": None, "weight": None, "bias": None,
             "use_input_stats": True, "momentum": 0.1, "eps": 1e-5}
        a.update(zip(names, args))
        a.update(kwargs)
        if a["use_input_stats"]:
            _verify_spatial_size(input.shape)
    rm, rv, w, b = a["running_mean"], a["running_var"], a["weight"], a["bias"]
    use_stats, momentum, eps = a["use_input_stats"], a["momentum"], a["eps"]
    n, c = input.shape[0], input.shape[1]
    x = input.reshape((1, n * c) + tuple(input.shape[2:]))
    def rep(t):  # each channel's parameter for each sample (PyTorch's RepeatBackward0)
        return None if t is None else t.repeat(n)
    rm_, rv_ = _tile_buf(rm, n), _tile_buf(rv, n)
    out = _batch_norm(x, rm_, rv_, rep(w), rep(b), use_stats, momentum, eps)
    if use_stats:
        for buf, rep_buf in ((rm, rm_), (rv, rv_)):
            if buf is not None:
                buf._array[...] = rep_buf._array.reshape(n, c).mean(axis=0).astype(
                    buf._array.dtype)
                buf._vc.value += 1
    return out.reshape(input.shape)


def _tile_buf(t, n):
    if t is None:
        return None
    xp = xp_of(t)
    return make_tensor(xp.tile(t._array, n), t._device)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    # PyTorch's composite, node for node: the squares averaged over a zero-padded window of
    # channels by an average pool
    from ..pooling import avg_pool2d, avg_pool3d
    from ..spatial import pad
    div = input.mul(input)
    lo, hi = size // 2, (size - 1) // 2
    if dim == 3:
        div = avg_pool2d(pad(div.unsqueeze(1), (0, 0, lo, hi)), (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = avg_pool3d(pad(div, (0, 0, 0, 0, lo, hi)), (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    # the norm op itself, as PyTorch: its backward gives a zero vector's norm gradient 0 (a
    # hand-made sqrt(sum(x * x)) gives inf * 0 = NaN there) and shares p=inf among ties
    norm = input.norm(p, dim, keepdim=True)
    denom = norm.clamp_min(eps).expand_as(input)
    res = input / denom
    if out is not None:
        from .._writes import write_out
        return write_out(out, res, "normalize")
    return res
