"""Flattening parameters into one vector and back, as optimisers of whole models use them."""
from ...autograd.grad_mode import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(p, device):
    if device is None:
        return p.device
    if p.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return device


def parameters_to_vector(parameters):
    from ...ops.shape import cat
    device, parts = None, []
    for p in parameters:
        device = _check_device(p, device)
        parts.append(p.view(-1))
    return cat(parts)


def vector_to_parameters(vec, parameters):
    from ..._tensor import Tensor
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device, offset = None, 0
    for p in parameters:
        device = _check_device(p, device)
        n = p.numel()
        with no_grad():
            p.data = vec[offset:offset + n].view_as(p).data.clone()
        offset += n
