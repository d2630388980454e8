"""`ember.distributed`: PyTorch's `torch.distributed`. Process groups meet through a store
(`env://`, `tcp://`, `file://` or a given `Store`). The "gloo" backend, written in Python,
runs the collectives over TCP sockets (a ring for large all-reduces); "mpi" runs MPI's own
collectives when the optional mpi4py is installed (launch with mpiexec); "nccl" runs NCCL's
on CUDA tensors through CuPy. `python -m ember.distributed.run` is torchrun."""
from . import distributed_c10d
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__ as _c10d_all
import logging

from .store import (DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore,
                    HashStore, PrefixStore, QueueEmptyError, Store, TCPStore)
from ..nn.parallel.distributed import GradBucket
from .device_mesh import DeviceMesh, init_device_mesh

# A rank argument: an int (PyTorch's tracer also accepts a symbolic one).
RankType = int
log = logging.getLogger("torch.distributed")

__all__ = list(_c10d_all) + ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore",
                             "DistError", "DistStoreError", "DistNetworkError",
                             "DistBackendError", "QueueEmptyError", "RankType", "log",
                             "distributed_c10d", "GradBucket"]
