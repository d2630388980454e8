"""The three graph ops (`_conv`, `_conv_transpose`, `_conv_weight`) over the array routines:
each one's derivatives are the other two, so double backward is convolutions again."""
import numpy as np

from ..._memory_format import c_ordered, follow_channels_last
from ..._tensor import make_tensor, xp_of
from ..._state import (flop_counter as _flops, grad as _grad_state,
                       selective_checkpoint_anywhere as _sac_anywhere)
from .._graph import Node, first_order_arrays, kept_output, record
from .._planes import spread
from ..normalization._fused import MAX_DIMS, sum_over
from ._routines import conv_backward, conv_forward, conv_transpose_forward, conv_weight_grad


def _bias_grad(grad):
    axes = (0,) + tuple(range(2, grad.ndim))
    arrays = first_order_arrays(grad)
    if arrays is not None and grad.ndim <= MAX_DIMS:
        # per channel as einsum sums it (batch norm's bias gradient): NumPy's sum over dims
        # (0, 2, 3) ran 3.5x slower ((32, 16, 28, 28) float32: 131 against 37 us)
        return make_tensor(sum_over(xp_of(grad), axes, arrays[0], keepdims=False),
                           grad._device)
    return grad.sum(list(axes))


def _add_bias(xp, y, bias):
    if bias is not None:
        y += spread(xp, bias._array.reshape((1, -1) + (1,) * (y.ndim - 2)), y)
    return y


def laid_out(out, input, weight):
    """A convolution's fresh result (or input gradient) in PyTorch's layout: channels_last
    where the input or the weight suggests it, except that PyTorch's CPU build computes float64
    3-d convolutions by a kernel that writes them contiguous (its float32 and 2-d ones keep the
    format)."""
    if out._array.ndim == 5 and out._array.dtype == np.float64 and out._device.type == "cpu":
        out._array = c_ordered(out._array)
        return out
    return follow_channels_last(out, input, weight)


class ConvolutionBackward0(Node):
    """conv (transposed=False) or conv_transpose (transposed=True) of input and weight.
    `kept`: what the forward kept for the weight gradient (used once, then let go)."""

    kept = None

    def backward(self, grad):
        counter = _flops.active
        if counter is None:
            return self._backward(grad)
        # counted as one convolution_backward, as PyTorch's ATen runs it (the convolutions
        # that compute it are not counted again)
        _flops.active = None
        try:
            grads = self._backward(grad)
        finally:
            _flops.active = counter
        x, w = self.saved_tensors
        nxt = self._next
        mask = [nxt[0][0] is not None, nxt[1][0] is not None,
                len(nxt) == 3 and nxt[2][0] is not None]
        stride, padding, dilation, output_padding, groups = _aten_params(self.params)
        bias_sizes = _bias_sizes(w, self.params, self.transposed) if len(nxt) == 3 else None
        counter("convolution_backward", (grad, x, w, bias_sizes, stride, padding, dilation,
                                         self.transposed, output_padding, groups, mask),
                None, tuple(grads) + (None,) * (3 - len(grads)))
        return grads

    def _backward(self, grad):
        x, w = self.saved_tensors
        p, nxt = self.params, self._next
        gx = gw = None
        if self.transposed:
            if nxt[0][0] is not None:
                gx = _conv(grad, w, None, p, x.shape[2:])
            if nxt[1][0] is not None:
                gw = _conv_weight(grad, x, p, w.shape)
        else:
            both = None
            if nxt[0][0] is not None and nxt[1][0] is not None and not _sac_anywhere.count:
                both = conv_backward(xp_of(grad), x._array, grad._array, w._array, p, self.kept)
            if both is not None:  # one pass gave both (recorded as the two ops below)
                gx = _conv_transpose(grad, w, None, p, x.shape[2:], result=both[0])
                gw = _conv_weight(x, grad, p, w.shape, result=both[1])
            else:
                if nxt[0][0] is not None:
                    gx = _conv_transpose(grad, w, None, p, x.shape[2:])
                if nxt[1][0] is not None:
                    gw = _conv_weight(x, grad, p, w.shape, self.kept)
        self.kept = None
        if len(nxt) == 3:
            return gx, gw, (_bias_grad(grad) if nxt[2][0] is not None else None)
        return gx, gw


class ConvolutionBackwardBackward0(Node):
    """The weight gradient of a convolution, as a function of input and output gradient."""

    def backward(self, grad):
        x, gy = self.saved_tensors
        p = self.params
        gx = _conv_transpose(gy, grad, None, p, x.shape[2:]) if self._next[0][0] is not None \
            else None
        ggy = _conv(x, grad, None, p, gy.shape[2:]) if self._next[1][0] is not None else None
        return gx, ggy


def _record_conv(out, x, w, bias, p, transposed, kept=None):
    node = record(ConvolutionBackward0, _inputs(x, w, bias), out)
    if node is not None:
        node.save_for_backward(x, w)
        node.params, node.transposed = p, transposed
        if kept:
            node.kept = kept
    return out


def _aten_params(p):
    """(stride, padding, dilation, output_padding, groups) of ATen's convolution, from ember's
    (stride, padding before, padding after, dilation, groups)."""
    stride, lo, _, dilation, groups = p
    return list(stride), list(lo), list(dilation), [0] * len(stride), groups


def _bias_sizes(w, p, transposed):
    return [w.shape[1] * p[4] if transposed else w.shape[0]]


def _count_conv(x, w, bias, p, transposed, out):
    stride, padding, dilation, output_padding, groups = _aten_params(p)
    _flops.active("convolution", (x, w, bias, stride, padding, dilation, transposed,
                                  output_padding, groups), None, out)


def _inputs(x, w, bias):
    return (x, w) if bias is None else (x, w, bias)


def _conv(x, w, bias, p, osz=None):
    xp = xp_of(x)
    # a selective checkpoint's recomputation hands back the forward's result when it kept it
    y = kept_output(ConvolutionBackward0, _inputs(x, w, bias)) if _sac_anywhere.count else None
    kept = None
    if y is None:
        # the weight gradient to come can reuse some of the forward's work
        kept = [] if w._requires_grad and _grad_state.enabled else None
        y = make_tensor(_add_bias(xp, conv_forward(xp, x._array, w._array, p, osz, kept), bias),
                        x._device)
        if _flops.active is not None:
            _count_conv(x, w, bias, p, False, y)
    else:
        y = make_tensor(y, x._device)
    return _record_conv(y, x, w, bias, p, False, kept)


def _conv_transpose(y, w, bias, p, size, result=None):
    """`result`: the array already computed (by conv_backward), to record only."""
    xp = xp_of(y)
    x = result
    if x is None and _sac_anywhere.count:
        x = kept_output(ConvolutionBackward0, _inputs(y, w, bias))
    if x is None:
        x = make_tensor(_add_bias(xp, conv_transpose_forward(xp, y._array, w._array, p,
                                                             tuple(size)), bias), y._device)
        if _flops.active is not None:
            _count_conv(y, w, bias, p, True, x)
    else:
        x = make_tensor(x, y._device)
    return _record_conv(x, y, w, bias, p, True)


def _conv_weight(x, gy, p, w_shape, kept=None, result=None):
    """`result`: the array already computed (by conv_backward), to record only."""
    if result is None:
        result = conv_weight_grad(xp_of(x), x._array, gy._array, p, tuple(w_shape), kept)
    gw = make_tensor(result, x._device)
    node = record(ConvolutionBackwardBackward0, (x, gy), gw)
    if node is not None:
        node.save_for_backward(x, gy)
        node.params = p
    return gw


def _int_list(value, n):
    value = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    return value * n if len(value) == 1 and n > 1 else value


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """ATen's `convolution_backward` (`torch.ops.aten.convolution_backward`): the gradients of
    input, weight and bias (each where `output_mask` asks, else None) of a convolution (or
    transposed one) of `input` by `weight` whose output's gradient is `grad_output`."""
    n = weight.ndim - 2
    stride, padding, dilation = (_int_list(v, n) for v in (stride, padding, dilation))
    p = (tuple(stride), tuple(padding), tuple(padding), tuple(dilation), int(groups))
    size = tuple(input.shape[2:])
    gx = gw = gb = None
    if transposed:
        if output_mask[0]:
            gx = _conv(grad_output, weight, None, p, size)
        if output_mask[1]:
            gw = _conv_weight(grad_output, input, p, tuple(weight.shape))
    else:
        if output_mask[0]:
            gx = _conv_transpose(grad_output, weight, None, p, size)
        if output_mask[1]:
            gw = _conv_weight(input, grad_output, p, tuple(weight.shape))
    if output_mask[2]:
        gb = _bias_grad(grad_output)
    return gx, gw, gb
