"""`torch.utils._python_dispatch`: the test PyTorch's serializers (huggingface_hub's among
them) use to see whether a tensor is a wrapper subclass holding inner tensors, which they
then save through its `__tensor_flatten__` attributes. ember has no Python dispatch modes; a
Tensor subclass that implements the flatten protocol is recognised as PyTorch recognises it."""
from .._tensor import Tensor

__all__ = ["is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type"]


def _has_protocol(t):
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def is_traceable_wrapper_subclass(t):
    """Whether `t` is an instance of a Tensor subclass with `__tensor_flatten__` and
    `__tensor_unflatten__`."""
    return isinstance(t, Tensor) and type(t) is not Tensor and _has_protocol(t)


def is_traceable_wrapper_subclass_type(t):
    return issubclass(t, Tensor) and t is not Tensor and _has_protocol(t)
