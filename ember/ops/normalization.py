"""Normalisation, dropout and embedding ops, with derivatives.

Batch, layer and group norm share one backward (`_NormBackward`): the closed form
    dx = invstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
over each normalisation group. A first-order backward uses the statistics saved by the
forward; under `create_graph` they are recomputed from the input with ember ops, so the
formula differentiates again.

Where PyTorch's top-level function and its `nn.functional` namesake take different
arguments (`torch.batch_norm` / `F.batch_norm`, `torch.embedding(weight, indices)` /
`F.embedding(input, weight)` ...), one function here accepts both forms.

Embedding gradients accumulate rows with `bincount` (vectorised on either backend), never
`add.at`; the accumulation and the row gather are each other's adjoints, both recorded,
so embedding differentiates twice.
"""
import builtins
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .._state import grad as _grad_state
from .._tensor import Tensor, _wrap_dim, make_tensor
from ._graph import Node, inplace, record
from .pointwise import where, xp_of

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
           "native_batch_norm", "native_layer_norm", "native_group_norm", "dropout", "dropout_",
           "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
           "feature_dropout", "feature_dropout_", "embedding"]
METHODS = []
FUNCTIONAL = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "local_response_norm",
              "normalize", "rms_norm", "dropout", "dropout1d", "dropout2d", "dropout3d",
              "alpha_dropout", "feature_alpha_dropout", "embedding", "embedding_bag", "one_hot"]


def _type_name(d):
    from ._graph import _type_name as name
    return name(d)


def _prod(xs):
    n = 1
    for s in xs:
        n *= s
    return n


def _opmath(arr):
    return arr.astype(np.float32) if arr.dtype in (np.dtype(np.float16), _dt.bfloat16.np) else arr


# ---- the shared normalisation core ---------------------------------------------------------
class _NormBackward(Node):
    """Inputs: (input[, weight][, bias]). Fields: `group_shape` (input viewed so that the
    statistics run over `axes`), `affine_shape` (weight/bias broadcast over the input),
    `stats` (mean, invstd arrays in the group view), `eps`, `train` (batch statistics
    were used; otherwise invstd is a constant)."""

    def backward(self, grad):
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


class NativeBatchNormBackward0(_NormBackward):
    pass


class NativeLayerNormBackward0(_NormBackward):
    pass


class NativeGroupNormBackward0(_NormBackward):
    pass


def _normalize_forward(input, weight, bias, group_shape, axes, affine_shape, eps, node_cls,
                       stats=None):
    """y = (x - mean) * invstd * w + b, statistics over `axes` of x viewed as `group_shape`
    (or the given (mean, invstd) arrays). Returns (output, mean, invstd)."""
    x = input._array
    xp = xp_of(input)
    xs = _opmath(x).reshape(group_shape)
    if stats is None:
        mean = xs.mean(axis=axes, keepdims=True)
        c = xs - mean
        var = (c * c).mean(axis=axes, keepdims=True)
        invstd = 1.0 / xp.sqrt(var + eps)
        stats_out = (mean, invstd, var)
        invstd = invstd.astype(xs.dtype, copy=False)
    else:
        mean, invstd = stats
        c = xs - mean
        stats_out = (mean, invstd, None)
    y = (c * invstd).reshape(x.shape)
    if weight is not None:
        y = y * _opmath(weight._array).reshape(affine_shape)
    if bias is not None:
        y = y + _opmath(bias._array).reshape(affine_shape)
    res = make_tensor(y.astype(x.dtype, copy=False), input._device)
    inputs = tuple(t for t in (input, weight, bias) if t is not None)
    node = record(node_cls, inputs, res)
    if node is not None:
        node.save_for_backward(*((input, weight) if weight is not None else (input,)))
        node.has_weight, node.has_bias = weight is not None, bias is not None
        node.group_shape, node.axes, node.affine_shape = group_shape, axes, affine_shape
        node.wshape = tuple(weight.shape if weight is not None else
                            (bias.shape if bias is not None else ()))
        node.stats, node.eps, node.train = (mean, invstd), eps, stats is None
    return (res,) + stats_out


# ---- batch norm ---------------------------------------------------------------------------
def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    if input.ndim < 2:
        raise ValueError(f"Expected 2D or higher input to batch_norm (got {input.ndim}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    shape = input.shape
    affine_shape = (1, c) + (1,) * (input.ndim - 2)
    # statistics over N and the spatial dims: the input viewed as (N, C, S)
    group_shape = (shape[0], c, _prod(shape[2:]))
    axes = (0, 2)
    use_batch = training or running_mean is None or running_var is None
    if use_batch:
        if training and _prod(shape) // builtins.max(c, 1) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {shape}")
        res, mean, invstd, var = _normalize_forward(input, weight, bias, group_shape, axes,
                                                    affine_shape, eps, NativeBatchNormBackward0)
        if training and running_mean is not None and running_var is not None:
            n = group_shape[0] * group_shape[2]
            xp = xp_of(input)
            unbiased = var * (n / builtins.max(n - 1, 1))
            m = momentum if momentum is not None else 0.0
            for buf, stat in ((running_mean, mean), (running_var, unbiased)):
                arr = buf._array
                new = arr * (1 - m) + stat.reshape(c).astype(arr.dtype) * m
                arr[...] = xp.asarray(new).astype(arr.dtype)
                buf._vc.value += 1
        return res
    xp = xp_of(input)
    rm = _opmath(running_mean._array).reshape(1, c, 1)
    rv = _opmath(running_var._array).reshape(1, c, 1)
    invstd = (1.0 / xp.sqrt(rv + eps)).astype(rm.dtype, copy=False)
    res = _normalize_forward(input, weight, bias, group_shape, axes, affine_shape, eps,
                             NativeBatchNormBackward0, stats=(rm, invstd))[0]
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
        return _batch_norm(input, a["running_mean"], a["running_var"], a["weight"], a["bias"],
                           a["training"], a["momentum"], a["eps"])
    names = ("running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
    a = {"weight": None, "bias": None, "training": False, "momentum": 0.1, "eps": 1e-5}
    a.update(zip(names, args))
    a.update(kwargs)
    return _batch_norm(input, a["running_mean"], a["running_var"], a["weight"], a["bias"],
                       a["training"], a["momentum"], a["eps"])


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out = _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    xp = xp_of(input)
    c = input.shape[1]
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
    lead = input.shape[:input.ndim - k]
    group_shape = (_prod(lead), _prod(ns))
    affine_shape = (1,) * len(lead) + tuple(ns)
    res = _normalize_forward(input, weight, bias, group_shape, (1,), affine_shape, eps,
                                   NativeLayerNormBackward0)[0]
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
    group_shape = (n, num_groups, (c // num_groups) * _prod(input.shape[2:]))
    affine_shape = (1, c) + (1,) * (input.ndim - 2)
    res = _normalize_forward(input, weight, bias, group_shape, (2,), affine_shape, eps,
                                   NativeGroupNormBackward0)[0]
    return res


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
    out = input * ((input * input).mean(dims, keepdim=True) + eps) ** -0.5
    return out * weight if weight is not None else out


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
    def rep(t):
        return None if t is None else t.reshape(1, c).expand(n, c).reshape(n * c)
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
    sq = input * input
    c = input.shape[1]
    xp = xp_of(input)
    # the zero-padded channel window as a band matrix: total[c] = sum of sq[c'] for
    # c - size//2 <= c' <= c + (size-1)//2
    off = xp.arange(c).reshape(1, c) - xp.arange(c).reshape(c, 1)  # [c, c'] = c' - c
    band = ((off >= -(size // 2)) & (off <= (size - 1) // 2)).astype(input._array.dtype)
    total = sq.movedim(1, -1).matmul(make_tensor(band.T.copy(), input._device)).movedim(-1, 1)
    div = (total / size * alpha + k) ** beta
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if p == 2:
        norm = (input * input).sum(dim, keepdim=True).sqrt()
    elif p == math.inf:
        a = input.abs()
        arr = a._array
        xp = xp_of(input)
        d = _wrap_dim(dim, input.ndim)
        idx = xp.expand_dims(arr.argmax(axis=d), d)
        shape = [1] * arr.ndim
        shape[d] = arr.shape[d]
        hot = make_tensor((xp.arange(arr.shape[d]).reshape(shape) == idx), input._device)
        norm = (a * hot).sum(dim, keepdim=True)
    elif p == 1:
        norm = input.abs().sum(dim, keepdim=True)
    else:
        norm = (input.abs() ** p).sum(dim, keepdim=True) ** (1.0 / p)
    denom = norm.clamp_min(eps).expand_as(input)
    res = input / denom
    if out is not None:
        from ._graph import write_out
        return write_out(out, res, "normalize")
    return res


# ---- dropout --------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _bernoulli_keep(input, shape, p):
    """A float mask of `shape`: 1 with probability 1 - p."""
    from ..random import generator_for
    rng = generator_for(input._device, None).rng
    return (rng.random(shape) >= p).astype(_opmath(input._array).dtype)


def _feature_shape(input):
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def _dropout_impl(input, p, train, inplace_, feature, alpha):
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = make_tensor(xp_of(input).zeros((), dtype=input._array.dtype), input._device)
        return input.mul_(zero) if inplace_ else input * zero
    shape = _feature_shape(input) if feature else tuple(input.shape)
    keep = _bernoulli_keep(input, shape, p)
    if alpha:
        a_ = 1.7580993408473766
        a = 1.0 / math.sqrt((a_ * a_ * p + 1) * (1 - p))
        b = make_tensor(((keep - 1) * (a_ * a) + a_ * a * p).astype(input._array.dtype),
                        input._device)
        noise = make_tensor((keep * a).astype(input._array.dtype), input._device)
        if inplace_:
            return input.mul_(noise).add_(b)
        return input * noise + b
    noise = make_tensor((keep / (1 - p)).astype(input._array.dtype), input._device)
    return input.mul_(noise) if inplace_ else input * noise


def _train_arg(training, train):
    return training if train is None else train


def dropout(input, p=0.5, training=True, inplace=False, *, train=None):
    """`F.dropout(input, p=0.5, training=True, inplace=False)`; also `torch.dropout(input, p,
    train)`."""
    _check_p(p)
    return _dropout_impl(input, p, _train_arg(training, train), inplace, False, False)


def dropout_(input, p=0.5, train=True):
    _check_p(p)
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, True, False)


def feature_dropout_(input, p, train):
    return _dropout_impl(input, p, train, True, True, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False, *, train=None):
    _check_p(p)
    return _dropout_impl(input, p, _train_arg(training, train), inplace, False, True)


def alpha_dropout_(input, p=0.5, train=False):
    return _dropout_impl(input, p, train, True, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False, *, train=None):
    _check_p(p)
    return _dropout_impl(input, p, _train_arg(training, train), inplace, True, True)


def feature_alpha_dropout_(input, p=0.5, train=False):
    return _dropout_impl(input, p, train, True, True, True)


def _unbatched_feature_dropout(input, p, training, inplace_, batched):
    if batched:
        return _dropout_impl(input, p, training, inplace_, True, False)
    if inplace_:
        view = input.unsqueeze(0)
        _dropout_impl(view, p, training, True, True, False)
        return input
    return _dropout_impl(input.unsqueeze(0), p, training, False, True, False).squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.ndim
    if d not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {d}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs "
                           "with 1 spatial dimension, a channel dimension, and an optional batch "
                           "dimension (i.e. 2D or 3D inputs).")
    return _unbatched_feature_dropout(input, p, training, inplace, d == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.ndim
    if d not in (3, 4):
        warnings.warn(f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout2d "
                      "exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "3D or 4D inputs).", stacklevel=2)
    if d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.ndim
    if d not in (4, 5):
        warnings.warn(f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and "
                      "will result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. Note that dropout3d "
                      "exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "4D or 5D inputs).", stacklevel=2)
    return _unbatched_feature_dropout(input, p, training, inplace, d == 5)


# ---- embedding ------------------------------------------------------------------------------
class _RowAccumulate(Node):
    """out[n, D] = sum of value rows (M, D) into rows `index`: the adjoint of a row gather."""

    def backward(self, grad):
        return _gather_rows(grad, self.index, self.scale)


class EmbeddingDenseBackward0(_RowAccumulate):
    pass


class _RowGather(Node):
    def backward(self, grad):
        return _accumulate_rows(grad, self.index, self.num_rows, self.scale)


class EmbeddingBackward0(_RowGather):
    def backward(self, grad):
        return _accumulate_rows(grad.reshape(-1, grad.shape[-1]), self.index, self.num_rows,
                                self.scale)


def _accumulate_rows(values, index, num_rows, scale=None, node_cls=EmbeddingDenseBackward0):
    """rows[index[i]] += values[i] * scale[i] (index: int array (M,), values (M, *rest))."""
    xp = xp_of(values)
    v = values._array
    rest = v.shape[1:]
    d = _prod(rest)
    flat = v.reshape(v.shape[0], d)
    if scale is not None:
        flat = flat * scale.reshape(-1, 1).astype(flat.dtype)
    if d == 0 or v.shape[0] == 0:
        out = xp.zeros((num_rows,) + rest, dtype=v.dtype)
    else:
        pos = (index.reshape(-1, 1) * d + xp.arange(d).reshape(1, d)).reshape(-1)
        data = flat.reshape(-1)
        if data.dtype.kind == "c":
            out = (xp.bincount(pos, data.real, num_rows * d)
                   + 1j * xp.bincount(pos, data.imag, num_rows * d))
        else:
            out = xp.bincount(pos, data.astype(np.float64), num_rows * d)
        out = out.astype(v.dtype).reshape((num_rows,) + rest)
    res = make_tensor(out, values._device)
    node = record(node_cls, (values,), res)
    if node is not None:
        node.index, node.scale = index, scale
    return res


def _gather_rows(table, index, scale=None, node_cls=_RowGather):
    """table[index] (* scale per row), recorded."""
    xp = xp_of(table)
    t = table._array
    out = xp.take(t, index, axis=0)
    if scale is not None:
        out = out * scale.reshape((-1,) + (1,) * (t.ndim - 1)).astype(t.dtype)
    res = make_tensor(out, table._device)
    node = record(node_cls, (table,), res)
    if node is not None:
        node.index, node.scale, node.num_rows = index, scale, t.shape[0]
    return res


def _check_indices(indices, fname):
    if indices.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_legacy_type(indices)} instead (while checking arguments for "
                           f"{fname})")


def _legacy_type(t):
    prefix = "torch.cuda." if t.device.type == "cuda" else "torch."
    return prefix + t.dtype._legacy


def _embedding_renorm(weight, idx, max_norm, norm_type):
    xp = xp_of(weight)
    rows = xp.unique(idx.reshape(-1))
    w = weight._array
    sel = w[rows]
    if norm_type == math.inf:
        norms = xp.abs(sel).max(axis=1)
    else:
        norms = (xp.abs(sel) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    w[rows] = sel * scale.reshape(-1, 1)
    weight._vc.value += 1


def _embedding(weight, indices, padding_idx, scale_grad_by_freq):
    _check_indices(indices, "embedding")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    xp = xp_of(weight)
    idx = indices._array.astype(np.int64, copy=False).reshape(-1)
    n = weight.shape[0]
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):
        raise IndexError("index out of range in self")
    out = xp.take(weight._array, idx, axis=0).reshape(tuple(indices.shape) + (weight.shape[1],))
    res = make_tensor(out, weight._device)
    node = record(EmbeddingBackward0, (weight,), res)
    if node is not None:
        scale = None
        if padding_idx is not None and padding_idx >= 0:
            scale = (idx != padding_idx).astype(np.float64)
        if scale_grad_by_freq:
            counts = xp.bincount(idx, minlength=n)
            freq = 1.0 / counts[idx]
            scale = freq if scale is None else scale * freq
        node.index, node.scale, node.num_rows = idx, scale, n
    return res


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """`F.embedding(input, weight, ...)`; also `torch.embedding(weight, indices,
    padding_idx=-1, scale_grad_by_freq=False, sparse=False)` (told apart by dtypes)."""
    if (input.dtype.is_floating_point or input.dtype.is_complex) and \
            not (weight.dtype.is_floating_point or weight.dtype.is_complex):
        pad = -1 if padding_idx is None else padding_idx
        sgbf = max_norm if isinstance(max_norm, bool) else scale_grad_by_freq
        return _embedding(input, weight, pad if pad >= 0 else None, sgbf)
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        _check_indices(input, "embedding")
        _embedding_renorm(weight, input._array.astype(np.int64, copy=False), max_norm,
                          norm_type)
    return _embedding(weight, input, padding_idx, scale_grad_by_freq)


class EmbeddingBagBackward0(Node):
    def backward(self, grad):
        saved = self.saved_tensors
        weight = saved[0]
        psw = saved[1] if len(saved) > 1 else None
        gw = gp = None
        if self.mode == "max":
            return _max_grad(grad, self.argrow, weight.shape[0])
        # grad of each looked-up row: its bag's gradient, scaled
        per_row = _gather_rows(grad, self.bag, None)
        if self._next[0][0] is not None:
            scaled = per_row * psw.reshape(-1, 1) if psw is not None else per_row
            gw = _accumulate_rows(scaled, self.idx, weight.shape[0], self.scale)
        if psw is not None and self._next[1][0] is not None:
            rows = _gather_rows(weight, self.idx, self.scale)
            gp = (per_row * rows).sum(-1).reshape(self.psw_shape)
        return (gw, gp) if psw is not None else gw


def _max_grad(grad, argrow, num_rows):
    """grad (B, D) into the rows that were the maxima: argrow (B, D), -1 where none."""
    xp = xp_of(grad)
    b, d = grad.shape
    valid = (argrow >= 0).reshape(-1)
    rows = xp.where(valid, argrow.reshape(-1), 0)
    g = grad.reshape(b * d, 1)
    # one value per (bag, column): accumulate the column-expanded values
    col = xp.tile(xp.arange(d), b)
    pos = rows * d + col
    gcol = g * make_tensor(valid.astype(g._array.dtype).reshape(-1, 1), grad._device)
    out = _accumulate_rows(gcol, pos, num_rows * d, None)
    return out.reshape(num_rows, d)


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, per_sample_weights,
                   include_last_offset, padding_idx):
    _check_indices(indices, "embedding_bag")
    xp = xp_of(weight)
    idx = indices._array.astype(np.int64, copy=False).reshape(-1)
    off = offsets._array.astype(np.int64, copy=False).reshape(-1)
    n, d = weight.shape
    m = idx.size
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):
        raise IndexError("index out of range in self")
    starts = off[:-1] if include_last_offset else off
    nbags = starts.size
    if padding_idx is not None and padding_idx < 0:
        padding_idx = n + padding_idx
    bag = xp.searchsorted(starts, xp.arange(m), side="right") - 1 if m else idx
    if include_last_offset and m:
        bag = xp.minimum(bag, nbags - 1)
    valid = (idx != padding_idx) if padding_idx is not None else xp.ones(m, dtype=bool)
    valid = valid & (bag >= 0)
    bag = xp.where(bag >= 0, bag, 0)
    w = weight._array
    rows = xp.take(w, idx, axis=0)
    if mode == "max":
        counts = xp.bincount(bag[valid], minlength=nbags) if m else xp.zeros(nbags, np.int64)
        pos = xp.arange(m) - xp.take(starts, bag) if m else idx
        lmax = int(pos[valid].max()) + 1 if bool(valid.any()) else 1
        dense = xp.full((nbags, lmax, d), -xp.inf, dtype=_opmath(w).dtype)
        dense[bag[valid], pos[valid]] = rows[valid]
        arg = dense.argmax(axis=1)  # (B, D): position in bag
        out = xp.take_along_axis(dense, arg[:, None, :], axis=1)[:, 0, :]
        empty = (counts == 0)[:, None]
        out = xp.where(empty, 0, out).astype(w.dtype)
        # the row index behind each maximum
        pos_to_idx = xp.full((nbags, lmax), -1, dtype=np.int64)
        pos_to_idx[bag[valid], pos[valid]] = idx[valid]
        argrow = xp.take_along_axis(pos_to_idx, arg, axis=1)
        argrow = xp.where(empty, -1, argrow)
        res = make_tensor(out, weight._device)
        node = record(EmbeddingBagBackward0, (weight,), res)
        if node is not None:
            node.mode, node.argrow = "max", argrow
            node.save_for_backward(weight)
        return res, bag, counts
    scale = valid.astype(np.float64)
    counts = xp.bincount(bag, weights=scale, minlength=nbags) if m else xp.zeros(nbags)
    if mode == "mean":
        scale = scale / xp.maximum(xp.take(counts, bag), 1) if m else scale
    if scale_grad_by_freq and m:
        freq = xp.bincount(idx, minlength=n)
        grad_scale = scale / xp.take(freq, idx)
    else:
        grad_scale = scale
    contrib = rows.astype(np.float64) * scale[:, None] if m else rows
    psw = per_sample_weights
    if psw is not None:
        contrib = contrib * psw._array.reshape(-1, 1).astype(np.float64)
    pos = (bag.reshape(-1, 1) * d + xp.arange(d).reshape(1, d)).reshape(-1)
    out = xp.bincount(pos, contrib.reshape(-1), nbags * d) if m and d else \
        xp.zeros(nbags * d)
    res = make_tensor(out.reshape(nbags, d).astype(w.dtype), weight._device)
    inputs = (weight,) if psw is None else (weight, psw)
    node = record(EmbeddingBagBackward0, inputs, res)
    if node is not None:
        node.mode, node.bag, node.idx, node.scale = mode, bag, idx, grad_scale
        node.psw_shape = tuple(psw.shape) if psw is not None else None
        node.save_for_backward(*inputs)
    return res, bag, counts


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """`F.embedding_bag`. (PyTorch's top-level `torch.embedding_bag`, the native 4-tuple form
    with integer modes, is not exported.)"""
    if weight.dtype is _dt.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        xp = xp_of(input)
        offsets = make_tensor(xp.arange(0, input.numel(), builtins.max(input.size(1), 1),
                                        dtype=np.int64), input._device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _embedding_renorm(weight, input._array.astype(np.int64, copy=False), max_norm,
                          norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    res, _, _ = _embedding_bag(weight, input, offsets, scale_grad_by_freq, mode,
                               per_sample_weights, include_last_offset, padding_idx)
    return res


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = xp_of(tensor)
    arr = tensor._array
    if num_classes == -1:
        if arr.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(arr.max()) + 1
    if arr.size:
        if bool((arr < 0).any()):
            raise RuntimeError("Class values must be non-negative.")
        if bool((arr >= num_classes).any()):
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = (arr[..., None] == xp.arange(num_classes)).astype(np.int64)
    return make_tensor(out, tensor._device)
