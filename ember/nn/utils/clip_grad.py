"""Gradient clipping, with PyTorch's formulas: the total norm is the norm of the per-tensor
norms, and gradients are scaled by min(1, max_norm / (total_norm + 1e-6)). Gradients that
are DTensors (FSDP2's sharded ones) hold only this rank's pieces: their norm is taken over all
ranks (`ember.distributed._clip_grad`), and every rank scales by the same coefficient."""
import math

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [_local(p.grad) for p in parameters if p.grad is not None]


def _is_dtensor(t):
    return hasattr(type(t), "placements")


def _local(g):
    """A gradient to scale in place: a DTensor that is not a Tensor, by its local tensor."""
    return g if isinstance(g, Tensor) else g.to_local()


def _norm(t, p):
    if p == math.inf:
        return t.abs().max()
    if p == -math.inf:
        return t.abs().min()
    if p == 0:
        return (t != 0).sum().to(t.dtype)
    if p == 2 and t.dtype.is_floating_point:  # vector_norm's one einsum over t twice
        return t.norm()
    return t.abs().pow(p).sum().pow(1.0 / p)


def _no_sparse(tensors, op):
    """PyTorch has no sparse kernel for the norm or the clamp these take."""
    for t in tensors:
        if t.is_sparse:
            backend = "SparseCUDA" if t.device.type == "cuda" else "SparseCPU"
            raise NotImplementedError(
                f"Could not run '{op}' with arguments from the '{backend}' backend. This could "
                "be because the operator doesn't exist for this backend, or was omitted during "
                "the selective/custom build process (if using custom build).")


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    from ...ops.creation import tensor
    from ...ops.shape import stack
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if any(_is_dtensor(t) for t in tensors):
        from ...distributed._clip_grad import dtensor_total_norm
        return dtensor_total_norm(tensors, norm_type, error_if_nonfinite)
    _no_sparse(tensors, "aten::linalg_vector_norm")
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    with no_grad():
        norms = [_norm(t.detach(), norm_type) for t in tensors]
        total = _norm(stack([n.to(tensors[0].dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    grads = _grads(parameters)
    _no_sparse(grads, "aten::clamp_min_")
    with no_grad():
        for g in grads:
            g.clamp_(min=-clip_value, max=clip_value)
