"""`torch.storage`: the storage classes, `UntypedStorage` (a tensor's bytes) and the deprecated
`TypedStorage` (its elements in a dtype). They live in ember/_storage.py, on the Tensor's
floor; this is their public address."""
from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
