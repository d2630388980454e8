"""Pooling: max/avg/adaptive/lp pooling and unpooling, with derivatives.

Windows are strided views (no copies) of a padded input. Max and sum over a box of
kernel offsets are separable, so an N-d pool is N one-dimensional passes (last spatial dim
first), each looping over that dim's kernel offsets only: 2+2 passes for a 2x2 window
instead of 4. Max pooling keeps, per pass, which offset won (in PyTorch's row-major
first-maximum order, NaN winning), and ends with PyTorch's flat indices into each input
plane. Its backward scatters through those indices (a plain put when windows cannot
overlap, one `bincount` pass when they can: never `np.add.at`). Where the windows tile the
input (kernel == stride, no padding), the CPU keeps no indices: a few `maximum` passes over
strided views forward, and the backward finds each window's winner again (`_tiled`).
Adaptive average pooling is a matmul per spatial dim with a small averaging matrix.

Every op here is linear in its gradient, so each backward is another graph op whose own
backward is the forward again: double backward comes for free.

One op family (its `__all__`, `METHODS`, `FUNCTIONAL`) split by kind of pooling:
  max_pool   max_pool1d/2d/3d and their `_with_indices` forms
  avg_pool   avg_pool1d/2d/3d, lp_pool1d/2d/3d
  adaptive   adaptive_avg_pool1d/2d/3d, adaptive_max_pool1d/2d/3d (and `_with_indices`)
  unpool     max_unpool1d/2d/3d
  _tiled     max pooling whose windows tile the input, on the CPU
  _common    window geometry, the separable max, the scatter/gather and linear node pairs
  _checks    argument parsing and PyTorch's errors
"""
from .adaptive import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,  # noqa: F401
                       adaptive_max_pool1d, adaptive_max_pool1d_with_indices,
                       adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
                       adaptive_max_pool3d, adaptive_max_pool3d_with_indices)
from .avg_pool import (avg_pool1d, avg_pool2d, avg_pool3d, lp_pool1d, lp_pool2d,  # noqa: F401
                       lp_pool3d)
from .max_pool import (max_pool1d, max_pool1d_with_indices, max_pool2d,  # noqa: F401
                       max_pool2d_with_indices, max_pool3d, max_pool3d_with_indices)
from .unpool import max_unpool1d, max_unpool2d, max_unpool3d  # noqa: F401

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d"]
METHODS = []
FUNCTIONAL = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
              "max_pool2d_with_indices", "max_pool3d_with_indices", "max_unpool1d",
              "max_unpool2d", "max_unpool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
              "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
              "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
              "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
              "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d"]
