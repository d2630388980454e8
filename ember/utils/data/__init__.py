"""`ember.utils.data`: datasets, samplers, collation and the DataLoader, as `torch.utils.data`."""
from . import distributed  # noqa: F401
from ._collate import default_collate, default_convert
from ._utils.fetch import _DatasetKind
from .dataloader import DataLoader, WorkerInfo, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .distributed import DistributedSampler
from . import datapipes, graph, graph_settings  # noqa: F401
from .datapipes._decorator import (argument_validation, functional_datapipe,
                                   guaranteed_datapipes_determinism, non_deterministic,
                                   runtime_validation, runtime_validation_disabled)
from .datapipes.datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "ConcatDataset",
           "ChainDataset", "StackDataset", "Subset", "random_split", "default_collate",
           "default_convert", "get_worker_info", "WorkerInfo", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DistributedSampler", "_DatasetKind", "IterDataPipe", "MapDataPipe", "DFIterDataPipe",
           "DataChunk", "functional_datapipe", "argument_validation", "runtime_validation",
           "runtime_validation_disabled", "guaranteed_datapipes_determinism",
           "non_deterministic"]
