"""The storage layer's interfaces (`torch.distributed.checkpoint.storage`): where a save's
items and metadata go and a load's come from. FileSystemWriter/Reader are the built-in ones."""
import abc
from dataclasses import dataclass
from typing import Any

from .metadata import MetadataIndex

__all__ = ["WriteResult", "StorageWriter", "StorageReader"]


@dataclass(frozen=True)
class WriteResult:
    index: MetadataIndex
    size_in_bytes: int
    storage_data: Any


class StorageWriter(abc.ABC):
    """reset -> set_up_storage_writer -> prepare_local_plan (every rank) ->
    prepare_global_plan (the coordinator) -> write_data (every rank) -> finish (the
    coordinator, with every rank's results)."""

    def reset(self, checkpoint_id=None):
        ...

    @abc.abstractmethod
    def set_up_storage_writer(self, is_coordinator, *args, **kwargs): ...

    @abc.abstractmethod
    def prepare_local_plan(self, plan): ...

    @abc.abstractmethod
    def prepare_global_plan(self, plans): ...

    @abc.abstractmethod
    def write_data(self, plan, planner): ...

    @abc.abstractmethod
    def finish(self, metadata, results): ...

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return False

    def storage_meta(self):
        return None


class StorageReader(abc.ABC):
    """reset -> read_metadata -> set_up_storage_reader -> prepare_local_plan ->
    prepare_global_plan (the coordinator) -> read_data (every rank)."""

    def reset(self, checkpoint_id=None):
        ...

    @abc.abstractmethod
    def read_metadata(self, *args, **kwargs): ...

    @abc.abstractmethod
    def set_up_storage_reader(self, metadata, is_coordinator, *args, **kwargs): ...

    @abc.abstractmethod
    def prepare_local_plan(self, plan): ...

    @abc.abstractmethod
    def prepare_global_plan(self, plans): ...

    @abc.abstractmethod
    def read_data(self, plan, planner): ...

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return False
