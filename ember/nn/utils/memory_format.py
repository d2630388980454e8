"""Putting the weights of a model's convolutions in a memory format (channels_last ...),
recursively, as `torch.nn.utils.convert_conv2d_weight_memory_format` does."""
from ...autograd.grad_mode import no_grad
from ...ops.creation import empty

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        w = module.weight
        # the format's exact strides (PyTorch resizes in the format): a weight whose
        # size-1 dims make it contiguous in both formats still gets channels_last's strides
        new = empty(w.shape, dtype=w.dtype, device=w.device, memory_format=memory_format)
        with no_grad():
            new.copy_(w)
        w.data = new
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
