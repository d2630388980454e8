"""`torch.distributed.nn`: collectives that autograd differentiates (`functional`), also
reachable here as PyTorch's star import makes them. (PyTorch's RemoteModule needs its RPC
framework, which neither ember nor a build without RPC has.)"""
from . import functional
from .functional import (all_gather, all_reduce, all_to_all, all_to_all_single, broadcast,
                         gather, reduce, reduce_scatter, scatter)

__all__ = ["functional", "broadcast", "gather", "scatter", "reduce", "reduce_scatter",
           "all_gather", "all_to_all", "all_to_all_single", "all_reduce"]
