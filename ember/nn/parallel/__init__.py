"""`ember.nn.parallel`: data parallelism across processes, as `torch.nn.parallel`."""
from . import distributed  # noqa: F401
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
