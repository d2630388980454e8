"""`torch.distributed.fsdp`: FSDP2's `fully_shard` and its policies. PyTorch's first FSDP
(the `FullyShardedDataParallel` wrapper) is not here."""
from ._api import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy
from ._fully_shard import FSDPModule, UnshardHandle, fully_shard, register_fsdp_forward_method

__all__ = ["CPUOffloadPolicy", "FSDPModule", "fully_shard", "MixedPrecisionPolicy",
           "OffloadPolicy", "register_fsdp_forward_method", "UnshardHandle"]
