"""`torch.nn.grad`: the gradients of a convolution with respect to its input and to its weight,
computed directly from the output gradient (what the convolution's backward computes), for
users who write their own backward passes. They are differentiable in turn."""
from ..ops.conv import _conv_transpose, _conv_weight, _int_tuple

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _params(nd, fname, stride, padding, dilation, groups):
    padding = _int_tuple(padding, nd, "padding", fname)
    return (_int_tuple(stride, nd, "stride", fname), padding, padding,
            _int_tuple(dilation, nd, "dilation", fname), int(groups))


def _check_grad_output(nd, fname, input_size, weight_size, grad_output, p):
    """grad_output must have the shape the convolution of `input_size` by `weight_size` gives."""
    input_size, weight_size = tuple(input_size), tuple(weight_size)
    if len(input_size) != nd + 2 or len(weight_size) != nd + 2:
        raise RuntimeError(f"{fname}: expected a {nd + 2}-D input size and weight size, got "
                           f"{list(input_size)} and {list(weight_size)}")
    stride, lo, hi, dilation, _ = p
    spatial = tuple((s + a + b - d * (k - 1) - 1) // st + 1 for s, a, b, d, k, st in
                    zip(input_size[2:], lo, hi, dilation, weight_size[2:], stride))
    expected = (input_size[0], weight_size[0]) + spatial
    if tuple(grad_output.shape) != expected:
        raise RuntimeError(f"{fname}: expected grad_output of size {list(expected)} (the "
                           f"convolution's output), but got {list(grad_output.shape)}")


def _input_grad(nd, input_size, weight, grad_output, stride, padding, dilation, groups):
    fname = f"conv{nd}d_input"
    p = _params(nd, fname, stride, padding, dilation, groups)
    _check_grad_output(nd, fname, input_size, weight.shape, grad_output, p)
    # the input gradient is the transposed convolution of the output gradient, sized back
    # to the input (which fixes the rows a strided convolution left out)
    return _conv_transpose(grad_output, weight, None, p, tuple(input_size)[2:])


def _weight_grad(nd, input, weight_size, grad_output, stride, padding, dilation, groups):
    fname = f"conv{nd}d_weight"
    p = _params(nd, fname, stride, padding, dilation, groups)
    _check_grad_output(nd, fname, input.shape, weight_size, grad_output, p)
    return _conv_weight(input, grad_output, p, tuple(weight_size))


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to an input of size `input_size`."""
    return _input_grad(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d with respect to a weight of size `weight_size`."""
    return _weight_grad(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to an input of size `input_size`."""
    return _input_grad(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv2d with respect to a weight of size `weight_size`."""
    return _weight_grad(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to an input of size `input_size`."""
    return _input_grad(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv3d with respect to a weight of size `weight_size`."""
    return _weight_grad(3, input, weight_size, grad_output, stride, padding, dilation, groups)
