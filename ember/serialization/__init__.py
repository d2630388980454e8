"""Checkpoints: PyTorch's format (`save`, `load`) and safetensors, both without PyTorch, and
`torch.serialization`'s settings, device registry and archive classes."""
from . import safetensors  # noqa: F401
from .checkpoint import (DEFAULT_PROTOCOL, add_safe_globals, clear_safe_globals,
                         get_safe_globals, load, safe_globals, save)
from .locations import (StorageType, default_restore_location, location_tag,
                        normalize_storage_type, register_package, storage_to_tensor_type,
                        validate_cuda_device, validate_hpu_device)
from .records import (DeserializationStorageContext, PyTorchFileReader, PyTorchFileWriter,
                      SerializationStorageContext)
from .settings import (LoadEndianness, SourceChangeWarning, check_module_version_greater_or_equal,
                       get_crc32_options, get_default_load_endianness, get_default_mmap_options,
                       mkdtemp, set_crc32_options, set_default_load_endianness,
                       set_default_mmap_options, skip_data)
from .unsafe_globals import get_unsafe_globals_in_checkpoint

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL", "safetensors", "LoadEndianness",
           "SourceChangeWarning", "StorageType", "check_module_version_greater_or_equal",
           "default_restore_location", "get_crc32_options", "get_default_load_endianness",
           "get_default_mmap_options", "get_unsafe_globals_in_checkpoint", "location_tag",
           "mkdtemp", "normalize_storage_type", "register_package", "set_crc32_options",
           "set_default_load_endianness", "set_default_mmap_options", "skip_data",
           "storage_to_tensor_type", "validate_cuda_device", "validate_hpu_device"]
