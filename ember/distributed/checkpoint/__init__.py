"""`torch.distributed.checkpoint` (DCP): save and load state dicts of tensors and DTensors
from every rank at once, each rank writing and reading only its own shards, in PyTorch's
directory layout (filesystem.py); `hf_storage` reads and writes safetensors files, and
`state_dict` gets and sets models' and optimizers' state dicts, full or sharded."""
from .api import CheckpointException
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorStorageMetadata)
from .planner import LoadPlan, LoadPlanner, ReadItem, SavePlan, SavePlanner, WriteItem
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import save, save_state_dict
from .storage import StorageReader, StorageWriter

__all__ = ["ChunkStorageMetadata", "TensorStorageMetadata", "BytesStorageMetadata",
           "Metadata", "MetadataIndex", "CheckpointException", "FileSystemReader",
           "FileSystemWriter", "DefaultSavePlanner", "DefaultLoadPlanner", "LoadPlan",
           "LoadPlanner", "ReadItem", "SavePlan", "SavePlanner", "WriteItem",
           "StorageReader", "StorageWriter", "load", "load_state_dict", "save",
           "save_state_dict"]
