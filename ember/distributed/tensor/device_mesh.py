"""`torch.distributed.tensor.device_mesh`: the device mesh, under DTensor's package."""
from ..device_mesh import DeviceMesh, init_device_mesh

__all__ = ["init_device_mesh", "DeviceMesh"]
