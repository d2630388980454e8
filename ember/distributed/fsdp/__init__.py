"""`torch.distributed.fsdp`: FSDP2's `fully_shard` and its policies, and FSDP1, the
`FullyShardedDataParallel` wrapper with its options (`api`), wrap policies (`wrap`) and
`ShardedGradScaler` (`sharded_grad_scaler`). Both run on one sharding engine
(`_fsdp_state`)."""
from ._api import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy
from ._fully_shard import FSDPModule, UnshardHandle, fully_shard, register_fsdp_forward_method
from .api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,
                  LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision,
                  OptimStateDictConfig, ShardedOptimStateDictConfig, ShardedStateDictConfig,
                  ShardingStrategy, StateDictConfig, StateDictSettings, StateDictType)
from .fully_sharded_data_parallel import FullyShardedDataParallel, OptimStateKeyType

__all__ = ["BackwardPrefetch", "CPUOffload", "FullOptimStateDictConfig", "FullStateDictConfig",
           "FullyShardedDataParallel", "LocalOptimStateDictConfig", "LocalStateDictConfig",
           "MixedPrecision", "OptimStateDictConfig", "OptimStateKeyType",
           "ShardedOptimStateDictConfig", "ShardedStateDictConfig", "ShardingStrategy",
           "StateDictConfig", "StateDictSettings", "StateDictType", "CPUOffloadPolicy",
           "FSDPModule", "fully_shard", "MixedPrecisionPolicy", "OffloadPolicy",
           "register_fsdp_forward_method", "UnshardHandle"]
