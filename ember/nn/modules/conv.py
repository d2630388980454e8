"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d, with PyTorch's arguments,
parameter shapes, default initialisation (kaiming_uniform_ with a=sqrt(5)) and reprs."""
import math
import warnings

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

# a set, as PyTorch's message prints it (in this process's order of the two strings)
_PADDING_STRINGS = {"same", "valid"}


def _ntuple(n, value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    _nd = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_modes:
            raise ValueError(f"padding_mode must be one of {valid_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in _ntuple(n, stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(n, kernel_size)
        self.stride = _ntuple(n, stride)
        self.padding = padding if isinstance(padding, str) else _ntuple(n, padding)
        self.dilation = _ntuple(n, dilation)
        self.output_padding = _ntuple(n, output_padding)
        self.groups, self.padding_mode = groups, padding_mode
        # instance attributes, as PyTorch's: a pickled model carries them, and PyTorch's
        # forward reads them when it loads one ember saved
        self.transposed = type(self).transposed
        self._reversed_padding_repeated_twice = self._padding_for_pad()
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__, **{"bias": self.bias})

    def _padding_for_pad(self):
        """The padding in F.pad's order (last dimension first, (left, right) each), PyTorch's
        `_reversed_padding_repeated_twice`; 'same' puts an odd element on the right."""
        pad = []
        for d in reversed(range(self._nd)):
            if self.padding == "same":
                total = self.dilation[d] * (self.kernel_size[d] - 1)
                pad += [total // 2, total - total // 2]
            elif self.padding == "valid":
                pad += [0, 0]
            else:
                pad += [self.padding[d], self.padding[d]]
        return pad

    def _padded(self, input):
        """Non-zero padding modes pad explicitly, then convolve without padding."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), 0

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("padding_mode", "zeros")
        # models pickled by an older ember lack these (PyTorch's forward reads them)
        self.__dict__.setdefault("transposed", type(self).transposed)
        if "_reversed_padding_repeated_twice" not in self.__dict__:
            self._reversed_padding_repeated_twice = self._padding_for_pad()


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        x, padding = self._padded(input)
        return getattr(F, self._fn_name)(x, weight, bias, self.stride, padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _nd = 1
    _fn_name = "conv1d"


class Conv2d(_Conv):
    _nd = 2
    _fn_name = "conv2d"


class Conv3d(_Conv):
    _nd = 3
    _fn_name = "conv3d"


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._nd
        batched = input.dim() == n + 2
        if len(output_size) == n + 1 + batched:
            output_size = output_size[1 + batched:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have "
                             f"{n} or {n + 1 + batched} elements (got {len(output_size)})")
        spatial = input.shape[-n:]
        mins = [(spatial[d] - 1) * self.stride[d] - 2 * self.padding[d] +
                self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        maxs = [lo + s - 1 for lo, s in zip(mins, self.stride)]
        if any(not lo <= size <= hi for size, lo, hi in zip(output_size, mins, maxs)):
            # PyTorch's words, the input's size after its first two dims even when unbatched
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range "
                             f"from {mins} to {maxs} (for an input of {input.size()[2:]})")
        return tuple(size - lo for size, lo in zip(output_size, mins))

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return getattr(F, self._fn_name)(input, self.weight, self.bias, self.stride, self.padding, op,
                        self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1
    _fn_name = "conv_transpose1d"


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2
    _fn_name = "conv_transpose2d"


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3
    _fn_name = "conv_transpose3d"


class _ConvTransposeMixin(_ConvTransposeNd):
    """Kept, as PyTorch keeps it, for old code that subclasses it; it warns on construction."""

    def __init__(self, *args, **kwargs):
        warnings.warn("`_ConvTransposeMixin` is a deprecated internal class. Please consider "
                      "using public APIs.", FutureWarning, stacklevel=2)
        super().__init__(*args, **kwargs)


# ---- lazy convolutions: in_channels from the first input ---------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        with no_grad():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._nd + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, **factory)
        self.weight = UninitializedParameter(**factory)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(**factory)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        factory = {"device": device, "dtype": dtype}
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, **factory)
        self.weight = UninitializedParameter(**factory)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(**factory)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
