"""What a save or load plans to do (`torch.distributed.checkpoint.planner`): the items each
rank writes or reads, and the planner interfaces that make them. A planner turns a state
dict into items and back; a storage layer (storage.py) moves the items' bytes."""
import abc
import enum
from dataclasses import dataclass
from typing import Any

from .metadata import ChunkStorageMetadata, MetadataIndex, TensorProperties

__all__ = ["WriteItemType", "LoadItemType", "TensorWriteData", "WriteItem", "ReadItem",
           "SavePlan", "LoadPlan", "SavePlanner", "LoadPlanner"]


class WriteItemType(enum.Enum):
    TENSOR = enum.auto()
    SHARD = enum.auto()
    BYTE_IO = enum.auto()


class LoadItemType(enum.Enum):
    TENSOR = enum.auto()
    BYTE_IO = enum.auto()


@dataclass(frozen=True)
class TensorWriteData:
    chunk: ChunkStorageMetadata
    properties: TensorProperties
    size: Any


@dataclass(frozen=True)
class WriteItem:
    """One thing a rank writes: a whole tensor, a shard (a chunk of a larger one) or bytes."""
    index: MetadataIndex
    type: WriteItemType
    bytes_io_data: Any = None
    tensor_data: Any = None

    def tensor_storage_size(self):
        if self.tensor_data is None:
            return None
        numel = 1
        for s in self.tensor_data.size:
            numel *= s
        return numel * self.tensor_data.properties.dtype.itemsize


@dataclass(frozen=True)
class ReadItem:
    """Copy the block `lengths` at `storage_offsets` of the stored chunk `storage_index` to
    `dest_offsets` of the state dict's tensor `dest_index`."""
    type: LoadItemType
    dest_index: MetadataIndex
    dest_offsets: Any
    storage_index: MetadataIndex
    storage_offsets: Any
    lengths: Any


@dataclass(frozen=True)
class SavePlan:
    items: list
    storage_data: Any = None
    planner_data: Any = None
    usable: bool = True


@dataclass
class LoadPlan:
    items: list
    storage_data: Any = None
    planner_data: Any = None


class SavePlanner(abc.ABC):
    """set_up_planner -> create_local_plan (every rank) -> create_global_plan (the
    coordinator, over every rank's plan) -> finish_plan -> resolve_data per item."""

    @abc.abstractmethod
    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False): ...

    @abc.abstractmethod
    def create_local_plan(self): ...

    @abc.abstractmethod
    def create_global_plan(self, all_plans): ...

    @abc.abstractmethod
    def finish_plan(self, new_plan): ...

    @abc.abstractmethod
    def resolve_data(self, write_item): ...


class LoadPlanner(abc.ABC):
    """set_up_planner -> create_local_plan -> create_global_plan -> finish_plan, then per
    item load_bytes, or resolve_tensor (where to copy) and commit_tensor (it was copied)."""

    @abc.abstractmethod
    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False): ...

    @abc.abstractmethod
    def create_local_plan(self): ...

    @abc.abstractmethod
    def create_global_plan(self, global_plan): ...

    @abc.abstractmethod
    def finish_plan(self, central_plan): ...

    @abc.abstractmethod
    def load_bytes(self, read_item, value): ...

    @abc.abstractmethod
    def resolve_tensor(self, read_item): ...

    @abc.abstractmethod
    def commit_tensor(self, read_item, tensor): ...
