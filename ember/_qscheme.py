"""Quantization schemes (PyTorch's `torch.qscheme`): how an integer code maps back to a real
number (one scale and zero point per tensor or per channel; affine or symmetric about zero).

ember has no quantized tensors; the schemes label the observers and dynamically quantized
modules of `ember.ao`, and print as PyTorch's (`torch.per_tensor_affine`)."""

__all__ = ["qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams"]


class qscheme:
    __module__ = "ember"  # `<class 'torch.qscheme'>`
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        # schemes are singletons: unpickle to the same object
        return (_qscheme_by_name, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")

_BY_NAME = {s.name: s for s in (per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                                per_channel_symmetric, per_channel_affine_float_qparams)}


def _qscheme_by_name(name):
    return _BY_NAME[name]
