"""FSDP2's policies: mixed precision (the dtypes of the gathered parameters, the gradient
reduction and the outputs) and offloading."""
from dataclasses import dataclass

from ... import dtypes as _dt

__all__ = ["MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy"]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """`param_dtype`: the dtype parameters are gathered in and forward/backward compute in
    (None: their own); `reduce_dtype`: the dtype gradients are reduced in (None: the compute
    dtype); `output_dtype`: floating outputs are cast to it; `cast_forward_inputs`: floating
    inputs are cast to `param_dtype` before each forward."""
    param_dtype: _dt.dtype = None
    reduce_dtype: _dt.dtype = None
    output_dtype: _dt.dtype = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading: the sharded parameters, gradients and optimizer state stay on the
    mesh's device."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """The sharded parameters and gradients live in host memory (pinned with `pin_memory`),
    copied to the accelerator for the all-gather; the optimizer steps on the host."""
    pin_memory: bool = True
