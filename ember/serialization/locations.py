"""Where a storage lives, as a checkpoint writes it ('cpu', 'cuda:0') and how `load` puts it
back: a registry of (priority, tagger, deserializer) that `register_package` extends, as
PyTorch's. `load` hands each storage, read on the CPU, with its saved location to
`map_location` and then to the registry's deserializers, lowest priority number first.

Also the storage-type helpers `StorageType`, `normalize_storage_type`,
`storage_to_tensor_type`.
"""
import importlib
import re

from .. import dtypes as _dt

__all__ = ["register_package", "location_tag", "default_restore_location",
           "validate_cuda_device", "validate_hpu_device", "StorageType",
           "normalize_storage_type", "storage_to_tensor_type"]

_package_registry = []


def register_package(priority, tagger, deserializer):
    """Add a device kind: `tagger(storage)` names a storage's location (or None), and
    `deserializer(storage, location)` moves a loaded storage there (or None, not mine)."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda entry: entry[0])


def _typename(obj):
    from .._environment import typename
    return typename(obj)


def location_tag(storage):
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError("don't know how to determine data location of " + _typename(storage))


def default_restore_location(storage, location):
    """`storage` moved to `location` by the first registered deserializer that takes it."""
    for _, _, deserializer in _package_registry:
        result = deserializer(storage, location)
        if result is not None:
            return result
    raise RuntimeError("don't know how to restore data location of " + _typename(storage) +
                       " (tagged with " + location + ")")


def restore_location(map_location):
    """`load`'s function (storage, saved location) -> storage for a `map_location` argument:
    None, a dict of locations, a location or device, or a callable."""
    from ..device import device
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda storage, location: default_restore_location(
            storage, str(map_location.get(location, location)))
    if isinstance(map_location, (str, bytes, device)):
        where = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return lambda storage, location: default_restore_location(storage, where)

    def call(storage, location):
        result = map_location(storage, location)
        return default_restore_location(storage, location) if result is None else result
    return call


# ---- the built-in device kinds ------------------------------------------------------------
def _validate_device(location, backend):
    from .. import cuda
    from ..device import device
    if backend != "cuda":
        raise RuntimeError(f"The {backend.upper()} device module is not registered. If you are "
                           "running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    dev = device(location)
    if dev.type != backend:
        raise ValueError(f"Expected a {backend} device, but got: {location}")
    if not cuda.is_available():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                           "torch.cuda.is_available() is False. If you are running on a "
                           "CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    index = dev.index if dev.index is not None else cuda.current_device()
    count = cuda.device_count()
    if index >= count:
        raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but "
                           f"torch.cuda.device_count() is {count}. Please use torch.load with "
                           "map_location to map your storages to an existing device.")
    return device("cuda", index)


def validate_cuda_device(location):
    """The CUDA device index a location names, or PyTorch's error when it cannot be used."""
    return _validate_device(location, "cuda").index


def validate_hpu_device(location):
    return _validate_device(location, "hpu").index


def _cpu_tag(obj):
    if obj.device.type == "cpu":
        return "cpu"


def _cpu_deserialize(obj, location):
    if location == "cpu":
        return obj


def _cuda_tag(obj):
    if obj.device.type == "cuda":
        return "cuda" if obj.device.index is None else f"cuda:{obj.device.index}"


def _cuda_deserialize(obj, location):
    if location == "cuda" or re.match("cuda(:|[0-9]+)", location):
        return obj.to(device=_validate_device(location, "cuda"))


register_package(10, _cpu_tag, _cpu_deserialize)
register_package(20, _cuda_tag, _cuda_deserialize)


# ---- storage types ------------------------------------------------------------------------
class StorageType:
    """A storage type named in a pickle ('FloatStorage'), as its dtype."""

    def __init__(self, name):
        by_name = {d._storage_type: d for d in _dt.ALL_DTYPES}
        if name not in by_name:
            raise KeyError(f'pickle storage type "{name}" is not recognized')
        self._dtype = by_name[name]

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"


StorageType.__module__ = "torch.serialization"


def normalize_storage_type(storage_type):
    """The top-level legacy storage class of that name (a CUDA one gives the CPU class)."""
    from .._storage import LEGACY_STORAGES
    return LEGACY_STORAGES[storage_type.__name__]


def storage_to_tensor_type(storage):
    """The legacy tensor class beside a storage's class (FloatStorage -> FloatTensor)."""
    storage_type = type(storage)
    module = importlib.import_module(storage_type.__module__.replace("torch", "ember", 1)
                                     if storage_type.__module__.startswith("torch")
                                     else storage_type.__module__)
    return getattr(module, storage_type.__name__.replace("Storage", "Tensor"))
