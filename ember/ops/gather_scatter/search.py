"""searchsorted and bucketize: insertion points of values in sorted boundaries, by PyTorch's
own binary search (so NaN lands where PyTorch puts it). No gradient.
"""
import builtins

import numpy as np

from ..._tensor import Tensor, make_tensor
from .._writes import write_out
from ._common import _index_arr, _xp

__all__ = [
    "searchsorted", "bucketize",
]


# ---- searchsorted / bucketize --------------------------------------------------------------------
def _has_nan(a):
    return a.dtype.name == "bfloat16" or (a.dtype.kind == "f" and bool(np.isnan(a).any()))


def _search(seq, vals, right, xp):
    """Row-wise insertion points of `vals` (..., K) in `seq` (..., M): PyTorch's binary
    search exactly (its comparisons decide where NaN goes), vectorised over all elements."""
    m = seq.shape[-1]
    # NumPy's own search where no NaN can take part (bfloat16's, from ml_dtypes, misplaces
    # NaN like its sort: the comparisons below serve it)
    if seq.ndim == 1 and xp is np and not _has_nan(seq) and not _has_nan(vals):
        return np.searchsorted(seq, vals, side="right" if right else "left").astype(np.int64)
    lo = xp.zeros(vals.shape, np.int64)
    hi = xp.full(vals.shape, m, np.int64)
    # each step at least halves every interval [lo, hi) of at most m + 1 points: after
    # m.bit_length() steps all are empty (a fixed count: no device read asks whether)
    for _ in range(m.bit_length()):
        active = lo < hi
        mid = lo + ((hi - lo) >> 1)
        safe = xp.minimum(mid, m - 1)
        if seq.ndim == 1:
            mv = seq[safe]
        else:
            mv = xp.take_along_axis(seq, safe, axis=-1)
        go_right = ~(mv > vals) if right else ~(mv >= vals)
        lo = xp.where(active & go_right, mid + 1, lo)
        hi = xp.where(active & ~go_right, mid, hi)
    return lo


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None,
                 out=None):
    for t in (sorted_sequence, input):
        if isinstance(t, Tensor) and t.dtype._kind:
            raise NotImplementedError(f'"searchsorted_out_cpu" not implemented for '
                                      f"'{t.dtype._scalar_name}'")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    bd = sorted_sequence
    xp = _xp(bd)
    seq = bd._array
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    scalar = not isinstance(input, Tensor)
    if scalar:
        vals = xp.asarray(input)
        if seq.ndim != 1:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                               f"boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({seq.ndim}) and input value's dim(0) numel(1)")
    else:
        vals = _index_arr(input, bd)
        if seq.ndim != 1 and (seq.shape[:-1] != vals.shape[:-1] or vals.ndim != seq.ndim):
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                               "the first N-1 dimensions of boundaries tensor and input value "
                               f"tensor must match, but we got boundaries tensor {list(seq.shape)} "
                               f"and input value tensor {list(vals.shape)}")
    if sorter is not None:
        if sorter._array.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {sorter.dtype._scalar_name}")
        if sorter._array.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, "
                               f"but got boundary tensor {list(seq.shape)}and got sorter tensor "
                               f"{list(sorter._array.shape)}")
        srt = _index_arr(sorter, bd)
        if srt.size and (builtins.int(srt.min()) < 0 or builtins.int(srt.max()) >= seq.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        seq = xp.take_along_axis(seq, srt, axis=-1)
    if seq.dtype != vals.dtype:
        common = np.promote_types(seq.dtype, vals.dtype) if vals.dtype != np.bool_ else seq.dtype
        seq, vals = seq.astype(common, copy=False), vals.astype(common, copy=False)
    if seq.shape[-1] == 0:
        pos = xp.zeros(vals.shape, np.int64)
    else:
        pos = _search(seq, vals, right, xp)
    res = make_tensor(xp.asarray(pos).astype(np.int32 if out_int32 else np.int64, copy=False),
                      bd._device)
    if out is not None:
        return write_out(out, res, "searchsorted")
    return res


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries._array.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._array.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)
