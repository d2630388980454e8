"""`ember.nn.parallel`: data parallelism across processes, as `torch.nn.parallel`."""
from . import distributed  # noqa: F401
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
