"""`torch.types`: the type aliases PyTorch's annotations use (`Number`, `Device`, `FileLike`,
`Storage`, and the private `_size`, `_dtype`, `_TensorOrTensors` ... that library code
imports)."""
import os
from builtins import (bool as _bool, bytes as _bytes, complex as _complex,  # noqa: F401
                      float as _float, int as _int, str as _str)  # PyTorch's aliases
from collections.abc import Sequence
from typing import IO, TypeAlias, Union

from ._layout import layout as _layout  # noqa: F401
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Size, Tensor
from .device import device as _device
from .dtypes import dtype as _dtype

__all__ = ["Number", "Device", "FileLike", "Storage"]

Number: TypeAlias = Union[int, float, bool]
_Number = (int, float, bool)  # for isinstance
FileLike: TypeAlias = Union[str, "os.PathLike[str]", IO[bytes]]
Device: TypeAlias = Union[_device, str, int, None]
# ember's storages are these two classes (PyTorch's annotation class stands for its C ones)
Storage: TypeAlias = Union[TypedStorage, UntypedStorage]

_TensorOrTensors: TypeAlias = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors: TypeAlias = Union[Tensor, Sequence[Union[Tensor, None]]]
_size: TypeAlias = Union[Size, list[int], tuple[int, ...]]
