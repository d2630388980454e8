"""`torch.distributed.tensor`: DTensor, its placements and the device mesh (see `_api` for
what ember's DTensor does and does not do)."""
from ..device_mesh import DeviceMesh, init_device_mesh
from . import placement_types
from ._api import (DTensor, distribute_module, distribute_tensor, empty, full, ones, rand,
                   randn, zeros)
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "Shard", "Replicate",
           "Partial", "Placement", "ones", "empty", "full", "rand", "randn", "zeros"]
