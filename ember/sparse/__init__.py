"""`torch.sparse`: products and sums over sparse COO tensors (`ember/ops/sparse.py`)."""
from ..ops.sparse import sparse_mm as mm, sparse_sum as sum  # noqa: A001 (PyTorch's names)
from ..ops.sparse import sparse_addmm as addmm

__all__ = ["mm", "sum", "addmm"]
