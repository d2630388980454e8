"""`torch._utils`: the private helpers user code reaches for by name. Old training scripts
patch `torch._utils._rebuild_tensor_v2` to read checkpoints of older PyTorch versions, and
distributed code (apex, older DDP forks) imports `_flatten_dense_tensors` and
`_unflatten_dense_tensors` to reduce many gradients as one buffer."""
from .cuda._utils import _get_device_index
from .utils.data._utils.worker import ExceptionWrapper
from .serialization.rebuild import (_rebuild_meta_tensor_no_storage, _rebuild_parameter,
                                    _rebuild_sparse_tensor, _rebuild_tensor_v2,
                                    _rebuild_tensor_v3)

__all__ = ["ExceptionWrapper", "_get_device_index", "_rebuild_tensor_v2", "_rebuild_tensor_v3",
           "_rebuild_parameter", "_rebuild_meta_tensor_no_storage", "_rebuild_sparse_tensor",
           "_flatten_dense_tensors", "_unflatten_dense_tensors"]


def _flatten_dense_tensors(tensors):
    """The tensors' values end to end in one new 1-d tensor."""
    from .ops import cat
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    return cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of `flat`, cut and shaped as `tensors` (what _flatten_dense_tensors joined)."""
    out, offset = [], 0
    for t in tensors:
        n = t.numel()
        out.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(out)
