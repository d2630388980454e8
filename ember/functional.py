"""`torch.functional`: the tensor functions PyTorch writes in Python rather than in its
operator library (einsum, meshgrid, split, unique, norm ...). Re-exports: each lives with its
op family under ember/ops."""
from .ops.decompositions.lu import lu
from .ops.distance import cdist
from .ops.index_extra import unravel_index
from .ops.linalg.contractions import chain_matmul, tensordot
from .ops.linalg.einsum import einsum
from .ops.lowrank import pca_lowrank, svd_lowrank
from .ops.rearrange import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes,
                            broadcast_tensors, cartesian_prod, meshgrid, split)
from .ops.sorting import unique, unique_consecutive
from .ops.statistics import norm
from .ops.stft import istft, stft

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft",
           "lu", "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot", "unique",
           "unique_consecutive", "unravel_index"]

from .ops._numpy_names import accept_in as _accept_in  # noqa: E402

_accept_in(globals(), __all__, "torch")  # istft, which PyTorch binds from C++ (the rest are Python)
