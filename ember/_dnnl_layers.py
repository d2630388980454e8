"""An LSTM layer's direction, layer norm over the last dim and GELU's two forms through oneDNN,
where it is installed, on `_dnnl`'s library and plans (see its docstring): oneDNN's LSTM is
the kernel PyTorch's CPU LSTM runs, and its exact GELU gives PyTorch's CPU GELU's bits. Each
routine answers with arrays, or None where NumPy's routines should compute instead."""
import numpy as np

from ._dnnl import (_ALIGN, _FORWARD_TRAINING, DIFF_DST, DIFF_SRC, DIFF_WEIGHTS, DST, SRC,
                    WEIGHTS, DnnlError, _c_strides, _mkldnn, _Plan, _plan, applies,
                    library)

_BACKWARD = 128


# ---- an LSTM layer's direction ---------------------------------------------------------------
SRC_ITER, SRC_ITER_C, DST_ITER, DST_ITER_C, WEIGHTS_ITER, BIAS, WORKSPACE = 2, 3, 18, 19, 34, \
    41, 64
DIFF_SRC_ITER, DIFF_SRC_ITER_C, DIFF_DST_ITER, DIFF_DST_ITER_C, DIFF_WEIGHTS_ITER, DIFF_BIAS = \
    130, 131, 146, 147, 162, 169
_LEFT_TO_RIGHT, _RIGHT_TO_LEFT = 1, 2


def _gates_strides(w, hidden):
    """A PyTorch gate weight (4H, K)'s strides as oneDNN's (1, 1, K, 4, H) ldigo dims."""
    s0, s1 = (s // w.itemsize for s in w.strides)
    return (4 * hidden * w.shape[1], 4 * hidden * w.shape[1], s1, hidden * s0, s0)


def _lstm_plan(kind, x_shape, hidden, reverse, threads):
    """The plan of an LSTM layer's forward (training) or backward: x (T, B, I), no
    projection; PyTorch's gate order (i, f, g, o) is oneDNN's."""
    t, b, i = x_shape
    h = hidden
    key = ("lstm", kind, x_shape, hidden, reverse)
    state = (1, 1, b, h)
    w_layer, w_iter, bias = (1, 1, i, 4, h), (1, 1, h, 4, h), (1, 1, 4, h)
    direction = _RIGHT_TO_LEFT if reverse else _LEFT_TO_RIGHT
    strides_w = _gates_strides(np.empty((4 * h, i), np.float32), h)
    strides_u = _gates_strides(np.empty((4 * h, h), np.float32), h)

    def make(lib, mds):
        plain = {
            "x": mds.plain(x_shape, _c_strides(x_shape)),
            "y": mds.plain((t, b, h), _c_strides((t, b, h))),
            "state": mds.plain(state, _c_strides(state)),
            "w": mds.plain(w_layer, strides_w), "u": mds.plain(w_iter, strides_u),
            "bias": mds.plain(bias, _c_strides(bias))}
        a = mds.any
        lstm = (direction, a(x_shape), a(state), a(state), a(w_layer), a(w_iter), None, None,
                a(bias), a((t, b, h)), a(state), a(state))  # (no peepholes, no projection)
        fwd = mds.primitive("dnnl_lstm_forward_primitive_desc_create", _FORWARD_TRAINING,
                            *lstm, 0, lib.attr)
        inputs = [(SRC, plain["x"]), (SRC_ITER, plain["state"]), (SRC_ITER_C, plain["state"]),
                  (WEIGHTS, plain["w"]), (WEIGHTS_ITER, plain["u"]), (BIAS, plain["bias"])]
        outputs = [(DST, plain["y"]), (DST_ITER, plain["state"]), (DST_ITER_C, plain["state"])]
        if kind == "forward":
            return _Plan(lib, fwd, [(arg, md, "in") for arg, md in inputs] +
                         [(arg, md, "out") for arg, md in outputs] + [(WORKSPACE, None, "out")],
                         threads)
        pd = mds.primitive("dnnl_lstm_backward_primitive_desc_create", _BACKWARD, *lstm,
                           *lstm[1:], 0, fwd, lib.attr)  # (the gradients' descriptors alike)
        return _Plan(lib, pd, [(arg, md, "in") for arg, md in inputs + outputs] + [
            (DIFF_DST, plain["y"], "in"), (DIFF_DST_ITER, plain["state"], "in"),
            (DIFF_DST_ITER_C, plain["state"], "in"), (WORKSPACE, None, "in"),
            (DIFF_SRC, plain["x"], "out"), (DIFF_SRC_ITER, plain["state"], "out"),
            (DIFF_SRC_ITER_C, plain["state"], "out"), (DIFF_WEIGHTS, plain["w"], "sum"),
            (DIFF_WEIGHTS_ITER, plain["u"], "sum"), (DIFF_BIAS, plain["bias"], "sum")], threads)
    return _plan(key, threads, make)


def lstm_forward(x, h0, c0, w_ih, w_hh, bias, reverse, threads):
    """One direction of an LSTM layer over x (T, B, I) float32, from states h0, c0 (B, H),
    with PyTorch's weights w_ih (4H, I), w_hh (4H, H) and summed bias (4H,): (output (T, B,
    H), h_n, c_n, what `lstm_backward` needs), or None."""
    if not applies(x) or not all(isinstance(a, np.ndarray) and a.dtype == np.float32
                                 for a in (h0, c0, w_ih, w_hh, bias)):
        return None
    hidden = w_hh.shape[1]
    plan = _lstm_plan("forward", x.shape, hidden, reverse, threads)
    if plan is None:
        return None
    x, h0, c0, w_ih, w_hh, bias = (np.ascontiguousarray(a)
                                   for a in (x, h0, c0, w_ih, w_hh, bias))
    t, b, _ = x.shape
    y = np.empty((t, b, hidden), np.float32)
    h_n, c_n = np.empty((b, hidden), np.float32), np.empty((b, hidden), np.float32)
    workspace = np.empty(plan.nbytes[WORKSPACE] + _ALIGN, np.uint8)
    ws = workspace[(-workspace.ctypes.data) % _ALIGN:][:plan.nbytes[WORKSPACE]]
    plan.run(x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, ws)
    return y, h_n, c_n, (x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, ws, reverse, threads)


def lstm_backward(saved, d_y, d_hn, d_cn):
    """The gradients (x, h0, c0, w_ih, w_hh, bias) of `lstm_forward`'s direction, from those
    of its output and final states."""
    x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, ws, reverse, threads = saved
    hidden = w_hh.shape[1]
    plan = _lstm_plan("backward", x.shape, hidden, reverse, threads)
    if plan is None:
        raise DnnlError("oneDNN refused the backward of an LSTM whose forward it ran")
    d_y, d_hn, d_cn = (np.ascontiguousarray(a, np.float32) for a in (d_y, d_hn, d_cn))
    d_x, d_h0, d_c0 = np.empty_like(x), np.empty_like(h0), np.empty_like(c0)
    d_wih, d_whh, d_bias = np.empty_like(w_ih), np.empty_like(w_hh), np.empty_like(bias)
    plan.run(x, h0, c0, w_ih, w_hh, bias, y, h_n, c_n, d_y, d_hn, d_cn, ws, d_x, d_h0, d_c0,
             d_wih, d_whh, d_bias)
    return d_x, d_h0, d_c0, d_wih, d_whh, d_bias


# ---- layer norm over the last dim --------------------------------------------------------------
MEAN, VARIANCE, SCALE, SHIFT, DIFF_SCALE, DIFF_SHIFT = 49, 50, 51, 52, 255, 256
_USE_SCALE, _USE_SHIFT = 0x2, 0x4


def _layer_norm_plan(kind, shape, eps, scale, shift, threads):
    """The plan of layer norm's forward (training: it gives the statistics) or backward over
    the last dim of a C-ordered (..., D) array, with or without scale (weight) and shift
    (bias)."""
    flags = (_USE_SCALE if scale else 0) | (_USE_SHIFT if shift else 0)
    key = ("layer_norm", kind, shape, float(eps), flags)

    def make(lib, mds):
        x = mds.plain(shape, _c_strides(shape))
        stat = mds.plain(shape[:-1], _c_strides(shape[:-1]))
        vec = mds.plain(shape[-1:], (1,))
        affine = [(SCALE, vec, "in")] * bool(scale) + [(SHIFT, vec, "in")] * bool(shift)
        fwd = mds.primitive("dnnl_layer_normalization_forward_primitive_desc_create",
                            _FORWARD_TRAINING, x, x, stat, eps, flags, lib.attr)
        if kind == "forward":
            return _Plan(lib, fwd, [(SRC, x, "in")] + affine + [
                (DST, x, "out"), (MEAN, stat, "out"), (VARIANCE, stat, "out")], threads)
        pd = mds.primitive("dnnl_layer_normalization_backward_primitive_desc_create",
                           _BACKWARD, x, x, x, stat, eps, flags, fwd, lib.attr)
        return _Plan(lib, pd, [(SRC, x, "in"), (DIFF_DST, x, "in"), (MEAN, stat, "in"),
                               (VARIANCE, stat, "in")] + affine + [
            (DIFF_SRC, x, "out")] + [(DIFF_SCALE, vec, "out")] * bool(scale) +
            [(DIFF_SHIFT, vec, "out")] * bool(shift), threads)
    return _plan(key, threads, make)


def layer_norm_forward(x, weight, bias, eps, threads):
    """Layer norm of x (..., D) (float32, C-ordered) over its last dim, with weight and bias
    (D,) or None: (y, mean, variance), the statistics of shape x.shape[:-1]; or None."""
    if library() is None or not _mkldnn.enabled or not isinstance(x, np.ndarray) or \
            x.dtype != np.float32 or not x.size or x.ndim not in (2, 3, 4, 5) or \
            not x.flags.c_contiguous or \
            any(a is not None and (not isinstance(a, np.ndarray) or a.dtype != np.float32)
                for a in (weight, bias)):
        return None
    plan = _layer_norm_plan("forward", x.shape, eps, weight is not None, bias is not None,
                            threads)
    if plan is None:
        return None
    y = np.empty_like(x)
    mean, var = np.empty(x.shape[:-1], np.float32), np.empty(x.shape[:-1], np.float32)
    affine = [np.ascontiguousarray(a) for a in (weight, bias) if a is not None]
    plan.run(x, *affine, y, mean, var)
    return y, mean, var


def layer_norm_backward(x, gy, mean, var, weight, bias, eps, threads):
    """The gradients (x, weight or None, bias or None) of `layer_norm_forward`."""
    plan = _layer_norm_plan("backward", x.shape, eps, weight is not None, bias is not None,
                            threads)
    if plan is None:
        raise DnnlError("oneDNN refused the backward of a layer norm whose forward it ran")
    affine = [np.ascontiguousarray(a) for a in (weight, bias) if a is not None]
    dx = np.empty_like(x)
    dw = None if weight is None else np.empty(weight.shape, np.float32)
    db = None if bias is None else np.empty(bias.shape, np.float32)
    plan.run(x, np.ascontiguousarray(gy, np.float32), mean, var, *affine, dx,
             *[a for a in (dw, db) if a is not None])
    return dx, dw, db


# ---- elementwise functions (GELU's two forms) ----------------------------------------------------
ELTWISE = {"gelu_erf": 0x31, "gelu_tanh": 0x2b}  # dnnl_eltwise_gelu_erf, dnnl_eltwise_gelu_tanh


def _eltwise_plan(kind, algorithm, size, threads):
    """The plan of an elementwise function's forward or backward (from its input) over a
    flat float32 array of `size` elements."""
    def make(lib, mds):
        x = mds.plain((size,), (1,))
        fwd = mds.primitive("dnnl_eltwise_forward_primitive_desc_create", _FORWARD_TRAINING,
                            ELTWISE[algorithm], x, x, 0.0, 0.0, lib.attr)
        if kind == "forward":
            return _Plan(lib, fwd, [(SRC, x, "in"), (DST, x, "out")], threads)
        pd = mds.primitive("dnnl_eltwise_backward_primitive_desc_create", ELTWISE[algorithm],
                           x, x, x, 0.0, 0.0, fwd, lib.attr)
        return _Plan(lib, pd, [(SRC, x, "in"), (DIFF_DST, x, "in"), (DIFF_SRC, x, "out")],
                     threads)
    return _plan(("eltwise", kind, algorithm, size), threads, make)


def _flat_float32(a):
    return library() is not None and _mkldnn.enabled and isinstance(a, np.ndarray) and \
        a.dtype == np.float32 and a.size > 0 and a.flags.c_contiguous


def eltwise(algorithm, x, threads):
    """ELTWISE[algorithm](x) for a C-ordered float32 array, or None."""
    if not _flat_float32(x):
        return None
    plan = _eltwise_plan("forward", algorithm, x.size, threads)
    if plan is None:
        return None
    y = np.empty_like(x)
    plan.run(x.reshape(-1), y.reshape(-1))
    return y


def eltwise_backward(algorithm, x, gy, threads):
    """gy * ELTWISE[algorithm]'(x), or None."""
    if not _flat_float32(x) or not isinstance(gy, np.ndarray) or gy.shape != x.shape:
        return None
    plan = _eltwise_plan("backward", algorithm, x.size, threads)
    if plan is None:
        return None
    dx = np.empty_like(x)
    plan.run(x.reshape(-1), np.ascontiguousarray(gy, np.float32).reshape(-1), dx.reshape(-1))
    return dx
