"""`torch.distributed._composable.fsdp`: FSDP2's older import path."""
from ...fsdp import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy,
                     fully_shard, register_fsdp_forward_method)

__all__ = ["CPUOffloadPolicy", "FSDPModule", "fully_shard", "MixedPrecisionPolicy",
           "OffloadPolicy", "register_fsdp_forward_method"]
