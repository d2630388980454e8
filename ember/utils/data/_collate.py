"""`default_collate` and `default_convert`: turning samples into batches, as PyTorch does
for tensors, NumPy arrays, numbers, strings, mappings, named tuples and sequences."""
import collections.abc
import re

import numpy as np

from ..._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_NP_STR = re.compile(r"[SaUO]")


def default_convert(data):
    from ...ops.creation import as_tensor
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and not _NP_STR.search(data.dtype.str):
        return as_tensor(data)
    if isinstance(data, np.generic) and not _NP_STR.search(data.dtype.str):
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()}) \
            if not isinstance(data, dict) or type(data) is not dict else \
            {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    from ...ops.creation import as_tensor, tensor
    from ...ops.shape import stack
    from ... import dtypes
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if _NP_STR.search(elem.dtype.str):
            raise TypeError(_error(type(elem)))
        return stack([as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic):
        return as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(batch, dtype=dtypes.bool)
    if isinstance(elem, float):
        return tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_error(type(elem)))


def _error(kind):
    return ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
            f"found {kind}")
