"""`torch.sparse`: products, sums and (log-)softmax over sparse COO tensors
(`ember/ops/sparse.py`, `sparse_softmax.py`), the invariant-checking switch, and the legacy typed constructors (`FloatTensor(indices, values,
size)` ...)."""
from ..ops.sparse import sparse_mm as mm, sparse_sum as sum  # noqa: A001 (PyTorch's names)
from ..ops.sparse import sparse_addmm as addmm
from ..ops.sparse_softmax import sparse_log_softmax as log_softmax
from ..ops.sparse_softmax import sparse_softmax as softmax
from ._invariants import check_sparse_tensor_invariants
from ._legacy import define as _define

_define(globals(), "torch.sparse")

__all__ = ["mm", "sum", "addmm", "softmax", "log_softmax", "check_sparse_tensor_invariants"]
