"""`ember.distributed`: PyTorch's `torch.distributed` for CPU processes. Process groups meet
through a store (`env://`, `tcp://`, `file://` or a given `Store`), and the "gloo" backend,
written in Python over TCP sockets, runs the collectives; "mpi" runs the same collectives
over MPI messages when the optional mpi4py is installed."""
from . import distributed_c10d
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__ as _c10d_all
import logging

from .store import (DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore,
                    HashStore, PrefixStore, QueueEmptyError, Store, TCPStore)

# A rank argument: an int (PyTorch's tracer also accepts a symbolic one).
RankType = int
log = logging.getLogger("torch.distributed")

__all__ = list(_c10d_all) + ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore",
                             "DistError", "DistStoreError", "DistNetworkError",
                             "DistBackendError", "QueueEmptyError", "RankType", "log",
                             "distributed_c10d"]
