"""`torch.distributed.fsdp.api`: the options of FSDP1 (`FullyShardedDataParallel`): how to
shard, mixed precision, offloading, prefetching, and the kinds of state dict with their
configurations. Plain enums and dataclasses, printed as PyTorch prints them."""
from dataclasses import dataclass
from enum import Enum, auto

from ... import dtypes as _dt

__all__ = ["ShardingStrategy", "BackwardPrefetch", "MixedPrecision", "CPUOffload",
           "StateDictType", "StateDictConfig", "FullStateDictConfig", "LocalStateDictConfig",
           "ShardedStateDictConfig", "OptimStateDictConfig", "FullOptimStateDictConfig",
           "LocalOptimStateDictConfig", "ShardedOptimStateDictConfig", "StateDictSettings"]


class ShardingStrategy(Enum):
    """FULL_SHARD: parameters, gradients and optimizer state sharded, parameters gathered
    for forward and again for backward; SHARD_GRAD_OP: parameters kept gathered from forward
    through backward; NO_SHARD: replicated, gradients all-reduced (as DDP); HYBRID_SHARD and
    _HYBRID_SHARD_ZERO2: FULL_SHARD / SHARD_GRAD_OP within a node, replicated across."""
    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """When backward gathers the next parameters: before (BACKWARD_PRE) or after
    (BACKWARD_POST) the current gradient computation. ember gathers in order, so both
    schedule the same."""
    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


def _batch_norm():
    from ...nn.modules.batchnorm import _BatchNorm
    return _BatchNorm


@dataclass
class MixedPrecision:
    """`param_dtype`: the dtype parameters are gathered in and forward/backward compute in;
    `reduce_dtype`: the dtype gradients are reduced in (None: `param_dtype`);
    `buffer_dtype`: buffers are cast to it; gradients end in the parameters' own dtype.
    Inputs are cast to `param_dtype` at the root (`cast_root_forward_inputs`) and, with
    `cast_forward_inputs`, at every FSDP module. Modules of `_module_classes_to_ignore`
    are wrapped on their own, in full precision, by an auto-wrap policy."""
    param_dtype: _dt.dtype = None
    reduce_dtype: _dt.dtype = None
    buffer_dtype: _dt.dtype = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = None

    def __post_init__(self):
        if self._module_classes_to_ignore is None:
            self._module_classes_to_ignore = (_batch_norm(),)


@dataclass
class CPUOffload:
    """`offload_params`: keep the sharded parameters (and gradients) in host memory."""
    offload_params: bool = False


class StateDictType(Enum):
    """FULL_STATE_DICT: whole tensors under the original names; LOCAL_STATE_DICT: each
    rank's flat shard; SHARDED_STATE_DICT: each parameter as a DTensor sharded on dim 0."""
    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """`rank0_only`: only rank 0 gets the entries (the others an empty dict)."""
    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig


# the configuration classes of each kind of state dict (model, optimizer)
CONFIGS = {
    StateDictType.FULL_STATE_DICT: (FullStateDictConfig, FullOptimStateDictConfig),
    StateDictType.LOCAL_STATE_DICT: (LocalStateDictConfig, LocalOptimStateDictConfig),
    StateDictType.SHARDED_STATE_DICT: (ShardedStateDictConfig, ShardedOptimStateDictConfig),
}
