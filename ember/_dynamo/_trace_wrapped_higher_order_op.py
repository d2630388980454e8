"""`torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex`: a block in which
`tensor[i, j]`, indexed by Python ints and integer tensors only, is read as PyTorch's
`aten.index` (each index a 0-d tensor) instead of integer indexing. The result has the same
values but is a new tensor, not a view, so writing to it leaves `tensor` alone; PyTorch uses
the block around mask functions under vmap (transformers' masking_utils does), where an index
may be a per-sample scalar tensor. Only indexing changes, and only in the thread that opened
the block."""
import threading

from .._tensor import Tensor
from ..ops import creation as _creation
from ..ops import indexing as _indexing

__all__ = ["TransformGetItemToIndex"]

_active = threading.local()  # .depth: blocks open in this thread
# Tensor.__getitem__ is swapped for `_getitem` only while some thread has a block open, so
# indexing outside the blocks pays nothing
_open = [0]
_lock = threading.Lock()


def _getitem(self, index):
    if getattr(_active, "depth", 0):
        parts = index if isinstance(index, tuple) else (index,)
        if parts and all(_is_int_index(p) for p in parts):
            return _mod_index(self, parts)
    return _indexing.__getitem__(self, index)


def _is_int_index(part):
    if isinstance(part, Tensor):
        return not part.dtype.is_floating_point and not part.dtype.is_complex \
            and part.dtype.itemsize > 1  # bool tensors are masks, not positions
    return isinstance(part, int) and not isinstance(part, bool)


def _mod_index(tensor, parts):
    """aten.index(tensor, parts) with every part a tensor: advanced indexing, so a copy whose
    shape is the parts' broadcast shape followed by the dims left unindexed."""
    tensors = tuple(p if isinstance(p, Tensor) else
                    _creation.tensor(p, device=tensor.device) for p in parts)
    return _indexing.__getitem__(tensor, tuple(t.unsqueeze(0) for t in tensors)).squeeze(0)


class TransformGetItemToIndex:
    def __enter__(self):
        with _lock:
            _open[0] += 1
            Tensor.__getitem__ = _getitem
        _active.depth = getattr(_active, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _active.depth -= 1
        with _lock:
            _open[0] -= 1
            if not _open[0]:
                Tensor.__getitem__ = _indexing.__getitem__
        return False
