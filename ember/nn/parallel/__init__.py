"""`ember.nn.parallel`: data parallelism across devices and processes, as `torch.nn.parallel`."""
from . import comm, distributed  # noqa: F401
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]


class DistributedDataParallelCPU(DistributedDataParallel):
    """PyTorch's old name for DistributedDataParallel on CPU processes, deprecated there."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn("`torch.nn.parallel.DistributedDataParallelCPU` is deprecated, please use "
                      "`torch.nn.parallel.DistributedDataParallel` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__(*args, **kwargs)
