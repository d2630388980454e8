"""Index-driven ops: gather, scatter (and its reductions), index_select/add/copy/fill, the
masked ops, take/put, take_along_dim, searchsorted and bucketize.

One op family (its `__all__`, `METHODS`) split by how an op addresses elements:
  scatter     gather, scatter, scatter_add, scatter_reduce, take_along_dim (an index of the
              input's rank along one dim)
  index_ops   index_select/add/copy/fill (a 1-D index along one dim), take, put (flat indices)
  masked      masked_fill, masked_select, masked_scatter (a boolean mask)
  search      searchsorted, bucketize
  _common     index checks and the flat-position machinery they share
Every scatter-like forward works on flat (C-order) positions, and repeated positions are
reduced by `bincount` or a sort, never by `np.add.at`. Each derivative is written with these
same ops, so double backward works.
"""
from .index_ops import *  # noqa: F401,F403
from .masked import *  # noqa: F401,F403
from .scatter import *  # noqa: F401,F403
from .search import *  # noqa: F401,F403

__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
           "index_copy", "index_fill", "masked_fill", "masked_select", "masked_scatter", "take",
           "take_along_dim", "put", "searchsorted", "bucketize"]
METHODS = ["gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
           "scatter_reduce_", "index_select", "index_add", "index_add_", "index_copy",
           "index_copy_", "index_fill", "index_fill_", "masked_fill", "masked_fill_",
           "masked_select", "masked_scatter", "masked_scatter_", "take", "take_along_dim", "put",
           "put_"]
