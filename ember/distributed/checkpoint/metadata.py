"""What a checkpoint records about its state dict (`torch.distributed.checkpoint.metadata`):
per key, a tensor's dtype, global size and the chunks some rank wrote, or that the value is
bytes (a pickled object). The dataclasses carry PyTorch's names and fields, so the pickled
`.metadata` file means the same to both libraries."""
import enum
from dataclasses import dataclass, field
from typing import Any

from ... import dtypes as _dt
from ..._layout import strided
from ..._memory_format import channels_last, contiguous_format, preserve_format
from ..._tensor import Size

__all__ = ["ChunkStorageMetadata", "TensorStorageMetadata", "BytesStorageMetadata",
           "Metadata", "MetadataIndex", "TensorProperties", "StorageMeta"]


@dataclass
class ChunkStorageMetadata:
    """One written block of a tensor: where it starts in the whole tensor, and its sizes."""
    offsets: Size
    sizes: Size


class _MEM_FORMAT_ENCODING(enum.Enum):
    TORCH_CONTIGUOUS_FORMAT = 0
    TORCH_CHANNELS_LAST = 1
    TORCH_PRESERVE_FORMAT = 2


_FORMATS = [(contiguous_format, _MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT),
            (channels_last, _MEM_FORMAT_ENCODING.TORCH_CHANNELS_LAST),
            (preserve_format, _MEM_FORMAT_ENCODING.TORCH_PRESERVE_FORMAT)]


@dataclass
class TensorProperties:
    dtype: Any = field(default_factory=lambda: _dt.get_default_dtype())
    layout: Any = strided
    requires_grad: bool = False
    memory_format: Any = contiguous_format
    pin_memory: bool = False

    # A memory format does not pickle by itself: PyTorch's state is this tuple with an enum.
    def __getstate__(self):
        code = next((c for f, c in _FORMATS if f == self.memory_format), None)
        if code is None:
            raise RuntimeError(f"Invalid torch.memory_format: {self.memory_format}")
        return (self.dtype, self.layout, self.requires_grad, code, self.pin_memory)

    def __setstate__(self, state):
        dtype, layout, requires_grad, code, pin_memory = state
        formats = {c: f for f, c in _FORMATS}
        if code not in formats:
            raise RuntimeError(f"Invalid torch.memory_format: {code}")
        self.dtype, self.layout, self.requires_grad = dtype, layout, requires_grad
        self.memory_format, self.pin_memory = formats[code], pin_memory

    @staticmethod
    def create_from_tensor(tensor):
        return TensorProperties(dtype=tensor.dtype, layout=tensor.layout,
                                requires_grad=tensor.requires_grad,
                                memory_format=contiguous_format, pin_memory=False)


@dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: Size
    chunks: list


@dataclass
class BytesStorageMetadata:
    pass


STORAGE_TYPES = (TensorStorageMetadata, BytesStorageMetadata)


@dataclass
class StorageMeta:
    checkpoint_id: Any = None
    save_id: Any = None
    load_id: Any = None
    modules: list = field(default_factory=list)


@dataclass
class Metadata:
    """The checkpoint's keys and what each holds; `storage_data` is the storage layer's (the
    file system's: where each item's bytes lie), `planner_data` the planner's (the default
    one's: the path of each flattened key in the nested state dict)."""
    state_dict_metadata: dict
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: Any = None
    version: Any = None


@dataclass(frozen=True)
class MetadataIndex:
    """A key into a checkpoint: the flattened name, and for a tensor the offset of a chunk."""
    fqn: str
    offset: Any = None
    index: Any = field(hash=False, compare=False, default=None)

    def __init__(self, fqn, offset=None, index=None):
        object.__setattr__(self, "fqn", fqn)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "offset", None if offset is None else Size(offset))
